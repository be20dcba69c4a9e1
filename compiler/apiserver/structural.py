"""A CRD's ``openAPIV3Schema`` compiled once, then applied to objects the API server's way.

On create the API server (apiextensions-apiserver + kube-openapi, k8s 1.36) does, before
any CEL rule: prune unknown fields (reported by strict field validation as
``unknown field "spec.x"``), drop ``null`` values of non-nullable fields that have no
default, apply ``default:`` values top-down (only where the parent object exists,
including inside array items and ``additionalProperties`` values, and into the
defaults just inserted), then validate the defaulted object against the schema.
:func:`admit_schema` does all four in one walk, which gives the same result because
each node's outcome depends only on its own subtree::

    >>> s = compile_schema({"type": "object", "properties": {"spec": {"type": "object",
    ...     "properties": {"n": {"type": "integer", "format": "int32"},
    ...                    "k": {"type": "string", "default": "ClusterTrainingRuntime"}}}}})
    >>> obj = {"spec": {"n": "2", "x": 1}}
    >>> [str(e) for e in admit_schema(obj, s)]  # doctest: +NORMALIZE_WHITESPACE
    ['spec.x: unknown field "spec.x"',
     'spec.n: Invalid value: "string": spec.n in body must be of type integer: "string"']
    >>> obj
    {'spec': {'n': '2', 'k': 'ClusterTrainingRuntime'}}

Messages and field paths are the API server's, including its oddities (an ``anyOf``
mismatch is reported at ``<nil>``, a type error shows the *type name* as the value).

The schema is compiled into :class:`Schema` nodes with everything precomputed (child
lookups, defaults, compiled patterns, which checks apply), so the per-object work is
a plain recursive walk. Nothing about Trainer is written here: every rule comes from
the CRD document at run time.
"""

from __future__ import annotations

import base64
import binascii
import copy
import math
import re
from collections.abc import Mapping
from datetime import date
from decimal import Decimal
from typing import Any

from compiler.apiserver.manifest import format_path
from compiler.errors import FieldError, JsonPath
from compiler.kube.gotext import go_float, go_json, go_quote

__all__ = [
    "FieldError",
    "Schema",
    "admit_schema",
    "compile_schema",
    "go_json",
    "go_quote",
    "go_value",
]

_MISSING: Any = object()


def go_value(value: Any) -> str:
    """A bad value as ``field.Error`` prints it: strings quoted, numbers bare, others JSON."""
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, float):
        return go_float(value)
    return go_json(value)  # null, true, false and integers as they are


# --- errors ---------------------------------------------------------------------------


def _invalid(path: JsonPath, value: Any, detail: str, field: str | None = None) -> FieldError:
    text = field if field is not None else (format_path(path) or "<nil>")
    return FieldError.at(path, text, f"Invalid value: {go_value(value)}: {detail}")


def _loose(path: JsonPath, message: str) -> FieldError:
    """A kube-openapi error that is not a ``Validation``: field ``<nil>``, value ``""``."""
    return FieldError.at(path, "<nil>", f'Invalid value: "": {message}')


# --- compiled schema ------------------------------------------------------------------

_SUPPORTED_STRING_FORMATS = frozenset(
    (
        *("bsonobjectid", "uri", "email", "hostname", "ipv4", "ipv6", "cidr", "mac"),
        *("uuid", "uuid3", "uuid4", "uuid5", "isbn", "isbn10", "isbn13", "creditcard", "ssn"),
        *("hexcolor", "rgbcolor", "byte", "password", "date", "duration", "datetime"),
        *("k8sshortname", "k8slongname"),
    )
)


def _strip_format(types: tuple[str, ...], fmt: str) -> str:
    """The API server drops formats it does not support (per type) before validating."""
    if not fmt:
        return ""
    kind = types[0] if len(types) == 1 else ""
    if kind in ("", "string"):
        return fmt if fmt.replace("-", "") in _SUPPORTED_STRING_FORMATS else ""
    if kind == "integer":
        return fmt if fmt in ("int32", "int64") else ""
    if kind == "number":
        return fmt if fmt in ("float", "double") else ""
    return ""


def _go_regexp(pattern: str) -> re.Pattern[str]:
    """Compile an RE2 pattern with Python's ``re`` (the CRD patterns use the common subset)."""
    return re.compile(pattern.replace("\\z", "\\Z"))


