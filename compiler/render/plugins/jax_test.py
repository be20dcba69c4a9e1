"""JAX plugin tests, re-expressing upstream v2.3.0 test cases.

Each test names its source: ``jax_test.go`` (pkg/runtime/framework/plugins/jax,
``TestJAXEnforceMLPolicy``), then the Go case name. Upstream's comparison sorts only
string slices, so the env order of the JAX block is asserted too.
"""

from __future__ import annotations

import copy
import doctest
from typing import Any

import pytest

from compiler.render.framework import TrainJobContext
from compiler.render.info import Info, JsonObject, PodSet, PodSetContainer
from compiler.render.plugins import jax
from compiler.render.plugins.jax import JAXPlugin
from compiler.upstream.names import ANCESTOR_TRAINER, NODE

FIELD_PATH = "metadata.annotations['batch.kubernetes.io/job-completion-index']"
PORTS = [{"containerPort": 29500}]


def jax_block(name: str, processes: int) -> list[JsonObject]:
    return [
        {"name": "JAX_NUM_PROCESSES", "value": str(processes)},
        {"name": "JAX_PROCESS_ID", "valueFrom": {"fieldRef": {"fieldPath": FIELD_PATH}}},
        {"name": "JAX_COORDINATOR_ADDRESS", "value": f"{name}-node-0-0.{name}:29500"},
    ]


def trainer_pod_set(count: int = 1) -> PodSet:
    return PodSet(
        name=NODE,
        ancestor=ANCESTOR_TRAINER,
        count=count,
        containers=[PodSetContainer(name=NODE)],
        init_containers=[],
        volumes=[],
        single_pod_requests={},
    )


def make_info(*pod_sets: PodSet, ml_policy: JsonObject | None = None) -> Info:
    return Info(
        labels={},
        annotations={},
        ml_policy={"jax": {}} if ml_policy is None else ml_policy,
        pod_group_policy=None,
        jobset_spec={},
        pod_sets=list(pod_sets),
    )


def make_job(name: str = "test-job", **trainer: Any) -> TrainJobContext:
    """A TrainJob; ``requests=`` mirrors upstream's wrapper ``Container(...)`` (requests only)."""
    if "requests" in trainer:
        trainer["resourcesPerNode"] = {"requests": trainer.pop("requests")}
    spec: JsonObject = {"runtimeRef": {"name": "jax-distributed"}, "trainer": trainer}
    return TrainJobContext({"metadata": {"name": name, "namespace": "default"}, "spec": spec})


def enforce(info: Info, job: TrainJobContext) -> None:
    JAXPlugin().enforce_ml_policy(info, job)


def container(info: Info) -> PodSetContainer:
    found = info.container_by_ancestor(ANCESTOR_TRAINER, NODE)
    assert found is not None
    return found


@pytest.mark.parametrize(
    "case, ml_policy",
    [
        # "no action when info is nil" has no counterpart: trainc always has an Info.
        ("no action when mlPolicySource is nil", {}),
        ("no action when mlPolicySource JAX is null", {"numNodes": 1}),
    ],
)
def test_no_action(case: str, ml_policy: JsonObject) -> None:
    info = make_info(trainer_pod_set(), ml_policy=ml_policy)
    before = copy.deepcopy(info)
    enforce(info, make_job(numNodes=2))
    assert info == before, case


def test_no_trainer_pod_set() -> None:
    """jax_test.go: "no panic when JAX policy is set but trainer PodSet is absent"."""
    info = make_info()
    before = copy.deepcopy(info)
    enforce(info, make_job(numNodes=2))
    assert info == before


@pytest.mark.parametrize(
    "case, name, runtime_count, num_nodes, requests, want_count",
    [
        ("single node JAX training", "test-job", 1, 1, None, 1),
        ("multi-node JAX training", "multi-node-job", 2, 4, None, 4),
        ("trainJob numNodes is respected", "trainJob", 1, 3, None, 3),
        # Four GPUs per node still mean one JAX process per pod.
        (
            "JAX training with GPU resources",
            "gpu-job",
            1,
            2,
            {"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": "4"},
            2,
        ),
    ],
)
def test_enforce(
    case: str,
    name: str,
    runtime_count: int,
    num_nodes: int,
    requests: JsonObject | None,
    want_count: int,
) -> None:
    """jax_test.go: the rendering cases of TestJAXEnforceMLPolicy."""
    trainer: dict[str, Any] = {"numNodes": num_nodes}
    if requests is not None:
        trainer["image"] = "jax/jax:latest"
        trainer["requests"] = requests
    info = make_info(trainer_pod_set(runtime_count))
    enforce(info, make_job(name, **trainer))
    assert info.pod_sets[0].count == want_count, case
    assert container(info).env == jax_block(name, want_count), case
    assert container(info).ports == PORTS, case


# --- trainc's own cases: behaviour the Go code shows but the Go tests do not pin


def test_runtime_count_without_trainjob_num_nodes() -> None:
    """No ``spec.trainer.numNodes``: the count (from mlPolicy.numNodes) stays and is used."""
    info = make_info(trainer_pod_set(5))
    enforce(info, make_job("job"))
    assert info.pod_sets[0].count == 5
    assert container(info).env == jax_block("job", 5)


def test_no_trainer_means_no_env_and_no_port() -> None:
    """jax.go guards the env and port upserts with ``trainJob.Spec.Trainer != nil``."""
    info = make_info(trainer_pod_set(3))
    job = TrainJobContext({"metadata": {"name": "job"}, "spec": {"runtimeRef": {"name": "x"}}})
    enforce(info, job)
    assert info.pod_sets[0].count == 3
    assert container(info).env == []
    assert container(info).ports == []


def test_runtime_env_keeps_position_and_unnamed_port_is_replaced() -> None:
    """Upserts replace by name in place; the plugin's unnamed port replaces an unnamed one."""
    info = make_info(trainer_pod_set())
    info.pod_sets[0].containers[0].env = [
        {"name": "JAX_NUM_PROCESSES", "value": "99"},
        {"name": "XLA_FLAGS", "value": "--x"},
    ]
    info.pod_sets[0].containers[0].ports = [
        {"containerPort": 8080},
        {"name": "m", "containerPort": 9},
    ]
    enforce(info, make_job("job", numNodes=2))
    block = jax_block("job", 2)
    assert container(info).env == [block[0], {"name": "XLA_FLAGS", "value": "--x"}, *block[1:]]
    assert container(info).ports == [{"containerPort": 29500}, {"name": "m", "containerPort": 9}]


def test_user_env_is_not_upserted_nor_rejected() -> None:
    """The builder, not JAX, applies the TrainJob env; JAX reserves no names."""
    info = make_info(trainer_pod_set())
    job = make_job("job", env=[{"name": "JAX_NUM_PROCESSES", "value": "7"}])
    assert JAXPlugin().validate(info, job) == []
    enforce(info, job)
    assert container(info).env == jax_block("job", 1)


def test_doctests() -> None:
    assert doctest.testmod(jax).failed == 0
