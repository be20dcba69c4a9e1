"""The Trainer CRDs of the emulated version, and what the API server does to a new object.

:func:`trainer_crds` reads the three CRDs (TrainJob, TrainingRuntime,
ClusterTrainingRuntime) from the upstream cache and compiles their schemas once per
process; :func:`admit` then runs the API server's create path up to (not including)
CEL rules on one object::

    decode metadata as ObjectMeta   type errors stop here (one "cannot be handled" error);
                                    unknown metadata fields are reported
    prune / drop nulls / default    unknown fields reported as strict field validation does
    drop status                     when the CRD has a status subresource (create ignores it)
    validate                        ObjectMeta rules (name, namespace, labels, ...), the
                                    schema, x-kubernetes-list-type uniqueness

Unlike the API server, which stops at the first failing step, every step runs so that
one pass reports everything (an object with an unknown field is still validated).
ObjectMeta's shape comes from the OpenAPI document shipped with Trainer
(``api/openapi-spec/swagger.json``); nothing here is specific to Trainer.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cache, cached_property
from pathlib import Path
from typing import Any

from compiler.apiserver.manifest import format_path
from compiler.apiserver.structural import Schema, admit_schema, compile_schema, go_value
from compiler.apiserver.yaml_source import parse_yaml, read_source
from compiler.errors import FieldError, InputError, JsonPath, SetupError
from compiler.kube.gotext import go_json
from compiler.upstream.artifacts import DEFAULT_TRAINER_VERSION, cache_root, load_json, upstream
from compiler.upstream.versions import DEFAULT_KUBERNETES as DEFAULT_KUBERNETES
from compiler.upstream.versions import TRAINER_VERSIONS

__all__ = ["TRAINER_PLURALS", "CrdInfo", "CrdSet", "admit", "load_crd", "trainer_crds"]

TRAINER_PLURALS = ("trainjobs", "trainingruntimes", "clustertrainingruntimes")


@dataclass(frozen=True, eq=False)
class CrdInfo:
    """One served version of a CRD and its schema.

    ``source`` is the compiled schema, or the raw ``openAPIV3Schema``, compiled on first
    use: a run compiles only the CRDs its inputs use (a runtime CRD is ~2,000 nodes).
    """

    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool
    status_subresource: bool
    source: Schema | Mapping[str, Any] = field(repr=False)

    @cached_property
    def schema(self) -> Schema:
        source = self.source
        return source if isinstance(source, Schema) else compile_schema(source)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}"


def _crd_document(path: Path) -> Any:
    """The CRD in ``path`` as plain data, through a JSON copy in the trainc cache.

    The CRD YAML files are large (a runtime CRD is ~1 MB); the JSON copy, named by the
    file's SHA-256, makes every later start ~10x faster. The cache is best effort.
    """
    try:
        raw = read_source(path)
    except InputError as error:
        raise SetupError(f"cannot read the CRD {path}: {error.problems[0].message}") from None
    cached = cache_root() / "crd-json" / f"{hashlib.sha256(raw).hexdigest()}.json"
    try:
        return json.loads(cached.read_bytes())
    except (OSError, ValueError):
        pass
    try:
        [document] = parse_yaml(raw, str(path))
    except (ValueError, InputError) as error:
        raise SetupError(f"cannot read the CRD {path}: {error}") from None
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(
            "w", encoding="utf-8", dir=cached.parent, delete=False, suffix=".tmp"
        ) as out:
            json.dump(document.data, out)
        os.replace(out.name, cached)
    except OSError:
        pass
    return document.data


def load_crd(path: Path) -> list[CrdInfo]:
    """Every served version of the CRD in ``path`` (a CustomResourceDefinition YAML)."""
    spec = _crd_document(path)["spec"]
    out = []
    for version in spec["versions"]:
        if not version.get("served", True):
            continue
        raw = ((version.get("schema") or {}).get("openAPIV3Schema")) or {"type": "object"}
        out.append(
            CrdInfo(
                group=spec["group"],
                version=version["name"],
                kind=spec["names"]["kind"],
                plural=spec["names"]["plural"],
                namespaced=spec.get("scope", "Namespaced") == "Namespaced",
                status_subresource="status" in (version.get("subresources") or {}),
                source=raw,
            )
        )
    return out


# --- ObjectMeta as the API server decodes it -------------------------------------------


class _GoType:
    """A Go type that ``encoding/json`` decodes into (enough of it for ObjectMeta)."""

    __slots__ = ("defaults", "elem", "fields", "kind", "name", "struct")

    def __init__(self, kind: str, name: str) -> None:
        self.kind = kind  # string | int | bool | map | slice | struct | time | raw
        self.name = name  # Go's spelling, for messages: map[string]string, v1.Time, ...
        self.elem: _GoType | None = None
        self.fields: dict[str, _GoType] = {}
        self.defaults: dict[str, Any] = {}  # struct fields marshalled even when zero
        self.struct = ""  # the struct's own name, for kind "struct"


_GO_NAMED_STRINGS = {"uid": "types.UID", "operation": "v1.ManagedFieldsOperationType"}


def _go_type(schema: Mapping[str, Any], defs: Mapping[str, Any], name: str = "") -> _GoType:
    ref = schema.get("$ref")
    if ref is None and len(schema.get("allOf") or ()) == 1:
        ref = schema["allOf"][0].get("$ref")
    if ref is not None:
        target = ref.rsplit("/", 1)[-1]
        short = target.rsplit(".", 1)[-1]
        resolved = defs[target]
        if resolved.get("type") == "string":
            return _GoType(
                "time" if resolved.get("format") == "date-time" else "string", f"v1.{short}"
            )
        if not resolved.get("properties"):
            return _GoType("raw", f"v1.{short}")
        out = _go_type(resolved, defs)
        out.name = f"v1.{short}"
        out.struct = short
        return out
    kind = schema.get("type")
    if kind == "string":
        return _GoType("string", _GO_NAMED_STRINGS.get(name, "string"))
    if kind == "integer":
        return _GoType("int", "int64")
    if kind == "boolean":
        return _GoType("bool", "bool")
    if kind == "array":
        elem = _go_type(schema.get("items") or {}, defs)
        out = _GoType("slice", f"[]{elem.name}")
        out.elem = elem
        return out
    if "additionalProperties" in schema:
        elem = _go_type(schema["additionalProperties"], defs)
        out = _GoType("map", f"map[string]{elem.name}")
        out.elem = elem
        return out
    out = _GoType("struct", "struct")
    properties = schema.get("properties") or {}
    out.fields = {key: _go_type(sub, defs, key) for key, sub in properties.items()}
    out.defaults = {key: sub["default"] for key, sub in properties.items() if "default" in sub}
    return out


_JSON_KIND = {
    str: "string",
    bool: "bool",
    int: "number",
    float: "number",
    dict: "object",
    list: "array",
}
_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})\Z")


@dataclass
class _MetaDecode:
    unknown: list[JsonPath] = field(default_factory=list)
    error: str | None = None
    error_path: JsonPath = ()

    def fail(
        self, path: JsonPath, value: Any, go: _GoType, struct: str, stack: tuple[str, ...]
    ) -> None:
        if self.error is not None:
            return
        kind = _JSON_KIND.get(type(value), "object")
        if kind == "number" and go.kind == "int":
            kind = f"number {go_json(value)}"
        where = f"Go struct field {struct}.{'.'.join(stack)}" if struct else "Go value"
        self.error = f"json: cannot unmarshal {kind} into {where} of type {go.name}"
        self.error_path = path

    def decode(
        self, value: Any, go: _GoType, path: JsonPath, struct: str, stack: tuple[str, ...]
    ) -> Any:
        """``value`` as Go would store and re-marshal it (nulls become zero values)."""
        if value is None:
            return None
        kind = go.kind
        cls = type(value)
        if kind == "raw":
            return value
        if kind in ("string", "time"):
            if cls is not str:
                self.fail(path, value, go, struct, stack)
            elif kind == "time" and not _RFC3339.match(value) and self.error is None:
                self.error = f'parsing time "{value}" as "2006-01-02T15:04:05Z07:00": cannot parse'
                self.error_path = path
            return value
        if kind == "int":
            if cls is not int:
                self.fail(path, value, go, struct, stack)
            return value
        if kind == "bool":
            if cls is not bool:
                self.fail(path, value, go, struct, stack)
            return value
        if kind == "map":
            if cls is not dict:
                self.fail(path, value, go, struct, stack)
                return value
            assert go.elem is not None
            return {
                key: (
                    "" if item is None else self.decode(item, go.elem, (*path, key), struct, stack)
                )
                for key, item in value.items()
            }
        if kind == "slice":
            if cls is not list:
                self.fail(path, value, go, struct, stack)
                return value
            assert go.elem is not None
            return [
                self.decode(item, go.elem, (*path, i), struct, stack)
                for i, item in enumerate(value)
            ]
        if cls is not dict:
            self.fail(path, value, go, struct, stack)
            return value
        out = {}
        for key, item in value.items():
            sub = go.fields.get(key)
            if sub is None:
                self.unknown.append((*path, key))
                continue
            decoded = self.decode(item, sub, (*path, key), go.struct or struct, (*stack, key))
            if decoded is not None:
                out[key] = decoded
        for key, default in go.defaults.items():
            out.setdefault(key, default)
        return out


def _empty(value: Any) -> bool:
    """``omitempty``: what ObjectMeta drops when it is marshalled back."""
    if value is None or value == "" or value == {} or value == []:
        return True
    return type(value) is int and value == 0


# --- ObjectMeta validation (k8s.io/apimachinery api/validation) -------------------------

_DNS_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS_SUBDOMAIN = _DNS_LABEL + "(\\." + _DNS_LABEL + ")*"
_DNS_LABEL_RE = re.compile(f"^{_DNS_LABEL}$")
_DNS_SUBDOMAIN_RE = re.compile(f"^{_DNS_SUBDOMAIN}$")
_LABEL_KEY = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_KEY_RE = re.compile(f"^{_LABEL_KEY}$")
_LABEL_VALUE = f"({_LABEL_KEY})?"
_LABEL_VALUE_RE = re.compile(f"^{_LABEL_VALUE}$")
_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.',"
    " and must start and end with an alphanumeric character"
)
_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-',"
    " and must start and end with an alphanumeric character"
)
_KEY_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.',"
    " and must start and end with an alphanumeric character"
)
_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.',"
    " and must start and end with an alphanumeric character"
)
_ANNOTATIONS_LIMIT = 256 * 1024


def _regex_error(message: str, pattern: str, *examples: str) -> str:
    """apimachinery's ``RegexError``: ``(e.g. 'a',  or 'b', regex used for validation is 'r')``."""
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{message} (e.g. {shown}regex used for validation is '{pattern}')"


