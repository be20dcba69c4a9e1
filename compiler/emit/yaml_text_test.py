from __future__ import annotations

from typing import Any

import pytest
import ruamel.yaml
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.emit.yaml_text import dump_document


@pytest.mark.parametrize(
    "text",
    [
        "on",
        "off",
        "yes",
        "no",
        "y",
        "N",
        "true",
        "null",
        "~",
        "1",
        "1.5",
        "1e3",
        "0x1f",
        "012",
        "1_000",
        "12:30",
        ".inf",
        "2024-01-02",
        "-1",
        "+2",
        "=",
        "<<",
    ],
)
def test_strings_any_reader_could_retype_are_quoted(text: str) -> None:
    out = dump_document({"apiVersion": "v1", "kind": "K", "data": {"k": text}})
    assert f"k: '{text}'" in out
    assert yaml.safe_load(out)["data"]["k"] == text


def test_plain_strings_stay_plain() -> None:
    out = dump_document(
        {"apiVersion": "v1", "kind": "K", "data": {"k": "torchrun", "p": "/workspace"}}
    )
    assert "k: torchrun" in out and "p: /workspace" in out


def test_multiline_text_is_a_literal_block_and_round_trips() -> None:
    script = "import torch\nprint(torch.__version__)\n"
    out = dump_document(
        {"apiVersion": "v1", "kind": "K", "spec": {"command": ["python", "-c", script]}}
    )
    assert "- |\n" in out
    assert yaml.safe_load(out)["spec"]["command"][2] == script


def test_key_order_is_canonical() -> None:
    out = dump_document(
        {
            "spec": {"b": 1, "name": "main", "a": 2},
            "metadata": {"namespace": "team", "name": "job"},
            "kind": "K",
            "apiVersion": "v1",
        }
    )
    assert out.splitlines() == [
        "apiVersion: v1",
        "kind: K",
        "metadata:",
        "  name: job",
        "  namespace: team",
        "spec:",
        "  name: main",
        "  a: 2",
        "  b: 1",
    ]


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.text()
    | st.floats(allow_nan=False),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=25,
)


@settings(max_examples=800, deadline=None)
@given(st.dictionaries(st.text(max_size=12), JSON, min_size=1, max_size=5))
def test_every_document_loads_back_equal_in_yaml_1_1_and_1_2(value: dict[str, object]) -> None:
    text = dump_document(value)
    assert yaml.safe_load(text) == value, text  # YAML 1.1, as Kubernetes' decoder reads
    assert ruamel.yaml.YAML(typ="safe", pure=True).load(text) == value, text  # YAML 1.2


@pytest.mark.parametrize(
    "text",
    [
        "a\nb",
        "a\nb\n",
        "a\nb\n\n\n",
        "x:\n  - y\n",
        "tab\there\n",
        "trailing \nspace\n",
        " leading\n",
        "\nfirst\n",
        "unicode ✓\n",
    ],
)
def test_multiline_strings_round_trip(text: str) -> None:
    out = dump_document({"k": [text], "m": {"n": text}})
    assert yaml.safe_load(out) == {"k": [text], "m": {"n": text}}


@pytest.mark.parametrize("text", ["\u2028", "a\u2029b", "\ufeffx", "\x85", "k\u2028\n"])
def test_unicode_line_breaks_and_bom_are_escaped(text: str) -> None:
    out = dump_document({text: [text]})
    assert yaml.safe_load(out) == {text: [text]}
    assert ruamel.yaml.YAML(typ="safe", pure=True).load(out) == {text: [text]}


def test_dict_and_list_subclasses_are_written_as_plain_ones() -> None:
    from collections import OrderedDict

    class Items(list[Any]):
        pass

    value = {"a": OrderedDict([("z", 1), ("name", "n")]), "b": Items(["x", OrderedDict()])}
    assert dump_document(value) == dump_document({"a": {"z": 1, "name": "n"}, "b": ["x", {}]})
