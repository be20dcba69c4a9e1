"""Pruning, null dropping, defaulting and validation against small hand-written schemas.

The expected messages are the API server's (checked against apiextensions-apiserver and
kube-openapi at k8s v0.36.2 through a Go harness).
"""

from __future__ import annotations

from typing import Any

import pytest

from compiler.apiserver.structural import admit_schema, compile_schema
from compiler.kube.gotext import go_float, go_json, go_quote

QUANTITY = "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$"

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": {"type": "object"},
        "spec": {
            "type": "object",
            "required": ["ref"],
            "properties": {
                "ref": {
                    "type": "object",
                    "required": ["name"],
                    "properties": {
                        "name": {"type": "string", "minLength": 1, "maxLength": 8},
                        "kind": {"type": "string", "default": "Cluster"},
                    },
                },
                "suspend": {"type": "boolean", "default": False},
                "count": {"type": "integer", "format": "int32", "minimum": 1},
                "mode": {"type": "string", "enum": ["hard", "soft"], "default": "hard"},
                "limits": {
                    "type": "object",
                    "additionalProperties": {
                        "anyOf": [{"type": "integer"}, {"type": "string"}],
                        "pattern": QUANTITY,
                        "x-kubernetes-int-or-string": True,
                    },
                },
                "ports": {
                    "type": "array",
                    "maxItems": 3,
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["port", "protocol"],
                    "items": {
                        "type": "object",
                        "required": ["port"],
                        "properties": {
                            "port": {"type": "integer", "format": "int32"},
                            "protocol": {"type": "string", "default": "TCP"},
                        },
                    },
                },
                "tags": {
                    "type": "array",
                    "x-kubernetes-list-type": "set",
                    "items": {"type": "string"},
                },
                "group": {
                    "type": "object",
                    "properties": {
                        "timeout": {"type": "integer", "format": "int32", "default": 60}
                    },
                },
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "nullable": {"type": "string", "nullable": True},
                "time": {"type": "string", "format": "date-time"},
                "embedded": {
                    "type": "object",
                    "x-kubernetes-embedded-resource": True,
                    "properties": {
                        "spec": {"type": "object", "properties": {"x": {"type": "string"}}}
                    },
                },
            },
        },
    },
}

COMPILED = compile_schema(SCHEMA)


