"""A small fuzz run of the ``migrate`` surface is part of the suite: 200 mutated v1 and
Volcano jobs through ``trainc migrate``, in a process of its own (the fuzzer sets an
address-space limit on the process it runs in)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_small_migrate_fuzz_run_is_clean(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.fuzz",
            "--surfaces",
            "migrate",
            "--count",
            "200",
            "--seed",
            "25",
            "--jobs",
            "1",
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
    assert ", 0 outside 0/1/2, 0 over 1 GiB, " in lines[-2]
    assert done.returncode == 0
