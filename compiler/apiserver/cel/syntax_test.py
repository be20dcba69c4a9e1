"""Tokens, receivers, and the run copy's rewrites (optMap/optFlatMap, transformMap/
transformMapEntry) measured against the engine and cel-go's values."""

from __future__ import annotations

from typing import Any

import pytest

from compiler.apiserver.cel.engine import DYN, CelCompileError, CelEvalError
from compiler.apiserver.cel.k8s import k8s_engine
from compiler.apiserver.cel.syntax import (
    eager_optional_macros,
    map_building_macros,
    receiver_start,
    significant,
    tokens,
    unsupported_macro,
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
    program = k8s_engine().compile(
        "[self.l.exists(x, x == 1), optional.of(7).optMap(v, v).value()]", {"self": DYN}
    )
    assert program.evaluate({"self": {"l": [1, 2]}}) == [True, 7]
    assert program.result_type == "list(dyn)"  # the type of the expression as written


@pytest.mark.parametrize(
    ("source", "rewritten"),
    [
        (
            "m.transformMap(k, v, v + 1)",
            "trainc_map_of_entries(m.transformList(k, v, {k: v + 1}))",
        ),
        (
            "a.b[0].transformMap(k, v, k != 'x', f(v, 1))",
            "trainc_map_of_entries(a.b[0].transformList(k, v, k != 'x', {k: f(v, 1)}))",
        ),
        (
            "m.transformMapEntry(k, v, {v: k})",
            "trainc_map_of_entries(m.transformList(k, v, {v: k}))",
        ),
        (  # nested in an argument, and chained on a receiver that holds another
            "m.transformMap(k, v, v.transformMapEntry(i, x, {x: i})).transformMap(a, b, 1)",
            "trainc_map_of_entries(trainc_map_of_entries(m.transformList(k, v, {k:"
            " trainc_map_of_entries(v.transformList(i, x, {x: i}))})).transformList(a, b,"
            " {a: 1}))",
        ),
        ("'m.transformMap(k, v, v)'", "'m.transformMap(k, v, v)'"),  # a string
        ("m.transformList(k, v, v)", "m.transformList(k, v, v)"),
    ],
)
def test_map_building_macros_are_written_as_lists_of_entries(source: str, rewritten: str) -> None:
    assert map_building_macros(source) == rewritten


_MAPS = {"m": {"a": "1", "b": "22"}, "same": {"x": "v", "y": "v"}, "l": [3, 4]}


@pytest.mark.parametrize(
    ("source", "expected"),
    [  # values cel-go gives (the duplicate key's error as the API server reported it)
        ("self.m.transformMap(k, v, size(v))", {"a": 1, "b": 2}),
        ("self.m.transformMap(k, v, k != 'a', v + '!')", {"b": "22!"}),
        ("self.l.transformMap(i, x, x * 10)", {0: 30, 1: 40}),
        ("self.l.transformMapEntry(i, x, {x % 2 == 0: i})", {False: 0, True: 1}),
        ("self.m.transformMapEntry(k, v, {v: k})", {"1": "a", "22": "b"}),
        ("self.same.transformMapEntry(k, v, {v: k})", "insert failed: key v already exists"),
        ("self.l.transformMapEntry(i, x, {'k': x})", "insert failed: key k already exists"),
        ("self.l.transformMapEntry(i, x, x > 3, {'k': x})", {"k": 4}),
        ("self.m.transformMap(k, v, v).transformMapEntry(a, b, {b: a})['22']", "b"),
        ("[self.l.exists(x, x == 3), self.m.transformMap(k, v, 1).size()]", [True, 2]),
    ],
)
def test_map_building_macros_give_cel_gos_values(source: str, expected: Any) -> None:
    program = k8s_engine().compile(source, {"self": DYN})
    if isinstance(expected, str) and expected.startswith("insert failed"):
        with pytest.raises(CelEvalError, match=f"^{expected}$"):
            program.evaluate({"self": _MAPS})
    else:
        assert program.evaluate({"self": _MAPS}) == expected


def test_map_building_macros_type_check_as_written() -> None:
    """The result type is the macro's, and the run copy's function is unknown to the
    type check (a user cannot call it)."""
    engine = k8s_engine()
    program = engine.compile("self.m.transformMap(k, v, size(v))", {"self": DYN})
    assert program.result_type == "map(dyn, int)"
    with pytest.raises(CelCompileError, match="trainc_map_of_entries"):
        engine.compile("trainc_map_of_entries([{'a': 1}])", {"self": DYN})


def test_a_map_building_macro_trainc_cannot_delimit_is_refused() -> None:
    assert unsupported_macro("m.transformMap(k, v, v)") is None
    assert unsupported_macro("m.transformMap(k, v)") is not None  # two arguments
    message = unsupported_macro("1.transformMapEntry(k, v, {k: v})")
    assert message is not None and message.startswith("transformMapEntry is not supported here")
