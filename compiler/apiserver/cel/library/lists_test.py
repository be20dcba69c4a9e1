"""The lists library: values and errors as the API server has them."""

from __future__ import annotations

from typing import Any

from compiler.apiserver.cel.cases_test import error_test, value_test

VALUES: list[tuple[str, Any]] = [
    ("[1, 2, 3].isSorted()", True),
    ("[3, 1].isSorted()", False),
    ('["a", "b"].isSorted()', True),
    ("[1, 2, 3].sum()", 6),
    ("[1.5, 2.5].sum()", 4.0),
    ("[3, 1, 2].min()", 1),
    ('["b", "c", "a"].max()', "c"),
    ("[1, 2, 3, 2].indexOf(2)", 1),
    ("[1, 2, 3, 2].lastIndexOf(2)", 3),
    ("[[1], [2]].indexOf([2])", 1),
    ("[1, 2].indexOf(5)", -1),
    ("self.indexOf(2)", 1),
]


test_values = value_test(VALUES, self_value=[1, 2, 3])


ERRORS: list[tuple[str, str]] = [
    ("[].min()", "min called on empty list"),
    ("[].max()", "max called on empty list"),
    ("[1, 'a'].isSorted()", "no such overload"),
]


test_errors = error_test(ERRORS)
