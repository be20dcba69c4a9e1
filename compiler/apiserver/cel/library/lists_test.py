"""The lists library: values and errors as the API server has them."""

from __future__ import annotations

from typing import Any

import pytest

from compiler.apiserver.cel.engine import CelEvalError
from compiler.apiserver.cel.k8s import k8s_engine

_VARS = {"self": "dyn"}


def _eval(source: str, value: Any = None) -> Any:
    return k8s_engine().compile(source, _VARS).evaluate({"self": value})  # type: ignore[arg-type]


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


@pytest.mark.parametrize(("source", "expected"), VALUES)
def test_values(source: str, expected: Any) -> None:
    result = _eval(source, [1, 2, 3])
    assert result == expected
    assert type(result) is type(expected)


ERRORS: list[tuple[str, str]] = [
    ("[].min()", "min called on empty list"),
    ("[].max()", "max called on empty list"),
    ("[1, 'a'].isSorted()", "no such overload"),
]


@pytest.mark.parametrize(("source", "message"), ERRORS)
def test_errors(source: str, message: str) -> None:
    with pytest.raises(CelEvalError) as raised:
        _eval(source)
    assert message in str(raised.value)
