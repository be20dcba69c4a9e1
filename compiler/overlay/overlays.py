"""Cluster overlays: kustomize-style ``patches`` with targets, applied in a fixed layer order.

An overlay file holds one or more ``Overlay`` documents (format in ``overlays/README.md``)::

    apiVersion: trainc.dev/v1alpha1
    kind: Overlay
    metadata:
      name: production
    layer: cluster                 # base | cluster | namespace
    patches:
      - target: {kind: TrainJob, labelSelector: "team=research"}
        patch:                     # strategic merge patch (a mapping) ...
          metadata:
            labels:
              kueue.x-k8s.io/queue-name: research
      - target: {kind: JobSet}
        patch:                     # ... or an RFC 6902 JSON patch (a list)
          - {op: add, path: /spec/ttlSecondsAfterFinished, value: 3600}
      - target: {kind: JobSet, name: "llm-.*"}
        path: jobset-patch.yaml    # the patch in a file beside this one (in the repository)
    locks:
      - {path: spec.priorityClassName, scope: pod, value: production-high}

Layers apply base -> cluster -> namespace; within a layer, in the order the files
are given. A patch whose target kind is an input kind (TrainJob, TrainingRuntime,
ClusterTrainingRuntime) changes inputs before render; any other patch (or one with
``stage: output``) changes rendered objects. Strategic merge uses the schema-driven
engine of :mod:`compiler.kube.strategic_merge` (kinds the Trainer OpenAPI
document lacks, e.g. PodGroup, merge schemalessly: maps merge, lists are replaced);
RFC 6902 patches are applied with ``jsonpatch``.

Public API (used by the project file):

* :func:`load_overlays` -> ``list[Overlay]`` (raises :class:`InputError`),
* :func:`apply_input_overlays` / :func:`apply_output_overlays` -> (objects, errors, warnings),
* :func:`check_locks` -> the lock problems of TrainJobs' own fields and runtimePatches.
"""

from __future__ import annotations

import copy
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import jsonpatch
import jsonpointer

from compiler.apiserver.manifest import Manifest, SourceMap, format_path
from compiler.apiserver.yaml_source import (
    YamlDocument,
    parse_yaml_collect,
    read_source,
    read_yaml,
)
from compiler.errors import InputError, JsonPath, ObjectRef, Problem, SourceLocation
from compiler.kube.strategic_merge import PatchError, strategic_merge
from compiler.load.confine import Outside, Root
from compiler.overlay.locks import (
    Lock,
    LockPathError,
    Violation,
    locked_values,
    own_violations,
    parse_lock_path,
    same_json,
    schema_for,
    violations,
)
from compiler.overlay.targets import SelectorError, Target, parse_selector
from compiler.upstream.openapi import SchemaNode

API_VERSION = "trainc.dev/v1alpha1"
KIND = "Overlay"
LAYERS = ("base", "cluster", "namespace")
INPUT_KINDS = frozenset({"TrainJob", "TrainingRuntime", "ClusterTrainingRuntime"})
RULE = "overlay"
LOCK_RULE = "lock"

Stage = Literal["input", "output"]
SchemaResolver = Callable[[Mapping[str, Any]], SchemaNode | None]

_JSON6902_OPS = frozenset({"add", "remove", "replace", "move", "copy", "test"})
_POINTER = re.compile(r"(/([^~/]|~[01])*)*\Z")


@dataclass(frozen=True)
class Patch:
    """One entry of ``patches``: a target and a strategic merge or RFC 6902 patch."""

    target: Target
    type: Literal["strategic", "json6902"]
    body: Any  # a mapping (strategic) or a list of operations (json6902)
    stage: Stage
    location: SourceLocation  # the ``patches[i]`` entry
    body_source: SourceMap  # positions inside ``body`` (from the overlay file or the ``path`` file)

    def body_location(self, path: JsonPath) -> SourceLocation:
        return self.body_source.locate(path)


@dataclass(frozen=True)
class Overlay:
    """One loaded ``Overlay`` document."""

    name: str
    layer: str
    patches: tuple[Patch, ...]
    locks: tuple[Lock, ...]
    location: SourceLocation
    namespace: str | None = None  # namespace-layer overlays change only this namespace

    @property
    def rank(self) -> int:
        return LAYERS.index(self.layer)

    def applies_in(self, obj: Mapping[str, Any]) -> bool:
        if self.namespace is None:
            return True
        return (obj.get("metadata") or {}).get("namespace") == self.namespace


# --------------------------------------------------------------------------- loading


