"""The strings extension, with the indexOf/lastIndexOf the run environment reimplements."""

from __future__ import annotations

from typing import Any

from compiler.apiserver.cel.cases_test import compile_error_test, error_test, value_test

VALUES: list[tuple[str, Any]] = [
    ('"%s=%d".format(["a", 1])', "a=1"),
    ('"a,b".split(",")', ["a", "b"]),
    ('["a", "b"].join("-")', "a-b"),
    ('" x ".trim()', "x"),
    # indexOf and lastIndexOf of a string (they run as the lists library's k8s_indexOf)
    ('"abcabc".indexOf("c")', 2),
    ('"abcabc".indexOf("c", 3)', 5),
    ('"abcabc".lastIndexOf("c")', 5),
    ('"abcabc".lastIndexOf("c", 4)', 2),
    ('"abc".indexOf("")', 0),
    ('"abc".lastIndexOf("")', 3),
    ('"héllo".indexOf("l")', 2),
]


test_values = value_test(VALUES)


ERRORS: list[tuple[str, str]] = [
    ('"abc".indexOf("c", -1)', "index out of range: -1"),
]


test_errors = error_test(ERRORS)


COMPILE_ERRORS: list[tuple[str, str]] = [
    ('"abc".reverse()', "found no matching overload for 'reverse'"),  # strings v3, not enabled
]


test_compile_errors = compile_error_test(COMPILE_ERRORS)
