"""The GitHub Actions recipe (``examples/github-actions/trainc.yml``): its YAML is a valid
workflow (check-jsonschema's vendored GitHub workflow schema, when installed), and its
trainc commands run on the bundled example project in a Git repository with a base
branch, as the runner would run them."""

from __future__ import annotations

import importlib.util
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.gitops.support import REPO, VENV_BIN, base_env, git

WORKFLOW = REPO / "examples" / "github-actions" / "trainc.yml"


def workflow() -> dict[Any, Any]:
    data: dict[Any, Any] = yaml.safe_load(WORKFLOW.read_text())
    return data


def trainc_commands() -> list[str]:
    """Every ``trainc ...`` line of the workflow's run steps, in order."""
    steps = workflow()["jobs"]["trainc"]["steps"]
    return [
        line.strip()
        for step in steps
        for line in str(step.get("run", "")).splitlines()
        if line.strip().startswith("trainc ")
    ]


def test_workflow_yaml_is_valid() -> None:
    data = workflow()
    on = data.get("on", data.get(True))  # YAML 1.1 readers take `on` for true
    assert set(on) == {"pull_request", "push"}
    steps = data["jobs"]["trainc"]["steps"]
    assert all(("run" in s) != ("uses" in s) for s in steps)
    uses = [s["uses"] for s in steps if "uses" in s]
    assert "github/codeql-action/upload-sarif@v3" in uses
    assert trainc_commands() == [
        "trainc check --format sarif --output trainc.sarif",
        "trainc check --rendered",
        'trainc diff --base "origin/${{ github.base_ref }}" --format markdown --output trainc-diff.md',
    ]
    # the module of this interpreter, not a script looked up in a folder: a dev extra
    # `make setup` installs, wherever pip put its script
    if importlib.util.find_spec("check_jsonschema") is None:
        pytest.fail("check-jsonschema is not installed (`make setup` installs it)", pytrace=False)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "check_jsonschema",
            "--builtin-schema",
            "vendor.github-workflows",
            str(WORKFLOW),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_workflow_commands_run_on_the_example(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    shutil.copytree(REPO / "example", root / "example")
    shutil.copytree(REPO / "overlays", root / "overlays")
    project = root / "example"
    env = base_env()
    git(root, "init", "-q", "-b", "main")
    subprocess.run([str(VENV_BIN / "trainc"), "render", "-q"], cwd=project, env=env, check=True)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    git(root, "update-ref", "refs/remotes/origin/main", "HEAD")
    # the pull request: one TrainJob changes, its rendered tree with it
    job = project / "jobs" / "smoke.yaml"
    job.write_text(job.read_text().replace("numNodes: 2", "numNodes: 3"))
    subprocess.run([str(VENV_BIN / "trainc"), "render", "-q"], cwd=project, env=env, check=True)
    git(root, "commit", "-q", "-am", "smoke on 3 nodes")

    outcomes: dict[str, list[subprocess.CompletedProcess[str]]] = {}
    for command in trainc_commands():
        command = command.replace("${{ github.base_ref }}", "main")
        argv = shlex.split(command)
        result = subprocess.run(
            [str(VENV_BIN / argv[0]), *argv[1:]],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        outcomes.setdefault(argv[1], []).append(result)
        assert result.returncode == 0, f"{command}: {result.stdout}{result.stderr}"
    sarif = yaml.safe_load((project / "trainc.sarif").read_text())
    assert sarif["version"] == "2.1.0"
    assert "is up to date" in outcomes["check"][1].stdout
    diff = (project / "trainc-diff.md").read_text()
    assert "smoke" in diff and "3" in diff
