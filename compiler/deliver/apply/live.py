"""What applying an object would change in its live version, computed locally.

Server-side apply sets the fields the applied object has and removes the fields the
same field manager set before and no longer sends; everything else in the live object
(server defaults, status, other managers' fields, metadata the server fills in) stays.
So the live object is first *projected* on what the apply can touch: the fields the
desired object has, plus those the manager owns (``metadata.managedFields``, its
``fieldsV1`` set). Comparing the projection with the desired object (the per-field
diff of ``trainc diff``, list items matched by merge key) gives exactly the changes:

    >>> live = {"metadata": {"name": "a", "uid": "1", "labels": {"x": "1", "old": "y"}},
    ...         "spec": {"ports": [{"containerPort": 1, "protocol": "TCP"}]}}
    >>> owned = {"f:metadata": {"f:labels": {"f:x": {}, "f:old": {}}}}
    >>> desired = {"metadata": {"name": "a", "labels": {"x": "2"}},
    ...            "spec": {"ports": [{"containerPort": 1}]}}
    >>> [(format_path(c.path), c.op) for c in changes(desired, live, owned)]
    [('metadata.labels.old', 'removed'), ('metadata.labels.x', 'changed')]

No change means the apply is a no-op and need not be sent.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from compiler.deliver.diff import MERGE_KEYS, FieldChange, diff_values, format_path

__all__ = ["changes", "format_path", "owned_fields", "project", "without_fields"]

Json = dict[str, Any]


def owned_fields(live: Mapping[str, Any], manager: str, operation: str | None = "Apply") -> Json:
    """The union of ``manager``'s field sets on ``live`` (``{}`` when none): its Apply
    sets, or those of ``operation`` (``None``: every operation, Update included)."""
    owned: Json = {}
    for entry in (live.get("metadata") or {}).get("managedFields") or []:
        if entry.get("manager") == manager and operation in (None, entry.get("operation")):
            _merge(owned, entry.get("fieldsV1") or {})
    return owned


def _merge(into: Json, other: Mapping[str, Any]) -> None:
    for key, value in other.items():
        if isinstance(value, dict):
            _merge(into.setdefault(key, {}), value)


def _item_key(items: list[Any], field: str | None) -> str | None:
    if field is None or not items:
        return field
    if all(isinstance(i, dict) and field in i for i in items):
        return field
    return None


def _owned_item_keys(owned: Mapping[str, Any] | None) -> dict[str, Json]:
    """``k:{"name":"x"}`` entries of a field set -> their key objects."""
    out: dict[str, Json] = {}
    for key in owned or {}:
        if key.startswith("k:"):
            try:
                value = json.loads(key[2:])
            except ValueError:
                continue
            if isinstance(value, dict):
                out[key] = value
    return out


def project(live: Any, desired: Any, owned: Mapping[str, Any] | None, name: str = "") -> Any:
    """``live`` restricted to the fields ``desired`` has or ``owned`` lists."""
    if isinstance(live, dict) and isinstance(desired, dict | type(None)):
        want = desired or {}
        out: Json = {}
        for key, value in live.items():
            sub = (owned or {}).get(f"f:{key}")
            if key in want or sub is not None:
                out[key] = project(value, want.get(key), sub, key)
        return out
    if isinstance(live, list) and isinstance(desired, list | type(None)):
        want_items = desired or []
        field = _item_key(live + want_items, MERGE_KEYS.get(name))
        owned_keys = _owned_item_keys(owned)
        if field is not None:
            wanted = {str(i[field]): i for i in want_items}
            kept: list[Any] = []
            for item in live:
                value = str(item[field])
                sub = next(
                    ((owned or {})[k] for k, v in owned_keys.items() if str(v.get(field)) == value),
                    None,
                )
                if value in wanted or sub is not None:
                    kept.append(project(item, wanted.get(value), sub))
            return kept
        if desired is not None and len(live) == len(desired):
            return [project(a, b, None) for a, b in zip(live, desired, strict=True)]
    return live


def changes(
    desired: Mapping[str, Any], live: Mapping[str, Any], owned: Mapping[str, Any]
) -> list[FieldChange]:
    """The field changes applying ``desired`` would make to ``live``."""
    return diff_values(project(dict(live), dict(desired), owned), dict(desired))


_CHILD_PREFIXES = ("f:", "k:", "v:", "i:")


def _is_leaf(field_set: Mapping[str, Any]) -> bool:
    """A field set entry that owns a whole value (a scalar, an atomic list or map)."""
    return not any(key.startswith(_CHILD_PREFIXES) for key in field_set)


def _item_field_set(owned: Mapping[str, Any] | None, item: Mapping[str, Any]) -> Json | None:
    """The ``k:{...}`` entry of ``owned`` whose key fields ``item`` has (a list-map item)."""
    for key, keys in _owned_item_keys(owned).items():
        if all(item.get(name) == value for name, value in keys.items()):
            found: Json = (owned or {})[key]
            return found
    return None


def without_fields(desired: Any, theirs: Mapping[str, Any], ours: Mapping[str, Any]) -> Any:
    """``desired`` (a copy) without the values another manager owns whole (``theirs``,
    its fieldsV1 set) that ``ours`` does not: an apply that leaves them out removes
    nothing (apply removes only the fields its own manager owned), and sends no value
    to conflict with the other manager's.

    >>> desired = {"spec": {"suspend": True, "parallel": 2, "labels": {"a": "1"}}}
    >>> theirs = {"f:spec": {"f:suspend": {}, "f:labels": {"f:b": {}}}}
    >>> without_fields(desired, theirs, {"f:spec": {"f:parallel": {}}})
    {'spec': {'parallel': 2, 'labels': {'a': '1'}}}
    >>> without_fields(desired, theirs, {"f:spec": {"f:suspend": {}}})["spec"]["suspend"]
    True
    """
    if isinstance(desired, dict):
        out: Json = {}
        for key, value in desired.items():
            their = theirs.get(f"f:{key}")
            our = ours.get(f"f:{key}")
            if their is not None and our is None and _is_leaf(their):
                continue
            if their is None:
                out[key] = value
                continue
            kept = without_fields(value, their, our or {})
            if kept == {} and value != {}:
                continue  # everything in it was theirs: no empty map that says otherwise
            out[key] = kept
        return out
    if isinstance(desired, list):
        items: list[Any] = []
        for item in desired:
            their_item = _item_field_set(theirs, item) if isinstance(item, dict) else None
            if their_item is None:
                items.append(item)
                continue
            kept_item = without_fields(item, their_item, _item_field_set(ours, item) or {})
            # the item's merge key names it: it always goes with the item
            keys = next(k for k in _owned_item_keys(theirs).values() if item.items() >= k.items())
            items.append({**keys, **kept_item})
        return items
    return desired
