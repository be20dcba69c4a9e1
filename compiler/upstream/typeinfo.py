"""Go JSON facts about the upstream types, read from ``typeinfo.json``.

``upstream/typeinfo`` (run by ``make upstream``) reflects over the Go types behind
TrainJob, TrainingRuntime, ClusterTrainingRuntime, JobSet, both PodGroups,
ConfigMap, Secret, Pod and Job, and records what ``encoding/json`` does with each
field: JSON name, ``omitempty``/``omitzero``, promoted (embedded) fields, and the
Go kind of the value. Types are named like OpenAPI definitions
(``io.k8s.api.core.v1.PodSpec``, ``jobset.v1alpha2.JobSetSpec``,
``trainer.v1alpha1.TrainJobSpec``); the PodGroups are ``scheduling.v1alpha1.PodGroup``
(scheduler-plugins) and ``scheduling.v1beta1.PodGroup`` (Volcano)::

    >>> info = typeinfo()
    >>> replicas = info.struct("jobset.v1alpha2.ReplicatedJob").field("replicas")
    >>> replicas.omitempty, replicas.type.kind, replicas.type.bits
    (True, 'int', 32)
    >>> info.struct("io.k8s.api.core.v1.Container").field("resources").type.name
    'io.k8s.api.core.v1.ResourceRequirements'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path
from typing import Any

from compiler.errors import SetupError
from compiler.upstream.artifacts import DEFAULT_TRAINER_VERSION, load_json, upstream

SUPPORTED_VERSION = 1


@dataclass(frozen=True)
class TypeRef:
    """The Go type of a value.

    ``kind`` is one of: ``pointer`` / ``slice`` / ``array`` (``elem``), ``bytes``
    (``[]byte``, base64 in JSON), ``map`` (``key``, ``elem``), ``struct`` (``name``),
    ``special`` (custom JSON form; ``name`` and ``special``, e.g. ``resource.Quantity``),
    ``string``, ``bool``, ``int`` / ``uint`` / ``float`` (``bits``), ``interface``.
    """

    kind: str
    name: str | None = None
    special: str | None = None
    go_type: str | None = None
    bits: int | None = None
    length: int | None = None
    empty_interface: bool | None = None
    key: TypeRef | None = None
    elem: TypeRef | None = None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TypeRef:
        return cls(
            kind=data["kind"],
            name=data.get("name"),
            special=data.get("special"),
            go_type=data.get("goType"),
            bits=data.get("bits"),
            length=data.get("len"),
            empty_interface=data.get("empty"),
            key=cls.from_json(data["key"]) if "key" in data else None,
            elem=cls.from_json(data["elem"]) if "elem" in data else None,
        )


@dataclass(frozen=True)
class GoField:
    """One JSON-visible field of a Go struct, as ``encoding/json`` resolves it."""

    json: str
    go_name: str
    type: TypeRef
    omitempty: bool = False
    omitzero: bool = False
    quoted: bool = False
    embedded: tuple[str, ...] = ()
    embedded_pointer: bool = False
    patch_strategy: str | None = None
    patch_merge_key: str | None = None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> GoField:
        return cls(
            json=data["json"],
            go_name=data["goName"],
            type=TypeRef.from_json(data["type"]),
            omitempty=bool(data.get("omitempty")),
            omitzero=bool(data.get("omitzero")),
            quoted=bool(data.get("quoted")),
            embedded=tuple(data.get("embedded") or ()),
            embedded_pointer=bool(data.get("embeddedPointer")),
            patch_strategy=data.get("patchStrategy") or None,
            patch_merge_key=data.get("patchMergeKey") or None,
        )


@dataclass(frozen=True)
class GoType:
    """A named Go type: a struct with its fields, or a ``special`` (custom JSON) type."""

    name: str
    go_type: str
    kind: str
    special: str | None
    has_is_zero: bool
    fields: tuple[GoField, ...]

    @cached_property
    def by_json(self) -> Mapping[str, GoField]:
        return {f.json: f for f in self.fields}

    def field(self, json_name: str) -> GoField:
        """The field named ``json_name`` in JSON; KeyError if there is none."""
        try:
            return self.by_json[json_name]
        except KeyError:
            raise KeyError(f"{self.name} has no JSON field {json_name!r}") from None


class TypeInfo:
    """All named types of one ``typeinfo.json``."""

    def __init__(self, data: Mapping[str, Any], source: str = "<memory>") -> None:
        if data.get("version") != SUPPORTED_VERSION:
            raise SetupError(f"{source}: unsupported typeinfo version {data.get('version')!r}")
        self.source = source
        self.roots: Mapping[str, str] = dict(data["roots"])
        self.types: Mapping[str, GoType] = {
            name: GoType(
                name=name,
                go_type=entry["goType"],
                kind=entry["kind"],
                special=entry.get("special"),
                has_is_zero=bool(entry.get("isZero")),
                fields=tuple(GoField.from_json(f) for f in entry.get("fields") or ()),
            )
            for name, entry in data["types"].items()
        }

    def get(self, name: str) -> GoType:
        try:
            return self.types[name]
        except KeyError:
            raise KeyError(f"{self.source}: no Go type named {name!r}") from None

    def struct(self, name: str) -> GoType:
        """The struct type ``name``; KeyError if unknown or not a struct."""
        t = self.get(name)
        if t.kind != "struct":
            raise KeyError(f"{name} is a {t.kind} type, not a struct")
        return t


def load_typeinfo(path: Path) -> TypeInfo:
    return _load(path.resolve())


@cache
def _load(path: Path) -> TypeInfo:
    if not path.is_file():
        raise SetupError(f"{path} is missing: run `make upstream`")
    return TypeInfo(load_json(path), str(path))


def typeinfo(version: str = DEFAULT_TRAINER_VERSION) -> TypeInfo:
    """The type facts of the emulated Trainer ``version`` (loaded once per process)."""
    return load_typeinfo(upstream(version).typeinfo_path)
