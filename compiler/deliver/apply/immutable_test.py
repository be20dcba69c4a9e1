"""The JobSet fields trainc refuses to change in place (jobset v0.12.0 webhook + CEL)."""

from __future__ import annotations

from compiler.deliver.apply.immutable import forbidden_changes
from compiler.deliver.diff import MISSING, FieldChange, Key, format_path

NODE = ("spec", "replicatedJobs", Key("name", "node"))
POD = (*NODE, "template", "spec", "template")


def _paths(changes: list[FieldChange]) -> list[str]:
    return [format_path(c.path) for c in changes]


def test_policies_and_network_are_immutable_ttl_is_not() -> None:
    changes = [
        FieldChange(("spec", "network", "enableDNSHostnames"), True, False),
        FieldChange(("spec", "successPolicy", "operator"), "All", "Any"),
        FieldChange(("spec", "failurePolicy", "maxRestarts"), 0, 3),
        FieldChange(("spec", "startupPolicy"), MISSING, {"startupPolicyOrder": "InOrder"}),
        FieldChange(("spec", "managedBy"), MISSING, "x"),
        FieldChange(("spec", "ttlSecondsAfterFinished"), 1, 2),
        FieldChange(("spec", "suspend"), False, True),
        FieldChange(("metadata", "labels", "a"), "1", "2"),
    ]
    assert _paths(forbidden_changes(changes, suspended=False)) == [
        "spec.network.enableDNSHostnames",
        "spec.successPolicy.operator",
        "spec.failurePolicy.maxRestarts",
        "spec.startupPolicy",
        "spec.managedBy",
    ]


def test_pod_template_scheduling_fields_only_while_suspended() -> None:
    mutable = [
        FieldChange((*POD, "metadata", "annotations", "a"), "1", "2"),
        FieldChange((*POD, "spec", "nodeSelector", "pool"), "a", "b"),
        FieldChange((*POD, "spec", "tolerations"), [], [{"key": "k"}]),
        FieldChange((*POD, "spec", "schedulingGates"), MISSING, [{"name": "g"}]),
    ]
    image = FieldChange((*POD, "spec", "containers", Key("name", "node"), "image"), "a", "b")
    added_job = FieldChange(
        ("spec", "replicatedJobs", Key("name", "extra")), MISSING, {"name": "extra"}
    )
    assert forbidden_changes(mutable, suspended=True) == []
    assert len(forbidden_changes(mutable, suspended=False)) == 4
    assert forbidden_changes([image, added_job], suspended=True) == [image, added_job]
