"""Volcano task helpers: plugin flags read as Go's flag package reads them."""

from __future__ import annotations

import pytest

from compiler.migrate.vcjob import plugin_args, plugin_port


@pytest.mark.parametrize(
    ("text", "port"), [("", 22), ("2022", 2022), ("0x7e6", 2022), ("03746", 2022)]
)
def test_port_flag(text: str, port: int) -> None:
    args = plugin_args([f"--port={text}"] if text else ["--master=m"])
    assert plugin_port(None, "mpi", args, 22) == port  # type: ignore[arg-type]


def test_args_are_key_values() -> None:
    assert plugin_args(["--master=a", "--worker=b=c", "x"]) == {"master": "a", "worker": "b=c"}
