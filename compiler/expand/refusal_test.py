from __future__ import annotations

from typing import Any

import pytest

from compiler.apiserver.manifest import Manifest, SourceMap
from compiler.errors import JsonPath
from compiler.expand import JobSetRefused, expand
from compiler.expand.refusal import event_message, refusal_problems


def _trainjob(name: str) -> Manifest:
    data = {"kind": "TrainJob", "metadata": {"name": name, "namespace": "ns"}, "spec": {}}
    return Manifest(data, SourceMap("job.yaml", {(): (1, 1), ("metadata", "name"): (4, 9)}))


def _runtime() -> Manifest:
    data = {
        "kind": "ClusterTrainingRuntime",
        "metadata": {"name": "rt"},
        "spec": {"template": {"spec": {"network": {"subdomain": "Bad_Sub"}}}},
    }
    subdomain: JsonPath = ("spec", "template", "spec", "network", "subdomain")
    positions: dict[JsonPath, tuple[int, int]] = {(): (1, 1), subdomain: (9, 20)}
    return Manifest(data, SourceMap("runtime.yaml", positions))


def _jobset(name: str, **spec: Any) -> dict[str, Any]:
    rjob = {
        "name": "node",
        "replicas": 1,
        "template": {
            "spec": {
                "completions": 1,
                "parallelism": 1,
                "template": {"spec": {"containers": [{"name": "n", "image": "x:1"}]}},
            }
        },
    }
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": name, "namespace": "ns"},
        "spec": {"replicatedJobs": [rjob], **spec},
    }


def _refused(jobset: dict[str, Any]) -> JobSetRefused:
    with pytest.raises(JobSetRefused) as refused:
        expand([jobset], "jobs")
    return refused.value


def test_a_name_too_long_points_at_the_trainjob_name() -> None:
    name = "n" * 49
    jobset = _jobset(name)
    problems = refusal_problems(_refused(jobset), jobset, _trainjob(name), None)
    assert [str(p.location) for p in problems] == ["job.yaml:4:9", "job.yaml:4:9"]
    assert problems[0].field_path == "spec.replicatedJobs[0].name"
    assert problems[0].rule == problems[1].rule == "jobset-webhook"
    assert problems[1].message.startswith(
        'TrainJob resources reconciliation failed: admission webhook "vjobset.kb.io" denied '
        f'the request: JobSet.jobset.x-k8s.io "{name}" is invalid: spec.replicatedJobs[0].name: '
    )


def test_a_bad_field_points_where_the_runtime_wrote_it() -> None:
    jobset = _jobset("demo", network={"subdomain": "Bad_Sub"})
    problems = refusal_problems(_refused(jobset), jobset, _trainjob("demo"), _runtime())
    assert {str(p.location) for p in problems[:-1]} == {"runtime.yaml:9:20"}


def test_the_event_is_cut_as_the_controller_cuts_it() -> None:
    assert (
        event_message("x" * 951)
        == "TrainJob resources reconciliation failed: " + "x" * 950 + " ..."
    )
    assert event_message("short") == "TrainJob resources reconciliation failed: short"
