"""The Kubernetes CEL libraries: values, errors and type checking as the API server has them."""

from __future__ import annotations

from typing import Any

import pytest

from compiler.apiserver.cel.engine import CelCompileError, CelEvalError
from compiler.apiserver.cel.k8s_library import (
    cel_type_name,
    k8s_engine,
    references,
    rewrite_variables,
)

_VARS = {"self": "dyn"}


def _eval(source: str, value: Any = None) -> Any:
    return k8s_engine().compile(source, _VARS).evaluate({"self": value})  # type: ignore[arg-type]


VALUES: list[tuple[str, Any]] = [
    # quantity
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
    # url
    ('url("https://user@example.com:8080/a%2Fb?x=1#f").getScheme()', "https"),
    ('url("https://user@example.com:8080/a%2Fb?x=1#f").getHost()', "example.com:8080"),
    ('url("https://example.com:8080/p").getHostname()', "example.com"),
    ('url("https://example.com:8080/p").getPort()', "8080"),
    ('url("https://[::1]:80/p").getHostname()', "::1"),
    ('url("https://example.com/a%2Fb").getEscapedPath()', "/a%2Fb"),
    ('url("https://example.com/a b").getEscapedPath()', "/a%20b"),
    ('url("https://e.com/?x=1&x=2&y").getQuery()', {"x": ["1", "2"], "y": [""]}),
    ('url("/absolute/path").getEscapedPath()', "/absolute/path"),
    ('url("HTTPS://example.com/x") == url("https://example.com/x")', True),
    ('isURL("https://example.com")', True),
    ('isURL("example.com")', False),
    ('isURL("")', False),
    # regex
    ('"abc 123 def 456".find("[0-9]+")', "123"),
    ('"abc".find("[0-9]+")', ""),
    ('"abc 123 def 456".findAll("[0-9]+")', ["123", "456"]),
    ('"abc 123 def 456".findAll("[0-9]+", 1)', ["123"]),
    ('"abc 123".findAll("[0-9]+", 0)', []),
    ('"abc".findAll("a*")', ["a", "", ""]),
    ('"line\\n".find("e$")', ""),
    ('"xyz".find("[[:alpha:]]+\\\\z")', "xyz"),
    # lists
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
    ('"abcabc".indexOf("c")', 2),
    ('"abcabc".indexOf("c", 3)', 5),
    ('"abcabc".lastIndexOf("c")', 5),
    ('"abcabc".lastIndexOf("c", 4)', 2),
    ('"abc".indexOf("")', 0),
    ('"abc".lastIndexOf("")', 3),
    ('"héllo".indexOf("l")', 2),
    ("self.indexOf(2)", 1),
    # sets (cel-go extension)
    ("sets.contains([1, 2, 3], [2, 3])", True),
    ("sets.equivalent([1, 2], [2, 1, 1])", True),
    ("sets.intersects([1], [2])", False),
    # strings extension
    ('"%s=%d".format(["a", 1])', "a=1"),
    ('"a,b".split(",")', ["a", "b"]),
    ('["a", "b"].join("-")', "a-b"),
    ('" x ".trim()', "x"),
    # ip and cidr
    ('ip("192.168.0.1").family()', 4),
    ('ip("::1").family()', 6),
    ('string(ip("2001:0DB8::0001"))', "2001:db8::1"),
    ('ip("127.0.0.1").isLoopback()', True),
    ('ip("0.0.0.0").isUnspecified()', True),
    ('ip("224.0.0.1").isLinkLocalMulticast()', True),
    ('ip("ff02::1").isLinkLocalMulticast()', True),
    ('ip("169.254.1.1").isLinkLocalUnicast()', True),
    ('ip("fe80::1").isLinkLocalUnicast()', True),
    ('ip("10.0.0.1").isGlobalUnicast()', True),
    ('ip("255.255.255.255").isGlobalUnicast()', False),
    ('ip("1.2.3.4") == ip("1.2.3.4")', True),
    ('isIP("1.2.3")', False),
    ('isIP("fe80::1%eth0")', False),
    ('ip.isCanonical("2001:db8::1")', True),
    ('ip.isCanonical("2001:DB8::1")', False),
    ('cidr("10.0.0.0/8").containsIP("10.1.2.3")', True),
    ('cidr("10.0.0.0/8").containsIP(ip("11.0.0.1"))', False),
    ('cidr("10.0.0.0/8").containsCIDR("10.1.0.0/16")', True),
    ('cidr("10.1.0.0/16").containsCIDR(cidr("10.0.0.0/8"))', False),
    ('cidr("10.0.0.0/8").containsIP("::1")', False),
    ('string(cidr("10.1.2.3/8").masked())', "10.0.0.0/8"),
    ('string(cidr("10.1.2.3/8").ip())', "10.1.2.3"),
    ('cidr("2001:db8::/32").prefixLength()', 32),
    ('isCIDR("10.0.0.0/33")', False),
    ('cidr("10.0.0.1/8") == cidr("10.0.0.0/8")', False),
    # semver
    ('semver("1.2.3").isLessThan(semver("1.10.0"))', True),
    ('semver("1.2.3-alpha").compareTo(semver("1.2.3"))', -1),
    ('semver("1.2.3-alpha.2").compareTo(semver("1.2.3-alpha.10"))', -1),
    ('semver("1.2.3-alpha").compareTo(semver("1.2.3-1"))', 1),
    ('semver("1.2.3+build.1") == semver("1.2.3+build.2")', True),
    ('semver("2.3.4").major()', 2),
    ('semver("2.3.4").minor()', 3),
    ('semver("2.3.4").patch()', 4),
    ('semver("v1.02", true) == semver("1.2.0")', True),
    ('isSemver("1.2")', False),
    ('isSemver("v1.2", true)', True),
    ('isSemver("1.2-rc", true)', False),
    # format
    ('format.dns1123Label().validate("good-name").hasValue()', False),
    ('format.dns1123Label().validate("Bad_Name").hasValue()', True),
    ('format.dns1123Label().validate("a.b").value()', ["must not contain dots"]),
    ('format.named("dns1035Label").value().validate("1abc").hasValue()', True),
    ('format.named("nope").hasValue()', False),
    ('format.labelValue().validate("").hasValue()', False),
    ('format.qualifiedName().validate("example.com/MyName").hasValue()', False),
    ('format.uuid().validate("1b4e28ba-2fa1-11d2-883f-0016d3cca427").hasValue()', False),
    ('format.byte().validate("aGVsbG8=").hasValue()', False),
    ('format.byte().validate("not base64!").value()', ["invalid base64"]),
    ('format.date().validate("2024-02-30").value()', ["invalid date"]),
    ('format.datetime().validate("2024-02-03T10:00:00Z").hasValue()', False),
    ('format.uri().validate("https://example.com").hasValue()', False),
    ('format.dns1123LabelPrefix().validate("abc-").hasValue()', False),
    # optional types, two-variable comprehensions, cross-type numeric comparison
    ('{"a": 1}.?b.orValue(2)', 2),
    ("[10, 20].all(i, v, v > i)", True),
    ("1 < 1.5", True),
]


