"""trainc diff with a Katib Experiment: the peak requests at parallelTrialCount, before and
after, for each Experiment whose peak (or count) changes; none when it stays."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from compiler.cli import main
from tests.katib.test_katib_render import _grid

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]


def _repo(tmp_path: Path) -> Path:
    root = _grid(tmp_path / "repo")
    exp = yaml.safe_load((root / "experiment.yaml").read_text())
    trainer = exp["spec"]["trialTemplate"]["trialSpec"]["spec"]["trainer"]
    trainer["resourcesPerNode"] = {"limits": {"nvidia.com/gpu": 2}}  # 2 nodes: 4 per trial
    (root / "experiment.yaml").write_text(yaml.safe_dump(exp))
    for command in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "base"]):
        subprocess.run([*GIT, *command], cwd=root, check=True, capture_output=True)
    return root


def _change(root: Path, parallel: int, gpus: int) -> None:
    exp = yaml.safe_load((root / "experiment.yaml").read_text())
    exp["spec"]["parallelTrialCount"] = parallel
    trainer = exp["spec"]["trialTemplate"]["trialSpec"]["spec"]["trainer"]
    trainer["resourcesPerNode"] = {"limits": {"nvidia.com/gpu": gpus}}
    (root / "experiment.yaml").write_text(yaml.safe_dump(exp))


def _diff(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    capsys.readouterr()
    code = main(["diff", "--base", "HEAD", "--no-impact", *args, "."])
    out = capsys.readouterr()
    assert code == 0, out.err
    return out.out


def test_diff_shows_the_peak_when_an_experiment_changes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _repo(tmp_path)
    monkeypatch.chdir(root)
    _change(root, 3, 4)
    assert _diff(capsys).endswith(
        "\npeak at parallelTrialCount (Katib):\n"
        "  Experiment kubeflow/torch-distributed-example: peak at parallelTrialCount 3: "
        "nvidia.com/gpu 12 -> 24\n"
    )
    _change(root, 6, 2)
    text = _diff(capsys)
    assert "parallelTrialCount 3 -> 6: nvidia.com/gpu 12 -> 24\n" in text
    markdown = _diff(capsys, "--format", "markdown")
    assert "#### Peak at parallelTrialCount (Katib)" in markdown
    assert (
        "- Experiment kubeflow/torch-distributed-example: peak at parallelTrialCount " in markdown
    )


def test_diff_is_silent_about_an_unchanged_peak(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _repo(tmp_path)
    monkeypatch.chdir(root)
    exp = yaml.safe_load((root / "experiment.yaml").read_text())
    exp["spec"]["maxFailedTrialCount"] = 5  # the Experiment changes, its peak does not
    (root / "experiment.yaml").write_text(yaml.safe_dump(exp))
    text = _diff(capsys)
    assert "maxFailedTrialCount" in text
    assert "peak at parallelTrialCount" not in text
