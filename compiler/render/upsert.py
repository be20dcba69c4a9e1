"""Upsert helpers and the env-var re-encoding the controller applies (spec R-5.1, R-5.2).

Upsert scans a list in order: the first match is replaced in place (whole item, not
merged), otherwise the item is appended::

    >>> env = [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]
    >>> upsert_env(env, [{"name": "B", "value": "3"}, {"name": "C", "value": "4"}])
    >>> [e["value"] for e in env]
    ['1', '3', '4']
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from compiler.kube.quantity import canonical_quantity
from compiler.render.info import json_copy

Item = dict[str, Any]


def _upsert(
    items: list[Item], new_items: Iterable[Item], same: Callable[[Item, Item], bool]
) -> None:
    for new in new_items:
        for index, existing in enumerate(items):
            if same(existing, new):
                items[index] = json_copy(new)
                break
        else:
            items.append(json_copy(new))


def upsert_env(items: list[Item], new_items: Iterable[Item]) -> None:
    _upsert(items, new_items, lambda a, b: a.get("name") == b.get("name"))


def upsert_ports(items: list[Item], new_items: Iterable[Item]) -> None:
    """Match on containerPort, or on name where two absent names count as equal (R-5.1)."""
    _upsert(
        items,
        new_items,
        lambda a, b: (
            a.get("containerPort") == b.get("containerPort") or a.get("name") == b.get("name")
        ),
    )


def upsert_volumes(items: list[Item], new_items: Iterable[Item]) -> None:
    _upsert(items, new_items, lambda a, b: a.get("name") == b.get("name"))


def upsert_volume_mounts(items: list[Item], new_items: Iterable[Item]) -> None:
    """Volume mounts match on mountPath, not on name."""
    _upsert(items, new_items, lambda a, b: a.get("mountPath") == b.get("mountPath"))


def reencode_env(env: dict[str, Any]) -> Item:
    """A TrainJob env var as the controller re-encodes it before use (R-5.2).

    ``value`` is written even when empty, ``fieldRef.apiVersion`` is dropped, a
    resourceFieldRef always carries a divisor, and sources other than fieldRef,
    resourceFieldRef, configMapKeyRef and secretKeyRef vanish::

        >>> reencode_env({"name": "X"})
        {'name': 'X', 'value': ''}
        >>> reencode_env({"name": "Y", "valueFrom": {"fileKeyRef": {"path": "p"}}})
        {'name': 'Y', 'valueFrom': {}}
    """
    out: Item = {"name": env.get("name", "")}
    source = env.get("valueFrom")
    if source is None:
        out["value"] = env.get("value", "")
        return out
    encoded: Item = {}
    if (ref := source.get("fieldRef")) is not None:
        encoded["fieldRef"] = {"fieldPath": ref.get("fieldPath", "")}
    if (ref := source.get("resourceFieldRef")) is not None:
        encoded["resourceFieldRef"] = {
            "containerName": ref.get("containerName", ""),
            "resource": ref.get("resource", ""),
            "divisor": canonical_quantity(ref.get("divisor", 0)),
        }
    for kind in ("configMapKeyRef", "secretKeyRef"):
        if (ref := source.get(kind)) is not None:
            selector: Item = {"key": ref.get("key", ""), "name": ref.get("name", "")}
            if ref.get("optional") is not None:
                selector["optional"] = ref["optional"]
            encoded[kind] = selector
    out["valueFrom"] = encoded
    return out


def reencode_envs(envs: Iterable[dict[str, Any]] | None) -> list[Item]:
    return [reencode_env(e) for e in envs or ()]
