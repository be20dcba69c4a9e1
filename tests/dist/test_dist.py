"""The distribution as users get it (issue 30): ``make dist``, then a fresh virtual
environment with the wheels from the dist folder (their dependencies from PyPI or pip's
cache), no Go on PATH, an empty home and no trainc cache. The installed trainc renders,
checks (the shipped YAML policies) and migrates byte for byte as the checkout does,
which reads the same releases from the Go module cache that `make setup` fills."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from compiler.upstream.artifacts import cache_root
from compiler.upstream.versions import (
    KATIB_VERSION,
    KUEUE_TRAINER_VERSIONS,
    KUEUE_VERSION,
    TRAINER_VERSIONS,
    version_key,
)
from tests.dist.support import REPO, Dist, build_dist, install, user_env

YAML_POLICIES = sorted(
    p.name for p in (REPO / "policies").iterdir() if p.is_dir() and not any(p.glob("*.cue"))
)


@dataclass(frozen=True)
class Installed:
    bin: Path
    home: Path


@pytest.fixture(scope="module")
def installed(dist: Dist, tmp_path_factory: pytest.TempPathFactory) -> Installed:
    root = tmp_path_factory.mktemp("user")
    home = root / "home"
    home.mkdir()
    return Installed(install(dist, root / "venv", home), home)


@dataclass(frozen=True)
class Run:
    returncode: int
    stdout: bytes
    stderr: bytes


def run_installed(user: Installed, *args: str, cwd: Path) -> Run:
    done = subprocess.run(
        [str(user.bin / "trainc"), *args],
        cwd=cwd,
        env=user_env(user.home),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=300,
        check=False,
    )
    return Run(done.returncode, done.stdout, done.stderr)


def run_checkout(*args: str, cwd: Path) -> Run:
    """This checkout's trainc, on the artifacts of the Go module cache (`make setup`)."""
    env = user_env(Path("/nonexistent"), PYTHONPATH=str(REPO), TRAINC_CACHE=str(cache_root()))
    done = subprocess.run(
        [sys.executable, "-m", "compiler", *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=300,
        check=False,
    )
    return Run(done.returncode, done.stdout, done.stderr)


def tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def project(root: Path, policies: list[str]) -> Path:
    """The bundled example (with its overlays) and the named shipped policies."""
    shutil.copytree(REPO / "example", root / "example")
    shutil.copytree(REPO / "overlays", root / "overlays")
    # one repository, as in a checkout: example/trainc.yaml names ../overlays, which
    # stays inside only when root is the repository (compiler.load.confine)
    (root / ".git").mkdir()
    for name in policies:
        shutil.copytree(REPO / "policies" / name, root / "example" / "policies" / name)
    trainc_yaml = root / "example" / "trainc.yaml"
    text = trainc_yaml.read_text(encoding="utf-8")
    if policies:
        text = text.replace(
            '  jobs: ["jobs/*.yaml"]\n', '  jobs: ["jobs/*.yaml"]\n  policies: [policies/]\n'
        )
        assert "policies: [policies/]" in text
    trainc_yaml.write_text(text, encoding="utf-8")
    return root / "example"


def test_the_wheels_hold_what_they_should(dist: Dist) -> None:
    with zipfile.ZipFile(dist.data_wheel) as wheel:
        names = set(wheel.namelist())
        manifest = json.loads(wheel.read("trainc_upstream/data/MANIFEST.json"))
    assert sorted(manifest["releases"]) == sorted(TRAINER_VERSIONS)
    for release, entry in manifest["releases"].items():
        trainer = entry["modules"]["github.com/kubeflow/trainer/v2"]
        assert trainer["version"] == release and trainer["sum"].startswith("h1:")
        for crd in ("trainjobs", "trainingruntimes", "clustertrainingruntimes"):
            path = f"{release}/trainer/manifests/base/crds/trainer.kubeflow.org_{crd}.yaml"
            assert f"trainc_upstream/data/{path}" in names and path in manifest["files"]
    assert all(f"trainc_upstream/data/{path}" in names for path in manifest["files"])
    # the pinned Kueue release: its input CRDs and the Trainer it embeds
    kueue = manifest["kueue"]
    assert kueue["version"] == KUEUE_VERSION and kueue["sum"].startswith("h1:")
    assert kueue["trainerVersion"] == KUEUE_TRAINER_VERSIONS[KUEUE_VERSION]
    crd = f"kueue/{KUEUE_VERSION}/crds/kueue.x-k8s.io_clusterqueues.yaml"
    assert f"trainc_upstream/data/{crd}" in names and crd in manifest["files"]
    # the pinned Katib release: its Experiment CRD and katib-config.yaml
    katib = manifest["katib"]
    assert katib["version"] == KATIB_VERSION and katib["sum"].startswith("h1:")
    for path in (
        f"katib/{KATIB_VERSION}/crds/experiment.yaml",
        f"katib/{KATIB_VERSION}/katib-config.yaml",
    ):
        assert f"trainc_upstream/data/{path}" in names and path in manifest["files"]
    with zipfile.ZipFile(dist.trainc_wheel) as wheel:
        trainc_names = wheel.namelist()
        metadata = wheel.read(next(n for n in trainc_names if n.endswith("/METADATA"))).decode()
    assert not any(n.startswith("trainc_upstream/") for n in trainc_names)
    assert f"Requires-Dist: trainc-upstream=={manifest['version']}" in metadata
    with tarfile.open(dist.sdist) as sdist:
        assert "trainc-0.1.0/compiler/cli/__init__.py" in sdist.getnames()


def test_make_dist_is_reproducible(dist: Dist, tmp_path: Path) -> None:
    again = build_dist(tmp_path / "again")
    for first, second in (
        (dist.data_wheel, again.data_wheel),
        (dist.trainc_wheel, again.trainc_wheel),
        (dist.sdist, again.sdist),
    ):
        assert first.name == second.name
        assert first.read_bytes() == second.read_bytes(), first.name


def test_version_names_the_releases_and_their_modules(installed: Installed, tmp_path: Path) -> None:
    done = run_installed(installed, "--version", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.decode().splitlines()
    assert lines[0] == "trainc 0.1.0"
    assert lines[1].startswith("upstream artifacts: trainc-upstream 0.2.0 (")
    assert "site-packages/trainc_upstream/data" in lines[1]
    for version, line in zip(TRAINER_VERSIONS, lines[2:], strict=True):
        assert line.startswith(f"Trainer {version} (trainc-upstream package): ")
        assert f"github.com/kubeflow/trainer/v2 {version}" in line
        assert "sigs.k8s.io/jobset v0." in line


def test_render_is_the_checkouts(installed: Installed, tmp_path: Path) -> None:
    example = project(tmp_path / "paths", [])
    for version in TRAINER_VERSIONS:
        args = ("render", "runtimes", "jobs", "-o", "-", "--trainer", version)
        mine, reference = (
            run_installed(installed, *args, cwd=example),
            run_checkout(*args, cwd=example),
        )
        assert mine == reference, mine.stderr.decode()
        # the example's runtimePatches came with v2.2.0: older releases refuse it alike
        if version_key(version) >= (2, 2, 0):
            assert mine.returncode == 0 and b"kind: JobSet" in mine.stdout
        else:
            assert mine.returncode == 2 and b"spec.runtimePatches" in mine.stderr
    # the Flux plugin reads its script templates from the Trainer module
    flux = REPO / "golden" / "flux-env-settings"
    for version in ("v2.2.0", "v2.3.0"):
        args = ("render", str(flux / "runtime.yaml"), str(flux / "trainjob.yaml"), "-o", "-")
        args += ("--trainer", version)
        mine, reference = (
            run_installed(installed, *args, cwd=tmp_path),
            run_checkout(*args, cwd=tmp_path),
        )
        assert mine.returncode == reference.returncode == 0, mine.stderr.decode()
        assert mine.stdout == reference.stdout and b"entrypoint.sh" in mine.stdout
    # the project (trainc.yaml, overlays, two clusters): the same rendered tree
    trees = []
    for name, runner in (("mine", run_installed), ("reference", None)):
        example = project(tmp_path / name, [])
        if runner is None:
            done = run_checkout("render", "-q", "--no-cache", cwd=example)
        else:
            done = runner(installed, "render", "-q", cwd=example)
        assert done.returncode == 0, done.stderr.decode()
        trees.append(tree(example / "rendered"))
    assert trees[0] == trees[1] and len(trees[0]) > 4


def test_check_with_the_shipped_yaml_policies_is_the_checkouts(
    installed: Installed, tmp_path: Path
) -> None:
    example = project(tmp_path, YAML_POLICIES)
    for args in (("check",), ("check", "--format", "json")):
        mine, reference = (
            run_installed(installed, *args, cwd=example),
            run_checkout(*args, cwd=example),
        )
        assert mine.returncode == reference.returncode, mine.stderr.decode()
        assert mine.stdout == reference.stdout and mine.stderr == reference.stderr
    assert b"vap/trainc-" in mine.stdout  # the policies ran and found something
    assert mine.returncode == 1


def test_a_cue_policy_without_cue_names_the_policy(installed: Installed, tmp_path: Path) -> None:
    example = project(tmp_path, ["required-labels", "gang-podgroup"])
    done = run_installed(installed, "check", cwd=example)
    message = done.stderr.decode()
    assert done.returncode != 0
    assert "gang-podgroup.cue" in message and "cue CLI v0." in message, message
    assert "Traceback" not in message


def _noted_runtimes(stderr: bytes) -> list[Path]:
    """The runtime files migrate's closing note gives to render (this install's copies);
    none when no job reuses one."""
    lines = [line for line in stderr.decode().splitlines() if "render it with them: " in line]
    return [
        Path(word) for line in lines for word in line.split("render it with them: ")[1].split()[3:]
    ]


def test_migrate_is_the_checkouts(installed: Installed, tmp_path: Path) -> None:
    jobs = tmp_path / "v1"
    jobs.mkdir()
    names: set[tuple[str, str]] = set()
    for case in sorted((REPO / "tests" / "migrate" / "cases").iterdir()):
        if "expect: migrated" in (case / "case.yaml").read_text(encoding="utf-8"):
            # one run: two jobs with one namespace/name are refused (one identity)
            metadata = yaml.safe_load((case / "job.yaml").read_text(encoding="utf-8"))["metadata"]
            name = (metadata.get("namespace") or "default", metadata["name"])
            if name not in names:
                names.add(name)
                shutil.copy(case / "job.yaml", jobs / f"{case.name}.yaml")
    assert len(list(jobs.iterdir())) > 50
    reports = {}
    for version in ("v2.3.0", "v2.1.0"):
        args = ("migrate", "v1", "--trainer", version, "--report-format", "json", "--report")
        mine = run_installed(installed, *args, "mine.json", cwd=tmp_path)
        reference = run_checkout(*args, "reference.json", cwd=tmp_path)
        assert mine.returncode == reference.returncode, mine.stderr.decode()[-2000:]
        assert mine.stdout == reference.stdout and b"kind: TrainJob" in mine.stdout
        # the report names a reused runtime's release and file, not where an install
        # keeps it: the same bytes on every install
        report = (tmp_path / "mine.json").read_text(encoding="utf-8")
        assert report == (tmp_path / "reference.json").read_text(encoding="utf-8")
        # the closing note is for this terminal: each names its own install's copies
        noted = _noted_runtimes(mine.stderr), _noted_runtimes(reference.stderr)
        assert [p.name for p in noted[0]] == [p.name for p in noted[1]]
        assert bool(noted[0]) == (version == "v2.3.0")  # v2.1.0: no job matches its runtimes
        assert all(p.is_file() and "site-packages/trainc_upstream" in str(p) for p in noted[0])
        assert all(p.is_file() and "site-packages" not in str(p) for p in noted[1])
        reports[version] = report.encode()
    # jobs reuse the runtimes the release ships (its manifests/base/runtimes)
    assert b"(upstream jax_distributed.yaml) is equivalent" in reports["v2.3.0"]
    assert b"(upstream torch_distributed.yaml)" in reports["v2.1.0"]


def test_the_integrations_install_the_package() -> None:
    """The GitHub Actions recipe and the Argo CD image get trainc as users do: the
    package (and with it trainc-upstream), not the repository's setup."""
    from compiler.policy.cue import CUE_VERSION

    workflow = (REPO / "examples" / "github-actions" / "trainc.yml").read_text(encoding="utf-8")
    assert 'pip install "trainc==$TRAINC_VERSION"' in workflow
    assert "make " not in workflow and "git clone" not in workflow
    assert f"cuelang.org/go/cmd/cue@{CUE_VERSION}" in workflow
    dockerfile = (REPO / "integrations" / "argocd" / "Dockerfile").read_text(encoding="utf-8")
    assert "COPY dist/*.whl /wheels/" in dockerfile
    assert "pip install --no-cache-dir /wheels/*.whl" in dockerfile
    assert "fetch-upstream" not in dockerfile and "gomod" not in dockerfile


def test_the_versions_agree() -> None:
    """pyproject's version is the one trainc prints, the CHANGELOG has it, and the
    trainc-upstream pin is in the CHANGELOG's table."""
    import re
    import tomllib

    from compiler import __version__

    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["version"] == __version__
    [pin] = [d for d in project["dependencies"] if d.startswith("trainc-upstream==")]
    changelog = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    assert f"\n## {__version__}\n" in changelog
    assert re.search(rf"^\| {re.escape(pin.split('==')[1])} \|", changelog, re.M)
