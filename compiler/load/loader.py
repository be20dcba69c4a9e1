"""Stage 1 entry point: paths -> validated, defaulted Trainer objects + everything else.

For every YAML document (see :mod:`compiler.apiserver.yaml_source` for how YAML is read):

* a document must be a mapping with a non-empty string ``apiVersion`` and ``kind``;
  ``v1/List`` documents are expanded into their ``items``;
* ``trainer.kubeflow.org/v1alpha1`` TrainJob, TrainingRuntime and ClusterTrainingRuntime
  get ``metadata.namespace`` (namespaced kinds, when unset) and then go through the API
  server's create path (:func:`compiler.apiserver.crds.admit`): unknown fields, schema types
  and constraints, ObjectMeta rules, CRD defaults, then the CRD's CEL rules
  (:func:`compiler.apiserver.crd_rules.check_rules`); another version or an
  unknown kind of that group is an error, as ``kubectl`` would say ("no matches for kind");
* any other kind (a ValidatingAdmissionPolicy, a ConfigMap, ...) is kept unchanged in
  :attr:`LoadResult.others` for later stages;
* two objects with the same API group, kind, namespace and name are an error naming
  both places.

All problems of all files are collected and raised as one :class:`InputError`, sorted by
file, line and column::

    >>> result = load_texts([("job.yaml", '''
    ... apiVersion: trainer.kubeflow.org/v1alpha1
    ... kind: TrainJob
    ... metadata: {name: llm}
    ... spec: {runtimeRef: {name: torch-distributed}}
    ... ''')])
    >>> job = result.objects[0]
    >>> job.data["metadata"], job.data["spec"]["runtimeRef"]["kind"], job.data["spec"]["suspend"]
    ({'name': 'llm', 'namespace': 'default'}, 'ClusterTrainingRuntime', False)
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from compiler.apiserver.crd_rules import check_rules
from compiler.apiserver.crds import CrdSet, admit, trainer_crds, unknown_field_hint
from compiler.apiserver.manifest import Manifest, SourceMap
from compiler.apiserver.yaml_source import (
    YamlDocument,
    YamlStream,
    read_source,
    read_stream,
)
from compiler.errors import (
    FieldError,
    InputError,
    JsonPath,
    ObjectRef,
    Problem,
    SourceLocation,
    sorted_problems,
)
from compiler.load.discover import discover_collect
from compiler.upstream.names import TRAINER_GROUP

TRAINER_KINDS = frozenset({"TrainJob", "TrainingRuntime", "ClusterTrainingRuntime"})

# Problems kept per input file; the rest are counted in one more problem. A file of
# 100,000 broken documents then costs the memory of a thousand problems, not of 100,000,
# in every report (JSON and SARIF included: nobody fixes the 1,001st before the first).
MAX_PROBLEMS_PER_FILE = 1000

__all__ = [
    "LoadResult",
    "LoadState",
    "load",
    "load_collect",
    "load_state",
    "load_texts",
    "load_texts_collect",
]


@dataclass
class LoadResult:
    """What was loaded, in input order (files in discovery order, documents in file order)."""

    objects: list[Manifest] = field(default_factory=list)  # Trainer kinds, admitted and defaulted
    others: list[Manifest] = field(default_factory=list)  # any other kind, as written
    # Trainer objects the API server would refuse (their problems are in the InputError);
    # only :func:`load_collect` callers see them, e.g. to treat them as absent like upstream
    rejected: list[Manifest] = field(default_factory=list)
    # the text of every source read, by display name (for reports that quote the source)
    texts: dict[str, str | bytes] = field(default_factory=dict)
    # objects kept as they are that look like Trainer objects with a misspelt apiVersion
    warnings: list[Problem] = field(default_factory=list)

    def of_kind(self, kind: str) -> list[Manifest]:
        return [m for m in self.objects if m.kind == kind]


def _ref(data: dict[str, Any], namespaced: bool = True) -> ObjectRef:
    meta = data.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    name = meta.get("name")
    namespace = meta.get("namespace") if namespaced else None
    return ObjectRef(
        str(data.get("kind") or "object"),
        name if isinstance(name, str) and name else "(unnamed)",
        namespace if isinstance(namespace, str) and namespace else None,
    )


def _rebase(source: SourceMap, prefix: JsonPath) -> SourceMap:
    """The positions under ``prefix``, re-rooted (for the items of a ``v1/List``)."""
    depth = len(prefix)

    def rebased() -> dict[JsonPath, tuple[int, int]]:
        return {
            path[depth:]: pos for path, pos in source.positions.items() if path[:depth] == prefix
        }

    return SourceMap(source.file, compute=rebased)


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return "a string" if isinstance(value, str) else "a list"


ObjectKey = tuple[str, str, str, str]  # (API group, kind, namespace, name)


def object_key(data: dict[str, Any]) -> ObjectKey:
    metadata = data.get("metadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    return (
        str(data.get("apiVersion", "")).rpartition("/")[0],
        str(data.get("kind", "")),
        str(metadata.get("namespace") or ""),
        str(metadata.get("name") or ""),
    )


class _Loader:
    def __init__(
        self,
        crds: CrdSet,
        default_namespace: str,
        previous: Mapping[ObjectKey, dict[str, Any]] | None = None,
    ) -> None:
        self.crds = crds
        self.default_namespace = default_namespace
        # Objects as a previous revision stored them: present means this is an update,
        # so the CRDs' transition rules (oldSelf) run, as the API server runs them.
        self.previous = previous or {}
        self.result = LoadResult()
        self.problems: list[Problem] = []
        self.file_problems = 0  # problems found in the file being read
        self.dropped: Problem | None = None  # the first problem past the file's limit
        self.file_warnings = 0  # likewise for warnings
        self.seen: dict[tuple[str, str, str, str], Manifest] = {}
        self.file_start = (0, 0, 0, 0, 0)  # list lengths when the file being read began
        self.file_keys: list[ObjectKey] = []  # the keys it added to ``seen``

    def begin_file(self) -> None:
        result = self.result
        self.file_start = (
            len(result.objects),
            len(result.others),
            len(result.rejected),
            len(result.warnings),
            len(self.problems),
        )
        self.file_keys = []

    def refuse_file(self, problem: Problem) -> None:
        """The file read is refused whole, with this one problem: what it gave is dropped
        (like a file over the size limit, of which nothing is read)."""
        objects, others, rejected, warnings, problems = self.file_start
        result = self.result
        del result.objects[objects:], result.others[others:], result.rejected[rejected:]
        del result.warnings[warnings:], self.problems[problems:]
        for key in self.file_keys:
            del self.seen[key]
        self.problems.append(problem)
        self.file_problems = self.file_warnings = 0
        self.dropped = None

    def document(self, document: YamlDocument) -> None:
        data = document.data
        source = document.source
        if isinstance(data, dict) and data.get("apiVersion") == "v1" and data.get("kind") == "List":
            items = data.get("items")
            if not isinstance(items, list):
                self.problem(
                    "a v1 List needs a list of items", source.locate(("items",)), rule="yaml"
                )
                return
            for index, item in enumerate(items):
                self.object(item, _rebase(source, ("items", index)))
            return
        self.object(data, source)

    def problem(
        self,
        message: str,
        location: SourceLocation,
        ref: ObjectRef | None = None,
        rule: str = "yaml",
    ) -> None:
        self.add(Problem(message, location, ref, rule=rule))

    def add(self, problem: Problem) -> None:
        """Keep ``problem``, or count it once the file has :data:`MAX_PROBLEMS_PER_FILE`."""
        self.file_problems += 1
        if self.file_problems <= MAX_PROBLEMS_PER_FILE:
            self.problems.append(problem)
        elif self.dropped is None:
            self.dropped = problem

    def end_file(self, display: str) -> None:
        """After a file: the problems past its limit as one, where the first of them is;
        likewise the warnings."""
        if self.file_warnings > MAX_PROBLEMS_PER_FILE:
            more = self.file_warnings - MAX_PROBLEMS_PER_FILE
            self.result.warnings.append(
                Problem(
                    f"... and {more} more warnings in this file (only the first "
                    f"{MAX_PROBLEMS_PER_FILE} are reported)",
                    SourceLocation(display),
                    rule="yaml",
                )
            )
        if self.dropped is not None:
            more = self.file_problems - MAX_PROBLEMS_PER_FILE
            self.problems.append(
                Problem(
                    f"... and {more} more problems in this file (only the first "
                    f"{MAX_PROBLEMS_PER_FILE} are reported)",
                    self.dropped.location,
                    rule=self.dropped.rule,
                )
            )
        self.file_problems = self.file_warnings = 0
        self.dropped = None

    def object(self, data: Any, source: SourceMap) -> None:
        if not isinstance(data, dict):
            self.problem("a Kubernetes object must be a YAML mapping", source.locate(()))
            return
        api_version, kind = data.get("apiVersion"), data.get("kind")
        missing = [
            name
            for name, value in (("apiVersion", api_version), ("kind", kind))
            if not isinstance(value, str) or not value
        ]
        if missing:
            what = " and ".join(missing)
            self.problem(
                f"not a Kubernetes object: {what} must be set (a non-empty string)",
                source.locate(()),
            )
            return
        assert isinstance(api_version, str) and isinstance(kind, str)
        group = api_version.rpartition("/")[0]
        if group != TRAINER_GROUP and "metadata" in data and not isinstance(data["metadata"], dict):
            # The API server cannot decode it into an ObjectMeta: no object at all. (For
            # Trainer kinds the create path below says so in the API server's words.)
            self.problem(
                f"metadata must be a mapping (an ObjectMeta), got {_json_type(data['metadata'])}",
                source.locate(("metadata",)),
                ObjectRef(kind, "(unnamed)"),
            )
            return
        manifest = Manifest(data, source)
        if group == TRAINER_GROUP:
            crd = self.crds.get(api_version, kind)
            if crd is None:
                message = f'no matches for kind "{kind}" in version "{api_version}"'
                self.problem(message, source.locate(("kind",)), _ref(data), "crd-schema")
                return
            meta = data.get("metadata")
            if crd.namespaced and isinstance(meta, dict) and not meta.get("namespace"):
                meta["namespace"] = self.default_namespace
            if crd.namespaced and "metadata" not in data:
                data["metadata"] = {"namespace": self.default_namespace}
            errors = admit(data, crd, self.crds)
            old = self.previous.get(object_key(data))
            # CEL, when the schema step allows
            rules = check_rules(data, crd, errors, old=old, kubernetes=self.crds.kubernetes)
            ref = _ref(data, crd.namespaced)
            for error in errors:
                problem = self.field_problem(error, source, ref, "crd-schema")
                if 'unknown field "' in error.message:
                    hint = unknown_field_hint(error.path, kind, self.crds)
                    if hint is not None:  # a field of another Trainer release
                        problem = replace(problem, message=f"{problem.message} ({hint})")
                self.add(problem)
            for error in rules:
                self.add(self.field_problem(error, source, ref, "crd-cel"))
            rejected = bool(errors or rules)
            (self.result.rejected if rejected else self.result.objects).append(manifest)
        else:
            self.result.others.append(manifest)
            self.check_lookalike(manifest, group)
        self.check_duplicate(manifest, group)

    @staticmethod
    def field_problem(
        error: FieldError, source: SourceMap, ref: ObjectRef, rule: str | None = None
    ) -> Problem:
        # Go prints the root's empty field path as "<nil>"
        field = "<nil>" if error.field == "" else error.field
        return Problem(error.message, source.locate(error.path), ref, field, rule)

    def check_lookalike(self, manifest: Manifest, group: str) -> None:
        """A Trainer kind, or the Trainer group spelt in another case, in another group:
        kept unchanged like any other object, but almost surely meant as a Trainer one."""
        if group.casefold() != TRAINER_GROUP and manifest.kind not in TRAINER_KINDS:
            return
        self.file_warnings += 1
        if self.file_warnings > MAX_PROBLEMS_PER_FILE:
            return  # counted in end_file
        self.result.warnings.append(
            Problem(
                f"apiVersion {manifest.api_version!r} is not the Trainer's "
                f"({TRAINER_GROUP}/v1alpha1; API groups are case-sensitive): this "
                f"{manifest.kind} is passed through as an unknown object, not rendered",
                manifest.locate(("apiVersion",)),
                _ref(manifest.data),
                "apiVersion",
                "yaml",
            )
        )

    def check_duplicate(self, manifest: Manifest, group: str) -> None:
        meta = manifest.data.get("metadata")
        if not isinstance(meta, dict):
            return
        name, namespace = meta.get("name"), meta.get("namespace")
        if not isinstance(name, str) or not name:
            return
        key = (group, manifest.kind, namespace if isinstance(namespace, str) else "", name)
        first = self.seen.get(key)
        if first is None:
            self.seen[key] = manifest
            self.file_keys.append(key)
            return
        where = first.locate(("metadata", "name"))
        self.problem(
            f"duplicate object: {manifest.kind} {name!r} is also defined at {where}",
            manifest.locate(("metadata", "name")),
            _ref(manifest.data),
            "input",
        )


# a source text: (display name, text), or with the line of the file it starts at (a
# range of a file's documents, see compiler.load.ranges; positions are the file's)
TextSource = tuple[str, str | bytes] | tuple[str, str | bytes, int]


@dataclass(frozen=True)
class LoadState:
    """What the loader holds after some files, to load more after them, more than once
    (the context files every chunk of a render shares: loaded once per process). Its
    manifests are shared by every load that starts from it; its lists are not."""

    result: LoadResult
    problems: list[Problem]
    seen: dict[ObjectKey, Manifest]  # the first object of each key (duplicates)


def load_state(
    sources: Sequence[TextSource],
    default_namespace: str = "default",
    crds: CrdSet | None = None,
) -> LoadState:
    """``sources`` loaded, as a state to go on from (:func:`load_texts_collect`'s ``start``)."""
    loader = _Loader(crds if crds is not None else trainer_crds(), default_namespace)
    _load_sources(loader, sources)
    return LoadState(loader.result, loader.problems, loader.seen)


def load_texts_collect(
    sources: Sequence[TextSource],
    default_namespace: str = "default",
    crds: CrdSet | None = None,
    previous: Mapping[ObjectKey, dict[str, Any]] | None = None,
    start: LoadState | None = None,
) -> tuple[LoadResult, list[Problem]]:
    """Like :func:`load_texts`, returning the problems (sorted) instead of raising them;
    after ``start`` (loaded with the same namespace and CRDs): the same answer as loading
    its files and then ``sources``."""
    loader = _Loader(crds if crds is not None else trainer_crds(), default_namespace, previous)
    if start is not None:
        done = start.result
        loader.result = LoadResult(
            list(done.objects),
            list(done.others),
            list(done.rejected),
            dict(done.texts),
            list(done.warnings),
        )
        loader.problems = list(start.problems)
        loader.seen = dict(start.seen)
    _load_sources(loader, sources)
    return loader.result, sorted_problems(loader.problems)


def _load_sources(loader: _Loader, sources: Sequence[TextSource]) -> None:
    for source in sources:
        display, text = source[0], source[1]
        first_line = source[2] if len(source) == 3 else 1
        loader.result.texts[display] = text
        # one document at a time: what is not kept (a document that is no object) is
        # freed before the next is built
        loader.begin_file()
        stream = YamlStream(text, display, first_line=first_line)
        for document in stream:
            loader.document(document)
        for problem in stream.problems:
            problem.rule = "yaml"
        if stream.too_many:
            loader.refuse_file(stream.problems[0])
            continue
        loader.problems.extend(stream.problems)  # the one that stopped it: always shown
        loader.end_file(display)


def load_texts(
    sources: list[tuple[str, str | bytes]],
    default_namespace: str = "default",
    crds: CrdSet | None = None,
) -> LoadResult:
    """Load in-memory YAML texts, each given as ``(display name, text)``."""
    result, problems = load_texts_collect(sources, default_namespace, crds)
    if problems:
        raise InputError(problems)
    return result


def load_collect(
    paths: list[str],
    default_namespace: str = "default",
    crds: CrdSet | None = None,
    previous: Mapping[ObjectKey, dict[str, Any]] | None = None,
) -> tuple[LoadResult, list[Problem]]:
    """Like :func:`load`, returning every problem (sorted) instead of raising them.

    ``previous`` (see :func:`load_previous`) makes each object found there an update.
    """
    sources, problems = discover_collect(paths)
    texts: list[tuple[str, str | bytes]] = []
    for source in sources:
        if source.kind != "yaml":
            continue  # a policy file for `trainc check` (see compiler.load.discover)
        try:
            if source.path is None:
                texts.append((source.display, read_stream(sys.stdin.buffer, source.display)))
            else:
                texts.append((source.display, read_source(source.path, source.display)))
        except InputError as error:
            problems += [replace(p, rule="input") for p in error.problems]
    result, found = load_texts_collect(texts, default_namespace, crds, previous)
    return result, sorted_problems([*problems, *found])


def load_previous(
    paths: list[str], default_namespace: str = "default", crds: CrdSet | None = None
) -> dict[ObjectKey, dict[str, Any]]:
    """The Trainer objects of a previous revision, as the API server stored them.

    Objects the previous revision could not have stored are left out: nothing to update.
    """
    result, _ = load_collect(paths, default_namespace, crds)
    return {object_key(m.data): m.data for m in result.objects}


def load(
    paths: list[str],
    default_namespace: str = "default",
    crds: CrdSet | None = None,
) -> LoadResult:
    """Read every YAML file under ``paths`` (``-`` is stdin); see the module docstring.

    Raises one :class:`InputError` with every problem of every file.
    """
    result, problems = load_collect(paths, default_namespace, crds)
    if problems:
        raise InputError(problems)
    return result
