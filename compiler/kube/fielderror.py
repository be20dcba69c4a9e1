"""How a Go ``field.Error`` prints itself (k8s.io/apimachinery/pkg/util/validation/field).

``field: <type text>[: <bad value>][: <detail>]``: required, forbidden, too-long and
internal errors show no value; the others show it, ``%v`` for Go ints, floats and
bools, ``%q`` for Go strings, and ``json.Marshal`` for everything else (structs,
slices, maps, pointers, custom JSON types), so the Go type of the value decides::

    >>> error_body("FieldValueInvalid", "x", "must be y", TypeRef("string"))
    'Invalid value: "x": must be y'
    >>> error_body("FieldValueInvalid", 2, "must be 1", TypeRef("pointer", elem=TypeRef("int")))
    'Invalid value: 2: must be 1'
    >>> error_body("FieldValueForbidden", "x", "is reserved")
    'Forbidden: is reserved'
    >>> error_body("FieldValueInvalid", None, "must have a GPU")
    'Invalid value: null: must have a GPU'

:func:`field_type` finds the Go type of a field by its path, and :func:`go_value` puts
a value in the form Go marshals it (struct fields in declaration order, ``omitempty``
applied): together, the bad value of an error about that field.
"""

from __future__ import annotations

from typing import Any

from compiler.errors import JsonPath
from compiler.kube.gotext import go_float, go_json, go_quote
from compiler.kube.roundtrip import RoundTripError, go_roundtrip
from compiler.upstream.typeinfo import TypeInfo, TypeRef, typeinfo

__all__ = ["TYPE_TEXT", "bad_value", "error_body", "field_type", "go_value"]

# field.ErrorType's String(): the text an error of each type starts with
TYPE_TEXT = {
    "FieldValueNotFound": "Not found",
    "FieldValueRequired": "Required value",
    "FieldValueDuplicate": "Duplicate value",
    "FieldValueInvalid": "Invalid value",
    "FieldValueNotSupported": "Unsupported value",
    "FieldValueForbidden": "Forbidden",
    "FieldValueTooLong": "Too long",
    "FieldValueTooMany": "Too many",
    "InternalError": "Internal error",
    "FieldValueTypeInvalid": "Invalid value",
}
_WITHOUT_VALUE = frozenset(
    {"FieldValueRequired", "FieldValueForbidden", "FieldValueTooLong", "InternalError"}
)


def bad_value(value: Any, go_type: TypeRef | None = None) -> str:
    """The bad value as ``field.Error`` prints it (``go_type`` None: guessed from Python)."""
    kind = go_type.kind if go_type is not None else None
    if kind is None:  # no Go type known: what the untyped value would most likely be
        if isinstance(value, bool | int):
            return go_json(value)
        if isinstance(value, str):
            return go_quote(value)
        return go_json(value, sort_keys=False)
    if value is not None and kind in ("int", "uint", "bool"):
        return go_json(value)
    if value is not None and kind == "float":
        return go_float(float(value))
    if value is not None and kind == "string":
        return go_quote(str(value))
    return go_json(value, sort_keys=False)  # json.Marshal: nil is null


def error_body(error_type: str, value: Any, detail: str, go_type: TypeRef | None = None) -> str:
    """``field.Error.ErrorBody()``: the error without its field path."""
    text = TYPE_TEXT.get(error_type, error_type)
    if error_type not in _WITHOUT_VALUE:
        text = f"{text}: {bad_value(value, go_type)}"
    return f"{text}: {detail}" if detail else text


def _deref(go_type: TypeRef) -> TypeRef:
    while go_type.kind == "pointer" and go_type.elem is not None:
        go_type = go_type.elem
    return go_type


def _child_type(info: TypeInfo, go_type: TypeRef, key: str | int) -> TypeRef | None:
    go_type = _deref(go_type)
    if isinstance(key, int):
        return go_type.elem if go_type.kind in ("slice", "array") else None
    if go_type.kind == "map":
        return go_type.elem
    if go_type.kind != "struct" or go_type.name is None:
        return None
    struct = info.struct(go_type.name)
    folded = key.casefold()  # Go prints some paths with its field names (spec.RuntimeRef)
    found = next((f for f in struct.fields if f.json == key), None) or next(
        (f for f in struct.fields if f.json.casefold() == folded), None
    )
    return None if found is None else found.type


def field_type(root: str, path: JsonPath, info: TypeInfo | None = None) -> TypeRef | None:
    """The Go type of the field at ``path`` in the struct ``root``; None if unknown.

    >>> field_type("trainer.v1alpha1.TrainJob", ("spec", "RuntimeRef")).name
    'trainer.v1alpha1.RuntimeRef'
    """
    info = info or typeinfo()
    go_type: TypeRef | None = TypeRef("struct", name=root)
    for key in path:
        if go_type is None:
            return None
        go_type = _child_type(info, go_type, key)
    return go_type


def go_value(value: Any, go_type: TypeRef, info: TypeInfo | None = None) -> Any:
    """``value`` decoded into ``go_type`` and encoded again (struct fields in Go order,
    ``omitempty`` applied); ``value`` itself where Go would not decode it."""
    info = info or typeinfo()
    go_type = _deref(go_type)
    if value is None:
        return None
    try:
        if go_type.kind == "struct" and go_type.name is not None:
            return go_roundtrip(value, go_type.name, info=info)
        if (
            go_type.kind in ("slice", "array")
            and go_type.elem is not None
            and isinstance(value, list)
        ):
            return [go_value(item, go_type.elem, info) for item in value]
        if go_type.kind == "map" and go_type.elem is not None and isinstance(value, dict):
            return {k: go_value(value[k], go_type.elem, info) for k in sorted(value)}
    except (RoundTripError, KeyError):
        pass
    return value
