"""trainc's own run-side function for the map-building macros.

``transformMap`` and ``transformMapEntry`` (cel-go's two-variable comprehensions, which
the API server has) expand to ``cel.@mapInsert``, which cel-expr-python 0.1.3 declares
but cannot run. The run copy of an expression builds the entries as a list instead
(:func:`compiler.apiserver.cel.syntax.map_building_macros`), and
:data:`~compiler.apiserver.cel.syntax.MAP_OF_ENTRIES` makes the map, inserting each
entry as cel-go's mutable map does: a key given twice is the error
``insert failed: key <key> already exists``, the key written as Go's ``%v`` writes a
CEL value (a string bare, a bool ``true``).

Only the run environment declares it: an expression that names it is refused by the
type check, as the API server refuses an unknown function. The entries pass through
Python as plain values, as every value the run copy's functions see: a ``uint`` comes
back an ``int``, and a map cannot hold both ``true`` and ``1`` as keys (an error here).
"""

from __future__ import annotations

from typing import Any

from compiler.apiserver.cel.library.declarations import Implementation, RunTypes
from compiler.apiserver.cel.library.values import LibraryError
from compiler.apiserver.cel.syntax import MAP_OF_ENTRIES


def implementations(types: RunTypes) -> list[Implementation]:
    return [Implementation(MAP_OF_ENTRIES, MAP_OF_ENTRIES, [types.list], types.map, map_of_entries)]


def map_of_entries(entries: list[Any]) -> dict[Any, Any]:
    """One map of the maps ``entries``, in order; a key met twice is an error.

    >>> map_of_entries([{"a": 1}, {"b": 2}])
    {'a': 1, 'b': 2}
    >>> map_of_entries([{True: 0}, {True: 1}])
    Traceback (most recent call last):
    ...
    compiler.apiserver.cel.library.values.LibraryError: insert failed: key true already exists
    """
    out: dict[Any, Any] = {}
    kinds: dict[Any, type] = {}  # CEL keeps true and 1 apart; a Python dict does not
    for entry in entries:
        for key, value in entry.items():
            if key in out:
                if kinds[key] is type(key):
                    raise LibraryError(f"insert failed: key {_go_value(key)} already exists")
                raise LibraryError("a map with both bool and int keys: trainc engine limitation")
            out[key] = value
            kinds[key] = type(key)
    return out


def _go_value(key: Any) -> str:
    """A map key as Go's ``%v`` writes the CEL value: ``a``, ``1``, ``true``."""
    if isinstance(key, bool):
        return "true" if key else "false"
    return str(key)
