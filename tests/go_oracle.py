"""The Go oracles of the tests (conformance, Kueue, Katib, the pods oracle's two programs, the
API server's Job and Pod validation): each a Go module built on demand with ``go build``
(which caches) into a ``bin/`` folder, then run with JSON on its standard input: once per
batch (:meth:`GoOracle.run`), or kept running for one request at a time
(:class:`Conversation`)."""

from __future__ import annotations

import json
import select
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

TIMEOUT = 600  # seconds for one batch of requests


class OracleUnavailable(RuntimeError):
    """Go is missing or the oracle does not build."""


@dataclass(frozen=True)
class GoOracle:
    """The oracle ``name`` (for messages): the Go module ``folder``, built as
    ``binary_name`` into ``bin_dir`` (the module's ``bin/`` unless given), with the
    extra ``go build`` flags ``build_flags``."""

    name: str
    folder: Path
    binary_name: str
    bin_dir: Path | None = None
    build_flags: tuple[str, ...] = ()

    @cached_property
    def binary(self) -> Path:
        """Build the oracle if needed; its path."""
        if shutil.which("go") is None:
            raise OracleUnavailable(f"Go is not installed: the {self.name} oracle cannot be built")
        path = (self.bin_dir or self.folder / "bin") / self.binary_name
        result = subprocess.run(
            ["go", "build", *self.build_flags, "-o", str(path), "."],
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
        return path

    def run(self, text: str, timeout: float, *args: str) -> subprocess.CompletedProcess[str]:
        """The oracle run with ``args`` and ``text`` on its input; it must exit 0."""
        result = subprocess.run(
            [str(self.binary), *args],
            input=text,
            capture_output=True,
            text=True,
            check=False,
            timeout=timeout,
        )
        if result.returncode != 0:
            raise RuntimeError(
                f"the {self.name} oracle failed ({result.returncode}): {result.stderr[-4000:]}"
            )
        return result

    def answer(self, payload: Any, timeout: float, *args: str) -> Any:
        """The oracle's one JSON answer to the one JSON document ``payload``."""
        return json.loads(self.run(json.dumps(payload), timeout, *args).stdout)


class JsonLinesOracle(GoOracle):
    """An oracle that answers one JSON request per line, in order."""

    def ask(self, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The oracle's answers to ``requests``, in order."""
        text = "".join(json.dumps(r, default=str) + "\n" for r in requests)
        result = self.run(text, TIMEOUT)
        answers = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
        assert len(answers) == len(requests), result.stderr[-3000:]
        return answers


@contextmanager
def oracle_needed(how: str) -> Iterator[None]:
    """A block that builds oracles: when one cannot be built (Go missing, a failed build)
    the test fails, without a traceback, saying why and ``how`` to build it (setup
    installs Go: a fresh machine skips nothing)."""
    import pytest

    try:
        yield
    except OracleUnavailable as error:
        # pytest.fail's exception, raised from None: the reason alone, said once
        raise pytest.fail.Exception(f"{error} ({how})", pytrace=False) from None


class Conversation:
    """One long-lived oracle process (``binary``; ``name`` for messages) answering one
    JSON request per line, in turn; with ``timeout``, an answer not there within that
    many seconds kills it."""

    def __init__(self, binary: Path, name: str, timeout: float | None = None) -> None:
        self.name = name
        self.timeout = timeout
        self._proc = subprocess.Popen(
            [str(binary)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        """The oracle's answer to ``request``."""
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._proc.stdin.write(json.dumps(request) + "\n")
        self._proc.stdin.flush()
        if self.timeout is not None:
            # one answer line per request, so nothing is buffered ahead of it: select is reliable
            ready, _, _ = select.select([self._proc.stdout], [], [], self.timeout)
            if not ready:
                self._proc.kill()
                raise RuntimeError(f"{self.name} took over {self.timeout}s on {request!r}")
        line = self._proc.stdout.readline()
        if not line:
            raise RuntimeError(f"{self.name} exited (code {self._proc.poll()})")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def close(self) -> None:
        """End the process: its input closed, then killed if it has not exited in 30 s."""
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        try:
            self._proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._proc.kill()
