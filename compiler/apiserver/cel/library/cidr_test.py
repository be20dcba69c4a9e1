"""The CIDR library: values and errors as the API server has them."""

from __future__ import annotations

from typing import Any

from compiler.apiserver.cel.cases_test import error_test, value_test

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


test_values = value_test(VALUES)


ERRORS: list[tuple[str, str]] = [
    ('cidr("10.0.0.0")', "netip.ParsePrefix(\"10.0.0.0\"): no '/'"),
    ('cidr("10.0.0.0/33")', 'netip.ParsePrefix("10.0.0.0/33"): prefix length out of range'),
]


test_errors = error_test(ERRORS)