class Schema:
    """One compiled schema node. Build with :func:`compile_schema`."""

    __slots__ = (
        "additional",
        "additional_allowed",
        "all_of",
        "any_of",
        "check_number",
        "check_string",
        "default",
        "defaults",
        "embedded",
        "enum",
        "exclusive_maximum",
        "exclusive_minimum",
        "fast",
        "fast_int32",
        "fast_required",
        "fast_str",
        "format",
        "has_default",
        "int_or_string",
        "items",
        "list_map_keys",
        "list_type",
        "max_items",
        "max_length",
        "max_properties",
        "maximum",
        "min_items",
        "min_length",
        "min_properties",
        "minimum",
        "multiple_of",
        "not_",
        "nullable",
        "number_format",
        "number_type",
        "one_of",
        "pattern",
        "pattern_text",
        "preserve_unknown",
        "properties",
        "required",
        "rules",
        "type_text",
        "types",
        "unique_items",
    )

    types: tuple[str, ...]
    type_text: str
    nullable: bool
    format: str
    number_type: str
    number_format: str
    int_or_string: bool
    properties: dict[str, Schema]
    additional: Schema | None
    additional_allowed: bool | None
    items: Schema | None
    required: tuple[str, ...]
    enum: tuple[Any, ...] | None
    pattern: re.Pattern[str] | None
    pattern_text: str
    max_length: int | None
    min_length: int | None
    max_items: int | None
    min_items: int | None
    max_properties: int | None
    min_properties: int | None
    maximum: float | None
    minimum: float | None
    exclusive_maximum: bool
    exclusive_minimum: bool
    multiple_of: float | None
    unique_items: bool
    has_default: bool
    default: Any
    defaults: tuple[tuple[str, Any, bool], ...]
    preserve_unknown: bool
    embedded: bool
    any_of: tuple[Schema, ...]
    all_of: tuple[Schema, ...]
    one_of: tuple[Schema, ...]
    not_: Schema | None
    list_type: str | None
    list_map_keys: tuple[str, ...]
    rules: tuple[Mapping[str, Any], ...]  # x-kubernetes-validations, as written
    check_string: bool
    check_number: bool
    fast: frozenset[type]
    fast_int32: bool
    fast_str: bool
    fast_required: bool

    def child(self, key: str) -> Schema | None:
        """The schema of property or map value ``key`` (``None`` if it would be pruned)."""
        found = self.properties.get(key)
        return found if found is not None else self.additional


def _opt_int(raw: Mapping[str, Any], key: str) -> int | None:
    value = raw.get(key)
    return int(value) if value is not None else None


def _opt_float(raw: Mapping[str, Any], key: str) -> float | None:
    value = raw.get(key)
    return float(value) if value is not None else None