def _dns_subdomain(value: str, unit: str = "characters") -> list[str]:
    errors = []
    if len(value.encode()) > 253:
        errors.append(f"must be no more than 253 {unit}")
    if not _DNS_SUBDOMAIN_RE.match(value):
        errors.append(_regex_error(_SUBDOMAIN_MSG, _DNS_SUBDOMAIN, "example.com"))
    return errors


def _dns_label(value: str) -> list[str]:
    errors = []
    if len(value.encode()) > 63:
        errors.append("must be no more than 63 characters")
    if not _DNS_LABEL_RE.match(value):
        if _DNS_SUBDOMAIN_RE.match(value):
            errors.append("must not contain dots")
        else:
            errors.append(_regex_error(_LABEL_MSG, _DNS_LABEL, "my-name", "123-abc"))
    return errors


def _qualified_name(value: str) -> list[str]:
    """``content.IsLabelKey``: ``[prefix/]name``."""
    errors: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errors.append("prefix part must be non-empty")
        else:
            errors.extend("prefix part " + m for m in _dns_subdomain(prefix, "bytes"))
    else:
        example = _regex_error(_KEY_MSG, _LABEL_KEY, "MyName", "my.name", "123-abc")
        return [
            f"a valid label key {example} with an optional DNS subdomain prefix and '/'"
            " (e.g. 'example.com/MyName')"
        ]
    if not name:
        errors.append("name part must be non-empty")
    elif len(name.encode()) > 63:
        errors.append("name part must be no more than 63 bytes")
    if not _LABEL_KEY_RE.match(name):
        errors.append(
            "name part " + _regex_error(_KEY_MSG, _LABEL_KEY, "MyName", "my.name", "123-abc")
        )
    return errors