class _Reader:
    """Turns one Overlay document into an :class:`Overlay`, collecting problems."""

    def __init__(self, document: YamlDocument, base_dir: Path, root: Root | None = None) -> None:
        self.document = document
        self.source = document.source
        self.base_dir = base_dir
        self.root = root  # what patch files stay inside; default: the overlay's repository
        self.problems: list[Problem] = []

    def problem(self, message: str, path: JsonPath, source: SourceMap | None = None) -> None:
        where = (source or self.source).locate(path)
        field_path = None if source is not None else format_path(path) or None
        self.problems.append(Problem(message, where, field_path=field_path, rule=RULE))

    def string(
        self, data: Mapping[str, Any], key: str, path: JsonPath, required: bool = False
    ) -> str | None:
        value = data.get(key)
        if value is None:
            if required:
                self.problem(f"{key} is required", path)
            return None
        if not isinstance(value, str) or (required and not value):
            self.problem(f"expected a non-empty string, got {type(value).__name__}", (*path, key))
            return None
        return value

    def read(self) -> Overlay | None:
        data = self.document.data
        if not isinstance(data, dict):
            self.problem("an Overlay must be a mapping", ())
            return None
        known = {"apiVersion", "kind", "metadata", "layer", "patches", "locks"}
        for key in data:
            if key not in known:
                self.problem(
                    f"unknown field {key!r} (expected one of {', '.join(sorted(known))})", (key,)
                )
        if data.get("apiVersion") != API_VERSION:
            self.problem(f"apiVersion must be {API_VERSION}", ("apiVersion",))
        metadata = data.get("metadata")
        if not isinstance(metadata, dict):
            self.problem("metadata.name is required", ("metadata",))
            metadata = {}
        name = self.string(metadata, "name", ("metadata",), required=True) or "<unnamed>"
        namespace = self.string(metadata, "namespace", ("metadata",))
        layer = data.get("layer", "cluster")
        if layer not in LAYERS:
            self.problem(f"layer must be one of {', '.join(LAYERS)}, got {layer!r}", ("layer",))
            layer = "cluster"
        if layer == "namespace" and namespace is None:
            self.problem("a namespace-layer overlay needs metadata.namespace", ("layer",))
        if layer != "namespace" and namespace is not None:
            self.problem(
                "metadata.namespace is only allowed with layer: namespace",
                ("metadata", "namespace"),
            )
            namespace = None
        patches: list[Patch] = []
        raw_patches = data.get("patches") or []
        if not isinstance(raw_patches, list):
            self.problem("patches must be a list", ("patches",))
            raw_patches = []
        for index, entry in enumerate(raw_patches):
            patch = self.patch(entry, ("patches", index))
            if patch is not None:
                patches.append(patch)
        locks: list[Lock] = []
        raw_locks = data.get("locks") or []
        if not isinstance(raw_locks, list):
            self.problem("locks must be a list", ("locks",))
            raw_locks = []
        for index, entry in enumerate(raw_locks):
            lock = self.lock(entry, ("locks", index), name, namespace)
            if lock is not None:
                locks.append(lock)
        return Overlay(
            name, str(layer), tuple(patches), tuple(locks), self.source.locate(()), namespace
        )

    def target(self, raw: Any, path: JsonPath) -> Target | None:
        if raw is None:
            return Target()
        if not isinstance(raw, dict):
            self.problem("target must be a mapping", path)
            return None
        fields = {
            "group",
            "version",
            "kind",
            "name",
            "namespace",
            "labelSelector",
            "annotationSelector",
        }
        ok = True
        for key, value in raw.items():
            if key not in fields:
                self.problem(f"unknown target field {key!r}", (*path, key))
                ok = False
            elif not isinstance(value, str):
                self.problem(f"target.{key} must be a string", (*path, key))
                ok = False
        if not ok:
            return None
        selectors = {}
        for key in ("labelSelector", "annotationSelector"):
            if key in raw:
                try:
                    selectors[key] = parse_selector(
                        raw[key], annotations=key == "annotationSelector"
                    )
                except SelectorError as error:
                    self.problem(f"invalid {key}: {error}", (*path, key))
                    ok = False
        for key in ("name", "namespace"):
            if key in raw:
                try:
                    re.compile(raw[key])
                except re.error as error:
                    self.problem(f"invalid regular expression: {error}", (*path, key))
                    ok = False
        if not ok:
            return None
        return Target(
            group=raw.get("group"),
            version=raw.get("version"),
            kind=raw.get("kind"),
            name=raw.get("name"),
            namespace=raw.get("namespace"),
            label_selector=selectors.get("labelSelector"),
            annotation_selector=selectors.get("annotationSelector"),
        )

    def patch(self, entry: Any, path: JsonPath) -> Patch | None:
        if not isinstance(entry, dict):
            self.problem("a patch must be a mapping with target and patch (or path)", path)
            return None
        for key in entry:
            if key not in ("target", "patch", "path", "stage"):
                self.problem(
                    f"unknown field {key!r} (expected target, patch, path, stage)", (*path, key)
                )
        target = self.target(entry.get("target"), (*path, "target"))
        if ("patch" in entry) == ("path" in entry):
            self.problem("give exactly one of patch (inline) and path (a file)", path)
            return None
        body_source: SourceMap
        if "patch" in entry:
            body, body_source = self.inline_body(entry["patch"], (*path, "patch"))
        else:
            body, body_source = self.file_body(entry["path"], (*path, "path"))
        if body is _INVALID or target is None:
            return None
        raw_stage = entry.get("stage")
        stage: Stage
        if raw_stage is None:
            stage = "input" if target.kind in INPUT_KINDS else "output"
        elif raw_stage in ("input", "output"):
            stage = "input" if raw_stage == "input" else "output"
        else:
            self.problem(f"stage must be input or output, got {raw_stage!r}", (*path, "stage"))
            return None
        location = self.source.locate(path)
        if isinstance(body, dict):
            # kustomize re-targets a patch at each matched object: its identity is ignored.
            body = {k: v for k, v in body.items() if k not in ("apiVersion", "kind")}
            metadata = body.get("metadata")
            if isinstance(metadata, dict):
                metadata = {k: v for k, v in metadata.items() if k not in ("name", "namespace")}
                if metadata:
                    body["metadata"] = metadata
                else:
                    del body["metadata"]
            return Patch(target, "strategic", body, stage, location, body_source)
        if isinstance(body, list):
            if not self.check_json6902(body, body_source):
                return None
            return Patch(target, "json6902", body, stage, location, body_source)
        self.problem(
            "a patch must be a mapping (strategic merge) or a list of operations (RFC 6902)", path
        )
        return None

    def inline_body(self, raw: Any, path: JsonPath) -> tuple[Any, SourceMap]:
        if not isinstance(raw, str):
            return raw, _rebase(self.source, path)
        # A string holds YAML or JSON text, as in kustomize; find where it starts.
        start = self.source.locate(path)
        text = self.document_text()
        line_offset, column_offset = _block_offset(text, start) if text is not None else (0, 0)
        documents, problems = parse_yaml_collect(raw, self.source.file)
        if problems:
            for problem in problems:
                loc = problem.location
                moved = (
                    _shift(loc, line_offset, column_offset)
                    if loc is not None and line_offset
                    else start
                )
                self.problems.append(Problem(f"patch: {problem.message}", moved, rule=RULE))
            return _INVALID, self.source
        if len(documents) != 1:
            self.problem("a patch string must hold exactly one YAML document", path)
            return _INVALID, self.source
        [document] = documents
        if not line_offset:
            return document.data, SourceMap(
                self.source.file, {(): self.source.positions.get(path, (0, 0))}
            )
        positions = {
            key: (line + line_offset, column + column_offset)
            for key, (line, column) in document.source.positions.items()
        }
        return document.data, SourceMap(self.source.file, positions)

    def document_text(self) -> str | None:
        try:
            return read_source(self.source.file).decode("utf-8")
        except (InputError, UnicodeDecodeError):
            return None

    def file_body(self, raw: Any, path: JsonPath) -> tuple[Any, SourceMap]:
        if not isinstance(raw, str) or not raw:
            self.problem("path must be a file name", path)
            return _INVALID, self.source
        file = self.base_dir / raw
        real = os.path.realpath(self.base_dir)  # inside the root: the overlay file is
        try:
            (self.root or Root.of(real)).resolve(raw, start=real)  # before anything is read
        except Outside as outside:
            self.problem(f"{raw!r} {outside}", path)
            return _INVALID, self.source
        try:
            documents = read_yaml(file, str(Path(self.source.file).parent / raw))
        except InputError as error:
            for problem in error.problems:
                self.problems.append(replace(problem, rule=RULE))
            return _INVALID, self.source
        if len(documents) != 1:
            self.problem(f"{raw}: a patch file must hold exactly one YAML document", path)
            return _INVALID, self.source
        return documents[0].data, documents[0].source

    def check_json6902(self, body: list[Any], source: SourceMap) -> bool:
        ok = True
        for index, op in enumerate(body):
            where: JsonPath = (index,)
            if not isinstance(op, dict):
                self.problem("a JSON patch operation must be a mapping", where, source)
                ok = False
                continue
            name = op.get("op")
            if name not in _JSON6902_OPS:
                self.problem(
                    f"unknown JSON patch op {name!r} (expected {', '.join(sorted(_JSON6902_OPS))})",
                    (*where, "op") if "op" in op else where,
                    source,
                )
                ok = False
            keys = ["path"] + (["from"] if name in ("move", "copy") else [])
            for key in keys:
                pointer = op.get(key)
                if not isinstance(pointer, str) or not _POINTER.match(pointer):
                    self.problem(
                        f"malformed JSON patch {key} {pointer!r}: a JSON pointer is '' or "
                        "'/'-separated tokens with '~' escaped as ~0 and '/' as ~1",
                        (*where, key) if key in op else where,
                        source,
                    )
                    ok = False
            if name in ("add", "replace", "test") and "value" not in op:
                self.problem(f"JSON patch op {name} needs a value", where, source)
                ok = False
        return ok

    def lock(self, entry: Any, path: JsonPath, overlay: str, namespace: str | None) -> Lock | None:
        if not isinstance(entry, dict):
            self.problem("a lock must be a mapping with path", path)
            return None
        for key in entry:
            if key not in ("path", "scope", "target", "value", "prefix"):
                self.problem(
                    f"unknown field {key!r} (expected path, scope, target, value, prefix)",
                    (*path, key),
                )
        text = self.string(entry, "path", path, required=True)
        if text is None:
            return None
        try:
            parsed = parse_lock_path(text)
        except LockPathError as error:
            self.problem(str(error), (*path, "path"))
            return None
        scope = entry.get("scope", "object")
        if scope not in ("object", "pod"):
            self.problem(f"scope must be object or pod, got {scope!r}", (*path, "scope"))
            return None
        if "target" in entry:
            target = self.target(entry["target"], (*path, "target"))
            if target is None:
                return None
        else:
            target = Target(kind="TrainJob") if scope == "object" else Target()
        prefix = entry.get("prefix")
        if prefix is not None and not isinstance(prefix, str):
            self.problem("prefix must be a string", (*path, "prefix"))
            return None
        if prefix is not None and "value" in entry:
            self.problem("give at most one of value and prefix", path)
            return None
        return Lock(
            path=parsed,
            path_text=text,
            scope=scope,
            target=target,
            location=self.source.locate(path),
            overlay=overlay,
            namespace=namespace,
            has_value="value" in entry,
            value=entry.get("value"),
            prefix=prefix,
        )