def compile_schema(raw: Mapping[str, Any]) -> Schema:
    """Compile a structural ``openAPIV3Schema`` (a CRD version's schema) into :class:`Schema`."""
    s = Schema()
    int_or_string = bool(raw.get("x-kubernetes-int-or-string"))
    declared = raw.get("type")
    types: tuple[str, ...] = (
        ("integer", "string") if int_or_string else ((declared,) if declared else ())
    )
    s.types = types
    s.type_text = ",".join(types)
    s.int_or_string = int_or_string
    s.nullable = bool(raw.get("nullable"))
    s.format = _strip_format(types, str(raw.get("format") or ""))
    s.number_type = types[0] if len(types) == 1 and types[0] in ("integer", "number") else ""
    # the number validator keeps only the formats that fit the type (int32, int64, float, double)
    s.number_format = s.format if s.number_type else ""
    s.properties = {
        name: compile_schema(sub) for name, sub in (raw.get("properties") or {}).items()
    }
    additional = raw.get("additionalProperties")
    s.additional = None
    s.additional_allowed = None
    if isinstance(additional, Mapping):
        s.additional = compile_schema(additional)
    elif isinstance(additional, bool):
        s.additional_allowed = additional
    items = raw.get("items")
    s.items = compile_schema(items) if isinstance(items, Mapping) else None
    s.required = tuple(raw.get("required") or ())
    enum = raw.get("enum")
    s.enum = tuple(enum) if enum is not None else None
    pattern = raw.get("pattern")
    s.pattern_text = str(pattern) if pattern else ""
    s.pattern = _go_regexp(s.pattern_text) if pattern else None
    s.max_length = _opt_int(raw, "maxLength")
    s.min_length = _opt_int(raw, "minLength")
    s.max_items = _opt_int(raw, "maxItems")
    s.min_items = _opt_int(raw, "minItems")
    s.max_properties = _opt_int(raw, "maxProperties")
    s.min_properties = _opt_int(raw, "minProperties")
    s.maximum = _opt_float(raw, "maximum")
    s.minimum = _opt_float(raw, "minimum")
    s.exclusive_maximum = bool(raw.get("exclusiveMaximum"))
    s.exclusive_minimum = bool(raw.get("exclusiveMinimum"))
    s.multiple_of = _opt_float(raw, "multipleOf")
    s.unique_items = bool(raw.get("uniqueItems"))
    s.has_default = "default" in raw and raw["default"] is not None
    s.default = raw.get("default")
    s.defaults = tuple(
        (name, sub.default, sub.nullable) for name, sub in s.properties.items() if sub.has_default
    )
    s.preserve_unknown = bool(raw.get("x-kubernetes-preserve-unknown-fields"))
    s.embedded = bool(raw.get("x-kubernetes-embedded-resource"))
    s.any_of = tuple(compile_schema(sub) for sub in raw.get("anyOf") or ())
    s.all_of = tuple(compile_schema(sub) for sub in raw.get("allOf") or ())
    s.one_of = tuple(compile_schema(sub) for sub in raw.get("oneOf") or ())
    s.not_ = compile_schema(raw["not"]) if isinstance(raw.get("not"), Mapping) else None
    s.list_type = raw.get("x-kubernetes-list-type")
    s.list_map_keys = tuple(raw.get("x-kubernetes-list-map-keys") or ())
    s.rules = tuple(raw.get("x-kubernetes-validations") or ())
    s.check_string = s.max_length is not None or s.min_length is not None or s.pattern is not None
    s.check_number = bool(
        s.number_type or s.maximum is not None or s.minimum is not None or s.multiple_of is not None
    )
    s.fast = _fast_types(s)
    # int32 integers, strings with length/pattern limits and objects with required fields
    # pass after one cheap check of their own
    s.fast_int32 = s.number_format == "int32" and int in _fast_types(s, int32=False)
    s.fast_str = s.check_string and str in _fast_types(s, strings=False)
    s.fast_required = bool(s.required) and dict in _fast_types(s, required=False)
    return s


def _fast_types(
    s: Schema, int32: bool = True, strings: bool = True, required: bool = True
) -> frozenset[type]:
    """Python types whose values pass every non-recursive check of ``s`` whatever they are.

    The walk skips :func:`_check_node` for them, which is what makes the common case cheap.
    The flags leave one kind of check out (the walk then does that check itself).
    """
    if s.enum is not None or s.all_of or s.one_of or s.not_ is not None:
        return frozenset()
    if s.any_of and not all(_type_only(branch) for branch in s.any_of):
        return frozenset()
    branch_types = {t for branch in s.any_of for t in branch.types}
    fast: set[type] = set()
    for name, cls in (("string", str), ("boolean", bool), ("array", list), ("object", dict)):
        if name not in s.types or (s.any_of and name not in branch_types):
            continue
        if cls is str and ((strings and s.check_string) or s.format):
            continue
        if cls is list and (s.min_items is not None or s.max_items is not None or s.unique_items):
            continue
        if cls is dict and (
            (required and s.required)
            or s.min_properties is not None
            or s.max_properties is not None
            or s.additional_allowed is False
        ):
            continue
        fast.add(cls)
    integer_ok = "integer" in s.types and (not s.any_of or "integer" in branch_types)
    bounded = s.maximum is not None or s.minimum is not None or s.multiple_of is not None
    if integer_ok and not bounded and not (int32 and s.number_format == "int32"):
        fast.add(int)
    return frozenset(fast)


def _type_only(s: Schema) -> bool:
    return (
        len(s.types) == 1
        and not s.format
        and s.enum is None
        and not (s.check_string or s.any_of or s.all_of or s.one_of or s.not_ is not None)
        and s.maximum is None
        and s.minimum is None
        and s.multiple_of is None
    )


# --- kube-openapi value validation -----------------------------------------------------

