"""Helpers of the GitOps integration tests: a small project in a temporary Git repo, and
trainc run as the integrations run it (a subprocess with a controlled environment)."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent
ARGOCD = REPO / "integrations" / "argocd"

RUNTIME = (REPO / "example" / "runtimes" / "torch-gang.yaml").read_text()

TRAINJOB = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: {name}
  namespace: vision
  labels: {{team: vision, cost-center: cv-{name}}}
spec:
  runtimeRef:
    name: torch-gang
  trainer:
    numNodes: 2
    args: [--max-steps=10]
"""

PROJECT = """\
inputs:
  runtimes: [runtimes/]
  jobs: ["jobs/**/*.yaml"]
  policies: [policies/]
output: rendered
clusters:
  - name: production
    schedulers: [coscheduling]
    namespaces: [{{name: vision}}]
{gitops}  - name: staging
    namespaces: [{{name: vision}}]
"""


def write_project(root: Path, jobs: int = 2, gitops: str = "") -> Path:
    """A project: the example runtime, ``jobs`` TrainJobs, the required-labels policy.

    ``gitops``: lines of the production cluster's ``gitops:`` block (indented 6)."""
    (root / "runtimes").mkdir(parents=True)
    (root / "runtimes" / "torch-gang.yaml").write_text(RUNTIME)
    (root / "jobs").mkdir()
    for index in range(jobs):
        (root / "jobs" / f"job-{index}.yaml").write_text(TRAINJOB.format(name=f"job-{index}"))
    shutil.copytree(REPO / "policies" / "required-labels", root / "policies" / "required-labels")
    block = f"    gitops:\n{gitops}" if gitops else ""
    (root / "trainc.yaml").write_text(PROJECT.format(gitops=block))
    return root


def base_env(**extra: str) -> dict[str, str]:
    """An environment like a sidecar's: PATH with trainc, the cache, no usable home."""
    from compiler.upstream.artifacts import cache_root

    env = {
        "PATH": f"{VENV_BIN}{os.pathsep}/usr/local/bin:/usr/bin:/bin",
        "PYTHONPATH": str(REPO),  # this checkout's compiler, not the installed one
        "TRAINC_CACHE": str(cache_root()),
        "HOME": "/nonexistent",  # never written, never read
        "LANG": "C.UTF-8",
    }
    env.update(extra)
    return env


def trainc(
    *args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [str(VENV_BIN / "trainc"), *args],
        cwd=cwd,
        env=env or base_env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=timeout,
        check=False,
    )


def tree_digest(root: Path) -> dict[str, str]:
    """Every file under ``root`` with its SHA-256 (to show nothing was written)."""
    return {
        str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def git(root: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    return subprocess.run(
        ["git", *args], cwd=root, env=env, capture_output=True, text=True, check=True
    ).stdout
