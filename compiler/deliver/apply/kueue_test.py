"""What a later apply leaves to Kueue on a JobSet it admitted."""

from __future__ import annotations

from typing import Any

from compiler.deliver.apply.kueue import left_to_kueue
from compiler.queue.delivery import KUEUE_MANAGER
from compiler.queue.verdict import QUEUE_LABEL


def _jobset(queue: str | None = "research") -> dict[str, Any]:
    labels = {QUEUE_LABEL: queue} if queue else {}
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": "a", "namespace": "n", "labels": labels},
        "spec": {"suspend": True, "replicatedJobs": [{"name": "node", "replicas": 1}]},
    }


def _live(*entries: tuple[str, str, dict[str, Any]]) -> dict[str, Any]:
    live = _jobset()
    live["metadata"]["managedFields"] = [
        {"manager": m, "operation": op, "fieldsV1": fields} for m, op, fields in entries
    ]
    return live


TRAINC_BEFORE: tuple[str, str, dict[str, Any]] = (
    "trainc",
    "Apply",
    {"f:spec": {"f:suspend": {}, "f:replicatedJobs": {}}},
)
TRAINC_AFTER: tuple[str, str, dict[str, Any]] = (
    "trainc",
    "Apply",
    {"f:spec": {"f:replicatedJobs": {}}},
)
KUEUE: tuple[str, str, dict[str, Any]] = (KUEUE_MANAGER, "Update", {"f:spec": {"f:suspend": {}}})


def test_admitted_jobset_leaves_suspend_to_kueue() -> None:
    out = left_to_kueue(_jobset(), _live(TRAINC_AFTER, KUEUE), "trainc")
    assert "suspend" not in out["spec"]
    assert out["spec"]["replicatedJobs"] == [{"name": "node", "replicas": 1}]


def test_jobset_waiting_for_admission_stays_suspended() -> None:
    out = left_to_kueue(_jobset(), _live(TRAINC_BEFORE), "trainc")
    assert out["spec"]["suspend"] is True


def test_a_jobset_without_a_queue_is_sent_whole() -> None:
    desired = _jobset(queue=None)
    assert left_to_kueue(desired, _live(TRAINC_AFTER, KUEUE), "trainc") is desired