_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)
_DATE_TIME = re.compile(r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$")
_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})\Z")
_UUID = re.compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$")


def _is_date(text: str) -> bool:
    match = _DATE.match(text)
    if not match:
        return False
    try:
        date(int(match[1]), int(match[2]), int(match[3]))
    except ValueError:
        return False
    return True


def _format_ok(fmt: str, text: str) -> bool:
    """The formats kube-openapi checks; other supported formats are accepted as is."""
    name = fmt.replace("-", "")
    if name == "datetime":
        if len(text) < 4:
            return False
        parts = text.lower().split("t")
        if len(parts) < 2 or not _is_date(parts[0]):
            return False
        match = _DATE_TIME.search(parts[1])
        if match is None:
            return False
        return match[1] <= "23" and match[2] <= "59" and match[3] <= "59"
    if name == "date":
        return _is_date(text)
    if name == "uuid":
        return bool(_UUID.match(text))
    if name == "byte":
        try:
            base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            return False
        return True
    return True


def _type_info(value: Any) -> tuple[str, str]:
    """kube-openapi's (type, format) of a decoded JSON value."""
    cls = type(value)
    if cls is str:
        return "string", ""
    if cls is bool:
        return "boolean", ""
    if cls is int:
        return "integer", "int64"
    if cls is float:
        return "number", "float64"
    if cls is list:
        return "array", ""
    return "object", ""


def _is_json_integer(value: float) -> bool:
    """go-openapi's ``IsFloat64AJSONInteger``: within +-(2**53-1), integral up to 1e-9 relative."""
    if math.isnan(value) or math.isinf(value) or abs(value) > 9007199254740991.0:
        return False
    if value == int(value):
        return True
    if value < 0:
        return False
    whole = float(int(value))
    diff = abs(value - whole)
    if whole == 0:
        return False
    return diff / (value + whole) < 1e-9


def _type_error(s: Schema, value: Any, where: str, path: JsonPath) -> FieldError | None:
    kind, fmt = _type_info(value)
    types = s.types
    is_float_int = kind == "number" and "integer" in types and _is_json_integer(value)
    is_int_float = kind == "integer" and "number" in types
    if (
        kind not in ("string", "array")
        and s.format
        and not (kind in types or fmt == s.format or is_float_int or is_int_float)
    ):
        return _type_invalid(path, where, s.format, fmt)
    if not ("number" in types or "integer" in types) and s.format and kind in ("string", "array"):
        return None
    if not (kind in types or is_float_int or is_int_float):
        return _type_invalid(path, where, s.type_text, kind)
    return None


def _type_invalid(path: JsonPath, where: str, expected: str, got: str) -> FieldError:
    return FieldError.at(
        path,
        where or "<nil>",
        f"Invalid value: {go_quote(got)}: "
        f"{where} in body must be of type {expected}: {go_quote(got)}",
    )


def _range_error(value: Any, type_name: str, fmt: str, prefix: str, where: str) -> str | None:
    """kube-openapi's ``IsValueValidAgainstRange`` (the value printed with ``'f'``, then parsed)."""
    number: int | None
    if type(value) is float:
        number = int(Decimal(repr(value))) if value.is_integer() else None
    else:
        number = int(value)
    bad = False
    if type_name == "integer":
        low, high = _INT32 if fmt == "int32" else _INT64
        bad = number is None or not (low <= number <= high)
    elif fmt in ("float", "float32") and abs(float(value)) > 3.4028234663852886e38:
        bad = True
    if not bad:
        return None
    if fmt:
        return f"{prefix} value must be of type {type_name} with format {fmt} in {where}"
    return f"{prefix} value must be of type {type_name or 'number'} (default format) in {where}"


def _num_text(bound: float, as_int: bool) -> str:
    return str(int(bound)) if as_int else go_float(bound)