_INVALID: Any = object()


def _rebase(source: SourceMap, prefix: JsonPath) -> SourceMap:
    """The positions under ``prefix``, keyed relative to it."""
    size = len(prefix)
    positions = {k[size:]: v for k, v in source.positions.items() if k[:size] == prefix}
    return SourceMap(source.file, positions)


def _block_offset(text: str, start: SourceLocation) -> tuple[int, int]:
    """For ``patch: |`` at ``start``, the (line, column) offset of the block's content."""
    lines = text.splitlines()
    if start.line <= 0 or start.line > len(lines):
        return 0, 0
    head = lines[start.line - 1][start.column - 1 :]
    value = head.split(":", 1)[1].strip() if ":" in head else ""
    if not value or value[0] not in "|>":
        return 0, 0
    for number in range(start.line, len(lines)):
        content = lines[number]
        if content.strip():
            indent = len(content) - len(content.lstrip(" "))
            # parse_yaml numbers the block's first line 1 and its columns from the indent
            return number, indent
    return 0, 0


def _shift(location: SourceLocation, lines: int, columns: int) -> SourceLocation:
    return SourceLocation(location.file, location.line + lines, location.column + columns)


def load_overlays(paths: list[Path], root: Root | None = None) -> list[Overlay]:
    """Read every ``Overlay`` document of ``paths`` (in order); :class:`InputError` on bad input.

    Documents of other kinds in the files are an error. Patch files named by ``path:``
    are read relative to the overlay file and must stay inside ``root`` (the project's;
    default: the overlay file's repository), symbolic links followed, or they are an
    error at the ``path:`` (:mod:`compiler.load.confine`).
    """
    overlays: list[Overlay] = []
    problems: list[Problem] = []
    for path in paths:
        try:
            documents = read_yaml(path)
        except InputError as error:
            problems.extend(error.problems)
            continue
        for document in documents:
            if not isinstance(document.data, dict) or document.data.get("kind") != KIND:
                problems.append(
                    Problem(
                        f"expected kind: {KIND} (apiVersion {API_VERSION})",
                        document.source.locate(("kind",)),
                        rule=RULE,
                    )
                )
                continue
            reader = _Reader(document, path.parent, root)
            overlay = reader.read()
            problems.extend(reader.problems)
            if overlay is not None and not reader.problems:
                overlays.append(overlay)
    if problems:
        raise InputError(problems)
    return overlays


