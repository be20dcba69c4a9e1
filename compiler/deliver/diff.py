"""Semantic diff of two renders: added and removed objects, per-field changes.

A render is a mapping ``cluster -> [RenderedObject]`` (cluster ``""`` when no project
file names clusters). Objects are matched by cluster, TrainJob, API group, kind,
namespace and name. Inside an object, maps are compared key by key and the lists
Kubernetes merges by a key are matched by that key, never by position::

    containers, initContainers, env, volumes, replicatedJobs, ...   by name
    volumeMounts                                                   by mountPath
    ports                                                          by containerPort

so a container inserted before another reads as one added container, not as every
later container changed. Other lists of maps of equal length are compared item by
item; lists of scalars (``args``, ``command``) are one value.

Each field change says which replicated job and container it is in, which is how the
formats group them: cluster -> TrainJob -> object -> replicated job -> container.

    >>> old = {"spec": {"containers": [{"name": "a", "image": "x:1"}]}}
    >>> new = {"spec": {"containers": [{"name": "b"}, {"name": "a", "image": "x:2"}]}}
    >>> [(format_path(c.path), c.op) for c in diff_values(old, new)]
    [('spec.containers[name=a].image', 'changed'), ('spec.containers[name=b]', 'added')]
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, TypeVar

from compiler.errors import TraincError
from compiler.model.objects import RenderedObject
from compiler.model.parts import ObjectFile
from compiler.queue.impact import ImpactRow

__all__ = [
    "MERGE_KEYS",
    "MISSING",
    "FieldChange",
    "InputImpact",
    "Key",
    "ObjectChange",
    "RenderDiff",
    "Renders",
    "StoredRenders",
    "TrainJobDiff",
    "TrainJobId",
    "changed_stored_trainjobs",
    "changed_trainjobs",
    "compute_impact",
    "diff_renders",
    "diff_values",
    "format_path",
    "format_value",
    "read_changes",
]

Renders = Mapping[str, Sequence[RenderedObject]]
"""cluster name (``""`` outside project mode) -> the objects rendered for it."""

# Lists Kubernetes merges by a key (patchMergeKey of the core and JobSet types).
MERGE_KEYS: Final[dict[str, str]] = {
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "env": "name",
    "volumes": "name",
    "replicatedJobs": "name",
    "imagePullSecrets": "name",
    "resourceClaims": "name",
    "hostAliases": "ip",
    "volumeMounts": "mountPath",
    "volumeDevices": "devicePath",
    "ports": "containerPort",
}
_CONTAINER_LISTS = frozenset({"containers", "initContainers", "ephemeralContainers"})


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final = _Missing()
"""The value of a field that does not exist on one side."""


@dataclass(frozen=True, order=True)
class Key:
    """A list item matched by its merge key: ``containers[name=node]``."""

    field: str
    value: str


Segment = str | int | Key
TrainJobId = tuple[str, str, str]
"""(cluster, namespace, name) of a TrainJob."""


@dataclass(frozen=True)
class FieldChange:
    path: tuple[Segment, ...]
    old: Any
    new: Any

    @property
    def op(self) -> str:
        if self.old is MISSING:
            return "added"
        if self.new is MISSING:
            return "removed"
        return "changed"

    @property
    def replicated_job(self) -> str | None:
        return _keyed_after(self.path, "replicatedJobs")

    @property
    def container(self) -> str | None:
        for name in _CONTAINER_LISTS:
            found = _keyed_after(self.path, name)
            if found is not None:
                return found if name == "containers" else f"{found} ({name})"
        return None

    def group_prefix(self) -> tuple[Segment, ...]:
        """The path up to the innermost replicated job or container it is in."""
        end = 0
        for index, segment in enumerate(self.path[:-1]):
            previous = self.path[index - 1] if index else None
            if isinstance(segment, Key) and previous in (*_CONTAINER_LISTS, "replicatedJobs"):
                end = index + 1
        # A whole added/removed replicated job or container is shown inside its parent.
        return self.path[:end]


def _keyed_after(path: Sequence[Segment], list_name: str) -> str | None:
    for index in range(1, len(path)):
        segment = path[index]
        if isinstance(segment, Key) and path[index - 1] == list_name and index < len(path) - 1:
            return segment.value
    return None


_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*\Z")


def format_path(path: Sequence[Segment]) -> str:
    """``("metadata", "labels", "a.b/c")`` -> ``metadata.labels['a.b/c']``."""
    out: list[str] = []
    for segment in path:
        if isinstance(segment, Key):
            out.append(f"[{segment.field}={segment.value}]")
        elif isinstance(segment, int):
            out.append(f"[{segment}]")
        elif _IDENTIFIER.match(segment):
            out.append(f".{segment}" if out else segment)
        else:
            out.append("[" + json.dumps(segment).replace('"', "'") + "]")
    return "".join(out)


def format_value(value: Any) -> str:
    """One line: scalars as YAML would show them, structures as sorted compact JSON."""
    if value is MISSING:
        return "(absent)"
    if isinstance(value, str):
        plain = value and value == value.strip() and value.isprintable()
        return value if plain and not _reads_as_other(value) else json.dumps(value)
    return json.dumps(value, sort_keys=True, separators=(", ", ": "))


def _reads_as_other(text: str) -> bool:
    """Whether unquoted ``text`` would read as a number, boolean or null."""
    try:
        json.loads(text)
    except ValueError:
        return text.lower() in ("yes", "no", "on", "off", "~")
    return True


def _merge_key(field_name: Segment | None, *sides: Sequence[Any]) -> str | None:
    """The key the list at ``field_name`` merges by, when every side is keyed uniquely."""
    if not isinstance(field_name, str):
        return None
    key = MERGE_KEYS.get(field_name)
    if key is None:
        return None
    for items in sides:
        if not all(isinstance(i, dict) and key in i for i in items):
            return None
        values = [str(i[key]) for i in items]
        if len(set(values)) != len(values):
            return None
    return key


def diff_values(old: Any, new: Any, path: tuple[Segment, ...] = ()) -> list[FieldChange]:
    """The field changes from ``old`` to ``new``, in a stable order."""
    if old == new and type(old) is type(new):
        return []
    if isinstance(old, dict) and isinstance(new, dict):
        changes: list[FieldChange] = []
        for key in sorted(set(old) | set(new)):
            changes += diff_values(old.get(key, MISSING), new.get(key, MISSING), (*path, key))
        return changes
    if isinstance(old, list) and isinstance(new, list):
        parent = path[-1] if path else None
        key = _merge_key(parent, old, new)
        if key is not None:
            before = {str(i[key]): i for i in old}
            after = {str(i[key]): i for i in new}
            changes = []
            for value in sorted(set(before) | set(after)):
                changes += diff_values(
                    before.get(value, MISSING), after.get(value, MISSING), (*path, Key(key, value))
                )
            return changes
        structured = any(isinstance(i, dict | list) for i in old + new)
        if structured and len(old) == len(new):
            changes = []
            for index, (a, b) in enumerate(zip(old, new, strict=True)):
                changes += diff_values(a, b, (*path, index))
            return changes
    return [FieldChange(path, old, new)]


@dataclass
class ObjectChange:
    """One object added, removed or changed (then with its field changes)."""

    api_version: str
    kind: str
    namespace: str
    name: str
    status: str  # added | removed | changed
    fields: list[FieldChange] = field(default_factory=list)
    refused: str = ""  # live diffs: why an apply would refuse this change (immutable fields)

    @property
    def title(self) -> str:
        where = f"{self.namespace}/{self.name}" if self.namespace else self.name
        return f"{self.kind} {where}"


@dataclass
class TrainJobDiff:
    cluster: str
    namespace: str
    name: str
    status: str  # added | removed | changed
    objects: list[ObjectChange] = field(default_factory=list)

    @property
    def id(self) -> TrainJobId:
        return (self.cluster, self.namespace, self.name)

    @property
    def field_count(self) -> int:
        return sum(len(o.fields) for o in self.objects)


@dataclass
class InputImpact:
    """A changed input file and the TrainJobs whose output its change alone changes.

    ``trainjobs`` is None when the change could not be rendered on its own (for
    example a new TrainJob whose new runtime is in another changed file).
    """

    path: str
    status: str  # added | removed | modified
    trainjobs: list[TrainJobId] | None


@dataclass
class RenderDiff:
    base: str
    trainjobs: list[TrainJobDiff]
    impact: list[InputImpact] | None = None
    # Kueue: (cluster, row) per ClusterQueue and resource whose queued requests change
    quota: list[tuple[str, ImpactRow]] = field(default_factory=list)
    # Katib: (cluster, line) per Experiment whose peak at parallelTrialCount changes
    peaks: list[tuple[str, str]] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.trainjobs)

    @property
    def clusters(self) -> list[str]:
        return sorted({t.cluster for t in self.trainjobs})


_ObjectKey = tuple[str, str, str, str, str, str]  # ns, trainjob, group, kind, namespace, name


def _object_key(obj: RenderedObject) -> _ObjectKey:
    data = obj.data
    api_version = str(data.get("apiVersion", ""))
    group = api_version.split("/")[0] if "/" in api_version else ""
    metadata = data.get("metadata") or {}
    return (
        obj.trainjob_namespace,
        obj.trainjob_name,
        group,
        str(data.get("kind", "")),
        str(metadata.get("namespace", "")),
        str(metadata.get("name", "")),
    )


def _index(objects: Iterable[RenderedObject]) -> dict[_ObjectKey, RenderedObject]:
    return {_object_key(o): o for o in objects}


def _object_change(old: RenderedObject | None, new: RenderedObject | None) -> ObjectChange | None:
    present = new if new is not None else old
    assert present is not None
    key = _object_key(present)
    api_version = str(present.data.get("apiVersion", ""))
    if old is None or new is None:
        return ObjectChange(
            api_version, key[3], key[4], key[5], "added" if old is None else "removed"
        )
    fields = diff_values(old.data, new.data)
    if not fields:
        return None
    return ObjectChange(api_version, key[3], key[4], key[5], "changed", fields)


def diff_renders(base: Renders, head: Renders, base_label: str = "base") -> RenderDiff:
    """Every TrainJob whose rendered objects differ between ``base`` and ``head``."""
    trainjobs: list[TrainJobDiff] = []
    for cluster in sorted(set(base) | set(head)):
        before = _index(base.get(cluster, ()))
        after = _index(head.get(cluster, ()))
        by_trainjob: dict[tuple[str, str], list[ObjectChange]] = {}
        for key in sorted(set(before) | set(after)):
            change = _object_change(before.get(key), after.get(key))
            if change is not None:
                by_trainjob.setdefault((key[0], key[1]), []).append(change)
        old_jobs = {k[:2] for k in before}
        new_jobs = {k[:2] for k in after}
        for (namespace, name), changes in sorted(by_trainjob.items()):
            ident = (namespace, name)
            status = (
                "added"
                if ident not in old_jobs
                else "removed"
                if ident not in new_jobs
                else "changed"
            )
            trainjobs.append(TrainJobDiff(cluster, namespace, name, status, changes))
    return RenderDiff(base_label, trainjobs)


def changed_trainjobs(base: Renders, head: Renders) -> list[TrainJobId]:
    """The TrainJobs whose rendered objects differ (cheaper than a full diff)."""
    return _changed(base, head, _canonical)


def _changed(
    base: Mapping[str, Sequence[Any]],
    head: Mapping[str, Sequence[Any]],
    by_trainjob: Callable[[Iterable[Any]], dict[tuple[str, str], list[Any]]],
) -> list[TrainJobId]:
    """The TrainJobs of each cluster whose objects, as ``by_trainjob`` sums them up, differ."""
    out: list[TrainJobId] = []
    for cluster in sorted(set(base) | set(head)):
        before = by_trainjob(base.get(cluster, ()))
        after = by_trainjob(head.get(cluster, ()))
        for ident in sorted(set(before) | set(after)):
            if before.get(ident) != after.get(ident):
                out.append((cluster, *ident))
    return out


def _canonical(objects: Iterable[RenderedObject]) -> dict[tuple[str, str], list[str]]:
    out: dict[tuple[str, str], list[str]] = {}
    for obj in objects:
        out.setdefault((obj.trainjob_namespace, obj.trainjob_name), []).append(
            json.dumps(obj.data, sort_keys=True)
        )
    return {k: sorted(v) for k, v in out.items()}


# Renders kept as blobs (compiler.plan.chunks): cluster -> the objects' files
StoredRenders = Mapping[str, Sequence[ObjectFile]]


def _stored_by_trainjob(
    objects: Iterable[ObjectFile],
) -> dict[tuple[str, str], list[tuple[str, str]]]:
    out: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for obj in objects:
        out.setdefault(obj.trainjob, []).append((obj.relative_path, obj.digest))
    return {k: sorted(v) for k, v in out.items()}


def changed_stored_trainjobs(base: StoredRenders, head: StoredRenders) -> list[TrainJobId]:
    """:func:`changed_trainjobs` for renders kept as blobs: an object whose bytes are the
    same is the same (the YAML writer is one-to-one), so no object is read."""
    return _changed(base, head, _stored_by_trainjob)


def read_changes(
    base: StoredRenders, head: StoredRenders, read: Callable[[str], dict[str, Any]]
) -> tuple[Renders, Renders]:
    """The objects of the TrainJobs whose objects differ, read back from their blobs
    (``read``: digest -> object): what :func:`diff_renders` needs to say the same as it
    says of the whole renders, since every TrainJob left out is unchanged."""
    changed = set(changed_stored_trainjobs(base, head))

    def read_cluster(cluster: str, objects: Sequence[ObjectFile]) -> list[RenderedObject]:
        return [
            RenderedObject(obj.trainjob[0], obj.trainjob[1], read(obj.digest))
            for obj in objects
            if (cluster, *obj.trainjob) in changed
        ]

    return (
        {cluster: read_cluster(cluster, objects) for cluster, objects in base.items()},
        {cluster: read_cluster(cluster, objects) for cluster, objects in head.items()},
    )


R = TypeVar("R")


def compute_impact(
    changed_inputs: Sequence[tuple[str, str]],
    base: R,
    head: R,
    render_base_with: Callable[[str], R],
    render_head_without: Callable[[str], R],
    render_head: Callable[[], R] | None = None,
    compare: Callable[[R, R], list[TrainJobId]] = changed_trainjobs,  # type: ignore[assignment]
) -> list[InputImpact]:
    """For each changed input, the TrainJobs whose output that change alone changes.

    ``changed_inputs`` are ``(path, status)`` pairs; renders are compared with
    ``compare`` (:func:`changed_trainjobs`, or :func:`changed_stored_trainjobs`). Each change is isolated by
    rendering the base with only that file taken from the head; when that cannot be
    rendered (the change needs another one), by rendering the head with only that
    file taken from the base, compared with ``render_head()`` (the head rebuilt the
    same way; ``head`` when not given). The ``render_*`` callables raise
    :class:`TraincError` when the inputs do not render.
    """
    impacts: list[InputImpact] = []
    for path, status in sorted(changed_inputs):
        trainjobs: list[TrainJobId] | None
        try:
            trainjobs = compare(base, render_base_with(path))
        except TraincError:
            try:
                rebuilt = render_head() if render_head is not None else head
                trainjobs = compare(render_head_without(path), rebuilt)
            except TraincError:
                trainjobs = None
        impacts.append(InputImpact(path, status, trainjobs))
    return impacts
