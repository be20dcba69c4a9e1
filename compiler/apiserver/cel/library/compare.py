"""``compareTo``, ``isLessThan`` and ``isGreaterThan`` at run time, for quantity and semver.

Kubernetes declares these separately in quantity.go and semverlib.go, and so does the
type-checking environment here (in :mod:`~compiler.apiserver.cel.library.quantity` and
:mod:`~compiler.apiserver.cel.library.semver`). In the run environment a Quantity and a
Semver are both a ``map(dyn, dyn)``, so the two libraries' overloads would have the same
signature: one overload of each function serves both, choosing by the value's tag.
"""

from __future__ import annotations

from typing import Any

from compiler.apiserver.cel.library.declarations import Implementation, RunTypes
from compiler.apiserver.cel.library.quantity import decode_quantity
from compiler.apiserver.cel.library.semver import decode_semver
from compiler.apiserver.cel.library.values import LibraryError, kind_of


def implementations(types: RunTypes) -> list[Implementation]:
    T, M = types.cel, types.map
    return [
        Implementation("compareTo", "k8s_compare_to", [M, M], T.INT, _impl_compare_to, member=True),
        Implementation(
            "isLessThan", "k8s_is_less_than", [M, M], T.BOOL, _impl_is_less_than, member=True
        ),
        Implementation(
            "isGreaterThan",
            "k8s_is_greater_than",
            [M, M],
            T.BOOL,
            _impl_is_greater_than,
            member=True,
        ),
    ]


def _compare(value: Any, other: Any) -> int:
    kind = kind_of(value)
    if kind == "Quantity" and kind_of(other) == "Quantity":
        return decode_quantity(value).cmp(decode_quantity(other))
    if kind == "Semver" and kind_of(other) == "Semver":
        return decode_semver(value).compare(decode_semver(other))
    raise LibraryError("no such overload")


def _impl_compare_to(value: Any, other: Any) -> int:
    return _compare(value, other)


def _impl_is_less_than(value: Any, other: Any) -> bool:
    return _compare(value, other) == -1


def _impl_is_greater_than(value: Any, other: Any) -> bool:
    return _compare(value, other) == 1