def _number_errors(
    s: Schema, value: Any, where: str, path: JsonPath, out: list[FieldError]
) -> None:
    checked = _range_error(value, s.number_type, s.number_format, "Checked", where)
    if checked:
        out.append(_loose(path, checked))
    is_int = type(value) is int
    if s.multiple_of is not None:
        factor = s.multiple_of
        if is_int and factor >= 1:
            bad = factor <= 0 or value % int(factor) != 0
            shown = str(int(factor))
        else:
            mult = (1 / factor * value) if factor < 1 else value / factor
            bad = factor <= 0 or not float(mult).is_integer()
            shown = go_float(factor)
        if bad:
            out.append(_invalid(path, value, f"{where} in body should be a multiple of {shown}"))
    if s.minimum is not None:
        low = s.minimum
        if is_int:
            below = value <= int(low) if s.exclusive_minimum else value < int(low)
        else:
            below = value <= low if s.exclusive_minimum else value < low
        if below:
            word = "greater than" if s.exclusive_minimum else "greater than or equal to"
            out.append(
                _invalid(path, value, f"{where} in body should be {word} {_num_text(low, is_int)}")
            )
    if s.maximum is not None:
        high = s.maximum
        if is_int:
            above = value >= int(high) if s.exclusive_maximum else value > int(high)
        else:
            above = value >= high if s.exclusive_maximum else value > high
        if above:
            word = "less than" if s.exclusive_maximum else "less than or equal to"
            out.append(
                _invalid(path, value, f"{where} in body should be {word} {_num_text(high, is_int)}")
            )


def _string_error(s: Schema, value: str, path: JsonPath) -> FieldError | None:
    """maxLength, minLength, pattern: the first that fails (kube-openapi stops there)."""
    if s.max_length is not None and len(value) > s.max_length:
        noun = "byte" if s.max_length == 1 else "bytes"
        where = _where(path)
        return FieldError.at(
            path, where or "<nil>", f"Too long: may not be more than {s.max_length} {noun}"
        )
    if s.min_length is not None and len(value) < s.min_length:
        return _invalid(
            path, value, f"{_where(path)} in body should be at least {s.min_length} chars long"
        )
    if s.pattern is not None and not s.pattern.search(value):
        return _invalid(path, value, f"{_where(path)} in body should match '{s.pattern_text}'")
    return None


def _enum_matches(value: Any, allowed: Any) -> bool:
    if value is None:
        return False
    if isinstance(allowed, str):
        if isinstance(value, str):
            return value == allowed
        if type(value) is int:  # Go converts an integer to the rune it encodes
            return (chr(value) if 0 <= value <= 0x10FFFF else "\ufffd") == allowed
        return False
    if isinstance(allowed, bool) or isinstance(value, bool):
        return isinstance(allowed, bool) and isinstance(value, bool) and allowed is value
    if isinstance(allowed, int | float) and isinstance(value, int | float):
        return float(value) == float(allowed)
    return bool(value == allowed)


def _enum_error(s: Schema, value: Any, where: str, path: JsonPath) -> FieldError | None:
    assert s.enum is not None
    for allowed in s.enum:
        if _enum_matches(value, allowed):
            return None
    shown = ", ".join(go_quote(a if isinstance(a, str) else go_json(a)) for a in s.enum)
    return FieldError.at(
        path, where or "<nil>", f"Unsupported value: {go_value(value)}: supported values: {shown}"
    )


def _where(path: JsonPath) -> str:
    return format_path(path)


