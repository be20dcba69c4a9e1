"""Hostile and careless input (issue 16): no tenant escape, no hang, no traceback, one
exit-code contract. One test (at least) per class of the issue, named after it."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from compiler.cli import main

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "example"
RUNTIME = (EXAMPLE / "runtimes" / "torch-gang.yaml").read_text(encoding="utf-8")

JOB = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: {name}
  namespace: {namespace}
spec:
  runtimeRef: {{name: torch-gang}}
  trainer: {{numNodes: 2}}
"""


def trainc(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Run the CLI in-process: exit code, stdout, stderr."""
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def job(name: str = "llm", namespace: str = "team-a") -> str:
    return JOB.format(name=name, namespace=namespace)


def inputs(tmp_path: Path, *jobs: str) -> Path:
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "runtime.yaml").write_text(RUNTIME, encoding="utf-8")
    for index, text in enumerate(jobs):
        (folder / f"job{index}.yaml").write_text(text, encoding="utf-8")
    return folder


# --- 2. hang / memory -------------------------------------------------------------------


def test_discovery_refuses_a_fifo_with_a_located_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = inputs(tmp_path, job())
    os.mkfifo(folder / "pipe.yaml")
    code, _, err = trainc(capsys, "render", str(folder), "-o", "-")
    assert code == 2
    assert f"{folder / 'pipe.yaml'}: cannot read: a FIFO, not a regular file" in err


def test_discovery_refuses_a_symlink_to_a_device(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = inputs(tmp_path, job())
    (folder / "zero.yaml").symlink_to("/dev/zero")
    code, _, err = trainc(capsys, "render", str(folder), "-o", "-")
    assert code == 2
    assert "zero.yaml: cannot read: a character device, not a regular file" in err


def test_every_read_has_a_size_limit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = inputs(tmp_path, job())
    monkeypatch.setenv("TRAINC_MAX_FILE_BYTES", "1000")
    code, _, err = trainc(capsys, "render", str(folder), "-o", "-")
    assert code == 2
    assert "runtime.yaml: file larger than the limit of 1000 bytes" in err
    assert "TRAINC_MAX_FILE_BYTES" in err


# --- 5. locale --------------------------------------------------------------------------

POSIX_LOCALE = {"LC_ALL": "POSIX", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}


def test_posix_locale_reads_and_writes_utf8(tmp_path: Path) -> None:
    text = job().replace("{numNodes: 2}", "{numNodes: 2, env: [{name: GREETING, value: Grüße}]}")
    folder = inputs(tmp_path, text)
    env = {**os.environ, **POSIX_LOCALE}
    for args in (
        ["render", str(folder), "-o", "-"],
        ["render", str(folder), "-o", str(tmp_path / "out")],
        ["check", str(folder)],
    ):
        done = subprocess.run(
            [sys.executable, "-m", "compiler", *args], capture_output=True, cwd=REPO, env=env
        )
        assert done.returncode == 0, done.stderr.decode("utf-8", "replace")
    stream = subprocess.run(
        [sys.executable, "-m", "compiler", "render", str(folder), "-o", "-"],
        capture_output=True,
        cwd=REPO,
        env=env,
    ).stdout
    assert "Grüße".encode() in stream


def _text_io_without_encoding(source: str) -> list[int]:
    """Lines of calls that read or write text with the locale's codec."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        keywords = {k.arg for k in node.keywords}
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if "encoding" in keywords:
            continue
        if name in ("read_text", "write_text"):
            found.append(node.lineno)
        elif name in ("open", "NamedTemporaryFile", "TextIOWrapper"):
            mode = node.args[1] if name == "open" and len(node.args) > 1 else None
            mode = mode or next((k.value for k in node.keywords if k.arg == "mode"), None)
            if name == "NamedTemporaryFile" and node.args:
                mode = node.args[0]
            text = isinstance(mode, ast.Constant) and "b" not in str(mode.value)
            if name == "open" and isinstance(func, ast.Attribute) and func.attr == "open":
                if isinstance(func.value, ast.Name) and func.value.id == "os":
                    continue
            if text or (mode is None and name == "open"):
                found.append(node.lineno)
        elif name in ("run", "Popen", "check_output") and keywords & {"text", "universal_newlines"}:
            found.append(node.lineno)
    return found


def test_every_file_is_read_and_written_as_utf8() -> None:
    offenders = []
    for path in sorted((REPO / "compiler").rglob("*.py")):
        if path.name.endswith("_test.py") or path.name == "conftest.py":
            continue
        for line in _text_io_without_encoding(path.read_text(encoding="utf-8")):
            offenders.append(f"{path.relative_to(REPO)}:{line}")
    assert offenders == []
