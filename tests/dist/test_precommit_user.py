"""The pre-commit hooks on a machine that never ran the repository's setup: the real
``pre-commit try-repo`` with an empty pre-commit cache, an empty home, no Go on PATH and
no trainc cache. pre-commit pip-installs the hook repository itself (trainc builds from
its sources with no Go); its ``trainc-upstream`` dependency is found where pip is told
to look (here PIP_FIND_LINKS at `make dist`'s folder; for users, the index that serves
trainc)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from tests.dist.support import Dist, user_env
from tests.gitops.support import REPO, git, trainc, tree_digest, write_project


def try_repo(root: Path, home: Path, dist: Dist) -> subprocess.CompletedProcess[str]:
    """Every hook of the repository (one install: try-repo's store is temporary)."""
    env = user_env(home, PRE_COMMIT_HOME=str(home / "pre-commit"), PIP_FIND_LINKS=str(dist.folder))
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(REPO), "--all-files", "--color=never"],
        cwd=root,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


def test_the_hooks_work_where_setup_never_ran(tmp_path: Path, dist: Dist) -> None:
    if importlib.util.find_spec("pre_commit") is None:
        pytest.fail("pre-commit is not installed (`make setup` installs it)", pytrace=False)
    root = write_project(tmp_path / "work", jobs=2)
    git(root, "init", "-q", "-b", "main")
    # the rendered tree as this checkout renders it (the Go module cache's artifacts)
    rendered = trainc("render", "-q", cwd=root)
    assert rendered.returncode == 0, rendered.stderr
    before = tree_digest(root / "rendered")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "jobs and their rendered tree")
    home = tmp_path / "home"
    home.mkdir()

    done = try_repo(root, home, dist)
    # trainc-check passes; trainc-render renders the same bytes, so it changes nothing
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("Passed") == 2, done.stdout
    assert tree_digest(root / "rendered") == before
    assert not (home / ".cache" / "trainc" / "upstream").exists()