def _check_node(s: Schema, value: Any, path: JsonPath, out: list[FieldError]) -> int:
    """The non-recursive kube-openapi validators of one node, in kube-openapi's order.

    Returns the node's "match count" without its children (kube-openapi uses match
    counts to pick which failing ``anyOf`` branch to report).
    """
    where = _where(path)
    if value is None:
        count = 1
        if s.types and not s.nullable and "null" not in s.types:
            out.append(_type_invalid(path, where, s.type_text, "null"))
            count = 0
        if s.enum:
            error = _enum_error(s, value, where, path)
            if error is not None:
                out.append(error)
        return count
    count = 1  # the validator's own increment at the end
    cls = type(value)
    if s.types or s.format:  # type validator
        error = _type_error(s, value, where, path)
        if error is not None:
            out.append(error)
            count += 1
        else:
            count += 2
    count += 1 + _props_validate(s, value, path, out)  # anyOf/allOf/oneOf/not
    if cls is str:
        if s.check_string:
            error = _string_error(s, value, path)
            if error is not None:
                out.append(error)
        count += 1
        if s.format:
            if not _format_ok(s.format, value):
                detail = f"{where} in body must be of type {s.format}: {go_quote(value)}"
                out.append(
                    FieldError.at(
                        path, where or "<nil>", f"Invalid value: {go_quote(value)}: {detail}"
                    )
                )
            count += 1
    elif cls is int or cls is float:
        _number_errors(s, value, where, path, out)
        count += 2
    elif cls is list:
        size = len(value)
        if s.min_items is not None and size < s.min_items:
            out.append(
                _invalid(path, size, f"{where} in body should have at least {s.min_items} items")
            )
        if s.max_items is not None and size > s.max_items:
            noun = "item" if s.max_items == 1 else "items"
            detail = f"Too many: {size}: must have at most {s.max_items} {noun}"
            out.append(FieldError.at(path, where or "<nil>", detail))
        if s.unique_items:
            seen: set[str] = set()
            for item in value:
                text = go_json(item)
                if text in seen:
                    detail = f'Invalid value: "": {where} in body shouldn\'t contain duplicates'
                    out.append(FieldError.at(path, where or "<nil>", detail))
                    break
                seen.add(text)
        count += 2
    if s.enum:  # common validator
        error = _enum_error(s, value, where, path)
        if error is not None:
            out.append(error)
    count += 1
    if cls is dict:  # object validator (children are walked by the caller)
        size = len(value)
        if s.min_properties is not None and size < s.min_properties:
            detail = f"{where} in body should have at least {s.min_properties} properties"
            out.append(_invalid(path, size, detail))
        if s.max_properties is not None and size > s.max_properties:
            noun = "item" if s.max_properties == 1 else "items"
            detail = f"Too many: {size}: must have at most {s.max_properties} {noun}"
            out.append(FieldError.at(path, where or "<nil>", detail))
        if s.additional_allowed is False:
            for key in value:
                if key not in s.properties:
                    out.append(
                        _invalid(path, key, f"{where}.{key} in body is a forbidden property")
                    )
        for key in s.required:
            if key not in value:
                out.append(
                    FieldError.at(path, f"{where}.{key}" if where else key, "Required value")
                )
        count += 1
    return count


def _validate_full(s: Schema, value: Any, path: JsonPath, out: list[FieldError]) -> int:
    """kube-openapi's ``SchemaValidator.Validate`` (no mutation); returns the match count."""
    count = _check_node(s, value, path, out)
    if type(value) is dict:
        for key, item in value.items():
            child = s.properties.get(key)
            if child is None:
                child = s.additional
            if child is not None:
                count += _validate_full(child, item, (*path, key), out)
    elif type(value) is list and s.items is not None:
        for index, item in enumerate(value):
            count += _validate_full(s.items, item, (*path, index), out)
    return count


def _props_validate(s: Schema, value: Any, path: JsonPath, out: list[FieldError]) -> int:
    """``anyOf``/``allOf``/``oneOf``/``not``: the schemaPropsValidator; returns its match count."""
    if not (s.any_of or s.all_of or s.one_of or s.not_ is not None):
        return 1
    where = _where(path)
    count = 1
    if s.any_of:
        best: tuple[int, list[FieldError]] | None = None
        success: int | None = None
        for branch in s.any_of:
            errors: list[FieldError] = []
            matched = _validate_full(branch, value, path, errors)
            if not errors:
                success = matched
                best = None
                break
            if best is None or matched > best[0]:
                best = (matched, errors)
        if success is None:
            out.append(_loose(path, f"{go_quote(where)} must validate at least one schema (anyOf)"))
        if best is not None:
            out.extend(best[1])
            count += best[0]
        elif success is not None:
            count += success
    if s.one_of:
        valid = 0
        best_one: tuple[int, list[FieldError]] | None = None
        first: int | None = None
        for branch in s.one_of:
            errors = []
            matched = _validate_full(branch, value, path, errors)
            if not errors:
                valid += 1
                best_one = None
                if first is None:
                    first = matched
                continue
            if valid == 0 and (best_one is None or matched > best_one[0]):
                best_one = (matched, errors)
        if valid != 1:
            extra = "Found none valid" if valid == 0 else f"Found {valid} valid alternatives"
            out.append(
                _loose(
                    path,
                    f"{go_quote(where)} must validate one and only one schema (oneOf). {extra}",
                )
            )
            if best_one is not None:
                out.extend(best_one[1])
                count += best_one[0]
        elif first is not None:
            count += first
    if s.all_of:
        passed = 0
        for branch in s.all_of:
            errors = []
            count += _validate_full(branch, value, path, errors)
            if not errors:
                passed += 1
            out.extend(errors)
        if passed != len(s.all_of):
            extra = ". None validated" if passed == 0 else ""
            out.append(
                _loose(path, f"{go_quote(where)} must validate all the schemas (allOf){extra}")
            )
    if s.not_ is not None:
        errors = []
        _validate_full(s.not_, value, path, errors)
        if not errors:
            out.append(_loose(path, f"{go_quote(where)} must not validate the schema (not)"))
    return count


