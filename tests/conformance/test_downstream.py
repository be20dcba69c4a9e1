"""The comparison of trainc's refusals below the JobSet with a golden's downstream.yaml."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from compiler.errors import ObjectRef, Problem, SourceLocation
from tests.conformance.downstream import Refusal, downstream_difference, event_key, read, write

_INVALID = (
    'Job.batch "{job}" is invalid: spec.template.spec.containers[0].resources.limits: '
    "Required value: Limit must be set for non overcommitable resources"
)


def _event(job: str) -> str:
    return f'job "{job}" creation failed with error: ' + _INVALID.format(job=job)


def _problem(message: str, field: str | None = None, rule: str = "downstream") -> Problem:
    return Problem(
        message,
        SourceLocation("job.yaml", 4, 3),
        ObjectRef("TrainJob", "ds", "default"),
        field,
        rule,
    )


def _trainc(*jobs: str) -> list[Problem]:
    """trainc's problems for refused Jobs: a field error, then the event with its hint."""
    problems = []
    for job in jobs:
        problems.append(_problem("Required value", "spec.template.spec.containers[0]"))
        problems.append(_problem(_event(job) + " (the API server refuses the Job ...)"))
    return problems


JOBSET: list[dict[str, Any]] = [
    {
        "kind": "JobSet",
        "metadata": {"name": "ds", "namespace": "default"},
        "spec": {"replicatedJobs": [{"name": "node"}, {"name": "launcher"}]},
    }
]
RECORDED = [Refusal("JobSet default/ds", "JobCreationFailed", _event("ds-node-0"))]


def test_the_recorded_event_said_by_trainc_agrees() -> None:
    assert downstream_difference(RECORDED, _trainc("ds-node-0"), JOBSET) is None


def test_a_refusal_without_downstream_yaml_is_a_difference() -> None:
    difference = downstream_difference(None, _trainc("ds-node-0"), JOBSET)
    assert difference is not None and "the cluster did not" in difference


def test_downstream_yaml_without_a_refusal_from_trainc_is_a_difference() -> None:
    difference = downstream_difference(RECORDED, [], JOBSET)
    assert difference is not None and "trainc renders" in difference


def test_other_rules_are_not_compared() -> None:
    assert downstream_difference(None, [_problem("x", rule="scheduler")], JOBSET) is None


def test_another_message_is_a_difference() -> None:
    other = [_problem(_event("ds-node-0").replace("Limit must", "limit must"))]
    assert downstream_difference(RECORDED, other, JOBSET) is not None


def test_a_later_replicated_job_the_controller_never_reached_may_be_reported() -> None:
    # the controller stops at node (replicated job 0); trainc also reports the launcher
    assert downstream_difference(RECORDED, _trainc("ds-node-0", "ds-launcher-0"), JOBSET) is None


def test_an_earlier_replicated_job_the_controller_created_may_not() -> None:
    recorded = [Refusal("JobSet default/ds", "JobCreationFailed", _event("ds-launcher-0"))]
    difference = downstream_difference(recorded, _trainc("ds-node-0", "ds-launcher-0"), JOBSET)
    assert difference is not None and "ds-node-0" in difference


def test_a_pods_random_suffix_is_masked() -> None:
    live = 'Error creating: Pod "ds-node-0-0-x7k2p" is invalid: spec.containers[0].image'
    ours = 'Error creating: Pod "ds-node-0-0-00000" is invalid: spec.containers[0].image'
    assert event_key(live) == event_key(ours)
    recorded = [Refusal("Job default/ds-node-0", "FailedCreate", live)]
    assert downstream_difference(recorded, [_problem(ours + " (hint)")], JOBSET) is None


def test_write_then_read(tmp_path: Path) -> None:
    path = tmp_path / "downstream.yaml"
    write(path, RECORDED, {"kube-apiserver": "v1.34.4"})
    assert path.read_text().startswith("# Recorded from the live control plane")
    assert read(path) == RECORDED
    assert read(tmp_path / "absent.yaml") is None


