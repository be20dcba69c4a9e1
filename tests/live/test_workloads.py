"""The pod-depth comparison's normalisation and verdicts, without a cluster."""

from __future__ import annotations

import copy
from typing import Any

from tests.live.conformance_live import LiveAnswer, by_trainjob, pods_difference
from tests.live.workloads import (
    Workloads,
    normalise_workloads,
    sent_jobsets,
    service_account_names,
    workload_difference,
)


def _pod(suffix: str, uid: str, volume: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"four-nodes-node-0-0-{suffix}",
            "generateName": "four-nodes-node-0-0-",
            "namespace": "research",
            "uid": uid,
            "resourceVersion": "12",
            "creationTimestamp": "2026-11-27T23:00:00Z",
            "labels": {"controller-uid": uid, "batch.kubernetes.io/job-completion-index": "0"},
            "ownerReferences": [{"kind": "Job", "name": "four-nodes-node-0", "uid": uid}],
            "managedFields": [{"manager": "kube-controller-manager"}],
        },
        "spec": {
            "volumes": [{"name": volume, "projected": {}}],
            "containers": [
                {"name": "node", "volumeMounts": [{"name": volume, "mountPath": "/var/run"}]}
            ],
        },
        "status": {"phase": "Pending"},
    }


def test_random_names_uids_and_server_fields_are_placeholders() -> None:
    one = normalise_workloads([_pod("x7k2q", "uid-1", "kube-api-access-ab12c")])
    two = normalise_workloads([_pod("p9d4z", "uid-2", "kube-api-access-zz9yx")])
    assert one == two
    (pod,) = one
    assert pod["metadata"]["name"] == "four-nodes-node-0-0-<random>"
    assert pod["metadata"]["generateName"] == "four-nodes-node-0-0-"
    assert pod["metadata"]["ownerReferences"][0]["uid"] == "<uid of Job four-nodes-node-0>"
    assert pod["metadata"]["labels"]["controller-uid"] == "<uid>"
    assert pod["spec"]["volumes"][0]["name"] == "kube-api-access-<random>"
    assert "status" not in pod and "uid" not in pod["metadata"]
    assert "managedFields" not in pod["metadata"]


def test_differences_are_found() -> None:
    live = normalise_workloads([_pod("x7k2q", "uid-1", "kube-api-access-ab12c")])
    other = _pod("p9d4z", "uid-2", "kube-api-access-zz9yx")
    other["spec"]["containers"][0]["image"] = "busybox"
    found = workload_difference(live, normalise_workloads([other]))
    assert found is not None and "image" in found
    missing = workload_difference(live, [])
    assert missing == "only the controllers create Pod research/four-nodes-node-0-0-<random>"
    # a name that does not follow its generateName is not hidden
    renamed = _pod("p9d4z", "uid-2", "kube-api-access-zz9yx")
    renamed["metadata"]["generateName"] = "other-"
    assert workload_difference(live, normalise_workloads([renamed])) is not None


def test_pods_difference_uses_expand_per_trainjob() -> None:
    created = [_pod("x7k2q", "uid-1", "kube-api-access-ab12c")]
    live = LiveAnswer(workloads=Workloads(objects=created))
    rendered = [
        {
            "kind": "JobSet",
            "metadata": {"name": "a", "ownerReferences": [{"kind": "TrainJob", "name": "a"}]},
        },
        {
            "kind": "JobSet",
            "metadata": {"name": "b", "ownerReferences": [{"kind": "TrainJob", "name": "b"}]},
        },
    ]
    assert [len(g) for g in by_trainjob(rendered)] == [1, 1]
    calls: list[int] = []

    def expand(objects: list[dict[str, Any]], depth: str) -> list[dict[str, Any]]:
        assert depth == "pods"
        calls.append(len(objects))
        if objects[0]["metadata"]["name"] == "a":
            return [copy.deepcopy(_pod("zzzzz", "uid-9", "kube-api-access-qqqqq"))]
        return []

    assert pods_difference(live, rendered, expand, False) is None
    assert calls == [1, 1]

    def refuses(objects: list[dict[str, Any]], depth: str) -> list[dict[str, Any]]:
        raise ValueError("Job.batch is invalid")

    assert pods_difference(live, rendered, refuses, False) is not None
    live.workloads = Workloads(failures=["JobSet default/a: JobCreationFailed: ..."])
    assert pods_difference(live, rendered, refuses, False) is None  # both refuse
    assert pods_difference(live, rendered, expand, False) is not None


def test_sent_jobsets_reads_the_last_successful_write_after_the_offset(tmp_path: Any) -> None:
    log = tmp_path / "audit.log"
    event = (
        '{"objectRef":{"resource":"jobsets","namespace":"ns","name":"a"},'
        '"responseStatus":{"code":%d},"requestObject":{"kind":"JobSet","spec":{"n":%d}}}\n'
    )
    log.write_text(event % (201, 1))
    offset = log.stat().st_size
    with log.open("a") as handle:
        handle.write(event % (201, 2) + event % (422, 3) + "{partial")
    assert sent_jobsets(log, 0)["ns/a"]["spec"] == {"n": 2}
    assert sent_jobsets(log, offset)["ns/a"]["spec"] == {"n": 2}
    assert sent_jobsets(log, log.stat().st_size) == {}


def test_service_account_names_found_anywhere() -> None:
    docs = [
        {"spec": {"template": {"spec": {"serviceAccountName": "runner"}}}},
        {"a": [{"serviceAccountName": "default"}]},
    ]
    assert service_account_names(docs) == {"runner"}


class _EventsOnly:
    """A client whose every list answers the same events."""

    def __init__(self, events: list[dict[str, Any]]) -> None:
        self.events = events

    def get(self, path: str) -> dict[str, Any]:
        return {"items": self.events if path.endswith("/events") else []}


def test_refusals_are_only_those_about_the_case_objects() -> None:
    """An event recorder may write about a previous case's JobSet after it was deleted."""
    from tests.live.workloads import _failure_events

    def event(uid: str, name: str) -> dict[str, Any]:
        return {
            "reason": "JobCreationFailed",
            "regarding": {"kind": "JobSet", "name": name, "uid": uid},
            "note": "Job.batch is invalid",
        }

    lost_race = event("js-1", "current")
    lost_race["note"] = (
        'job "current-node-0" creation failed: jobs.batch "current-node-0" already exists'
    )
    client: Any = _EventsOnly([event("old", "previous"), event("js-1", "current"), lost_race])
    found = _failure_events(client, {"default"}, {"js-1"})
    assert found == ["JobSet default/current: JobCreationFailed: Job.batch is invalid"]


def test_expected_jobs_of_suspended_dependents_and_foreign_managers() -> None:
    from tests.live.workloads import expected_jobs

    spec: dict[str, Any] = {
        "replicatedJobs": [
            {"name": "init", "replicas": 1},
            {"name": "node", "replicas": 2, "dependsOn": [{"name": "init", "status": "Complete"}]},
        ]
    }
    assert expected_jobs({"spec": spec}) == 3
    assert expected_jobs({"spec": {**spec, "suspend": True}}) == 1  # node waits for init
    assert expected_jobs({"spec": {**spec, "managedBy": "kueue.x-k8s.io/multikueue"}}) == 0
