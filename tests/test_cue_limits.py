"""A ``.cue`` policy is code from the repository checked (issue 25): the ``cue`` it runs in
ends at a deadline and a memory limit, and never outlives trainc however trainc ends.

trainc runs here as a subprocess in a session of its own (so a failing test can still
kill everything it started), with small limits so the tests are fast.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path

import pytest

from compiler.policy.cue import CueUnavailable, cue_binary
from tests.gitops.support import base_env, write_project


def _installed() -> bool:
    try:
        cue_binary()
    except CueUnavailable:
        return False
    return True


@pytest.fixture(autouse=True)
def _cue_installed() -> None:
    """The pinned cue CLI, which `make setup` builds: a failure, not a skip, without it."""
    if not _installed():
        pytest.fail("cue is not installed (run `make setup`)", pytrace=False)


REPO = Path(__file__).resolve().parents[1]

# 2000^3 = 8e9 steps that keep nothing: plain `cue vet` runs for minutes in 40 MiB.
LOOP_POLICY = """\
package loop

import "list"

_r: list.Range(0, 2000, 1)
TrainJob: metadata: annotations: steps: "\\(len([for a in _r for b in _r for c in _r if a+b+c < 0 {a}]))"
"""

# A string doubled 40 times (16 TiB): plain `cue vet` grows until memory runs out.
GROWING_POLICY = (
    'package growing\n\n_s0: "xxxxxxxxxxxxxxxx"\n'
    + "".join(f"_s{i}: _s{i - 1} + _s{i - 1}\n" for i in range(1, 41))
    + 'TrainJob: metadata: annotations: size: "\\(len(_s40))"\n'
)

JOB = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: llm, namespace: team-a}
spec:
  runtimeRef: {name: torch-gang}
  trainer: {numNodes: 2}
"""

# What keeps a failing run (before the fix: no limit) from taking the machine with it.
SAFETY_DATA_LIMIT = 1024**3


def _inputs(tmp_path: Path, policy: str) -> list[str]:
    (tmp_path / "runtime.yaml").write_text(
        (REPO / "example" / "runtimes" / "torch-gang.yaml").read_text(encoding="utf-8")
    )
    (tmp_path / "job.yaml").write_text(JOB)
    (tmp_path / "policy.cue").write_text(policy)
    return [str(tmp_path / name) for name in ("runtime.yaml", "job.yaml", "policy.cue")]


def _safety() -> None:
    resource.setrlimit(resource.RLIMIT_DATA, (SAFETY_DATA_LIMIT, SAFETY_DATA_LIMIT))
    # A shell starts a background job (`make test &`, nohup) with SIGINT ignored, and an
    # ignored signal stays ignored across exec: Python then installs no Ctrl-C handler
    # and trainc, rightly, ignores the SIGINT these tests send. Start it as from a
    # terminal's foreground instead.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _start(
    tmp_path: Path,
    args: list[str],
    cwd: Path | None = None,
    python_args: bool = False,
    **env: str,
) -> subprocess.Popen[str]:
    """trainc with ``args`` (or Python with them), in a session of its own, output into
    files of ``tmp_path``."""
    environment = base_env(TMPDIR=str(tmp_path), **env)
    return subprocess.Popen(
        [sys.executable, *([] if python_args else ["-m", "compiler"]), *args],
        cwd=cwd or tmp_path,
        env=environment,
        stdin=subprocess.DEVNULL,
        stdout=(tmp_path / "stdout").open("w"),
        stderr=(tmp_path / "stderr").open("w"),
        text=True,
        start_new_session=True,
        preexec_fn=_safety,
    )


def _state(pid: int) -> str | None:
    """The state letter of process ``pid`` (``Z``: a zombie, dead), None when gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat[stat.rindex(")") + 2]


def _cue_processes() -> set[int]:
    """Every running ``cue`` process of this machine (zombies are dead: left out)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        if name == "cue" and _state(int(entry.name)) not in (None, "Z"):
            found.add(int(entry.name))
    return found


