"""The regex library: values and errors as the API server has them."""

from __future__ import annotations

from typing import Any

from compiler.apiserver.cel.cases_test import error_test, value_test

VALUES: list[tuple[str, Any]] = [
    ('"abc 123 def 456".find("[0-9]+")', "123"),
    ('"abc".find("[0-9]+")', ""),
    ('"abc 123 def 456".findAll("[0-9]+")', ["123", "456"]),
    ('"abc 123 def 456".findAll("[0-9]+", 1)', ["123"]),
    ('"abc 123".findAll("[0-9]+", 0)', []),
    ('"abc".findAll("a*")', ["a", "", ""]),
    ('"line\\n".find("e$")', ""),
    ('"xyz".find("[[:alpha:]]+\\\\z")', "xyz"),
]


test_values = value_test(VALUES)


ERRORS: list[tuple[str, str]] = [
    (
        '"x".find("(?=a)")',
        "Illegal regex: error parsing regexp: invalid or unsupported Perl syntax: `(?=`",
    ),
    ('"x".find("(a)\\\\1")', "Illegal regex: error parsing regexp: invalid escape sequence: `\\1`"),
]


test_errors = error_test(ERRORS)
