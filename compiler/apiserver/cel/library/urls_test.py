"""The URL library: values, errors and type checking as the API server has them."""

from __future__ import annotations

from typing import Any

import pytest

from compiler.apiserver.cel.engine import CelCompileError, CelEvalError
from compiler.apiserver.cel.k8s import k8s_engine

_VARS = {"self": "dyn"}


def _eval(source: str, value: Any = None) -> Any:
    return k8s_engine().compile(source, _VARS).evaluate({"self": value})  # type: ignore[arg-type]


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


@pytest.mark.parametrize(("source", "expected"), VALUES)
def test_values(source: str, expected: Any) -> None:
    result = _eval(source)
    assert result == expected
    assert type(result) is type(expected)


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


@pytest.mark.parametrize(("source", "message"), ERRORS)
def test_errors(source: str, message: str) -> None:
    with pytest.raises(CelEvalError) as raised:
        _eval(source)
    assert message in str(raised.value)


COMPILE_ERRORS: list[tuple[str, str]] = [
    ('url("https://x").getQuery().size() == "a"', "found no matching overload for '_==_'"),
]


@pytest.mark.parametrize(("source", "message"), COMPILE_ERRORS)
def test_compile_errors(source: str, message: str) -> None:
    with pytest.raises(CelCompileError) as raised:
        k8s_engine().compile(source, _VARS)  # type: ignore[arg-type]
    assert message in str(raised.value)
