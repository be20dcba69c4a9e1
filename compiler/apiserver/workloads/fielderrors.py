"""Go ``field.Error`` values as kube-apiserver's Job and Pod validation makes them.

A path is a tuple of steps: a ``str`` is a child field (``.name``), an ``int`` an index
(``[0]``) and a :class:`Key` a map key (``[cpu]``), so ``("spec", "containers", 0,
"resources", "limits", Key("cpu"))`` prints ``spec.containers[0].resources.limits[cpu]``.

How the bad value prints depends on its Go type (``field.Error.ErrorBody``): a plain Go
``string`` is quoted with ``%q``, numbers and bools print with ``%v``, and anything else
(a named string type such as ``core.Protocol``, a pointer, a map, a slice) goes through
``json.Marshal``. The constructors below take the value already in its Go shape via
:class:`Value`: ``as_string``, ``as_number``, ``as_json`` or :data:`OMIT`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from compiler.errors import FieldError, JsonPath
from compiler.kube.fielderror import TYPE_TEXT
from compiler.kube.gotext import go_json, go_quote

__all__ = [
    "OMIT",
    "Key",
    "Path",
    "Value",
    "as_json",
    "as_number",
    "as_string",
    "duplicate",
    "forbidden",
    "invalid",
    "not_found",
    "not_supported",
    "path_text",
    "relocated",
    "required",
    "too_long",
    "too_many",
]


class Key(str):
    """A map key step of a path (``[key]``)."""

    __slots__ = ()


Path = tuple[str | int, ...]


def path_text(path: Path) -> str:
    """Go's ``field.Path.String()``."""
    out: list[str] = []
    for step in path:
        if isinstance(step, (Key, int)):
            out.append(f"[{step}]")
        else:
            out.append(f".{step}" if out else step)
    return "".join(out)


@dataclass(frozen=True, slots=True)
class Value:
    """A bad value and how Go prints it."""

    raw: Any
    text: str


def as_string(value: str) -> Value:
    """A value of Go type ``string`` (``%q``)."""
    return Value(value, go_quote(value))


def as_number(value: int | bool) -> Value:
    """An int32, int64 or bool (``%v``); a Go ``int`` marshals the same way."""
    return Value(value, go_json(value))


def as_json(value: Any) -> Value:
    """Anything ``json.Marshal`` prints: named string types, pointers, maps, slices."""
    return Value(value, go_json(value))


OMIT = Value(None, "")  # field.OmitValueType{}: the type text alone


def _json_path(path: Path) -> JsonPath:
    return tuple(str(s) if isinstance(s, Key) else s for s in path)


def _error(kind: str, path: Path, value: Value | None, detail: str) -> FieldError:
    body = TYPE_TEXT[kind]
    if value is not None and value is not OMIT:
        body = f"{body}: {value.text}"
    if detail:
        body = f"{body}: {detail}"
    raw = None if value is None else value.raw
    return FieldError(kind, path_text(path), body, raw, _json_path(path))


def relocated(errors: list[FieldError], go_prefix: Path, real_prefix: Path) -> list[FieldError]:
    """``errors`` whose JSON path (where to find the field in a file) starts with
    ``go_prefix`` moved under ``real_prefix``; their Go field text is unchanged. For the
    errors Go names by a path that is not the field's (``volumeMounts.subPath`` for
    ``volumeMounts[2].subPath``)."""
    if not errors:
        return errors  # the common case: nothing to move, no paths to build
    old, new = _json_path(go_prefix), _json_path(real_prefix)
    return [
        dataclasses.replace(e, path=new + e.path[len(old) :]) if e.path[: len(old)] == old else e
        for e in errors
    ]


def required(path: Path, detail: str = "") -> FieldError:
    return _error("FieldValueRequired", path, None, detail)


def forbidden(path: Path, detail: str) -> FieldError:
    return _error("FieldValueForbidden", path, None, detail)


def invalid(path: Path, value: Value, detail: str) -> FieldError:
    return _error("FieldValueInvalid", path, value, detail)


def not_found(path: Path, value: Value) -> FieldError:
    return _error("FieldValueNotFound", path, value, "")


def duplicate(path: Path, value: Value) -> FieldError:
    return _error("FieldValueDuplicate", path, value, "")


def not_supported(path: Path, value: Value, supported: Iterable[str]) -> FieldError:
    """``field.NotSupported``: the supported values quoted, in the order given."""
    values = list(supported)
    detail = "supported values: " + ", ".join(go_quote(v) for v in values) if values else ""
    return _error("FieldValueNotSupported", path, value, detail)


def too_long(path: Path, max_length: int) -> FieldError:
    unit = "byte" if max_length == 1 else "bytes"
    return _error("FieldValueTooLong", path, None, f"may not be more than {max_length} {unit}")


def too_many(path: Path, actual: int, maximum: int) -> FieldError:
    unit = "item" if maximum == 1 else "items"
    return _error(
        "FieldValueTooMany", path, as_number(actual), f"must have at most {maximum} {unit}"
    )
