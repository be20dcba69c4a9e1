"""A CRD's CEL rules (``x-kubernetes-validations``), evaluated the API server's way.

After the OpenAPI schema check the API server (apiextensions-apiserver,
``pkg/apiserver/schema/cel``) runs every rule of every schema node that has a value in
the object: ``self`` is the node's value (once per array item, once per map value),
``oldSelf`` its old value. :func:`check_rules` does the same on one object::

    >>> from compiler.apiserver.crds import trainer_crds
    >>> crd = trainer_crds().get("trainer.kubeflow.org/v1alpha1", "TrainJob")
    >>> job = {"apiVersion": crd.api_version, "kind": "TrainJob",
    ...        "metadata": {"name": "job", "namespace": "default"},
    ...        "spec": {"runtimeRef": {"name": "torch"}, "managedBy": "me"}}
    >>> [str(e) for e in check_rules(job, crd)]  # doctest: +NORMALIZE_WHITESPACE
    ['spec.managedBy: Invalid value: "string": ManagedBy must be
      trainer.kubeflow.org/trainjob-controller or kueue.x-k8s.io/multikueue if set']
    >>> [str(e) for e in check_rules(job, crd, kubernetes=(1, 35))]  # doctest: +NORMALIZE_WHITESPACE
    ['spec.managedBy: Invalid value: "me": ManagedBy must be
      trainer.kubeflow.org/trainjob-controller or kueue.x-k8s.io/multikueue if set']

What is reproduced:

* which errors of the schema step stop CEL: a ``Required``, ``Unsupported value``,
  ``Too long``, ``Too many`` or type error does, and is answered with one error at the
  root, ``some validation rules were not checked because the object was invalid``;
  other schema errors (a pattern, a minimum, a duplicate, a bad name) do not
  (``hasBlockingErr`` in ``pkg/registry/customresource/strategy.go``);
* transition rules (those that reference ``oldSelf``) run only on update and only where
  an old value correlates: properties and map values by key, ``x-kubernetes-list-type:
  map`` items by their map keys, never ``set``/``atomic`` items; on update a failing rule
  without ``oldSelf`` whose value did not change is ratcheted (a warning, not an error);
* the value of ``self``: the root and embedded resources show ``apiVersion``, ``kind``
  and of the metadata only ``name`` and ``generateName``; properties are renamed as the
  API server escapes them (``a-b`` is ``a__dash__b``, ...); null properties are absent;
  ``number`` values are doubles; ``format: byte`` strings are bytes; a node that is
  itself a ``date-time``/``date`` string is a timestamp, a ``duration`` a duration;
  lists of type ``map``/``set`` compare equal whatever their order (the lists are
  sorted before binding when the rule compares values and does not look at positions);
* the error: the node's field path (``<nil>`` in Go's print of the root: here ``""``),
  ``fieldPath`` appended, ``reason``, ``messageExpression`` (when it fails, the message),
  ``message`` or ``failed rule: <rule>``; the bad value shown: up to Kubernetes 1.34 the
  node's schema type (``"object"``, ``"string"``), since 1.35 a scalar's value and nothing
  for objects and arrays (the version is the ``kubernetes`` argument); runtime errors read ``<error> evaluating rule: <rule>`` with the
  node's type as the value, and an exhausted evaluation budget stops the remaining
  rules of the object.

Rules come from the CRD at run time (the compiled structural schema carries them);
each is compiled once per process, and a rule that does not compile is a
:class:`~compiler.errors.SetupError` naming the CRD and the schema path.

Rules run on the engine with the Kubernetes CEL libraries (:mod:`compiler.apiserver.cel.k8s`:
``quantity``, ``isURL``/``url``, ``ip``/``cidr``, ``isSorted``, ``semver``, ``format``,
regex ``find``...), as the API server's CRD environment has them; a CRD given with
``--schemas`` may use them (``tests/live/test_crd_rules_live.py`` compares such rules with
the API server's answers).

Known gaps, all from the engine (see :mod:`compiler.apiserver.cel.engine`): timestamps
and durations nested below ``self`` stay strings; the API server's cost budgets (and
its refusal of a CRD whose estimated rule cost is too high) are replaced by the
engine's iteration budget; a rule that both compares ``map``/``set`` lists and looks at
positions sees them in input order, so its comparison is order-sensitive. None affects
the Trainer rules.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from functools import cache
from typing import Any

from compiler.apiserver.cel.engine import (
    DURATION,
    DYN,
    TIMESTAMP,
    CelBudgetExceeded,
    CelCompileError,
    CelEvalError,
    Engine,
    Program,
    VarType,
)
from compiler.apiserver.cel.k8s import k8s_engine
from compiler.apiserver.crds import DEFAULT_KUBERNETES
from compiler.apiserver.structural import Schema, go_value
from compiler.errors import FieldError, JsonPath, SetupError
from compiler.kube.gotext import go_quote

__all__ = ["NOT_CHECKED", "RuleSite", "blocks_rules", "check_rules", "rule_sites"]

NOT_CHECKED = (
    "some validation rules were not checked because the object was invalid;"
    " correct the existing errors to complete validation"
)
_MAX_MESSAGE_BYTES = 5 * 1024
_RESERVED = frozenset(
    (
        *("true", "false", "null", "in", "as", "break", "const", "continue", "else"),
        *("for", "function", "if", "import", "let", "loop", "package", "namespace"),
        *("return", "var", "void", "while"),
    )
)
_MISSING: Any = object()


# --- which schema errors stop CEL ------------------------------------------------------

_BLOCKING_PREFIXES = ("Required value", "Unsupported value", "Too long", "Too many")
_TYPE_ERROR = re.compile(r" in body must be of type [^:]*: ")


def blocks_rules(error: FieldError) -> bool:
    """Does this schema-step error keep the API server from running the CEL rules?

    Those of type Required, NotSupported, TooLong, TooMany and TypeInvalid do (type and
    format mismatches are TypeInvalid); an unknown (pruned) field does not.
    """
    detail = error.message
    if detail.startswith(_BLOCKING_PREFIXES):
        return True
    return detail.startswith("Invalid value: ") and _TYPE_ERROR.search(detail) is not None


def _undecodable(error: FieldError) -> bool:
    """The object could not be decoded at all: the API server never validates it."""
    return error.field is None and " cannot be handled as a " in error.message


# --- compiled rules ----------------------------------------------------------------------


@dataclass(frozen=True)
class RuleSite:
    """One rule of a CRD, where it is: ``<root>``, ``.spec.x``, ``[*]`` items, ``{*}`` values."""

    schema_path: str
    rule: str
    message: str
    transition: bool


@dataclass(frozen=True, slots=True)
class _Rule:
    site: RuleSite
    program: Program
    message_program: Program | None
    default_message: str  # message, or "failed rule: <rule>"
    error_name: str  # how Go names the rule in error texts: the message, else the rule
    reason: str | None
    field_path: tuple[str, JsonPath] | None  # normalized fieldPath text, its JSON path
    uses_old_self: bool
    canonical: bool  # bind map/set lists sorted (the rule compares, never indexes)


class _Node:
    """A schema node that has rules itself or below it (nodes without are left out)."""

    __slots__ = (
        "additional",
        "all_of",
        "creates",
        "items",
        "properties",
        "root",
        "rules",
        "schema",
        "self_fields",
        "self_type",
        "type_name",
    )

    def __init__(self, schema: Schema, root: bool) -> None:
        self.schema = schema
        self.root = root
        self.rules: tuple[_Rule, ...] = ()
        self.properties: dict[str, _Node] = {}
        self.items: _Node | None = None
        self.additional: _Node | None = None
        self.all_of: tuple[_Node, ...] = ()
        self.creates = False  # a rule without oldSelf here or below: walked on create
        self.type_name = _type_name(schema)
        self.self_type = _self_type(schema)
        # the only fields of ``self`` the rules read (None: they may read it whole)
        self.self_fields: frozenset[str] | None = None


def _type_name(s: Schema) -> str:
    """The schema's ``type`` as Go's structural schema holds it (``""`` for int-or-string)."""
    if s.int_or_string or len(s.types) != 1:
        return ""
    return s.types[0]


def _self_type(s: Schema) -> VarType:
    if _type_name(s) == "string" and s.format in ("date-time", "date"):
        return TIMESTAMP
    if _type_name(s) == "string" and s.format == "duration":
        return DURATION
    return DYN


# Order-sensitive constructs: an index or slice, or a function that depends on positions.
_ORDERED = re.compile(
    r"[\w)\]]\s*\[|\.\s*(indexOf|lastIndexOf|isSorted|join|slice|first|last|sort|sortBy|"
    r"map|filter|transformList|format)\s*\(|\bstring\s*\("
)
_COMPARES = re.compile(r"==|!=|\bin\b|\bsets\.")
_STRING_LITERAL = re.compile(
    r"""[rRbB]*('''.*?'''|\"\"\".*?\"\"\"|'(\\.|[^'\\])*'|"(\\.|[^"\\])*")""", re.S
)


def _canonical(source: str) -> bool:
    """Bind map/set lists sorted? Only when the rule compares values and never looks at order.

    Kubernetes compares ``map``/``set`` lists without regard to order but keeps the order
    for indexing and iteration; the engine compares lists in order. Sorting reproduces the
    equality and is harmless for order-free uses (``size``, ``exists``, ``all``, ``in``).
    """
    code = _STRING_LITERAL.sub("''", source)
    return bool(_COMPARES.search(code)) and not _ORDERED.search(code)


_SELF = re.compile(r"\bself\b")
_SELF_FIELD = re.compile(r"\s*\.\s*([A-Za-z_][A-Za-z0-9_]*)\b(?!\s*\()")


def _self_fields(source: str) -> frozenset[str] | None:
    """The fields a rule reads from ``self`` when it only ever selects fields of it.

    Binding ``self`` with just those fields gives the same result and spares converting
    the whole object (a root rule that checks ``metadata.name`` would otherwise convert
    the entire resource). Any other use of ``self`` (compared, passed, iterated, indexed,
    a method called on it, an escaped field name) answers None: bind it whole.

        >>> sorted(_self_fields("self.metadata.name.matches('^a') && has(self.spec)"))
        ['metadata', 'spec']
        >>> _self_fields("self == oldSelf"), _self_fields("self.all(k, k != 'x')")
        (None, None)
    """
    code = _STRING_LITERAL.sub("''", source)
    fields = set()
    for match in _SELF.finditer(code):
        selected = _SELF_FIELD.match(code, match.end())
        if selected is None or "__" in selected[1]:
            return None
        fields.add(selected[1])
    return frozenset(fields)


# compiled programs by CRD (group, plural, version), schema path, expression, type of self
_PROGRAMS: dict[tuple[str, str, str, str, str, VarType], Program] = {}
_TREES: dict[int, tuple[Schema, _Node | None]] = {}
_LOCK = threading.RLock()


def _crd_name(group: str, plural: str, version: str) -> str:
    return f"{plural}.{group} (version {version})"


def _compile(
    engine: Engine,
    crd: tuple[str, str, str],
    schema_path: str,
    source: str,
    variables: Mapping[str, VarType],
    what: str = "rule",
) -> Program:
    key = (*crd, schema_path, f"{what}\0{source}", variables["self"])
    program = _PROGRAMS.get(key)
    if program is None:
        try:
            program = engine.compile(source, variables)
        except CelCompileError as error:
            raise SetupError(
                f"the CRD {_crd_name(*crd)} has an x-kubernetes-validations {what} at"
                f" {schema_path} that trainc cannot compile: {source!r}\n{error}"
            ) from None
        _PROGRAMS[key] = program
    return program


def _build_rule(
    engine: Engine, crd: tuple[str, str, str], schema: Schema, path: str, raw: Mapping[str, Any]
) -> _Rule | None:
    source = str(raw.get("rule") or "")
    if not source.strip():
        return None  # an empty rule is skipped
    self_type = _self_type(schema)
    program = _compile(engine, crd, path, source, {"self": self_type, "oldSelf": self_type})
    if program.result_type not in ("bool", "dyn"):
        raise SetupError(
            f"the CRD {_crd_name(*crd)} has an x-kubernetes-validations rule at {path} that"
            f" does not evaluate to a bool: {source!r}"
        )
    message = str(raw.get("message") or "").strip()
    message_program = None
    expression = str(raw.get("messageExpression") or "")
    if expression:
        message_program = _compile(
            engine,
            crd,
            path,
            expression,
            {"self": self_type, "oldSelf": self_type},
            "messageExpression",
        )
    field_path = None
    if raw.get("fieldPath"):
        field_path = _normalize_field_path(str(raw["fieldPath"]), schema)
    reason = raw.get("reason")
    uses_old_self = "oldSelf" in program.variables
    return _Rule(
        site=RuleSite(path, source, message, uses_old_self),
        program=program,
        message_program=message_program,
        default_message=message or f"failed rule: {source.strip()}",
        error_name=message or source.strip(),
        reason=str(reason) if reason else None,
        field_path=field_path,
        uses_old_self=uses_old_self,
        canonical=_canonical(source),
    )


def _build(
    engine: Engine, crd: tuple[str, str, str], s: Schema, path: str, root: bool
) -> _Node | None:
    node = _Node(s, root)
    rules = []
    for raw in s.rules:
        rule = _build_rule(engine, crd, s, path or "<root>", raw)
        if rule is not None:
            rules.append(rule)
    node.rules = tuple(rules)
    if rules:
        read = [_self_fields(rule.site.rule) for rule in rules]
        if all(fields is not None for fields in read):
            node.self_fields = frozenset().union(*(f for f in read if f is not None))
    for name, child in s.properties.items():
        sub = _build(engine, crd, child, f"{path}.{name}", child.embedded)
        if sub is not None:
            node.properties[name] = sub
    if s.items is not None:
        node.items = _build(engine, crd, s.items, f"{path}[*]", s.items.embedded)
    if s.additional is not None:
        node.additional = _build(engine, crd, s.additional, f"{path}{{*}}", s.additional.embedded)
    all_of = [_build(engine, crd, branch, path, root) for branch in s.all_of]
    node.all_of = tuple(n for n in all_of if n is not None)
    children = [*node.properties.values(), node.items, node.additional, *node.all_of]
    present = [c for c in children if c is not None]
    if not node.rules and not present:
        return None
    node.creates = any(not r.uses_old_self for r in node.rules) or any(c.creates for c in present)
    return node


def _tree(crd: Any, engine: Engine) -> _Node | None:
    schema: Schema = crd.schema
    with _LOCK:
        cached = _TREES.get(id(schema))
        if cached is not None and cached[0] is schema:
            return cached[1]
        key = (crd.group, crd.plural, crd.version)
        tree = _build(engine, key, schema, "", True)
        _TREES[id(schema)] = (schema, tree)
        return tree


def rule_sites(crd: Any, engine: Engine | None = None) -> list[RuleSite]:
    """Every rule of ``crd`` (a :class:`~compiler.apiserver.crds.CrdInfo`), compiled."""
    out: list[RuleSite] = []

    def walk(node: _Node | None) -> None:
        if node is None:
            return
        out.extend(r.site for r in node.rules)
        for child in (*node.properties.values(), node.items, node.additional, *node.all_of):
            walk(child)

    walk(_tree(crd, engine or k8s_engine()))
    return out


# --- fieldPath -----------------------------------------------------------------------------

_FIELD_TOKEN = re.compile(r"\.([^.\[\]]+)|\['((?:\\.|[^'\\])*)'\]")
_UNESCAPE = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}


def _normalize_field_path(text: str, schema: Schema) -> tuple[str, JsonPath] | None:
    """A rule's ``fieldPath`` (``.a['b.c'].d``) as field path text and JSON path (None: invalid)."""
    position = 0
    rendered = ""
    path: list[str] = []
    s: Schema | None = schema
    while position < len(text):
        match = _FIELD_TOKEN.match(text, position)
        if match is None or s is None:
            return None
        position = match.end()
        if match.group(1) is not None:
            name = match.group(1)
        else:
            raw = match.group(2)
            name = ""
            index = 0
            while index < len(raw):
                char = raw[index]
                if char == "\\" and index + 1 < len(raw):
                    nxt = raw[index + 1]
                    if nxt in ("'", "\\"):
                        name += nxt
                    elif nxt in _UNESCAPE:
                        name += _UNESCAPE[nxt]
                    else:
                        return None
                    index += 2
                    continue
                name += char
                index += 1
        if s.properties:
            child = s.properties.get(name)
            if child is None:
                return None
            rendered = f"{rendered}.{name}" if rendered else name
            s = child
        elif s.additional is not None:
            rendered = f"{rendered}[{name}]"
            s = s.additional
        else:
            return None
        path.append(name)
    return rendered, tuple(path)


# --- values as the API server shows them to CEL -------------------------------------------


@cache
def _escape(name: str) -> str | None:
    """The property name CEL sees (None: not accessible by name, keep it as it is)."""
    if not name or name[0].isdigit():
        return None
    if name in _RESERVED:
        return None  # the API server also accepts the keyword as a field name
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) and "__" not in name:
        return None
    out = []
    index = 0
    while index < len(name):
        if name.startswith("__", index):
            out.append("__underscores__")
            index += 2
            continue
        char = name[index]
        if char == ".":
            out.append("__dot__")
        elif char == "-":
            out.append("__dash__")
        elif char == "/":
            out.append("__slash__")
        elif char.isascii() and (char.isalnum() or char == "_"):
            out.append(char)
        else:
            return None
        index += 1
    return "".join(out)


_PLAIN: dict[tuple[int, bool], tuple[Schema, bool]] = {}


def _plain(s: Schema, canonical: bool) -> bool:
    """Is every value of ``s`` already what CEL should see (no conversion needed)?"""
    key = (id(s), canonical)
    cached = _PLAIN.get(key)
    if cached is not None and cached[0] is s:
        return cached[1]
    _PLAIN[key] = (s, True)  # recursion guard (schemas are trees, but be safe)
    result = _compute_plain(s, canonical)
    _PLAIN[key] = (s, result)
    return result


def _compute_plain(s: Schema, canonical: bool) -> bool:
    if s.int_or_string:
        return True
    kind = _type_name(s)
    if kind == "number" or s.embedded:
        return False
    if kind == "string":
        return s.format != "byte"
    if kind == "array":
        if canonical and s.list_type in ("map", "set"):
            return False
        return s.items is None or _plain(s.items, canonical)
    if kind == "object":
        if s.properties:
            for name, child in s.properties.items():
                if child.nullable or _escape(name) is not None or not _plain(child, canonical):
                    return False
            return not s.preserve_unknown
        if s.additional is not None:
            return _plain(s.additional, canonical)
        return not s.preserve_unknown
    return True


_SCALARS = (str, int, float, bool, type(None))


def _order_key(value: Any) -> tuple[str, Any]:
    """A sort key for list items of any JSON type (the order itself does not matter)."""
    cls = type(value)
    if cls in _SCALARS:
        return (cls.__name__, value)
    if cls is list and all(type(v) in _SCALARS for v in value):
        return ("key", tuple((type(v).__name__, v) for v in value))
    return ("~json", json.dumps(value, sort_keys=True, default=repr))


def _convert(value: Any, s: Schema, canonical: bool) -> Any:
    """``value`` (JSON data of schema ``s``) as the API server binds it (see the module doc)."""
    if value is None or _plain(s, canonical):
        return value
    if s.embedded and type(value) is dict:
        return _resource(value, s, canonical)
    kind = _type_name(s)
    cls = type(value)
    if kind == "number":
        return float(value) if cls is int else value
    if kind == "string":
        if s.format == "byte" and cls is str:
            try:
                return base64.b64decode(value, validate=True)
            except (binascii.Error, ValueError):
                return value
        return value
    if kind == "array" and cls is list:
        items = s.items
        out = [_convert(item, items, canonical) for item in value] if items is not None else value
        if canonical and s.list_type == "map" and items is not None:
            names = [_escape(k) or k for k in s.list_map_keys]
            out = sorted(
                out,
                key=lambda item: _order_key(
                    [item.get(k) for k in names] if type(item) is dict else item
                ),
            )
        elif canonical and s.list_type == "set":
            out = sorted(out, key=_order_key)
        return out
    if kind == "object" and cls is dict:
        if s.properties:
            result = {}
            for key, item in value.items():
                child = s.properties.get(key)
                if child is None or item is None:
                    continue  # unknown to the schema, or null: absent for CEL
                result[_escape(key) or key] = _convert(item, child, canonical)
            return result
        if s.additional is not None:
            return {key: _convert(item, s.additional, canonical) for key, item in value.items()}
        return value if s.preserve_unknown else {}
    return value


_TYPE_META = ("apiVersion", "kind")


def _resource(value: dict[str, Any], s: Schema, canonical: bool) -> dict[str, Any]:
    """A resource root: type meta, ``metadata.name``/``generateName`` and the schema's fields."""
    out: dict[str, Any] = {}
    for key, item in value.items():
        if item is None:
            continue
        if key in _TYPE_META:
            out[key] = item
        elif key == "metadata":
            if type(item) is dict:
                out[key] = {k: item[k] for k in ("name", "generateName") if k in item}
            else:
                out[key] = item
        else:
            child = s.properties.get(key)
            if child is not None:
                out[_escape(key) or key] = _convert(item, child, canonical)
    return out


_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})\Z"
)
_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})\Z")
_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h|d|w)")
_DURATION_UNITS = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
    "d": 86400.0,
    "w": 604800.0,
}


