"""XGBoost plugin tests, re-expressing upstream v2.3.0 test cases.

Each test names its source: ``xgboost_test.go`` (pkg/runtime/framework/plugins/xgboost,
``TestXGBoostValidate`` and ``TestXGBoostEnforceMLPolicy``), then the Go case name.
Upstream's comparison sorts only string slices, so the DMLC env order is asserted too.
"""

from __future__ import annotations

import copy
import doctest
from typing import Any

import pytest

from compiler.errors import FieldError
from compiler.render.framework import TrainJobContext
from compiler.render.info import Info, JsonObject, PodSet, PodSetContainer
from compiler.render.plugins import xgboost
from compiler.render.plugins.plainml import PlainMLPlugin
from compiler.render.plugins.xgboost import XGBoostPlugin
from compiler.render.registry import default_plugins
from compiler.upstream.names import ANCESTOR_TRAINER, LABEL_ANCESTOR, NODE

FIELD_PATH = "metadata.annotations['batch.kubernetes.io/job-completion-index']"
PORTS = [{"containerPort": 29500}]
FORBIDDEN = "FieldValueForbidden"


def dmlc_block(name: str, workers: int) -> list[JsonObject]:
    return [
        {"name": "DMLC_TRACKER_URI", "value": f"{name}-node-0-0.{name}"},
        {"name": "DMLC_TRACKER_PORT", "value": "29500"},
        {"name": "DMLC_TASK_ID", "valueFrom": {"fieldRef": {"fieldPath": FIELD_PATH}}},
        {"name": "DMLC_NUM_WORKER", "value": str(workers)},
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


def runtime_spec(requests: JsonObject) -> JsonObject:
    """A JobSet spec whose ``node`` job's ``node`` container requests ``requests``."""
    container = {"name": NODE, "resources": {"requests": requests}}
    return {
        "replicatedJobs": [
            {
                "name": NODE,
                "template": {
                    "metadata": {"labels": {LABEL_ANCESTOR: ANCESTOR_TRAINER}},
                    "spec": {"template": {"spec": {"containers": [container]}}},
                },
            }
        ]
    }


def make_info(
    *pod_sets: PodSet, ml_policy: JsonObject | None = None, jobset_spec: JsonObject | None = None
) -> Info:
    return Info(
        labels={},
        annotations={},
        ml_policy={"xgboost": {}} if ml_policy is None else ml_policy,
        pod_group_policy=None,
        jobset_spec=jobset_spec or {},
        pod_sets=list(pod_sets),
    )


def make_job(name: str = "test-job", **trainer: Any) -> TrainJobContext:
    """A TrainJob; ``requests=`` mirrors upstream's wrapper ``Container(...)`` (requests only)."""
    if "requests" in trainer:
        trainer["resourcesPerNode"] = {"requests": trainer.pop("requests")}
    spec: JsonObject = {"runtimeRef": {"name": "xgboost-distributed"}, "trainer": trainer}
    return TrainJobContext({"metadata": {"name": name, "namespace": "default"}, "spec": spec})


def no_trainer_job(name: str = "test-job") -> TrainJobContext:
    spec = {"runtimeRef": {"name": "xgboost-distributed"}}
    return TrainJobContext({"metadata": {"name": name, "namespace": "default"}, "spec": spec})


def enforce(info: Info, job: TrainJobContext) -> None:
    XGBoostPlugin().enforce_ml_policy(info, job)


def container(info: Info) -> PodSetContainer:
    found = info.container_by_ancestor(ANCESTOR_TRAINER, NODE)
    assert found is not None
    return found


def forbidden(index: int, name: str) -> FieldError:
    return FieldError(
        FORBIDDEN, f"spec.trainer.env[{index}]", f"{name} is reserved for the XGBoost runtime"
    )


# --- TestXGBoostValidate (xgboost_test.go)


def test_validate_not_xgboost() -> None:
    """xgboost_test.go: "no error when runtime is not XGBoost (e.g. Torch)".

    ("no error when runtimeInfo is nil" has no counterpart: trainc always has an Info.)
    """
    info = make_info(ml_policy={"torch": {}})
    job = make_job(numNodes=1, env=[{"name": "DMLC_TRACKER_URI", "value": "custom-tracker"}])
    assert XGBoostPlugin().validate(info, job) == []


def test_validate_no_trainer() -> None:
    """xgboost_test.go: "no error when trainer is nil"."""
    assert XGBoostPlugin().validate(make_info(), no_trainer_job()) == []


@pytest.mark.parametrize(
    "case, env, want",
    [
        ("no error when env does not contain reserved names", None, []),
        (
            "error when using reserved DMLC_TRACKER_URI env",
            [{"name": "DMLC_TRACKER_URI", "value": "custom-tracker"}],
            [forbidden(0, "DMLC_TRACKER_URI")],
        ),
        (
            "error when using reserved DMLC_NUM_WORKER env",
            [{"name": "DMLC_NUM_WORKER", "value": "10"}],
            [forbidden(0, "DMLC_NUM_WORKER")],
        ),
        (
            "multiple errors when using multiple reserved envs",
            [
                {"name": "DMLC_TRACKER_URI", "value": "custom"},
                {"name": "DMLC_TASK_ID", "value": "0"},
            ],
            [forbidden(0, "DMLC_TRACKER_URI"), forbidden(1, "DMLC_TASK_ID")],
        ),
    ],
)
def test_validate(case: str, env: list[JsonObject] | None, want: list[FieldError]) -> None:
    """xgboost_test.go: the reserved-env cases of TestXGBoostValidate."""
    trainer: dict[str, Any] = {"numNodes": 1}
    if env is not None:
        trainer["env"] = env
    assert XGBoostPlugin().validate(make_info(), make_job(**trainer)) == want, case


def test_validate_indexes_point_at_the_offending_entries() -> None:
    """trainc: the index is the entry's position in the whole env list, all four names count."""
    env = [
        {"name": "OK", "value": "1"},
        {"name": "DMLC_TRACKER_PORT", "value": "1"},
        {"name": "DMLC_TRACKER_PORTS", "value": "1"},
        {"name": "DMLC_NUM_WORKER", "valueFrom": {"fieldRef": {"fieldPath": "x"}}},
    ]
    errors = XGBoostPlugin().validate(make_info(), make_job(env=env))
    assert errors == [forbidden(1, "DMLC_TRACKER_PORT"), forbidden(3, "DMLC_NUM_WORKER")]


# --- TestXGBoostEnforceMLPolicy (xgboost_test.go)


@pytest.mark.parametrize(
    "case, ml_policy",
    [
        # "no action when info is nil" has no counterpart: trainc always has an Info.
        ("no action when mlPolicySource is nil", {}),
        ("no action when mlPolicySource XGBoost is null", {"numNodes": 1}),
    ],
)
def test_enforce_no_action(case: str, ml_policy: JsonObject) -> None:
    info = make_info(trainer_pod_set(), ml_policy=ml_policy)
    before = copy.deepcopy(info)
    enforce(info, make_job(numNodes=2))
    assert info == before, case


def test_enforce_no_trainer() -> None:
    """xgboost_test.go: "no env injection when trainJob.Spec.Trainer is nil"."""
    info = make_info(trainer_pod_set())
    before = copy.deepcopy(info)
    enforce(info, no_trainer_job())
    assert info == before


ENFORCE_CASES = [
    # (Go case name, TrainJob name, runtime count, numNodes, TrainJob requests,
    #  runtime requests, expected count, expected DMLC_NUM_WORKER)
    ("single node XGBoost training (CPU)", "test-job", 1, 1, None, None, 1, 1),
    ("multi-node XGBoost training (CPU)", "multi-node-job", 2, 4, None, None, 4, 4),
    (
        "XGBoost training with GPU resources",
        "gpu-job",
        1,
        2,
        {"cpu": "8", "memory": "32Gi", "example.com/gpu": "4"},
        None,
        2,
        8,
    ),
    ("trainJob numNodes is respected", "trainJob", 1, 3, None, None, 3, 3),
    ("resources not set - defaults to 1 worker per node", "no-res-job", 2, 2, None, None, 2, 2),
    (
        "resources set in Runtime only",
        "runtime-res-job",
        1,
        3,
        None,
        {"example.com/gpu": "2"},
        3,
        6,
    ),
    ("resources set in TrainJob only", "trainjob-res", 1, 2, {"example.com/gpu": "4"}, None, 2, 8),
    (
        "resources set in both Runtime and TrainJob",
        "both-res-job",
        1,
        2,
        {"example.com/gpu": "3"},
        {"example.com/gpu": "1"},
        2,
        6,
    ),
]


@pytest.mark.parametrize(
    "case, name, runtime_count, num_nodes, requests, runtime_requests, want_count, want_workers",
    ENFORCE_CASES,
)
def test_enforce(
    case: str,
    name: str,
    runtime_count: int,
    num_nodes: int,
    requests: JsonObject | None,
    runtime_requests: JsonObject | None,
    want_count: int,
    want_workers: int,
) -> None:
    """xgboost_test.go: the rendering cases of TestXGBoostEnforceMLPolicy."""
    trainer: dict[str, Any] = {"numNodes": num_nodes}
    if requests is not None:
        trainer["image"] = "xgboost/xgboost:latest"
        trainer["requests"] = requests
    jobset_spec = runtime_spec(runtime_requests) if runtime_requests is not None else None
    info = make_info(trainer_pod_set(runtime_count), jobset_spec=jobset_spec)
    enforce(info, make_job(name, **trainer))
    assert info.pod_sets[0].count == want_count, case
    assert container(info).env == dmlc_block(name, want_workers), case
    assert container(info).ports == PORTS, case


# --- trainc's own cases: behaviour the Go code shows but the Go tests do not pin


def test_no_trainer_pod_set_is_a_no_op() -> None:
    info = make_info()
    before = copy.deepcopy(info)
    enforce(info, make_job(numNodes=2))
    assert info == before


@pytest.mark.parametrize(
    "resources, want",
    [
        ({"limits": {"nvidia.com/gpu": "2"}}, 6),  # limits count when requests have no GPU
        ({"requests": {"nvidia.com/gpu": "0"}, "limits": {"nvidia.com/gpu": "2"}}, 6),
        ({"requests": {"google.com/tpu": "4"}}, 3),  # only names containing "gpu"
        ({"requests": {"gpu.intel.com/i915": "1500m"}}, 6),  # rounded up
        ({"requests": {"cpu": "32"}}, 3),  # CPUs never add workers
    ],
)
def test_workers_from_resources(resources: JsonObject, want: int) -> None:
    info = make_info(trainer_pod_set())
    enforce(info, make_job("job", numNodes=3, resourcesPerNode=resources))
    assert container(info).env == dmlc_block("job", want)


def test_num_proc_per_node_is_ignored() -> None:
    info = make_info(trainer_pod_set())
    enforce(info, make_job("job", numNodes=2, numProcPerNode=8))
    assert container(info).env == dmlc_block("job", 2)


def test_int32_arithmetic() -> None:
    """``int32(gpuCount)`` truncates and ``numNodes * numWorkersPerNode`` wraps."""
    assert xgboost.num_workers(2, {"requests": {"nvidia.com/gpu": str(2**31 + 3)}}) == 6
    assert xgboost.num_workers(2**16, {"requests": {"nvidia.com/gpu": str(2**15)}}) == -(2**31)


def test_registry_order_puts_dmlc_before_new_user_env() -> None:
    """trainc's canonical order: XGBoost runs before PlainML (registry order)."""
    names = [p.name for p in default_plugins()]
    assert names.index("XGBoost") < names.index("PlainML")
    info = make_info(trainer_pod_set())
    info.pod_sets[0].containers[0].env = [{"name": "RUNTIME", "value": "r"}]
    job = make_job("job", numNodes=2, env=[{"name": "USER", "value": "u"}, {"name": "RUNTIME"}])
    enforce(info, job)
    PlainMLPlugin().enforce_ml_policy(info, job)
    assert container(info).env == [
        {"name": "RUNTIME", "value": ""},
        *dmlc_block("job", 2),
        {"name": "USER", "value": "u"},
    ]
    assert info.pod_sets[0].count == 2


def test_doctests() -> None:
    assert doctest.testmod(xgboost).failed == 0
