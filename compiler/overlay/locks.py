"""Locked fields: platform policy a tenant (TrainJob, runtimePatch, later overlay) cannot change.

A lock names a field by path and says what it must hold::

    locks:
      - path: spec.priorityClassName        # under every pod spec (scope: pod)
        scope: pod
        value: production-high
      - path: metadata.labels[kueue.x-k8s.io/queue-name]   # on the TrainJob itself
      - path: spec.containers[*].image
        scope: pod
        prefix: registry.corp.example/

Path syntax: dot-separated fields; ``[key]`` for a map key holding dots or slashes,
``[N]`` for a list index, ``[*]`` for every list item or map value.

What the field must hold:

* ``value``: exactly this JSON value, wherever the field is set;
* ``prefix``: a string starting with this (e.g. an image registry);
* neither: the value the field has right after the declaring overlay's patches
  (a *snapshot*): it may not be changed, added or removed afterwards.

``scope: object`` (default) takes the path from the object root; ``scope: pod``
from every pod (template) inside the object, so ``spec.tolerations`` and
``metadata.labels`` read as on a Pod. Pod templates are found through the OpenAPI schema (any slot
holding a ``spec`` whose type is ``core.v1.PodSpec`` or the Trainer's ``PodSpecPatch``, so a
TrainJob's ``runtimePatches`` are covered). A lock's ``target`` selects the objects
(default: TrainJobs for ``scope: object``, every object for ``scope: pod``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from compiler.errors import JsonPath, SourceLocation
from compiler.overlay.targets import Target
from compiler.upstream.names import TRAINER_GROUP
from compiler.upstream.openapi import SchemaNode, openapi_document

WILDCARD = "*"
POD_SPEC_SCHEMAS = frozenset({"io.k8s.api.core.v1.PodSpec", "trainer.v1alpha1.PodSpecPatch"})

# (API group, kind) -> definition in the Trainer OpenAPI document.
KIND_SCHEMAS: dict[tuple[str, str], str] = {
    (TRAINER_GROUP, "TrainJob"): "trainer.v1alpha1.TrainJob",
    (TRAINER_GROUP, "TrainingRuntime"): "trainer.v1alpha1.TrainingRuntime",
    (TRAINER_GROUP, "ClusterTrainingRuntime"): "trainer.v1alpha1.ClusterTrainingRuntime",
    ("jobset.x-k8s.io", "JobSet"): "jobset.v1alpha2.JobSet",
    ("", "ConfigMap"): "io.k8s.api.core.v1.ConfigMap",
    ("", "Pod"): "io.k8s.api.core.v1.Pod",
    ("batch", "Job"): "io.k8s.api.batch.v1.Job",
}

_SEGMENT = re.compile(r"([^.\[\]]+)|\[([^\]]*)\]|(\.)")


class LockPathError(ValueError):
    """A lock path that does not parse."""


def parse_lock_path(text: str) -> JsonPath:
    """``metadata.labels[a.b/c]`` -> ``("metadata", "labels", "a.b/c")``; ``[*]`` -> ``"*"``.

    >>> parse_lock_path("spec.containers[*].image")
    ('spec', 'containers', '*', 'image')
    >>> parse_lock_path("spec.tolerations[0]")
    ('spec', 'tolerations', 0)
    """
    if not text or text.startswith(".") or text.endswith("."):
        raise LockPathError(f"invalid field path {text!r}")
    parts: list[str | int] = []
    offset = 0
    expect_field = True
    while offset < len(text):
        match = _SEGMENT.match(text, offset)
        if match is None:
            raise LockPathError(f"invalid field path {text!r} at offset {offset}")
        name, bracket, dot = match.groups()
        if dot:
            if expect_field:
                raise LockPathError(f"invalid field path {text!r}: empty segment")
            expect_field = True
        elif name is not None:
            if not expect_field:
                raise LockPathError(f"invalid field path {text!r}: missing '.' before {name!r}")
            parts.append(name)
            expect_field = False
        else:
            if not bracket:
                raise LockPathError(f"invalid field path {text!r}: empty []")
            parts.append(int(bracket) if bracket.isdigit() else bracket)
            expect_field = False
        offset = match.end()
    if expect_field:
        raise LockPathError(f"invalid field path {text!r}")
    return tuple(parts)


@dataclass(frozen=True)
class Lock:
    """One locked field, as declared by an overlay."""

    path: JsonPath
    path_text: str
    scope: Literal["object", "pod"]
    target: Target
    location: SourceLocation  # where the lock is declared
    overlay: str  # the declaring overlay's name
    namespace: str | None = None  # set for namespace-layer overlays: only that namespace
    has_value: bool = False
    value: Any = None
    prefix: str | None = None

    def applies_to(self, obj: Mapping[str, Any]) -> bool:
        if (
            self.namespace is not None
            and (obj.get("metadata") or {}).get("namespace") != self.namespace
        ):
            return False
        return self.target.matches(obj)

    def describe(self) -> str:
        return f"overlay {self.overlay} ({self.location})"

    def expectation(self, snapshot: Mapping[JsonPath, Any] | None, path: JsonPath) -> str:
        if self.has_value:
            return f"locked to {_show(self.value)}"
        if self.prefix is not None:
            return f"locked to values starting with {self.prefix!r}"
        if snapshot is not None and path in snapshot:
            return f"locked to {_show(snapshot[path])}"
        return "locked (may not be set)"

    def allows(self, path: JsonPath, value: Any, snapshot: Mapping[JsonPath, Any] | None) -> bool:
        """Whether ``value`` at concrete ``path`` satisfies the lock."""
        if self.has_value:
            return same_json(value, self.value)
        if self.prefix is not None:
            return isinstance(value, str) and value.startswith(self.prefix)
        return snapshot is not None and path in snapshot and same_json(snapshot[path], value)


def _show(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def same_json(a: Any, b: Any) -> bool:
    """JSON equality that tells ``true`` from ``1`` and ``1`` from ``1.0`` (Python's ``==``
    does not): the same JSON text, compared node by node without writing it.

    >>> same_json({"a": [1, True]}, {"a": [1, True]}), same_json([1], [True]), same_json(1, 1.0)
    (True, False, False)
    """
    if isinstance(a, dict):
        if not isinstance(b, dict) or len(a) != len(b):
            return False
        return all(key in b and same_json(value, b[key]) for key, value in a.items())
    if isinstance(a, list):
        if not isinstance(b, list) or len(a) != len(b):
            return False
        return all(same_json(x, y) for x, y in zip(a, b, strict=True))
    if type(a) is not type(b) or type(a) is float:  # -0.0 == 0.0, but not as JSON
        return json.dumps(a) == json.dumps(b)
    return bool(a == b)


def schema_for(obj: Mapping[str, Any]) -> SchemaNode | None:
    """The OpenAPI schema of an object by group and kind, or ``None`` if the document lacks it."""
    api_version = str(obj.get("apiVersion", ""))
    group = api_version.rpartition("/")[0]
    name = KIND_SCHEMAS.get((group, str(obj.get("kind", ""))))
    if name is None:
        return None
    return openapi_document().node(name)


def pod_spec_paths(obj: Mapping[str, Any], schema: SchemaNode | None = None) -> list[JsonPath]:
    """Paths of every pod spec in ``obj``, found by walking the data along its schema.

    >>> job = {"apiVersion": "batch/v1", "kind": "Job", "spec": {"template": {"spec": {}}}}
    >>> pod_spec_paths(job)
    [('spec', 'template', 'spec')]
    """
    node = schema if schema is not None else schema_for(obj)
    if node is None:
        return []
    out: list[JsonPath] = []
    _walk_pod_specs(obj, node, (), out)
    return out


def _walk_pod_specs(value: Any, node: SchemaNode, path: JsonPath, out: list[JsonPath]) -> None:
    if node.name in POD_SPEC_SCHEMAS:
        if isinstance(value, Mapping):
            out.append(path)
        return
    if isinstance(value, Mapping):
        for key, child in value.items():
            slot = node.property(key)
            if slot is None:
                slot = node.additional_properties()
            if slot is not None and not slot.is_schemaless:
                _walk_pod_specs(child, slot, (*path, key), out)
    elif isinstance(value, list):
        items = node.items()
        if items is not None and not items.is_schemaless:
            for index, child in enumerate(value):
                _walk_pod_specs(child, items, (*path, index), out)


def expand(value: Any, pattern: JsonPath, prefix: JsonPath = ()) -> Iterator[tuple[JsonPath, Any]]:
    """Concrete ``(path, value)`` pairs under ``value`` that ``pattern`` names and that exist."""
    if not pattern:
        yield prefix, value
        return
    head, rest = pattern[0], pattern[1:]
    if head == WILDCARD:
        if isinstance(value, list):
            for index, item in enumerate(value):
                yield from expand(item, rest, (*prefix, index))
        elif isinstance(value, Mapping):
            for key, item in value.items():
                yield from expand(item, rest, (*prefix, key))
    elif isinstance(head, int):
        if isinstance(value, list) and 0 <= head < len(value):
            yield from expand(value[head], rest, (*prefix, head))
    elif isinstance(value, Mapping) and head in value:
        yield from expand(value[head], rest, (*prefix, head))


def locked_values(lock: Lock, obj: Mapping[str, Any]) -> dict[JsonPath, Any]:
    """Every concrete value ``lock`` governs in ``obj``, by its path from the object root."""
    if lock.scope == "object":
        bases: list[JsonPath] = [()]
    else:
        # relative to the pod (template): the object that holds the pod spec as ``spec``
        bases = [path[:-1] for path in pod_spec_paths(obj) if path and path[-1] == "spec"]
    out: dict[JsonPath, Any] = {}
    for base in bases:
        root: Any = obj
        for part in base:
            root = root[part]
        for path, value in expand(root, lock.path, base):
            out[path] = value
    return out


@dataclass(frozen=True)
class Violation:
    """A governed field whose value the lock does not allow (``present`` False: removed)."""

    path: JsonPath
    value: Any
    present: bool
    expectation: str

    def describe(self, who: str, lock: Lock) -> str:
        if not self.present:
            return f"{who} removes a field {self.expectation} by {lock.describe()}"
        return (
            f"{who} sets {_show(self.value)}, but the field is {self.expectation} "
            f"by {lock.describe()}"
        )


def violations(
    lock: Lock,
    before: Mapping[JsonPath, Any],
    after: Mapping[JsonPath, Any],
    snapshot: Mapping[JsonPath, Any] | None,
) -> list[Violation]:
    """Changes from ``before`` to ``after`` (governed values) that the lock forbids."""
    out: list[Violation] = []
    for path, value in after.items():
        if path in before and same_json(before[path], value):
            continue
        if not lock.allows(path, value, snapshot):
            out.append(Violation(path, value, True, lock.expectation(snapshot, path)))
    # A lock holds against removal as against change: a value lock pins the field to its
    # value (removing it drops that value), a snapshot lock to the value it froze.
    for path in before:
        if path in after:
            continue
        if lock.has_value or (lock.prefix is None and snapshot is not None and path in snapshot):
            out.append(Violation(path, None, False, lock.expectation(snapshot, path)))
    return out


def own_violations(
    lock: Lock, written: Mapping[JsonPath, Any], snapshot: Mapping[JsonPath, Any] | None
) -> list[Violation]:
    """Values a tenant wrote itself (``written``) that the lock forbids."""
    return [
        Violation(path, value, True, lock.expectation(snapshot, path))
        for path, value in written.items()
        if not lock.allows(path, value, snapshot)
    ]