def ordered(overlays: Sequence[Overlay]) -> list[Overlay]:
    """Overlays in application order: base, cluster, namespace; given order within a layer."""
    return sorted(overlays, key=lambda o: o.rank)


# --------------------------------------------------------------------------- positions


class PatchedSourceMap(SourceMap):
    """Positions of a patched object: its own lines where unchanged, the overlay's where patched.

    Built from a :class:`_Remap` (which node of the patched object came from which node
    of the original), the original's positions are read only when something is located:
    most patched objects never are, and reading them parses the original's file again.
    """

    __slots__ = ("_locations", "_remap")

    def __init__(
        self,
        file: str,
        locations: dict[JsonPath, SourceLocation] | None = None,
        *,
        remap: _Remap | None = None,
    ) -> None:
        super().__init__(file, {})
        self._locations = locations
        self._remap = remap

    @property
    def locations(self) -> dict[JsonPath, SourceLocation]:
        if self._locations is None:
            assert self._remap is not None
            self._locations = self._remap.locations()
            self._remap = None
        return self._locations

    def locate(self, path: JsonPath) -> SourceLocation:
        locations = self.locations
        probe = tuple(path)
        while True:
            location = locations.get(probe)
            if location is not None:
                return location
            if not probe:
                return SourceLocation(self.file)
            probe = probe[:-1]


