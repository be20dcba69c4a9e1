from __future__ import annotations

from typing import Any

import pytest

from compiler.expand import JobSetRefused, expand


def _jobset(name: str = "demo") -> dict[str, Any]:
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": name, "namespace": "ns"},
        "spec": {
            "replicatedJobs": [
                {
                    "name": "node",
                    "replicas": 1,
                    "template": {
                        "spec": {
                            "completions": 2,
                            "parallelism": 2,
                            "template": {"spec": {"containers": [{"name": "n", "image": "x:1"}]}},
                        }
                    },
                }
            ]
        },
    }


def _kinds_and_names(objects: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(o["kind"], o["metadata"]["name"]) for o in objects]


def test_jobs_depth() -> None:
    other = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
    assert _kinds_and_names(expand([other, _jobset()], "jobs")) == [
        ("Job", "demo-node-0"),
        ("Service", "demo"),
    ]


def test_pods_depth_is_deterministic() -> None:
    first = expand([_jobset()], "pods")
    assert _kinds_and_names(first)[2:] == [
        ("Pod", "demo-node-0-0-00000"),
        ("Pod", "demo-node-0-1-00000"),
    ]
    assert expand([_jobset()], "pods") == first
    pod = first[3]
    assert pod["spec"]["hostname"] == "demo-node-0-1"
    assert pod["spec"]["subdomain"] == "demo"
    assert pod["metadata"]["labels"]["jobset.sigs.k8s.io/priority"] == "0"
    job_uid = first[0]["metadata"]["uid"]
    assert pod["metadata"]["labels"]["batch.kubernetes.io/controller-uid"] == job_uid


def test_a_refused_jobset_raises_with_the_api_servers_text() -> None:
    with pytest.raises(JobSetRefused) as refused:
        expand([_jobset("n" * 49)], "jobs")
    assert refused.value.message.startswith('admission webhook "vjobset.kb.io" denied the request')
    assert refused.value.message.endswith(
        "pod names generated for this JobSet will exceed 63 characters"
    )


def test_unknown_depth() -> None:
    with pytest.raises(ValueError, match="depth must be one of jobs, pods"):
        expand([_jobset()], "containers")  # type: ignore[arg-type]


def test_pods_of_a_non_indexed_job_get_numbered_placeholders() -> None:
    jobset = _jobset()
    job_spec = jobset["spec"]["replicatedJobs"][0]["template"]["spec"]
    job_spec.update(completionMode="NonIndexed", completions=3, parallelism=3)
    pods = [o for o in expand([jobset], "pods") if o["kind"] == "Pod"]
    assert [p["metadata"]["name"] for p in pods] == [
        "demo-node-0-00000",
        "demo-node-0-00001",
        "demo-node-0-00002",
    ]
    assert len({p["metadata"]["uid"] for p in pods}) == 3


def _priority_class(name: str, value: int, **extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
        **extra,
    }


def test_a_pod_of_an_input_priority_class_gets_its_value_and_the_jobset_priority_label() -> None:
    jobset = _jobset()
    pod_spec = jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    pod_spec["priorityClassName"] = "batch-high"
    high = _priority_class("batch-high", 100000, preemptionPolicy="Never")
    pods = [o for o in expand([high, jobset], "pods") if o["kind"] == "Pod"]
    assert [p["spec"]["priority"] for p in pods] == [100000, 100000]
    assert pods[0]["spec"]["preemptionPolicy"] == "Never"
    assert pods[0]["metadata"]["labels"]["jobset.sigs.k8s.io/priority"] == "100000"
    # a class the inputs do not declare: its value is the cluster's, left unset
    unknown = [o for o in expand([jobset], "pods") if o["kind"] == "Pod"]
    assert "priority" not in unknown[0]["spec"]
    assert "jobset.sigs.k8s.io/priority" not in unknown[0]["metadata"]["labels"]


def test_a_global_default_priority_class_is_given_to_a_pod_that_names_none() -> None:
    default = _priority_class("everyday", 50, globalDefault=True)
    pod = next(o for o in expand([default, _jobset()], "pods") if o["kind"] == "Pod")
    assert pod["spec"]["priorityClassName"] == "everyday"
    assert pod["spec"]["priority"] == 50
    assert pod["metadata"]["labels"]["jobset.sigs.k8s.io/priority"] == "50"
