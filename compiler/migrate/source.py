"""Reading v1 jobs: ruamel.yaml round trip (comments and key order survive into the
output), ``List`` wrappers, and positions for input errors (``file:line:col``)."""

from __future__ import annotations

import sys
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.emitter import RoundTripEmitter, ScalarAnalysis
from ruamel.yaml.error import ReusedAnchorWarning, YAMLError
from ruamel.yaml.events import (
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    SequenceEndEvent,
    SequenceStartEvent,
)

from compiler.apiserver.yaml_source import (
    max_file_documents,
    parse_yaml_collect,
    read_source,
    read_stream,
    too_many_documents,
)
from compiler.errors import InputError, JsonPath, Problem, SourceLocation

V1 = "kubeflow.org/v1"
MPI_V2 = "kubeflow.org/v2beta1"
VOLCANO = "batch.volcano.sh/v1alpha1"
TRAINER = "trainer.kubeflow.org/v1alpha1"


class _Emitter(RoundTripEmitter):
    """ruamel's round-trip emitter, but a scalar with ``:`` or ``?`` in a flow
    collection (``[{value: host:port}]``, kept from a flow-style input) is quoted.

    ruamel writes such a scalar plain, as YAML 1.2 allows; libyaml's scanner (which
    trainc's reader uses when ruamel's libyaml extra is installed, and PyYAML's)
    refuses ``:`` inside a flow plain scalar, and goyaml v2 (kubectl) ends one at
    ``?``: quoted, every reader takes the same string."""

    def analyze_scalar(self, scalar: Any) -> ScalarAnalysis:
        analysis: ScalarAnalysis = super().analyze_scalar(scalar)
        if ":" in scalar or "?" in scalar:
            analysis.allow_flow_plain = False
        return analysis


def round_trip() -> YAML:
    """ruamel's round trip: reads the v1 jobs, writes the migrated objects."""
    yaml = YAML(typ="rt")
    yaml.Emitter = _Emitter
    yaml.preserve_quotes = True
    yaml.width = 4096
    yaml.indent(mapping=2, sequence=4, offset=2)
    return yaml


@dataclass
class SourceObject:
    """One object of an input file with where it is written."""

    data: CommentedMap
    file: str
    path_prefix: JsonPath = ()  # ("items", 3) for an item of a List

    @property
    def api_version(self) -> str:
        return str(self.data.get("apiVersion") or "")

    @property
    def kind(self) -> str:
        return str(self.data.get("kind") or "")

    @property
    def metadata(self) -> dict[str, Any]:
        """``metadata`` if it is a mapping (anything else is a schema error), else empty."""
        meta = self.data.get("metadata")
        return meta if isinstance(meta, dict) else {}

    @property
    def name(self) -> str:
        return str(self.metadata.get("name") or "")

    @property
    def namespace(self) -> str:
        return str(self.metadata.get("namespace") or "")

    def location(self, path: JsonPath = ()) -> SourceLocation:
        return locate(self.data, path, self.file)


def locate(root: Any, path: JsonPath, file: str) -> SourceLocation:
    """The line and column of the deepest node of ``path`` that exists (1-based)."""
    node = root
    line, column = _start(root)
    for key in path:
        if isinstance(node, CommentedMap) and key in node:
            position = node.lc.key(key)
            line, column = position[0] + 1, position[1] + 1
            node = node[key]
        elif isinstance(node, CommentedSeq) and isinstance(key, int) and 0 <= key < len(node):
            position = node.lc.item(key)
            line, column = position[0] + 1, position[1] + 1
            node = node[key]
        else:
            break
    return SourceLocation(file, line, column)


def _start(node: Any) -> tuple[int, int]:
    lc = getattr(node, "lc", None)
    if lc is None or lc.line is None:
        return (0, 0)
    return (lc.line + 1, lc.col + 1)