def _timestamp(text: str, fmt: str) -> datetime:
    if fmt == "date":
        match = _DATE.match(text)
        if match is None:
            raise ValueError(f"Invalid date formatted string {text}")
        return datetime(int(match[1]), int(match[2]), int(match[3]), tzinfo=UTC)
    match = _RFC3339.match(text)
    if match is None:
        raise ValueError(f"Invalid date-time formatted string {text}")
    micro = int((match[7] or ".0")[1:7].ljust(6, "0"))
    zone = match[8]
    if zone in ("Z", "z"):
        tz = UTC
    else:
        sign = -1 if zone[0] == "-" else 1
        tz = timezone(sign * timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6])))
    year, month, day, hour, minute, second = (int(match[i]) for i in range(1, 7))
    return datetime(year, month, day, hour, minute, second, micro, tzinfo=tz)


def _duration(text: str) -> timedelta:
    body = text.strip()
    sign = -1 if body.startswith("-") else 1
    body = body.lstrip("+-")
    seconds = 0.0
    position = 0
    while position < len(body):
        match = _DURATION_PART.match(body, position)
        if match is None:
            raise ValueError(f"Invalid duration {text}")
        seconds += float(match[1]) * _DURATION_UNITS[match[2]]
        position = match.end()
    if not body:
        raise ValueError(f"Invalid duration {text}")
    return timedelta(seconds=sign * seconds)


