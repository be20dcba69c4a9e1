from __future__ import annotations

from typing import Any

from compiler.expand.job_controller import job_pods
from compiler.kube.roundtrip import go_roundtrip


def _job(name: str = "demo-node-0", **spec: Any) -> dict[str, Any]:
    base = {
        "completionMode": "Indexed",
        "completions": 3,
        "parallelism": 3,
        "template": {
            "metadata": {"labels": {"a": "b"}},
            "spec": {
                "initContainers": [
                    {
                        "name": "i",
                        "image": "x:1",
                        "env": [{"name": "JOB_COMPLETION_INDEX", "value": "k"}],
                    }
                ],
                "containers": [{"name": "c", "image": "x:1"}],
            },
        },
    }
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "ns", "uid": "u1"},
        "spec": {**base, **spec},
    }


def test_indexed_pods() -> None:
    pods = job_pods(_job())
    assert [p["metadata"]["generateName"] for p in pods] == [f"demo-node-0-{i}-" for i in range(3)]
    pod = pods[2]
    assert pod["spec"]["hostname"] == "demo-node-0-2"
    assert pod["metadata"]["labels"] == {"a": "b", "batch.kubernetes.io/job-completion-index": "2"}
    assert pod["metadata"]["annotations"] == {"batch.kubernetes.io/job-completion-index": "2"}
    assert pod["metadata"]["finalizers"] == ["batch.kubernetes.io/job-tracking"]
    assert pod["metadata"]["ownerReferences"][0] == {
        "apiVersion": "batch/v1", "kind": "Job", "name": "demo-node-0", "uid": "u1",
        "controller": True, "blockOwnerDeletion": True,
    }  # fmt: skip
    assert pod["spec"]["containers"][0]["env"] == [
        {
            "name": "JOB_COMPLETION_INDEX",
            "valueFrom": {
                "fieldRef": {
                    "fieldPath": "metadata.labels['batch.kubernetes.io/job-completion-index']"
                }
            },
        }
    ]
    # an init container that sets it already keeps its own
    assert pod["spec"]["initContainers"][0]["env"] == [
        {"name": "JOB_COMPLETION_INDEX", "value": "k"}
    ]


def test_as_many_pods_as_run_at_once() -> None:
    assert len(job_pods(_job(completions=5, parallelism=2))) == 2
    assert len(job_pods(_job(completions=1, parallelism=4))) == 1
    assert job_pods(_job(suspend=True)) == []


def test_long_names_are_cut_keeping_the_index() -> None:
    name = "j" * 60
    [pod, *_] = job_pods(_job(name=name))
    assert pod["metadata"]["generateName"] == "j" * 55 + "-0-"
    assert pod["spec"]["hostname"] == f"{name}-0"


def test_non_indexed_pods() -> None:
    pods = job_pods(_job(completionMode="NonIndexed", parallelism=2))
    assert [p["metadata"]["generateName"] for p in pods] == ["demo-node-0-", "demo-node-0-"]
    assert "hostname" not in pods[0]["spec"]
    assert "env" not in pods[0]["spec"]["containers"][0]


def test_one_pod_alone_is_that_pod_of_all() -> None:
    for job in (_job(), _job(completionMode="NonIndexed", parallelism=2), _job(suspend=True)):
        every = job_pods(job)
        for index in range(-1, len(every) + 1):
            assert job_pods(job, only=index) == (every[index : index + 1] if index >= 0 else [])


def test_untyped_pods_differ_from_typed_only_by_the_round_trip() -> None:
    job = _job()
    assert [go_roundtrip(p, "io.k8s.api.core.v1.Pod") for p in job_pods(job, typed=False)] == [
        {**p, "status": {}} for p in job_pods(job)
    ]
