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

from compiler.deliver.apply.client import RESOURCES, Connection

__all__ = ["state", "wait_for_jobsets"]

Json = dict[str, Any]
_JOBSET = RESOURCES[("jobset.x-k8s.io/v1alpha2", "JobSet")]


def _condition(obj: Json, kind: str) -> bool:
    conditions = (obj.get("status") or {}).get("conditions") or []
    return any(c.get("type") == kind and c.get("status") == "True" for c in conditions)


def state(obj: Json) -> tuple[str, str]:
    """(``waiting`` | ``started`` | ``completed`` | ``failed``, the progress line)."""
    metadata = obj.get("metadata") or {}
    jobs = (obj.get("spec") or {}).get("replicatedJobs") or []
    status = {s.get("name"): s for s in (obj.get("status") or {}).get("replicatedJobsStatus") or []}
    wanted = sum(int(j.get("replicas", 1)) for j in jobs)
    ready = sum(int(s.get("ready", 0)) for s in status.values())
    active = sum(int(s.get("active", 0)) for s in status.values())
    failed = sum(int(s.get("failed", 0)) for s in status.values())
    started = all(
        sum(int(status.get(j.get("name"), {}).get(k, 0)) for k in ("ready", "active", "succeeded"))
        >= int(j.get("replicas", 1))
        for j in jobs
    )
    if _condition(obj, "Failed"):
        word = "failed"
    elif _condition(obj, "Completed"):
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
) -> dict[str, str]:
    """Each JobSet's final state by ``namespace/name``; ``timeout`` left as ``waiting``."""
    deadline = time.monotonic() + timeout
    connection.set_timeout(timeout)
    states = {f"{ns}/{name}": "waiting" for ns, name in jobsets}
    shown: dict[str, str] = {}
    while True:
        for namespace, name in jobsets:
            key = f"{namespace}/{name}"
            if states[key] != "waiting":
                continue
            answer = connection.get(_JOBSET.path(namespace, name))
            if answer.code != 200:
                states[key] = "failed"
                progress(f"JobSet {key}: gone ({answer.message})")
                continue
            word, line = state(answer.body)
            states[key] = word
            if shown.get(key) != line:
                shown[key] = line
                progress(line)
        if all(s != "waiting" for s in states.values()) or time.monotonic() > deadline:
            return states
        time.sleep(interval)