def _text(data: bytes, name: str) -> str:
    """UTF-8 whatever the locale (files are read with the size limit of every input);
    not UTF-8 is render's error, at the first byte that is not."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        _, problems = parse_yaml_collect(data, name)
        raise InputError(
            problems or [Problem("invalid YAML: the file is not UTF-8 text", SourceLocation(name))]
        ) from None


def read_sources(paths: list[str]) -> Iterator[SourceObject]:
    """Every object of every YAML file under ``paths`` (``-`` is stdin), in path order;
    an :class:`InputError` with the problems of every file that cannot be read."""
    objects, problems = read_sources_collect(paths)
    if problems:
        raise InputError(problems)
    yield from objects


def read_sources_collect(paths: list[str]) -> tuple[list[SourceObject], list[Problem]]:
    """The objects of every file that can be read, and the problems of those that
    cannot: one bad file does not hide the others' problems (``migrate`` reports them
    all in one run, and writes nothing)."""
    objects: list[SourceObject] = []
    problems: list[Problem] = []
    for name in paths:
        try:
            files = [name] if name == "-" else [str(f) for f in _files(name)]
        except InputError as error:
            problems.extend(error.problems)
            continue
        for file in files:
            try:
                if file == "-":
                    data = read_stream(sys.stdin.buffer, "<stdin>")
                    objects.extend(_objects(_text(data, "<stdin>"), "<stdin>"))
                else:
                    objects.extend(_objects(_text(read_source(file), file), file))
            except InputError as error:
                problems.extend(error.problems)
    return objects, problems


def _files(name: str) -> list[Path]:
    """The YAML files of a path: itself, or those under a folder (in name order)."""
    path = Path(name)
    if path.is_dir():
        return sorted(p for p in path.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())
    if path.is_file():
        return [path]
    raise InputError([Problem("no such file or directory", SourceLocation(name))])


# Deeper than any Kubernetes object (a pod template's deepest fields are ~25 levels
# below a job's root), and far enough from Python's recursion limit for the recursive
# steps of a translation (ruamel's reading and writing, copy.deepcopy).
MAX_DEPTH = 100


_DEEP = f"nested more than {MAX_DEPTH} levels deep: not a Kubernetes object"


@dataclass
class _Scan:
    roots: list[SourceLocation]  # where each document's root starts
    deep: SourceLocation | None  # the first node deeper than MAX_DEPTH


def _events(text: str, file: str) -> _Scan:
    """Positions from the YAML events (no nodes built, no recursion): for the error
    paths, where the loaded documents have none."""
    scan = _Scan([], None)
    depth, after_start = 0, False
    try:
        for event in round_trip().parse(text):
            mark = event.start_mark
            where = SourceLocation(file, mark.line + 1, mark.column + 1)
            if after_start:
                scan.roots.append(where)
            after_start = isinstance(event, DocumentStartEvent)
            if isinstance(event, MappingStartEvent | SequenceStartEvent):
                depth += 1
                if depth > MAX_DEPTH + 1 and scan.deep is None:  # the root is depth 1
                    scan.deep = where
            elif isinstance(event, MappingEndEvent | SequenceEndEvent):
                depth -= 1
    except YAMLError:
        pass
    return scan


def too_deep(document: Any) -> JsonPath | None:
    """The path of a node deeper than :data:`MAX_DEPTH`, found without recursion."""
    stack: list[tuple[Any, JsonPath]] = [(document, ())]
    while stack:
        node, path = stack.pop()
        if len(path) > MAX_DEPTH:
            return path
        if isinstance(node, dict):
            stack.extend((value, (*path, key)) for key, value in node.items())
        elif isinstance(node, list):
            stack.extend((value, (*path, index)) for index, value in enumerate(node))
    return None


def _yaml_problem(error: YAMLError, text: str, file: str) -> Problem:
    """A YAML error as ``render`` words it (its parser's message, ``file:line:col``),
    not ruamel's multi-line text with ``"<unicode string>"`` in it."""
    _, problems = parse_yaml_collect(text, file)
    if problems:
        return problems[0]
    # a rare text render's parser takes and ruamel's does not: ruamel's first line, located
    mark = getattr(error, "problem_mark", None)
    location = (
        SourceLocation(file, mark.line + 1, mark.column + 1) if mark else SourceLocation(file)
    )
    problem = getattr(error, "problem", None) or str(error).split("\n", 1)[0]
    return Problem(f"invalid YAML: {problem}", location)


def _objects(text: str, file: str) -> Iterator[SourceObject]:
    limit = max_file_documents()
    documents: list[Any] = []
    try:
        with warnings.catch_warnings():
            # an anchor defined again is valid YAML (the later one counts, as in Go's
            # reader); ruamel's warning would be a stray unlocated line on stderr
            warnings.simplefilter("ignore", ReusedAnchorWarning)
            for document in round_trip().load_all(text):
                if len(documents) == limit:  # each document kept costs memory: bounded per file
                    where = (
                        locate(document, (), file) if document is not None else SourceLocation(file)
                    )
                    raise InputError([Problem(too_many_documents(limit), where)])
                documents.append(document)
    except YAMLError as error:
        raise InputError([_yaml_problem(error, text, file)]) from None
    except RecursionError:  # ruamel builds nested nodes recursively; its parser does not
        where = _events(text, file).deep or SourceLocation(file)
        raise InputError([Problem(_DEEP, where)]) from None
    for index, document in enumerate(documents):
        if document is None:
            continue
        if not isinstance(document, CommentedMap):
            roots = _events(text, file).roots  # a scalar carries no position of its own
            where = roots[index] if index < len(roots) else SourceLocation(file)
            raise InputError([Problem("a Kubernetes object must be a YAML mapping", where)])
        deep = too_deep(document)
        if deep is not None:
            raise InputError(
                [
                    Problem(
                        _DEEP,
                        locate(document, deep, file),
                    )
                ]
            )
        kind = str(document.get("kind") or "")
        if kind == "List" or (kind.endswith("List") and "items" in document):
            for index, item in enumerate(document.get("items") or []):
                if isinstance(item, CommentedMap):
                    yield SourceObject(item, file, ("items", index))
            continue
        yield SourceObject(document, file)
