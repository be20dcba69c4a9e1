"""A TrainJob naming a runtime the Trainer release installs (``torch-distributed``)
with no such runtime among the inputs: render's error says which file to add (issue 29
point 7: rendering the Trainer's own examples alone failed with no hint)."""

from __future__ import annotations

from pathlib import Path

import pytest

from compiler.cli import main

TRAINJOB = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: example
spec:
  runtimeRef:
    name: {name}
    kind: {kind}
  trainer:
    numNodes: 2
"""


def _render_error(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, kind: str) -> str:
    path = tmp_path / "job.yaml"
    path.write_text(TRAINJOB.format(name=name, kind=kind))
    assert main(["render", str(path), "-o", str(tmp_path / "out")]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith(f"{path}:7:5: TrainJob default/example: ")
    return line


def test_an_upstream_runtime_not_among_the_inputs_names_its_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = _render_error(tmp_path, capsys, "torch-distributed", "ClusterTrainingRuntime")
    assert line.endswith(
        "specified clusterTrainingRuntime must be created before the TrainJob is created "
        "(torch-distributed is a runtime the Trainer release installs (kubeflow/trainer "
        "manifests/base/runtimes/torch_distributed.yaml, releases v2.0.0 to v2.3.0); trainc "
        "renders only the runtimes it is given: add that file of the release your cluster "
        "runs to the inputs (trainc.yaml inputs.runtimes, or a PATH); trainc carries the "
        "Trainer v2.3.0 release's manifests/base/runtimes/torch_distributed.yaml)"
    ), line
    # the release and the file, not where this machine keeps trainc's copy: the same
    # message on every machine (and in a CI log or a committed golden)
    copy = _copy("v2.3.0", "torch_distributed.yaml")
    assert str(copy.parent) not in line
    assert main(["render", str(tmp_path / "job.yaml"), str(copy), "-o", "-"]) == 0


def test_one_release_only_and_the_namespaced_kind(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = _render_error(tmp_path, capsys, "mpi-distributed", "ClusterTrainingRuntime")
    assert "manifests/base/runtimes/mpi_distributed.yaml, releases v2.0.0)" in line
    assert line.endswith(
        "trainc carries the Trainer v2.0.0 release's manifests/base/runtimes/mpi_distributed.yaml)"
    ), line
    line = _render_error(tmp_path, capsys, "torch-distributed", "TrainingRuntime")
    assert "(did you mean runtimeRef.kind: ClusterTrainingRuntime? torch-distributed is a " in line


def test_no_hint_for_a_name_no_release_has(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = _render_error(tmp_path, capsys, "my-runtime", "ClusterTrainingRuntime")
    assert line.endswith("must be created before the TrainJob is created"), line


def _copy(version: str, name: str) -> Path:
    from compiler.upstream.artifacts import upstream

    return upstream(version).path(f"manifests/base/runtimes/{name}")