def test_a_webhook_error_without_a_field_said_on_its_own_line_too_agrees() -> None:
    # JobSet's webhook words a failure-policy rule name as an Internal error at <nil>;
    # trainc says that error at the runtime's line, then the whole event at the TrainJob.
    error = "Internal error: invalid failure policy rule name 'rule-a', a failure ..."
    event = (
        'TrainJob resources reconciliation failed: admission webhook "vjobset.kb.io" denied '
        f'the request: JobSet.jobset.x-k8s.io "ds" is invalid: <nil>: {error}'
    )
    recorded = [Refusal("TrainJob default/ds", "TrainJobResourcesCreationFailed", event)]
    said = [_problem(error, rule="jobset-webhook"), _problem(event + " (the JobSet webhook ...)")]
    assert downstream_difference(recorded, said, JOBSET) is None
    other = [_problem("Internal error: another", rule="jobset-webhook"), said[1]]
    difference = downstream_difference(recorded, other, JOBSET)
    assert difference is not None and "Internal error: another" in difference


def test_a_joined_event_is_compared_as_a_set_of_lines() -> None:
    # JobSet creates a replicated job's Jobs in parallel and joins the refusals in the
    # order they came back; trainc says every replica, one per line, in its own order
    recorded = [
        Refusal(
            "JobSet default/ds",
            "JobCreationFailed",
            _event("ds-node-1") + "\n" + _event("ds-node-0"),
        )
    ]
    joined = _event("ds-node-0") + "\n" + _event("ds-node-1")
    assert downstream_difference(recorded, [_problem(joined + " (hint)")], JOBSET) is None
    on_a_line = [_problem(joined + "\n(the API server refuses the Jobs ...)")]
    assert downstream_difference(recorded, on_a_line, JOBSET) is None
    one = downstream_difference(recorded, [_problem(_event("ds-node-0") + " (hint)")], JOBSET)
    assert one is not None and "ds-node-1" in one
    more = _event("ds-node-0") + "\n" + _event("ds-node-1") + "\n" + _event("ds-node-2")
    extra = downstream_difference(recorded, [_problem(more)], JOBSET)
    assert extra is not None and "ds-node-2" in extra


def test_where_the_env_order_is_random_so_are_the_env_indices_of_a_refusal() -> None:
    # xgboost: the Trainer writes the env in a random order, the API server's errors
    # follow it (their indices and their order)
    def invalid(first: str, second: str) -> str:
        return (
            'job "ds-node-0" creation failed with error: Job.batch "ds-node-0" is invalid: '
            f"[spec.template.spec.containers[0].env[{first}].valueFrom: Invalid value: a, "
            f"spec.template.spec.containers[0].env[{second}].value: Invalid value: b]"
        )

    recorded = [Refusal("JobSet default/ds", "JobCreationFailed", invalid("1", "0"))]
    said = [_problem(invalid("5", "2").replace("value: a, ", "value: b, ", 1) + " (hint)")]
    assert downstream_difference(recorded, said, JOBSET) is not None
    ours = "[spec.template.spec.containers[0].env[2].value: Invalid value: b, " + (
        "spec.template.spec.containers[0].env[5].valueFrom: Invalid value: a]"
    )
    said = [_problem(invalid("1", "0").split("[", 1)[0] + ours + " (hint)")]
    assert downstream_difference(recorded, said, JOBSET) is not None
    assert downstream_difference(recorded, said, JOBSET, env_order_random=True) is None


def test_the_errors_of_one_refusal_agree_in_any_order() -> None:
    # Go walks a resource list (a map) in random order: a retry words the same Job's
    # refusal with its errors in another order
    first = "spec.template.spec.containers[0].resources.limits: Required value"
    second = 'spec.template.spec.containers[0].resources.requests: Invalid value: "1Ti": x'
    head = 'job "ds-node-0" creation failed with error: Job.batch "ds-node-0" is invalid: '
    recorded = [
        Refusal("JobSet default/ds", "JobCreationFailed", f"{head}[{first}, {second}]"),
        Refusal("JobSet default/ds", "JobCreationFailed", f"{head}[{second}, {first}]"),
    ]
    said = [_problem(f"{head}[{second}, {first}] (hint)")]
    assert downstream_difference(recorded, said, JOBSET) is None
    other = [_problem(f"{head}[{second}, {first.replace('Required', 'Forbidden')}]")]
    assert downstream_difference(recorded, other, JOBSET) is not None
