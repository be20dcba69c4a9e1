"""Go's ``encoding/json`` text of unstructured values, as Katib serialises a trial template.

Katib substitutes ``${trialParameters.x}`` into the *text* of the template
(``Unstructured.MarshalJSON``: compact, keys sorted, ``<``, ``>`` and ``&`` escaped, numbers
in Go's shortest form), so the bytes must be Go's for the substitution to hit the same
places::

    >>> go_json({"b": [1, 0.5, 1e21], "a": "<x>"})
    '{"a":"\\\\u003cx\\\\u003e","b":[1,0.5,1e+21]}'
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["go_float", "go_json", "go_string", "normalise_numbers"]

_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\b": "\\b",
    "\f": "\\f",
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}


def go_string(text: str) -> str:
    """A JSON string literal as Go's encoder writes it (HTML-safe)."""
    out = ['"']
    for char in text:
        escaped = _ESCAPES.get(char)
        if escaped is not None:
            out.append(escaped)
        elif ord(char) < 0x20:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def go_float(value: float) -> str:
    """``strconv.FormatFloat(f, 'f' or 'e', -1, 64)`` as encoding/json picks it."""
    if math.isnan(value) or math.isinf(value):
        raise ValueError(f"json: unsupported value: {value}")
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    magnitude = abs(value)
    if magnitude < 1e-6 or magnitude >= 1e21:
        mantissa, _, exponent = repr(value).partition("e")
        if not exponent:  # repr chose positional notation; ask for the exponent form
            mantissa, _, exponent = f"{value:e}".partition("e")
            mantissa = repr(float(mantissa))
        mantissa = mantissa.removesuffix(".0")
        sign = "-" if exponent.startswith("-") else "+"
        digits = exponent.lstrip("+-").lstrip("0") or "0"
        if len(digits) < 2:
            digits = "0" + digits
        # encoding/json trims e-07 to e-7 (a single exponent digit keeps no zero)
        if sign == "-" and digits.startswith("0"):
            digits = digits[1:]
        return f"{mantissa}e{sign}{digits}"
    text = repr(value)
    if "e" in text:  # Python's repr goes exponential from 1e16; Go's 'f' does not
        text = f"{value:.17f}".rstrip("0").rstrip(".")
        # the shortest round trip: fall back to Decimal of the repr for exactness
        from decimal import Decimal

        text = format(Decimal(repr(value)), "f")
    return text.removesuffix(".0")


def go_json(value: Any) -> str:
    """The compact JSON Go writes for ``value`` (a decoded unstructured object)."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return go_float(value)
    if isinstance(value, str):
        return go_string(value)
    if isinstance(value, dict):
        items = sorted((str(k), v) for k, v in value.items())
        return "{" + ",".join(f"{go_string(k)}:{go_json(v)}" for k, v in items) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(go_json(v) for v in value) + "]"
    return go_string(str(value))


def normalise_numbers(value: Any) -> Any:
    """Numbers as Kubernetes' unstructured decoder keeps them: an integral number that fits
    an int64 is an int, every other number a float (``1.0`` -> ``1``)."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, float):
        if value.is_integer() and -(2**63) <= value < 2**63:
            return int(value)
        return value
    if isinstance(value, int):
        return value if -(2**63) <= value < 2**63 else float(value)
    if isinstance(value, dict):
        return {k: normalise_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [normalise_numbers(v) for v in value]
    return value
