"""The server-side apply's typed patch errors, as structured-merge-diff v6.3.0 words them."""

from __future__ import annotations

from typing import Any

from compiler.apiserver.structural_test import COMPILED
from compiler.apiserver.typed_patch import smd_value, typed_patch_errors, typed_patch_message


def _obj(spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "x.io/v1",
        "kind": "X",
        "metadata": {"name": "a", "namespace": "ns"},
        "spec": spec,
    }


def test_a_repeated_key_of_a_keyed_list_takes_the_key_fields_default() -> None:
    # protocol is left out of both items: the schema's default TCP is part of the key
    obj = _obj({"ref": {"name": "x"}, "ports": [{"port": 2222}, {"port": 80}, {"port": 2222}]})
    [error] = typed_patch_errors(obj, COMPILED)
    assert error.path == ("spec", "ports", 2)
    assert str(error) == '.spec.ports: duplicate entries for key [port=2222,protocol="TCP"]'
    assert typed_patch_message(obj, [error]) == (
        "failed to create typed patch object (ns/a; x.io/v1, Kind=X): "
        '.spec.ports: duplicate entries for key [port=2222,protocol="TCP"]'
    )


def test_distinct_keys_and_an_explicit_other_protocol_pass() -> None:
    ports = [{"port": 2222}, {"port": 2222, "protocol": "UDP"}]
    assert typed_patch_errors(_obj({"ports": ports}), COMPILED) == []


def test_set_items_and_several_errors() -> None:
    obj = _obj({"tags": ["a", "b", "a"], "ports": [{"port": 1}, {"port": 1}]})
    errors = typed_patch_errors(obj, COMPILED)
    assert [str(e) for e in errors] == [
        '.spec.tags: duplicate entries for key [="a"]',
        '.spec.ports: duplicate entries for key [port=1,protocol="TCP"]',
    ]
    assert typed_patch_message(obj, errors).endswith(
        "(ns/a; x.io/v1, Kind=X): errors:\n"
        '  .spec.tags: duplicate entries for key [="a"]\n'
        '  .spec.ports: duplicate entries for key [port=1,protocol="TCP"]'
    )


def test_values_print_as_structured_merge_diff_prints_them() -> None:
    assert [smd_value(v) for v in (None, True, 3, 1.5, 1e6, 'a"b', [1, "x"])] == [
        "null",
        "true",
        "3",
        "1.5",
        "1e+06",
        '"a\\"b"',
        '[1,"x"]',
    ]
