"""Unit tests for compiler.kube.quantity: spec Appendix A and apimachinery's own tables."""

from __future__ import annotations

import doctest
from decimal import Decimal

import pytest

import compiler.kube.quantity as quantity
from compiler.kube.quantity import (
    ERR_FORMAT_WRONG,
    ERR_NUMERIC,
    ERR_SUFFIX,
    Format,
    Quantity,
    QuantityError,
    canonical_quantity,
)


def q(text: str) -> Quantity:
    return Quantity.parse(text)


@pytest.mark.parametrize(
    ("text", "printed"),
    [
        # spec Appendix A
        ("1000m", "1"),
        ("1500m", "1500m"),
        ("0.5", "500m"),
        ("2000", "2k"),
        ("1500", "1500"),
        ("0", "0"),
        ("2048Mi", "2Gi"),
        ("1536Mi", "1536Mi"),
        ("0.5Gi", "512Mi"),
        ("1048576Ki", "1Gi"),
        ("1000Mi", "1000Mi"),
        ("1024", "1024"),
        # apimachinery TestQuantityParseEmit
        ("1Ki", "1Ki"),
        ("1024Mi", "1Gi"),
        ("1000M", "1G"),
        (".001Ki", "1024m"),
        (".000001Ki", "1024u"),
        (".000000001Ki", "1024n"),
        (".000000000001Ki", "2n"),
        ("-.000000000001Ki", "-2n"),
        # rounding up to nano, away from zero
        ("0.1n", "1n"),
        ("1.0000000001", "1000000001n"),
        ("-1e-10", "-1e-9"),
        # exponents
        ("1e3", "1e3"),
        ("1E-3", "1E-3"),
        ("1000e3", "1e6"),
        ("1e100", "10e99"),
        ("1.5e3", "1500"),
        # the suffix table stops at E: a larger DecimalSI exponent prints with no suffix
        ("1000P", "1E"),
        ("1000E", "1"),
        # BinarySI is capped at 2**63-1
        ("8Ei", "9223372036854775807"),
        ("-8Ei", "-9223372036854775807"),
        ("7Ei", "7Ei"),
        # the scanner is laxer than its regex
        ("-", "0"),
        (".", "0"),
        ("Ki", "0"),
        ("e3", "0"),
        ("5.", "5."),  # cached verbatim
    ],
)
def test_parse_and_print(text: str, printed: str) -> None:
    assert q(text).canonical() == printed


@pytest.mark.parametrize(
    "text",
    # Go keeps the input when it deems it canonical; these spellings survive as typed.
    ["1.500", "1.100", "12.345", "+1", "01", "+1Gi", "01Gi", "1025Ki", "1E3", "1.G", "1.500k"],
)
def test_cached_text_is_printed_verbatim(text: str) -> None:
    assert q(text).canonical() == text


def test_arithmetic_drops_cached_text() -> None:
    assert q("1.500").add(Quantity.zero()).canonical() == "1500m"
    assert q("+1Gi").mul(1).canonical() == "1Gi"


@pytest.mark.parametrize(
    ("text", "fmt"),
    [
        ("1Gi", Format.BINARY_SI),
        ("0.5Ki", Format.BINARY_SI),  # 512: not below 1, so still BinarySI (prints "512")
        ("0.0000001Ki", Format.DECIMAL_SI),  # in (0, 1): switched to DecimalSI
        ("1k", Format.DECIMAL_SI),
        ("1e3", Format.DECIMAL_EXPONENT),
        ("0", Format.DECIMAL_SI),
    ],
)
def test_format(text: str, fmt: Format) -> None:
    assert q(text).format is fmt


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", ERR_FORMAT_WRONG),
        ("1x", ERR_FORMAT_WRONG),
        ("1 ", ERR_FORMAT_WRONG),
        ("1.2.3", ERR_FORMAT_WRONG),
        ("1e3.5", ERR_FORMAT_WRONG),
        ("1e", ERR_SUFFIX),
        ("1ki", ERR_SUFFIX),
        ("1K", ERR_SUFFIX),
        ("1M3", ERR_SUFFIX),
        ("1e99999999999999999999", ERR_SUFFIX),
        ("Ei", ERR_NUMERIC),
        ("e-10", ERR_NUMERIC),
    ],
)
def test_parse_errors(text: str, message: str) -> None:
    with pytest.raises(QuantityError) as err:
        Quantity.parse(text)
    assert str(err.value) == message
    assert isinstance(err.value, ValueError)


