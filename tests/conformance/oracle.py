"""Run the conformance oracle: the real Kubeflow Trainer code (tests/conformance/oracle).

One Go source tree, one build per emulated Trainer release: the newest with the
oracle's go.mod (``bin/oracle``), an older one with its own module list
(``go build -modfile=versions/<version>.mod``, the release's own dependency versions)
and the build tag of the few lines where the releases' Go APIs differ
(``bin/oracle-<version>``).
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from compiler.upstream.versions import DEFAULT_TRAINER_VERSION
from tests.go_oracle import GoOracle, OracleUnavailable

ORACLE_DIR = Path(__file__).resolve().parent / "oracle"
ORACLE_BIN = ORACLE_DIR / "bin" / "oracle"
REJECTED_EXIT = 3
# Trainer version -> (extra `go build` flags, binary under bin/)
BUILDS: dict[str, tuple[tuple[str, ...], str]] = {
    "v2.3.0": ((), "oracle"),
    "v2.2.0": (("-modfile=versions/v2.2.0.mod", "-tags=trainer_v2_2"), "oracle-v2.2.0"),
    "v2.1.0": (
        ("-modfile=versions/v2.1.0.mod", "-tags=trainer_v2_2,trainer_v2_1"),
        "oracle-v2.1.0",
    ),
    "v2.0.0": (
        ("-modfile=versions/v2.0.0.mod", "-tags=trainer_v2_2,trainer_v2_1,trainer_v2_0"),
        "oracle-v2.0.0",
    ),
}


# Trainer version -> the oracle of that release (tests.go_oracle)
ORACLES = {
    version: GoOracle(f"Trainer {version} conformance", ORACLE_DIR, binary, build_flags=flags)
    for version, (flags, binary) in BUILDS.items()
}


def oracle_binary(version: str = DEFAULT_TRAINER_VERSION) -> Path:
    """Build the oracle of Trainer ``version`` if needed (``go build`` caches); its path."""
    if version not in ORACLES:
        raise OracleUnavailable(f"no conformance oracle build for Trainer {version}")
    return ORACLES[version].binary


@dataclass
class OracleAnswer:
    """The oracle's verdict: the objects, or the rejection document.

    ``panic`` is set (objects and rejection both None) when upstream code panicked on the
    input, which the real controller would report as a failed reconcile: no objects.
    """

    objects: list[dict[str, Any]] | None
    rejection: dict[str, Any] | None
    panic: str | None = None


def render(
    inputs: list[Path], owner_uid: str, version: str = DEFAULT_TRAINER_VERSION
) -> OracleAnswer:
    result = subprocess.run(
        [str(oracle_binary(version)), "render", "--owner-uid", owner_uid, *map(str, inputs)],
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
def version(trainer: str = DEFAULT_TRAINER_VERSION) -> dict[str, Any]:
    result = subprocess.run(
        [str(oracle_binary(trainer)), "version"], capture_output=True, text=True, check=True
    )
    parsed: dict[str, Any] = json.loads(result.stdout)
    return parsed


class OracleServer:
    """One long-running ``oracle serve`` process: the same answers as :func:`render`, ~25x faster.

    Requests and answers are single JSON lines (protocol in oracle/serve.go). The process
    is started on first use and restarted if it dies; a request that kills it twice raises.
    """

    def __init__(
        self, extra_args: tuple[str, ...] = (), version: str = DEFAULT_TRAINER_VERSION
    ) -> None:
        self._extra_args = extra_args
        self.version = version
        self._proc: subprocess.Popen[str] | None = None
        self._stderr: Any = None
        self._next_id = 0
        self.starts = 0  # how many processes were started (more than 1: it died and restarted)

    def __enter__(self) -> OracleServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        self.close()
        self.starts += 1
        # Lives as long as the process (read when it dies); closed in close().
        self._stderr = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115
        self._proc = subprocess.Popen(
            [str(oracle_binary(self.version)), "serve", *self._extra_args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            bufsize=1,
        )

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            if proc.stdin is not None:
                proc.stdin.close()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    def _stderr_tail(self) -> str:
        if self._stderr is None:
            return ""
        self._stderr.seek(0)
        return str(self._stderr.read())[-2000:]

    def _exchange(self, request: dict[str, Any]) -> dict[str, Any] | None:
        """One request/answer; None if the process died on the way."""
        if self._proc is None or self._proc.poll() is not None:
            self.start()
        assert self._proc is not None and self._proc.stdin and self._proc.stdout
        try:
            self._proc.stdin.write(json.dumps(request) + "\n")
            self._proc.stdin.flush()
            line = self._proc.stdout.readline()
        except (BrokenPipeError, OSError):
            return None
        if not line:
            return None
        answer: dict[str, Any] = json.loads(line)
        return answer

    def render_documents(
        self, documents: list[str], owner_uid: str, names: list[str] | None = None
    ) -> OracleAnswer:
        """Render the YAML texts of some input files (``names`` label them in rejections)."""
        self._next_id += 1
        request: dict[str, Any] = {
            "id": self._next_id,
            "ownerUID": owner_uid,
            "documents": documents,
        }
        if names is not None:
            request["names"] = names
        answer = self._exchange(request)
        if answer is None:  # the server died (not a recovered panic): restart, try once more
            tail = self._stderr_tail()
            self.start()
            answer = self._exchange(request)
            if answer is None:
                raise RuntimeError(
                    f"oracle serve died twice on one request: {tail}{self._stderr_tail()}"
                )
        if answer.get("id") != self._next_id:
            raise RuntimeError(
                f"oracle serve answered request {answer.get('id')}, not {self._next_id}"
            )
        code = answer.get("exit")
        if code == 0:
            return OracleAnswer(objects=list(answer.get("objects") or []), rejection=None)
        if code == REJECTED_EXIT:
            return OracleAnswer(objects=None, rejection=answer.get("rejection") or {})
        if answer.get("panic"):
            return OracleAnswer(objects=None, rejection=None, panic=str(answer.get("error", "")))
        raise RuntimeError(f"oracle failed ({code}): {answer.get('error', '')}")

    def render(self, inputs: list[Path], owner_uid: str) -> OracleAnswer:
        """Same as the module-level :func:`render`, through the server."""
        return self.render_documents(
            [p.read_text() for p in inputs], owner_uid, [p.name for p in inputs]
        )
