"""Hook latency of the pre-commit hooks on a one-file change in a 1,000-TrainJob repo.

Generates the repo (the TrainJobs of ``render_bench``, 100 per file, one cluster, the
rendered tree committed), installs the hooks from this checkout with the real
``pre-commit`` (a config naming this repository at its HEAD commit), then 5 times:
change one TrainJob file, stage it, time ``pre-commit run trainc-check`` and
``pre-commit run trainc-render`` (the render rewrites one JobSet, so it "fails"; the
rewritten tree is staged before the next round). Prints the median of each.
A benchmark: it prints figures and never fails on them.

    python -m tests.bench.precommit_bench
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.bench.render_bench import generate
from tests.gitops.support import REPO, VENV_BIN, base_env, git

PROJECT = """\
inputs:
  jobs: [jobs/]
output: rendered
clusters:
  - name: production
"""


def main() -> int:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch) / "repo"
        (root / "jobs").mkdir(parents=True)
        generate(root / "jobs", 1000)
        (root / "trainc.yaml").write_text(PROJECT)
        head = git(REPO, "rev-parse", "HEAD").strip()
        (root / ".pre-commit-config.yaml").write_text(
            f"repos:\n  - repo: {REPO}\n    rev: {head}\n"
            "    hooks:\n      - id: trainc-check\n      - id: trainc-render\n"
        )
        env = base_env(PRE_COMMIT_HOME=f"{scratch}/home", HOME=os.environ.get("HOME", scratch))
        del env["PYTHONPATH"]
        subprocess.run(
            [str(VENV_BIN / "trainc"), "render", "-q"], cwd=root, env=base_env(), check=True
        )
        git(root, "init", "-q", "-b", "main")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "repo")
        pre_commit = str(VENV_BIN / "pre-commit")
        subprocess.run([pre_commit, "install-hooks"], cwd=root, env=env, check=True)
        times: dict[str, list[float]] = {"trainc-check": [], "trainc-render": []}
        codes: dict[str, list[int]] = {hook: [] for hook in times}
        target = root / "jobs" / "jobs-0003.yaml"
        for round_ in range(5):
            target.write_text(
                target.read_text().replace(
                    f'RUN_ID, value: "{300 + round_}"', f'RUN_ID, value: "r{round_}"'
                )
            )
            git(root, "add", "-A")
            for hook in times:
                start = time.perf_counter()
                done = subprocess.run(
                    [pre_commit, "run", hook], cwd=root, env=env, capture_output=True, check=False
                )
                times[hook].append(time.perf_counter() - start)
                codes[hook].append(done.returncode)
            git(root, "add", "-A")
        for hook, values in times.items():
            rounds = ", ".join(f"{v:.2f}" for v in values)
            print(
                f"{hook}: median {statistics.median(values):.2f} s of 5 ({rounds}; "
                f"exit codes {codes[hook]})"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
