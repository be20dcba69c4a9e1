"""Temporary git repositories holding small inputs copied from example/."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "example"
GitRun = Callable[..., str]


def run_git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "GIT_CONFIG_NOSYSTEM": "1",
        "HOME": str(repo),
    }
    done = subprocess.run(
        ["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


@pytest.fixture
def example_repo(tmp_path: Path) -> Path:
    """A git repo with example/'s runtimes and jobs under ``inputs/``, committed once."""
    if shutil.which("git") is None:
        pytest.fail("git is not installed (trainc diff and these tests need it)", pytrace=False)
    repo = tmp_path / "repo"
    repo.mkdir()
    run_git(repo, "init", "-q", "-b", "main")
    shutil.copytree(EXAMPLE / "runtimes", repo / "inputs" / "runtimes")
    shutil.copytree(EXAMPLE / "jobs", repo / "inputs" / "jobs")
    (repo / "README").write_text("not an input\n")
    run_git(repo, "add", ".")
    run_git(repo, "commit", "-q", "-m", "base")
    return repo
