"""The typed JSON round trip of the Trainer controller (spec R-3.6), without Go.

The controller turns data into Go structs and back (``json.Unmarshal`` then
``json.Marshal``, ``encoding/json``), and what comes out is what it creates.
:func:`go_roundtrip` computes the same result from the field facts in
``typeinfo.json`` (see :mod:`compiler.upstream.typeinfo`):

* unknown fields are dropped; keys match fields exactly, else case-insensitively
  (``{"Name": "x"}`` -> ``{"name": "x"}``);
* ``omitempty`` drops ``false``, ``0``, ``""``, and nil or empty lists/maps of
  non-pointer fields (``hostNetwork: false``, env ``value: ""``, ``replicas: 0``,
  ``command: []``); pointers keep explicit zeros (``parallelism: 0``,
  ``suspend: false``);
* a struct is never "empty", so an absent non-pointer struct field comes back as
  its zero value: ``resources: {}``, pod template ``metadata: {}``, ``status: {}``;
  a list or map field *without* ``omitempty`` comes back as ``null``
  (``containers: null``); ``omitzero`` drops zero values (``creationTimestamp``
  of a zero ObjectMeta is dropped, not ``null``);
* quantities are printed canonically (``"1000m"`` -> ``"1"``, ``2`` -> ``"2"``,
  ``null`` -> ``"0"``), int-or-string keeps its kind (``null`` -> ``0``), times are
  printed in UTC to the second, ``[]byte`` is base64;
* map keys come out sorted and struct fields in Go declaration order, as Go writes
  them.

Exactly what Go emits, e.g.::

    >>> go_roundtrip({"name": "a", "env": [{"name": "X", "value": ""}], "stdin": False},
    ...              "io.k8s.api.core.v1.Container")
    {'name': 'a', 'env': [{'name': 'X'}], 'resources': {}}

Values Go rejects raise :class:`RoundTripError` (wrong JSON type, an integer that
does not fit, a float for an integer field, bad base64 or time, a bad quantity).
Not modelled: a JSON number's literal spelling (Python has parsed it already;
quantities use Go's float formatting of the number), ``",string"`` fields and
custom-JSON types other than Quantity, IntOrString, Time, FieldsV1 and
RawExtension (no other is reachable from the rendered kinds).

How it runs: each Go type is compiled once per :class:`TypeInfo` (:class:`_Compiler`)
into a converter, a closure per kind and per struct a :class:`_StructCodec` with
precomputed tables: JSON name -> field (case-folded names only when the exact name
misses), each field's ``omitempty`` test, and the JSON of every field written when
absent. A converter maps JSON straight to JSON, as if decoding into a fresh zero value
and encoding at once, without building Go values. That is exact on the ordinary path;
off it (any error, a field matched twice by case folding, a struct with embedded
pointers or unmodelled kinds) the converter gives up (:class:`_Bail`), and
:class:`_Reference`, the plain decode-then-encode interpreter, computes the result or
the error from the start. ``omitzero`` (rare) is also asked of the reference.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import math
import re
import struct
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache, lru_cache
from typing import Any

from compiler.kube.quantity import Quantity, QuantityError, canonical_quantity
from compiler.upstream.typeinfo import GoField, GoType, TypeInfo, TypeRef, typeinfo

JsonPath = tuple[str | int, ...]

__all__ = ["RoundTripError", "go_roundtrip"]


class RoundTripError(ValueError):
    """``json.Unmarshal`` into the Go type would fail; ``path`` locates the value."""

    def __init__(self, message: str, path: JsonPath = ()) -> None:
        self.message = message
        self.path = path
        where = _format_path(path)
        super().__init__(f"{where}: {message}" if where else message)


def go_roundtrip(value: Any, type_name: str, *, info: TypeInfo | None = None) -> Any:
    """``json.Marshal(json.Unmarshal(value into <type_name>))`` as Go computes it.

    ``type_name`` is a struct named as in typeinfo (``jobset.v1alpha2.JobSetSpec``).
    """
    compiler = _compiler(info or _default_typeinfo())
    codec = compiler.root(type_name)  # KeyError early for an unknown name
    try:
        return codec.convert(value)
    except _Bail:
        return compiler.reference.roundtrip(value, type_name)


@cache
def _default_typeinfo() -> TypeInfo:
    return typeinfo()  # fixed per process; resolving its path each call is not free


@lru_cache(maxsize=8)
def _compiler(info: TypeInfo) -> _Compiler:
    return _Compiler(info)


# --------------------------------------------------------------------------- Go values
#
# A decoded Go value is represented as: None (nil pointer/slice/map/interface),
# _Struct, list (slice), dict (map), bytes, str/bool/int/float (scalars), or one of
# the special-value classes below. A pointer is its target (or None).


@dataclass
class _Struct:
    fields: dict[str, Any] = field(default_factory=dict)  # JSON name -> value; absent = zero
    # Embedded pointer chains that decoding allocated (their fields are emitted).
    allocated: set[tuple[str, ...]] = field(default_factory=set)


@dataclass(frozen=True)
class _Quantity:
    text: str  # canonical output
    zero: bool  # Quantity.IsZero()
    unset: bool = False  # Go's zero value Quantity{} (all fields zero)


@dataclass(frozen=True)
class _IntOrString:
    is_string: bool
    int_val: int = 0
    str_val: str = ""


@dataclass(frozen=True)
class _Time:
    text: str | None  # None = zero time (marshals as null)


@dataclass(frozen=True)
class _Raw:
    value: Any  # the JSON value kept verbatim; _NO_RAW when never set


_NO_RAW = object()


def _format_path(path: JsonPath) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, (list, tuple)):
        return "array"
    raise RoundTripError(f"not JSON data: {type(value).__name__}")


def _zero(t: TypeRef) -> Any:
    kind = t.kind
    if kind in ("pointer", "slice", "map", "bytes", "interface"):
        return None
    if kind == "struct":
        return _Struct()
    if kind == "array":
        assert t.elem is not None and t.length is not None
        return [_zero(t.elem) for _ in range(t.length)]
    if kind == "string":
        return ""
    if kind == "bool":
        return False
    if kind in ("int", "uint"):
        return 0
    if kind == "float":
        return 0.0
    if kind == "special":
        return _special_zero(t)
    raise RoundTripError(f"unsupported Go kind {kind!r}")


def _special_zero(t: TypeRef) -> Any:
    special = t.special
    if special == "resource.Quantity":
        return _Quantity("0", zero=True, unset=True)
    if special == "intstr.IntOrString":
        return _IntOrString(False)
    if special == "metav1.Time":
        return _Time(None)
    if special in ("metav1.FieldsV1", "runtime.RawExtension"):
        return _Raw(_NO_RAW)
    raise RoundTripError(f"custom JSON type {special} is not modelled")


# Go's case-insensitive field match folds ASCII letters (and maps a few Unicode
# letters to ASCII); upper-casing then lower-casing is close enough for field names.
def _fold(name: str) -> str:
    return name.upper().lower()


_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})\Z"
)
_GO_ZERO_TIME = dt.datetime(1, 1, 1)


def _time_text(text: str, path: JsonPath) -> str | None:
    """``metav1.Time`` of an RFC 3339 string, re-printed: UTC, whole seconds; ``None`` = zero.

    >>> _time_text("2024-01-01T10:00:00.5+02:00", ())
    '2024-01-01T08:00:00Z'
    """
    m = _RFC3339.match(text)
    if m is None:
        raise RoundTripError(f"parsing time {text!r} as RFC 3339 failed", path)
    year, month, day, hour, minute, second = (int(m.group(i)) for i in range(1, 7))
    zone = m.group(8)
    try:
        naive = dt.datetime(year, month, day, hour, minute, second)
    except ValueError as err:
        raise RoundTripError(f"parsing time {text!r}: {err}", path) from None
    if hour > 23 or minute > 59 or second > 59:
        raise RoundTripError(f"parsing time {text!r}: field out of range", path)
    offset = 0
    if zone != "Z":
        oh, om = int(zone[1:3]), int(zone[4:6])
        if oh > 23 or om > 59:
            raise RoundTripError(f"parsing time {text!r}: time zone offset out of range", path)
        offset = (oh * 60 + om) * (1 if zone[0] == "+" else -1)
    try:
        moment = naive - dt.timedelta(minutes=offset)
    except OverflowError:
        raise RoundTripError(f"time {text!r} is out of the supported range", path) from None
    fraction = m.group(7) or ""
    if moment == _GO_ZERO_TIME and not fraction.strip("0"):
        return None  # time.Time{}: marshals as null
    return f"{moment.year:04d}" + moment.strftime("-%m-%dT%H:%M:%SZ")


def _go_float(value: float) -> int | float:
    """A float64 as Go's encoder prints it, read back by Python (``2.0`` -> ``2``)."""
    if math.isfinite(value) and value == int(value) and abs(value) < 1e21:
        return int(value)
    return value


