from __future__ import annotations

from typing import Any

from compiler.expand.downstream import _NOT_WRITTEN, _patched_value

OUTPUT: dict[str, Any] = {
    "spec": {
        "replicatedJobs": [
            {"name": "init", "template": {}},
            {
                "name": "node",
                "template": {"tolerations": [{"key": "gpu", "operator": "Exists", "value": "x"}]},
            },
        ]
    }
}


def _patch(toleration: dict[str, Any]) -> dict[str, Any]:
    return {
        "spec": {"replicatedJobs": [{"name": "node", "template": {"tolerations": [toleration]}}]}
    }


TOLERATION = ("spec", "replicatedJobs", 1, "template", "tolerations", 0, "value")


def test_a_patch_is_followed_by_list_item_name_then_by_index() -> None:
    body = _patch({"value": "x"})
    value, at = _patched_value(body, OUTPUT, TOLERATION)
    assert value == "x"
    assert at == ("spec", "replicatedJobs", 0, "template", "tolerations", 0, "value")


def test_a_value_changed_after_the_patch_or_a_field_it_does_not_reach_is_not_its() -> None:
    later = _patch({"value": "y"})
    assert _patched_value(later, OUTPUT, TOLERATION)[0] is _NOT_WRITTEN
    other = {"spec": {"replicatedJobs": [{"name": "init", "template": {}}]}}
    assert _patched_value(other, OUTPUT, TOLERATION)[0] is _NOT_WRITTEN
