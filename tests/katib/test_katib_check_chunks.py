"""trainc check -j with Katib Experiments: the report is the one -j 1 gives, and each
Experiment's trials are planned once, in one chunk, whether the Experiment has a file of
its own (a job file) or shares one with a ConfigMap (a context file, which every chunk
loads)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from compiler.cli import main
from compiler.katib import inputs
from compiler.plan import check_chunks
from tests.katib.test_katib_check import _example, _setup

CONFIG_MAP = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra, namespace: kubeflow}\n"
TRAINJOB = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {{name: job-{i}, namespace: kubeflow}}
spec:
  runtimeRef: {{name: torch-distributed}}
  trainer:
    image: docker.io/acme/train:1
    numNodes: {i}
"""


def _inputs(tmp_path: Path) -> Path:
    tmp_path.mkdir()
    root = _setup(tmp_path)
    exp = _example()
    (root / "experiment.yaml").write_text(yaml.safe_dump(exp))  # a job file
    exp["metadata"]["name"] = "shared"
    # a context file: the Experiment beside a ConfigMap
    (root / "shared.yaml").write_text(yaml.safe_dump(exp) + "---\n" + CONFIG_MAP)
    for i in range(1, 4):
        (root / f"job-{i}.yaml").write_text(TRAINJOB.format(i=i))
    return root


def _check(
    capsys: pytest.CaptureFixture[str], root: Path, jobs: str, planned: Path
) -> tuple[str, list[str]]:
    planned.write_text("")
    capsys.readouterr()
    code = main(["check", str(root), "-j", jobs, "--no-cache"])
    out = capsys.readouterr()
    assert code == 0, out.out + out.err
    return out.out + out.err, sorted(planned.read_text().split())


def test_check_j_plans_each_experiment_once_and_reports_as_j1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _inputs(tmp_path / "in")
    planned = tmp_path / "planned.txt"
    plan_trials = inputs.plan_trials

    def counted(experiment: dict[str, object], *args: int) -> object:
        with planned.open("a") as out:  # the forked workers write here too
            out.write(f"{experiment['metadata']['name']}\n")  # type: ignore[index]
        return plan_trials(experiment, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(inputs, "plan_trials", counted)
    monkeypatch.setattr(check_chunks, "CHECK_CHUNK_JOBS", 1)  # a chunk per job file
    whole, once = _check(capsys, root, "1", planned)
    assert once == ["shared", "torch-distributed-example"]
    chunked, per_chunk = _check(capsys, root, "2", planned)
    assert chunked == whole
    assert per_chunk == ["shared", "torch-distributed-example"]
    assert "checked 13 input objects and 9 rendered objects" in whole  # 6 trials