def _locations(source: SourceMap) -> dict[JsonPath, SourceLocation]:
    if isinstance(source, PatchedSourceMap):
        return source.locations
    return {
        path: SourceLocation(source.file, line, col)
        for path, (line, col) in source.positions.items()
    }


@dataclass
class _Remap:
    """Where each node of a patched object comes from: the original's node (``kept``:
    changed containers; ``copies``: unchanged subtrees, original path -> new path) or the
    patch (``fresh``, already located in the overlay)."""

    old_source: SourceMap
    kept: list[tuple[JsonPath, JsonPath]]  # (new path, old path)
    copies: dict[JsonPath, JsonPath]
    fresh: dict[JsonPath, SourceLocation]

    def locations(self) -> dict[JsonPath, SourceLocation]:
        old_locations = _locations(self.old_source)
        out = dict(self.fresh)
        for new_path, old_path in self.kept:
            if old_path in old_locations:
                out[new_path] = old_locations[old_path]
        copies = self.copies
        for path, location in old_locations.items():
            for size in range(len(path), -1, -1):
                target = copies.get(path[:size])
                if target is not None:
                    out.setdefault((*target, *path[size:]), location)
                    break
        return out


def _remap(
    old: Any, old_source: SourceMap, new: Any, patch_location: Callable[[JsonPath], SourceLocation]
) -> PatchedSourceMap:
    """Positions for ``new`` (the patched ``old``): unchanged nodes keep theirs, list items
    are followed when the patch moved them, new or changed nodes point into the patch."""
    copies: dict[JsonPath, JsonPath] = {}  # old subtree path -> new path
    kept: list[tuple[JsonPath, JsonPath]] = []
    out: dict[JsonPath, SourceLocation] = {}

    def fresh(value: Any, path: JsonPath) -> None:
        out[path] = patch_location(path)
        if isinstance(value, dict):
            for key, item in value.items():
                fresh(item, (*path, key))
        elif isinstance(value, list):
            for index, item in enumerate(value):
                fresh(item, (*path, index))

    def walk(new_value: Any, new_path: JsonPath, old_value: Any, old_path: JsonPath) -> None:
        if same_json(new_value, old_value):
            copies[old_path] = new_path
            return
        if isinstance(new_value, dict) and isinstance(old_value, dict):
            kept.append((new_path, old_path))
            for key, item in new_value.items():
                if key in old_value:
                    walk(item, (*new_path, key), old_value[key], (*old_path, key))
                else:
                    fresh(item, (*new_path, key))
        elif isinstance(new_value, list) and isinstance(old_value, list):
            kept.append((new_path, old_path))
            used: set[int] = set()
            for index, item in enumerate(new_value):
                match = next(
                    (j for j, o in enumerate(old_value) if j not in used and same_json(o, item)),
                    None,
                )
                if match is None and isinstance(item, dict) and "name" in item:
                    match = next(
                        (
                            j
                            for j, o in enumerate(old_value)
                            if j not in used
                            and isinstance(o, dict)
                            and o.get("name") == item["name"]
                        ),
                        None,
                    )
                if match is None:
                    fresh(item, (*new_path, index))
                else:
                    used.add(match)
                    walk(item, (*new_path, index), old_value[match], (*old_path, match))
        else:
            fresh(new_value, new_path)

    walk(new, (), old, ())
    return PatchedSourceMap(old_source.file, remap=_Remap(old_source, kept, copies, out))


def _smp_location(patch: Patch, result: Any) -> Callable[[JsonPath], SourceLocation]:
    """A changed node's position in a strategic merge patch body: the same field, list items
    matched by ``name`` (or position), else the nearest enclosing node the patch wrote."""

    def locate(path: JsonPath) -> SourceLocation:
        body: Any = patch.body
        value: Any = result
        body_path: JsonPath = ()
        for part in path:
            value = value[part] if _has(value, part) else None
            if isinstance(part, int) and isinstance(body, list):
                index = _match_item(body, value, part)
                if index is None:
                    break
                body, body_path = body[index], (*body_path, index)
            elif isinstance(part, str) and isinstance(body, dict) and part in body:
                body, body_path = body[part], (*body_path, part)
            else:
                break
        return patch.body_location(body_path)

    return locate


def _has(value: Any, part: str | int) -> bool:
    if isinstance(part, int):
        return isinstance(value, list) and 0 <= part < len(value)
    return isinstance(value, dict) and part in value


