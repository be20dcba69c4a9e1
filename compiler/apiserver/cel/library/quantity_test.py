"""The quantity library: values, errors and type checking as the API server has them."""

from __future__ import annotations

from typing import Any

from compiler.apiserver.cel.cases_test import compile_error_test, error_test, value_test
from compiler.apiserver.cel.k8s import k8s_engine

VALUES: list[tuple[str, Any]] = [
    ('quantity("1000m") == quantity("1")', True),
    ('quantity("200M") == quantity("0.2G")', True),
    ('quantity("200M") == quantity("0.3G")', False),
    ('quantity("50M").isLessThan(quantity("50Mi"))', True),
    ('quantity("50Mi").isGreaterThan(quantity("50M"))', True),
    ('quantity("50M").compareTo(quantity("50Mi"))', -1),
    ('quantity("200M").compareTo(quantity("0.2G"))', 0),
    ('quantity("50k").add(quantity("20")) == quantity("50.02k")', True),
    ('quantity("50k").add(20).isLessThan(quantity("50020"))', False),
    ('quantity("50k").sub(20) == quantity("49980")', True),
    ('quantity("50k").add(20).sub(quantity("100k")).sub(-50000).asInteger()', 20),
    ('quantity("50k").asInteger()', 50000),
    ('quantity("50").isInteger()', True),
    ('quantity("9999999999999999999999999999999999999G").isInteger()', False),
    # Go holds these as a scaled or big decimal: not "integers" for AsInt64
    ('quantity("1000m").isInteger()', False),
    ('quantity("1.5Gi").isInteger()', False),
    ('quantity("50.703k").asApproximateFloat()', 50703.0),
    ('sign(quantity("-5Mi"))', -1),
    ('sign(quantity("0"))', 0),
    ('isQuantity("20Mi")', True),
    ('isQuantity("20Mo")', False),
    ('quantity(self).isLessThan(quantity("2Gi"))', True),
]


test_values = value_test(VALUES, self_value="1536Mi")


ERRORS: list[tuple[str, str]] = [
    (
        'quantity("10Mo")',
        "quantities must match the regular expression"
        " '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    ),
    ('quantity("1.5Gi").asInteger()', "cannot convert value to integer"),
    (
        'quantity("9999999999999999999999999999999999999G").asInteger()',
        "cannot convert value to integer",
    ),
]


test_errors = error_test(ERRORS)


COMPILE_ERRORS: list[tuple[str, str]] = [
    (
        'quantity("1").isLessThan(1)',
        "found no matching overload for 'isLessThan' applied to '(kubernetes.Quantity, int)'",
    ),
]


test_compile_errors = compile_error_test(COMPILE_ERRORS)


def test_quantity_equality_survives_a_round_trip_through_python() -> None:
    # a quantity returned by one expression and bound into another keeps its Go state
    engine = k8s_engine()
    value = engine.compile('quantity("1.5Gi")', {}).evaluate({})
    check = engine.compile('q == quantity("1536Mi") && !q.isInteger()', {"q": "dyn"})
    assert check.evaluate({"q": value}) is True
