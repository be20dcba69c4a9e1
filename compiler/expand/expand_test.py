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
