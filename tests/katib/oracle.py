"""Run the Katib oracle: the pinned Katib release's own code (tests/katib/oracle), one
process answering one JSON request per line."""

from __future__ import annotations

import json
import shutil
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

ORACLE_DIR = Path(__file__).resolve().parent / "oracle"
ORACLE_BIN = ORACLE_DIR / "bin" / "katib-oracle"
TIMEOUT = 600  # seconds for one batch of requests


class OracleUnavailable(RuntimeError):
    """Go is missing or the oracle does not build."""


@cache
def oracle_binary() -> Path:
    """Build the oracle if needed (``go build`` caches); its path."""
    if shutil.which("go") is None:
        raise OracleUnavailable("Go is not installed: the Katib oracle cannot be built")
    result = subprocess.run(
        ["go", "build", "-o", "bin/katib-oracle", "."],
        cwd=ORACLE_DIR,
        capture_output=True,
        text=True,
        check=False,
        timeout=3600,
    )
    if result.returncode != 0:
        raise OracleUnavailable(f"the Katib oracle does not build:\n{result.stderr[-3000:]}")
    return ORACLE_BIN


def ask(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The oracle's answers to ``requests``, in order."""
    text = "".join(json.dumps(r, default=str) + "\n" for r in requests)
    result = subprocess.run(
        [str(oracle_binary())],
        input=text,
        capture_output=True,
        text=True,
        check=False,
        timeout=TIMEOUT,
    )
    if result.returncode != 0:
        raise RuntimeError(f"the Katib oracle failed: {result.stderr[-3000:]}")
    answers = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    assert len(answers) == len(requests), result.stderr[-3000:]
    return answers