def _match_item(items: list[Any], value: Any, index: int) -> int | None:
    if isinstance(value, dict) and "name" in value:
        for j, item in enumerate(items):
            if isinstance(item, dict) and item.get("name") == value["name"]:
                return j
        return None
    for j, item in enumerate(items):
        if same_json(item, value):
            return j
    return None


def _json6902_location(patch: Patch) -> Callable[[JsonPath], SourceLocation]:
    """A changed node's position: the last operation whose path leads to it."""
    ops: list[tuple[int, JsonPath]] = []
    for index, op in enumerate(patch.body):
        try:
            parts = jsonpointer.JsonPointer(op["path"]).parts
        except jsonpointer.JsonPointerException:
            continue
        ops.append((index, tuple(int(p) if p.isdigit() else p for p in parts)))

    def locate(path: JsonPath) -> SourceLocation:
        best: tuple[int, int] | None = None
        for index, pointer in ops:
            size = len(pointer)
            leads = path[:size] == pointer or pointer[: len(path)] == path
            if leads and (best is None or size >= best[1]):
                best = (index, size)
        if best is None:
            return patch.location
        index, size = best
        rest = path[size:]
        if "value" in patch.body[index]:
            return patch.body_location((index, "value", *rest))
        return patch.body_location((index,))

    return locate


# --------------------------------------------------------------------------- applying


@dataclass
class _Item:
    data: dict[str, Any]
    source: SourceMap | None
    ref: ObjectRef
    original: Manifest | None = None
    # locks in force on this object, with the values they froze (None: value/prefix locks)
    # and which of those an overlay (not the object's own file) had written
    locks: list[tuple[Lock, dict[JsonPath, Any] | None, frozenset[JsonPath]]] = field(
        default_factory=list
    )
    touched: set[JsonPath] = field(default_factory=set)  # paths overlay patches wrote


def _ref(data: Mapping[str, Any]) -> ObjectRef:
    metadata = data.get("metadata") or {}
    namespace = metadata.get("namespace")
    return ObjectRef(
        str(data.get("kind", "")),
        str(metadata.get("name", "")),
        str(namespace) if namespace else None,
    )


def _default_schema(obj: Mapping[str, Any]) -> SchemaNode | None:
    return schema_for(obj)


def _apply_patch(patch: Patch, data: dict[str, Any], schemas: SchemaResolver) -> dict[str, Any]:
    if patch.type == "strategic":
        node = schemas(data)
        if node is None:
            return strategic_merge(
                data, patch.body, SchemaNode.schemaless(), unknown_fields="merge"
            )
        return strategic_merge(data, patch.body, node)
    result = jsonpatch.JsonPatch(copy.deepcopy(patch.body)).apply(copy.deepcopy(data))
    if not isinstance(result, dict):
        raise PatchError("the JSON patch replaced the object with a non-object")
    return result


def _patch_error(patch: Patch, error: Exception, item: _Item) -> Problem:
    if isinstance(error, PatchError):
        where = patch.body_location(error.path) if patch.type == "strategic" else patch.location
        return Problem(f"cannot apply patch to {item.ref}: {error}", where, item.ref, rule=RULE)
    # jsonpatch errors: find the failing operation by re-applying one at a time.
    data: Any = copy.deepcopy(item.data)
    for index, op in enumerate(patch.body):
        try:
            data = jsonpatch.JsonPatch([op]).apply(data)
        except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException) as failure:
            where = patch.body_location((index, "path"))
            message = f"JSON patch {op.get('op')} {op.get('path')!r} cannot apply to {item.ref}: {failure}"
            return Problem(message, where, item.ref, rule=RULE)
    return Problem(
        f"cannot apply patch to {item.ref}: {error}", patch.location, item.ref, rule=RULE
    )


# What the API server requires of any object's identity (apimachinery's validation):
# a DNS-1123 subdomain name, a DNS-1123 label namespace, a group that is a DNS-1123
# subdomain and a version that is a DNS-1123 label, a kind that is a Go identifier.
_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z")
_KIND = re.compile(r"[A-Za-z][A-Za-z0-9]*\Z")


