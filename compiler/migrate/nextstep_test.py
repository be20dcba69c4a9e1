"""The next step after ``migrate`` renders (issue 29 point 7): a TrainJob that reuses a
runtime not written to the output says which file render needs, and ``migrate`` ends
with the command that renders the output."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from compiler.cli import main

CASES = Path(__file__).resolve().parents[2] / "tests" / "migrate" / "cases"
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
    assert Path(command[2]).is_file() and command[2] in note["workaround"]
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
