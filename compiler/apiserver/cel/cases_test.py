"""The table harness the CEL library tests share: one place for how a case is run and judged.

A library's test module lists its cases (value, runtime error, compile error) and builds its
test functions here, so every library is held to the same checks: the exact value and Python
type, the API server's message text.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from compiler.apiserver.cel.engine import CelCompileError, CelEvalError
from compiler.apiserver.cel.k8s import k8s_engine

VARS = {"self": "dyn"}


def evaluate(source: str, value: Any = None) -> Any:
    """Compile `source` in the Kubernetes environment and run it with `self` bound to `value`."""
    return k8s_engine().compile(source, VARS).evaluate({"self": value})  # type: ignore[arg-type]


def value_test(cases: list[tuple[str, Any]], self_value: Any = None) -> Callable[..., None]:
    """A test that each expression gives its value, of the same Python type."""

    def test_values(source: str, expected: Any) -> None:
        result = evaluate(source, self_value)
        assert result == expected
        assert type(result) is type(expected)

    # the mark's typing loses the signature once an argument is Any
    marked: Callable[..., None] = pytest.mark.parametrize(("source", "expected"), cases)(
        test_values
    )
    return marked


def error_test(cases: list[tuple[str, str]]) -> Callable[..., None]:
    """A test that each expression fails at run time with a message containing the given text."""

    @pytest.mark.parametrize(("source", "message"), cases)
    def test_errors(source: str, message: str) -> None:
        with pytest.raises(CelEvalError) as raised:
            evaluate(source)
        assert message in str(raised.value)

    return test_errors


def compile_error_test(cases: list[tuple[str, str]]) -> Callable[..., None]:
    """A test that each expression is refused at compile time with the given text."""

    @pytest.mark.parametrize(("source", "message"), cases)
    def test_compile_errors(source: str, message: str) -> None:
        with pytest.raises(CelCompileError) as raised:
            k8s_engine().compile(source, VARS)  # type: ignore[arg-type]
        assert message in str(raised.value)

    return test_compile_errors
