"""batch/v1 Job rules whose shape is surprising; each was checked against the Go oracle."""

from __future__ import annotations

from typing import Any

import pytest

from compiler.apiserver.workloads import ServerPanic, validate_job
from compiler.apiserver.workloads.workloads_test import good_job


def texts(obj: dict[str, Any]) -> list[str]:
    return [str(e) for e in validate_job(obj)]


def test_a_success_policy_without_indexes_prints_the_internal_struct() -> None:
    job = good_job()
    job["spec"]["completionMode"] = "NonIndexed"
    job["spec"]["successPolicy"] = {"rules": [{"succeededCount": 1}]}
    assert texts(job) == [
        'spec.successPolicy: Invalid value: {"Rules":[{"SucceededIndexes":null,'
        '"SucceededCount":1}]}: requires indexed completion mode'
    ]


def test_a_pod_condition_pattern_status_defaults_to_true() -> None:
    job = good_job()
    job["spec"]["template"]["spec"]["restartPolicy"] = "Never"
    job["spec"]["podFailurePolicy"] = {
        "rules": [{"action": "FailJob", "onPodConditions": [{"type": "DisruptionTarget"}]}]
    }
    assert texts(job) == []


def test_success_policy_indexes() -> None:
    job = good_job()
    job["spec"]["successPolicy"] = {"rules": [{"succeededIndexes": "1,0", "succeededCount": 1}]}
    assert texts(job) == [
        'spec.successPolicy.rules[0].succeededIndexes: Invalid value: "1,0": error parsing'
        " succeededIndexes: non-increasing order, previous: 1, current: 0",
        # Go counts no index when it cannot parse them
        "spec.successPolicy.rules[0].succeededCount: Invalid value: 1: must be less than or"
        " equal to 0 (the number of indexes in the specified succeededIndexes field)",
    ]


def test_a_manual_selector_that_is_missing() -> None:
    job = good_job()
    job["spec"]["manualSelector"] = True
    assert texts(job) == [
        "spec.selector: Required value",
        'spec.template.metadata.labels: Invalid value: {"jobset.sigs.k8s.io/jobset-name":"llm",'
        '"jobset.sigs.k8s.io/replicatedjob-name":"node"}: `selector` does not match template'
        " `labels`",
    ]


def test_a_long_job_name_makes_bad_generated_labels_on_the_job_too() -> None:
    job = good_job()
    job["metadata"]["name"] = "x" * 64
    job["metadata"].pop("labels")  # the Job takes its template's labels map
    found = texts(job)
    assert found[0] == (
        'metadata.labels: Invalid value: "' + "x" * 64 + '": must be no more than 63 characters'
    )
    assert sum(t.startswith("spec.template.labels: Invalid value") for t in found) == 2


def test_a_success_policy_without_completions_panics_the_api_server() -> None:
    job = good_job()
    del job["spec"]["completions"]
    job["spec"]["successPolicy"] = {"rules": [{"succeededCount": 1}]}
    with pytest.raises(ServerPanic, match="caused apiserver to panic"):
        validate_job(job)
    job["spec"]["successPolicy"] = {"rules": [{}]}  # nothing to compare: no panic
    assert "spec.completions: Required value: when completion mode is Indexed" in texts(job)
