"""Go's text forms of values: ``strconv.Quote``, ``strconv.FormatFloat`` and encoding/json.

The API server's messages, the CEL libraries' errors and the emitter all need the text
a Go program would print; it is worked out once, here.

``strconv.FormatFloat(f, 'g', -1, ...)`` and encoding/json differ only in where they
switch to exponent form and how they pad the exponent::

    >>> layout("", "15", 2, low=-4, high=6, exponent_digits=2)
    '150'
    >>> layout("-", "15", -7, low=-4, high=6, exponent_digits=2)
    '-1.5e-07'
    >>> (go_float(1e6), go_json_float(1e-7), go_json_float(1e21))
    ('1e+06', '1e-7', '1e+21')
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from typing import Any


def layout(
    sign: str, digits: str, exponent: int, *, low: int, high: int, exponent_digits: int
) -> str:
    """``digits`` (no leading zeros) times 10**exponent: exponent form outside [low, high)."""
    if exponent < low or exponent >= high:
        fraction = f".{digits[1:]}" if len(digits) > 1 else ""
        mark = "-" if exponent < 0 else "+"
        return f"{sign}{digits[0]}{fraction}e{mark}{abs(exponent):0{exponent_digits}d}"
    if exponent < 0:
        return f"{sign}0.{'0' * (-exponent - 1)}{digits}"
    if len(digits) <= exponent + 1:
        return f"{sign}{digits}{'0' * (exponent + 1 - len(digits))}"
    return f"{sign}{digits[: exponent + 1]}.{digits[exponent + 1 :]}"


def go_quote(text: str) -> str:
    """Go's ``strconv.Quote``: ``'a"b\\n'`` -> ``"a\\"b\\n"``."""
    out = ['"']
    for char in text:
        code = ord(char)
        if char == '"':
            out.append('\\"')
        elif char == "\\":
            out.append("\\\\")
        elif char.isprintable() or char == " ":
            out.append(char)
        elif char in _GO_ESCAPES:
            out.append(_GO_ESCAPES[char])
        elif code < 0x80:
            out.append(f"\\x{code:02x}")
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


_GO_ESCAPES = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
}


def shortest_digits(value: float) -> tuple[str, int]:
    """Shortest round-trip decimal digits of ``value`` and its decimal exponent."""
    text = repr(abs(value))
    if "e" in text:
        mantissa, _, exponent = text.partition("e")
        digits = mantissa.replace(".", "")
        exp = int(exponent)
    else:
        whole, _, frac = text.partition(".")
        frac = frac.rstrip("0")
        if whole != "0":
            digits = (whole + frac).lstrip("0")
            exp = len(whole) - 1
        else:
            stripped = frac.lstrip("0")
            digits = stripped
            exp = -(len(frac) - len(stripped)) - 1
    digits = digits.rstrip("0") or "0"
    return digits, exp


def go_float(value: float) -> str:
    """Go's ``%v`` of a float64 (``strconv.FormatFloat(v, 'g', -1, 64)``): 1e6 -> ``1e+06``."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    sign = "-" if value < 0 else ""
    digits, exp = shortest_digits(value)
    return layout(sign, digits, exp, low=-4, high=6, exponent_digits=2)


def go_json_float(value: float) -> str:
    """encoding/json's float64 text: plain decimal unless the exponent is < -6 or >= 21."""
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    sign = "-" if value < 0 else ""
    digits, exp = shortest_digits(value)
    return layout(sign, digits, exp, low=-6, high=21, exponent_digits=1)


def go_json(value: Any, *, sort_keys: bool = True) -> str:
    """Go's ``json.Marshal`` text: compact, ``<>&`` escaped; mapping keys sorted, as for a
    Go map (``sort_keys=False``: in the given order, as for a struct already in Go field
    order).

    >>> go_json({"b": [1, 2.5, None], "a": "x<y"})
    '{"a":"x\\\\u003cy","b":[1,2.5,null]}'
    """
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return go_json_float(value)
    if isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
        return (
            text.replace("<", "\\u003c")
            .replace(">", "\\u003e")
            .replace("&", "\\u0026")
            .replace("\u2028", "\\u2028")
            .replace("\u2029", "\\u2029")
        )
    if isinstance(value, Mapping):
        keys = sorted(value) if sort_keys else list(value)
        return (
            "{"
            + ",".join(f"{go_json(str(k))}:{go_json(value[k], sort_keys=sort_keys)}" for k in keys)
            + "}"
        )
    if isinstance(value, Iterable):
        return "[" + ",".join(go_json(item, sort_keys=sort_keys) for item in value) + "]"
    return go_json(str(value))


def aggregated(texts: Iterable[str]) -> str:
    """How an aggregate of errors prints (apimachinery ``utilerrors.NewAggregate``), as
    in every ``... is invalid: <errors>``: a repeated text once, one text bare, several
    in brackets.

    >>> aggregated(["a: Required value"])
    'a: Required value'
    >>> aggregated(["a: Required value", "b: Forbidden", "a: Required value"])
    '[a: Required value, b: Forbidden]'
    """
    unique = list(dict.fromkeys(texts))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"