def _label_value(value: str) -> list[str]:
    errors = []
    if len(value.encode()) > 63:
        errors.append("must be no more than 63 bytes")
    if not _LABEL_VALUE_RE.match(value):
        errors.append(_regex_error(_VALUE_MSG, _LABEL_VALUE, "MyValue", "my_value", "12345"))
    return errors


def _invalid(path: JsonPath, field_text: str, value: Any, detail: str) -> FieldError:
    return FieldError.at(path, field_text, f"Invalid value: {go_value(value)}: {detail}")


def validate_object_meta(meta: Mapping[str, Any], namespaced: bool) -> list[FieldError]:
    """``ValidateObjectMetaAccessor`` with DNS-1123 subdomain names (what every CR gets)."""
    out: list[FieldError] = []
    root: JsonPath = ("metadata",)
    generate = meta.get("generateName") or ""
    if generate:
        masked = generate[:-1] + "a" if len(generate) > 1 and generate.endswith("-") else generate
        for message in _dns_subdomain(masked):
            out.append(
                _invalid((*root, "generateName"), "metadata.generateName", generate, message)
            )
    name = meta.get("name") or ""
    if not name:
        out.append(
            FieldError.at(root, "metadata.name", "Required value: name or generateName is required")
        )
    else:
        for message in _dns_subdomain(name):
            out.append(_invalid((*root, "name"), "metadata.name", name, message))
    namespace = meta.get("namespace") or ""
    if namespaced:
        if not namespace:
            out.append(FieldError.at(root, "metadata.namespace", "Required value"))
        for message in _dns_label(namespace) if namespace else ():
            out.append(_invalid((*root, "namespace"), "metadata.namespace", namespace, message))
    elif namespace:
        out.append(
            FieldError.at(
                (*root, "namespace"), "metadata.namespace", "Forbidden: not allowed on this type"
            )
        )
    generation = meta.get("generation")
    if isinstance(generation, int) and generation < 0:
        detail = "must be greater than or equal to 0"
        out.append(_invalid((*root, "generation"), "metadata.generation", generation, detail))
    for key, value in (meta.get("labels") or {}).items():
        at = (*root, "labels", key)
        out.extend(_invalid(at, "metadata.labels", key, m) for m in _qualified_name(key))
        out.extend(_invalid(at, "metadata.labels", value, m) for m in _label_value(str(value)))
    annotations = meta.get("annotations") or {}
    for key in annotations:
        at = (*root, "annotations", key)
        out.extend(
            _invalid(at, "metadata.annotations", key, m) for m in _qualified_name(key.lower())
        )
    if (
        sum(len(k.encode()) + len(str(v).encode()) for k, v in annotations.items())
        > _ANNOTATIONS_LIMIT
    ):
        detail = f"Too long: may not be more than {_ANNOTATIONS_LIMIT} bytes"
        out.append(FieldError.at((*root, "annotations"), "metadata.annotations", detail))
    out.extend(_validate_owner_references(meta.get("ownerReferences") or []))
    finalizers = meta.get("finalizers") or []
    for index, finalizer in enumerate(finalizers):
        at = (*root, "finalizers", index)
        out.extend(
            _invalid(at, "metadata.finalizers", finalizer, m) for m in _qualified_name(finalizer)
        )
    if "orphan" in finalizers and "foregroundDeletion" in finalizers:
        detail = "finalizer orphan and foregroundDeletion cannot be both set"
        out.append(_invalid((*root, "finalizers"), "metadata.finalizers", finalizers, detail))
    return out


