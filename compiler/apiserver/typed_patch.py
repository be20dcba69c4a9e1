"""The server-side apply's typed patch: what the API server refuses before admission.

The Trainer controller applies every object it builds by server-side apply. The API
server first turns the apply body into a typed value of the kind's schema
(apimachinery ``managedfields/internal/structuredmerge.go``, ``Apply``, with
sigs.k8s.io/structured-merge-diff v6.3.0 for Kubernetes v1.34): a list-type ``map``
with two items of the same key, or a list-type ``set`` with a repeated value, is refused
there, before the mutating webhooks and before the schema validation that would say
``Duplicate value``::

    failed to create typed patch object (<ns>/<name>; jobset.x-k8s.io/v1alpha2, Kind=JobSet):
    .spec.replicatedJobs[name="node"].template.spec.template.spec.containers[name="node"].ports:
    duplicate entries for key [containerPort=2222,protocol="TCP"]

A path names a field as ``.field``, an item of a keyed list by its key fields (sorted by
name, a key field absent from the item takes the schema's ``default``; values as
structured-merge-diff prints them: strings quoted), an item of a set as ``[=value]``,
any other item by its index. Several errors print as ``errors:`` then one indented line
each. Go walks the fields of a map in random order, so two errors in different fields
come in any order; here they follow the object's own order.

Only duplicates are modelled: the controller's apply bodies come from Go types, so the
other typed errors (a wrong JSON type, an item omitting every key field) cannot occur.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from compiler.apiserver.structural import Schema
from compiler.errors import JsonPath
from compiler.kube.gotext import go_float, go_quote

__all__ = ["TypedPatchError", "typed_patch_errors", "typed_patch_message"]


@dataclass(frozen=True)
class TypedPatchError:
    """One error: ``path`` in the object (indexes, to locate it), ``where`` as
    structured-merge-diff prints the path, and its message."""

    path: JsonPath
    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}" if self.where else self.message


def smd_value(value: Any) -> str:
    """structured-merge-diff's ``value.ToString``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return go_float(value)
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, list):
        return "[" + ",".join(smd_value(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "".join(f"{k}={smd_value(v)}" for k, v in value.items())
    return "{{undefined}}"


_ABSENT = object()


def _key_element(s: Schema, item: Any) -> str | None:
    """The path element of an item of a keyed list; None when it has no key at all."""
    if not isinstance(item, Mapping):
        return None
    fields: list[tuple[str, Any]] = []
    element = s.items
    for name in s.list_map_keys:
        value = item.get(name, _ABSENT)
        if value is _ABSENT:
            sub = element.properties.get(name) if element is not None else None
            if sub is None or not sub.has_default:
                continue  # a key field left out: a different entry, not a default
            value = sub.default
        fields.append((name, value))
    if not fields:
        return None
    return "[" + ",".join(f"{n}={smd_value(v)}" for n, v in sorted(fields)) + "]"


def _walk(
    s: Schema | None, value: Any, path: JsonPath, where: str, out: list[TypedPatchError]
) -> None:
    if s is None or value is None:
        return
    if isinstance(value, Mapping):
        for key, item in value.items():
            child = s.properties.get(key)
            if child is None:
                child = s.additional
            _walk(child, item, (*path, key), f"{where}.{key}", out)
    elif isinstance(value, list):
        items = s.items
        seen: set[str] = set()
        for index, item in enumerate(value):
            if s.list_type == "map":
                element = _key_element(s, item)
            elif s.list_type == "set":
                element = f"[={smd_value(item)}]"
            else:
                element = f"[{index}]"
            if element is None:
                return  # structured-merge-diff stops at such an item (not modelled)
            if s.list_type in ("map", "set"):
                if element in seen:
                    message = f"duplicate entries for key {element}"
                    out.append(TypedPatchError((*path, index), where, message))
                seen.add(element)
            _walk(items, item, (*path, index), f"{where}{element}", out)


def typed_patch_errors(obj: Mapping[str, Any], schema: Schema) -> list[TypedPatchError]:
    """The typed-patch errors of the apply body ``obj`` (as the controller sends it)
    under its CRD's ``schema``; ``metadata`` (ObjectMeta's own schema) is not walked."""
    out: list[TypedPatchError] = []
    for key, value in obj.items():
        if key not in ("metadata", "apiVersion", "kind"):
            _walk(schema.child(key), value, (key,), f".{key}", out)
    return out


def typed_patch_message(obj: Mapping[str, Any], errors: list[TypedPatchError]) -> str:
    """The API server's error: ``failed to create typed patch object (<ns>/<name>;
    <group>/<version>, Kind=<kind>): <errors>``."""
    meta = obj.get("metadata") or {}
    group, _, version = str(obj.get("apiVersion", "")).rpartition("/")
    gvknn = f"{meta.get('namespace', '')}/{meta.get('name', '')}; {group}/{version}, "
    gvknn += f"Kind={obj.get('kind', '')}"
    if len(errors) == 1:
        body = str(errors[0])
    else:
        body = "\n".join(["errors:", *(f"  {e}" for e in errors)])
    return f"failed to create typed patch object ({gvknn}): {body}"
