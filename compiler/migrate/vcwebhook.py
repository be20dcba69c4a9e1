"""Volcano's validating webhook (``pkg/webhooks/admission/jobs/validate``) on what a
migration reads: a job it denies never ran, so it is an input error with Volcano's
message, at the field, not a migration."""

from __future__ import annotations

from typing import Any

from compiler.migrate.common import Job
from compiler.migrate.vcjob import plugin_args

# The events and actions a lifecycle policy may name (the webhook's allowed sets).
EVENTS = (
    "*",
    "PodFailed",
    "PodEvicted",
    "PodPending",
    "Unknown",
    "TaskCompleted",
    "TaskFailed",
    "JobUpdated",
)
ACTIONS = (
    "AbortJob",
    "RestartJob",
    "RestartTask",
    "RestartPod",
    "RestartPartition",
    "TerminateJob",
    "CompleteJob",
    "ResumeJob",
)
PLUGINS = ("ssh", "env", "svc", "tensorflow", "mpi", "pytorch", "hcclrank", "ray")


def webhook_checks(job: Job, names: list[str], tasks: list[Any]) -> None:
    """The webhook's checks on a new job, in its order (after the task list, which
    :func:`compiler.migrate.volcano` checks)."""
    spec = job.spec
    plugins = spec.get("plugins") or {}
    if "mpi" in plugins:
        master = plugin_args(plugins["mpi"]).get("master") or "master"
        if master not in names:
            job.reject("spec.plugins.mpi", "The specified mpi master task was not found")
            return
    total = 0
    for index, task in enumerate(tasks):
        replicas = int(task.get("replicas") or 0)
        total += replicas
        minimum = task.get("minAvailable")
        if isinstance(minimum, int) and minimum > replicas:
            job.reject(
                f"spec.tasks[{index}].minAvailable",
                f"'minAvailable' is greater than 'replicas' in task: {names[index]}, job: {job.name}",
            )
        policies(job, task.get("policies") or [], f"spec.tasks[{index}].policies")
    minimum = spec.get("minAvailable")
    if isinstance(minimum, int) and total < minimum:
        job.reject(
            "spec.minAvailable",
            "job 'minAvailable' should not be greater than total replicas in tasks",
        )
    policies(job, spec.get("policies") or [], "spec.policies")
    for name in plugins:
        if name not in PLUGINS:
            job.reject(f"spec.plugins.{name}", f"unable to find job plugin: {name}")


def policies(job: Job, items: list[Any], path: str) -> None:
    """validatePolicies: each policy names events or an exit code (not both), allowed
    events and actions, no event or exit code twice, ``*`` alone; the webhook stops
    at a policy's first problem."""
    seen: set[str] = set()
    codes: set[int] = set()
    for index, policy in enumerate(items):
        at = f"{path}[{index}]"
        events = _events(policy)
        code = policy.get("exitCode")
        if events and code is not None:
            job.reject(at, "must not specify event and exitCode simultaneously")
            return
        if not events and code is None:
            job.reject(at, "either event and exitCode should be specified")
            return
        if events and not _events_valid(job, policy, events, seen, at):
            return
        if not events and not _code_valid(job, code, codes, at):
            return
    if "*" in seen and len(seen) > 1:
        job.reject(path, "if there's * here, no other policy should be here")


def _events(policy: dict[str, Any]) -> list[str]:
    """The policy's events and event, each once (Volcano's getEventList)."""
    out: list[str] = []
    for event in [
        *(policy.get("events") or []),
        *([policy["event"]] if policy.get("event") else []),
    ]:
        if str(event) not in out:
            out.append(str(event))
    return out


def _events_valid(
    job: Job, policy: dict[str, Any], events: list[str], seen: set[str], at: str
) -> bool:
    action = str(policy.get("action") or "")
    for event in events:
        if event not in EVENTS:
            job.reject(at, f'Invalid value: "{event}": invalid policy event')
            return False
        if action not in ACTIONS:
            job.reject(at, f'Invalid value: "{action}": invalid policy action')
            return False
        if event in seen:
            job.reject(at, f"duplicate event {event}  across different policy")
            return False
        seen.add(event)
    return True


def _code_valid(job: Job, code: Any, codes: set[int], at: str) -> bool:
    if code == 0:
        job.reject(at, "0 is not a valid error code")
        return False
    if code in codes:
        job.reject(at, f"duplicate exitCode {code}")
        return False
    codes.add(int(code))
    return True
