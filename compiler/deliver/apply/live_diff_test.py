"""``trainc apply --diff`` says which changes the apply itself would refuse."""

from __future__ import annotations

import copy
from typing import Any

from compiler.deliver.apply.client import RESOURCES, ApiAnswer, Resource
from compiler.deliver.apply.live_diff import live_diff
from compiler.deliver.apply.plan import ApplyPlan, Desired
from compiler.deliver.diff_format import render_markdown, render_text

JOBSET: dict[str, Any] = {
    "apiVersion": "jobset.x-k8s.io/v1alpha2",
    "kind": "JobSet",
    "metadata": {"name": "smoke", "namespace": "vision", "labels": {"team": "vision"}},
    "spec": {"replicatedJobs": [{"name": "node", "replicas": 1, "template": {"spec": {}}}]},
}


class FakeConnection:
    """The two calls a live diff makes, answered from one live JobSet."""

    def __init__(self, live: dict[str, Any]) -> None:
        self.live = live

    def resource(self, api_version: str, kind: str) -> Resource:
        return RESOURCES[(api_version, kind)]

    def get(self, path: str, params: object = None) -> ApiAnswer:
        return ApiAnswer(200, {"items": [self.live]})


def live_jobset(**spec: Any) -> dict[str, Any]:
    """JobSet as the server holds it after trainc applied it (its fields owned by trainc)."""
    live = copy.deepcopy(JOBSET)
    live["spec"].update(spec)
    fields = {"f:metadata": {"f:labels": {"f:team": {}}}, "f:spec": {"f:replicatedJobs": {}}}
    live["metadata"]["managedFields"] = [
        {"manager": "trainc", "operation": "Apply", "fieldsV1": fields}
    ]
    return live


def diff_of(desired: dict[str, Any], live: dict[str, Any]) -> tuple[str, str]:
    plan = ApplyPlan("resolved", [Desired(desired, "vision", "smoke")])
    result = live_diff(FakeConnection(live), plan, "trainc")  # type: ignore[arg-type]
    return render_text(result), render_markdown(result)


def test_an_immutable_change_is_said_to_be_refused() -> None:
    desired = copy.deepcopy(JOBSET)
    desired["spec"]["replicatedJobs"][0]["replicas"] = 2
    text, markdown = diff_of(desired, live_jobset())
    assert (
        "      ! apply refuses this change: immutable fields changed: "
        "spec.replicatedJobs[name=node].replicas (--recreate deletes and recreates the JobSet)"
    ) in text
    assert "> **apply refuses this change**: immutable fields changed: " in markdown


def test_a_mutable_change_is_not() -> None:
    desired = copy.deepcopy(JOBSET)
    desired["metadata"]["labels"]["team"] = "audio"
    text, markdown = diff_of(desired, live_jobset())
    assert "      ~ metadata.labels.team: vision -> audio\n" in text
    assert "refuses" not in text and "refuses" not in markdown
