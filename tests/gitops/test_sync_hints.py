"""The ``gitops:`` options of a project cluster: off by default, each one an annotation on
every rendered object (or a file), bad values reported at ``trainc.yaml:line:col``."""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.gitops.support import trainc, write_project


def _objects(project: Path, cluster: str) -> list[dict]:  # type: ignore[type-arg]
    result = trainc("render", "--cluster", cluster, "-o", "-", cwd=project)
    assert result.returncode == 0, result.stderr.decode()
    return [d for d in yaml.safe_load_all(result.stdout) if d]


def test_off_by_default(tmp_path: Path) -> None:
    project = write_project(tmp_path)
    for obj in _objects(project, "production"):
        annotations = obj["metadata"].get("annotations") or {}
        assert not [k for k in annotations if "argoproj" in k or "fluxcd" in k]


def test_each_option_is_its_annotation(tmp_path: Path) -> None:
    hints = (
        "      syncWaves: true\n      serverSideApply: true\n"
        "      immutableChange: force-replace\n      fluxSubstitute: disabled\n"
    )
    project = write_project(tmp_path, gitops=hints)
    objects = _objects(project, "production")
    assert sorted(o["kind"] for o in objects) == ["JobSet", "JobSet", "PodGroup", "PodGroup"]
    for obj in objects:
        annotations = obj["metadata"]["annotations"]
        assert annotations["argocd.argoproj.io/sync-wave"] == (
            "0" if obj["kind"] == "JobSet" else "-1"
        )
        assert (
            annotations["argocd.argoproj.io/sync-options"]
            == "ServerSideApply=true,Force=true,Replace=true"
        )
        assert annotations["kustomize.toolkit.fluxcd.io/substitute"] == "disabled"
    # only the cluster that sets them
    for obj in _objects(project, "staging"):
        assert "annotations" not in obj["metadata"] or not any(
            "argoproj" in k for k in obj["metadata"]["annotations"]
        )
    # the files render writes carry them too, and check --rendered agrees
    assert trainc("render", "-q", cwd=project).returncode == 0
    written = yaml.safe_load(
        (project / "rendered/production/vision/jobset.x-k8s.io_JobSet_job-0.yaml").read_text()
    )
    assert written["metadata"]["annotations"]["argocd.argoproj.io/sync-options"] == (
        "ServerSideApply=true,Force=true,Replace=true"
    )
    assert trainc("check", "--rendered", cwd=project).returncode == 0


def test_replace_alone(tmp_path: Path) -> None:
    project = write_project(tmp_path, gitops="      immutableChange: replace\n")
    for obj in _objects(project, "production"):
        assert obj["metadata"]["annotations"] == {"argocd.argoproj.io/sync-options": "Replace=true"}


def test_a_bad_option_is_an_error_at_its_line(tmp_path: Path) -> None:
    project = write_project(
        tmp_path, gitops="      immutableChange: recreate\n      syncWave: true\n"
    )
    result = trainc("render", "--cluster", "production", "-o", "-", cwd=project)
    assert result.returncode == 2
    assert result.stdout == b""
    message = result.stderr.decode()
    assert "trainc.yaml:11:7: clusters[0].gitops.immutableChange: " in message
    assert "trainc.yaml:12:7: clusters[0].gitops.syncWave: unknown field" in message
    assert "Traceback" not in message
