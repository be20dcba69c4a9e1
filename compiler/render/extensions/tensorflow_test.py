"""TensorFlow: TF_CONFIG as Training Operator v1.9.4's genTFConfigJSONStr marshals it
(struct order cluster, task, environment; map keys sorted; no spaces)."""

from __future__ import annotations

import json

from compiler.render.extensions.tensorflow import (
    TASK_INDEX,
    TensorFlowExtension,
    cluster_spec,
    tf_config,
)
from compiler.render.framework import TrainJobContext
from compiler.render.info import Info, PodSet, PodSetContainer


def role(name: str, count: int, ports: list[dict[str, object]] | None = None) -> PodSet:
    container = PodSetContainer(name="node", ports=list(ports or []))
    return PodSet(name, None, count, [container], [], [], {}, subdomain="j", trainjob_name="j")


def job() -> TrainJobContext:
    return TrainJobContext({"metadata": {"name": "j", "namespace": "ns"}, "spec": {}})


def test_tf_config_string() -> None:
    cluster = {"worker": ["w0:2222"], "chief": ["c0:2222"]}
    assert tf_config(cluster, "worker") == (
        '{"cluster":{"chief":["c0:2222"],"worker":["w0:2222"]},'
        '"task":{"type":"worker","index":$(TRAINC_TF_TASK_INDEX)},"environment":"cloud"}'
    )


def test_every_role_gets_the_whole_cluster_and_its_index_from_the_completion_index() -> None:
    info = Info(
        {},
        {},
        None,
        None,
        {},
        [
            role("chief", 1),
            role("worker", 2),
            role("ps", 1, [{"name": "tfjob-port", "containerPort": 3000}]),
        ],
    )
    TensorFlowExtension().enforce_ml_policy(info, job())
    assert cluster_spec(info, "ns")["ps"] == ["j-ps-0-0.j.ns.svc:3000"]
    worker = info.pod_sets[1].containers[0]
    env = {e["name"]: e for e in worker.env}
    index_path = env[TASK_INDEX]["valueFrom"]["fieldRef"]["fieldPath"]
    assert index_path == "metadata.annotations['batch.kubernetes.io/job-completion-index']"
    expanded = env["TF_CONFIG"]["value"].replace(f"$({TASK_INDEX})", "1")
    assert json.loads(expanded) == {
        "cluster": {
            "chief": ["j-chief-0-0.j.ns.svc:2222"],
            "ps": ["j-ps-0-0.j.ns.svc:3000"],
            "worker": ["j-worker-0-0.j.ns.svc:2222", "j-worker-0-1.j.ns.svc:2222"],
        },
        "task": {"type": "worker", "index": 1},
        "environment": "cloud",
    }
    assert worker.ports == [{"name": "tfjob-port", "containerPort": 2222}]


def test_a_single_replica_is_local_no_tf_config() -> None:
    info = Info({}, {}, None, None, {}, [role("worker", 1)])
    TensorFlowExtension().enforce_ml_policy(info, job())
    assert info.pod_sets[0].containers[0].env == []
    assert info.pod_sets[0].containers[0].ports == [{"name": "tfjob-port", "containerPort": 2222}]
