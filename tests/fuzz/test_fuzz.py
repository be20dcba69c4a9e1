"""A small fuzz run of each surface is part of the suite: 200 cases, in a process of its
own (the fuzzer sets an address-space limit on the process it runs in).

* ``render``: mutated inputs through ``render`` and ``check``;
* ``argocd``: a hostile Application's environment and parameters, and mutated repo
  files, through ``argocd generate``;
* ``apply``: ``trainc apply`` against a fake API server's spoiled answers;
* ``migrate``: mutated v1 and Volcano jobs through ``trainc migrate``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# surface -> (seed, workers); one worker where a case pins or serves on its own
SMALL_RUNS = {
    "render": ("16", "2"),
    "argocd": ("25", "1"),
    "apply": ("25", "1"),
    "migrate": ("25", "1"),
}


@pytest.mark.parametrize("surface", list(SMALL_RUNS))
def test_small_fuzz_run_is_clean(tmp_path: Path, surface: str) -> None:
    seed, workers = SMALL_RUNS[surface]
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.fuzz",
            "--surfaces",
            surface,
            "--count",
            "200",
            "--seed",
            seed,
            "--jobs",
            workers,
            "--out",
            str(tmp_path / "fuzz-out"),
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=600,
    )
    lines = done.stdout.splitlines()
    assert lines[-1] == "fuzz: 200 cases, 0 tracebacks, 0 hangs, 0 without location", (
        done.stdout + done.stderr
    )
    assert ", 0 outside 0/1/2, 0 over 1 GiB, 0 false successes, " in lines[-2]
    assert f"fuzz: by surface: {surface} 200 cases (0 bad)" in lines
    assert done.returncode == 0
