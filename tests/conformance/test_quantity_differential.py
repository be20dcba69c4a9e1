"""Differential tests: compiler.kube.quantity / podrequests against the real Go code.

``tests/conformance/quantitycheck`` is a small Go program linked against k8s.io/apimachinery,
k8s.io/api and k8s.io/component-helpers v0.36.2. It is built once per session into
``tests/conformance/quantitycheck/bin`` and answers one JSON request per line. Hypothesis
generates quantity strings, YAML scalars, sums, products and PodSpecs; every answer must
match, including the output format and whether Go holds the value as ``inf.Dec``.

Set ``QUANTITY_DIFF_SCALE`` (default 1) to multiply the number of generated examples.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from compiler.kube.podrequests import after_podgroup_build, pod_requests, sum_requests
from compiler.kube.quantity import Quantity, QuantityError
from tests.go_oracle import Conversation, GoOracle, oracle_needed

ORACLE = GoOracle("quantitycheck", Path(__file__).parent / "quantitycheck", "quantitycheck")
TIMEOUT_SECONDS = 20
SCALE = max(1, int(os.environ.get("QUANTITY_DIFF_SCALE", "1")))

COMPARED: Counter[str] = Counter()


class Quantitycheck(Conversation):
    """The quantitycheck process, counting what it compared by operation."""

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        answer = super().ask(request)
        COMPARED[request["op"]] += 1
        return answer


@pytest.fixture(scope="session")
def go(pytestconfig: pytest.Config) -> Iterator[Quantitycheck]:
    """Build the Go harness once per session and keep it running."""
    with oracle_needed("the quantity differential tests need the Go toolchain: README"):
        binary = ORACLE.binary
    oracle = Quantitycheck(binary, "quantitycheck", TIMEOUT_SECONDS)
    yield oracle
    oracle.close()
    reporter = pytestconfig.pluginmanager.get_plugin("terminalreporter")
    capture = pytestconfig.pluginmanager.get_plugin("capturemanager")
    if reporter is not None and capture is not None and COMPARED:
        counts = ", ".join(f"{op}={n}" for op, n in sorted(COMPARED.items()))
        with capture.global_and_fixture_disabled():
            reporter.write_line(
                f"\nquantity differential: {sum(COMPARED.values())} cases ({counts})"
            )


def _settings(examples: int) -> settings:
    return settings(
        max_examples=examples * SCALE,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


# --- Python answers in the harness's shape ----------------------------------------------


def describe(q: Quantity) -> dict[str, Any]:
    return {"str": q.canonical(), "format": q.format.value, "big": q.is_big}


def py_parse(text: str) -> dict[str, Any]:
    try:
        return {"q": describe(Quantity.parse(text))}
    except QuantityError as err:
        return {"err": str(err)}


def py_manifest(value: str | int | float) -> dict[str, Any]:
    try:
        return {"q": describe(Quantity.from_manifest(value))}
    except QuantityError as err:
        return {"err": str(err)}


def to_quantities(spec: Any, roundtrip: bool) -> Any:
    """Replace the request/overhead scalars of a PodSpec with Quantities (round-tripped)."""

    def convert(raw: dict[str, Any] | None) -> dict[str, Any] | None:
        if raw is None:
            return None
        out: dict[str, Any] = {}
        for name, value in raw.items():
            q = Quantity.from_manifest(value)
            out[name] = q.roundtrip() if roundtrip else q
        return out

    def container(c: dict[str, Any]) -> dict[str, Any]:
        c = dict(c)
        if "resources" in c:
            c["resources"] = {"requests": convert(c["resources"].get("requests"))}
        return c

    spec = dict(spec)
    for key in ("containers", "initContainers"):
        if key in spec:
            spec[key] = [container(c) for c in spec[key]]
    if "resources" in spec:
        spec["resources"] = {"requests": convert(spec["resources"].get("requests"))}
    if "overhead" in spec:
        spec["overhead"] = convert(spec["overhead"])
    return spec


def describe_list(reqs: dict[str, Quantity]) -> dict[str, Any]:
    return {name: describe(q) for name, q in reqs.items()}


# --- strategies -----------------------------------------------------------------------------

DECIMAL_SUFFIXES = ["", "n", "u", "m", "k", "M", "G", "T", "P", "E"]
BINARY_SUFFIXES = ["Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]

digits = st.text(alphabet="0123456789", min_size=0, max_size=22)
small_digits = st.text(alphabet="0123456789", min_size=1, max_size=4)
exponent_suffix = st.builds(
    lambda e, sign, body: e + sign + body,
    st.sampled_from(["e", "E"]),
    st.sampled_from(["", "+", "-"]),
    st.text(alphabet="0123456789", min_size=1, max_size=3),
)
suffix = st.one_of(
    st.sampled_from(DECIMAL_SUFFIXES), st.sampled_from(BINARY_SUFFIXES), exponent_suffix
)
number = st.builds(
    lambda sign, whole, frac: sign + whole + frac,
    st.sampled_from(["", "", "", "+", "-"]),
    st.one_of(digits, small_digits, st.sampled_from(["0", "1", "00", "1024", "1000", "5"])),
    st.one_of(
        st.just(""),
        st.builds(lambda d: "." + d, digits),
        st.builds(lambda d: "." + d, small_digits),
    ),
)
structured_quantity = st.builds(lambda n, s: n + s, number, suffix)
realistic_quantity = st.one_of(
    st.builds(
        lambda n, s: f"{n}{s}",
        st.integers(0, 5000),
        st.sampled_from([*DECIMAL_SUFFIXES, *BINARY_SUFFIXES]),
    ),
    st.builds(
        lambda a, b, s: f"{a}.{b}{s}",
        st.integers(0, 64),
        st.sampled_from(["5", "25", "125", "1", "75", "500", "0001", "3"]),
        st.sampled_from(["", "m", "k", "M", "G", "Ki", "Mi", "Gi", "Ti"]),
    ),
    st.sampled_from(["0.5Gi", "1e3", "1E-3", "100m", "1.5Ki", "2Gi", "500m", "1", "0", "8Ei"]),
)
garbage = st.text(alphabet="0123456789.+-eEinumkKMGTPi x\t", max_size=12)
any_quantity_text = st.one_of(structured_quantity, realistic_quantity, garbage)

# Strings that Go parses quickly (no enormous exponent in the inf.Dec branch).
valid_quantity = st.one_of(structured_quantity, realistic_quantity).filter(
    lambda s: "err" not in py_parse(s)
)

yaml_float = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False, min_value=-1e30, max_value=1e30),
    st.floats(allow_nan=False, allow_infinity=False, min_value=-1e-5, max_value=1e-5),
    st.sampled_from([0.5, 1.5, 0.1, 1e21, 1.5e21, 1e-7, 2.0, 1000.0, 1e20, -0.0, 0.001]),
)
yaml_int = st.one_of(
    st.integers(-(10**6), 10**6),
    st.integers(-(2**70), 2**70),
    st.sampled_from([0, 1, 1024, 1000, 2**63 - 1, 2**63, 2**64 - 1, -(2**63)]),
)
unicode_padding = st.sampled_from(["", " ", "  ", "\u00a0", "\u3000", "\t", "\n", "\u2028"])
yaml_string = st.builds(
    lambda pre, q, post: pre + q + post, unicode_padding, realistic_quantity, unicode_padding
)
yaml_scalar: st.SearchStrategy[str | int | float] = st.one_of(
    yaml_string, yaml_int, yaml_float, realistic_quantity
)

RESOURCE_NAMES = ["cpu", "memory", "nvidia.com/gpu", "hugepages-2Mi", "ephemeral-storage"]
pod_quantity: st.SearchStrategy[str | int | float] = st.one_of(
    realistic_quantity,
    st.integers(-3, 10**4),
    st.sampled_from([0.5, 1.5, 0.25, 2.0, 1e-3, 1e21]),
    st.sampled_from(["-1", "-500m", "1.500", "01Gi", "+1Gi", "1E3", "0.5Ki", "1.0000000001"]),
)
resource_map = st.dictionaries(st.sampled_from(RESOURCE_NAMES), pod_quantity, max_size=4)


@st.composite
def container_spec(draw: st.DrawFn, init: bool) -> dict[str, Any]:
    c: dict[str, Any] = {"name": "c"}
    shape = draw(st.sampled_from(["requests", "requests", "requests", "limits", "none"]))
    if shape == "requests":
        c["resources"] = {"requests": draw(resource_map)}
    elif shape == "limits":
        c["resources"] = {"limits": draw(resource_map)}
    if init:
        policy = draw(st.sampled_from([None, "Always", "Always", "Never", "OnFailure"]))
        if policy is not None:
            c["restartPolicy"] = policy
    return c


@st.composite
def pod_spec(draw: st.DrawFn) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": draw(st.lists(container_spec(init=False), min_size=0, max_size=4))
    }
    if draw(st.booleans()):
        spec["initContainers"] = draw(st.lists(container_spec(init=True), max_size=4))
    if draw(st.integers(0, 3)) == 0:
        spec["resources"] = {"requests": draw(resource_map)}
    if draw(st.integers(0, 3)) == 0:
        spec["overhead"] = draw(resource_map)
    return spec


# --- tests ----------------------------------------------------------------------------------

EDGE_CASES = [
    "0",
    "1",
    "-1",
    "+1",
    "00",
    "000",
    "-0",
    "+0",
    "-",
    "+",
    ".",
    "-.",
    "+.",
    ".5",
    "5.",
    "1.",
    "1.G",
    ".G",
    "e3",
    "E3",
    "Ki",
    "Mi",
    "Ti",
    "Pi",
    "Ei",
    "-Ei",
    "0.5Gi",
    "0.5Ki",
    "-0.5Ki",
    "1.5Gi",
    "1.5Ki",
    "2048Mi",
    "1536Mi",
    "1048576Ki",
    "1000Mi",
    "1024",
    "1025Ki",
    "01Gi",
    "+1Gi",
    "1e3",
    "1E3",
    "1e-3",
    "1E-3",
    "1e+3",
    "1e0",
    "1e",
    "1ee",
    "1e+",
    "1e-",
    "e",
    "1E",
    "1Ee3",
    "1M3",
    "1ki",
    "1K",
    "1i",
    "1x",
    "1.2.3",
    "1e3.5",
    "100m",
    "1000m",
    "1500m",
    "0.1m",
    "0.0001",
    "1n",
    "1000n",
    "0.000000001",
    "0.0000000001",
    "1e-10",
    "0e-10",
    "e-10",
    "1.500",
    "1.100",
    "12.345",
    "1.000",
    "1.0",
    "1.500k",
    "1000E",
    "1000P",
    "1E",
    "999E",
    "8Ei",
    "10Ei",
    "7Ei",
    "1Ei",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "12345678901234567890",
    "8388607Ti",
    "8388608Ti",
    "99Ti",
    "999Ti",
    "9999999999999Ki",
    "999999999999999999",
    "1000000000000000000",
    "1e100",
    "1e2147483647",
    "10e2147483647",
    "1000e2147483647",
    "1e4294967296",
    "1e4294967299",
    "1e-4294967296",
    "1e9223372036854775807",
    "1e9223372036854775808",
    "1.5e2147483647",
    "1.5e-2147483648",
    "1.0001Ki",
    "0.0000001Ki",
    "1.5Ei",
    "0.3",
    "0.7",
    "2.5",
    "3.7",
    "-2.5",
    "",
    " 1",
    "1 ",
]


def test_edge_case_strings(go: Quantitycheck) -> None:
    for text in EDGE_CASES:
        assert py_parse(text) == go.ask({"op": "parse", "s": text}), text
        if "err" not in py_parse(text) and "2147483648" not in text:
            q = Quantity.parse(text)
            answer = go.ask({"op": "value", "s": text})
            assert (q.value(), q.milli_value()) == (
                answer.get("value", 0),
                answer.get("milli", 0),
            ), text


@_settings(3000)
@given(text=any_quantity_text)
def test_parse_and_string(go: Quantitycheck, text: str) -> None:
    assert py_parse(text) == go.ask({"op": "parse", "s": text})


@_settings(1000)
@given(text=valid_quantity)
def test_value_and_milli_value(go: Quantitycheck, text: str) -> None:
    q = Quantity.parse(text)
    answer = go.ask({"op": "value", "s": text})
    assert (q.value(), q.milli_value()) == (answer.get("value", 0), answer.get("milli", 0))


@_settings(1500)
@given(value=yaml_scalar)
def test_manifest_scalars(go: Quantitycheck, value: str | int | float) -> None:
    assert py_manifest(value) == go.ask({"op": "manifest", "json": value})


@_settings(1500)
@given(texts=st.lists(valid_quantity, min_size=0, max_size=6))
def test_add_sequence(go: Quantitycheck, texts: list[str]) -> None:
    total = Quantity.zero()
    for text in texts:
        total = total.add(Quantity.parse(text))
    assert {"q": describe(total)} == go.ask({"op": "add", "qs": texts})


@_settings(1500)
@given(
    text=valid_quantity,
    factor=st.one_of(
        st.integers(-3, 1100), st.integers(-(2**63), 2**63 - 1), st.sampled_from([0, 1, 102])
    ),
)
@example(text="2Gi", factor=-4294967296)  # exactly int64's minimum: Go prints digits, not -8Ei
@example(text="1Ki", factor=-9007199254740992)
def test_mul(go: Quantitycheck, text: str, factor: int) -> None:
    product = Quantity.parse(text).mul(factor)
    assert {"q": describe(product)} == go.ask({"op": "mul", "s": text, "n": factor})


@_settings(1000)
@given(a=valid_quantity, b=valid_quantity)
def test_cmp(go: Quantitycheck, a: str, b: str) -> None:
    expected = go.ask({"op": "cmp", "a": a, "b": b}).get("cmp", 0)
    assert Quantity.parse(a).cmp(Quantity.parse(b)) == expected


@_settings(2000)
@given(spec=pod_spec(), roundtrip=st.booleans())
def test_pod_requests(go: Quantitycheck, spec: dict[str, Any], roundtrip: bool) -> None:
    answer = go.ask({"op": "pod", "spec": spec, "roundtrip": roundtrip})
    try:
        ours = pod_requests(to_quantities(spec, roundtrip))
    except QuantityError as err:
        assert "err" in answer, err
        return
    assert answer.get("requests", {}) == describe_list(ours)


@_settings(1000)
@given(
    podsets=st.lists(st.tuples(pod_spec(), st.integers(0, 12)), min_size=1, max_size=4),
    roundtrip=st.booleans(),
)
def test_podgroup_sums_two_passes(
    go: Quantitycheck, podsets: list[tuple[dict[str, Any], int]], roundtrip: bool
) -> None:
    request = {
        "op": "sum",
        "podsets": [{"spec": spec, "count": count} for spec, count in podsets],
        "passes": 2,
        "roundtrip": roundtrip,
    }
    answer = go.ask(request)
    try:
        per = [(pod_requests(to_quantities(s, roundtrip)), n) for s, n in podsets]
    except QuantityError as err:
        assert "err" in answer, err
        return
    first = sum_requests(per)
    second = sum_requests(after_podgroup_build(per))
    passes = answer.get("passes") or [{}, {}]
    assert passes[0] == describe_list(first)
    assert passes[1] == describe_list(second)


def test_upstream_examples_through_go(go: Quantitycheck) -> None:
    """The sums quoted from upstream tests, checked against the Go harness too."""
    volcano = [
        ({"containers": [{"resources": {"requests": {"cpu": "300m", "memory": "1Gi"}}}]}, 1),
        ({"containers": [{"resources": {"requests": {"cpu": "500m", "memory": "0.5Gi"}}}]}, 4),
    ]
    answer = go.ask(
        {"op": "sum", "podsets": [{"spec": s, "count": n} for s, n in volcano], "passes": 1}
    )
    ours = sum_requests([(pod_requests(s), n) for s, n in volcano])
    assert answer["passes"][0] == describe_list(ours)
    assert {k: v.canonical() for k, v in ours.items()} == {"cpu": "2300m", "memory": "3Gi"}
