"""The format library: values and type checking as the API server has them."""

from __future__ import annotations

from typing import Any

from compiler.apiserver.cel.cases_test import compile_error_test, value_test

VALUES: list[tuple[str, Any]] = [
    ('format.dns1123Label().validate("good-name").hasValue()', False),
    ('format.dns1123Label().validate("Bad_Name").hasValue()', True),
    ('format.dns1123Label().validate("a.b").value()', ["must not contain dots"]),
    ('format.named("dns1035Label").value().validate("1abc").hasValue()', True),
    ('format.named("nope").hasValue()', False),
    ('format.labelValue().validate("").hasValue()', False),
    ('format.qualifiedName().validate("example.com/MyName").hasValue()', False),
    ('format.uuid().validate("1b4e28ba-2fa1-11d2-883f-0016d3cca427").hasValue()', False),
    ('format.byte().validate("aGVsbG8=").hasValue()', False),
    ('format.byte().validate("not base64!").value()', ["invalid base64"]),
    ('format.date().validate("2024-02-30").value()', ["invalid date"]),
    ('format.datetime().validate("2024-02-03T10:00:00Z").hasValue()', False),
    ('format.uri().validate("https://example.com").hasValue()', False),
    ('format.dns1123LabelPrefix().validate("abc-").hasValue()', False),
]


test_values = value_test(VALUES)


COMPILE_ERRORS: list[tuple[str, str]] = [
    ("format.dns1123Label().validate(1)", "found no matching overload for 'validate'"),
]


test_compile_errors = compile_error_test(COMPILE_ERRORS)
