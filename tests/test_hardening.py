"""Hostile and careless input (issue 16): no tenant escape, no hang, no traceback, one
exit-code contract. One test (at least) per class of the issue, named after it."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import trainc_main as trainc

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
    code, _, err = trainc(capsys, "render", str(folder / "zero.yaml"), "-o", "-")
    assert code == 2  # named on the command line: followed, and refused
    assert "zero.yaml: not a regular file or directory" in err
    code, _, err = trainc(capsys, "render", str(folder), "-o", "-")
    assert code == 2  # met in a folder: a link out of its repository, not followed
    assert f"zero.yaml: symbolic link leads outside the repository {folder}; not followed" in err


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


# --- 10. setup is not flaky -------------------------------------------------------------


def test_install_cue_version_check_survives_a_long_version_output(tmp_path: Path) -> None:
    """The check read `cue version | head -n 1 | grep -q` under pipefail: the writer got
    SIGPIPE when the reader closed early, and an installed cue looked missing."""
    version = next(
        line.split("=", 1)[1]
        for line in (REPO / "scripts" / "install-cue.sh").read_text(encoding="utf-8").splitlines()
        if line.startswith("CUE_VERSION=")
    )
    cue = tmp_path / "cache" / "cue" / version / "cue"
    cue.parent.mkdir(parents=True)
    cue.write_text(
        f"#!/bin/sh\necho 'cue version {version}'\nyes 'go version go1.24 linux/amd64' | head -n 200000\n",
        encoding="utf-8",
    )
    cue.chmod(0o755)
    no_go = tmp_path / "bin"
    no_go.mkdir()
    (no_go / "go").write_text("#!/bin/sh\nexit 1\n", encoding="utf-8")
    (no_go / "go").chmod(0o755)
    env = {
        **os.environ,
        "TRAINC_CACHE": str(tmp_path / "cache"),
        "PATH": f"{no_go}:{os.environ['PATH']}",
    }
    for _ in range(5):
        done = subprocess.run(
            ["bash", str(REPO / "scripts" / "install-cue.sh")],
            capture_output=True,
            text=True,
            env=env,
        )
        assert done.returncode == 0, done.stderr
        assert "up to date" in done.stdout


# --- 3. tracebacks ----------------------------------------------------------------------


@pytest.mark.parametrize("metadata", ["t", "[a]", "true", "null", "-0."])
@pytest.mark.parametrize(
    "api_version, kind",
    [
        ("trainer.kubeflow.org/v1alpha1", "TrainJob"),
        ("trainer.kubeflow.org/v1alpha1", "TrainingRuntime"),
        ("trainer.kubeflow.org/v1alpha1", "ClusterTrainingRuntime"),
        ("v1", "ConfigMap"),
    ],
)
def test_non_mapping_metadata_is_a_located_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], metadata: str, api_version: str, kind: str
) -> None:
    bad = f"apiVersion: {api_version}\nkind: {kind}\nmetadata: {metadata}\nspec: {{}}\n"
    folder = inputs(tmp_path, job(), bad)
    # Trainer kinds: the API server's own words (cannot be handled as a TrainJob: json:
    # cannot unmarshal string into Go value of type v1.ObjectMeta); other kinds: trainc's
    expected = (
        "metadata must be a mapping (an ObjectMeta)"
        if kind == "ConfigMap"
        else "Required value"
        if metadata == "null"
        else f"cannot be handled as a {kind}: json: cannot unmarshal"
    )
    code, _, err = trainc(capsys, "render", str(folder), "-o", "-")
    assert code == 2
    assert f"{folder / 'job1.yaml'}:" in err and f": {kind} (unnamed): " in err
    assert expected in err and "Traceback" not in err
    code, out, _ = trainc(capsys, "check", str(folder))
    assert code == 2
    assert f"{kind} (unnamed): " in out and expected in out


def test_a_port_beyond_int32_in_a_runtime_is_a_located_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = inputs(tmp_path, job())
    runtime = RUNTIME.replace(
        "                          memory: 8Gi\n",
        "                          memory: 8Gi\n"
        "                      readinessProbe: {httpGet: {port: 9223372036854775807}}\n",
    )
    (folder / "runtime.yaml").write_text(runtime, encoding="utf-8")
    code, _, err = trainc(capsys, "render", str(folder), "-o", "-")
    assert code == 2
    assert "runtime.yaml:41:50: ClusterTrainingRuntime torch-gang: " in err
    assert "number 9223372036854775807 overflows Go int32" in err


def test_output_below_a_regular_file_is_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = inputs(tmp_path, job())
    (tmp_path / "file").write_text("x", encoding="utf-8")
    code, _, err = trainc(capsys, "render", str(folder), "-o", str(tmp_path / "file" / "out"))
    assert code == 2
    assert "cannot write the output" in err and "Traceback" not in err


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_read_only_output_parent_is_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = inputs(tmp_path, job())
    parent = tmp_path / "ro"
    parent.mkdir()
    parent.chmod(0o555)
    try:
        code, _, err = trainc(capsys, "render", str(folder), "-o", str(parent / "out"))
    finally:
        parent.chmod(0o755)
    assert code == 2 and "Permission denied" in err


def test_disk_full_keeps_the_previous_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import compiler.emit.output as output

    folder = inputs(tmp_path, job())
    out = tmp_path / "out"
    assert trainc(capsys, "render", str(folder), "-o", str(out))[0] == 0
    before = sorted(p.relative_to(out) for p in out.rglob("*"))

    def full(path: str, data: bytes) -> None:
        raise OSError(28, "No space left on device", path)

    monkeypatch.setattr(output, "write_new_file", full)
    code, _, err = trainc(capsys, "render", str(folder), "-o", str(out))
    assert code == 2
    assert "No space left on device" in err and "previous output is left as it was" in err
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".out.")] == []


@pytest.mark.parametrize(
    "patch, message",
    [
        ("{op: replace, path: /metadata, value: null}", "metadata must be a mapping"),
        ("{op: replace, path: /metadata/name, value: " + "x" * 250 + "}", None),
        ("{op: replace, path: /metadata/namespace, value: team..a}", "is not a DNS-1123 label"),
        (
            "{op: replace, path: /apiVersion, value: jobset..x-k8s.io/v1alpha2}",
            "is not group/version",
        ),
        ("{op: replace, path: /metadata/name, value: LLM}", "is not a DNS-1123 subdomain"),
        ("{op: remove, path: /spec}", "the output overlays remove the spec"),
    ],
    ids=[
        "metadata-null",
        "name-too-long",
        "namespace-dots",
        "apiversion-dots",
        "uppercase",
        "no-spec",
    ],
)
def test_output_overlay_results_are_checked_like_inputs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], patch: str, message: str | None
) -> None:
    """9 (and 3): output-overlay results get the identity and schema checks inputs get."""
    platform = f"  - target: {{kind: JobSet}}\n    patch:\n      - {patch}\n"
    root = project(tmp_path, "", platform)
    for output in ("-", str(tmp_path / "out")):
        code, _, err = trainc(
            capsys, "render", "--project", str(root / "trainc.yaml"), "-o", output
        )
        if message is None and output == "-":
            continue  # a long name is a valid name; only a file cannot carry it
        assert code == 2, err
        assert "Traceback" not in err
        if message is not None:
            assert message in err, err
    assert not (tmp_path / "out").exists()


def test_names_differing_only_in_case_are_refused() -> None:
    from compiler.emit.output import planned_files
    from compiler.errors import InputError
    from compiler.model.objects import RenderedObject

    def obj(kind: str) -> RenderedObject:
        return RenderedObject(
            "a",
            "j",
            {"apiVersion": "x.io/v1", "kind": kind, "metadata": {"name": "n", "namespace": "a"}},
        )

    with pytest.raises(InputError, match="differ only in case"):
        planned_files([obj("JobSet"), obj("Jobset")])


def test_a_misspelt_trainer_api_version_is_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = inputs(tmp_path, job().replace("trainer.kubeflow.org", "Trainer.Kubeflow.org"))
    code, _, err = trainc(capsys, "render", str(folder), "-o", "-")
    assert code == 0
    assert "trainc: warning: " in err and "job0.yaml:1:1: TrainJob team-a/llm: apiVersion:" in err
    code, out, _ = trainc(capsys, "check", str(folder), "--format", "json")
    assert code == 0
    assert '"rule": "yaml"' in out and '"severity": "warning"' in out


# --- 6. locations -----------------------------------------------------------------------


def test_flux_num_nodes_error_is_located(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case = REPO / "golden" / "flux-env-settings"
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "runtime.yaml").write_text(
        (case / "runtime.yaml").read_text(encoding="utf-8"), encoding="utf-8"
    )
    trainjob = (case / "trainjob.yaml").read_text(encoding="utf-8").replace("    numNodes: 2\n", "")
    (folder / "trainjob.yaml").write_text(trainjob, encoding="utf-8")
    code, _, err = trainc(capsys, "render", str(folder), "-o", "-")
    assert code == 2
    assert (
        f"{folder / 'trainjob.yaml'}:" in err
        and "spec.trainer.numNodes: required for a Flux runtime" in err
    )


def test_a_newline_in_a_name_keeps_one_error_on_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = inputs(tmp_path, job(name='"bad\\nname"'))
    code, _, err = trainc(capsys, "render", str(folder), "-o", "-")
    assert code == 2
    assert all(line.startswith(str(folder)) for line in err.splitlines()), err
    assert "bad\\nname" in err


def test_a_file_name_cannot_spoof_a_location(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = inputs(tmp_path)
    (folder / "x.yaml:1:2: fine.yaml").write_text("a: [", encoding="utf-8")
    code, _, err = trainc(capsys, "render", str(folder), "-o", "-")
    assert code == 2
    assert f'"{folder}/x.yaml:1:2: fine.yaml":' in err


def test_unreadable_file_has_no_line_in_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = inputs(tmp_path, job())
    (folder / "dangling.yaml").symlink_to(folder / "nowhere")
    code, out, _ = trainc(capsys, "check", str(folder), "--format", "json")
    assert code == 2
    [finding] = [f for f in json.loads(out)["findings"] if f["rule"] == "input"]
    assert finding["location"] == {"file": str(folder / "dangling.yaml")}
    assert finding["message"] == "cannot read: No such file or directory"


# --- 7. one exit-code contract ----------------------------------------------------------


@pytest.mark.parametrize(
    "bad",
    [
        job().replace("{numNodes: 2}", "{numNodes: two}"),  # schema type error
        job().replace("torch-gang", "missing-runtime"),  # missing runtime
        job().replace("{numNodes: 2}", "{numNodes: 2, env: [{name: PET_NNODES, value: '1'}]}"),
    ],
    ids=["schema-type", "missing-runtime", "webhook"],
)
def test_check_exits_2_wherever_render_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], bad: str
) -> None:
    folder = inputs(tmp_path, bad)
    render_code = trainc(capsys, "render", str(folder), "-o", "-")[0]
    check_code = trainc(capsys, "check", str(folder))[0]
    assert (render_code, check_code) == (2, 2)


# --- 8. interrupted runs ----------------------------------------------------------------


def test_stale_staging_of_a_killed_run_is_removed(tmp_path: Path) -> None:
    folder = inputs(tmp_path, job())
    out = tmp_path / "out"
    code = """
