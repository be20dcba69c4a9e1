"""The Kubernetes quantity library (k8s.io/apiserver ``pkg/cel/library/quantity.go``).

``quantity("1.5Gi")`` is a ``kubernetes.Quantity`` with Go's ``resource.Quantity``
behaviour, through :mod:`compiler.kube.quantity`. That includes how Go holds the value,
which ``isInteger`` and ``asInteger`` expose: ``quantity("1.5Gi").isInteger()`` is false
in Go, because the value is not an int64 at scale 0. ``compareTo``, ``isLessThan`` and
``isGreaterThan`` run in :mod:`~compiler.apiserver.cel.library.compare`, shared with
semver.
"""

from __future__ import annotations

import math
from typing import Any, Final

from compiler.apiserver.cel.library.declarations import (
    BOOL,
    DBL,
    INT,
    QUANTITY,
    STR,
    Declaration,
    Implementation,
    RunTypes,
)
from compiler.apiserver.cel.library.values import (
    INT64_MAX,
    INT64_MIN,
    LibraryError,
    tagged,
    untag,
)
from compiler.kube.quantity import Format, Quantity, QuantityError


def declarations() -> list[Declaration]:
    q = QUANTITY
    return [
        Declaration("quantity", "string_to_quantity", [STR], q),
        Declaration("isQuantity", "is_quantity_string", [STR], BOOL),
        Declaration("sign", "quantity_sign", [q], INT),
        Declaration("isGreaterThan", "quantity_is_greater_than", [q], BOOL, q),
        Declaration("isLessThan", "quantity_is_less_than", [q], BOOL, q),
        Declaration("compareTo", "quantity_compare_to", [q], INT, q),
        Declaration("asApproximateFloat", "quantity_get_float", [], DBL, q),
        Declaration("asInteger", "quantity_get_int", [], INT, q),
        Declaration("isInteger", "quantity_is_integer", [], BOOL, q),
        Declaration("add", "quantity_add", [q], q, q),
        Declaration("add", "quantity_add_int", [INT], q, q),
        Declaration("sub", "quantity_sub", [q], q, q),
        Declaration("sub", "quantity_sub_int", [INT], q, q),
    ]


def implementations(types: RunTypes) -> list[Implementation]:
    T, M = types.cel, types.map
    return [
        Implementation("quantity", "k8s_string_to_quantity", [T.STRING], M, _impl_quantity),
        Implementation("isQuantity", "k8s_is_quantity", [T.STRING], T.BOOL, _impl_is_quantity),
        Implementation("sign", "k8s_quantity_sign", [M], T.INT, _impl_sign),
        Implementation(
            "asApproximateFloat",
            "k8s_quantity_float",
            [M],
            T.DOUBLE,
            _impl_approximate_float,
            member=True,
        ),
        Implementation("asInteger", "k8s_quantity_int", [M], T.INT, _impl_as_integer, member=True),
        Implementation(
            "isInteger", "k8s_quantity_is_int", [M], T.BOOL, _impl_is_integer, member=True
        ),
        Implementation("add", "k8s_quantity_add", [M, M], M, _impl_add, member=True),
        Implementation("add", "k8s_quantity_add_int", [M, T.INT], M, _impl_add, member=True),
        Implementation("sub", "k8s_quantity_sub", [M, M], M, _impl_sub, member=True),
        Implementation("sub", "k8s_quantity_sub_int", [M, T.INT], M, _impl_sub, member=True),
    ]


# A quantity is {tag, "v": exact value, "s": state}. Go compares quantities by value
# (1000m == 1), but isInteger/asInteger/asApproximateFloat/add see how Go holds the value
# (int64 mantissa and scale, or inf.Dec). "v" carries the value in one canonical
# spelling; "s" carries the scale and representation as a list of zeros, each an int
# (bit 0) or a double (bit 1): CEL's numeric equality makes all such lists equal, so two
# quantities compare equal exactly when their values do.

