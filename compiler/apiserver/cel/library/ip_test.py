"""The IP library: values, errors and type checking as the API server has them."""

from __future__ import annotations

from typing import Any

from compiler.apiserver.cel.cases_test import compile_error_test, error_test, value_test

VALUES: list[tuple[str, Any]] = [
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
]


test_values = value_test(VALUES)


ERRORS: list[tuple[str, str]] = [
    (
        'ip("01.2.3.4")',
        'IP Address "01.2.3.4" parse error during conversion from string:'
        ' ParseAddr("01.2.3.4"): IPv4 field has octet with leading zero',
    ),
    ('ip("::ffff:1.2.3.4")', 'IPv4-mapped IPv6 address "::ffff:1.2.3.4" is not allowed'),
    ('ip("fe80::1%eth0")', 'IP address "fe80::1%eth0" with zone value is not allowed'),
    ('ip("1:2:3")', 'ParseAddr("1:2:3"): address string too short'),
]


test_errors = error_test(ERRORS)


COMPILE_ERRORS: list[tuple[str, str]] = [
    (
        'ip("1.2.3.4") == "1.2.3.4"',
        "found no matching overload for '_==_' applied to '(net.IP, string)'",
    ),
]


test_compile_errors = compile_error_test(COMPILE_ERRORS)
