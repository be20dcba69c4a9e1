"""A warm ``render`` or ``check`` (every chunk from the render cache) imports only what
it uses: not the render chain, the CRD schemas, the CEL engine, the expansion below the
JobSet, Katib, Kueue, YAML parsers or the delivery code (issue 28: a one-file change at
10,000 TrainJobs in under 0.3 s, of which importing the render chain took 0.2 s).

Each run is a separate process that reports its ``sys.modules`` on exit.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.bench.render_bench import generate

REPO = Path(__file__).resolve().parents[1]

# Modules (and their submodules) a run that takes every chunk from the cache never needs
HEAVY = (
    "compiler.apiserver.cel",
    "compiler.apiserver.crds",
    "compiler.apiserver.crd_rules",
    "compiler.apiserver.structural",
    "compiler.apiserver.workloads",
    "compiler.apiserver.yaml_source",
    "compiler.expand",
    "compiler.katib",
    "compiler.queue",
    "compiler.load.loader",
    "compiler.resolve",
    "compiler.render.plugins",
    "compiler.render.extensions",
    "compiler.plan.stages",
    "compiler.plan.compile",
    "compiler.policy.cue",
    "compiler.policy.vap",
    "compiler.deliver",
    "compiler.migrate",
    "ruamel",
    "yaml",
    "jsonpatch",
    "kubernetes",
)

RUNNER = """\
import json, os, sys
from compiler.cli import main
code = main(sys.argv[1:])
sys.stdout.flush()
with open(os.environ["MODULES_REPORT"], "w") as f:
    json.dump({"code": code, "modules": sorted(sys.modules)}, f)
"""


def _repo(directory: Path) -> Path:
    """Three files of 100 TrainJobs: three chunks (one file each), as in the bench."""
    directory.mkdir()
    generate(directory, 300)
    return directory


def _run(tmp: Path, *args: str) -> tuple[int, set[str]]:
    """``trainc ARGS`` in a new process: its exit code and the modules it imported."""
    report = tmp / "modules.json"
    done = subprocess.run(
        [sys.executable, "-c", RUNNER, *args],
        capture_output=True,
        text=True,
        env={
            **os.environ,
            "PYTHONPATH": str(REPO),
            "TRAINC_RENDER_CACHE": str(tmp / "cache"),
            "MODULES_REPORT": str(report),
        },
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(report.read_text())
    return found["code"], set(found["modules"])


def _heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))


@pytest.mark.parametrize("verb", ["render", "check"])
def test_a_warm_run_imports_nothing_it_does_not_use(tmp_path: Path, verb: str) -> None:
    repo = _repo(tmp_path / "repo")
    args = [verb, str(repo)] + (["-o", str(tmp_path / "out"), "-q"] if verb == "render" else [])
    cold_code, cold = _run(tmp_path, *args)  # fills the cache
    assert _heavy(cold), "the first run renders: it needs the render chain"
    warm_code, warm = _run(tmp_path, *args)
    assert warm_code == cold_code == 0
    assert _heavy(warm) == []
