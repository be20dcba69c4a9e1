"""Per-cluster builds: overlays by layer, scheduler checks, the atomic rendered/ tree, CLI."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from compiler.cli import main
from compiler.emit.output import write_project
from compiler.model.build import Build
from compiler.plan.build_plan import plans_for_project
from compiler.plan.stages import run_each
from compiler.project import Project, load_project


def render_project(project: Project) -> dict[str, Build]:
    return run_each(plans_for_project(project))


EXAMPLE = Path(__file__).resolve().parents[2] / "example"

PROJECT = """\
inputs:
  runtimes: [runtimes/]
  jobs: ["jobs/*.yaml"]
clusters:
  - name: production
    schedulers: [coscheduling]
    overlays: [overlays/production]
    namespaces:
      - name: vision
        labels: {team: vision}
        overlays: [overlays/vision.yaml]
  - name: staging
    schedulers: []
"""

CLUSTER_OVERLAY = """\
apiVersion: trainc.dev/v1alpha1
kind: Overlay
metadata: {name: production}
layer: cluster
patches:
  - target: {kind: JobSet}
    patch:
      metadata:
        labels: {env: production, tier: cluster}
"""

NAMESPACE_OVERLAY = """\
apiVersion: trainc.dev/v1alpha1
kind: Overlay
metadata: {name: vision, namespace: vision}
layer: namespace
patches:
  - target: {kind: JobSet}
    patch:
      metadata:
        labels: {tier: namespace}
"""

OTHER_JOB = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: other
  namespace: audio
  labels:
    kueue.x-k8s.io/queue-name: q
spec:
  runtimeRef: {name: torch-gang}
  trainer: {numNodes: 2}
"""


def _tree(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(EXAMPLE / "runtimes", root / "runtimes")
    shutil.copytree(EXAMPLE / "jobs", root / "jobs")
    (root / "jobs" / "other.yaml").write_text(OTHER_JOB)
    (root / "overlays" / "production").mkdir(parents=True)
    (root / "overlays" / "production" / "cluster.yaml").write_text(CLUSTER_OVERLAY)
    (root / "overlays" / "vision.yaml").write_text(NAMESPACE_OVERLAY)
    (root / "trainc.yaml").write_text(PROJECT)
    return root


def _labels(path: Path) -> dict[str, str]:
    data = yaml.safe_load(path.read_text())
    labels: dict[str, str] = data["metadata"].get("labels") or {}
    return labels


def test_overlays_apply_by_layer_and_namespace(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    project = load_project(root / "trainc.yaml")
    results = render_project(project)
    assert list(results) == ["production", "staging"]
    production = results["production"]
    # staging declares no gang scheduler: the coscheduling runtime is an error there,
    # located at the runtime's podGroupPolicy
    [error] = results["staging"].problems
    assert error.rule == "scheduler"
    assert str(error.location).endswith("runtimes/torch-gang.yaml:14:5")
    assert "coscheduling" in error.message and "'staging'" in error.message
    assert production.problems == []
    # production: a Kueue label without Kueue is a warning; audio is not a declared namespace
    rules = sorted((w.rule or "", w.message.split(":")[0]) for w in production.warnings)
    assert [r for r, _ in rules] == ["project", "scheduler"]
    jobsets = {
        (o.trainjob_namespace, o.trainjob_name): o.data["metadata"].get("labels") or {}
        for o in production.objects
        if o.data["kind"] == "JobSet"
    }
    # cluster layer everywhere, then the namespace layer only in vision
    assert jobsets[("audio", "other")]["tier"] == "cluster"
    assert jobsets[("vision", "resnet")]["tier"] == "namespace"
    assert jobsets[("vision", "resnet")]["env"] == "production"
    staging = {o.data["metadata"]["name"]: o.data for o in results["staging"].objects}
    assert "env" not in (staging["resnet"]["metadata"].get("labels") or {})


def test_write_project_tree_is_atomic_and_per_cluster(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    (root / "trainc.yaml").write_text(
        PROJECT.replace("schedulers: []", "schedulers: [coscheduling]")
    )
    project = load_project(root / "trainc.yaml")
    results = render_project(project)
    out = project.output
    count = write_project(results, out, whole=True)
    assert count == 12
    prod = out / "production" / "vision" / "jobset.x-k8s.io_JobSet_resnet.yaml"
    stag = out / "staging" / "vision" / "jobset.x-k8s.io_JobSet_resnet.yaml"
    assert _labels(prod)["tier"] == "namespace"
    assert "tier" not in _labels(stag)
    # one cluster only: the other cluster's folder is kept
    (out / "staging" / "keep").write_text("x")
    write_project({"production": results["production"]}, out, whole=False)
    assert (out / "staging" / "keep").exists()
    # the whole tree is swapped: the stray file disappears, nothing else is left around
    write_project(results, out, whole=True)
    assert not (out / "staging" / "keep").exists()
    assert sorted(p.name for p in out.parent.iterdir() if p.name.startswith(".rendered")) == []


def test_cli_render_project_from_cwd_and_unknown_cluster(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _tree(tmp_path)
    (root / ".git").mkdir()
    monkeypatch.chdir(root / "jobs")
    assert main(["render", "--cluster", "prod"]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"{root / 'trainc.yaml'}:4:1: clusters: unknown cluster 'prod' "
        "(the project defines: production, staging)\n"
    )
    # staging lacks coscheduling: exit 2, nothing written
    assert main(["render"]) == 2
    assert "scheduler" not in capsys.readouterr().out
    assert not (root / "rendered").exists()
    assert main(["render", "--cluster", "production", "-q"]) == 0
    assert (
        root / "rendered" / "production" / "audio" / "jobset.x-k8s.io_JobSet_other.yaml"
    ).is_file()
    assert not (root / "rendered" / "staging").exists()
    # check: the same project mode, one merged report; the scheduler error exits 2, as in render
    assert main(["check", "--format", "json"]) == 2


def test_cli_render_without_project_keeps_working(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    assert main(["render", str(EXAMPLE / "jobs"), str(EXAMPLE / "runtimes")]) == 0
    assert "kind: JobSet" in capsys.readouterr().out
    assert main(["render"]) == 2
    assert "no trainc.yaml found" in capsys.readouterr().err


def test_example_project_renders_both_clusters(tmp_path: Path) -> None:
    project = load_project(EXAMPLE / "trainc.yaml")  # its overlays must exist
    assert project.cluster_names == ["production", "staging"]
    results = render_project(project)
    assert all(not r.problems for r in results.values())
    write_project(results, tmp_path / "rendered", whole=True)
    production = sorted(
        p.relative_to(tmp_path / "rendered" / "production")
        for p in (tmp_path / "rendered" / "production").rglob("*.yaml")
    )
    staging = sorted(
        p.relative_to(tmp_path / "rendered" / "staging")
        for p in (tmp_path / "rendered" / "staging").rglob("*.yaml")
    )
    assert production and staging
    differing = [
        p
        for p in set(production) & set(staging)
        if (tmp_path / "rendered" / "production" / p).read_text()
        != (tmp_path / "rendered" / "staging" / p).read_text()
    ]
    assert differing, "the production and staging overlays change nothing"
