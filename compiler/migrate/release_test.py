"""REFUSED_BY_RELEASE names the v1 field it came from and a release that takes it, or
says that none does (issue 29 point 9: an XGBoostJob whose pod templates carry
``apiVersion``/``kind`` was sent to "the release the cluster will run" with an empty
``sourcePath``)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from compiler.cli import main
from compiler.upstream.versions import TRAINER_VERSIONS

CASES = Path(__file__).resolve().parents[2] / "tests" / "migrate" / "cases"

XGBOOST = """\
apiVersion: kubeflow.org/v1
kind: XGBoostJob
metadata:
  name: rabit
spec:
  xgbReplicaSpecs:
    Master:
      replicas: 1
      restartPolicy: Never
      template:
        apiVersion: v1
        kind: Pod
        spec:
          containers:
          - name: xgboost
            image: rabit:1
    Worker:
      replicas: 2
      restartPolicy: Never
      template:
        apiVersion: v1
        kind: Pod
        spec:
          containers:
          - name: xgboost
            image: rabit:1
"""


def _errors(
    tmp_path: Path, job: Path, capsys: pytest.CaptureFixture[str], *flags: str
) -> list[dict[str, Any]]:
    report = tmp_path / "report.json"
    args = ["migrate", str(job), "-o", str(tmp_path / "out"), "--report", str(report)]
    assert main([*args, "--report-format", "json", *flags]) == 1, capsys.readouterr()
    [job_report] = json.loads(report.read_text())["reports"]
    errors = [d for d in job_report["diagnostics"] if d["severity"] == "error"]
    assert errors and {d["code"] for d in errors} == {"REFUSED_BY_RELEASE"}
    for error in errors:  # every release named exists
        assert set(re.findall(r"v\d+\.\d+\.\d+", error["workaround"])) <= set(TRAINER_VERSIONS)
    return errors


def test_a_field_no_release_takes_names_the_v1_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    job = tmp_path / "xgboost.yaml"
    job.write_text(XGBOOST)
    errors = _errors(tmp_path, job, capsys)
    assert [e["sourcePath"] for e in errors] == [
        "spec.xgbReplicaSpecs[Worker].template.apiVersion",
        "spec.xgbReplicaSpecs[Worker].template.kind",
    ]
    for error in errors:
        assert error["workaround"].startswith(
            "no Trainer release trainc emulates (v2.0.0 to v2.3.0) takes it: change "
            f"{error['sourcePath']} in the v1 job"
        )
        assert "upgrade" not in error["workaround"]


@pytest.mark.parametrize(
    ("case", "source_path"),
    [("jax-single", "kind"), ("pytorch-deadline", "spec.runPolicy.activeDeadlineSeconds")],
)
def test_a_field_a_newer_release_takes_names_it(
    case: str, source_path: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    [error] = _errors(tmp_path, CASES / case / "job.yaml", capsys, "--trainer", "v2.1.0")
    assert error["sourcePath"] == source_path
    assert error["workaround"].startswith("Trainer v2.2.0 and later take it: ")
