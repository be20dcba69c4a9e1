"""Kubernetes resource quantities, reproducing ``resource.Quantity`` of apimachinery v0.36.2.

A :class:`Quantity` is an exact decimal (never a float) plus the "format" it prints in::

    >>> Quantity.parse("1.5Gi").canonical()
    '1536Mi'
    >>> Quantity.parse("0.5").canonical()
    '500m'
    >>> Quantity.parse("4Gi").mul(102).canonical()
    '408Gi'

Besides the value, three pieces of Go state are mirrored because they are observable:

* ``format`` (``BinarySI``/``DecimalSI``/``DecimalExponent``, or unset for a zero value):
  it picks the suffix family on output and is adopted by a zero sum in :meth:`Quantity.add`.
* the cached text: a parsed string that Go considers canonical is printed back verbatim,
  which includes some non-canonical spellings (``"1.500"`` stays ``"1.500"``, ``"+1Gi"``
  stays ``"+1Gi"``, ``"1E3"`` stays ``"1E3"``). Arithmetic drops the cache.
* the representation, small (int64 mantissa and scale) or big (``inf.Dec``). Go mutates a big
  value through a shared pointer in ``Mul``; see ``podrequests.after_podgroup_build``.

Go's int32 exponent arithmetic (wrap-around) is reproduced where Go computes cheaply; values
whose evaluation would need ``10**(2**31)`` are not (Go cannot finish those either).
"""

from __future__ import annotations

import math
from decimal import Decimal
from enum import StrEnum
from typing import Final, final

from compiler.kube.gotext import go_json_float

__all__ = [
    "ERR_FORMAT_WRONG",
    "ERR_NUMERIC",
    "ERR_SUFFIX",
    "Format",
    "Quantity",
    "QuantityError",
    "canonical_quantity",
]

_INT64_MIN: Final = -(1 << 63)
_INT64_MAX: Final = (1 << 63) - 1
_NANO: Final = -9
_MAX_RESCALE: Final = 100_000

_SPLIT_RE: Final = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
ERR_FORMAT_WRONG: Final = f"quantities must match the regular expression '{_SPLIT_RE}'"
ERR_NUMERIC: Final = "unable to parse numeric part of quantity"
ERR_SUFFIX: Final = "unable to parse quantity's suffix"

_SUFFIX_CHARS: Final = frozenset("eEinumkKMGTP")
_DIGITS: Final = frozenset("0123456789")

# Characters Go's strings.TrimSpace removes that encoding/json leaves unescaped in a string.
_JSON_TRIMMABLE: Final = " \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007" + (
    "\u2008\u2009\u200a\u202f\u205f\u3000"
)


class QuantityError(ValueError):
    """A string that ``resource.ParseQuantity`` rejects; the message is Go's."""


class Format(StrEnum):
    """How a quantity prints; ``UNSET`` is the format of Go's zero value ``Quantity{}``."""

    DECIMAL_EXPONENT = "DecimalExponent"
    BINARY_SI = "BinarySI"
    DECIMAL_SI = "DecimalSI"
    UNSET = ""


_DECIMAL_SUFFIXES: Final[dict[str, int]] = {
    "n": -9,
    "u": -6,
    "m": -3,
    "": 0,
    "k": 3,
    "M": 6,
    "G": 9,
    "T": 12,
    "P": 15,
    "E": 18,
}
_BINARY_SUFFIXES: Final[dict[str, int]] = {
    "Ki": 10,
    "Mi": 20,
    "Gi": 30,
    "Ti": 40,
    "Pi": 50,
    "Ei": 60,
}
_DECIMAL_BY_EXPONENT: Final = {e: s for s, e in _DECIMAL_SUFFIXES.items()}
_BINARY_BY_EXPONENT: Final = {e: s for s, e in _BINARY_SUFFIXES.items()}


# --- Go integer semantics -------------------------------------------------------------------