def _bind(node: _Node, value: Any, canonical: bool) -> Any:
    """The value of ``self`` at ``node``."""
    s = node.schema
    if node.self_type == TIMESTAMP and type(value) is str:
        return _timestamp(value, s.format)
    if node.self_type == DURATION and type(value) is str:
        return _duration(value)
    if node.root and type(value) is dict:
        return _resource(value, s, canonical)
    return _convert(value, s, canonical)


# --- equality for ratcheting and list-map correlation -------------------------------------


def _same(a: Any, b: Any) -> bool:
    """Go's ``reflect.DeepEqual`` on decoded JSON (``1`` and ``1.0`` differ, so do 1 and true)."""
    if type(a) is not type(b):
        return False
    if type(a) is dict:
        return a.keys() == b.keys() and all(_same(v, b[k]) for k, v in a.items())
    if type(a) is list:
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _map_key(item: Any, keys: Sequence[str]) -> Any:
    if type(item) is not dict:
        return _MISSING
    out = []
    for key in keys:
        if key not in item:
            return _MISSING
        value = item[key]
        if type(value) not in (str, int, float, bool):
            return _MISSING
        out.append((type(value).__name__, value))
    return tuple(out)


def _old_items(s: Schema, old: Any) -> dict[Any, Any]:
    """Old items of a ``map`` list by key (the first of each key); empty for other lists."""
    found: dict[Any, Any] = {}
    if s.list_type != "map" or type(old) is not list:
        return found
    for item in old:
        key = _map_key(item, s.list_map_keys)
        if key is not _MISSING and key not in found:
            found[key] = item
    return found


