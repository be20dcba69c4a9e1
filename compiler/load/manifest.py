"""A loaded Kubernetes object: plain JSON data plus where each of its nodes came from.

The data is plain Python (dict, list, str, int, float, bool, None) so later stages
never see parser types. Positions are kept beside it, keyed by the JSON path of a
node, so any stage can point a message at ``file:line:col``::

    >>> m = Manifest({"kind": "TrainJob"}, SourceMap("a.yaml", {("kind",): (3, 1)}))
    >>> str(m.locate(("kind",)))
    'a.yaml:3:1'
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from compiler.errors import ObjectRef, SourceLocation

JsonPath = tuple[str | int, ...]


def format_path(path: Iterable[str | int]) -> str:
    """``("spec", "env", 0, "name")`` -> ``spec.env[0].name`` (the API server's field path form)."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else part
    return out


@dataclass(frozen=True)
class SourceMap:
    """Line/column (1-based) of every node of one document, by JSON path."""

    file: str
    positions: dict[JsonPath, tuple[int, int]] = field(default_factory=dict)

    def locate(self, path: JsonPath) -> SourceLocation:
        """The position of ``path``, or of its nearest ancestor that has one."""
        probe = tuple(path)
        while True:
            position = self.positions.get(probe)
            if position is not None:
                return SourceLocation(self.file, position[0], position[1])
            if not probe:
                return SourceLocation(self.file)
            probe = probe[:-1]


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
    def name(self) -> str:
        return str(self.data.get("metadata", {}).get("name", ""))

    @property
    def namespace(self) -> str | None:
        namespace = self.data.get("metadata", {}).get("namespace")
        return str(namespace) if namespace else None

    @property
    def ref(self) -> ObjectRef:
        return ObjectRef(self.kind, self.name, self.namespace)

    def locate(self, path: JsonPath) -> SourceLocation:
        return self.source.locate(path)
