"""How a Go field error prints its path and value."""

from __future__ import annotations

from compiler.apiserver.workloads.fielderrors import (
    Key,
    as_json,
    as_number,
    as_string,
    invalid,
    not_supported,
    path_text,
    required,
    too_long,
    too_many,
)


def test_path_text() -> None:
    path = ("spec", "containers", 0, "resources", "limits", Key("nvidia.com/gpu"))
    assert path_text(path) == "spec.containers[0].resources.limits[nvidia.com/gpu]"


def test_values_print_by_go_type() -> None:
    assert str(invalid(("a",), as_string('x"<'), "d")) == 'a: Invalid value: "x\\"<": d'
    assert str(invalid(("a",), as_json('x"<'), "d")) == 'a: Invalid value: "x\\"\\u003c": d'
    assert str(invalid(("a",), as_number(-1), "d")) == "a: Invalid value: -1: d"
    assert str(invalid(("a",), as_json({"b": "1", "a": "2"}), "d")) == (
        'a: Invalid value: {"a":"2","b":"1"}: d'
    )


def test_error_kinds() -> None:
    assert str(required(("a",))) == "a: Required value"
    assert str(not_supported(("a",), as_json("X"), ("B", "A"))) == (
        'a: Unsupported value: "X": supported values: "B", "A"'
    )
    assert str(too_long(("a",), 63)) == "a: Too long: may not be more than 63 bytes"
    assert str(too_many(("a",), 21, 20)) == "a: Too many: 21: must have at most 20 items"
    error = invalid(("spec", "x", 1), as_number(3), "d")
    assert (error.type, error.field, error.path, error.value) == (
        "FieldValueInvalid",
        "spec.x[1]",
        ("spec", "x", 1),
        3,
    )
