"""The semver library: values, errors and type checking as the API server has them."""

from __future__ import annotations

from typing import Any

import pytest

from compiler.apiserver.cel.engine import CelCompileError, CelEvalError
from compiler.apiserver.cel.k8s import k8s_engine

_VARS = {"self": "dyn"}


def _eval(source: str, value: Any = None) -> Any:
    return k8s_engine().compile(source, _VARS).evaluate({"self": value})  # type: ignore[arg-type]


VALUES: list[tuple[str, Any]] = [
    ('semver("1.2.3").isLessThan(semver("1.10.0"))', True),
    ('semver("1.2.3-alpha").compareTo(semver("1.2.3"))', -1),
    ('semver("1.2.3-alpha.2").compareTo(semver("1.2.3-alpha.10"))', -1),
    ('semver("1.2.3-alpha").compareTo(semver("1.2.3-1"))', 1),
    ('semver("1.2.3+build.1") == semver("1.2.3+build.2")', True),
    ('semver("2.3.4").major()', 2),
    ('semver("2.3.4").minor()', 3),
    ('semver("2.3.4").patch()', 4),
    ('semver("v1.02", true) == semver("1.2.0")', True),
    ('isSemver("1.2")', False),
    ('isSemver("v1.2", true)', True),
    ('isSemver("1.2-rc", true)', False),
]


@pytest.mark.parametrize(("source", "expected"), VALUES)
def test_values(source: str, expected: Any) -> None:
    result = _eval(source)
    assert result == expected
    assert type(result) is type(expected)


ERRORS: list[tuple[str, str]] = [
    ('semver("01.2.3")', 'Major number must not contain leading zeroes "01"'),
    ('semver("1.2")', "No Major.Minor.Patch elements found"),
    ('semver("1.2.3-")', "Prerelease is empty"),
    ('semver("1.2-rc", true)', "short version cannot contain PreRelease/Build meta data"),
]


@pytest.mark.parametrize(("source", "message"), ERRORS)
def test_errors(source: str, message: str) -> None:
    with pytest.raises(CelEvalError) as raised:
        _eval(source)
    assert message in str(raised.value)


COMPILE_ERRORS: list[tuple[str, str]] = [
    ('semver("1.0.0").isLessThan(quantity("1"))', "found no matching overload for 'isLessThan'"),
]


@pytest.mark.parametrize(("source", "message"), COMPILE_ERRORS)
def test_compile_errors(source: str, message: str) -> None:
    with pytest.raises(CelCompileError) as raised:
        k8s_engine().compile(source, _VARS)  # type: ignore[arg-type]
    assert message in str(raised.value)
