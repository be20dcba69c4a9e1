"""Provenance of the bundled example project: overlay patches are layers of their own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compiler.cli import main

ROOT = Path(__file__).resolve().parents[2]
PROJECT = ROOT / "example" / "trainc.yaml"
PLATFORM = ROOT / "overlays" / "production" / "platform.yaml"
RUNTIME_PODS = ROOT / "overlays" / "production" / "runtime-pods.yaml"
POD = "spec.replicatedJobs[name=node].template.spec.template.spec"


def _line(file: Path, text: str) -> int:
    return next(i for i, line in enumerate(file.read_text().splitlines(), 1) if text in line)


def _explain(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["explain", "--project", str(PROJECT), *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_output_overlay_patch_is_credited_to_its_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _explain(
        capsys,
        "--cluster",
        "production",
        "--object",
        "JobSet/vision/resnet",
        "spec.ttlSecondsAfterFinished",
    )
    assert code == 0
    assert "= 86400" in out
    assert "set by overlay production-platform patches[2]" in out
    assert f"{PLATFORM}:{_line(PLATFORM, 'value: 86400')}:" in out


def test_input_overlay_on_the_runtime_pod_template(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _explain(
        capsys,
        "--cluster",
        "production",
        "--object",
        "JobSet/vision/resnet",
        f"{POD}.priorityClassName",
    )
    assert code == 0
    assert '= "production-high"' in out
    assert "overlay production-platform patches[1]" in out
    assert f"{RUNTIME_PODS}:{_line(RUNTIME_PODS, 'priorityClassName:')}:" in out


def test_staging_has_no_production_overlay(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _explain(capsys, "--cluster", "staging", "--object", "JobSet/vision/resnet", ".")
    assert code == 0
    assert "production-platform" not in out


def test_several_clusters_need_one_cluster(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _explain(capsys, "--object", "JobSet/vision/resnet", ".")
    assert code == 2
    assert "--cluster" in err and "production, staging" in err


def test_render_provenance_in_project_mode(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    side = tmp_path / "provenance.json"
    code = main(
        [
            "render",
            "--project",
            str(PROJECT),
            "--cluster",
            "production",
            "-o",
            str(tmp_path / "out"),
            "--provenance",
            str(side),
            "-q",
        ]
    )
    capsys.readouterr()
    assert code == 0
    fields = json.loads(side.read_text())["objects"]["JobSet/vision/resnet"]
    ttl = fields["spec.ttlSecondsAfterFinished"]
    assert ttl["layer"] == "overlay"
    assert ttl["source"]["location"].startswith(f"{PLATFORM}:")
    priority = fields[f"{POD}.priorityClassName"]
    assert priority["layer"] == "overlay"
    assert priority["source"]["location"].startswith(f"{RUNTIME_PODS}:")
