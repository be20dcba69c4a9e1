"""Tokens, receivers, and the optMap/optFlatMap rewrite measured against the engine."""

from __future__ import annotations

from typing import Any

import pytest

from compiler.apiserver.cel.engine import DYN, CelCompileError, CelEvalError, default_engine
from compiler.apiserver.cel.k8s import k8s_engine
from compiler.apiserver.cel.syntax import (
    eager_optional_macros,
    receiver_start,
    significant,
    tokens,
)


@pytest.mark.parametrize(
    ("source", "receiver"),
    [
        ("a.optMap", "a"),
        ("x + a.b.optMap", "a.b"),
        ("a.?b.optMap", "a.?b"),
        ("a.b[0].c.optMap", "a.b[0].c"),
        ("f(x)[?1].optMap", "f(x)[?1]"),
        ("optional.of(7).optMap", "optional.of(7)"),
        ("!(a || b).optMap", "(a || b)"),
        ("[1, 2].optMap", "[1, 2]"),
        ("{'k': 1}[?'k'].optMap", "{'k': 1}[?'k']"),
        ("k in [a][0].optMap", "[a][0]"),
        ("k in (a).optMap", "(a)"),
        ("c ? a.x : b.y.optMap", "b.y"),
        ("'s'.optMap", "'s'"),
        (".root.x.optMap", ".root.x"),
    ],
)
def test_receiver_is_the_member_chain_before_the_dot(source: str, receiver: str) -> None:
    sig = significant(tokens(source))
    dot = max(i for i, t in enumerate(sig) if t.text == ".")
    start = receiver_start(sig, dot)
    assert start is not None
    assert source[sig[start].start : sig[dot].start] == receiver


def test_a_number_is_no_receiver_it_delimits() -> None:
    sig = significant(tokens("1.5.optMap"))
    assert receiver_start(sig, 3) is None
    assert eager_optional_macros("1.5.optMap(v, v)") == "1.5.optMap(v, v)"


def test_the_rewrite_in_text() -> None:
    assert eager_optional_macros("o.optMap(v, v + 1)") == (
        "[o].map(trainc_option0, trainc_option0.hasValue() ?"
        " optional.of([trainc_option0.value()].map(v, v + 1)[0]) : optional.none())[0]"
    )
    flat = eager_optional_macros("o.optFlatMap(v, f(v))")
    assert flat == (
        "[o].map(trainc_option0, trainc_option0.hasValue() ?"
        " [trainc_option0.value()].map(v, f(v))[0] : optional.none())[0]"
    )
    # strings and comments that mention the macros are left alone
    assert eager_optional_macros("'a.optMap(v, v)' // b.optMap(") == "'a.optMap(v, v)' // b.optMap("


# Expressions over ``object`` that use the macros, nested, chained and on every kind of
# receiver; each is evaluated on each object below.
_EXPRESSIONS = [
    "object.?a.optMap(v, v + 1).orValue(0)",
    "object.?a.optFlatMap(v, v > 1 ? optional.of(v) : optional.none()).orValue(-1)",
    "optional.of(7).optMap(v, optional.of(8).optMap(w, [v, w]).value()).value()",
    "object.?l.optMap(v, object.?m.optMap(w, object.?l.optMap(u, [v, w, u]).value()).value())"
    ".orValue([])",
    "object.?l.optMap(v, v.map(x, x * 2)).optMap(v, v.size()).orValue(0)",
    "object.?m[?0].optMap(v, v + '!').orValue('none')",
    "(object.?a.orValue(0) > 2 ? object.?l : object.?m).optMap(v, size(v)).orValue(0)",
    "object.?a.optMap(v, 10 / v).orValue(0)",  # an error when a is 0
    "object.l.exists(x, object.?a.optMap(v, v == x).orValue(false))",
]
_OBJECTS: list[dict[str, Any]] = [
    {"a": 3, "l": [1, 2, 3], "m": ["p", "q"]},
    {"a": 1, "l": [], "m": []},
    {"a": 0, "l": [5]},
    {},
]
# comprehensions that stop early and leave a slot behind, evaluated first
_BEFORE = "[1, 2].exists(x, x == 1) && [[3, 4]].all(y, y.exists(z, z == 3)) || true"


def _value(program: Any, data: dict[str, Any]) -> Any:
    try:
        return program.evaluate({"object": data})
    except CelEvalError as error:
        return ("error", str(error))


def test_rewritten_macros_give_the_values_of_the_macros_alone() -> None:
    """Alone (no comprehension before them to leave a slot behind), the macros as
    written give cel-go's values; the rewrite gives the same values, alone and after
    comprehensions that stopped early, where the macros as written go wrong."""
    engine = k8s_engine()
    variables = {"object": DYN}
    faulty = 0
    for expression in _EXPRESSIONS:
        as_written = engine.compile_let([], expression, variables)
        rewritten = engine.compile(expression, variables)
        assert as_written is not None
        assert getattr(rewritten, "run_source", expression) != expression
        after = f"[{_BEFORE}, {expression}][1]"
        after_as_written = engine.compile_let([], after, variables)
        after_rewritten = engine.compile(after, variables)
        assert after_as_written is not None
        for data in _OBJECTS:
            expected = _value(as_written, data)
            assert _value(rewritten, data) == expected, (expression, data)
            assert _value(after_rewritten, data) == expected, (expression, data)
            faulty += _value(after_as_written, data) != expected
    assert faulty  # the engine's fault shows on these expressions as written


@pytest.mark.parametrize(
    ("expression", "data", "expected"),
    [  # worked out by hand from the CEL specification
        (_EXPRESSIONS[3], _OBJECTS[0], [[1, 2, 3], ["p", "q"], [1, 2, 3]]),
        (_EXPRESSIONS[3], _OBJECTS[2], ("error", "optional.none() dereference")),
        (_EXPRESSIONS[1], _OBJECTS[0], 3),
        (_EXPRESSIONS[1], _OBJECTS[1], -1),
        (_EXPRESSIONS[6], _OBJECTS[0], 3),
        (_EXPRESSIONS[7], _OBJECTS[2], ("error", "division by zero")),
        (_EXPRESSIONS[8], _OBJECTS[0], True),
    ],
)
def test_rewritten_values_by_hand(expression: str, data: dict[str, Any], expected: Any) -> None:
    after = k8s_engine().compile(f"[{_BEFORE}, {expression}][1]", {"object": DYN})
    assert _value(after, data) == expected


def test_crd_rules_run_the_rewrite_too() -> None:
    program = default_engine().compile(
        "[self.l.exists(x, x == 1), optional.of(7).optMap(v, v).value()]", {"self": DYN}
    )
    assert program.evaluate({"self": {"l": [1, 2]}}) == [True, 7]
    assert program.result_type == "list<dyn>"  # the type of the expression as written


def test_map_building_macros_are_refused_by_both_engines() -> None:
    """transformMap and transformMapEntry compile but fail on every evaluation in this
    engine; both engines refuse them when compiling (a policy at its field, a CRD rule
    with a setup error naming it). Other two-variable macros, and strings that mention
    them, still compile."""
    for engine, name in ((k8s_engine(), "object"), (default_engine(), "self")):
        for macro in ("transformMap(k, v, v + 1)", "transformMapEntry(k, v, {k: v})"):
            with pytest.raises(CelCompileError, match="is not supported: trainc engine"):
                engine.compile(f"{name}.m.{macro}.size() > 0", {name: DYN})
        engine.compile(f"{name}.l.transformList(i, v, v).size() >= 0", {name: DYN})
        engine.compile(f"'{name}.transformMap(' != ''", {name: DYN})
