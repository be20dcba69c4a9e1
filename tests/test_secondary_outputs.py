"""A verb with several outputs (render's folder or stream and ``--provenance``, migrate's
folder and ``--report``) checks it can write each before it writes any: a report file
in a folder that does not exist is an error that leaves everything as it was."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from compiler.cli import main

REPO = Path(__file__).resolve().parents[1]
RUNTIME = (REPO / "example" / "runtimes" / "torch-gang.yaml").read_text(encoding="utf-8")
JOB = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: llm, namespace: team-a}
spec:
  runtimeRef: {name: torch-gang}
  trainer: {numNodes: 2}
"""
V1_JOB = REPO / "tests" / "migrate" / "cases" / "jax-single" / "job.yaml"


def _inputs(tmp_path: Path) -> str:
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "runtime.yaml").write_text(RUNTIME)
    (folder / "job.yaml").write_text(JOB)
    return str(folder)


def _tree(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_render_with_an_unwritable_provenance_creates_no_output_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    missing = tmp_path / "missing" / "p.json"
    code, _, err = _run(
        capsys, "render", _inputs(tmp_path), "-o", str(out), "--provenance", str(missing)
    )
    assert code == 2
    assert f"--provenance: cannot write {missing}" in err and "Traceback" not in err
    assert not out.exists()
    assert not missing.parent.exists()


def test_render_with_an_unwritable_provenance_leaves_the_output_folder_as_it_was(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inputs, out = _inputs(tmp_path), tmp_path / "out"
    assert _run(capsys, "render", inputs, "-o", str(out))[0] == 0
    before = _tree(out)
    (Path(inputs) / "job.yaml").write_text(JOB.replace("numNodes: 2", "numNodes: 3"))
    code, _, _ = _run(
        capsys, "render", inputs, "-o", str(out), "--provenance", str(tmp_path / "no" / "p.json")
    )
    assert code == 2
    assert _tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in", "out"]  # no staging left


def test_render_to_stdout_with_an_unwritable_provenance_prints_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _run(
        capsys, "render", _inputs(tmp_path), "-o", "-", "--provenance", str(tmp_path / "no/p.json")
    )
    assert (code, out) == (2, "")
    assert "--provenance: cannot write" in err


def test_render_with_a_provenance_that_is_a_folder_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, folder = tmp_path / "out", tmp_path / "p.json"
    folder.mkdir()
    code, _, err = _run(
        capsys, "render", _inputs(tmp_path), "-o", str(out), "--provenance", str(folder)
    )
    assert code == 2
    assert f"--provenance: cannot write {folder}: it is a folder" in err
    assert not out.exists() and list(folder.iterdir()) == []


def test_render_writes_both_outputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out, provenance = tmp_path / "out", tmp_path / "p.json"
    code, _, _ = _run(
        capsys, "render", _inputs(tmp_path), "-o", str(out), "--provenance", str(provenance)
    )
    assert code == 0
    assert _tree(out) and provenance.read_text().startswith("{")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in", "out", "p.json"]


def test_migrate_with_an_unwritable_report_creates_no_output_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, missing = tmp_path / "out", tmp_path / "missing" / "report.txt"
    code, _, err = _run(capsys, "migrate", str(V1_JOB), "-o", str(out), "--report", str(missing))
    assert code == 2
    assert f"--report: cannot write {missing}" in err and "Traceback" not in err
    assert not out.exists()


def test_migrate_with_an_unwritable_output_writes_no_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("a file, not a folder\n")
    report = tmp_path / "report.txt"
    code, _, err = _run(
        capsys, "migrate", str(V1_JOB), "-o", str(blocker / "out"), "--report", str(report)
    )
    assert code == 2
    assert f"-o {blocker / 'out'}: cannot write" in err and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]  # no report, no staging


def test_migrate_writes_both_outputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out, report = tmp_path / "out", tmp_path / "report.txt"
    code, _, _ = _run(capsys, "migrate", str(V1_JOB), "-o", str(out), "--report", str(report))
    assert code == 0
    assert _tree(out) and report.read_text()
