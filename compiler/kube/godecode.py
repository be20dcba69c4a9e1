"""The first error Go's ``encoding/json`` meets decoding a JSON value into a Go type.

A webhook decodes the object it is sent into its Go type before it looks at it; a value
of the wrong JSON type stops it with ``encoding/json``'s ``UnmarshalTypeError``::

    json: cannot unmarshal string into Go struct field Trainer.spec.trainer.numNodes of type int32

The text names the JSON kind (``number 1.5`` for a number that does not fit), the
innermost Go struct, the JSON path of struct fields from the root (list indices and
map keys are not part of it) and the Go type. Only the first error counts: decoding goes
on but keeps the first. Object keys are visited sorted, as the API server sends them.

    >>> from compiler.upstream.typeinfo import typeinfo
    >>> first_unmarshal_error({"spec": {"trainer": {"numNodes": 1.5}}}, "trainer.v1alpha1.TrainJob")
    'json: cannot unmarshal number 1.5 into Go struct field Trainer.spec.trainer.numNodes of type int32'

Custom JSON types decode with their own code and errors (no field in them); of those,
quantities are checked (int-or-string, times and raw extensions are not).
"""

from __future__ import annotations

from typing import Any

from compiler.errors import JsonPath
from compiler.kube.gotext import go_json
from compiler.kube.quantity import Quantity, QuantityError
from compiler.kube.roundtrip import RoundTripError, go_roundtrip
from compiler.upstream.typeinfo import TypeInfo, TypeRef, typeinfo

__all__ = ["first_unmarshal_error", "json_kind", "unmarshal_error"]

Found = tuple[str, "JsonPath"] | None

_INT_RANGE = {8: 2**7, 16: 2**15, 32: 2**31, 64: 2**63}


def json_kind(value: Any) -> str:
    """The JSON kind ``encoding/json`` names in an ``UnmarshalTypeError`` (``value ...``)."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _go_type_text(info: TypeInfo, go_type: TypeRef) -> str:
    """``reflect.Type.String()``: ``int32``, ``[]v1.EnvVar``, ``map[string]string``."""
    kind = go_type.kind
    if kind == "pointer" and go_type.elem is not None:
        return "*" + _go_type_text(info, go_type.elem)
    if kind == "slice" and go_type.elem is not None:
        return "[]" + _go_type_text(info, go_type.elem)
    if kind == "array" and go_type.elem is not None:
        return f"[{go_type.length}]" + _go_type_text(info, go_type.elem)
    if kind == "map" and go_type.key is not None and go_type.elem is not None:
        return f"map[{_go_type_text(info, go_type.key)}]{_go_type_text(info, go_type.elem)}"
    if kind == "bytes":
        return "[]uint8"
    full = go_type.go_type
    if full is None and go_type.name is not None:
        full = info.get(go_type.name).go_type
    return (full or kind).rpartition("/")[2]


def _short_name(info: TypeInfo, name: str) -> str:
    return info.get(name).go_type.rpartition(".")[2]


class _Walk:
    def __init__(self, info: TypeInfo) -> None:
        self.info = info

    def error(self, kind: str, go_type: TypeRef, struct: str | None, stack: list[str]) -> str:
        type_text = _go_type_text(self.info, go_type)
        if struct is None and not stack:
            return f"json: cannot unmarshal {kind} into Go value of type {type_text}"
        return (
            f"json: cannot unmarshal {kind} into Go struct field "
            f"{struct or ''}.{'.'.join(stack)} of type {type_text}"
        )

    def walk(
        self, value: Any, go_type: TypeRef, struct: str | None, stack: list[str], at: JsonPath
    ) -> Found:
        while go_type.kind == "pointer" and go_type.elem is not None:
            if value is None:
                return None
            go_type = go_type.elem
        if value is None or go_type.kind == "interface":
            return None  # null leaves a Go value alone
        if go_type.kind == "special":
            message = _special(value, go_type)
            return None if message is None else (message, at)
        kind = go_type.kind
        if kind == "struct" and go_type.name is not None:
            if not isinstance(value, dict):
                return self.error(json_kind(value), go_type, struct, stack), at
            return self.struct(value, go_type.name, stack, at)
        if kind == "map" and go_type.elem is not None:
            if not isinstance(value, dict):
                return self.error(json_kind(value), go_type, struct, stack), at
            for key in sorted(value):
                found = self.walk(value[key], go_type.elem, struct, stack, (*at, key))
                if found is not None:
                    return found
            return None
        if kind in ("slice", "array") and go_type.elem is not None:
            if not isinstance(value, list):
                return self.error(json_kind(value), go_type, struct, stack), at
            for index, item in enumerate(value):
                found = self.walk(item, go_type.elem, struct, stack, (*at, index))
                if found is not None:
                    return found
            return None
        message = self.scalar(value, go_type, struct, stack)
        return None if message is None else (message, at)

    def scalar(
        self, value: Any, go_type: TypeRef, struct: str | None, stack: list[str]
    ) -> str | None:
        kind = go_type.kind
        if kind in ("string", "bytes"):
            ok = isinstance(value, str)
        elif kind == "bool":
            ok = isinstance(value, bool)
        elif kind == "float":
            ok = isinstance(value, int | float) and not isinstance(value, bool)
        elif kind in ("int", "uint"):
            if isinstance(value, bool) or not isinstance(value, int | float):
                ok = False
            else:
                limit = _INT_RANGE.get(go_type.bits or 64, 2**63)
                low, high = (0, 2 * limit) if kind == "uint" else (-limit, limit)
                if isinstance(value, float) or not low <= value < high:
                    return self.error(f"number {go_json(value)}", go_type, struct, stack)
                ok = True
        else:
            return None
        return None if ok else self.error(json_kind(value), go_type, struct, stack)

    def struct(self, value: dict[str, Any], name: str, stack: list[str], at: JsonPath) -> Found:
        go_struct = self.info.struct(name)
        by_fold = {f.json.casefold(): f for f in reversed(go_struct.fields)}
        for key in sorted(value):
            field = go_struct.by_json.get(key) or by_fold.get(key.casefold())
            if field is None:
                continue  # unknown fields are ignored (the API server pruned them)
            here = [*stack, *field.embedded, field.json]
            struct = _short_name(self.info, name)
            found = self.walk(value[key], field.type, struct, here, (*at, key))
            if found is not None:
                return found
        return None


def _special(value: Any, go_type: TypeRef) -> str | None:
    """Custom JSON types decode themselves; their errors carry no field context. Only a
    quantity's is modelled: anything but a string is parsed as its JSON text."""
    if go_type.special != "resource.Quantity":
        return None
    text = value if isinstance(value, str) else go_json(value)
    try:
        Quantity.parse(text)
    except QuantityError as error:
        return str(error)
    return None


def unmarshal_error(
    value: Any, root: str, info: TypeInfo | None = None
) -> tuple[str, JsonPath] | None:
    """``json.Unmarshal``'s error for ``value`` into the Go struct ``root`` and where in
    ``value`` it is, or None."""
    info = info or typeinfo()
    try:  # the compiled round trip is several times faster; it fails where Go fails
        go_roundtrip(value, root, info=info)
        return None
    except RoundTripError:
        pass
    return _Walk(info).walk(value, TypeRef("struct", name=root), None, [], ())


def first_unmarshal_error(value: Any, root: str, info: TypeInfo | None = None) -> str | None:
    """``json.Unmarshal``'s error for ``value`` into the Go struct ``root``, or None."""
    found = unmarshal_error(value, root, info)
    return None if found is None else found[0]