def _validate_owner_references(references: list[Any]) -> list[FieldError]:
    out: list[FieldError] = []
    field_text = "metadata.ownerReferences"
    controller = ""
    for index, ref in enumerate(references):
        if not isinstance(ref, Mapping):
            continue
        at: JsonPath = ("metadata", "ownerReferences", index)
        api_version = str(ref.get("apiVersion") or "")
        version = api_version.rsplit("/", 1)[-1] if api_version.count("/") <= 1 else ""
        if not version:
            out.append(
                _invalid(at, f"{field_text}.apiVersion", api_version, "version must not be empty")
            )
        for key in ("kind", "name", "uid"):
            if not ref.get(key):
                out.append(
                    _invalid(
                        at, f"{field_text}.{key}", str(ref.get(key) or ""), "must not be empty"
                    )
                )
        if api_version == "v1" and ref.get("kind") == "Event":
            out.append(
                _invalid(
                    at, field_text, dict(ref), "/v1, Kind=Event is disallowed from being an owner"
                )
            )
        if ref.get("controller") is True:
            current = f"{ref.get('kind', '')}/{ref.get('name', '')}"
            if controller:
                detail = (
                    "Only one reference can have Controller set to true. "
                    'Found "true" in references for '
                    f"{controller} and {current}"
                )
                out.append(_invalid(at, field_text, references, detail))
            else:
                controller = current
    return out


