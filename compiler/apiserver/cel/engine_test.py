"""The CEL engine adapter: compile, evaluate, errors in cel-go's words, the budget."""

from __future__ import annotations

import time
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta

import pytest

from compiler.apiserver.cel.engine import (
    DURATION,
    DYN,
    TIMESTAMP,
    CelBudgetExceeded,
    CelCompileError,
    CelEvalError,
    VarType,
    default_engine,
    go_error_text,
)

SELF: dict[str, VarType] = {"self": DYN}
BOTH: dict[str, VarType] = {"self": DYN, "oldSelf": DYN}


def value(
    source: str, variables: Mapping[str, VarType] | None = None, **bindings: object
) -> object:
    program = default_engine().compile(source, variables or SELF)
    return program.evaluate(bindings)


def test_plain_values_in_and_out() -> None:
    assert (
        value("self.a.size() == 2 && self.b['k'] == 1.5", self={"a": [1, None], "b": {"k": 1.5}})
        is True
    )
    assert value("self.map(x, x * 2)", self=[1, 2]) == [2, 4]
    assert value("{'a': self}", self=b"x") == {"a": b"x"}


def test_kubernetes_base_environment_features() -> None:
    assert value("self.?a.orValue('d') == 'd'", self={}) is True  # optional types
    assert value("'a,b'.split(',') == ['a', 'b'] && 'Ab'.lowerAscii() == 'ab'", self=1) is True
    assert value("sets.contains([1, 2], [2]) && [3, 1].sort() == [1, 3]", self=1) is True
    assert value("self.all(k, v, v > 0)", self={"a": 1}) is True  # two-variable comprehensions
    assert value("self < 1.5", self=1) is True  # cross-type numeric comparison
    assert value("1 < 1.5") is True  # also between literals (compiled unchecked)


def test_variables_actually_referenced() -> None:
    engine = default_engine()
    assert engine.compile("self == oldSelf", BOTH).variables == {"self", "oldSelf"}
    assert engine.compile("self.oldSelf == 1 && 'oldSelf' != ''", BOTH).variables == {"self"}
    assert engine.compile("true", BOTH).variables == frozenset()
    assert engine.compile("self > 1", SELF).result_type == "bool"
    assert engine.compile("self.x", SELF).result_type == "dyn"
    assert engine.compile("'a'", SELF).result_type == "string"


def test_timestamp_and_duration_variables() -> None:
    at = datetime(2026, 1, 1, tzinfo=UTC)
    variables: dict[str, VarType] = {"self": TIMESTAMP, "d": DURATION}
    assert (
        value(
            "self + d > timestamp('2026-01-01T00:30:00Z')", variables, self=at, d=timedelta(hours=1)
        )
        is True
    )


def test_compile_errors_read_like_cel_go() -> None:
    with pytest.raises(CelCompileError) as error:
        default_engine().compile("self.matches('^[a-z]", SELF)
    assert str(error.value).startswith("ERROR: <input>:1:14: Syntax error")
    with pytest.raises(CelCompileError, match="undeclared reference to 'other'"):
        default_engine().compile("other == 1", SELF)
    with pytest.raises(CelCompileError, match="has\\(\\) argument must be a field selection"):
        default_engine().compile("has(self)", SELF)


@pytest.mark.parametrize(
    ("source", "bindings", "text"),
    [
        ("self.name == 'x'", {"self": {}}, "no such key: name"),
        ("self[2] == 1", {"self": [1]}, "index out of bounds: 2"),
        ("1 / self == 1", {"self": 0}, "division by zero"),
        ("1 % self == 1", {"self": 0}, "modulus by zero"),
        ("self + 1 > 0", {"self": 9223372036854775807}, "integer overflow"),
        ("self + 1 == 2", {"self": "a"}, "no such overload"),
    ],
)
def test_evaluation_errors_read_like_cel_go(
    source: str, bindings: dict[str, object], text: str
) -> None:
    with pytest.raises(CelEvalError) as error:
        default_engine().compile(source, SELF).evaluate(bindings)
    assert str(error.value) == text


def test_errors_absorbed_by_logic_are_not_errors() -> None:
    assert value("self.missing == 1 || true", self={}) is True


def test_runaway_expression_stops_on_the_budget() -> None:
    program = default_engine().compile("self.all(x, self.all(y, self.all(z, true)))", SELF)
    start = time.perf_counter()
    with pytest.raises(CelBudgetExceeded):
        program.evaluate({"self": list(range(1000))})
    assert time.perf_counter() - start < 2


def test_go_error_text() -> None:
    assert go_error_text('NOT_FOUND: Key not found in map : "a"') == "no such key: a"
    assert go_error_text("INVALID_ARGUMENT: invalid regular expression: x") == (
        "invalid regular expression: x"
    )