def _descendant_cue(root: int) -> int | None:
    """A running ``cue`` started by ``root`` or a descendant of it."""
    for pid in _cue_processes():
        parent = pid
        for _ in range(10):
            try:
                stat = Path(f"/proc/{parent}/stat").read_text()
            except OSError:
                break
            parent = int(stat[stat.rindex(")") + 2 :].split()[1])
            if parent == root:
                return pid
    return None


def _wait_for_cue(process: subprocess.Popen[str], seconds: float = 60) -> int:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pid = _descendant_cue(process.pid)
        if pid is not None:
            return pid
        assert process.poll() is None, f"trainc ended ({process.returncode}) before cue started"
        time.sleep(0.05)
    raise AssertionError("trainc started no cue")


@pytest.fixture
def started() -> Iterator[list[int]]:
    """Pids to kill (group and process) whatever the test's outcome."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        for kill in (os.killpg, os.kill):
            with suppress(ProcessLookupError, PermissionError):
                kill(pid, signal.SIGKILL)


def _read(tmp_path: Path, name: str) -> str:
    return (tmp_path / name).read_text()


def test_a_looping_policy_ends_at_the_deadline_with_a_located_error(
    tmp_path: Path, started: list[int]
) -> None:
    paths = _inputs(tmp_path, LOOP_POLICY)
    begin = time.monotonic()
    process = _start(tmp_path, ["check", *paths], TRAINC_CUE_TIMEOUT="2s")
    started.append(process.pid)
    cue = _wait_for_cue(process)
    started.append(cue)
    code = process.wait(timeout=60)
    elapsed = time.monotonic() - begin
    out, err = _read(tmp_path, "stdout"), _read(tmp_path, "stderr")
    assert code == 2, (out, err)
    assert f"--> {tmp_path / 'policy.cue'}" in out
    assert "cue vet ran past its time limit of 2s ($TRAINC_CUE_TIMEOUT)" in out
    assert "Traceback" not in err
    assert elapsed < 15  # startup and render (~1 s) and the 2 s deadline, on a busy machine
    assert _state(cue) is None  # killed and reaped, not left running nor a zombie


def test_a_growing_policy_ends_at_the_memory_limit(tmp_path: Path, started: list[int]) -> None:
    paths = _inputs(tmp_path, GROWING_POLICY)
    process = _start(
        tmp_path, ["check", *paths], TRAINC_CUE_TIMEOUT="60s", TRAINC_CUE_MEMORY="256Mi"
    )
    started.append(process.pid)
    # wait4: the peak RSS of trainc and of every process it waited for (cue)
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    out, err = _read(tmp_path, "stdout"), _read(tmp_path, "stderr")
    assert process.returncode == 2, (out, err)
    assert f"--> {tmp_path / 'policy.cue'}" in out
    assert "cue vet ran past its memory limit of 256Mi ($TRAINC_CUE_MEMORY)" in out
    assert "goroutine" not in out + err and "Traceback" not in err
    # wait4's peak is the larger of trainc's and cue's, and RSS counts cue's text and
    # stacks beside the data limit: bounded well below the growth unchecked (1 GB in 6 s)
    peak = usage.ru_maxrss * 1024
    assert peak < 256 * 1024**2 * 2, f"peak RSS {peak / 1024**2:.0f} MiB"


@pytest.mark.parametrize(
    ("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)], ids=["SIGTERM", "SIGINT"]
)
def test_stopping_trainc_stops_cue(
    tmp_path: Path, started: list[int], sig: signal.Signals, code: int
) -> None:
    paths = _inputs(tmp_path, LOOP_POLICY)
    process = _start(tmp_path, ["check", *paths], TRAINC_CUE_TIMEOUT="120s")
    started.append(process.pid)
    cue = _wait_for_cue(process)
    started.append(cue)
    process.send_signal(sig)
    assert process.wait(timeout=15) == code
    assert _state(cue) is None  # killed and reaped by trainc before it exited
    assert "Traceback" not in _read(tmp_path, "stderr")
    assert not list(tmp_path.glob("trainc-cue-*"))  # its temporary module removed too


def test_sigterm_to_a_check_by_chunks_leaves_no_cue(tmp_path: Path, started: list[int]) -> None:
    """``check -j 2``: cue runs in worker processes; SIGTERM to trainc's group (what Argo
    CD's plugin server sends) ends trainc, its workers by the signal, and their cue with
    them (PR_SET_PDEATHSIG: dead, a zombie until init reaps it)."""
    paths = _inputs(tmp_path, LOOP_POLICY)
    second = tmp_path / "job2.yaml"
    second.write_text(JOB.replace("name: llm", "name: llm2"))
    script = (
        "import sys\n"
        "from compiler.plan import check_chunks as check_parts\n"
        "check_parts.CHECK_CHUNK_JOBS = 1  # a chunk per job file\n"
        "from compiler.cli import main\n"
        "raise SystemExit(main(sys.argv[1:]))\n"
    )
    process = _start(
        tmp_path,
        ["-c", script, "check", "-j", "2", "--no-cache", *paths, str(second)],
        TRAINC_CUE_TIMEOUT="120s",
        python_args=True,
    )
    started.append(process.pid)
    cue = _wait_for_cue(process)
    started.append(cue)
    os.killpg(process.pid, signal.SIGTERM)
    assert process.wait(timeout=15) == 143
    end = time.monotonic() + 5
    while _state(cue) not in (None, "Z") and time.monotonic() < end:
        time.sleep(0.05)
    assert _state(cue) in (None, "Z")
    assert _descendant_cue(process.pid) is None
    assert "Traceback" not in _read(tmp_path, "stderr")


def test_cue_dies_with_a_killed_trainc(tmp_path: Path, started: list[int]) -> None:
    """SIGKILL cannot be handled (Argo CD's plugin server sends it at its timeout): the
    kernel ends cue with its parent."""
    paths = _inputs(tmp_path, LOOP_POLICY)
    process = _start(tmp_path, ["check", *paths], TRAINC_CUE_TIMEOUT="120s")
    started.append(process.pid)
    cue = _wait_for_cue(process)
    started.append(cue)
    os.kill(process.pid, signal.SIGKILL)  # trainc only, not its group
    process.wait(timeout=15)
    end = time.monotonic() + 5
    while _state(cue) not in (None, "Z") and time.monotonic() < end:
        time.sleep(0.05)
    assert _state(cue) in (None, "Z")  # dead (a zombie until init reaps it)


def test_argocd_generate_prints_nothing_when_a_policy_loops(
    tmp_path: Path, started: list[int]
) -> None:
    project = write_project(tmp_path / "repo", jobs=1)
    (project / "policies" / "loop.cue").write_text(LOOP_POLICY)
    process = _start(
        tmp_path,
        ["argocd", "generate", "--cluster", "production"],
        cwd=project,
        TRAINC_CUE_TIMEOUT="2s",
    )
    started.append(process.pid)
    code = process.wait(timeout=60)
    out, err = _read(tmp_path, "stdout"), _read(tmp_path, "stderr")
    assert code == 2, err
    assert out == ""
    assert "loop.cue" in err and "time limit of 2s" in err


def test_a_bad_limit_setting_is_a_usage_error(tmp_path: Path) -> None:
    paths = _inputs(tmp_path, "package ok\nTrainJob: spec: trainer: numNodes?: <=16\n")
    process = _start(tmp_path, ["check", *paths], TRAINC_CUE_MEMORY="lots")
    assert process.wait(timeout=60) == 2
    err = _read(tmp_path, "stderr")
    assert "$TRAINC_CUE_MEMORY: 'lots' is not a quantity of bytes" in err
    assert "Traceback" not in err
