"""The semver library: values, errors and type checking as the API server has them."""

from __future__ import annotations

from typing import Any

from compiler.apiserver.cel.cases_test import compile_error_test, error_test, value_test

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


test_values = value_test(VALUES)


ERRORS: list[tuple[str, str]] = [
    ('semver("01.2.3")', 'Major number must not contain leading zeroes "01"'),
    ('semver("1.2")', "No Major.Minor.Patch elements found"),
    ('semver("1.2.3-")', "Prerelease is empty"),
    ('semver("1.2-rc", true)', "short version cannot contain PreRelease/Build meta data"),
]


test_errors = error_test(ERRORS)


COMPILE_ERRORS: list[tuple[str, str]] = [
    ('semver("1.0.0").isLessThan(quantity("1"))', "found no matching overload for 'isLessThan'"),
]


test_compile_errors = compile_error_test(COMPILE_ERRORS)
