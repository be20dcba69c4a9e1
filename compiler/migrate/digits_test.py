"""Strings whose characters are digits of another script ("²".isdigit() is true, and
int("²") fails) in a replica type key and in nprocPerNode: no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from compiler.cli import main

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "tests" / "migrate" / "cases"


def test_a_replica_type_of_other_digits_is_located(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "job.yaml"
    text = (CASES / "tf-workers-shim" / "job.yaml").read_text()
    path.write_text(text.replace("    Worker:\n", "    \u00b2: {replicas: 1}\n    Worker:\n"))
    assert main(["migrate", str(path), "-o", "-"]) == 2
    _, err = capsys.readouterr()
    assert err.startswith(f"{path}:10:5: TFJob ml/multi-worker: spec.tfReplicaSpecs[\u00b2]"), err


def test_nproc_per_node_of_other_digits_is_not_a_number(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "job.yaml"
    text = (CASES / "pytorch-worker-only-nproc4" / "job.yaml").read_text()
    assert "nprocPerNode:" in text
    lines = [
        '  nprocPerNode: "\u00b2"' if line.startswith("  nprocPerNode:") else line
        for line in text.splitlines()
    ]
    path.write_text("\n".join(lines) + "\n")
    assert main(["migrate", str(path), "-o", "-", "--allow-lossy"]) in (0, 1)
    _, err = capsys.readouterr()
    assert "Traceback" not in err
    assert "nprocPerNode '\u00b2'" in err