def _identity_problems(data: Mapping[str, Any]) -> list[tuple[JsonPath, str]]:
    """Why an object's apiVersion, kind, name or namespace could not be a cluster's."""
    found: list[tuple[JsonPath, str]] = []
    api_version, kind = data.get("apiVersion"), data.get("kind")
    group, _, version = str(api_version).rpartition("/")
    if (
        not isinstance(api_version, str)
        or not _DNS_LABEL.match(version)
        or (group and (len(group) > 253 or not _DNS_SUBDOMAIN.match(group)))
    ):
        found.append((("apiVersion",), f"apiVersion {api_version!r} is not group/version"))
    if not isinstance(kind, str) or not _KIND.match(kind):
        found.append((("kind",), f"kind {kind!r} is not a Kubernetes kind"))
    metadata = data.get("metadata")
    if not isinstance(metadata, dict):
        found.append((("metadata",), "metadata must be a mapping (an ObjectMeta)"))
        return found
    name, namespace = metadata.get("name"), metadata.get("namespace")
    if not isinstance(name, str) or len(name) > 253 or not _DNS_SUBDOMAIN.match(name):
        found.append(
            (("metadata", "name"), f"name {name!r} is not a DNS-1123 subdomain (RFC 1123)")
        )
    if namespace is not None and (
        not isinstance(namespace, str) or len(namespace) > 63 or not _DNS_LABEL.match(namespace)
    ):
        found.append(
            (("metadata", "namespace"), f"namespace {namespace!r} is not a DNS-1123 label")
        )
    return found


def _result_problems(
    overlay: Overlay, patch: Patch, item: _Item, result: Mapping[str, Any]
) -> list[Problem]:
    """A patch result the cluster would refuse, or one outside a namespace overlay's reach.

    A namespace-layer overlay changes objects of its namespace and leaves them there: it
    cannot move one (a JSON patch of ``/metadata/namespace``, a ``$patch: replace`` of
    ``metadata``) into another tenant's namespace.
    """
    who = f"overlay {overlay.name} (layer {overlay.layer})"
    problems = [
        Problem(
            f"{who} would make {item.ref} invalid: {message}",
            patch.location,
            item.ref,
            format_path(path),
            RULE,
        )
        for path, message in _identity_problems(result)
    ]
    if overlay.namespace is not None and not problems:
        moved_to = (result.get("metadata") or {}).get("namespace")
        if moved_to != overlay.namespace:
            problems.append(
                Problem(
                    f"{who} of namespace {overlay.namespace!r} cannot move {item.ref} "
                    f"to namespace {moved_to!r}: a namespace-layer overlay changes only "
                    "objects of its own namespace, and they stay there",
                    patch.location,
                    item.ref,
                    "metadata.namespace",
                    RULE,
                )
            )
    return problems


def _run(
    items: list[_Item],
    overlays: Sequence[Overlay],
    stage: Stage,
    strict: bool,
    schemas: SchemaResolver,
) -> tuple[list[Problem], list[Problem]]:
    errors: list[Problem] = []
    warnings: list[Problem] = []
    for overlay in ordered(overlays):
        for patch in overlay.patches:
            if patch.stage != stage:
                continue
            matched = 0
            for item in items:
                if not (overlay.applies_in(item.data) and patch.target.matches(item.data)):
                    continue
                matched += 1
                try:
                    result = _apply_patch(patch, item.data, schemas)
                except (
                    PatchError,
                    jsonpatch.JsonPatchException,
                    jsonpointer.JsonPointerException,
                ) as error:
                    errors.append(_patch_error(patch, error, item))
                    continue
                broken = _result_problems(overlay, patch, item, result)
                broken += _lock_problems(item, result, patch, overlay)
                if broken:
                    errors.extend(broken)
                    continue  # the object keeps its locked value; later errors are not cascades
                if item.source is not None:
                    locate = (
                        _smp_location(patch, result)
                        if patch.type == "strategic"
                        else _json6902_location(patch)
                    )
                    item.source = _remap(item.data, item.source, result, locate)
                item.touched |= _touched(patch, result)
                item.data = result
            if not matched:
                scope = f" in namespace {overlay.namespace}" if overlay.namespace else ""
                message = (
                    f"patch target {patch.target.describe()} of overlay {overlay.name} "
                    f"matches no {stage} object{scope}"
                )
                (errors if strict else warnings).append(Problem(message, patch.location, rule=RULE))
        for lock in overlay.locks:
            for item in items:
                if lock.applies_to(item.data):
                    frozen = None
                    written_by_overlays: frozenset[JsonPath] = frozenset()
                    if not lock.has_value and lock.prefix is None:
                        frozen = locked_values(lock, item.data)
                        written_by_overlays = _overlay_written(item, frozen)
                    item.locks.append((lock, frozen, written_by_overlays))
    return errors, warnings


def _lock_problems(
    item: _Item, result: dict[str, Any], patch: Patch, overlay: Overlay
) -> list[Problem]:
    problems: list[Problem] = []
    for lock, frozen, _ in item.locks:
        before = locked_values(lock, item.data)
        after = locked_values(lock, result)
        for violation in violations(lock, before, after, frozen):
            who = f"overlay {overlay.name} (layer {overlay.layer}) patch at {patch.location}"
            location = (
                _smp_location(patch, result)(violation.path)
                if patch.type == "strategic"
                else _json6902_location(patch)(violation.path)
            )
            if not violation.present:
                location = patch.location
            problems.append(_lock_problem(violation, who, lock, location, item))
    return problems