# --- the CRD set and the create path ----------------------------------------------------


def parse_kubernetes_version(text: str) -> tuple[int, int]:
    """``v1.31.0`` or ``1.31`` -> ``(1, 31)``; a ValueError for anything else.

    >>> parse_kubernetes_version("v1.35.2")
    (1, 35)
    """
    match = re.fullmatch(r"v?(\d+)\.(\d+)(?:\.\d+)?", text.strip())
    if match is None:
        raise ValueError(f"{text!r} is not a Kubernetes version (e.g. v1.34 or v1.34.4)")
    return int(match.group(1)), int(match.group(2))


@dataclass(frozen=True)
class CrdSet:
    """The CRDs trainc knows, by (API group, kind), plus ObjectMeta's Go shape, as an API
    server of ``kubernetes`` (major, minor) serves them."""

    crds: dict[tuple[str, str], CrdInfo]
    object_meta: _GoType = field(repr=False)
    kubernetes: tuple[int, int] = DEFAULT_KUBERNETES
    # the Trainer release the CRDs come from (None: some replaced by --schemas)
    trainer_version: str | None = None

    def served_by(self, kubernetes: tuple[int, int]) -> CrdSet:
        """The same CRDs on an API server of another Kubernetes version."""
        return self if kubernetes == self.kubernetes else replace(self, kubernetes=kubernetes)

    def get(self, api_version: str, kind: str) -> CrdInfo | None:
        group, _, version = api_version.rpartition("/")
        crd = self.crds.get((group, kind))
        return crd if crd is not None and crd.version == version else None

    def by_group_kind(self, group: str, kind: str) -> CrdInfo | None:
        return self.crds.get((group, kind))


def _object_meta_type(openapi: Path) -> _GoType:
    try:
        document = load_json(openapi)  # shared with the OpenAPI reader: parsed once
    except (OSError, ValueError) as error:
        raise SetupError(f"cannot read the OpenAPI document {openapi}: {error}") from None
    defs = document.get("components", {}).get("schemas") or document.get("definitions") or {}
    name = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    if name not in defs:
        raise SetupError(f"the OpenAPI document {openapi} has no {name}")
    out = _go_type(defs[name], defs)
    out.name, out.struct = "v1.ObjectMeta", "ObjectMeta"
    return out


def make_crd_set(crd_paths: list[Path], openapi: Path) -> CrdSet:
    crds: dict[tuple[str, str], CrdInfo] = {}
    for path in crd_paths:
        for info in load_crd(path):
            crds.setdefault((info.group, info.kind), info)
    return CrdSet(crds, _object_meta_type(openapi))


@cache
def trainer_crds(version: str = DEFAULT_TRAINER_VERSION) -> CrdSet:
    """The Trainer CRDs of ``version`` from the upstream cache (compiled once per process)."""
    artifacts = upstream(version)
    crds = make_crd_set([artifacts.crd_path(p) for p in TRAINER_PLURALS], artifacts.openapi_path)
    return replace(crds, trainer_version=version)


def schema_has(schema: Schema, path: JsonPath) -> bool:
    """Whether ``path`` (keys and list indexes) is a field of ``schema``."""
    node: Schema | None = schema
    for part in path:
        if node is None:
            return False
        node = node.items if isinstance(part, int) else node.child(part)
    return node is not None


