"""``migrate`` says where one of trainc's extensions would carry what core Trainer
cannot (issue 29 point 9), and following the note's steps literally renders the job as
the extension does."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from compiler.cli import main

CASES = Path(__file__).resolve().parents[2] / "tests" / "migrate" / "cases"


def _migrate(
    tmp_path: Path, job: Path, capsys: pytest.CaptureFixture[str], *flags: str
) -> tuple[int, dict[str, Any]]:
    report = tmp_path / "report.json"
    args = ["migrate", str(job), "-o", str(tmp_path / "migrated"), "--report", str(report)]
    code = main([*args, "--report-format", "json", *flags])
    capsys.readouterr()
    [job_report] = json.loads(report.read_text())["reports"]
    return code, job_report


def _notes(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [d for d in report["diagnostics"] if d["code"] == "EXTENSION_CARRIES"]


def _follow(tmp_path: Path, note: dict[str, Any], extension: str) -> str:
    """Annotate the migrated runtime as the note says, enable the extension, render."""
    annotations = re.findall(r'(\S*trainc\.dev/[\w-]+): ("[^"]*"|[\w-]+)', note["workaround"])
    assert annotations[0] == ("trainc.dev/extensions", extension)
    [migrated] = (tmp_path / "migrated").rglob("*.yaml")
    lines = "".join(f"\n    {key}: {value}" for key, value in annotations)
    text = migrated.read_text().replace("  annotations:", "  annotations:" + lines, 1)
    migrated.write_text(text)
    (tmp_path / "trainc.yaml").write_text(
        "inputs:\n  jobs: [migrated/]\noutput: rendered\n"
        f"clusters:\n  - name: hpc\n    extensions: [{extension}]\n"
    )
    assert main(["render", "--project", str(tmp_path / "trainc.yaml")]) == 0
    return "\n".join(p.read_text() for p in (tmp_path / "rendered").rglob("*.yaml"))


@pytest.mark.parametrize(
    ("implementation", "extension", "variable"),
    [("Intel", "intel-mpi", "I_MPI_HYDRA_HOST_FILE"), ("MPICH", "mpich", "HYDRA_HOST_FILE")],
)
def test_an_mpi_implementation_trainer_refuses(
    implementation: str,
    extension: str,
    variable: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    job = tmp_path / "job.yaml"
    text = (CASES / "mpi-v2beta1-intel" / "job.yaml").read_text()
    job.write_text(text.replace("mpiImplementation: Intel", f"mpiImplementation: {implementation}"))
    code, report = _migrate(tmp_path, job, capsys)
    assert code == 1 and "MPI_IMPLEMENTATION_UNSUPPORTED" in report["decisions"]
    [note] = _notes(report)
    assert note["sourcePath"] == "spec.mpiImplementation" and note["decide"]
    assert f"clusters[].extensions: [{extension}]" in note["workaround"]
    assert note["workaround"].startswith("migrate with --allow-lossy")
    assert _migrate(tmp_path, job, capsys, "--allow-lossy")[0] == 0
    rendered = _follow(tmp_path, note, extension)
    assert f"- name: {variable}" in rendered
    assert re.search(r"hostfile: \|\n\s+\S+-node-0-0\.\S+:\d+\n", rendered), rendered


def test_elastic_pytorch(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, report = _migrate(tmp_path, CASES / "pytorch-elastic-range" / "job.yaml", capsys)
    assert code == 0
    [note] = _notes(report)
    assert note["sourcePath"] == "spec.elasticPolicy"
    rendered = _follow(tmp_path, note, "elastic-torch")
    assert "- name: PET_NNODES\n                value: '1:4'" in rendered
    assert "- name: PET_MAX_RESTARTS\n                value: '3'" in rendered


@pytest.mark.parametrize(
    ("case", "extension"),
    [
        ("tf-upstream-dist-mnist", "tensorflow"),
        ("tf-workers-shim", "tensorflow"),
        ("paddle-collective", "paddlepaddle"),
        ("pytorch-elastic-hpa", "elastic-torch"),
    ],
)
def test_named_where_an_extension_carries_the_job(
    case: str, extension: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, report = _migrate(tmp_path, CASES / case / "job.yaml", capsys)
    [note] = _notes(report)
    assert note["targetPath"] == f"runtime annotation trainc.dev/extensions: {extension}"
    assert "EXTENSION_CARRIES" in report["decisions"]


@pytest.mark.parametrize("case", ["mpi-v2beta1-pi", "pytorch-spec-worked-example", "jax-single"])
def test_none_where_core_trainer_carries_it(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, report = _migrate(tmp_path, CASES / case / "job.yaml", capsys)
    assert _notes(report) == []