@pytest.mark.parametrize(("source", "expected"), VALUES)
def test_values(source: str, expected: Any) -> None:
    result = _eval(source, [1, 2, 3] if "self.indexOf" in source else "1536Mi")
    assert result == expected
    assert type(result) is type(expected)


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
    (
        'url("example.com")',
        'URL parse error during conversion from string: parse "example.com": invalid URI for request',
    ),
    (
        'url("https://example.com:port/")',
        'URL parse error during conversion from string: parse "https://example.com:port/": invalid port ":port" after host',
    ),
    ('url("https://ex%zzample.com")', 'invalid URL escape "%zz"'),
    (
        '"x".find("(?=a)")',
        "Illegal regex: error parsing regexp: invalid or unsupported Perl syntax: `(?=`",
    ),
    ('"x".find("(a)\\\\1")', "Illegal regex: error parsing regexp: invalid escape sequence: `\\1`"),
    ("[].min()", "min called on empty list"),
    ("[].max()", "max called on empty list"),
    ("[1, 'a'].isSorted()", "no such overload"),
    ('"abc".indexOf("c", -1)', "index out of range: -1"),
    (
        'ip("01.2.3.4")',
        'IP Address "01.2.3.4" parse error during conversion from string:'
        ' ParseAddr("01.2.3.4"): IPv4 field has octet with leading zero',
    ),
    ('ip("::ffff:1.2.3.4")', 'IPv4-mapped IPv6 address "::ffff:1.2.3.4" is not allowed'),
    ('ip("fe80::1%eth0")', 'IP address "fe80::1%eth0" with zone value is not allowed'),
    ('ip("1:2:3")', 'ParseAddr("1:2:3"): address string too short'),
    ('cidr("10.0.0.0")', "netip.ParsePrefix(\"10.0.0.0\"): no '/'"),
    ('cidr("10.0.0.0/33")', 'netip.ParsePrefix("10.0.0.0/33"): prefix length out of range'),
    ('semver("01.2.3")', 'Major number must not contain leading zeroes "01"'),
    ('semver("1.2")', "No Major.Minor.Patch elements found"),
    ('semver("1.2.3-")', "Prerelease is empty"),
    ('semver("1.2-rc", true)', "short version cannot contain PreRelease/Build meta data"),
    ('{"a": 1}.b', "no such key: b"),
]


@pytest.mark.parametrize(("source", "message"), ERRORS)
def test_errors(source: str, message: str) -> None:
    with pytest.raises(CelEvalError) as raised:
        _eval(source)
    assert message in str(raised.value)


COMPILE_ERRORS: list[tuple[str, str]] = [
    (
        'quantity("1").isLessThan(1)',
        "found no matching overload for 'isLessThan' applied to '(kubernetes.Quantity, int)'",
    ),
    (
        'ip("1.2.3.4") == "1.2.3.4"',
        "found no matching overload for '_==_' applied to '(net.IP, string)'",
    ),
    ('semver("1.0.0").isLessThan(quantity("1"))', "found no matching overload for 'isLessThan'"),
    ('"abc".reverse()', "found no matching overload for 'reverse'"),  # strings v3, not enabled
    ('url("https://x").getQuery().size() == "a"', "found no matching overload for '_==_'"),
    ("variables.nope == 1", "undefined field 'nope'"),
    ("format.dns1123Label().validate(1)", "found no matching overload for 'validate'"),
    ("1 +", "Syntax error"),
]


@pytest.mark.parametrize(("source", "message"), COMPILE_ERRORS)
def test_compile_errors(source: str, message: str) -> None:
    with pytest.raises(CelCompileError) as raised:
        k8s_engine().compile(source, _VARS)  # type: ignore[arg-type]
    assert message in str(raised.value)


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


def test_quantity_equality_survives_a_round_trip_through_python() -> None:
    # a quantity returned by one expression and bound into another keeps its Go state
    engine = k8s_engine()
    value = engine.compile('quantity("1.5Gi")', {}).evaluate({})
    check = engine.compile('q == quantity("1536Mi") && !q.isInteger()', {"q": "dyn"})
    assert check.evaluate({"q": value}) is True
