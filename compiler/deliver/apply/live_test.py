"""What an apply would change: server fields, defaults and others' fields left out."""

from __future__ import annotations

from typing import Any

from compiler.deliver.apply.live import changes, owned_fields, without_fields
from compiler.deliver.diff import format_path

DESIRED = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "a", "namespace": "n", "labels": {"x": "1"}},
    "data": {"k": "v"},
}


def _live(**extra: object) -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "a",
            "namespace": "n",
            "uid": "u",
            "resourceVersion": "7",
            "creationTimestamp": "2026-01-01T00:00:00Z",
            "labels": {"x": "1", "theirs": "y"},
            "managedFields": [
                {
                    "manager": "trainc",
                    "operation": "Apply",
                    "fieldsV1": {"f:metadata": {"f:labels": {"f:x": {}}}, "f:data": {"f:k": {}}},
                },
                {
                    "manager": "other",
                    "operation": "Apply",
                    "fieldsV1": {"f:metadata": {"f:labels": {"f:theirs": {}}}},
                },
            ],
        },
        "data": {"k": "v"},
        **extra,
    }


def test_same_object_with_server_fields_and_other_managers_is_no_change() -> None:
    live = _live()
    assert changes(DESIRED, live, owned_fields(live, "trainc")) == []


def test_a_field_the_manager_dropped_is_a_removal() -> None:
    live = _live(data={"k": "v", "gone": "z"})
    owned = owned_fields(live, "trainc")
    owned["f:data"]["f:gone"] = {}
    found = changes(DESIRED, live, owned)
    assert [(format_path(c.path), c.op) for c in found] == [("data.gone", "removed")]


def test_keyed_lists_ignore_defaults_and_match_by_key() -> None:
    desired = {"spec": {"containers": [{"name": "a", "ports": [{"containerPort": 80}]}]}}
    live = {
        "spec": {
            "containers": [
                {
                    "name": "a",
                    "ports": [{"containerPort": 80, "protocol": "TCP"}],
                    "terminationMessagePath": "/dev/termination-log",
                }
            ]
        }
    }
    assert changes(desired, live, {}) == []
    desired["spec"]["containers"][0]["image"] = "x"
    assert [format_path(c.path) for c in changes(desired, live, {})] == [
        "spec.containers[name=a].image"
    ]


# --- values another manager owns whole --------------------------------------------------

_JOB = '{"name":"node"}'


def _jobset(tolerations: list[dict[str, str]]) -> dict[str, Any]:
    pod: dict[str, object] = {"containers": [{"name": "c", "image": "i"}]}
    pod["tolerations"] = tolerations
    pod["nodeSelector"] = {"pool": "a"}
    template = {"spec": {"template": {"spec": pod}}}
    return {"spec": {"suspend": True, "replicatedJobs": [{"name": "node", "template": template}]}}


def test_without_fields_leaves_out_what_another_manager_owns_whole() -> None:
    pod_fields: dict[str, Any] = {"f:tolerations": {}, "f:nodeSelector": {"f:flavor": {}}}
    theirs: dict[str, Any] = {
        "f:spec": {
            "f:suspend": {},
            "f:replicatedJobs": {
                f"k:{_JOB}": {"f:template": {"f:spec": {"f:template": {"f:spec": pod_fields}}}}
            },
        }
    }
    ours: dict[str, Any] = {"f:spec": {"f:replicatedJobs": {f"k:{_JOB}": {".": {}, "f:name": {}}}}}
    out = without_fields(_jobset([{"key": "x", "operator": "Exists"}]), theirs, ours)
    spec = out["spec"]
    assert "suspend" not in spec
    job = spec["replicatedJobs"][0]
    assert job["name"] == "node"  # the merge key goes with the item
    pod = job["template"]["spec"]["template"]["spec"]
    assert "tolerations" not in pod  # an atomic list: Kueue's whole
    assert pod["nodeSelector"] == {"pool": "a"}  # a map: only Kueue's own key is Kueue's
    assert pod["containers"] == [{"name": "c", "image": "i"}]


def test_without_fields_keeps_what_both_managers_own() -> None:
    theirs: dict[str, Any] = {"f:spec": {"f:suspend": {}}}
    ours: dict[str, Any] = {"f:spec": {"f:suspend": {}}}
    assert without_fields(_jobset([]), theirs, ours)["spec"]["suspend"] is True
    assert without_fields(_jobset([]), {}, {}) == _jobset([])


def test_owned_fields_of_an_update() -> None:
    live = {
        "metadata": {
            "managedFields": [
                {"manager": "kueue", "operation": "Update", "fieldsV1": {"f:spec": {"f:a": {}}}},
                {"manager": "kueue", "operation": "Apply", "fieldsV1": {"f:spec": {"f:b": {}}}},
            ]
        }
    }
    assert owned_fields(live, "kueue") == {"f:spec": {"f:b": {}}}
    assert owned_fields(live, "kueue", operation=None) == {"f:spec": {"f:a": {}, "f:b": {}}}
