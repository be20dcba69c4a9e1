"""Run the conformance oracle: the real Kubeflow Trainer code (tests/conformance/oracle)."""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

ORACLE_DIR = Path(__file__).resolve().parent / "oracle"
ORACLE_BIN = ORACLE_DIR / "bin" / "oracle"
REJECTED_EXIT = 3


class OracleUnavailable(RuntimeError):
    """Go is missing or the oracle does not build; oracle-driven tests skip with this reason."""


@cache
def oracle_binary() -> Path:
    """Build the oracle if needed (``go build`` caches) and return its path."""
    if shutil.which("go") is None:
        raise OracleUnavailable("Go is not installed: the conformance oracle cannot be built")
    result = subprocess.run(
        ["go", "build", "-o", "bin/oracle", "."],
        cwd=ORACLE_DIR,
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise OracleUnavailable(f"the conformance oracle does not build:\n{result.stderr}")
    return ORACLE_BIN


@dataclass
class OracleAnswer:
    """The oracle's verdict: the objects, or the rejection document."""

    objects: list[dict[str, Any]] | None
    rejection: dict[str, Any] | None


def render(inputs: list[Path], owner_uid: str) -> OracleAnswer:
    result = subprocess.run(
        [str(oracle_binary()), "render", "--owner-uid", owner_uid, *map(str, inputs)],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode == 0:
        docs = [d for d in yaml.safe_load_all(result.stdout) if d is not None]
        return OracleAnswer(objects=docs, rejection=None)
    if result.returncode == REJECTED_EXIT:
        return OracleAnswer(objects=None, rejection=json.loads(result.stdout))
    raise RuntimeError(f"oracle failed ({result.returncode}): {result.stderr.strip()}")


@cache
def version() -> dict[str, Any]:
    result = subprocess.run(
        [str(oracle_binary()), "version"], capture_output=True, text=True, check=True
    )
    parsed: dict[str, Any] = json.loads(result.stdout)
    return parsed