def _deep_equal(s: Schema | None, new: Any, old: Any) -> bool:
    """Did this value change? (``CorrelatedObject.CachedDeepEqual``: map lists by key)."""
    if s is not None and s.list_type == "map" and type(new) is list and type(old) is list:
        if len(new) != len(old):
            return False
        olds = _old_items(s, old)
        for item in new:
            previous = olds.get(_map_key(item, s.list_map_keys), _MISSING)
            if previous is _MISSING or not _deep_equal(s.items, item, previous):
                return False
        return True
    if s is not None and type(new) is dict and type(old) is dict:
        if new.keys() != old.keys():
            return False
        return all(_deep_equal(s.child(k), v, old[k]) for k, v in new.items())
    return _same(new, old)


# --- the walk ------------------------------------------------------------------------------

_Corr = tuple[Schema | None, Any, Any]  # a correlated node: its schema, new and old value


class _Run:
    __slots__ = ("errors", "kubernetes", "stopped", "update", "warnings")

    def __init__(self, update: bool, kubernetes: tuple[int, int]) -> None:
        self.update = update
        self.kubernetes = kubernetes
        self.errors: list[FieldError] = []
        self.warnings: list[str] = []
        self.stopped = False

    def walk(
        self, node: _Node, value: Any, old: Any, path: JsonPath, text: str, corr: _Corr | None
    ) -> None:
        """Rules at ``node`` and below; ``corr`` is the nearest correlated (schema, new, old)."""
        if value is None or self.stopped:
            return
        if node.rules:
            self.evaluate(node, value, old, path, text, corr)
        for branch in node.all_of:
            if self.stopped:
                return
            self.walk(branch, value, old, path, text, None)
        cls = type(value)
        if cls is dict:
            old_map = old if type(old) is dict else None
            additional = node.additional
            if additional is not None and (self.update or additional.creates):
                for key in value:
                    self.child(additional, value, old_map, key, path, f"{text}[{key}]", corr)
                    if self.stopped:
                        return
            for name, child in node.properties.items():
                if name in value and (self.update or child.creates):
                    sub = f"{text}.{name}" if text else name
                    self.child(child, value, old_map, name, path, sub, corr)
                    if self.stopped:
                        return
        elif cls is list and node.items is not None and (self.update or node.items.creates):
            olds = _old_items(node.schema, old)
            items = node.items
            keys = node.schema.list_map_keys
            for index, item in enumerate(value):
                previous = olds.get(_map_key(item, keys), _MISSING) if olds else _MISSING
                if previous is _MISSING:
                    self.walk(items, item, None, (*path, index), f"{text}[{index}]", corr)
                else:
                    here = (items.schema, item, previous)
                    self.walk(items, item, previous, (*path, index), f"{text}[{index}]", here)
                if self.stopped:
                    return

    def child(
        self,
        node: _Node,
        value: dict[str, Any],
        old: dict[str, Any] | None,
        key: str,
        path: JsonPath,
        text: str,
        corr: _Corr | None,
    ) -> None:
        previous = old.get(key) if old is not None else None
        if old is not None and key in old:
            corr = (node.schema, value[key], previous)
        self.walk(node, value[key], previous, (*path, key), text, corr)

    def evaluate(
        self, node: _Node, value: Any, old: Any, path: JsonPath, text: str, corr: _Corr | None
    ) -> None:
        bound: dict[bool, Any] = {}
        old_bound: dict[bool, Any] = {}
        bind_value, bind_old = value, old  # failures still report the whole values
        fields = node.self_fields
        if fields is not None:
            if type(value) is dict:
                bind_value = {k: v for k, v in value.items() if k in fields}
            if type(old) is dict:
                bind_old = {k: v for k, v in old.items() if k in fields}
        for rule in node.rules:
            if rule.uses_old_self and old is None:
                continue  # transition rules need an old value
            canonical = rule.canonical
            try:
                if canonical not in bound:
                    bound[canonical] = _bind(node, bind_value, canonical)
                bindings = {"self": bound[canonical]}
                if rule.uses_old_self:
                    if canonical not in old_bound:
                        old_bound[canonical] = _bind(node, bind_old, canonical)
                    bindings["oldSelf"] = old_bound[canonical]
                result = rule.program.evaluate(bindings)
            except CelBudgetExceeded:
                detail = (
                    "'operation cancelled: actual cost limit exceeded': no further validation"
                    f" rules will be run due to call cost exceeds limit for rule: {rule.error_name}"
                )
                self.errors.append(self.invalid_type(node, path, text, detail))
                self.stopped = True
                return
            except (CelEvalError, ValueError) as error:
                message = str(error)
                if message.startswith("no such overload"):
                    detail = (
                        f"'{message}': call arguments did not match a supported operator,"
                        f" function or macro signature for rule: {rule.error_name}"
                    )
                else:
                    detail = f"{message} evaluating rule: {rule.error_name}"
                self.errors.append(self.invalid_type(node, path, text, detail))
                continue
            if result is True:
                continue
            self.fail(node, rule, value, old, path, text, corr)
            if self.stopped:
                return

    @staticmethod
    def invalid_type(node: _Node, path: JsonPath, text: str, detail: str) -> FieldError:
        return FieldError.at(path, text, f"Invalid value: {go_quote(node.type_name)}: {detail}")

    def fail(
        self,
        node: _Node,
        rule: _Rule,
        value: Any,
        old: Any,
        path: JsonPath,
        text: str,
        corr: _Corr | None,
    ) -> None:
        if rule.field_path is not None:
            suffix, extra = rule.field_path
            text = f"{text}.{suffix}" if text else suffix
            path = (*path, *extra)
        detail = rule.default_message
        if rule.message_program is not None:
            try:
                evaluated = rule.message_program.evaluate(
                    self.message_bindings(node, rule, value, old)
                )
            except CelBudgetExceeded:
                source = json.dumps(rule.message_program.source)
                message = (
                    "no further validation rules will be run due to call cost exceeds limit"
                    f" for messageExpression: {source}"
                )
                body = f"Invalid value: {go_quote(node.type_name)}: {message}"
                self.add(FieldError.at(path, text, body), rule, corr)
                self.stopped = True
                return
            except (CelEvalError, ValueError):
                evaluated = None  # the API server then falls back to the message
            if type(evaluated) is str:
                trimmed = evaluated.strip()
                if trimmed and "\n" not in trimmed and len(trimmed.encode()) <= _MAX_MESSAGE_BYTES:
                    detail = trimmed
        reason = rule.reason
        if reason == "FieldValueForbidden":
            body = f"Forbidden: {detail}"
        elif reason == "FieldValueRequired":
            body = f"Required value: {detail}"
        else:
            # What the error shows as the bad value changed in Kubernetes 1.35: before, the
            # schema type ("object", "string"); since, a scalar's value, and no value for
            # an object or a list.
            if self.kubernetes < (1, 35):
                shown: str | None = go_quote(node.type_name)
            elif node.type_name in ("object", "array"):
                shown = None
            else:
                shown = go_value(value)
            kind = "Duplicate value" if reason == "FieldValueDuplicate" else "Invalid value"
            body = kind if shown is None else f"{kind}: {shown}"
            if reason != "FieldValueDuplicate":
                body = f"{body}: {detail}"
        self.add(FieldError.at(path, text, body), rule, corr)

    @staticmethod
    def message_bindings(node: _Node, rule: _Rule, value: Any, old: Any) -> dict[str, Any]:
        """What a messageExpression sees: the rule's ``self`` (and ``oldSelf`` on update)."""
        program = rule.message_program
        assert program is not None
        canonical = _canonical(program.source)
        bindings = {"self": _bind(node, value, canonical)}
        if old is not None and "oldSelf" in program.variables:
            bindings["oldSelf"] = _bind(node, old, canonical)
        return bindings

    def add(self, error: FieldError, rule: _Rule, corr: _Corr | None) -> None:
        # on update, a failure of a rule without oldSelf where nothing changed is ratcheted
        if self.update and not rule.uses_old_self and corr is not None and _deep_equal(*corr):
            self.warnings.append(str(error))
        else:
            self.errors.append(error)


