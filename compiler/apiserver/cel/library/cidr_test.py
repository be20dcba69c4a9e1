"""The CIDR library: values and errors as the API server has them."""

from __future__ import annotations

from typing import Any

import pytest

from compiler.apiserver.cel.engine import CelEvalError
from compiler.apiserver.cel.k8s import k8s_engine

_VARS = {"self": "dyn"}


def _eval(source: str, value: Any = None) -> Any:
    return k8s_engine().compile(source, _VARS).evaluate({"self": value})  # type: ignore[arg-type]


VALUES: list[tuple[str, Any]] = [
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
]


@pytest.mark.parametrize(("source", "expected"), VALUES)
def test_values(source: str, expected: Any) -> None:
    result = _eval(source)
    assert result == expected
    assert type(result) is type(expected)


ERRORS: list[tuple[str, str]] = [
    ('cidr("10.0.0.0")', "netip.ParsePrefix(\"10.0.0.0\"): no '/'"),
    ('cidr("10.0.0.0/33")', 'netip.ParsePrefix("10.0.0.0/33"): prefix length out of range'),
]


@pytest.mark.parametrize(("source", "message"), ERRORS)
def test_errors(source: str, message: str) -> None:
    with pytest.raises(CelEvalError) as raised:
        _eval(source)
    assert message in str(raised.value)