def test_equality_is_by_value() -> None:
    assert q("1000m") == q("1") == q("1e0") == q("0.001k")
    assert q("1Ki") == q("1024")
    assert hash(q("1000m")) == hash(q("1"))
    assert q("1Gi") > q("1G") > q("999M")
    assert q("1.5Ki").as_decimal() == Decimal(1536)


def test_spec_arithmetic_examples() -> None:
    assert q("4Gi").mul(102).canonical() == "408Gi"
    total = Quantity.zero().add(q("300m")).add(q("500m").mul(4))
    assert total.canonical() == "2300m"
    mixed = Quantity.zero().add(q("2Gi")).add(q("4G"))
    assert mixed.format is Format.BINARY_SI
    assert mixed.canonical() == "6003402Ki"


def test_zero_adopts_the_first_addend_format() -> None:
    # apimachinery TestQuantityAddZeroPreservesSuffix
    for text in ("100m", "1Gi"):
        assert q(text).add(q("0")).canonical() == text
        assert q("0").add(q(text)).canonical() == text
    assert Quantity.zero().format is Format.UNSET
    assert Quantity.zero().add(q("0")).format is Format.DECIMAL_SI
    # the check is on the running value: a sum that cancels adopts again
    back_to_zero = q("1").add(q("-1"))
    assert back_to_zero.add(q("1Gi")).canonical() == "1Gi"
    assert q("10").add(q("1Ki")).format is Format.DECIMAL_SI


def test_mul() -> None:
    assert q("500m").mul(4).canonical() == "2"
    assert q("1Gi").mul(0).canonical() == "0"
    assert q("1Gi").mul(0).format is Format.BINARY_SI
    assert q("-50").mul(-50).canonical() == "2500"
    big = Quantity.of_int(2**63 - 1).mul(2)
    assert big.canonical() == str(2 * (2**63 - 1))
    assert big.is_big


def test_representation_follows_go() -> None:
    assert not q("300m").is_big
    assert q("300m").mul(1).is_big  # 300 is not a whole number of units: Go goes to inf.Dec
    assert not q("500m").mul(4).is_big
    assert q("0.5Gi").is_big  # fractional binary parses through inf.Dec
    assert not q("512Mi").is_big


@pytest.mark.parametrize(
    ("text", "value", "milli"),
    [
        ("0.7", 1, 700),
        ("2500m", 3, 2500),
        ("3.7", 4, 3700),
        ("1n", 1, 1),
        ("1Ki", 1024, 1024000),
        ("1.0001", 2, 1001),
        ("-2.5", -3, -2500),  # small value: away from zero
        ("999999999999999999", 999999999999999999, 3875820019684211736),  # Go wraps
    ],
)
def test_value(text: str, value: int, milli: int) -> None:
    assert (q(text).value(), q(text).milli_value()) == (value, milli)


def test_roundtrip_may_change_format_once() -> None:
    half = q("0.5Ki")
    assert half.format is Format.BINARY_SI
    again = half.roundtrip()
    assert again.canonical() == "512"
    assert again.format is Format.DECIMAL_SI
    assert again.roundtrip().format is Format.DECIMAL_SI


@pytest.mark.parametrize(
    ("value", "printed"),
    [
        (2, "2"),
        (0, "0"),
        (1000, "1k"),
        (0.5, "500m"),
        (1.5, "1500m"),
        (1000.0, "1k"),
        (-0.0, "0"),
        (1e21, "1e+21"),  # Go's JSON text for 1e21, kept verbatim by the parser
        (1.5e21, "1500e18"),
        (1e-7, "100e-9"),
        (2**64 - 1, "18446744073709552k"),  # beyond int64: a float64 on the way
        ("1000m", "1"),
        ("0.5", "500m"),
        ("2048Mi", "2Gi"),
        (" 1Gi\u00a0", "1Gi"),  # JSON leaves these spaces alone and Go trims them
    ],
)
def test_canonical_quantity(value: str | int | float, printed: str) -> None:
    assert canonical_quantity(value) == printed


@pytest.mark.parametrize("value", ["1Gi\t", "\n1", True, float("nan"), float("inf"), 10**400])
def test_canonical_quantity_rejects(value: str | int | float) -> None:
    with pytest.raises(QuantityError):
        canonical_quantity(value)


def test_doctests() -> None:
    result = doctest.testmod(quantity, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
    assert result.attempted > 0
