"""Volcano plugin arguments: a ``--port`` that is no port is an input error at the
plugin (it was a ValueError traceback)."""

from __future__ import annotations

from pathlib import Path

import pytest

from compiler.cli import main

ROOT = Path(__file__).resolve().parents[2]
JOB = (ROOT / "tests/migrate/cases/volcano-pytorch-worked-example/job.yaml").read_text()


@pytest.mark.parametrize(
    ("port", "message"),
    [
        ("abc", 'spec.plugins.pytorch: invalid value "abc" for flag -port: parse error'),
        ("70000", "spec.plugins.pytorch: Invalid value: 70000: --port must be between 1"),
    ],
)
def test_a_port_flag_that_is_no_port(
    port: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(JOB.replace("--port=23456", f"--port={port}"))
    assert main(["migrate", str(path), "-o", "-"]) == 2
    _, err = capsys.readouterr()
    assert err.startswith(f"{path}:12:5: Job ml/pt: {message}"), err


def test_go_flag_integers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(JOB.replace("--port=23456", "--port=0x5bA0"))
    assert main(["migrate", str(path), "-o", "-"]) == 0
    out, _ = capsys.readouterr()
    assert "containerPort: 23456" in out
