"""The Kubernetes lists library (k8s.io/apiserver ``pkg/cel/library/lists.go``).

``isSorted``, ``sum``, ``min``, ``max``, ``indexOf`` and ``lastIndexOf`` on lists. The
type check has one overload per element type, as the API server does; the run
environment has one over ``list(dyn)`` that checks the elements itself, so a ``uint``
list's ``sum()``, ``min()`` and ``max()`` come out as an ``int``.

``indexOf`` and ``lastIndexOf`` also exist for strings (cel-go's strings extension), and
the engine cannot add list overloads to those: the expression that runs calls
``k8s_indexOf``/``k8s_lastIndexOf`` (see :mod:`compiler.apiserver.cel.k8s`), declared here
for both receivers, a string going to :mod:`~compiler.apiserver.cel.library.strings`.
"""

from __future__ import annotations

import datetime as _dt
import itertools
from collections.abc import Callable
from typing import Any, Final

from compiler.apiserver.cel.library import strings
from compiler.apiserver.cel.library.declarations import (
    BOOL,
    BYTES,
    DBL,
    DUR,
    INT,
    STR,
    TS,
    UINT,
    A,
    Declaration,
    Implementation,
    RunTypes,
    t,
)
from compiler.apiserver.cel.library.values import INT64_MAX, INT64_MIN, LibraryError

_COMPARABLE: Final = {
    "int": INT,
    "uint": UINT,
    "double": DBL,
    "bool": BOOL,
    "duration": DUR,
    "timestamp": TS,
    "string": STR,
    "bytes": BYTES,
}
_SUMMABLE: Final = {"int": INT, "uint": UINT, "double": DBL, "duration": DUR}


def declarations() -> list[Declaration]:
    out = [
        # added to the string overloads the strings module declares first
        Declaration("indexOf", "list_a_index_of_int", [A], INT, t("list", A)),
        Declaration("lastIndexOf", "list_a_last_index_of_int", [A], INT, t("list", A)),
    ]
    for name, spec in _COMPARABLE.items():
        listed = t("list", spec)
        out += [
            Declaration("isSorted", f"list_{name}_is_sorted_bool", [], BOOL, listed),
            Declaration("max", f"list_{name}_max_{name}", [], spec, listed),
            Declaration("min", f"list_{name}_min_{name}", [], spec, listed),
        ]
    out += [
        Declaration("sum", f"list_{name}_sum_{name}", [], spec, t("list", spec))
        for name, spec in _SUMMABLE.items()
    ]
    return out


def implementations(types: RunTypes) -> list[Implementation]:
    T, L = types.cel, types.list
    S = T.STRING
    element_kinds = {
        "int": T.INT,
        "uint": T.UINT,
        "double": T.DOUBLE,
        "bool": T.BOOL,
        "string": T.STRING,
        "bytes": T.BYTES,
        "null": T.NULL,
        "timestamp": T.TIMESTAMP,
        "duration": T.DURATION,
        "map": types.map,
        "list": L,
    }
    out = [
        Implementation("isSorted", "k8s_is_sorted", [L], T.BOOL, _impl_is_sorted, member=True),
        Implementation("sum", "k8s_sum", [L], T.DYN, _impl_sum, member=True),
        Implementation("min", "k8s_min", [L], T.DYN, _extreme("min", 1), member=True),
        Implementation("max", "k8s_max", [L], T.DYN, _extreme("max", -1), member=True),
    ]
    for name, impl in (("k8s_indexOf", _impl_index_of), ("k8s_lastIndexOf", _impl_last_index_of)):
        out += [
            Implementation(name, f"{name}_string", [S, S], T.INT, impl, member=True),
            Implementation(name, f"{name}_string_int", [S, S, T.INT], T.INT, impl, member=True),
        ]
        out += [
            Implementation(name, f"{name}_list_{kind}", [L, kind_type], T.INT, impl, member=True)
            for kind, kind_type in element_kinds.items()
        ]
    return out


def _cel_equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, bytes | bytearray) and isinstance(b, bytes | bytearray):
        return bytes(a) == bytes(b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_cel_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        if len(a) != len(b):
            return False
        for key, value in a.items():
            match = next((k for k in b if _cel_equal(k, key)), _MISSING)
            if match is _MISSING or not _cel_equal(value, b[match]):
                return False
        return True
    if type(a) is not type(b):
        return False
    return bool(a == b)


_MISSING: Any = object()


def _impl_index_of(container: Any, item: Any, offset: Any = None) -> int:
    if isinstance(container, str):
        if not isinstance(item, str):
            raise LibraryError("no such overload")
        return strings.index_of(container, item, offset)
    if isinstance(container, list) and offset is None:
        for index, element in enumerate(container):
            if _cel_equal(element, item):
                return index
        return -1
    raise LibraryError("no such overload")


def _impl_last_index_of(container: Any, item: Any, offset: Any = None) -> int:
    if isinstance(container, str):
        if not isinstance(item, str):
            raise LibraryError("no such overload")
        return strings.last_index_of(container, item, offset)
    if isinstance(container, list) and offset is None:
        for index in range(len(container) - 1, -1, -1):
            if _cel_equal(container[index], item):
                return index
        return -1
    raise LibraryError("no such overload")


def _comparable_key(value: Any) -> tuple[int, Any]:
    if isinstance(value, bool):
        return (0, value)
    if isinstance(value, int | float):
        return (1, value)
    if isinstance(value, str):
        return (2, value)
    if isinstance(value, bytes | bytearray):
        return (3, bytes(value))
    if isinstance(value, _dt.timedelta):
        return (4, value)
    if isinstance(value, _dt.datetime):
        return (5, value)
    raise LibraryError("no such overload")


def _cel_compare(a: Any, b: Any) -> int:
    ka, kb = _comparable_key(a), _comparable_key(b)
    if ka[0] != kb[0]:
        raise LibraryError("no such overload")
    if ka[1] == kb[1]:
        return 0
    return -1 if ka[1] < kb[1] else 1


def _impl_is_sorted(values: list[Any]) -> bool:
    for previous, current in itertools.pairwise(values):
        if _cel_compare(previous, current) == 1:
            return False
    if len(values) == 1:
        _comparable_key(values[0])
    return True


def _impl_sum(values: list[Any]) -> Any:
    if not values:
        return 0
    total = values[0]
    _sum_key(total)
    for value in values[1:]:
        if _sum_key(value) != _sum_key(total):
            raise LibraryError("no such overload")
        total = total + value
        if isinstance(total, int) and not INT64_MIN <= total <= INT64_MAX:
            raise LibraryError("integer overflow")
    return total


def _sum_key(value: Any) -> int:
    if isinstance(value, bool):
        raise LibraryError("no such overload")
    if isinstance(value, int):
        return 0
    if isinstance(value, float):
        return 1
    if isinstance(value, _dt.timedelta):
        return 2
    raise LibraryError("no such overload")


def _extreme(name: str, prefer: int) -> Callable[[list[Any]], Any]:
    def pick(values: list[Any]) -> Any:
        if not values:
            raise LibraryError(f"{name} called on empty list")
        result = values[0]
        _comparable_key(result)
        for value in values[1:]:
            if _cel_compare(result, value) == prefer:
                result = value
        return result

    return pick
