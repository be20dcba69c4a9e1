"""The URL library: values, errors and type checking as the API server has them."""

from __future__ import annotations

from typing import Any

from compiler.apiserver.cel.cases_test import compile_error_test, error_test, value_test

VALUES: list[tuple[str, Any]] = [
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
]


test_values = value_test(VALUES)


ERRORS: list[tuple[str, str]] = [
    (
        'url("example.com")',
        'URL parse error during conversion from string: parse "example.com": invalid URI for request',
    ),
    (
        'url("https://example.com:port/")',
        'URL parse error during conversion from string: parse "https://example.com:port/": invalid port ":port" after host',
    ),
    ('url("https://ex%zzample.com")', 'invalid URL escape "%zz"'),
]


test_errors = error_test(ERRORS)


COMPILE_ERRORS: list[tuple[str, str]] = [
    ('url("https://x").getQuery().size() == "a"', "found no matching overload for '_==_'"),
]


test_compile_errors = compile_error_test(COMPILE_ERRORS)
