"""Shapes the v1 webhook accepts that the translation did not expect (found by the
migrate fuzz surface): an empty replica map, a null list in the pod template."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from compiler.cli import main

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "tests" / "migrate" / "cases"


@pytest.mark.parametrize(
    ("case", "field"),
    [("jax-worker4", "jaxReplicaSpecs"), ("tf-workers-shim", "tfReplicaSpecs")],
)
def test_an_empty_replica_map_is_a_report_error(
    case: str, field: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = (CASES / case / "job.yaml").read_text()
    head = text[: text.index(f"  {field}:")]
    path = tmp_path / "job.yaml"
    path.write_text(f"{head}  {field}: {{}}\n")
    assert main(["migrate", str(path), "-o", "-"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert f"error NO_REPLICAS spec.{field}: no replica types" in err


def test_a_null_ports_list_is_no_ports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = (CASES / "tf-workers-shim" / "job.yaml").read_text()
    path = tmp_path / "job.yaml"
    path.write_text(
        text.replace("              command:", "              ports: null\n              command:")
    )
    assert main(["migrate", str(path), "-o", "-"]) == 0
    out, _ = capsys.readouterr()
    assert re.search(r"ports:\n\s+- name: tfjob-port\n\s+containerPort: 2222", out), out
