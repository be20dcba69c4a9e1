"""Navigate the Trainer's OpenAPI v3 document: schemas and their merge metadata.

The document (``api/openapi-spec/swagger.json`` of the Trainer module) holds the
Trainer, JobSet (``jobset.v1alpha2.*``) and core (``io.k8s.api.core.v1.*``) types
under ``components.schemas``. It is loaded once per process.

A :class:`SchemaNode` is one *slot* of the document: the schema written at that
place (a definition, a property, the items of an array, the values of a map) plus
what it resolves to through ``allOf``/``$ref``. Merge metadata is read from the
slot itself, the way apimachinery's OpenAPI lookup does: a property carries its
``x-kubernetes-patch-strategy`` even though its type sits behind a ``$ref``::

    >>> spec = schema("io.k8s.api.core.v1.PodSpec")
    >>> volumes = spec.property("volumes")
    >>> sorted(volumes.patch_strategies), volumes.patch_merge_key, volumes.list_map_keys
    (['merge', 'retainKeys'], 'name', ('name',))
    >>> volumes.items().name
    'io.k8s.api.core.v1.Volume'
    >>> spec.property("tolerations").patch_strategies
    frozenset()
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from compiler.errors import SetupError
from compiler.upstream.artifacts import DEFAULT_TRAINER_VERSION, load_json, upstream

_REF_PREFIX = "#/components/schemas/"

PATCH_STRATEGY = "x-kubernetes-patch-strategy"
PATCH_MERGE_KEY = "x-kubernetes-patch-merge-key"
LIST_TYPE = "x-kubernetes-list-type"
LIST_MAP_KEYS = "x-kubernetes-list-map-keys"
MAP_TYPE = "x-kubernetes-map-type"


@dataclass(frozen=True, eq=False)
class OpenAPIDocument:
    """The ``components.schemas`` of one OpenAPI v3 document."""

    schemas: Mapping[str, Any]
    source: str = "<memory>"
    _nodes: dict[str, SchemaNode] = field(default_factory=dict, repr=False, compare=False)

    def node(self, name: str) -> SchemaNode:
        """The definition ``name``, e.g. ``jobset.v1alpha2.JobSetSpec``; KeyError if absent.

        The same node each time, so what it has resolved below it is kept."""
        found = self._nodes.get(name)
        if found is None:
            if name not in self.schemas:
                raise KeyError(f"{self.source}: no schema named {name!r}")
            found = self._nodes[name] = SchemaNode(self, self.schemas[name])
        return found

    def resolve(self, raw: Mapping[str, Any]) -> tuple[Mapping[str, Any], str | None]:
        """Follow ``allOf[0]`` and ``$ref`` to the schema that describes the value.

        Returns the schema and the definition name it came from (``None`` if inline).
        """
        name: str | None = None
        for _ in range(32):  # the document has no reference cycles without properties
            all_of = raw.get("allOf")
            if all_of:
                raw = all_of[0]
                continue
            ref = raw.get("$ref")
            if not ref:
                return raw, name
            if not ref.startswith(_REF_PREFIX) or ref[len(_REF_PREFIX) :] not in self.schemas:
                raise KeyError(f"{self.source}: unresolvable reference {ref!r}")
            name = ref[len(_REF_PREFIX) :]
            raw = self.schemas[name]
        raise KeyError(f"{self.source}: reference chain too long at {name!r}")


@dataclass(frozen=True, eq=False)
class SchemaNode:
    """One slot of the schema: its own metadata and the resolved schema of its value.

    ``SchemaNode.schemaless()`` is the node of a value nothing is known about: every
    lookup below it returns another schemaless node (maps merge, lists are replaced).
    """

    document: OpenAPIDocument | None
    raw: Mapping[str, Any]
    _resolved: tuple[Mapping[str, Any], str | None] | None = field(
        default=None, repr=False, compare=False
    )
    # child slots, (0, property name), (1, "") items, (2, "") additionalProperties, kept
    # so a walk over many objects resolves each slot's $ref once, not once per value
    _children: dict[tuple[int, str], SchemaNode | None] = field(
        default_factory=dict, repr=False, compare=False
    )

    @classmethod
    def schemaless(cls) -> SchemaNode:
        return cls(None, {})

    @classmethod
    def from_raw(
        cls, raw: Mapping[str, Any], document: OpenAPIDocument | None = None
    ) -> SchemaNode:
        """A node for a schema written in code; its ``$ref`` s point into ``document``.

        Used for merge schemas the controller builds ad hoc, e.g. resource requirements
        whose ``claims`` merge by ``name``::

            SchemaNode.from_raw({"properties": {"claims": {"type": "array",
                "x-kubernetes-patch-strategy": "merge", "x-kubernetes-patch-merge-key": "name"}}})
        """
        return cls(document, raw)

    @property
    def is_schemaless(self) -> bool:
        return self.document is None and not self.raw

    def _target(self) -> tuple[Mapping[str, Any], str | None]:
        if self._resolved is None:
            resolved = self.document.resolve(self.raw) if self.document else (self.raw, None)
            object.__setattr__(self, "_resolved", resolved)
            return resolved
        return self._resolved

    @property
    def resolved(self) -> Mapping[str, Any]:
        """The schema of the value (after ``allOf``/``$ref``)."""
        return self._target()[0]

    @property
    def name(self) -> str | None:
        """The definition name the slot refers to, e.g. ``io.k8s.api.core.v1.Container``."""
        return self._target()[1]

    @property
    def type(self) -> str | None:
        """``object``, ``array``, ``string``, ... or ``None`` (e.g. int-or-string, Quantity)."""
        value = self.resolved.get("type")
        return value if isinstance(value, str) else None

    @property
    def properties(self) -> Mapping[str, Any]:
        props = self.resolved.get("properties")
        return props if isinstance(props, Mapping) else {}

    def items(self) -> SchemaNode | None:
        """The slot of an array's elements (``None`` if this is not an array)."""
        if self.is_schemaless:
            return self
        if (1, "") in self._children:
            return self._children[1, ""]
        raw = self.resolved.get("items")
        node = SchemaNode(self.document, raw) if isinstance(raw, Mapping) else None
        self._children[1, ""] = node
        return node

    def additional_properties(self) -> SchemaNode | None:
        """The slot of a map's values (``None`` if the schema has no ``additionalProperties``)."""
        if self.is_schemaless:
            return self
        if (2, "") in self._children:
            return self._children[2, ""]
        raw = self.resolved.get("additionalProperties")
        if isinstance(raw, Mapping):
            node: SchemaNode | None = SchemaNode(self.document, raw)
        else:
            node = SchemaNode.schemaless() if raw is True else None
        self._children[2, ""] = node
        return node

    @property
    def patch_strategy_list(self) -> tuple[str, ...]:
        """Strategies in written order: ``"merge,retainKeys"`` -> ``("merge", "retainKeys")``."""
        value = self.raw.get(PATCH_STRATEGY)
        return tuple(value.split(",")) if isinstance(value, str) and value else ()

    @property
    def patch_strategies(self) -> frozenset[str]:
        """Subset of ``{"merge", "retainKeys", "replace"}`` declared on this slot."""
        return frozenset(self.patch_strategy_list)

    @property
    def patch_merge_key(self) -> str | None:
        value = self.raw.get(PATCH_MERGE_KEY)
        return value if isinstance(value, str) and value else None

    @property
    def list_type(self) -> str | None:
        """``atomic``, ``set`` or ``map`` (``x-kubernetes-list-type``)."""
        value = self.raw.get(LIST_TYPE, self.resolved.get(LIST_TYPE))
        return value if isinstance(value, str) else None

    @property
    def list_map_keys(self) -> tuple[str, ...]:
        value = self.raw.get(LIST_MAP_KEYS, self.resolved.get(LIST_MAP_KEYS))
        return tuple(value) if isinstance(value, list) else ()

    @property
    def map_type(self) -> str | None:
        """``atomic`` or ``granular`` (``x-kubernetes-map-type``)."""
        value = self.raw.get(MAP_TYPE, self.resolved.get(MAP_TYPE))
        return value if isinstance(value, str) else None

    def at(self, *path: str) -> SchemaNode:
        """Walk properties; ``"[]"`` steps into array items and ``"{}"`` into map values.

        >>> schema("jobset.v1alpha2.JobSetSpec").at("replicatedJobs", "[]", "name").type
        'string'
        """
        node: SchemaNode | None = self
        for step in path:
            assert node is not None
            if step == "[]":
                node = node.items()
            elif step == "{}":
                node = node.additional_properties()
            else:
                node = node.property(step)
            if node is None:
                raise KeyError(f"schema {self.name or '<inline>'} has no path {'.'.join(path)}")
        assert node is not None
        return node

    # Defined last: inside the class body this name shadows the ``property`` builtin.
    def property(self, name: str) -> SchemaNode | None:
        """The slot of property ``name``; ``None`` when the schema does not declare it.

        A schemaless node answers with another schemaless node.
        """
        if self.is_schemaless:
            return self
        children = self._children
        key = (0, name)
        if key in children:
            return children[key]
        raw = self.properties.get(name)
        node = None if raw is None else SchemaNode(self.document, raw)
        children[key] = node
        return node


def load_document(path: Path) -> OpenAPIDocument:
    """Read an OpenAPI v3 document (cached per path)."""
    return _load_document(path.resolve())


@cache
def _load_document(path: Path) -> OpenAPIDocument:
    data = load_json(path)
    schemas = data.get("components", {}).get("schemas") if isinstance(data, dict) else None
    if not isinstance(schemas, dict):
        raise SetupError(f"{path}: not an OpenAPI v3 document (no components.schemas)")
    return OpenAPIDocument(schemas, str(path))


@cache
def openapi_document(version: str = DEFAULT_TRAINER_VERSION) -> OpenAPIDocument:
    """The Trainer OpenAPI document of ``version`` (from the upstream cache)."""
    return load_document(upstream(version).openapi_path)


def schema(name: str, version: str = DEFAULT_TRAINER_VERSION) -> SchemaNode:
    """The definition ``name`` of the Trainer document, e.g. ``jobset.v1alpha2.JobSetSpec``."""
    return openapi_document(version).node(name)
