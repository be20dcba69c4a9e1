"""``--wait``: poll each applied JobSet until its status says it started, or failed.

A JobSet has started when every replicated job has as many jobs ready, active or
succeeded as its ``replicas`` (``status.replicatedJobsStatus``), or it completed
(condition ``Completed``); it failed with the condition ``Failed``. One progress line
per JobSet, printed when its counts change:

    >>> js = {"metadata": {"namespace": "a", "name": "b"},
    ...       "spec": {"replicatedJobs": [{"name": "node", "replicas": 2}]},
    ...       "status": {"replicatedJobsStatus": [{"name": "node", "ready": 1, "active": 2}]}}
    >>> state(js)
    ('started', 'JobSet a/b: started: replicated jobs ready 1/2, active 2, failed 0')
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from compiler.deliver.apply.answers import mapping, object_problem, type_name
from compiler.deliver.apply.client import RESOURCES, BadAnswer, Connection, Unreachable

__all__ = ["state", "wait_for_jobsets"]

Json = dict[str, Any]
_JOBSET = RESOURCES[("jobset.x-k8s.io/v1alpha2", "JobSet")]


def _list(value: Any, where: str) -> list[Json]:
    """``value`` (absent: empty) as a list of maps, else :class:`BadAnswer`."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise BadAnswer(f"{where} is {type_name(value)}, not an array")
    for index, item in enumerate(value):
        if not isinstance(item, dict):
            raise BadAnswer(f"{where}[{index}] is {type_name(item)}, not a map")
    return value


def _count(item: Json, key: str, where: str, default: int = 0) -> int:
    value = item.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise BadAnswer(f"{where}.{key} is {type_name(value)} {value!r:.40}, not a count")
    return value


def _condition(conditions: list[Json], kind: str) -> bool:
    return any(c.get("type") == kind and c.get("status") == "True" for c in conditions)


def state(obj: Json) -> tuple[str, str]:
    """(``waiting`` | ``started`` | ``completed`` | ``failed``, the progress line);
    :class:`BadAnswer` when the JobSet's spec or status is not of the right types."""
    metadata = mapping(obj.get("metadata"))
    spec, status = obj.get("spec"), obj.get("status")
    for name, value in (("spec", spec), ("status", status)):
        if value is not None and not isinstance(value, dict):
            raise BadAnswer(f"{name} is {type_name(value)}, not a map")
    jobs = _list(mapping(spec).get("replicatedJobs"), "spec.replicatedJobs")
    statuses = _list(mapping(status).get("replicatedJobsStatus"), "status.replicatedJobsStatus")
    conditions = _list(mapping(status).get("conditions"), "status.conditions")
    counts: dict[Any, dict[str, int]] = {}
    for index, item in enumerate(statuses):
        where = f"status.replicatedJobsStatus[{index}]"
        counts[item.get("name")] = {
            k: _count(item, k, where) for k in ("ready", "active", "succeeded", "failed")
        }
    wanted_by_job = [
        (j.get("name"), _count(j, "replicas", f"spec.replicatedJobs[{i}]", 1))
        for i, j in enumerate(jobs)
    ]
    wanted = sum(replicas for _, replicas in wanted_by_job)
    ready = sum(c["ready"] for c in counts.values())
    active = sum(c["active"] for c in counts.values())
    failed = sum(c["failed"] for c in counts.values())
    started = all(
        sum(counts.get(name, {}).get(k, 0) for k in ("ready", "active", "succeeded")) >= replicas
        for name, replicas in wanted_by_job
    )
    if _condition(conditions, "Failed"):
        word = "failed"
    elif _condition(conditions, "Completed"):
        word = "completed"
    elif started and jobs:
        word = "started"
    else:
        word = "waiting"
    line = (
        f"JobSet {metadata.get('namespace')}/{metadata.get('name')}: {word}: replicated jobs "
        f"ready {ready}/{wanted}, active {active}, failed {failed}"
    )
    return word, line


def wait_for_jobsets(
    connection: Connection,
    jobsets: list[tuple[str, str]],
    timeout: float,
    progress: Callable[[str], None],
    interval: float = 0.5,
    errors: dict[str, str] | None = None,
) -> dict[str, str]:
    """Each JobSet's final state by ``namespace/name``; ``timeout`` left as ``waiting``;
    ``error`` (with the progress line saying why) when the API server's answer is not
    the JobSet or not of the right types, or it answered neither 200 nor 404 (``errors``
    gets the reason by ``namespace/name``)."""
    deadline = time.monotonic() + timeout
    connection.set_timeout(timeout)
    states = {f"{ns}/{name}": "waiting" for ns, name in jobsets}
    shown: dict[str, str] = {}
    while True:
        for namespace, name in jobsets:
            key = f"{namespace}/{name}"
            if states[key] != "waiting":
                continue
            path = _JOBSET.path(namespace, name)
            try:
                answer = connection.get(path)
            except Unreachable as error:  # the deadline passed: what is left is waiting
                progress(str(error))
                return states
            if answer.code == 404:
                states[key] = "failed"
                progress(f"JobSet {key}: gone ({answer.message})")
                continue
            try:
                if answer.code != 200:
                    raise BadAnswer(f"{answer.code}: {answer.message}")
                problem = object_problem(answer, _JOBSET.api_version, "JobSet", name, namespace)
                if problem is not None:
                    raise BadAnswer(problem)
                word, line = state(answer.body)
            except BadAnswer as error:
                states[key] = "error"
                reason = f"the API server's answer to GET {path} is not usable: {error}"
                if errors is not None:
                    errors[key] = reason
                progress(f"JobSet {key}: {reason}")
                continue
            states[key] = word
            if shown.get(key) != line:
                shown[key] = line
                progress(line)
        if all(s != "waiting" for s in states.values()) or time.monotonic() > deadline:
            return states
        time.sleep(interval)