# --- prune + drop nulls + default + validate, in one walk ------------------------------

_META_FIELDS = frozenset(("apiVersion", "kind", "metadata"))


class _Walk:
    """One pass over an object: prune, drop nulls, default, validate, check list types."""

    __slots__ = ("errors", "keep_nulls", "root", "unknown")

    def __init__(self, root: Schema, keep_nulls: bool = False) -> None:
        self.root = root
        self.keep_nulls = keep_nulls
        self.unknown: list[FieldError] = []
        self.errors: list[FieldError] = []

    def record(self, path: JsonPath) -> None:
        text = format_path(path)
        self.unknown.append(FieldError.at(path, text, f'unknown field "{text}"'))

    def prune_all(self, value: Any, path: JsonPath) -> None:
        """Pruning under no schema: every key of a map goes (lists are searched for maps)."""
        if type(value) is dict:
            for key in list(value):
                self.record((*path, key))
            value.clear()
        elif type(value) is list:
            for index, item in enumerate(value):
                self.prune_all(item, (*path, index))

    def node(self, s: Schema, value: Any, path: JsonPath, root: bool = False) -> None:
        cls = type(value)
        if cls is dict:
            self.mapping(s, value, path, root)
        elif cls is list:
            items = s.items
            if items is None:
                if not s.preserve_unknown:
                    for index, item in enumerate(value):
                        self.prune_all(item, (*path, index))
            else:
                for index, item in enumerate(value):
                    if item is None and not items.nullable:
                        item = value[index] = copy.deepcopy(items.default)
                    self.node(items, item, (*path, index))
            if s.list_type == "map" or (s.list_type == "set" and len(value) > 1):
                self.list_type(s, value, path)
        if cls in s.fast:
            return
        if cls is str and s.fast_str:
            error = _string_error(s, value, path)
            if error is not None:
                self.errors.append(error)
            return
        if cls is int and s.fast_int32 and -2147483648 <= value <= 2147483647:
            return
        if cls is dict and s.fast_required and all(key in value for key in s.required):
            return
        _check_node(s, value, path, self.errors)

    def mapping(self, s: Schema, value: dict[str, Any], path: JsonPath, root: bool) -> None:
        properties = s.properties
        additional = s.additional
        skip_meta = root or s.embedded
        if not s.preserve_unknown and additional is None and s.additional_allowed is not True:
            # membership per key of the value: a set difference with the schema's keys
            # would walk every property of the schema (PodSpec has dozens) on every object
            extra = [
                k for k in value if k not in properties and not (skip_meta and k in _META_FIELDS)
            ]
            for key in extra:
                self.record((*path, key))
                del value[key]
        if not self.keep_nulls and None in value.values():
            # non-nullable nulls without a default are dropped; with one they get it below
            for key in [k for k, v in value.items() if v is None]:
                child = properties.get(key, additional)
                if child is not None and not child.nullable and not child.has_default:
                    del value[key]
        for key, default, nullable in s.defaults:
            current = value.get(key, _MISSING)
            if current is _MISSING or (current is None and not nullable):
                value[key] = copy.deepcopy(default)
        for key, item in value.items():
            child = properties.get(key)
            if child is None:
                child = additional
                if child is None:
                    if s.additional_allowed is True and not s.preserve_unknown:
                        self.prune_all(item, (*path, key))
                    continue
                if item is None and not child.nullable:
                    item = value[key] = copy.deepcopy(child.default)
            elif skip_meta and key in _META_FIELDS:
                # TypeMeta/ObjectMeta of a resource are never pruned: validate only
                _validate_full(child, item, (*path, key), self.errors)
                continue
            self.node(child, item, (*path, key))

    def list_type(self, s: Schema, value: list[Any], path: JsonPath) -> None:
        found: list[FieldError] = []
        if s.list_type == "set":
            for index in _non_unique(value):
                found.append(
                    FieldError.at((*path, index), "", f"Duplicate value: {go_value(value[index])}")
                )
        elif s.list_type == "map":
            _list_map(s, value, path, (False,) * len(path), found)
        if found:
            # field paths of list-type errors write map keys as [key]: recompute them
            for error in found:
                text = _key_path(error.path, _map_key_flags(self.root, error.path))
                self.errors.append(FieldError.at(error.path, text, error.message))


