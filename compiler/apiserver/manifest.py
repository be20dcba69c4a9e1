"""A loaded Kubernetes object: plain JSON data plus where each of its nodes came from.

The data is plain Python (dict, list, str, int, float, bool, None) so later stages
never see parser types. Positions are kept beside it, keyed by the JSON path of a
node, so any stage can point a message at ``file:line:col``::

    >>> m = Manifest({"kind": "TrainJob"}, SourceMap("a.yaml", {("kind",): (3, 1)}))
    >>> str(m.locate(("kind",)))
    'a.yaml:3:1'
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from compiler.errors import JsonPath, ObjectRef, SourceLocation


def format_path(path: Iterable[str | int]) -> str:
    """``("spec", "env", 0, "name")`` -> ``spec.env[0].name`` (the API server's field path form)."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else part
    return out


Positions = dict[JsonPath, tuple[int, int]]


class SourceMap:
    """Line/column (1-based) of every node of one document, by JSON path.

    The positions may be given, or worked out on first use by ``compute``: a render
    that finds nothing to report never needs them, and recording every node's position
    while parsing costs about a fifth of the parse (see ``compiler.apiserver.yaml_source``).
    ``root``, the document's own position when known without them, answers
    ``locate(())`` without working the others out (a finding about a whole object,
    the most common kind, then costs no second parse of its file).
    """

    __slots__ = ("_compute", "_positions", "_root", "file")

    def __init__(
        self,
        file: str,
        positions: Positions | None = None,
        *,
        compute: Callable[[], Positions] | None = None,
        root: tuple[int, int] | None = None,
    ) -> None:
        self.file = file
        self._positions = positions if positions is not None or compute is not None else {}
        self._compute = compute
        self._root = root

    @property
    def positions(self) -> Positions:
        if self._positions is None:
            assert self._compute is not None
            self._positions = self._compute()
            self._compute = None
        return self._positions

    def locate(self, path: JsonPath) -> SourceLocation:
        """The position of ``path``, or of its nearest ancestor that has one."""
        if not path and self._root is not None and self._positions is None:
            return SourceLocation(self.file, self._root[0], self._root[1])
        positions = self.positions
        probe = tuple(path)
        while True:
            position = positions.get(probe)
            if position is not None:
                return SourceLocation(self.file, position[0], position[1])
            if not probe:
                return SourceLocation(self.file)
            probe = probe[:-1]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SourceMap):
            return NotImplemented
        return self.file == other.file and self.positions == other.positions

    __hash__ = None  # type: ignore[assignment]  # mutable positions, as the dataclass had

    def __repr__(self) -> str:
        return f"SourceMap(file={self.file!r}, positions={self.positions!r})"


@dataclass
class Manifest:
    """One Kubernetes object from a YAML document."""

    data: dict[str, Any]
    source: SourceMap

    @property
    def api_version(self) -> str:
        return str(self.data.get("apiVersion", ""))

    @property
    def kind(self) -> str:
        return str(self.data.get("kind", ""))

    @property
    def metadata(self) -> dict[str, Any]:
        """``metadata``, or an empty mapping when it is absent or not a mapping."""
        metadata = self.data.get("metadata")
        return metadata if isinstance(metadata, dict) else {}

    @property
    def name(self) -> str:
        return str(self.metadata.get("name", ""))

    @property
    def namespace(self) -> str | None:
        namespace = self.metadata.get("namespace")
        return str(namespace) if namespace else None

    @property
    def ref(self) -> ObjectRef:
        return ObjectRef(self.kind, self.name, self.namespace)

    def locate(self, path: JsonPath) -> SourceLocation:
        return self.source.locate(path)


_INDEX = re.compile(r"\[([^\]]*)\]")


def parse_field_path(path: str) -> JsonPath:
    """``spec.trainer.env[2].name`` -> ``("spec", "trainer", "env", 2, "name")``.

    >>> parse_field_path("spec.annotations[a.b/c]")
    ('spec', 'annotations', 'a.b/c')
    """
    parts: list[str | int] = []
    for segment in re.split(r"\.(?![^\[]*\])", path):
        head = segment.split("[", 1)[0]
        if head:
            parts.append(head)
        for index in _INDEX.findall(segment):
            parts.append(int(index) if index.isdigit() else index)
    return tuple(parts)
