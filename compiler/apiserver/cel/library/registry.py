"""The libraries gathered, in a fixed order, into the two environments' functions.

The order is fixed so that both environments are declared the same way every time. A
function several libraries extend (``string``, ``ip``, ``indexOf``, ``isLessThan``...)
keeps the place where it first appears, and its overloads follow the libraries' order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Final

from compiler.apiserver.cel.library import (
    cidr,
    compare,
    format,
    ip,
    lists,
    maps,
    quantity,
    regex,
    semver,
    strings,
    urls,
)
from compiler.apiserver.cel.library.declarations import (
    Declaration,
    Implementation,
    RunTypes,
)
from compiler.apiserver.cel.library.values import LibraryError

_DECLARED: Final[tuple[Callable[[], list[Declaration]], ...]] = (
    strings.declarations,
    quantity.declarations,
    semver.declarations,
    urls.declarations,
    regex.declarations,
    lists.declarations,
    ip.declarations,
    cidr.declarations,
    format.declarations,
)
_IMPLEMENTED: Final[tuple[Callable[[RunTypes], list[Implementation]], ...]] = (
    quantity.implementations,
    compare.implementations,  # quantity's and semver's compareTo, isLessThan, isGreaterThan
    semver.implementations,
    urls.implementations,
    regex.implementations,
    lists.implementations,
    ip.implementations,
    cidr.implementations,
    format.implementations,
    maps.implementations,  # trainc's own: the map-building macros' run copy
)


def check_functions() -> list[dict[str, Any]]:
    """The ``functions`` of the type-checking environment's config."""
    functions: dict[str, list[dict[str, Any]]] = {}
    for declarations in _DECLARED:
        for declaration in declarations():
            functions.setdefault(declaration.name, []).append(declaration.overload())
    return [{"name": name, "overloads": overloads} for name, overloads in functions.items()]


def run_functions(cel: Any) -> list[Any]:
    """The functions of the run environment, as the engine's ``FunctionDecl`` values."""
    types = RunTypes.of(cel.Type)
    decls: dict[str, list[Any]] = {}
    for implementations in _IMPLEMENTED:
        for i in implementations(types):
            decls.setdefault(i.name, []).append(
                cel.Overload(
                    i.id,
                    return_type=i.ret,
                    parameters=list(i.params),
                    is_member=i.member,
                    impl=_guard(i.impl),
                )
            )
    return [cel.FunctionDecl(name, overloads) for name, overloads in decls.items()]


def _guard(function: Callable[..., Any]) -> Callable[..., Any]:
    """Turn a Python failure into a CEL error value with the API server's text."""

    def call(*args: Any) -> Any:
        try:
            return function(*args)
        except LibraryError:
            raise
        except (ArithmeticError, ValueError, TypeError, KeyError, IndexError) as error:
            raise LibraryError(str(error) or type(error).__name__) from None

    return call


def iter_library_functions() -> Iterator[str]:
    """The library function names the type-checking environment declares (for docs/tests)."""
    for function in check_functions():
        yield str(function["name"])
