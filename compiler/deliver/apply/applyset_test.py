"""ApplySet ids, parents and prune choices as kubectl makes them."""

from __future__ import annotations

import pytest

from compiler.deliver.apply.applyset import (
    ADDITIONAL_NAMESPACES,
    CONTAINS_GROUP_KINDS,
    ID_LABEL,
    PART_OF_LABEL,
    TOOLING,
    ApplySet,
    Choice,
    choose_applyset,
    kept_membership,
    members_to_prune,
)
from compiler.errors import UsageError
from compiler.project.model import ApplySetSetting


def _jobset(name: str, namespace: str = "a") -> dict[str, object]:
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": name, "namespace": namespace},
    }


def test_parent_lists_group_kinds_and_other_namespaces() -> None:
    applyset = ApplySet("set", "a")
    for obj in (_jobset("x"), _jobset("y", "b")):
        applyset.add(obj)
        assert obj["metadata"]["labels"][PART_OF_LABEL] == applyset.id  # type: ignore[index]
    applyset.add(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "a"}}
    )
    parent = applyset.parent(widened=False)
    assert parent["metadata"]["labels"] == {ID_LABEL: applyset.id}
    annotations = parent["metadata"]["annotations"]
    assert annotations[CONTAINS_GROUP_KINDS] == "ConfigMap,JobSet.jobset.x-k8s.io"
    assert annotations[ADDITIONAL_NAMESPACES] == "b"
    assert annotations[TOOLING].startswith("trainc/v")


def test_widened_parent_keeps_the_previous_membership_until_pruned() -> None:
    applyset = ApplySet("set", "a")
    live = {
        "metadata": {
            "labels": {ID_LABEL: applyset.id},
            "annotations": {
                TOOLING: "trainc/v0.1.0",
                CONTAINS_GROUP_KINDS: "PodGroup.scheduling.x-k8s.io",
            },
        }
    }
    assert applyset.read_live(live) is None
    applyset.add(_jobset("x"))
    widened = applyset.parent(widened=True)["metadata"]["annotations"][CONTAINS_GROUP_KINDS]
    assert widened == "JobSet.jobset.x-k8s.io,PodGroup.scheduling.x-k8s.io"
    assert applyset.prune_scope()[0] == {"JobSet.jobset.x-k8s.io", "PodGroup.scheduling.x-k8s.io"}


def test_another_tools_applyset_is_refused() -> None:
    applyset = ApplySet("set", "a")
    live = {
        "metadata": {"labels": {ID_LABEL: applyset.id}, "annotations": {TOOLING: "kubectl/v1.32.4"}}
    }
    assert "managed by 'kubectl/v1.32.4'" in (applyset.read_live(live) or "")


def test_prune_only_unapplied_members_this_manager_applied() -> None:
    set_id = ApplySet("set", "a").id

    def member(name: str, manager: str, label: str = set_id) -> dict[str, object]:
        return {
            "metadata": {
                "name": name,
                "namespace": "a",
                "labels": {PART_OF_LABEL: label},
                "managedFields": [{"manager": manager, "operation": "Apply"}],
            }
        }

    found = [
        member("kept", "trainc"),
        member("old", "trainc"),
        member("foreign", "kubectl"),
        member("elsewhere", "trainc", "applyset-other-v1"),
    ]
    applied = {("jobset.x-k8s.io", "JobSet", "a", "kept")}
    pruned = members_to_prune(found, "jobset.x-k8s.io", "JobSet", applied, "trainc", set_id)
    assert [p["metadata"]["name"] for p in pruned] == ["old"]


def test_the_cluster_setting_decides_the_applyset_whatever_the_flags() -> None:
    setting = ApplySetSetting(name="trainc-prod", namespace="ml", prune=False)
    assert choose_applyset(None, None, setting, "prod", "default") == Choice(
        "trainc-prod", "ml", False
    )
    assert choose_applyset(True, "trainc-prod", setting, "prod", "x") == Choice(
        "trainc-prod", "ml", True
    )
    pruning = ApplySetSetting(name="s", namespace="ml", prune=True)
    assert choose_applyset(False, None, pruning, "prod", "x") == Choice("s", "ml", False)
    with pytest.raises(UsageError, match="one ApplySet per cluster"):
        choose_applyset(True, "other", setting, "prod", "default")


def test_without_a_setting_only_prune_makes_a_member() -> None:
    assert choose_applyset(None, None, None, "prod", "ml") is None
    assert choose_applyset(False, None, None, None, "ml") is None
    assert choose_applyset(True, "team", None, None, "ml") == Choice("team", "ml", True)
    assert choose_applyset(True, None, None, None, "ml") == Choice("trainc", "ml", True)
    with pytest.raises(UsageError, match="--applyset goes with --prune"):
        choose_applyset(None, "team", None, None, "ml")


def test_membership_is_kept_only_when_this_manager_set_the_label() -> None:
    live = {"metadata": {"name": "x", "labels": {PART_OF_LABEL: "applyset-a-v1"}}}
    ours: dict[str, object] = {"f:metadata": {"f:labels": {f"f:{PART_OF_LABEL}": {}}}}
    assert kept_membership(_jobset("x"), live, ours) == "applyset-a-v1"
    # another manager's label stays anyway (the apply does not own it): nothing to send
    assert kept_membership(_jobset("x"), live, {"f:metadata": {"f:labels": {}}}) is None
    # the desired object says otherwise: it wins
    desired = _jobset("x")
    desired["metadata"] = {"name": "x", "labels": {PART_OF_LABEL: "applyset-b-v1"}}
    assert kept_membership(desired, live, ours) is None
    # no label live: nothing to keep
    assert kept_membership(_jobset("x"), {"metadata": {"name": "x"}}, ours) is None
