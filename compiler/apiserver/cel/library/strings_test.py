"""The strings extension, with the indexOf/lastIndexOf the run environment reimplements."""

from __future__ import annotations

from typing import Any

import pytest

from compiler.apiserver.cel.engine import CelCompileError, CelEvalError
from compiler.apiserver.cel.k8s import k8s_engine

_VARS = {"self": "dyn"}


def _eval(source: str, value: Any = None) -> Any:
    return k8s_engine().compile(source, _VARS).evaluate({"self": value})  # type: ignore[arg-type]


VALUES: list[tuple[str, Any]] = [
    ('"%s=%d".format(["a", 1])', "a=1"),
    ('"a,b".split(",")', ["a", "b"]),
    ('["a", "b"].join("-")', "a-b"),
    ('" x ".trim()', "x"),
    # indexOf and lastIndexOf of a string (they run as the lists library's k8s_indexOf)
    ('"abcabc".indexOf("c")', 2),
    ('"abcabc".indexOf("c", 3)', 5),
    ('"abcabc".lastIndexOf("c")', 5),
    ('"abcabc".lastIndexOf("c", 4)', 2),
    ('"abc".indexOf("")', 0),
    ('"abc".lastIndexOf("")', 3),
    ('"héllo".indexOf("l")', 2),
]


@pytest.mark.parametrize(("source", "expected"), VALUES)
def test_values(source: str, expected: Any) -> None:
    result = _eval(source)
    assert result == expected
    assert type(result) is type(expected)


ERRORS: list[tuple[str, str]] = [
    ('"abc".indexOf("c", -1)', "index out of range: -1"),
]


@pytest.mark.parametrize(("source", "message"), ERRORS)
def test_errors(source: str, message: str) -> None:
    with pytest.raises(CelEvalError) as raised:
        _eval(source)
    assert message in str(raised.value)


COMPILE_ERRORS: list[tuple[str, str]] = [
    ('"abc".reverse()', "found no matching overload for 'reverse'"),  # strings v3, not enabled
]


@pytest.mark.parametrize(("source", "message"), COMPILE_ERRORS)
def test_compile_errors(source: str, message: str) -> None:
    with pytest.raises(CelCompileError) as raised:
        k8s_engine().compile(source, _VARS)  # type: ignore[arg-type]
    assert message in str(raised.value)
