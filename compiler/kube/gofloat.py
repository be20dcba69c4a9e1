"""How Go lays out a float's shortest digits as text (strconv 'g'-like forms).

``strconv.FormatFloat(f, 'g', -1, ...)`` and encoding/json differ only in where they
switch to exponent form and how they pad the exponent::

    >>> layout("", "15", 2, low=-4, high=6, exponent_digits=2)
    '150'
    >>> layout("-", "15", -7, low=-4, high=6, exponent_digits=2)
    '-1.5e-07'
"""

from __future__ import annotations


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