_STATE_BITS: Final = 33


def _internals(q: Quantity) -> tuple[int, int, bool]:
    # value = m * 10**e; big: held as inf.Dec by Go (see compiler.kube.quantity)
    return q._m, q._e, q.is_big


def _encode_quantity(q: Quantity) -> dict[str, Any]:
    m, e, big = _internals(q)
    vm, ve = m, e
    if vm == 0:
        ve = 0
    else:
        while vm % 10 == 0:
            vm //= 10
            ve += 1
    state = ((e + (1 << 31)) & 0xFFFFFFFF) << 1 | int(big)
    bits: list[int | float] = [0.0 if state >> index & 1 else 0 for index in range(_STATE_BITS)]
    return tagged("Quantity", v=f"{vm}e{ve}", s=bits)


def decode_quantity(value: Any) -> Quantity:
    data = untag(value, "Quantity")
    text = str(data.get("v", "0e0"))
    vm_text, _, ve_text = text.partition("e")
    vm, ve = int(vm_text), int(ve_text)
    bits = data.get("s") or []
    state = 0
    for index, bit in enumerate(bits[:_STATE_BITS]):
        if isinstance(bit, float):
            state |= 1 << index
    big = bool(state & 1)
    e = (state >> 1) - (1 << 31)
    m = vm * 10 ** (ve - e) if vm and ve >= e else vm
    if vm == 0:
        m = 0
    return Quantity(m, e, big=big, fmt=Format.DECIMAL_SI)


def _parse_quantity(text: str) -> Quantity:
    try:
        return Quantity.parse(text)
    except QuantityError as error:
        raise LibraryError(str(error)) from None


def _as_int64(q: Quantity) -> int | None:
    m, e, big = _internals(q)
    if big:
        return None
    if e == 0:
        return m
    if e < 0:
        return None
    if m == 0:
        return 0
    if e > 19:
        return None
    value = m * 10**e
    return value if INT64_MIN <= value <= INT64_MAX else None


def _pow10(n: int) -> float:
    if n < -323:
        return 0.0
    if n > 308:
        return math.inf
    if n >= 0:
        return float(10**n)
    return 1.0 / float(10**-n)


def _approximate_float(q: Quantity) -> float:
    m, e, _ = _internals(q)
    try:
        base = float(m)
    except OverflowError:
        base = math.inf if m > 0 else -math.inf
    if e == 0:
        return base
    return base * _pow10(e)


def _impl_quantity(text: str) -> dict[str, Any]:
    return _encode_quantity(_parse_quantity(text))


def _impl_is_quantity(text: str) -> bool:
    try:
        Quantity.parse(text)
    except QuantityError:
        return False
    return True


def _impl_sign(value: Any) -> int:
    return decode_quantity(value).sign()


def _impl_as_integer(value: Any) -> int:
    result = _as_int64(decode_quantity(value))
    if result is None:
        raise LibraryError("cannot convert value to integer")
    return result


def _impl_is_integer(value: Any) -> bool:
    return _as_int64(decode_quantity(value)) is not None


def _impl_approximate_float(value: Any) -> float:
    return _approximate_float(decode_quantity(value))


def _impl_add(value: Any, other: Any) -> dict[str, Any]:
    q = decode_quantity(value)
    y = decode_quantity(other) if isinstance(other, dict) else _int_quantity(other)
    return _encode_quantity(q.add(y))


def _impl_sub(value: Any, other: Any) -> dict[str, Any]:
    q = decode_quantity(value)
    y = decode_quantity(other) if isinstance(other, dict) else _int_quantity(other)
    return _encode_quantity(q.add(y.neg()))


def _int_quantity(value: Any) -> Quantity:
    if not isinstance(value, int) or isinstance(value, bool):
        raise LibraryError("no such overload")
    return Quantity.of_int(value, Format.DECIMAL_EXPONENT)