def admit(spec: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    obj: dict[str, Any] = {
        "apiVersion": "x.io/v1",
        "kind": "X",
        "metadata": {"name": "a"},
        "spec": spec,
    }
    errors = [str(e) for e in admit_schema(obj, COMPILED)]
    return obj["spec"], errors


def test_defaults_apply_where_the_parent_exists() -> None:
    spec, errors = admit({"ref": {"name": "x"}})
    assert errors == []
    assert spec == {"ref": {"name": "x", "kind": "Cluster"}, "suspend": False, "mode": "hard"}
    spec, _ = admit({"ref": {"name": "x"}, "group": {}})
    assert spec["group"] == {"timeout": 60}


def test_defaults_inside_array_items() -> None:
    spec, errors = admit(
        {"ref": {"name": "x"}, "ports": [{"port": 80}, {"port": 81, "protocol": "UDP"}]}
    )
    assert errors == []
    assert spec["ports"] == [{"port": 80, "protocol": "TCP"}, {"port": 81, "protocol": "UDP"}]


def test_nulls_get_the_default_or_are_dropped_unless_nullable() -> None:
    spec, errors = admit(
        {"ref": {"name": "x", "kind": None}, "count": None, "nullable": None, "suspend": None}
    )
    assert errors == []
    assert spec["ref"] == {"name": "x", "kind": "Cluster"}
    assert "count" not in spec
    assert spec["nullable"] is None
    assert spec["suspend"] is False


def test_after_a_mutating_webhook_nulls_without_a_default_stay_and_are_refused() -> None:
    # the API server drops such nulls only when it decodes a request body; a webhook's
    # JSON patch that adds one (JobSet's "containers": null) is validated as it is
    obj: dict[str, Any] = {"apiVersion": "x.io/v1", "kind": "X", "metadata": {"name": "a"}}
    obj["spec"] = {"ref": {"name": "x", "kind": None}, "count": None, "tags": None}
    errors = [str(e) for e in admit_schema(obj, COMPILED, keep_nulls=True)]
    assert errors == [
        'spec.count: Invalid value: "null": spec.count in body must be of type integer: "null"',
        'spec.tags: Invalid value: "null": spec.tags in body must be of type array: "null"',
    ]
    assert obj["spec"]["ref"]["kind"] == "Cluster"  # a null with a default still gets it


def test_unknown_fields_are_pruned_and_reported_with_their_path() -> None:
    spec, errors = admit(
        {"ref": {"name": "x", "bogus": 1}, "ports": [{"port": 1, "extra": {"a": 1}}], "zzz": 2}
    )
    assert errors == [  # sorted, as strict field validation lists them
        'spec.ports[0].extra: unknown field "spec.ports[0].extra"',
        'spec.ref.bogus: unknown field "spec.ref.bogus"',
        'spec.zzz: unknown field "spec.zzz"',
    ]
    assert "bogus" not in spec["ref"] and "zzz" not in spec


def test_a_map_where_a_scalar_is_expected_loses_all_its_keys() -> None:
    _, errors = admit({"ref": {"name": {"first": "x"}}})
    assert errors == [
        'spec.ref.name.first: unknown field "spec.ref.name.first"',
        'spec.ref.name: Invalid value: "object": spec.ref.name in body must be of type string: "object"',
    ]


def test_preserve_unknown_fields_and_embedded_resources_keep_their_content() -> None:
    embedded = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"anything": 1},
        "spec": {"x": "y", "z": 1},
    }
    spec, errors = admit({"ref": {"name": "x"}, "free": {"a": {"b": 1}}, "embedded": embedded})
    assert errors == ['spec.embedded.spec.z: unknown field "spec.embedded.spec.z"']
    assert spec["free"] == {"a": {"b": 1}}
    assert spec["embedded"]["metadata"] == {"anything": 1}


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (
            {"count": "2"},
            'spec.count: Invalid value: "string": spec.count in body must be of type integer: "string"',
        ),
        (
            {"count": True},
            'spec.count: Invalid value: "": spec.count in body must be of type int32: ""',
        ),
        (
            {"count": 0},
            "spec.count: Invalid value: 0: spec.count in body should be greater than or equal to 1",
        ),
        (
            {"count": 2147483648},
            '<nil>: Invalid value: "": Checked value must be of type integer with format int32 in spec.count',
        ),
        (
            {"mode": "medium"},
            'spec.mode: Unsupported value: "medium": supported values: "hard", "soft"',
        ),
        ({"ref": {"name": "toolongname"}}, "spec.ref.name: Too long: may not be more than 8 bytes"),
        (
            {"ref": {"name": ""}},
            'spec.ref.name: Invalid value: "": spec.ref.name in body should be at least 1 chars long',
        ),
        ({"ref": {}}, "spec.ref.name: Required value"),
        (
            {"limits": {"cpu": "abc"}},
            f"spec.limits.cpu: Invalid value: \"abc\": spec.limits.cpu in body should match '{QUANTITY}'",
        ),
        ({"ports": [{"port": 1}] * 4}, "spec.ports: Too many: 4: must have at most 3 items"),
        ({"tags": ["a", "b", "a"]}, 'spec.tags[2]: Duplicate value: "a"'),
        (
            {"ports": [{"port": 1}, {"port": 1, "protocol": "TCP"}]},
            'spec.ports[1]: Duplicate value: {"port":1,"protocol":"TCP"}',
        ),
        (
            {"time": "yesterday"},
            'spec.time: Invalid value: "yesterday": spec.time in body must be of type date-time: "yesterday"',
        ),
        (
            {"ports": ["x"]},
            'spec.ports[0]: Invalid value: "x": must be an object for an array of list-type map',
        ),
    ],
)
def test_validation_messages(spec: dict[str, Any], expected: str) -> None:
    _, errors = admit({"ref": {"name": "x"}} | spec)
    assert expected in errors, errors


def test_int_or_string_reports_what_the_api_server_reports() -> None:
    for value in ("500m", 2, "1.5Gi"):
        assert admit({"ref": {"name": "x"}, "limits": {"cpu": value}})[1] == []
    _, errors = admit({"ref": {"name": "x"}, "limits": {"cpu": True}})
    assert errors == [
        'spec.limits.cpu: Invalid value: "boolean": spec.limits.cpu in body must be of type integer,string: "boolean"',
        '<nil>: Invalid value: "": "spec.limits.cpu" must validate at least one schema (anyOf)',
        'spec.limits.cpu: Invalid value: "boolean": spec.limits.cpu in body must be of type integer: "boolean"',
    ]
    # an unquoted 0.5 is a JSON number, not a quantity string: the API server rejects it too
    _, errors = admit({"ref": {"name": "x"}, "limits": {"cpu": 0.5}})
    assert (
        '<nil>: Invalid value: "": Checked value must be of type integer (default format) in spec.limits.cpu'
        in errors
    )


def test_required_reports_the_missing_field() -> None:
    obj: dict[str, Any] = {"apiVersion": "x.io/v1", "kind": "X", "spec": {}}
    assert [str(e) for e in admit_schema(obj, COMPILED)] == ["spec.ref: Required value"]


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1e6, "1e+06"),
        (123456789.0, "1.23456789e+08"),
        (0.0001, "0.0001"),
        (1e-5, "1e-05"),
        (100.0, "100"),
        (1.5, "1.5"),
    ],
)
def test_go_float_formatting(value: float, text: str) -> None:
    assert go_float(value) == text


def test_go_json_and_quote() -> None:
    assert (
        go_json({"b": [1, 2.5e-7, None, 1e21], "a": "x<y&"})
        == '{"a":"x\\u003cy\\u0026","b":[1,2.5e-7,null,1e+21]}'
    )
    assert go_quote('a"b\n\x07\u00e9') == '"a\\"b\\n\\a\u00e9"'