def check_rules(
    obj: dict[str, Any],
    crd: Any,
    found: Iterable[FieldError] = (),
    old: dict[str, Any] | None = None,
    warnings: list[str] | None = None,
    engine: Engine | None = None,
    kubernetes: tuple[int, int] = DEFAULT_KUBERNETES,
) -> list[FieldError]:
    """The CEL errors of ``obj``, an object of ``crd`` that went through the schema step,
    as an API server of Kubernetes ``kubernetes`` (major, minor) words them.

    ``found`` are the errors of the schema step: when one of them blocks CEL (see
    :func:`blocks_rules`) the answer is the single "not checked" error, as the API
    server's. ``old`` is the object before an update (None for a create). Ratcheted
    failures are appended to ``warnings`` when given. Root errors have the field ``""``
    and the JSON path ``()``.
    """
    found = list(found)
    if any(_undecodable(error) for error in found):
        return []
    if any(blocks_rules(error) for error in found):
        return [FieldError.at((), "", f"Invalid value: null: {NOT_CHECKED}")]
    tree = _tree(crd, engine or k8s_engine())
    if tree is None:
        return []
    update = old is not None
    if not (update or tree.creates):
        return []
    run = _Run(update, kubernetes)
    run.walk(tree, obj, old, (), "", (tree.schema, obj, old) if update else None)
    if warnings is not None:
        warnings.extend(run.warnings)
    return run.errors
