"""What an apply would change: server fields, defaults and others' fields left out."""

from __future__ import annotations

from compiler.deliver.apply.live import changes, owned_fields
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
