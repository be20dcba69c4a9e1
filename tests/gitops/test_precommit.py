"""The pre-commit hooks (``.pre-commit-hooks.yaml``) run by the real ``pre-commit try-repo``
on a temporary Git repository: pre-commit pip-installs this repository (the checkout,
with its dependencies from PyPI) into a hook environment, as a user's pre-commit does."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.gitops.support import REPO, VENV_BIN, base_env, git, write_project


def test_hooks_file() -> None:
    hooks = {h["id"]: h for h in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())}
    assert set(hooks) == {"trainc-check", "trainc-render"}
    for hook in hooks.values():
        assert hook["language"] == "python"
        assert hook["pass_filenames"] is False
        assert hook["require_serial"] is True


@pytest.fixture(scope="session")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("pre-commit", path=str(VENV_BIN)) is None:
        pytest.skip("pre-commit is not installed (pip install pre-commit)")
    return tmp_path_factory.mktemp("pre-commit-home")


def try_repo(
    root: Path, home: Path, hook: str, dist_folder: Path
) -> subprocess.CompletedProcess[str]:
    # the real home: pip reuses its wheel cache (ruamel.yaml.clibz builds from source);
    # trainc's trainc-upstream dependency comes from `make dist`'s folder
    env = base_env(
        PRE_COMMIT_HOME=str(home),
        HOME=os.environ.get("HOME", str(home)),
        PIP_FIND_LINKS=str(dist_folder),
    )
    del env["PYTHONPATH"]  # the hook runs the trainc pre-commit installed from the repo
    return subprocess.run(
        [str(VENV_BIN / "pre-commit"), "try-repo", str(REPO), hook, "--color=never"],
        cwd=root,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


def test_pre_commit_try_repo(tmp_path: Path, pre_commit_home: Path, dist_folder: Path) -> None:
    root = write_project(tmp_path / "work", jobs=2)
    git(root, "init", "-q", "-b", "main")
    render = subprocess.run(
        [str(VENV_BIN / "trainc"), "render", "-q"], cwd=root, env=base_env(), check=True
    )
    assert render.returncode == 0
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "jobs and their rendered tree")

    # a clean change passes both hooks
    job = root / "jobs" / "job-0.yaml"
    job.write_text(job.read_text() + "# reviewed\n")
    git(root, "add", "-A")
    for hook in ("trainc-check", "trainc-render"):
        clean = try_repo(root, pre_commit_home, hook, dist_folder)
        assert clean.returncode == 0, clean.stdout + clean.stderr
        assert "Passed" in clean.stdout

    # a bad TrainJob fails with its file:line:col
    job.write_text(job.read_text().replace("numNodes: 2", "numNodes: two"))
    git(root, "add", "-A")
    bad = try_repo(root, pre_commit_home, "trainc-check", dist_folder)
    assert bad.returncode == 1, bad.stdout
    assert "Failed" in bad.stdout
    assert "jobs/job-0.yaml:11:5" in bad.stdout
    assert "spec.trainer.numNodes" in bad.stdout
    job.write_text(job.read_text().replace("numNodes: two", "numNodes: 3"))
    git(root, "add", "-A")

    # numNodes changed, rendered/ not: stale, the hook fails and rewrites the tree
    jobset = root / "rendered" / "production" / "vision" / "jobset.x-k8s.io_JobSet_job-0.yaml"
    before = jobset.read_text()
    stale = try_repo(root, pre_commit_home, "trainc-render", dist_folder)
    assert stale.returncode == 1, stale.stdout
    assert "files were modified by this hook" in stale.stdout
    after = jobset.read_text()
    assert after != before and "parallelism: 3" in after
    git(root, "add", "-A")
    again = try_repo(root, pre_commit_home, "trainc-render", dist_folder)
    assert again.returncode == 0, again.stdout
