"""Running trainc in tests: the CLI in this process with its output captured, or a
subprocess of this checkout's code."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from compiler.cli import main

REPO = Path(__file__).resolve().parents[1]


def trainc_main(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """The CLI in this process: exit code, stdout, stderr."""
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def trainc_process(
    *args: str, cwd: Path = REPO, timeout: float = 600, **env: str
) -> subprocess.CompletedProcess[str]:
    """``python -m compiler ARGS`` in ``cwd``, with ``env`` added to this environment.

    PYTHONPATH is this checkout, so the code run is this worktree's also when ``cwd`` is
    elsewhere (an editable install may point at another worktree)."""
    return subprocess.run(
        [sys.executable, "-m", "compiler", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(REPO), **env},
        timeout=timeout,
        check=False,
    )