def unknown_field_hint(path: JsonPath, kind: str, crds: CrdSet) -> str | None:
    """For a field the emulated release's schema lacks but another emulated release's
    has: ``spec.x is not in Trainer v2.2.0's TrainJob schema (v2.3.0 has it)``."""
    version = crds.trainer_version
    if version is None:
        return None
    crd = next((c for (_, k), c in crds.crds.items() if k == kind), None)
    if crd is None:
        return None
    others = [
        other
        for other in TRAINER_VERSIONS
        if other != version
        and (found := trainer_crds(other).by_group_kind(crd.group, kind)) is not None
        and schema_has(found.schema, path)
    ]
    if not others:
        return None
    has = ", ".join(others) + (" has it" if len(others) == 1 else " have it")
    return f"{format_path(path)} is not in Trainer {version}'s {kind} schema; {has}"


def crds_with_schemas_from(directory: Path, version: str = DEFAULT_TRAINER_VERSION) -> CrdSet:
    """The pinned Trainer CRDs, replaced kind by kind by the CRDs found in ``directory``.

    For ``--schemas DIR``: CRDs exported from a cluster (``kubectl get crd NAME -o yaml``),
    one per file; files that hold no CustomResourceDefinition are an error, so a wrong
    directory is noticed.
    """
    if not directory.is_dir():
        raise SetupError(f"--schemas: {directory} is not a directory")
    paths = sorted(p for p in directory.rglob("*") if p.suffix in (".yaml", ".yml", ".json"))
    if not paths:
        raise SetupError(f"--schemas: no CRD files (*.yaml, *.yml, *.json) in {directory}")
    pinned = trainer_crds(version)
    crds = dict(pinned.crds)
    for path in paths:
        document = _crd_document(path)
        if not isinstance(document, dict) or document.get("kind") != "CustomResourceDefinition":
            raise SetupError(f"--schemas: {path} is not a CustomResourceDefinition")
        for info in load_crd(path):
            crds[(info.group, info.kind)] = info
    return CrdSet(crds, pinned.object_meta)


def admit(
    obj: dict[str, Any], crd: CrdInfo, crds: CrdSet, keep_nulls: bool = False
) -> list[FieldError]:
    """The API server's create path before CEL, in place on ``obj``; the problems found.

    ``obj`` must have a string ``apiVersion`` and ``kind`` (the caller checked them).
    ``keep_nulls``: validate an object a mutating webhook patched (:func:`admit_schema`).
    """
    meta = obj.get("metadata")
    decoder = _MetaDecode()
    if "metadata" in obj:
        decoded = decoder.decode(meta, crds.object_meta, ("metadata",), "", ())
        if decoder.error is not None:
            version = json.dumps(crd.version)
            detail = f"{crd.kind} in version {version} cannot be handled as a {crd.kind}: "
            detail += decoder.error
            return [FieldError.at(decoder.error_path, None, detail)]
        obj["metadata"] = {k: v for k, v in (decoded or {}).items() if not _empty(v)}
    problems = [
        FieldError.at(p, format_path(p), f'unknown field "{format_path(p)}"')
        for p in decoder.unknown
    ]
    found = admit_schema(obj, crd.schema, keep_nulls)
    if crd.status_subresource and "status" in obj:
        del obj["status"]
        found = [e for e in found if e.unknown or not e.path or e.path[0] != "status"]
    problems.extend(found)
    problems.extend(validate_object_meta(obj.get("metadata") or {}, crd.namespaced))
    return _strict_decoding(problems, crd)


def _strict_decoding(problems: list[FieldError], crd: CrdInfo) -> list[FieldError]:
    """With strict field validation the API server refuses unknown fields in one message
    that lists them all; the first unknown field's error carries it word for word::

        TrainJob in version "v1alpha1" cannot be handled as a TrainJob: strict decoding
        error: unknown field "spec.a", unknown field "spec.b"
    """
    unknown = [e for e in problems if e.unknown]
    if not unknown:
        return problems
    listed = ", ".join(e.message for e in unknown)
    first = unknown[0]
    whole = FieldError.at(
        first.path,
        first.field,
        f"{crd.kind} in version {json.dumps(crd.version)} cannot be handled as a "
        f"{crd.kind}: strict decoding error: {listed}",
    )
    return [whole if e is first else e for e in problems]
