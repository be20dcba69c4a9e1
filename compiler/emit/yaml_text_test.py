from __future__ import annotations

import pytest
import yaml

from compiler.emit.yaml_text import dump_document


@pytest.mark.parametrize(
    "text", ["on", "off", "yes", "no", "y", "N", "true", "null", "~", "1", "1.5", "1e3", "0x1f", "012", "1_000", "12:30", ".inf", "2024-01-02", "-1", "+2", "=", "<<"]
)
def test_strings_any_reader_could_retype_are_quoted(text: str) -> None:
    out = dump_document({"apiVersion": "v1", "kind": "K", "data": {"k": text}})
    assert f"k: '{text}'" in out
    assert yaml.safe_load(out)["data"]["k"] == text


def test_plain_strings_stay_plain() -> None:
    out = dump_document({"apiVersion": "v1", "kind": "K", "data": {"k": "torchrun", "p": "/workspace"}})
    assert "k: torchrun" in out and "p: /workspace" in out


def test_multiline_text_is_a_literal_block_and_round_trips() -> None:
    script = "import torch\nprint(torch.__version__)\n"
    out = dump_document({"apiVersion": "v1", "kind": "K", "spec": {"command": ["python", "-c", script]}})
    assert "- |\n" in out
    assert yaml.safe_load(out)["spec"]["command"][2] == script


def test_key_order_is_canonical() -> None:
    out = dump_document(
        {"spec": {"b": 1, "name": "main", "a": 2}, "metadata": {"namespace": "team", "name": "job"}, "kind": "K", "apiVersion": "v1"}
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