import os, signal, sys
import compiler.emit.output as output
real = output.write_new_file
def die(path, data):
    real(path, data)
    os.kill(os.getpid(), signal.SIGKILL)
output.write_new_file = die
from compiler.cli import main
main(sys.argv[1:])
"""
    killed = subprocess.run(
        [sys.executable, "-c", code, "render", str(folder), "-o", str(out)], cwd=REPO
    )
    assert killed.returncode == -9
    stale = [p.name for p in tmp_path.iterdir() if p.name.startswith(".out.")]
    assert stale and all(".out.trainc-" in name for name in stale)
    done = subprocess.run(
        [sys.executable, "-m", "compiler", "render", str(folder), "-o", str(out)],
        cwd=REPO,
        capture_output=True,
    )
    assert done.returncode == 0
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".out.")] == []


def test_the_output_path_always_exists_during_a_swap(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import compiler.emit.output as output

    folder = inputs(tmp_path, job())
    out = tmp_path / "out"
    assert trainc(capsys, "render", str(folder), "-o", str(out))[0] == 0
    seen = []
    real_rmtree = output.shutil.rmtree

    def rmtree(path: object, *args: object, **kwargs: object) -> None:
        seen.append(out.is_dir() and (out / ".trainc-output").is_file())
        real_rmtree(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(output.shutil, "rmtree", rmtree)
    monkeypatch.setattr(
        Path, "rename", lambda *a: pytest.fail("two renames: a window without output")
    )
    assert trainc(capsys, "render", str(folder), "-o", str(out))[0] == 0
    assert seen == [True]


def test_a_project_path_too_long_for_the_filesystem_is_located(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found by `make fuzz` (case 79274 of seed 0): an overlay path of 300 characters in
    trainc.yaml made the path's stat raise ENAMETOOLONG."""
    root = project(tmp_path, "")
    text = (root / "trainc.yaml").read_text(encoding="utf-8")
    (root / "trainc.yaml").write_text(
        text.replace("overlays: [overlays/platform.yaml]", f"overlays: [{'x' * 300}]"),
        encoding="utf-8",
    )
    code, _, err = trainc(capsys, "render", "--project", str(root / "trainc.yaml"), "-o", "-")
    assert code == 2
    assert f"{root / 'trainc.yaml'}:10:16: clusters[0].overlays[0]: 'xxx" in err
    assert "does not exist" in err


@pytest.mark.parametrize("verb", [["render", "-o", "-"], ["check", "--format", "json"]])
def test_a_reader_that_goes_away_ends_the_run_quietly(tmp_path: Path, verb: list[str]) -> None:
    """``trainc render -o - | head``: a closed pipe ends the run with 141 (as SIGPIPE
    would), not a traceback. The reader closes its end before trainc writes (for check,
    each TrainJob names a runtime that does not exist: a report with a finding each)."""
    runtime = "torch-gang" if verb[0] == "render" else "no-such-runtime"
    folder = inputs(tmp_path, *(job(f"job-{n}").replace("torch-gang", runtime) for n in range(20)))
    process = subprocess.Popen(
        [sys.executable, "-m", "compiler", *verb[:1], str(folder), *verb[1:]],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # before trainc is ready to write: its first write fails
    errors = process.stderr.read().decode()
    assert process.wait(timeout=120) == 141, errors
    assert "Traceback" not in errors
