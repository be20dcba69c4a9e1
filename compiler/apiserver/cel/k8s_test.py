"""The Kubernetes CEL environment: extensions, variables, result types and rewriting."""

from __future__ import annotations

from typing import Any, cast

import pytest

from compiler.apiserver.cel.cases_test import VARS as _VARS
from compiler.apiserver.cel.cases_test import compile_error_test, error_test, value_test
from compiler.apiserver.cel.cases_test import evaluate as _eval
from compiler.apiserver.cel.engine import CelCompileError, CelEvalError
from compiler.apiserver.cel.k8s import (
    K8sProgram,
    cel_type_name,
    k8s_engine,
    references,
    rewrite_variables,
)

VALUES: list[tuple[str, Any]] = [
    # sets (cel-go extension)
    ("sets.contains([1, 2, 3], [2, 3])", True),
    ("sets.equivalent([1, 2], [2, 1, 1])", True),
    ("sets.intersects([1], [2])", False),
    # optional types, two-variable comprehensions, cross-type numeric comparison
    ('{"a": 1}.?b.orValue(2)', 2),
    ("[10, 20].all(i, v, v > i)", True),
    ("1 < 1.5", True),
]


test_values = value_test(VALUES)


ERRORS: list[tuple[str, str]] = [
    ('{"a": 1}.b', "no such key: b"),
]


test_errors = error_test(ERRORS)


COMPILE_ERRORS: list[tuple[str, str]] = [
    ("variables.nope == 1", "undefined field 'nope'"),
    ("1 +", "Syntax error"),
]


test_compile_errors = compile_error_test(COMPILE_ERRORS)


def test_compile_error_keeps_the_column_of_a_variable_reference() -> None:
    with pytest.raises(CelCompileError) as raised:
        k8s_engine().compile("1 + variables.nope", _VARS)  # type: ignore[arg-type]
    text = str(raised.value)
    assert "<input>:1:5:" in text and "variables.nope" in text and "variables_" not in text


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("true", "bool"),
        ("self", "dyn"),
        ("[self]", "list(dyn)"),
        ('{"a": self}', "map(string, dyn)"),
        ('quantity("1")', "kubernetes.Quantity"),
        ('ip("1.2.3.4")', "net.IP"),
        ('timestamp("2024-01-01T00:00:00Z")', "google.protobuf.Timestamp"),
        ("null", "null_type"),
        ("[1].first()", "optional_type(int)"),
    ],
)
def test_result_types_in_cel_go_spelling(source: str, expected: str) -> None:
    assert k8s_engine().compile(source, _VARS).result_type == expected  # type: ignore[arg-type]


def test_cel_type_name() -> None:
    assert cel_type_name("MAP<STRING, LIST<INT>>") == "map(string, list(int))"


def test_rewrite_variables_keeps_columns_and_strings() -> None:
    source = "variables.a + 'variables.b' + x.variables.c + variables . d"
    rewritten, names = rewrite_variables(source)
    assert len(rewritten) == len(source)
    assert rewritten == "variables_a + 'variables.b' + x.variables.c + variables_d  "
    assert names == frozenset({"a", "d"})


def test_references_ignores_fields_and_strings() -> None:
    assert references("authorizer.group('')", "authorizer")
    assert not references("object.authorizer == 'authorizer'", "authorizer")


def test_variables_are_reported() -> None:
    program = k8s_engine().compile(
        "object.a + params.b", {"object": "dyn", "params": "dyn", "x": "dyn"}
    )
    assert program.variables == frozenset({"object", "params"})


def test_optional_results_cannot_leave_the_expression() -> None:
    with pytest.raises(CelEvalError, match="optional"):
        _eval("[1].first()")


def test_an_activation_serves_many_programs_as_a_mapping_would() -> None:
    engine = k8s_engine()
    declared = {"object": "dyn", "variables_n": "dyn"}
    sources = [
        "object.spec.replicas * 2",
        'quantity(object.spec.memory).isLessThan(quantity("2Gi"))',
        "object.spec.names.indexOf('b')",
        "variables.n + size(object.spec.names)",
    ]
    compiled = [engine.compile(s, declared) for s in sources]  # type: ignore[arg-type]
    assert all(isinstance(p, K8sProgram) for p in compiled)
    programs = cast(list[K8sProgram], compiled)
    spec = {"replicas": 3, "memory": "1Gi", "names": ["a", "b"]}
    values: dict[str, Any] = {"object": {"spec": spec}, "variables_n": 10}
    bound = engine.activation(values)
    expected = [6, True, 1, 12]
    assert [p.evaluate(bound) for p in programs] == expected
    assert [p.evaluate(values) for p in programs] == expected
    # a variable without a value is the same error through either
    unbound = engine.activation({"object": values["object"]})
    with pytest.raises(CelEvalError, match="variables_n"):
        programs[3].evaluate(unbound)


def test_compile_let_binds_in_order_over_one_activation() -> None:
    """Lets are bound in order (a later one reads an earlier one), shadow a declared
    variable, and the program reads the values of one activation."""
    engine = k8s_engine()
    declared: dict[str, Any] = {"object": "dyn", "params": "dyn", "slots": "dyn"}
    first = cast(K8sProgram, engine.compile("object.spec.replicas * 2", declared))
    body = cast(
        K8sProgram,
        engine.compile("variables_b + params.offset", {**declared, "variables_b": "dyn"}),
    )
    program = engine.compile_let(
        [("params", "slots[1]"), ("variables_b", first.run_source)], body, declared
    )
    assert program is not None
    activation = engine.activation(
        {"object": {"spec": {"replicas": 3}}, "params": None, "slots": {1: {"offset": 10}}}
    )
    assert program.evaluate(activation) == 16
    # several results in one program: a body given as text
    both = engine.compile_let([], f"[{first.run_source}, {body.run_source}]", declared)
    assert both is not None
    with pytest.raises(CelEvalError):  # variables_b is bound nowhere here
        both.evaluate(activation)
