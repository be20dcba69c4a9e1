"""The next step after ``migrate`` renders (issue 29 point 7): a TrainJob that reuses a
runtime not written to the output says which file render needs, and ``migrate`` ends
with the command that renders the output."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from compiler.cli import main

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "tests" / "migrate" / "cases"
REUSES = CASES / "pytorch-reuses-torch-distributed" / "job.yaml"
NOTE = "trainc: note: the migrated TrainJobs reuse runtimes that are not in the output"


def _render_command(err: str) -> list[str]:
    [line] = [line for line in err.splitlines() if line.startswith(NOTE)]
    command = shlex.split(line.split("render it with them: ", 1)[1])
    assert command[:2] == ["trainc", "render"]
    return command[1:]


def test_the_upstream_runtime_to_add_is_named_and_the_command_renders(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, report = tmp_path / "migrated", tmp_path / "report.json"
    args = ["migrate", str(REUSES), "-o", str(out), "--report", str(report)]
    assert main([*args, "--report-format", "json"]) == 0
    err = capsys.readouterr().err
    [job] = json.loads(report.read_text())["reports"]
    [note] = [d for d in job["diagnostics"] if d["code"] == "RUNTIME_NOT_WRITTEN"]
    assert (
        "ClusterTrainingRuntime torch-distributed is the Trainer v2.3.0 release's"
        in (note["message"])
    )
    assert "kubeflow/trainer manifests/base/runtimes/torch_distributed.yaml" in note["message"]
    command = _render_command(err)
    from compiler.upstream.artifacts import upstream

    copy = upstream("v2.3.0").path("manifests/base/runtimes/torch_distributed.yaml")
    assert command[1:] == [str(out), str(copy)]
    assert Path(command[2]).is_file()
    assert (
        "trainc carries the Trainer v2.3.0 release's manifests/base/runtimes/"
        in (note["workaround"])
    )
    # the output alone is refused, with the same file named; with it, it renders
    assert main(["render", str(out), "-o", str(tmp_path / "alone")]) == 2
    assert "manifests/base/runtimes/torch_distributed.yaml" in capsys.readouterr().err
    assert main([*command, "-o", str(tmp_path / "rendered")]) == 0
    assert list((tmp_path / "rendered").rglob("*JobSet_plain.yaml"))


def test_a_runtime_among_the_inputs_is_named_for_render(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runtime = tmp_path / "runtimes" / "shared.yaml"
    runtime.parent.mkdir()
    from compiler.upstream.artifacts import upstream

    upstream_file = upstream().path("manifests/base/runtimes/torch_distributed.yaml")
    runtime.write_text(
        upstream_file.read_text()
        .replace("kind: ClusterTrainingRuntime", "kind: TrainingRuntime")
        .replace("name: torch-distributed", "name: shared")
    )
    out = tmp_path / "migrated"
    assert main(["migrate", str(runtime), str(REUSES), "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert (
        "RUNTIME_NOT_WRITTEN (job) -> TrainJob.spec.runtimeRef: TrainingRuntime shared is " in err
    )
    command = _render_command(err)
    assert command[1:] == [str(out), str(runtime)]
    assert main([*command, "-o", str(tmp_path / "rendered")]) == 0


def test_no_note_when_every_runtime_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    job = CASES / "pytorch-spec-worked-example" / "job.yaml"
    assert main(["migrate", str(job), "-o", str(tmp_path / "out")]) == 0
    err = capsys.readouterr().err
    assert NOTE not in err and "RUNTIME_NOT_WRITTEN" not in err


def _install(root: Path) -> dict[str, str]:
    """An environment whose upstream artifacts for v2.3.0 are found under ``root``
    (``TRAINC_CACHE``): the release's manifest with the Trainer module and Go facts
    reached through ``root``, as another machine or install would have them."""
    from compiler.upstream.artifacts import upstream

    found = upstream("v2.3.0")
    folder = root / "upstream" / "v2.3.0"
    folder.mkdir(parents=True)
    manifest = json.loads(found.manifest_path.read_text(encoding="utf-8"))
    manifest["trainerDir"] = "trainer"  # relative to the folder, as the package's are
    (folder / "trainer").symlink_to(found.trainer_dir)
    (folder / "typeinfo.json").symlink_to(found.typeinfo_path)
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return {**os.environ, "TRAINC_CACHE": str(root), "PYTHONPATH": str(ROOT)}


@pytest.mark.parametrize("report_format", ["json", "text"])
def test_the_report_is_the_same_on_every_install(tmp_path: Path, report_format: str) -> None:
    """A committed report names the release and the file of a reused runtime, not
    where this install keeps its copy: two installs write the same bytes."""
    reports = []
    for install in ("one", "two"):
        report, out = tmp_path / install / "report", tmp_path / install / "out"
        args = [str(REUSES.relative_to(CASES)), "-o", str(out), "--report", str(report)]
        done = subprocess.run(
            [sys.executable, "-m", "compiler", "migrate", *args, "--report-format", report_format],
            capture_output=True,
            text=True,
            cwd=CASES,
            env=_install(tmp_path / install / "cache"),
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        # the closing note is for this terminal: it names this install's copy
        assert f"{tmp_path / install / 'cache'}/upstream/v2.3.0/trainer/" in done.stderr
        reports.append(report.read_text(encoding="utf-8"))
    assert reports[0] == reports[1]
    assert "RUNTIME_NOT_WRITTEN" in reports[0]
    assert (
        "the Trainer v2.3.0 release's manifests/base/runtimes/torch_distributed.yaml"
        in (reports[0])
    )
    assert str(tmp_path) not in reports[0]
    assert not re.search(r"(?<![\w.-])/[\w.-]+/", reports[0]), "an absolute path"