def _lock_problem(
    violation: Violation, who: str, lock: Lock, location: SourceLocation | None, item: _Item
) -> Problem:
    return Problem(
        violation.describe(who, lock), location, item.ref, format_path(violation.path), LOCK_RULE
    )


def _own_lock_problems(item: _Item) -> list[Problem]:
    """A TrainJob's own fields (as written, runtimePatches included) against the locks on it."""
    if item.original is None or item.original.kind != "TrainJob":
        return []
    problems: list[Problem] = []
    for lock, frozen, by_overlays in item.locks:
        written = locked_values(lock, item.original.data)
        # a frozen value binds the tenant only where the platform wrote it
        platform = None if frozen is None else {p: v for p, v in frozen.items() if p in by_overlays}
        for violation in own_violations(lock, written, platform):
            who = "the TrainJob"
            if "runtimePatches" in violation.path:
                who = "a runtimePatch of the TrainJob"
            location = item.original.locate(violation.path)
            problems.append(_lock_problem(violation, who, lock, location, item))
    return problems


def _overlay_written(item: _Item, values: Mapping[JsonPath, Any]) -> frozenset[JsonPath]:
    """Paths of ``values`` an overlay patch wrote (at or above), as opposed to the object's own."""
    return frozenset(
        path for path in values if any(path[:size] in item.touched for size in range(len(path) + 1))
    )


def _touched(patch: Patch, result: Any) -> set[JsonPath]:
    """Paths (in ``result``) a patch writes: the fields of a strategic merge patch, list
    items matched by ``name``; the ``path`` of each RFC 6902 operation."""
    out: set[JsonPath] = set()
    if patch.type == "json6902":
        for op in patch.body:
            try:
                parts = jsonpointer.JsonPointer(op["path"]).parts
            except jsonpointer.JsonPointerException:
                continue
            out.add(tuple(int(p) if p.isdigit() else p for p in parts))
        return out

    def walk(body: Any, value: Any, path: JsonPath) -> None:
        out.add(path)
        if isinstance(body, dict) and isinstance(value, dict):
            for key, item in body.items():
                if not key.startswith("$") and key in value:
                    walk(item, value[key], (*path, key))
        elif isinstance(body, list) and isinstance(value, list):
            for item in body:
                if isinstance(item, dict) and "name" in item:
                    for index, candidate in enumerate(value):
                        if isinstance(candidate, dict) and candidate.get("name") == item["name"]:
                            walk(item, candidate, (*path, index))
                            break

    for key, item in patch.body.items():
        if key in result:
            walk(item, result[key], (key,))
    return out


def _input_items(manifests: list[Manifest]) -> list[_Item]:
    return [_Item(m.data, m.source, m.ref, original=m) for m in manifests]


def apply_input_overlays(
    manifests: list[Manifest], overlays: list[Overlay], strict: bool
) -> tuple[list[Manifest], list[Problem], list[Problem]]:
    """Apply the input-stage patches (layer order), then enforce locks on each TrainJob.

    Returns the patched manifests (same order; unchanged ones are the same objects,
    patched ones carry a :class:`PatchedSourceMap` whose patched fields point into the
    overlay), the errors and the warnings. A target matching nothing is a warning, an
    error with ``strict``.
    """
    items = _input_items(manifests)
    errors, warnings = _run(items, overlays, "input", strict, _default_schema)
    for item in items:
        errors.extend(_own_lock_problems(item))
    out = [
        m if item.data is m.data else Manifest(item.data, item.source or m.source)
        for m, item in zip(manifests, items, strict=True)
    ]
    return out, errors, warnings


def apply_output_overlays(
    objects: list[dict[str, Any]],
    overlays: list[Overlay],
    strict: bool,
    *,
    schemas: SchemaResolver | None = None,
) -> tuple[list[dict[str, Any]], list[Problem], list[Problem]]:
    """Apply the output-stage patches (layer order) to rendered objects.

    ``schemas`` picks the merge schema of an object (default: the Trainer OpenAPI
    document by kind; ``None`` from it means a schemaless merge).
    """
    items = [_Item(obj, None, _ref(obj)) for obj in objects]
    errors, warnings = _run(items, overlays, "output", strict, schemas or _default_schema)
    return [item.data for item in items], errors, warnings


def check_locks(manifests: list[Manifest], overlays: list[Overlay]) -> list[Problem]:
    """Lock violations only: TrainJobs' own fields and runtimePatches, and later overlays'
    input patches. The same checks :func:`apply_input_overlays` makes (for callers that
    want the verdict without the patched objects, e.g. ``trainjob`` mode)."""
    items = _input_items(manifests)
    errors, _ = _run(items, overlays, "input", False, _default_schema)
    lock_errors = [p for p in errors if p.rule == LOCK_RULE]
    for item in items:
        lock_errors.extend(_own_lock_problems(item))
    return lock_errors
