"""Flux: ``rendered/<cluster>/kustomization.yaml`` built by the real ``kubectl kustomize``
gives exactly the rendered objects; the substitute-disabled annotation; the ``${``
warning of ``check``; and the same tree passes ``check --rendered``."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from tests.gitops.support import trainc, write_project

KUSTOMIZATION_ON = "      kustomization: true\n"


def _kustomize() -> list[str]:
    """``kubectl kustomize``, else the standalone kustomize it embeds, which `make setup`
    installs where kubectl is missing (scripts/install-kubectl.sh)."""
    from compiler.upstream.artifacts import cache_root

    kubectl = shutil.which("kubectl")
    if kubectl is not None:
        return [kubectl, "kustomize"]
    standalone = cache_root() / "bin" / "kustomize"
    if standalone.is_file():
        return [str(standalone), "build"]
    pytest.fail(
        "neither kubectl nor kustomize is installed (`make setup` installs kustomize)",
        pytrace=False,
    )


def test_kubectl_kustomize_builds_exactly_the_rendered_objects(tmp_path: Path) -> None:
    import subprocess

    project = write_project(tmp_path, jobs=3, gitops=KUSTOMIZATION_ON)
    result = trainc("render", cwd=project)
    assert result.returncode == 0, result.stderr.decode()
    folder = project / "rendered" / "production"
    kustomization = yaml.safe_load((folder / "kustomization.yaml").read_text())
    files = sorted(
        str(p.relative_to(folder))
        for p in folder.rglob("*.yaml")
        if p.name not in ("kustomization.yaml", "requirements.yaml")
    )
    assert kustomization == {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": files,
    }
    built = subprocess.run(
        [*_kustomize(), str(folder)], capture_output=True, text=True, check=True
    ).stdout
    expected = [yaml.safe_load((folder / name).read_text()) for name in files]
    key = lambda o: (o["kind"], o["metadata"]["namespace"], o["metadata"]["name"])  # noqa: E731
    assert sorted(yaml.safe_load_all(built), key=key) == sorted(expected, key=key)
    assert len(expected) == 6  # a JobSet and a PodGroup per TrainJob
    # staging has no gitops block: no kustomization
    assert not (project / "rendered" / "staging" / "kustomization.yaml").exists()
    # the tree with its kustomization is what check --rendered expects
    fresh = trainc("check", "--rendered", cwd=project)
    assert fresh.returncode == 0, fresh.stdout.decode() + fresh.stderr.decode()
    (folder / "kustomization.yaml").unlink()
    stale = trainc("check", "--rendered", cwd=project)
    assert stale.returncode == 1
    assert "missing: production/kustomization.yaml" in stale.stdout.decode()


def test_substitute_disabled_annotation_and_no_warning(tmp_path: Path) -> None:
    project = write_project(tmp_path, jobs=1, gitops="      fluxSubstitute: disabled\n")
    job = project / "jobs" / "job-0.yaml"
    job.write_text(job.read_text().replace("[--max-steps=10]", '["--out=${OUTPUT_DIR}"]'))
    render = trainc("render", "--cluster", "production", "-o", "-", cwd=project)
    assert render.returncode == 0, render.stderr.decode()
    documents = [d for d in yaml.safe_load_all(render.stdout) if d]
    assert {d["kind"] for d in documents} == {"JobSet", "PodGroup"}
    for document in documents:
        annotations = document["metadata"]["annotations"]
        assert annotations["kustomize.toolkit.fluxcd.io/substitute"] == "disabled"
    check = trainc("check", "--cluster", "production", cwd=project)
    assert check.returncode == 0
    assert "postBuild substitution" not in check.stdout.decode()


def test_check_warns_about_dollar_brace_in_a_command(tmp_path: Path) -> None:
    project = write_project(tmp_path, jobs=1)
    job = project / "jobs" / "job-0.yaml"
    job.write_text(job.read_text().replace("[--max-steps=10]", '["--out=${OUTPUT_DIR}"]'))
    check = trainc("check", "--cluster", "staging", cwd=project)
    report = check.stdout.decode()
    assert check.returncode == 0, report  # a warning, not an error
    assert "warning[gitops]" in report
    assert "Flux's postBuild substitution would replace its ${...}" in report
    assert "jobs/job-0.yaml:12:12" in report  # at the TrainJob's args, which produced it


def test_flux_example_objects() -> None:
    from tests.gitops.support import REPO

    folder = REPO / "integrations" / "flux"
    committed = list(yaml.safe_load_all((folder / "committed-tree.yaml").read_text()))
    assert [o["kind"] for o in committed] == ["GitRepository", "Kustomization"]
    assert committed[1]["spec"]["path"] == "./rendered/production"
    assert committed[1]["spec"]["sourceRef"] == {"kind": "GitRepository", "name": "training-jobs"}
    oci = list(yaml.safe_load_all((folder / "oci-artifact.yaml").read_text()))
    assert [o["kind"] for o in oci] == ["OCIRepository", "Kustomization"]
    assert oci[1]["spec"]["sourceRef"]["kind"] == "OCIRepository"
    assert "flux push artifact" in (folder / "oci-artifact.yaml").read_text()
