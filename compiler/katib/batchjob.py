"""Katib's check of a batch/v1 Job trial template (v0.19.0 ``validateTrialJob``): the
template, every trial parameter replaced by ``test-value``, must convert to Go's
``batchv1.Job`` (``runtime.DefaultUnstructuredConverter.FromUnstructured``), and the
converted Job must keep every field the template wrote (a JSON patch from the converted
Job back to the template may only remove fields, or touch resources).

The conversion walks the Job's Go fields in declaration order, as the converter does; a
field trainc knows no Go type for (``typeinfo``) is taken as converting, and of the types
with their own JSON decoding only quantities and int-or-strings are checked. Of several
fields the converted Job drops, Katib names one picked by Go's map order, which is
random; trainc names the first in the template's order.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from compiler.kube.gotext import go_json, layout, shortest_digits
from compiler.kube.quantity import Quantity, QuantityError
from compiler.kube.roundtrip import RoundTripError, go_roundtrip
from compiler.upstream.typeinfo import TypeInfo, TypeRef, typeinfo

__all__ = ["batch_job_problem", "go_value"]

JOB_TYPE = "io.k8s.api.batch.v1.Job"
_INTS = ("int", "uint")


def go_value(value: Any) -> str:
    """``fmt``'s ``%v`` of a decoded JSON value (maps with sorted keys).

    >>> go_value({"b": [1, "x", True], "a": {"c": 0.5, "d": None}, "e": 1e6})
    'map[a:map[c:0.5 d:<nil>] b:[1 x true] e:1e+06]'
    """
    if value is None:
        return "<nil>"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value == 0 or not math.isfinite(value):
            return "0" if value == 0 else str(value)
        digits, exp = shortest_digits(value)
        # %v: shortest digits, %e form when the exponent is < -4 or >= 6 (strconv's 'g'
        # with the shortest precision)
        return layout("-" if value < 0 else "", digits, exp, low=-4, high=6, exponent_digits=2)
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_value(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(go_value(v) for v in value) + "]"
    return str(value)


def _source_kind(value: Any) -> str:
    """The Go kind of an unstructured value."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "slice"
    return "map"


def _kind_name(ref: TypeRef) -> str:
    """``reflect.Kind`` of a scalar Go type (``int32``, ``string``, ...)."""
    if ref.kind in ("int", "uint", "float"):
        return f"{ref.kind}{ref.bits or ''}" if ref.kind != "float" else f"float{ref.bits}"
    return ref.kind


def _scalar(value: Any, ref: TypeRef) -> str | None:
    """``fromUnstructured`` into a bool, number or string type: None, or its error."""
    source = _source_kind(value)
    target = _kind_name(ref)
    type_name = (ref.go_type or target).rsplit("/", 1)[-1]  # reflect's v1.PullPolicy
    if source in ("slice", "map"):
        return f"unrecognized type: {target}"
    if source == target and type_name == target:
        return None  # assignable
    groups = {"bool": "bool", "string": "string", "int64": "int", "float64": "float"}
    wanted = {"bool": "bool", "string": "string", "int": "int", "uint": "int", "float": "float"}
    group, into = groups[source], wanted.get(ref.kind, ref.kind)
    convertible = group == into or (group in ("int", "float") and into in ("int", "float"))
    convertible = convertible or (group == "int" and into == "string")  # Go: int -> string
    if not convertible:
        return f"unrecognized type: {target}"
    if group == into and group in ("bool", "string", "int", "float"):
        return None
    if group == "int" and into == "float":
        return None
    if group == "float" and into == "int" and float(value) == math.trunc(float(value)):
        return None
    return f"cannot convert {source} to {type_name}"


