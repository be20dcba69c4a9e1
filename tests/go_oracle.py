"""A Go oracle that answers one JSON request per line (the Kueue and Katib oracles): built
on demand with ``go build`` (which caches) into its folder's ``bin/``."""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

TIMEOUT = 600  # seconds for one batch of requests


class OracleUnavailable(RuntimeError):
    """Go is missing or the oracle does not build."""


@dataclass(frozen=True)
class JsonLinesOracle:
    """The oracle ``name`` (for messages), its Go module ``folder`` and ``binary`` name."""

    name: str
    folder: Path
    binary_name: str

    @cached_property
    def binary(self) -> Path:
        """Build the oracle if needed; its path."""
        if shutil.which("go") is None:
            raise OracleUnavailable(f"Go is not installed: the {self.name} oracle cannot be built")
        result = subprocess.run(
            ["go", "build", "-o", f"bin/{self.binary_name}", "."],
            cwd=self.folder,
            capture_output=True,
            text=True,
            check=False,
            timeout=3600,
        )
        if result.returncode != 0:
            raise OracleUnavailable(
                f"the {self.name} oracle does not build:\n{result.stderr[-3000:]}"
            )
        return self.folder / "bin" / self.binary_name

    def ask(self, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The oracle's answers to ``requests``, in order."""
        text = "".join(json.dumps(r, default=str) + "\n" for r in requests)
        result = subprocess.run(
            [str(self.binary)],
            input=text,
            capture_output=True,
            text=True,
            check=False,
            timeout=TIMEOUT,
        )
        if result.returncode != 0:
            raise RuntimeError(f"the {self.name} oracle failed: {result.stderr[-3000:]}")
        answers = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
        assert len(answers) == len(requests), result.stderr[-3000:]
        return answers