# --------------------------------------------------------------------------- reference


class _Reference:
    """The decode-then-encode interpreter: Go values in between, one step per Go rule."""

    def __init__(self, info: TypeInfo) -> None:
        self.info = info
        self._fields: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}

    def roundtrip(self, value: Any, type_name: str) -> Any:
        root = TypeRef(kind="struct", name=type_name)
        self.info.struct(type_name)  # KeyError early for an unknown name
        return self.encode(self.decode(value, root, _zero(root), ()), root)

    def _lookup(self, struct_type: GoType) -> tuple[dict[str, Any], dict[str, Any]]:
        cached = self._fields.get(struct_type.name)
        if cached is None:
            exact = {f.json: f for f in struct_type.fields}
            folded: dict[str, Any] = {}
            for f in struct_type.fields:
                folded.setdefault(_fold(f.json), f)
            cached = (exact, folded)
            self._fields[struct_type.name] = cached
        return cached

    # ----------------------------------------------------------------- decode

    def decode(self, value: Any, t: TypeRef, existing: Any, path: JsonPath) -> Any:
        """``json.Unmarshal`` of ``value`` into a Go value of type ``t`` holding ``existing``."""
        kind = t.kind
        jt = _json_type(value)
        if kind == "pointer":
            assert t.elem is not None
            if value is None:
                return None
            target = existing if existing is not None else _zero(t.elem)
            return self.decode(value, t.elem, target, path)
        if kind == "special":
            return self._decode_special(value, t, existing, path)
        if value is None:
            # null leaves non-pointer values alone, and sets slices/maps/interfaces to nil.
            return None if kind in ("slice", "map", "bytes", "interface") else existing
        if kind == "struct":
            if jt != "object":
                raise self._mismatch(value, t, path)
            return self._decode_struct(value, t, existing, path)
        if kind == "slice":
            assert t.elem is not None
            if jt != "array":
                raise self._mismatch(value, t, path)
            old = existing if isinstance(existing, list) else []
            return [
                self.decode(v, t.elem, old[i] if i < len(old) else _zero(t.elem), (*path, i))
                for i, v in enumerate(value)
            ]
        if kind == "array":
            assert t.elem is not None and t.length is not None
            if jt != "array":
                raise self._mismatch(value, t, path)
            out = list(existing)
            for i, v in enumerate(value[: t.length]):
                out[i] = self.decode(v, t.elem, out[i], (*path, i))
            for i in range(len(value), t.length):
                out[i] = _zero(t.elem)
            return out
        if kind == "map":
            assert t.elem is not None and t.key is not None
            if jt != "object":
                raise self._mismatch(value, t, path)
            if t.key.kind != "string":
                raise RoundTripError(f"maps keyed by {t.key.kind} are not modelled", path)
            out_map: dict[str, Any] = dict(existing) if isinstance(existing, dict) else {}
            for k, v in value.items():
                out_map[k] = self.decode(v, t.elem, _zero(t.elem), (*path, k))
            return out_map
        if kind == "bytes":
            if jt != "string":
                raise self._mismatch(value, t, path)
            cleaned = value.replace("\r", "").replace("\n", "")
            try:
                return base64.b64decode(cleaned, validate=True)
            except (binascii.Error, ValueError):
                raise RoundTripError(f"illegal base64 data in {value!r}", path) from None
        if kind == "string":
            if jt != "string":
                raise self._mismatch(value, t, path)
            return value
        if kind == "bool":
            if jt != "bool":
                raise self._mismatch(value, t, path)
            return value
        if kind in ("int", "uint"):
            if jt != "number" or not isinstance(value, int):
                raise self._mismatch(value, t, path)
            bits = t.bits or 64
            lo, hi = (
                (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if kind == "int" else (0, 2**bits - 1)
            )
            if not lo <= value <= hi:
                raise RoundTripError(f"number {value} overflows Go {kind}{bits}", path)
            return value
        if kind == "float":
            if jt != "number":
                raise self._mismatch(value, t, path)
            number = float(value)
            if t.bits == 32:
                number = struct.unpack("f", struct.pack("f", number))[0]
            return number
        if kind == "interface":
            if not t.empty_interface:
                raise RoundTripError("cannot unmarshal into a non-empty Go interface", path)
            return self._plain(value)
        raise RoundTripError(f"unsupported Go kind {kind!r}", path)

    def _plain(self, value: Any) -> Any:
        """JSON decoded into ``interface{}``: numbers become float64."""
        if isinstance(value, bool) or value is None or isinstance(value, str):
            return value
        if isinstance(value, (int, float)):
            return _go_float(float(value))
        if isinstance(value, Mapping):
            return {k: self._plain(v) for k, v in value.items()}
        return [self._plain(v) for v in value]

    def _mismatch(self, value: Any, t: TypeRef, path: JsonPath) -> RoundTripError:
        go = t.name or t.go_type or t.kind
        return RoundTripError(
            f"cannot unmarshal {_json_type(value)} into Go value of type {go}", path
        )

    def _decode_struct(
        self, value: Mapping[str, Any], t: TypeRef, existing: Any, path: JsonPath
    ) -> _Struct:
        assert t.name is not None
        go_type = self.info.struct(t.name)
        exact, folded = self._lookup(go_type)
        base = existing if isinstance(existing, _Struct) else _Struct()
        out = _Struct(dict(base.fields), set(base.allocated))
        for key, v in value.items():
            if not isinstance(key, str):
                raise RoundTripError(f"object keys must be strings, got {key!r}", path)
            f = exact.get(key) or folded.get(_fold(key))
            if f is None:
                continue  # unknown field: dropped
            here = (*path, key)
            if f.quoted:
                raise RoundTripError("fields with the ',string' option are not modelled", here)
            if f.embedded_pointer:
                out.allocated.add(f.embedded)
            current = out.fields.get(f.json, _zero(f.type))
            out.fields[f.json] = self.decode(v, f.type, current, here)
        return out

    def _decode_special(self, value: Any, t: TypeRef, existing: Any, path: JsonPath) -> Any:
        special = t.special
        jt = _json_type(value)
        if special == "resource.Quantity":
            if value is None:
                return _Quantity("0", zero=True, unset=True)
            if jt not in ("string", "number"):
                raise RoundTripError(f"quantities must be strings or numbers, got {jt}", path)
            try:
                quantity = Quantity.from_manifest(value)
                return _Quantity(canonical_quantity(value), zero=quantity.is_zero())
            except QuantityError as err:
                raise RoundTripError(str(err), path) from None
        if special == "intstr.IntOrString":
            if jt == "string":
                return _IntOrString(True, str_val=value)
            old = existing if isinstance(existing, _IntOrString) else _IntOrString(False)
            if value is None:
                return _IntOrString(False, int_val=old.int_val, str_val=old.str_val)
            if jt != "number" or not isinstance(value, int) or isinstance(value, bool):
                raise RoundTripError(f"cannot unmarshal {jt} into an int-or-string", path)
            if not -(2**31) <= value < 2**31:
                raise RoundTripError(f"number {value} overflows Go int32", path)
            return _IntOrString(False, int_val=value, str_val=old.str_val)
        if special == "metav1.Time":
            if value is None:
                return _Time(None)
            if jt != "string":
                raise RoundTripError(f"cannot unmarshal {jt} into a time", path)
            return _Time(_time_text(value, path))
        if special in ("metav1.FieldsV1", "runtime.RawExtension"):
            if value is None:
                return existing if isinstance(existing, _Raw) else _Raw(_NO_RAW)
            return _Raw(value)
        raise RoundTripError(f"custom JSON type {special} is not modelled", path)

    # ----------------------------------------------------------------- encode

    def encode(self, value: Any, t: TypeRef) -> Any:
        """``json.Marshal`` of a decoded value, as Python JSON data."""
        kind = t.kind
        if kind == "pointer":
            assert t.elem is not None
            return None if value is None else self.encode(value, t.elem)
        if kind == "struct":
            return self._encode_struct(value, t)
        if kind in ("slice", "array"):
            assert t.elem is not None
            return None if value is None else [self.encode(v, t.elem) for v in value]
        if kind == "map":
            assert t.elem is not None
            if value is None:
                return None
            return {k: self.encode(value[k], t.elem) for k in sorted(value)}
        if kind == "bytes":
            return None if value is None else base64.b64encode(value).decode("ascii")
        if kind == "float":
            return _go_float(value)
        if kind == "special":
            return self._encode_special(value)
        return value

    def _encode_struct(self, value: _Struct, t: TypeRef) -> dict[str, Any]:
        assert t.name is not None
        out: dict[str, Any] = {}
        for f in self.info.struct(t.name).fields:
            if f.embedded_pointer and f.embedded not in value.allocated:
                continue
            v = value.fields[f.json] if f.json in value.fields else _zero(f.type)
            if f.omitempty and self._is_empty(v, f.type):
                continue
            if f.omitzero and self._is_zero(v, f.type):
                continue
            out[f.json] = self.encode(v, f.type)
        return out

    def _encode_special(self, value: Any) -> Any:
        if isinstance(value, _Quantity):
            return value.text
        if isinstance(value, _IntOrString):
            return value.str_val if value.is_string else value.int_val
        if isinstance(value, _Time):
            return value.text
        if isinstance(value, _Raw):
            return None if value.value is _NO_RAW else value.value
        raise RoundTripError(f"cannot encode {value!r}")

    def _is_empty(self, value: Any, t: TypeRef) -> bool:
        """encoding/json's ``omitempty`` test (structs are never empty)."""
        kind = t.kind
        if kind in ("pointer", "interface"):
            return value is None
        if kind in ("slice", "map", "bytes", "array", "string"):
            return value is None or len(value) == 0
        if kind in ("bool", "int", "uint", "float"):
            return not value
        return False

    def _is_zero(self, value: Any, t: TypeRef) -> bool:
        """encoding/json's ``omitzero`` test: the type's ``IsZero()`` or Go's zero value."""
        kind = t.kind
        if kind == "pointer":
            if value is None:
                return True
            assert t.elem is not None
            target = self._named(t.elem)
            return target is not None and target.has_is_zero and self._is_zero(value, t.elem)
        if kind == "special":
            if isinstance(value, _Quantity):
                return value.zero
            if isinstance(value, _Time):
                return value.text is None
            if isinstance(value, _IntOrString):
                return value == _IntOrString(False)
            if isinstance(value, _Raw):
                return value.value is _NO_RAW
            return False
        if kind == "struct":
            assert t.name is not None
            go_type = self.info.struct(t.name)
            if go_type.has_is_zero:
                raise RoundTripError(f"{t.name}.IsZero() is not modelled")
            return all(
                self._is_reflect_zero(value.fields[f.json], f.type)
                for f in go_type.fields
                if f.json in value.fields
            )
        return self._is_reflect_zero(value, t)

    def _is_reflect_zero(self, value: Any, t: TypeRef) -> bool:
        """``reflect.Value.IsZero``: nil, zero scalars, empty strings, all-zero structs."""
        kind = t.kind
        if kind in ("pointer", "slice", "map", "bytes", "interface"):
            return value is None
        if kind == "array":
            assert t.elem is not None
            return all(self._is_reflect_zero(v, t.elem) for v in value)
        if kind == "struct":
            assert t.name is not None
            go_type = self.info.struct(t.name)
            return all(
                self._is_reflect_zero(value.fields[f.json], f.type)
                for f in go_type.fields
                if f.json in value.fields
            )
        if kind == "special":
            if isinstance(value, _Quantity):
                return value.unset
            return self._is_zero(value, t)
        return not value

    def _named(self, t: TypeRef) -> GoType | None:
        return self.info.types.get(t.name) if t.name else None


# --------------------------------------------------------------------------- compiled
#
# A converter maps a JSON value to what Go writes back for it: the value decoded into a
# fresh zero value of its type, then encoded. It raises _Bail where it cannot vouch for
# the answer; go_roundtrip then asks _Reference, so errors and rare shapes behave alike.

Converter = Callable[[Any], Any]


class _Bail(Exception):
    """The compiled path leaves this value to the reference interpreter."""


def _bail(value: Any) -> Any:
    raise _Bail


_OMITTED = object()  # a struct field that omitempty/omitzero drops
_NO_FIELD = object()  # a field that is not written when absent


def _fresh(value: Any) -> Any:
    """A copy of compiled-in JSON (zero values), so results never share containers."""
    if type(value) is dict:
        return {k: _fresh(v) for k, v in value.items()}
    if type(value) is list:
        return [_fresh(v) for v in value]
    return value


def _omit_nil(value: Any, out: Any) -> bool:
    """``omitempty`` of a pointer or interface: nil, i.e. JSON ``null``."""
    return value is None


def _omit_empty(value: Any, out: Any) -> bool:
    """``omitempty`` of a scalar, string, slice, map or array: its JSON is falsy or ``null``."""
    return not out


@dataclass(slots=True)
class _Field:
    """A struct field as the compiled struct decoder sees it."""

    index: int  # declaration order, which is output order
    name: str
    convert: Converter
    omit: Callable[[Any, Any], bool] | None  # (JSON in, JSON out) -> dropped?
    same: type | None  # a JSON type that comes back unchanged (str for strings), or None


class _StructCodec:
    """A compiled struct: JSON object in, the JSON Go writes back out."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.exact: dict[str, _Field] = {}
        self.folded: dict[str, _Field] = {}
        self.names: list[str] = []
        # Fields written when absent, in order: (index, zero JSON, needs a fresh copy).
        self.defaults: list[tuple[int, Any, bool]] = []
        self.broken = False  # leave every value of this type to the reference

    def zero(self) -> dict[str, Any]:
        """The JSON of the zero struct (Go writes it for an absent or ``null`` value)."""
        if self.broken:
            raise _Bail
        names = self.names
        return {names[i]: _fresh(z) if copy else z for i, z, copy in self.defaults}

    def convert(self, value: Any) -> Any:
        if type(value) is not dict and not isinstance(value, Mapping):
            if value is None:
                return self.zero()  # null leaves the zero struct alone
            raise _Bail
        if self.broken:
            raise _Bail
        outs = self._convert_fields(value)
        for index, z, copy in self.defaults:
            if index not in outs:
                outs[index] = _fresh(z) if copy else z
        names = self.names
        result: dict[str, Any] = {}
        for index in sorted(outs):
            out = outs[index]
            if out is not _OMITTED:
                result[names[index]] = out
        return result

    def _convert_fields(self, value: Mapping[Any, Any]) -> dict[int, Any]:
        """Field index -> output JSON (or _OMITTED) for the fields ``value`` sets."""
        exact = self.exact
        outs: dict[int, Any] = {}
        for key, item in value.items():
            f = exact.get(key)
            if f is None:
                if not isinstance(key, str):
                    raise _Bail
                f = self.folded.get(_fold(key))
                if f is None:
                    continue  # unknown field: dropped
            if f.index in outs:
                raise _Bail  # matched twice: Go decodes into the first value
            out = item if type(item) is f.same else f.convert(item)
            omit = f.omit
            outs[f.index] = _OMITTED if omit is not None and omit(item, out) else out
        return outs


class _Compiler:
    """Converters for the types of one :class:`TypeInfo`, each built once."""

    def __init__(self, info: TypeInfo) -> None:
        self.info = info
        self.reference = _Reference(info)
        self._structs: dict[str, _StructCodec] = {}
        self._converters: dict[TypeRef, Converter] = {}
        self._roots: dict[str, _StructCodec] = {}  # complete: every codec they reach is
        self._lock = threading.Lock()

    def root(self, name: str) -> _StructCodec:
        """The compiled struct ``name``, ready for use; KeyError if it is unknown."""
        codec = self._roots.get(name)
        if codec is None:
            with self._lock:  # a codec is registered before its fields are filled in
                codec = self.struct(name)
            self._roots[name] = codec
        return codec

    def struct(self, name: str) -> _StructCodec:
        """The struct ``name``, compiled (with the lock held); KeyError if unknown."""
        codec = self._structs.get(name)
        if codec is None:
            go_type = self.info.struct(name)
            codec = self._structs[name] = _StructCodec(name)  # before fields: types recurse
            try:
                self._fill(codec, go_type)
            except (RoundTripError, KeyError):
                codec.broken = True  # the reference reports it where Go would
        return codec

    def _fill(self, codec: _StructCodec, go_type: GoType) -> None:
        names = [f.json for f in go_type.fields]
        if len(set(names)) != len(names) or any(f.embedded_pointer for f in go_type.fields):
            codec.broken = True
            return
        codec.names = names
        for index, f in enumerate(go_type.fields):
            conv, omit = self._field_converter(f), self._omit(f)
            entry = _Field(index, f.json, conv, omit, None if f.quoted else _SAME.get(f.type.kind))
            codec.exact[f.json] = entry
            codec.folded.setdefault(_fold(f.json), entry)
            absent = self._absent(f)
            if absent is not _NO_FIELD:
                codec.defaults.append((index, absent, isinstance(absent, (dict, list))))

    def _field_converter(self, f: GoField) -> Converter:
        return _bail if f.quoted else self.converter(f.type)

    def _absent(self, f: GoField) -> Any:
        """The JSON written for ``f`` when the object does not set it, or _NO_FIELD."""
        ref = self.reference
        zero = _zero(f.type)
        if f.omitempty and ref._is_empty(zero, f.type):
            return _NO_FIELD
        if f.omitzero and ref._is_zero(zero, f.type):
            return _NO_FIELD
        return ref.encode(zero, f.type)

    def _omit(self, f: GoField) -> Callable[[Any, Any], bool] | None:
        """The field's ``omitempty``/``omitzero`` test on (JSON in, JSON out)."""
        empty = self._omitempty(f.type) if f.omitempty else None
        if not f.omitzero:
            return empty
        zero = self._zero_test(f.type)
        if empty is None:
            return lambda value, out: zero(value)
        return lambda value, out: empty(value, out) or zero(value)

    @staticmethod
    def _omitempty(t: TypeRef) -> Callable[[Any, Any], bool] | None:
        kind = t.kind
        if kind in ("pointer", "interface"):
            return _omit_nil
        if kind in ("struct", "special"):
            return None  # never empty
        return _omit_empty

    def _zero_test(self, t: TypeRef) -> Callable[[Any], bool]:
        """``omitzero`` by the reference (rare: timestamps, a few Trainer structs)."""
        ref = self.reference

        def is_zero(value: Any) -> bool:
            try:
                return ref._is_zero(ref.decode(value, t, _zero(t), ()), t)
            except (RoundTripError, KeyError):
                raise _Bail from None

        return is_zero

    # ----------------------------------------------------------------- converters

    def converter(self, t: TypeRef) -> Converter:
        """The converter of values of type ``t`` (built once per type)."""
        conv = self._converters.get(t)
        if conv is None:
            conv = self._converters[t] = self._build(t)
        return conv

    def _build(self, t: TypeRef) -> Converter:
        kind = t.kind
        if kind == "struct" and t.name is not None:
            try:
                return self.struct(t.name).convert
            except KeyError:
                return _bail
        if kind in ("pointer", "slice", "array", "map") and t.elem is not None:
            elem = self.converter(t.elem)
            if kind == "pointer":
                return _pointer(elem)
            if kind == "slice":
                return _slice(elem)
            if kind == "array" and t.length is not None:
                return _array(elem, t.length, self.reference.encode(_zero(t), t))
            if kind == "map" and t.key is not None and t.key.kind == "string":
                return _map(elem)
            return _null_only(None)
        if kind in _SCALARS:
            return _SCALARS[kind](t)
        if kind == "interface":
            return _interface(self.reference) if t.empty_interface else _null_only(None)
        if kind == "special" and t.special in _SPECIALS:
            return _SPECIALS[t.special]
        return _bail


def _null_only(zero: Any) -> Converter:
    """A type that Go only accepts ``null`` for (others are errors for the reference)."""

    def convert(value: Any) -> Any:
        if value is None:
            return zero
        raise _Bail

    return convert


def _pointer(elem: Converter) -> Converter:
    def convert(value: Any) -> Any:
        return None if value is None else elem(value)

    return convert


def _slice(elem: Converter) -> Converter:
    def convert(value: Any) -> Any:
        if type(value) is list or isinstance(value, (list, tuple)):
            return [elem(item) for item in value]
        if value is None:
            return None
        raise _Bail

    return convert


def _array(elem: Converter, length: int, zero: list[Any]) -> Converter:
    def convert(value: Any) -> Any:
        if isinstance(value, (list, tuple)):
            out = [elem(item) for item in value[:length]]
            return out + _fresh(zero[len(out) :])
        if value is None:
            return _fresh(zero)
        raise _Bail

    return convert


def _map(elem: Converter) -> Converter:
    def convert(value: Any) -> Any:
        if type(value) is dict or isinstance(value, Mapping):
            out = {key: elem(item) for key, item in value.items()}
            try:
                keys = sorted(out)
            except TypeError:
                raise _Bail from None
            return {key: out[key] for key in keys}
        if value is None:
            return None
        raise _Bail

    return convert


def _interface(reference: _Reference) -> Converter:
    def convert(value: Any) -> Any:
        if value is None:
            return None
        _json_data(value)
        return reference._plain(value)

    return convert


def _json_data(value: Any) -> None:
    """Bail on what is not JSON data (the reference reports it)."""
    if not isinstance(value, (str, int, float, list, tuple, Mapping)):
        raise _Bail


def _string(t: TypeRef) -> Converter:
    def convert(value: Any) -> Any:
        if type(value) is str or isinstance(value, str):
            return value
        if value is None:
            return ""
        raise _Bail

    return convert


def _bool(t: TypeRef) -> Converter:
    def convert(value: Any) -> Any:
        if value is True or value is False:
            return value
        if value is None:
            return False
        raise _Bail

    return convert


def _integer(t: TypeRef) -> Converter:
    bits = t.bits or 64
    lo, hi = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if t.kind == "int" else (0, 2**bits - 1)

    def convert(value: Any) -> Any:
        if type(value) is int or (isinstance(value, int) and not isinstance(value, bool)):
            if lo <= value <= hi:
                return value
            raise _Bail
        if value is None:
            return 0
        raise _Bail

    return convert


def _float(t: TypeRef) -> Converter:
    single = t.bits == 32

    def convert(value: Any) -> Any:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            try:
                number = float(value)
                if single:
                    number = struct.unpack("f", struct.pack("f", number))[0]
            except OverflowError:
                raise _Bail from None
            return _go_float(number)
        if value is None:
            return 0
        raise _Bail

    return convert


def _bytes(t: TypeRef) -> Converter:
    def convert(value: Any) -> Any:
        if isinstance(value, str):
            cleaned = value.replace("\r", "").replace("\n", "")
            try:
                data = base64.b64decode(cleaned, validate=True)
            except (binascii.Error, ValueError):
                raise _Bail from None
            return base64.b64encode(data).decode("ascii")
        if value is None:
            return None
        raise _Bail

    return convert


_SCALARS: dict[str, Callable[[TypeRef], Converter]] = {
    "string": _string,
    "bool": _bool,
    "int": _integer,
    "uint": _integer,
    "float": _float,
    "bytes": _bytes,
}

_SAME: dict[str, type] = {"string": str, "bool": bool}  # the JSON type kept as it is

_QUANTITIES: dict[Any, str] = {}  # canonical text of the strings and ints seen


def _quantity(value: Any) -> Any:
    if value is None:
        return "0"
    cacheable = type(value) is str or type(value) is int
    text = _QUANTITIES.get(value) if cacheable else None
    if text is None:
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            raise _Bail
        try:
            text = Quantity.from_manifest(value).canonical()
        except QuantityError:
            raise _Bail from None
        if cacheable:
            if len(_QUANTITIES) >= 4096:
                _QUANTITIES.clear()
            _QUANTITIES[value] = text
    return text


def _int_or_string(value: Any) -> Any:
    if type(value) is str or isinstance(value, str):
        return value
    if value is None:
        return 0
    if isinstance(value, int) and not isinstance(value, bool) and -(2**31) <= value < 2**31:
        return value
    raise _Bail


def _time(value: Any) -> Any:
    if value is None:
        return None
    if not isinstance(value, str):
        raise _Bail
    try:
        return _time_text(value, ())
    except RoundTripError:
        raise _Bail from None


def _raw(value: Any) -> Any:
    if value is not None:
        _json_data(value)
    return value  # kept verbatim (the same object, as the reference does)


_SPECIALS: dict[str, Converter] = {
    "resource.Quantity": _quantity,
    "intstr.IntOrString": _int_or_string,
    "metav1.Time": _time,
    "metav1.FieldsV1": _raw,
    "runtime.RawExtension": _raw,
}