def _convert(value: Any, ref: TypeRef, info: TypeInfo) -> str | None:
    """The converter's first error for ``value`` into ``ref``, or None."""
    if value is None:
        return None
    if ref.kind == "pointer":
        assert ref.elem is not None
        return _convert(value, ref.elem, info)
    if ref.kind == "special":
        return _special(value, ref.special or "")
    if ref.kind in ("interface", "bytes"):
        return None  # taken as converting (see the module's note)
    if ref.kind in ("slice", "array"):
        if not isinstance(value, list):
            return f"cannot restore slice from {_source_kind(value)}"
        assert ref.elem is not None
        for item in value:
            found = _convert(item, ref.elem, info)
            if found:
                return found
        return None
    if ref.kind == "map":
        if not isinstance(value, dict):
            return f"cannot restore map from {_source_kind(value)}"
        assert ref.elem is not None
        for key in sorted(value):
            found = _convert(value[key], ref.elem, info)
            if found:
                return found
        return None
    if ref.kind == "struct":
        if not isinstance(value, dict):
            return f"cannot restore struct from: {_source_kind(value)}"
        assert ref.name is not None
        return _struct(value, ref.name, info)
    return _scalar(value, ref)


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return f"number {go_json(value)}"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else "null"


def _special(value: Any, special: str) -> str | None:
    """A type with its own JSON decoding (its ``UnmarshalJSON`` on the value's JSON)."""
    if special == "resource.Quantity" and isinstance(value, str):
        try:
            Quantity.parse(value)
        except QuantityError as error:
            return str(error)
    if special == "intstr.IntOrString" and not isinstance(value, str):
        if isinstance(value, int) and not isinstance(value, bool) and -(2**31) <= value < 2**31:
            return None
        return f"json: cannot unmarshal {_json_kind(value)} into Go value of type int32"
    return None  # other forms and types: taken as converting (see the module's note)


def _struct(value: dict[str, Any], name: str, info: TypeInfo) -> str | None:
    try:
        struct = info.struct(name)
    except KeyError:
        return None
    for go_field in struct.fields:
        if go_field.json in value:
            found = _convert(value[go_field.json], go_field.type, info)
            if found:
                return found
    return None


def _pointer(path: tuple[str | int, ...]) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def _kept(template: Any, converted: Any, path: tuple[str | int, ...] = ()) -> Iterator[Any]:
    """Each (path, value) the template has and the converted Job lacks or changed: the
    patch's operations other than ``remove``, in the template's order."""
    if isinstance(template, dict) and isinstance(converted, dict):
        for key, item in template.items():
            if key not in converted:
                yield (*path, key), item
            else:
                yield from _kept(item, converted[key], (*path, key))
    elif isinstance(template, list) and isinstance(converted, list):
        if len(template) != len(converted):
            yield path, template
            return
        for index, (a, b) in enumerate(zip(template, converted, strict=True)):
            yield from _kept(a, b, (*path, index))
    elif not _same(template, converted):
        yield path, template


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return float(a) == float(b)
    return bool(a == b)


def batch_job_problem(run_spec: dict[str, Any]) -> str | None:
    """Why Katib's webhook cannot take ``run_spec`` (the substituted template) as a batch
    Job: the text after ``invalid spec.trialTemplate: ``; None when it can, or when it is
    no batch/v1 Job (Katib checks no other kind)."""
    if run_spec.get("apiVersion") != "batch/v1" or run_spec.get("kind") != "Job":
        return None
    info = typeinfo()
    problem = _struct(run_spec, JOB_TYPE, info)
    if problem:
        return f"unable to convert spec.TrialTemplate: {go_value(run_spec)} to Job: {problem}"
    try:
        converted = go_roundtrip(run_spec, JOB_TYPE)
    except RoundTripError:
        return None  # a value trainc's conversion does not model: taken as converting
    for path, value in _kept(run_spec, converted):
        text = _pointer(path)
        if "/resources/limits/" in text or "/resources/requests/" in text:
            continue
        return (
            f"unable to convert: {text} - {go_value(value)} to Job, converted template: "
            f"{go_json(converted, sort_keys=False)}"
        )
    return None
