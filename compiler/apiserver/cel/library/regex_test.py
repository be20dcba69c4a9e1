"""The regex library: values and errors as the API server has them."""

from __future__ import annotations

from typing import Any

import pytest

from compiler.apiserver.cel.engine import CelEvalError
from compiler.apiserver.cel.k8s import k8s_engine

_VARS = {"self": "dyn"}


def _eval(source: str, value: Any = None) -> Any:
    return k8s_engine().compile(source, _VARS).evaluate({"self": value})  # type: ignore[arg-type]


VALUES: list[tuple[str, Any]] = [
    ('"abc 123 def 456".find("[0-9]+")', "123"),
    ('"abc".find("[0-9]+")', ""),
    ('"abc 123 def 456".findAll("[0-9]+")', ["123", "456"]),
    ('"abc 123 def 456".findAll("[0-9]+", 1)', ["123"]),
    ('"abc 123".findAll("[0-9]+", 0)', []),
    ('"abc".findAll("a*")', ["a", "", ""]),
    ('"line\\n".find("e$")', ""),
    ('"xyz".find("[[:alpha:]]+\\\\z")', "xyz"),
]


@pytest.mark.parametrize(("source", "expected"), VALUES)
def test_values(source: str, expected: Any) -> None:
    result = _eval(source)
    assert result == expected
    assert type(result) is type(expected)


ERRORS: list[tuple[str, str]] = [
    (
        '"x".find("(?=a)")',
        "Illegal regex: error parsing regexp: invalid or unsupported Perl syntax: `(?=`",
    ),
    ('"x".find("(a)\\\\1")', "Illegal regex: error parsing regexp: invalid escape sequence: `\\1`"),
]


@pytest.mark.parametrize(("source", "message"), ERRORS)
def test_errors(source: str, message: str) -> None:
    with pytest.raises(CelEvalError) as raised:
        _eval(source)
    assert message in str(raised.value)