def _i32(v: int) -> int:
    """Wrap to int32 like a Go conversion or int32 overflow."""
    return ((v + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def _i64(v: int) -> int:
    """Wrap to int64 like Go's two's-complement overflow."""
    return ((v - _INT64_MIN) & 0xFFFFFFFFFFFFFFFF) + _INT64_MIN


def _pow10(n: int) -> int:
    """10**n for n >= 0, typed as int."""
    result: int = 10**n
    return result


def _fits64(v: int) -> bool:
    return _INT64_MIN <= v <= _INT64_MAX


def _go_rem(a: int, b: int) -> int:
    """Go's ``%``: the sign follows the dividend."""
    r = abs(a) % b
    return -r if a < 0 else r


def _big_int64(v: int) -> int:
    """``big.Int.Int64()``: the low 64 bits of |v|, negated for negative v."""
    low = abs(v) & 0xFFFFFFFFFFFFFFFF
    return _i64(-low if v < 0 else low)


def _positive_scale(base: int, scale: int) -> tuple[int, bool]:
    """``positiveScaleInt64``: base * 10**scale and whether it fit an int64.

    Like Go: a negative (wrapped int32) scale returns base unchanged; on overflow scales 1, 2,
    3, 6 and 9 return the wrapped product, other scales 0.
    """
    if scale <= 0 or base == 0:
        return base, True
    if scale > 19:
        return 0, False
    product = base * _pow10(scale)
    if _fits64(product):
        return product, True
    if scale in (1, 2, 3, 6, 9) and base != _INT64_MIN:
        return _i64(product), False
    return 0, False


def _scaled_fits(base: int, scale: int) -> bool:
    """Whether ``positiveScaleInt64(base, scale)`` succeeds."""
    return _positive_scale(base, scale)[1]


_STR_LIMIT = 10**4000


def _int_str(n: int) -> str:
    """``str(n)`` without Python's 4300-digit conversion limit."""
    if -_STR_LIMIT < n < _STR_LIMIT:
        return str(n)
    return format(Decimal(n), "f")


def _digits_int(digits: str) -> int:
    """``int(digits)`` without Python's 4300-digit conversion limit."""
    if len(digits) < 4000:
        return int(digits)
    return int(Decimal(digits))


def _strip_tens(m: int) -> tuple[int, int]:
    """m without trailing decimal zeros, and how many were removed (0 stays 0)."""
    if m == 0:
        return 0, 0
    times = 0
    while m % 10**16 == 0:
        m //= 10**16
        times += 16
    while m % 10 == 0:
        m //= 10
        times += 1
    return m, times


def _ceil_div_pow10(m: int, k: int) -> int:
    """ceil(m / 10**k) for m > 0 and k > 0, without building huge powers needlessly."""
    if k > m.bit_length():
        return 1
    q, r = divmod(m, _pow10(k))
    return q + (1 if r else 0)


def _cmp_values(am: int, ae: int, bm: int, be: int) -> int:
    """Compare am*10**ae with bm*10**be exactly."""
    if ae > be:
        am *= _pow10(ae - be)
    elif be > ae:
        bm *= _pow10(be - ae)
    return (am > bm) - (am < bm)


# --- the value type -------------------------------------------------------------------------


# Quantities are immutable and the same few texts recur in every TrainJob: parse each once.
_PARSED: dict[str, Quantity] = {}


@final
class Quantity:
    """An immutable ``resource.Quantity``; equality and ordering compare values only.

    Build one with :meth:`parse`, :meth:`from_manifest` or :meth:`zero`::

        >>> Quantity.parse("1000m") == Quantity.parse("1")
        True
    """

    __slots__ = ("_big", "_cached", "_e", "_format", "_m")

    def __init__(
        self, m: int, e: int, *, big: bool, fmt: Format, cached: str | None = None
    ) -> None:
        # value = m * 10**e; for a small (int64Amount) value m and e are Go's value and scale.
        self._m = m
        self._e = e
        self._big = big
        self._format = fmt
        self._cached = cached

    # -- construction

    @classmethod
    def zero(cls) -> Quantity:
        """Go's zero value ``resource.Quantity{}``: 0 with an unset format."""
        return cls(0, 0, big=False, fmt=Format.UNSET)

    @classmethod
    def of_int(cls, value: int, fmt: Format = Format.DECIMAL_SI) -> Quantity:
        """``resource.NewQuantity(value, fmt)``: ``of_int(2048, BINARY_SI)`` prints ``2Ki``."""
        if not _fits64(value):
            raise ValueError(f"{value} does not fit an int64")
        return cls(value, 0, big=False, fmt=fmt)

    @classmethod
    def parse(cls, text: str) -> Quantity:
        """``resource.ParseQuantity``: ``"1.5Gi"`` -> 1610612736 (BinarySI).

        Rounds up (away from zero) to nano precision, caps BinarySI magnitudes at 2**63-1 and
        turns BinarySI values in (0, 1) into DecimalSI. Raises :class:`QuantityError` with
        Go's message for strings Go rejects (``"1x"``, ``"1e"``, ``"Ei"``).
        """
        parsed = _PARSED.get(text)
        if parsed is None:
            parsed = cls._parse(text)
            if len(_PARSED) >= 4096:
                _PARSED.clear()
            _PARSED[text] = parsed
        return parsed

    @classmethod
    def _parse(cls, text: str) -> Quantity:
        if text == "":
            raise QuantityError(ERR_FORMAT_WRONG)
        if text == "0":
            return cls(0, 0, big=False, fmt=Format.DECIMAL_SI, cached=text)
        positive, value, num, denom, suffix = _scan(text)
        exponent, fmt = _interpret(suffix)

        precision = 0
        scale = 0
        mantissa = 1
        if fmt is Format.BINARY_SI:
            if exponent >= 0 and not denom:
                mantissa = 1 << exponent
                precision = 15 - len(num) - (exponent * 3 // 10) - 1
            else:
                precision = -1
        else:
            scale = exponent
            precision = 18 - (len(num) + len(denom))

        if precision >= 0:
            scale = _i32(scale - len(denom))
            if scale >= _NANO:
                shifted = num + denom
                digits = int(shifted)
                result = digits * mantissa
                if _fits64(result):
                    if not positive:
                        result = -result
                    cached: str | None = None
                    if fmt is Format.BINARY_SI:
                        if exponent % 10 == 0 and digits & 0x07 != 0:
                            cached = text
                    elif scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0":
                        cached = text
                    return cls(result, scale, big=False, fmt=fmt, cached=cached)

        return cls._parse_big(value, exponent, fmt)

    @classmethod
    def _parse_big(cls, value: str, exponent: int, fmt: Format) -> Quantity:
        """The ``inf.Dec`` branch of ParseQuantity (too many digits, below nano, fractional Ki)."""
        sign_text = value[0] if value[:1] in ("+", "-") else ""
        body = value[len(sign_text) :]
        whole, _, frac = body.partition(".")
        if not any(c in _DIGITS for c in body):
            raise QuantityError(ERR_NUMERIC)
        unscaled = _digits_int((whole + frac) or "0")
        dec_scale = len(frac)  # inf.Dec scale: value = unscaled * 10**-dec_scale
        if fmt is Format.BINARY_SI:
            unscaled <<= exponent
        else:
            dec_scale = _i32(dec_scale + _i32(-exponent))
        negative = sign_text == "-" and unscaled != 0
        m, e = unscaled, -dec_scale
        if m != 0:
            # Round up to scale 9 (Go's Dec then holds exactly 9 decimals). Scaling up by an
            # absurd power is skipped: same value, and Go would not finish computing it.
            if e < _NANO:
                m, e = _ceil_div_pow10(m, _NANO - e), _NANO
            elif e - _NANO <= _MAX_RESCALE:
                m, e = m * _pow10(e - _NANO), _NANO
        if fmt is Format.BINARY_SI:
            if _cmp_values(m, e, _INT64_MAX, 0) > 0:
                m, e = _INT64_MAX, 0
            if m != 0 and _cmp_values(m, e, 1, 0) < 0:
                fmt = Format.DECIMAL_SI
        return cls(-m if negative else m, e, big=True, fmt=fmt)

    @classmethod
    def from_manifest(cls, value: str | int | float) -> Quantity:
        """The Quantity the controller decodes for a YAML scalar applied with kubectl.

        The scalar travels as JSON: kubectl encodes it, the API server keeps numbers as int64
        when they fit and float64 otherwise, and ``Quantity.UnmarshalJSON`` parses the text
        (strings with surrounding spaces trimmed). Floats print as Go's encoding/json does::

            >>> Quantity.from_manifest(2).canonical()
            '2'
            >>> Quantity.from_manifest(1.5).canonical()
            '1500m'
            >>> Quantity.from_manifest(1e21).canonical()    # JSON text 1e+21, kept verbatim
            '1e+21'
        """
        if isinstance(value, bool):
            return cls.parse("true" if value else "false")
        if isinstance(value, int):
            value = int(value)  # plain int: YAML loaders return subclasses (hex, octal, ...)
            if _fits64(value):
                return cls.parse(str(value))
            try:
                as_float = float(value)
            except OverflowError as err:
                raise QuantityError(f"number {value} is out of range for a float64") from err
            return cls.parse(_go_json_float(as_float))
        if isinstance(value, float):
            return cls.parse(_go_json_float(float(value)))
        if isinstance(value, str):
            return cls.parse(str(value).strip(_JSON_TRIMMABLE))
        raise TypeError(f"a quantity must be a string or a number, got {type(value).__name__}")

    # -- accessors

    @property
    def format(self) -> Format:
        return self._format

    @property
    def is_big(self) -> bool:
        """Whether Go holds this value as an ``inf.Dec`` (shared by copies) instead of int64."""
        return self._big

    def is_zero(self) -> bool:
        return self._m == 0

    def sign(self) -> int:
        return (self._m > 0) - (self._m < 0)

    def as_decimal(self) -> Decimal:
        """The exact value: ``Quantity.parse("1.5Ki").as_decimal() == Decimal(1536)``."""
        return Decimal(self._m).scaleb(self._e) if self._m else Decimal(0)

    # -- output

    def canonical(self) -> str:
        """``Quantity.String()``: the cached text if parsing kept one, else the canonical form.

        DecimalSI/DecimalExponent write ``m * 10**e`` with e lowered to a multiple of 3
        (``1.5`` -> ``1500m``); BinarySI writes powers of 1024 when the value is an integer of
        magnitude >= 1024 (``1536Ki`` -> ``1536Ki``, ``2048Ki`` -> ``2Mi``), else DecimalSI.
        """
        if self._cached is not None:
            return self._cached
        if self._m == 0:
            return "0"
        fmt = self._format
        if fmt is Format.BINARY_SI:
            if _cmp_values(abs(self._m), self._e, 1024, 0) < 0 or not self._is_integer():
                fmt = Format.DECIMAL_SI
        elif fmt is not Format.DECIMAL_SI:
            fmt = Format.DECIMAL_EXPONENT
        if fmt is Format.BINARY_SI:
            return self._canonical_binary()
        number, exponent = self._canonical_decimal()
        if fmt is Format.DECIMAL_SI:
            # An exponent outside n..E has no suffix in Go's table: 1000E prints as "1".
            return number + _DECIMAL_BY_EXPONENT.get(exponent, "")
        return number if exponent == 0 else f"{number}e{exponent}"

    def __str__(self) -> str:
        return self.canonical()

    def __repr__(self) -> str:
        return f"Quantity({self.canonical()!r}, {self._format.value or 'unset'})"

    def _is_integer(self) -> bool:
        if self._e >= 0:
            return True
        return self._m % _pow10(-self._e) == 0

    def _integer_value(self) -> int:
        if self._e >= 0:
            return self._m * _pow10(self._e)
        return self._m // _pow10(-self._e)

    def _canonical_decimal(self) -> tuple[str, int]:
        m, times = _strip_tens(self._m)
        if not self._big:
            # int64Amount.AsCanonicalBytes: int32 exponent, one step to a multiple of 3.
            exponent = _i32(self._e + times)
            rem = _go_rem(exponent, 3)
            if rem in (1, -2):
                if _fits64(m * 10):
                    return _int_str(m * 10), _i32(exponent - 1)
            elif rem in (2, -1):
                if _fits64(m * 100):
                    return _int_str(m * 100), _i32(exponent - 2)
            else:
                return _int_str(m), exponent
            m, times = _strip_tens(self._m)
        # infDecAmount.AsCanonicalBytes: lower the exponent one by one.
        exponent = _i32(_i32(self._e) + times)
        while _go_rem(exponent, 3) != 0:
            m *= 10
            exponent = _i32(exponent - 1)
        return _int_str(m), exponent

    def _canonical_binary(self) -> str:
        n = self._integer_value()
        magnitude = abs(n)
        times = 0
        # removeInt64Factors negates an int64: -2**63 stays negative, so Go strips no factor
        # and prints the digits ("-9223372036854775808", not "-8Ei"); inf.Dec has no such edge.
        at_int64_min = not self._big and n == -(2**63)
        while not at_int64_min and magnitude >= 1024 and magnitude % 1024 == 0:
            magnitude //= 1024
            times += 1
        number = _int_str(-magnitude if n < 0 else magnitude)
        return number + _BINARY_BY_EXPONENT.get(times * 10, "")

    # -- arithmetic (new values; Go mutates the receiver)

    def add(self, other: Quantity) -> Quantity:
        """``q.Add(y)``: exact sum; a zero receiver adopts ``other``'s format.

        The zero check is on the running value, so ``zero().add(parse("0.5Gi"))`` is BinarySI
        and a sum that cancels to 0 adopts the next addend's format again::

            >>> Quantity.zero().add(Quantity.parse("2Gi")).add(Quantity.parse("4G")).canonical()
            '6003402Ki'
        """
        fmt = other._format if self._m == 0 else self._format
        if not self._big and not other._big:
            small = _small_add(self._m, self._e, other._m, other._e)
            if small is not None:
                return Quantity(small[0], small[1], big=False, fmt=fmt)
        e = min(self._e, other._e)
        m = self._m * _pow10(self._e - e) + other._m * _pow10(other._e - e)
        return Quantity(m, e, big=True, fmt=fmt)

    def mul(self, factor: int) -> Quantity:
        """``q.Mul(n)``: exact product, format kept: ``parse("500m").mul(4)`` prints ``2``."""
        if not _fits64(factor):
            raise ValueError(f"factor {factor} does not fit an int64")
        if not self._big:
            small = _small_mul(self._m, self._e, factor)
            if small is not None:
                return Quantity(small[0], small[1], big=False, fmt=self._format)
        return Quantity(self._m * factor, self._e, big=True, fmt=self._format)

    def neg(self) -> Quantity:
        """``q.Neg()``."""
        return Quantity(-self._m, self._e, big=self._big, fmt=self._format)

    def round_up(self, scale: int) -> Quantity:
        """``Quantity.RoundUp(scale)``: the value rounded away from zero to a multiple of
        ``10**scale``. A small value already that coarse is returned as it is (its text
        kept); otherwise the text is dropped and the canonical form printed::

            >>> Quantity.parse("1500u").round_up(-3).canonical()
            '2m'
            >>> Quantity.parse("250m").round_up(-3).canonical()
            '250m'
        """
        if not self._big and self._e >= scale:
            return self
        if self._e >= scale:
            m = self._m * 10 ** (self._e - scale)
        else:
            factor = 10 ** (scale - self._e)
            m = -(-abs(self._m) // factor) * self.sign()
        return Quantity(m, scale, big=self._big, fmt=self._format)

    def roundtrip(self) -> Quantity:
        """The value after a typed JSON round trip (marshal, then unmarshal).

        Format can change once: ``parse("0.5Ki")`` is BinarySI but prints ``512``, which parses
        back as DecimalSI. Trainer round-trips on each runtime patch and resourcesPerNode merge.
        """
        return Quantity.parse(self.canonical())

    def with_big(self) -> Quantity:
        """The same quantity converted to ``inf.Dec`` (what Go's ``AsDec``/``ToDec`` do)."""
        if self._big:
            return self
        return Quantity(self._m, self._e, big=True, fmt=self._format, cached=self._cached)

    # -- comparison

    def cmp(self, other: Quantity) -> int:
        """``q.Cmp(y)``: -1, 0 or 1 by value."""
        return _cmp_values(self._m, self._e, other._m, other._e)

    def _key(self) -> tuple[int, int]:
        m, times = _strip_tens(self._m)
        return (m, self._e + times) if m else (0, 0)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.cmp(other) == 0

    def __hash__(self) -> int:
        return hash(self._key())

    def __lt__(self, other: Quantity) -> bool:
        return self.cmp(other) < 0

    def __le__(self, other: Quantity) -> bool:
        return self.cmp(other) <= 0

    def __gt__(self, other: Quantity) -> bool:
        return self.cmp(other) > 0

    def __ge__(self, other: Quantity) -> bool:
        return self.cmp(other) >= 0

    # -- integer views

    def value(self) -> int:
        """``q.Value()``: rounded up to an integer: ``0.7`` -> 1, ``2500m`` -> 3, ``3.7`` -> 4.

        Go's quirks are kept for values beyond int64 (wrapped or 0) and for negative values
        (the rounding direction depends on Go's internal representation).
        """
        return self.scaled_value(0)

    def milli_value(self) -> int:
        """``q.MilliValue()``: ``parse("1.0001").milli_value()`` is 1001."""
        return self.scaled_value(-3)

    def scaled_value(self, scale: int) -> int:
        """``q.ScaledValue(scale)``: ceil(q / 10**scale) with Go's int64 behaviour."""
        if not self._big:
            if self._e < scale:
                return _negative_scale(self._m, _i32(scale - self._e))[0]
            return _positive_scale(self._m, _i32(self._e - scale))[0]
        unscaled = self._m
        dif = scale - self._e  # Go: dec scale minus the new scale
        if dif == 0:
            return _big_int64(unscaled)
        if dif < 0:
            return _i64(_big_int64(unscaled) * _go_pow10_int64(-dif))
        if unscaled < _INT64_MAX and dif < 19:
            low = _big_int64(unscaled)
            divisor = _pow10(dif)
            quotient = abs(low) // divisor * (1 if low >= 0 else -1)
            remainder = low - quotient * divisor
            return _i64(quotient + 1) if remainder != 0 else quotient
        quotient, remainder = divmod(unscaled, _pow10(dif))
        return _i64(_big_int64(quotient) + 1) if remainder else _big_int64(quotient)


# --- parse helpers --------------------------------------------------------------------------


def _scan(text: str) -> tuple[bool, str, str, str, str]:
    """Split into (positive, numeric text, integer digits, fraction digits, suffix).

    Mirrors Go's hand-written scanner, which is laxer than its error message's regex:
    ``"-"``, ``"."`` and ``"Ki"`` all scan as zero.
    """
    positive = True
    pos = 0
    end = len(text)
    if pos < end and text[0] in "+-":
        positive = text[0] == "+"
        pos += 1

    while pos < end and text[pos] == "0":
        pos += 1
    if pos >= end:
        return positive, "0", "0", "", ""

    start = pos
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    if pos >= end:
        return positive, text, text[start:], "", ""
    num = text[start:pos] or "0"

    denom = ""
    if text[pos] == ".":
        pos += 1
        start = pos
        while pos < end and text[pos] in _DIGITS:
            pos += 1
        denom = text[start:pos]
        if pos >= end:
            return positive, text, num, denom, ""
    value = text[:pos]

    suffix_start = pos
    while pos < end and text[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos >= end:
        return positive, value, num, denom, text[suffix_start:]
    if text[pos] in "+-":
        pos += 1
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    if pos < end:
        raise QuantityError(ERR_FORMAT_WRONG)
    return positive, value, num, denom, text[suffix_start:]


def _interpret(suffix: str) -> tuple[int, Format]:
    """Suffix -> (exponent, format); base 2 for BinarySI, base 10 otherwise."""
    if suffix in _DECIMAL_SUFFIXES:
        return _DECIMAL_SUFFIXES[suffix], Format.DECIMAL_SI
    if suffix in _BINARY_SUFFIXES:
        return _BINARY_SUFFIXES[suffix], Format.BINARY_SI
    if len(suffix) > 1 and suffix[0] in "eE":
        digits = suffix[1:]
        body = digits[1:] if digits[0] in "+-" else digits
        if not body or any(c not in _DIGITS for c in body):
            raise QuantityError(ERR_SUFFIX)
        if len(body.lstrip("0")) > 19:
            raise QuantityError(ERR_SUFFIX)
        parsed = int(digits)
        if not _fits64(parsed):
            raise QuantityError(ERR_SUFFIX)
        return _i32(parsed), Format.DECIMAL_EXPONENT
    raise QuantityError(ERR_SUFFIX)


def _small_add(am: int, ae: int, bm: int, be: int) -> tuple[int, int] | None:
    """``int64Amount.Add``: the sum at the smaller scale, or None when int64 overflows."""
    if bm == 0:
        return am, ae
    if am == 0:
        return bm, be
    if ae == be:
        total = am + bm
        return (total, ae) if _fits64(total) else None
    # Go subtracts the int32 scales with wrap-around; only exponents near 2**31 notice.
    if ae > be:
        scaled, ok = _positive_scale(am, _i32(ae - be))
        total = scaled + bm
        return (total, be) if ok and _fits64(total) else None
    scaled, ok = _positive_scale(bm, _i32(be - ae))
    total = am + scaled
    return (total, ae) if ok and _fits64(total) else None


def _small_mul(m: int, e: int, factor: int) -> tuple[int, int] | None:
    """``int64Amount.Mul``: None when the product leaves int64 or is inexact at its scale."""
    if m == 0:
        return m, e
    if factor == 0:
        return 0, 0
    product = m * factor
    if not _fits64(product):
        return None
    if e > 0 and not _scaled_fits(product, e):
        return None
    if e < 0 and product % _pow10(-e) != 0:
        return None
    return product, e


def _negative_scale(base: int, scale: int) -> tuple[int, bool]:
    """``negativeScaleInt64``: base / 10**scale rounded away from zero, and exactness."""
    if scale <= 0:
        return base, True
    magnitude = abs(base)
    if scale > magnitude.bit_length() + 1:
        quotient, fraction = 0, magnitude != 0
    else:
        quotient, remainder = divmod(magnitude, _pow10(scale))
        fraction = remainder != 0
    if fraction:
        quotient += 1
    return (quotient if base >= 0 else -quotient), not fraction


def _go_pow10_int64(n: int) -> int:
    """``int64(math.Pow10(n))`` on amd64: exact up to 10**18, then the int64 minimum."""
    return _pow10(n) if n <= 18 else _INT64_MIN


def _go_json_float(value: float) -> str:
    """The text Go's encoding/json writes for a float64, after the API server re-encodes it.

    ``1000.0`` -> ``1000``, ``0.5`` -> ``0.5``, ``1e21`` -> ``1e+21``, ``1e-7`` -> ``1e-7``,
    ``-0.0`` -> ``0`` (the API server stores integral JSON numbers as int64).
    """
    if math.isnan(value) or math.isinf(value):
        raise QuantityError(f"json: unsupported value: {value!r}")
    return "0" if value == 0 else go_json_float(value)


def canonical_quantity(value: str | int | float) -> str:
    """How the controller prints a quantity that came from YAML (R-3.6, Appendix A).

    >>> [canonical_quantity(v) for v in ("1000m", "0.5", "2048Mi", 2, 0.25, "1.500")]
    ['1', '500m', '2Gi', '2', '250m', '1.500']
    """
    return Quantity.from_manifest(value).canonical()
