"""The pre-commit hooks (``.pre-commit-hooks.yaml``) run by the real ``pre-commit try-repo``
on a temporary Git repository: pre-commit pip-installs this repository (the checkout,
with its dependencies from PyPI) into a hook environment, as a user's pre-commit does."""

from __future__ import annotations

import importlib.util
import os
import shlex
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from tests.gitops.support import REPO, TRAINJOB, VENV_BIN, base_env, git, write_project


def test_hooks_file() -> None:
    hooks = {h["id"]: h for h in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())}
    assert set(hooks) == {"trainc-check", "trainc-render"}
    for hook in hooks.values():
        assert hook["language"] == "python"
        assert hook["pass_filenames"] is False
        assert hook["require_serial"] is True
    # a commit that only deletes a TrainJob stages no file pre-commit passes on
    assert hooks["trainc-render"]["always_run"] is True


def hook_command(hook_id: str) -> list[str]:
    """The hook's entry as pre-commit runs it, with this checkout's trainc."""
    hooks = {h["id"]: h for h in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())}
    entry = shlex.split(hooks[hook_id]["entry"])
    assert entry[0] == "trainc"
    return [str(VENV_BIN / "trainc"), *entry[1:]]


def committed_project(root: Path) -> Path:
    """A project in a new Git repository, its rendered tree committed with it."""
    write_project(root, jobs=2)
    git(root, "init", "-q", "-b", "main")
    subprocess.run(hook_command("trainc-render"), cwd=root, env=base_env(), check=False)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "jobs and their rendered tree")
    return root


RENDERED_JOB_2 = "rendered/production/vision/jobset.x-k8s.io_JobSet_job-2.yaml"
RENDERED_JOB_1 = "rendered/staging/vision/scheduling.x-k8s.io_PodGroup_job-1.yaml"
RENDERED_JOB_0 = "rendered/production/vision/jobset.x-k8s.io_JobSet_job-0.yaml"


def new_job(root: Path) -> None:
    """A new TrainJob, staged; its rendered files are new."""
    (root / "jobs" / "job-2.yaml").write_text(TRAINJOB.format(name="job-2"))
    git(root, "add", "jobs")


def removed_job(root: Path) -> None:
    """A TrainJob removed and the removal staged; its rendered files are still staged."""
    git(root, "rm", "-q", "jobs/job-1.yaml")


def changed_job(root: Path) -> None:
    """A TrainJob changed and staged, the rendered tree re-rendered but not staged."""
    job = root / "jobs" / "job-0.yaml"
    job.write_text(job.read_text().replace("numNodes: 2", "numNodes: 3"))
    git(root, "add", "jobs")
    subprocess.run([str(VENV_BIN / "trainc"), "render", "-q"], cwd=root, env=base_env(), check=True)


@pytest.mark.parametrize(
    ("change", "kind", "path"),
    [
        (new_job, "new", RENDERED_JOB_2),
        (removed_job, "removed", RENDERED_JOB_1),
        (changed_job, "changed", RENDERED_JOB_0),
    ],
)
def test_render_hook_fails_on_what_is_not_staged(
    tmp_path: Path, change: Callable[[Path], None], kind: str, path: str
) -> None:
    """The trainc-render hook's command compares the tree it writes with the index, not
    with the working tree: the commit is what must hold the rendered tree."""
    root = committed_project(tmp_path / "work")
    change(root)
    failed = subprocess.run(
        hook_command("trainc-render"), cwd=root, env=base_env(), capture_output=True, text=True
    )
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert f"{kind} (not staged):".ljust(22) + f"{path}\n" in failed.stderr
    assert "git add -A -- rendered" in failed.stderr
    git(root, "add", "-A", "--", "rendered")
    passed = subprocess.run(
        hook_command("trainc-render"), cwd=root, env=base_env(), capture_output=True, text=True
    )
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert passed.stdout == passed.stderr == ""


def test_render_staged_needs_an_output_folder(tmp_path: Path) -> None:
    root = committed_project(tmp_path / "work")
    done = subprocess.run(
        [str(VENV_BIN / "trainc"), "render", "--staged", "-o", "-"],
        cwd=root,
        env=base_env(),
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2
    assert "--staged compares an output folder" in done.stderr
    assert done.stdout == ""


@pytest.fixture(scope="session")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # the module of this interpreter (a dev extra `make setup` installs), not a script
    # looked up in a folder
    if importlib.util.find_spec("pre_commit") is None:
        pytest.fail("pre-commit is not installed (`make setup` installs it)", pytrace=False)
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
        [sys.executable, "-m", "pre_commit", "try-repo", str(REPO), hook, "--color=never"],
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
    git(root, "commit", "-q", "-m", "job-0 on 3 nodes")

    # a new TrainJob: its rendered files are new, untracked, and pre-commit alone sees no
    # modified file; the hook fails because the index lacks them
    new_job(root)
    new = try_repo(root, pre_commit_home, "trainc-render", dist_folder)
    assert new.returncode == 1, new.stdout
    assert f"new (not staged):     {RENDERED_JOB_2}" in new.stdout
    assert "git add -A -- rendered" in new.stdout
    git(root, "add", "-A")  # (passing once staged: test_render_hook_fails_on_what_is_not_staged)
    git(root, "commit", "-q", "-m", "job-2")

    # a TrainJob removed: pre-commit passes no deleted file to a hook, which therefore
    # runs on every commit; its rendered files must go from the commit too
    removed_job(root)
    removed = try_repo(root, pre_commit_home, "trainc-render", dist_folder)
    assert removed.returncode == 1, removed.stdout
    assert f"removed (not staged): {RENDERED_JOB_1}" in removed.stdout
