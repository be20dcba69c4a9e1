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
            owner = func.value if isinstance(func, ast.Attribute) else None
            if isinstance(owner, ast.Name) and owner.id == "os":
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


# --- a project with two tenants ---------------------------------------------------------

PROJECT = """\
inputs:
  runtimes: [runtimes/]
  jobs: ["jobs/*.yaml"]
output: rendered
clusters:
  - name: prod
    trainer: v2.3.0
    kubernetes: v1.31.0
    defaultNamespace: default
    overlays: [overlays/platform.yaml]
    namespaces:
      - name: team-a
        overlays: [overlays/team-a.yaml]
      - name: team-b
"""

PLATFORM = """\
apiVersion: trainc.dev/v1alpha1
kind: Overlay
metadata: {name: platform}
layer: cluster
patches: []
locks:
  - {path: spec.priorityClassName, scope: pod, value: production-high}
"""

PLATFORM_PATCH = """\
  - target: {group: trainer.kubeflow.org, kind: ClusterTrainingRuntime}
    patch:
      spec:
        template:
          spec:
            replicatedJobs:
              - name: node
                template:
                  spec:
                    template:
                      spec: {priorityClassName: production-high}
"""


def project(tmp_path: Path, team_a_patches: str, platform_patches: str = "") -> Path:
    root = tmp_path / "project"
    for folder in ("runtimes", "jobs", "overlays"):
        (root / folder).mkdir(parents=True)
    (root / "trainc.yaml").write_text(PROJECT, encoding="utf-8")
    (root / "runtimes" / "torch-gang.yaml").write_text(RUNTIME, encoding="utf-8")
    (root / "jobs" / "a.yaml").write_text(job("llm", "team-a"), encoding="utf-8")
    (root / "jobs" / "b.yaml").write_text(job("llm", "team-b"), encoding="utf-8")
    platform = (
        PLATFORM.replace("patches: []\n", "patches:\n" + platform_patches)
        if platform_patches
        else PLATFORM
    )
    (root / "overlays" / "platform.yaml").write_text(platform, encoding="utf-8")
    (root / "overlays" / "team-a.yaml").write_text(
        "apiVersion: trainc.dev/v1alpha1\nkind: Overlay\nmetadata: {name: team-a, namespace: team-a}\n"
        "layer: namespace\npatches:\n" + team_a_patches,
        encoding="utf-8",
    )
    return root


# --- 1. tenant escape -------------------------------------------------------------------


@pytest.mark.parametrize(
    "patch",
    [
        "  - target: {kind: JobSet}\n    patch:\n"
        "      - {op: replace, path: /metadata/namespace, value: team-b}\n",
        "  - target: {kind: TrainJob}\n    patch:\n"
        "      - {op: replace, path: /metadata/namespace, value: team-b}\n",
        "  - target: {kind: JobSet}\n    patch:\n"
        "      metadata: {$patch: replace, labels: {a: b}}\n",
    ],
    ids=["jsonpatch-jobset", "jsonpatch-trainjob", "strategic-replace-metadata"],
)
def test_namespace_overlay_cannot_move_objects_to_another_namespace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], patch: str
) -> None:
    root = project(tmp_path, patch)
    for output in ("-", str(tmp_path / "out")):
        code, out, err = trainc(
            capsys, "render", "--project", str(root / "trainc.yaml"), "-o", output
        )
        assert code == 2, err
        assert "cannot move" in err or "would make JobSet team-a/llm invalid" in err
        assert "team-a.yaml:" in err
        assert "namespace: team-b\n  labels" not in out
    assert not (tmp_path / "out").exists()


def test_stream_refuses_two_objects_with_one_identity(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rename = (
        "  - target: {kind: JobSet, name: other}\n    patch:\n"
        "      - {op: replace, path: /metadata/name, value: llm}\n"
    )
    root = project(tmp_path, rename)
    (root / "jobs" / "c.yaml").write_text(job("other", "team-a"), encoding="utf-8")
    code, out, err = trainc(capsys, "render", "--project", str(root / "trainc.yaml"), "-o", "-")
    assert code == 2
    assert "two rendered objects would be written to team-a/jobset.x-k8s.io_JobSet_llm.yaml" in err
    assert out == "# cluster: prod\n" or out == ""


# --- 4. a value lock holds against removal ----------------------------------------------


def test_value_lock_holds_against_removal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    remove = (
        "  - target: {kind: JobSet}\n    patch:\n      - op: remove\n"
        "        path: /spec/replicatedJobs/0/template/spec/template/spec/priorityClassName\n"
    )
    root = project(tmp_path, remove, PLATFORM_PATCH)
    code, _, err = trainc(capsys, "render", "--project", str(root / "trainc.yaml"), "-o", "-")
    assert code == 2, err
    assert (
        "removes a field locked to 'production-high'" in err or "removes a field locked to" in err
    )
