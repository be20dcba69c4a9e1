"""Two jobs of one identity are refused with both places named, never merged (issue 29
point 2): exit 2, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest

from compiler.cli import main
from compiler.migrate.identity import output_clashes
from compiler.migrate.report import JobReport, ObjectId

CASES = Path(__file__).resolve().parents[2] / "tests" / "migrate" / "cases"
V1_PI = (CASES / "mpi-v1-pi" / "job.yaml").read_text()
V2_PI = (CASES / "mpi-v2beta1-pi" / "job.yaml").read_text()
PYTORCH = (CASES / "pytorch-reuses-torch-distributed" / "job.yaml").read_text()


def _migrate(tmp_path: Path, capsys: pytest.CaptureFixture[str], *paths: Path) -> tuple[int, str]:
    out = tmp_path / "out"
    code = main(["migrate", *map(str, paths), "-o", str(out)])
    assert not out.exists()  # nothing written
    return code, capsys.readouterr().err


def test_one_mpijob_written_as_v1_and_v2beta1_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first, second = tmp_path / "a" / "mpi.yaml", tmp_path / "b" / "mpi.yaml"
    first.write_text(V1_PI)
    second.write_text("# the MPI Operator's\n" + V2_PI)
    code, err = _migrate(tmp_path, capsys, first, second)
    assert code == 2
    assert err.splitlines() == [
        f"{second}:5:3: MPIJob default/pi: metadata.name: MPIJob default/pi is also defined "
        f"at {first}:4:3 (there kubeflow.org/v1, here kubeflow.org/v2beta1): one object in a "
        "cluster, and both would be migrated to TrainJob default/pi; keep the one the cluster "
        "runs and remove the other"
    ]


def test_two_kinds_with_one_name_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytorch, mpi = tmp_path / "pytorch.yaml", tmp_path / "mpi.yaml"
    pytorch.write_text(PYTORCH.replace("name: plain", "name: pi"))
    mpi.write_text(V1_PI)
    code, err = _migrate(tmp_path, capsys, pytorch, mpi)
    assert code == 2
    [line] = err.splitlines()
    assert line.startswith(
        f"{mpi}:4:3: MPIJob default/pi: metadata.name: PyTorchJob default/pi ({pytorch}:4:3) "
        "would be migrated to the same TrainJob default/pi (and TrainingRuntime) as this MPIJob"
    ), line


def test_one_file_given_twice(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mpi = tmp_path / "mpi.yaml"
    mpi.write_text(V1_PI)
    code, err = _migrate(tmp_path, capsys, tmp_path, mpi)
    assert code == 2
    assert f"{mpi}:4:3: MPIJob default/pi: metadata.name: read twice" in err


def test_one_name_in_two_namespaces_is_two_jobs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a.yaml").write_text(V1_PI)
    (tmp_path / "b.yaml").write_text(V2_PI.replace("name: pi", "name: pi\n  namespace: hpc"))
    assert main(["migrate", str(tmp_path), "-o", str(tmp_path / "out")]) == 0, capsys.readouterr()
    assert sorted(p.name for p in (tmp_path / "out").rglob("*.yaml")) == ["pi.yaml", "pi.yaml"]


def test_an_output_two_jobs_share_is_refused() -> None:
    """Any output (a ConfigMap a translation writes too), not only the TrainJob."""
    shared = ObjectId("v1", "ConfigMap", "default", "hosts")
    reports = [
        JobReport(ObjectId("kubeflow.org/v1", "MPIJob", "default", name), f"{name}.yaml")
        for name in ("a", "b")
    ]
    for report in reports:
        report.outputs = [shared]
    [problem] = output_clashes([], reports, "default")
    assert str(problem) == (
        "b.yaml: MPIJob default/b: metadata.name: its output ConfigMap default/hosts is also "
        "the output of MPIJob default/a (a.yaml): rename one of the two jobs, then migrate again"
    )