def _map_key_flags(root: Schema, path: JsonPath) -> tuple[bool, ...]:
    """For each element of ``path``: is it an ``additionalProperties`` key (shown as ``[key]``)?"""
    flags: list[bool] = []
    s: Schema | None = root
    for part in path:
        if s is None:
            flags.append(False)
            continue
        if isinstance(part, int):
            flags.append(False)
            s = s.items
        elif part in s.properties:
            flags.append(False)
            s = s.properties[part]
        else:
            flags.append(s.additional is not None)
            s = s.additional
    return tuple(flags)


def admit_schema(obj: dict[str, Any], schema: Schema, keep_nulls: bool = False) -> list[FieldError]:
    """Prune, drop nulls, default (in place) and validate ``obj``; unknown fields come first.

    ``obj`` is a whole resource: ``apiVersion``, ``kind`` and ``metadata`` at the root are
    never pruned (the caller checks ``metadata`` against ObjectMeta). The checks include
    ``x-kubernetes-list-type`` uniqueness (``set`` items, ``map`` keys).

    ``keep_nulls``: a non-nullable null without a default stays (and is refused), as after
    a mutating webhook's patch: the API server drops such nulls only when it decodes a
    request body.
    """
    walk = _Walk(schema, keep_nulls)
    walk.node(schema, obj, (), root=True)
    unknown = sorted(walk.unknown, key=lambda error: error.message)  # as the API server lists them
    return unknown + _dedupe(walk.errors)


def _dedupe(errors: list[FieldError]) -> list[FieldError]:
    seen: set[tuple[str | None, str]] = set()
    out: list[FieldError] = []
    for error in errors:
        key = (error.field, error.message)
        if key not in seen:
            seen.add(key)
            out.append(error)
    return out


# --- x-kubernetes-list-type: set and map uniqueness -------------------------------------


def _key_path(path: JsonPath, is_key: tuple[bool, ...]) -> str:
    out = ""
    for part, key in zip(path, is_key, strict=True):
        if isinstance(part, int) or key:
            out += f"[{part}]"
        else:
            out += f".{part}" if out else part
    return out


def _scalar_key(value: Any) -> Any:
    """Go map-key identity of a scalar: ``1`` (int64) and ``1.0`` (float64) differ."""
    return (type(value).__name__, value)


def _non_unique(items: list[Any]) -> list[int]:
    seen: dict[Any, int] = {}
    indices: list[int] = []
    for index, item in enumerate(items):
        key = go_json(item) if type(item) in (dict, list) else _scalar_key(item)
        times = seen.get(key, 0)
        seen[key] = times + 1
        if times == 1:
            indices.append(index)
    return indices


def _list_map(
    s: Schema, items: list[Any], path: JsonPath, keys: tuple[bool, ...], out: list[FieldError]
) -> None:
    for index, item in enumerate(items):
        if item is not None and type(item) is not dict:
            field = _key_path((*path, index), (*keys, False))
            out.append(
                _invalid(
                    (*path, index), item, "must be an object for an array of list-type map", field
                )
            )
            return
    if len(items) <= 1:
        return
    unspecified = object()
    if len(s.list_map_keys) == 1:
        name = s.list_map_keys[0]
        values = [unspecified if item is None or name not in item else item[name] for item in items]
        probe = [("\0unspecified",) if v is unspecified else v for v in values]
        for index in _non_unique(probe):
            field = _key_path((*path, index), (*keys, False))
            shown = {} if values[index] is unspecified else {name: values[index]}
            out.append(FieldError.at((*path, index), field, f"Duplicate value: {go_json(shown)}"))
        return
    composite = [
        {} if item is None else {k: item[k] for k in s.list_map_keys if k in item} for item in items
    ]
    for index in _non_unique(composite):
        field = _key_path((*path, index), (*keys, False))
        out.append(
            FieldError.at((*path, index), field, f"Duplicate value: {go_json(composite[index])}")
        )
