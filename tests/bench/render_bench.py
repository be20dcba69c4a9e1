"""``make bench``: trainc render at repo scale, one figure a line.

Generates repos of TrainJobs (a mix of torch, MPI and plain runtimes with runtimePatches,
env and resources; 100 TrainJobs a file) and runs ``trainc render`` on them as a user
does, one process per figure, timing it whole and taking its peak RSS (``wait4``: the
largest of the process and its workers). Lines:

* ``render``: N TrainJobs into a folder (and, from 50,000, to stdout), ``-j 1``, no cache;
* ``render -j``: ``-j 1`` against ``-j 2`` at 10,000, outputs compared byte for byte, the
  serial fraction that speed-up implies and what it gives on 8 cores (Amdahl);
* ``check -j``: the same for ``trainc check`` (JSON reports compared);
* ``render incremental``: one file of a 10,000-TrainJob repo changed, the render cache
  warm (median of 3 changes), wall and CPU (``check``'s line is in check_bench.py);
* ``render incremental (one file)``: the 10,000 TrainJobs in one file (document ranges):
  a line inserted at its top, one TrainJob edited, nothing changed (CPU);
* ``render vs Go``: the same repo through upstream's own code (the conformance oracle:
  every TrainJob's fresh emulated cluster, the runtime framework's ``NewObjects``, the
  outputs' create path, in one process; ``--timing``), objects verified identical;
* ``render vs Go (golden templates)``: issue 28's comparison, on N TrainJobs made from
  the golden cases, one file each (:mod:`tests.bench.golden_repo`): CPU of ``render
  --no-cache -o -`` at ``-j 1`` and the default ``-j``, with and without the checks below
  the JobSet (:mod:`tests.bench.no_downstream`), over the Go render's CPU, paired, the
  median of ``--golden-repeat``; the wall speed-up of the default ``-j`` and the serial
  fraction it implies.

A benchmark, not a test: it prints figures and never fails on them. Knobs: ``--sizes``
(``make bench SIZES=1000,10000``), ``--incremental-size``, ``--go-size`` (0: no Go run),
``--golden-sizes`` (``make bench GOLDEN_SIZES=1000``; empty: none), ``--golden-repeat``.
The subprocesses keep their bytecode in a scratch ``PYTHONPYCACHEPREFIX``, as an
installed trainc has it (this machine sets ``PYTHONDONTWRITEBYTECODE``, which would add
~0.1 s of compiling to every run).
"""

from __future__ import annotations

import argparse
import filecmp
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ORACLE = REPO / "tests" / "conformance" / "oracle" / "bin" / "oracle"
OWNER_UID = "00000000-0000-0000-0000-000000000000"  # the oracle's default

RUNTIMES = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: bench-torch}
spec:
  mlPolicy: {numNodes: 1, torch: {}}
  podGroupPolicy: {coscheduling: {scheduleTimeoutSeconds: 90}}
  template:
    spec:
      replicatedJobs:
        - name: node
          template:
            metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
            spec:
              template:
                spec:
                  containers:
                    - name: node
                      image: pytorch/pytorch:2.7.1
                      command: [torchrun, /workspace/train.py]
                      resources: {requests: {cpu: "4", memory: 16Gi}}
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: bench-mpi}
spec:
  mlPolicy: {numNodes: 1, mpi: {numProcPerNode: 1, runLauncherAsNode: true}}
  template:
    spec:
      replicatedJobs:
        - name: launcher
          template:
            metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
            spec:
              template:
                spec:
                  containers:
                    - name: node
                      image: mpioperator/openmpi:0.6.0
                      command: [mpirun, python, /workspace/train.py]
        - name: node
          template:
            spec:
              template:
                spec:
                  containers:
                    - name: node
                      image: mpioperator/openmpi:0.6.0
                      command: [/usr/sbin/sshd, -De]
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: bench-plain}
spec:
  template:
    spec:
      replicatedJobs:
        - name: node
          template:
            metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
            spec:
              template:
                spec:
                  containers:
                    - name: node
                      image: python:3.12
                      command: [python, /workspace/job.py]
"""

TRAINJOB = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {{name: job-{i}, namespace: team-{team}}}
spec:
  runtimeRef: {{name: {runtime}}}
  trainer:
    numNodes: {nodes}
    resourcesPerNode:
      requests: {{cpu: "{cpu}", memory: {mem}Gi}}
      limits: {{nvidia.com/gpu: {gpus}}}
    env:
      - {{name: RUN_ID, value: "{i}"}}
      - name: POD_IP
        valueFrom: {{fieldRef: {{fieldPath: status.podIP}}}}
  runtimePatches:
    - manager: platform.example.com/scheduling
      trainingRuntimeSpec:
        template:
          metadata: {{labels: {{team: team-{team}}}}}
          spec:
            replicatedJobs:
              - name: node
                template:
                  spec:
                    template:
                      spec:
                        nodeSelector: {{pool: gpu-{team}}}
                        tolerations: [{{key: gpu, operator: Exists, effect: NoSchedule}}]
"""


def generate(directory: Path, count: int) -> None:
    (directory / "runtimes.yaml").write_text(RUNTIMES)
    runtimes = ("bench-torch", "bench-mpi", "bench-plain")
    per_file = 100
    for start in range(0, count, per_file):
        documents = [
            TRAINJOB.format(
                i=i,
                team=i % 17,
                runtime=runtimes[i % 3],
                nodes=1 + i % 8,
                cpu=2 + i % 6,
                mem=8 * (1 + i % 4),
                gpus=i % 9,
            )
            for i in range(start, min(start + per_file, count))
        ]
        (directory / f"jobs-{start // per_file:04d}.yaml").write_text("---\n".join(documents))


def environment(scratch: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(scratch / "pycache")
    env["PYTHONPATH"] = str(REPO)
    return env


def timed(
    command: list[str], env: dict[str, str], stdout: Path | None = None
) -> tuple[float, float]:
    """Run ``command``; its wall seconds and peak RSS in MiB (of it or of a worker)."""
    with open(stdout or os.devnull, "wb") as out:
        started = time.perf_counter()
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.PIPE, env=env)
        assert process.stderr is not None
        errors = process.stderr.read()
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed: {errors.decode(errors='replace')}")
    return seconds, usage.ru_maxrss / 1024


def trainc(*args: str) -> list[str]:
    return [sys.executable, "-m", "compiler", "render", *args]


def cached(env: dict[str, str], cache: Path) -> dict[str, str]:
    """``env`` with its own render cache (empty at first: a cold render, as users have it)."""
    return {**env, "TRAINC_RENDER_CACHE": str(cache)}


def repo_of(size: int, scratch: Path) -> Path:
    repo = scratch / f"repo-{size}"
    if not repo.exists():
        repo.mkdir()
        generate(repo, size)
    return repo


def bench_sizes(sizes: list[int], scratch: Path, env: dict[str, str]) -> None:
    for size in sizes:
        repo = repo_of(size, scratch)
        out = scratch / f"out-{size}"
        own = cached(env, scratch / f"cache-{size}")
        seconds, peak = timed(trainc(str(repo), "-o", str(out), "-q", "-j", "1"), own)
        files = sum(len(names) for _, _, names in os.walk(out)) - 2  # marker, requirements
        line = (
            f"render: {size:>6} TrainJobs -> folder {seconds:6.2f} s = {size / seconds:5.0f}/s"
            f", {files} files, peak RSS {peak:4.0f} MiB (-j 1, cold cache)"
        )
        if size >= 50000:
            own = cached(env, scratch / f"cache-{size}-stream")
            stream, stream_peak = timed(trainc(str(repo), "-o", "-", "-j", "1"), own)
            line += f" | -> stdout {stream:6.2f} s, peak RSS {stream_peak:4.0f} MiB"
        print(line, flush=True)


def bench_jobs(size: int, scratch: Path, env: dict[str, str]) -> None:
    repo = repo_of(size, scratch)
    times = {}
    for jobs in (1, 2):
        out = scratch / f"out-j{jobs}"
        own = cached(env, scratch / f"cache-j{jobs}")
        times[jobs], _ = timed(trainc(str(repo), "-o", str(out), "-q", "-j", str(jobs)), own)
    same = not _tree_differences(scratch / "out-j1", scratch / "out-j2")
    speedup = times[1] / times[2]
    serial = min(1.0, max(0.0, 2 / speedup - 1))  # Amdahl: S2 = 1 / (f + (1 - f) / 2)
    on_8 = 1 / (serial + (1 - serial) / 8)
    print(
        f"render -j: {size} TrainJobs -j 1 {times[1]:.2f} s, -j 2 {times[2]:.2f} s: "
        f"speed-up {speedup:.2f}x, outputs {'identical' if same else 'DIFFERENT'}; serial "
        f"fraction {serial:.2f} -> {on_8:.1f}x on 8 cores (Amdahl)",
        flush=True,
    )


def bench_check_jobs(size: int, scratch: Path, env: dict[str, str]) -> None:
    """``trainc check`` -j 1 (whole) against -j 2 (chunks), JSON reports compared."""
    repo = repo_of(size, scratch)
    times, reports = {}, {}
    for jobs in (1, 2):
        reports[jobs] = scratch / f"check-j{jobs}.json"
        command = [sys.executable, "-m", "compiler", "check", str(repo), "--format", "json"]
        # --no-cache: -j 2 checks every chunk (a cached one would not be checked at all)
        times[jobs], _ = timed([*command, "-j", str(jobs), "--no-cache"], env, reports[jobs])
    same = reports[1].read_bytes() == reports[2].read_bytes()
    speedup = times[1] / times[2]
    print(
        f"check -j: {size} TrainJobs (no policies) -j 1 {times[1]:.2f} s, -j 2 {times[2]:.2f} s:"
        f" speed-up {speedup:.2f}x, reports {'identical' if same else 'DIFFERENT'}",
        flush=True,
    )


def _tree_differences(a: Path, b: Path) -> list[str]:
    compared = filecmp.dircmp(a, b)
    found = [*compared.left_only, *compared.right_only, *compared.diff_files]
    for name in compared.common_dirs:
        found += _tree_differences(a / name, b / name)
    return found


def bench_incremental(size: int, scratch: Path, env: dict[str, str]) -> None:
    """One file of ``size`` TrainJobs changed, the render cache warm: wall and CPU
    seconds (median of 3 changes), nothing changed (median of 3), the first run."""
    repo = scratch / f"repo-incremental-{size}"
    shutil.rmtree(repo, ignore_errors=True)
    shutil.copytree(repo_of(size, scratch), repo)
    out = scratch / "out-incremental"
    env = cached(env, scratch / "cache-incremental")
    command = trainc(str(repo), "-o", str(out), "-q")
    cold = cpu_timed(command, env)  # fills the cache
    warm = [cpu_timed(command, env) for _ in range(3)]
    changed = []
    for attempt in range(3):
        target = repo / f"jobs-{attempt * 7:04d}.yaml"
        target.write_text(target.read_text().replace('value: "', 'value: "x', 1))
        changed.append(cpu_timed(command, env))
    whole = scratch / "out-incremental-whole"
    timed(trainc(str(repo), "-o", str(whole), "-q"), cached(env, scratch / "cache-whole"))
    same = not _tree_differences(out, whole)  # (nothing is deleted before the end: see main)

    def median(runs: list[tuple[float, float]], which: int) -> float:
        return statistics.median(r[which] for r in runs)

    print(
        f"render incremental: {size} TrainJobs, one file of 100 changed: wall "
        f"{median(changed, 0):.2f} s ({min(r[0] for r in changed):.2f}-"
        f"{max(r[0] for r in changed):.2f}), CPU {median(changed, 1):.2f} s (median of 3); "
        f"nothing changed: wall {median(warm, 0):.2f} s, CPU {median(warm, 1):.2f} s; first "
        f"run wall {cold[0]:.2f} s, CPU {cold[1]:.2f} s; output "
        f"{'identical to' if same else 'DIFFERENT from'} a render without the cache",
        flush=True,
    )
    # check's equivalent: tests/bench/check_bench.py (check incremental)


def bench_one_file_incremental(size: int, scratch: Path, env: dict[str, str]) -> None:
    """The same with every TrainJob in one file (cut into document ranges): CPU seconds
    (median of 3 each) after a line inserted at its top (every range's first line moves,
    no document changes), after one TrainJob edited in the middle, and with nothing
    changed; the output compared with a render without the cache."""
    from tests.bench.memory_bench import generate as generate_layout

    repo = scratch / f"repo-one-file-incremental-{size}"
    shutil.rmtree(repo, ignore_errors=True)
    generate_layout(repo, size, "one-file")
    sweep = repo / "jobs" / "sweep.yaml"
    out = scratch / "out-one-file-incremental"
    env = cached(env, scratch / "cache-one-file-incremental")
    command = trainc(str(repo), "-o", str(out), "-q")
    cold = cpu_timed(command, env)  # fills the cache
    inserted, edited, unchanged = [], [], []
    for attempt in range(3):
        sweep.write_text(f"# inserted {attempt}\n" + sweep.read_text())
        inserted.append(cpu_timed(command, env)[1])
        text = sweep.read_text()
        middle = text.index('value: "', len(text) // 2 + attempt * 9973)
        sweep.write_text(text[:middle] + f'value: "e{attempt}' + text[middle + 8 :])
        edited.append(cpu_timed(command, env)[1])
        unchanged.append(cpu_timed(command, env)[1])
    whole = scratch / "out-one-file-incremental-whole"
    timed(trainc(str(repo), "-o", str(whole), "-q"), cached(env, scratch / "cache-one-file-whole"))
    same = not _tree_differences(out, whole)
    print(
        f"render incremental (one file): {size} TrainJobs in one file of "
        f"{sweep.stat().st_size / 2**20:.0f} MiB (document ranges), CPU (median of 3): a "
        f"line inserted at its top {statistics.median(inserted):.2f} s, one TrainJob edited "
        f"{statistics.median(edited):.2f} s, nothing changed "
        f"{statistics.median(unchanged):.2f} s; first run CPU {cold[1]:.2f} s; output "
        f"{'identical to' if same else 'DIFFERENT from'} a render without the cache",
        flush=True,
    )


def bench_go(size: int, scratch: Path, env: dict[str, str]) -> None:
    if not ORACLE.exists():
        print(f"render vs Go: skipped, no oracle at {ORACLE} (make oracle)")
        return
    import json

    repo = repo_of(size, scratch)
    inputs = sorted(str(p) for p in repo.glob("*.yaml"))
    go_out = scratch / "go.yaml"
    with open(go_out, "wb") as out:
        started = time.perf_counter()
        go = subprocess.run(
            [str(ORACLE), "render", "--timing", "--mask-secret-data", *inputs],
            stdout=out,
            stderr=subprocess.PIPE,
            check=True,
        )
        go_wall = time.perf_counter() - started
    timing = json.loads(go.stderr.decode().strip().splitlines()[-1])
    ours, _ = timed(
        trainc(str(repo), "-o", "-", "-j", "1", "--owner-uid", OWNER_UID),
        cached(env, scratch / "cache-go"),
        scratch / "trainc.yaml",
    )
    verdict = _verify(go_out, repo)
    print(
        f"render vs Go: {size} TrainJobs, trainc render -j 1 (load, admission, render, "
        f"output admission, YAML) {ours:.2f} s; Go render (fresh cluster + NewObjects + "
        f"output admission per TrainJob) {timing['renderSeconds']:.2f} s, Go process "
        f"{go_wall:.2f} s: trainc {timing['renderSeconds'] / ours:.1f}x faster than the Go "
        f"render alone, {go_wall / ours:.1f}x than the Go process; objects {verdict}",
        flush=True,
    )


def cpu_timed(
    command: list[str],
    env: dict[str, str] | None,
    stdout: Path | None = None,
    codes: tuple[int, ...] = (0,),
) -> tuple[float, float]:
    """Run ``command``; its wall and CPU seconds (user + system, of it and of every
    worker it waited for: ``wait4``). An exit code not in ``codes`` is an error."""
    with open(stdout or os.devnull, "wb") as out:
        started = time.perf_counter()
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.PIPE, env=env)
        assert process.stderr is not None
        errors = process.stderr.read()
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) not in codes:
        raise RuntimeError(f"{' '.join(command)} failed: {errors.decode(errors='replace')}")
    return wall, usage.ru_utime + usage.ru_stime


def chunks_default_jobs() -> int:
    """The default ``-j`` of a render here (the cores this process may use)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


def golden_repo_of(size: int, scratch: Path) -> tuple[Path, int]:
    """The golden-template repo of ``size`` TrainJobs (:mod:`tests.bench.golden_repo`)
    and how many templates it was made from."""
    from tests.bench.golden_repo import generate_golden

    repo = scratch / f"golden-{size}"
    repo.mkdir(exist_ok=True)
    return repo, generate_golden(repo, size)


def bench_golden_go(size: int, repeat: int, scratch: Path, env: dict[str, str]) -> None:
    """Issue 28's comparison: ``size`` TrainJobs from the golden templates, one file
    each, through upstream's Go render and ``trainc render --no-cache -o -`` at ``-j 1``
    and the default ``-j``, in turn (Go, -j 1, -j default, the same without the checks
    below the JobSet) ``repeat`` times; the median of each pair's CPU ratio, objects
    verified identical."""
    if not ORACLE.exists():
        print(f"render vs Go (golden templates): skipped, no oracle at {ORACLE} (make oracle)")
        return
    repo, templates = golden_repo_of(size, scratch)
    inputs = sorted(str(p) for p in repo.glob("*.yaml"))
    go_command = [str(ORACLE), "render", "--mask-secret-data", *inputs]
    base = [str(repo), "-o", "-", "--no-cache", "--owner-uid", OWNER_UID, "-q"]
    bare = [sys.executable, "-m", "tests.bench.no_downstream", "render", *base]
    own_cpu = scratch / "own-cpu.txt"
    sides = {
        "-j 1": trainc(*base, "-j", "1"),
        # the parent's own CPU written to own_cpu (tests.bench.own_cpu): the serial part
        "-j default": [sys.executable, "-m", "tests.bench.own_cpu", "render", *base],
        "-j 1 without downstream": [*bare, "-j", "1"],
        "-j default without downstream": bare,
    }
    go_out = scratch / f"go-golden-{size}.yaml"
    go_cpu: list[float] = []
    cpu: dict[str, list[float]] = {name: [] for name in sides}
    ratios: dict[str, list[float]] = {name: [] for name in sides}
    walls: dict[str, list[float]] = {name: [] for name in sides}
    serial_cpu: list[float] = []  # the parent's share of a default -j run's CPU
    for _ in range(repeat):
        _, go = cpu_timed(go_command, None, go_out)
        go_cpu.append(go)
        for name, command in sides.items():
            stream = scratch / f"golden-{size}-{name.replace(' ', '_')}.yaml"
            wall, ours = cpu_timed(command, {**env, "TRAINC_BENCH_OWN_CPU": str(own_cpu)}, stream)
            walls[name].append(wall)
            cpu[name].append(ours)
            ratios[name].append(ours / go)
            if name == "-j default":
                serial_cpu.append(float(own_cpu.read_text()) / ours)
    speedups = [one / many for one, many in zip(walls["-j 1"], walls["-j default"], strict=True)]
    speedup = statistics.median(speedups)
    cores = chunks_default_jobs()
    # Amdahl: S = 1 / (f + (1 - f) / n)  =>  f = (n / S - 1) / (n - 1)
    serial = min(1.0, max(0.0, (cores / speedup - 1) / (cores - 1))) if cores > 1 else 1.0
    streams = {(scratch / f"golden-{size}-{n.replace(' ', '_')}.yaml").read_bytes() for n in sides}
    verdict = _verify(go_out, repo, env_order_random=True)  # XGBoost runtimes among them
    figures = "; ".join(
        f"{name} {statistics.median(cpu[name]):.2f} s = "
        f"{statistics.median(ratios[name]):.2f} ({min(ratios[name]):.2f}-{max(ratios[name]):.2f})"
        for name in sides
    )
    print(
        f"render vs Go (golden templates): {size} TrainJobs from {templates} templates, one "
        f"file each, {len(inputs) - size} context files; CPU, median of {repeat} paired: Go "
        f"render {statistics.median(go_cpu):.2f} s ({statistics.median(go_cpu) / size * 1e3:.1f}"
        f" ms per TrainJob); trainc render --no-cache -o - / Go: {figures}; wall speed-up of"
        f" -j default ({cores} cores) over -j 1 {speedup:.2f}x, serial fraction {serial:.2f}"
        f" by Amdahl from it, {statistics.median(serial_cpu):.2f} by CPU (the parent's own"
        f" share: {1 / statistics.median(serial_cpu):.0f}x at most on any number of cores);"
        f" the four streams"
        f" {'identical' if len(streams) == 1 else 'DIFFERENT'}; objects {verdict}",
        flush=True,
    )


def _verify(go_out: Path, repo: Path, env_order_random: bool = False) -> str:
    """Both sides' objects, normalised as the conformance suite does, compared
    (``env_order_random``: the repo has a runtime whose env order upstream leaves to
    chance, the XGBoost plugin's: every JobSet's env lists are compared sorted)."""
    import yaml

    from tests.conformance.normalise import first_difference, normalise
    from tests.conformance.trainc_side import render

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    with open(go_out, encoding="utf-8") as stream:
        expected = [d for d in yaml.load_all(stream, Loader=loader) if d is not None]
    answer = render(sorted(repo.glob("*.yaml")), OWNER_UID)
    if answer.objects is None:
        return f"NOT COMPARED: trainc rejects ({answer.problems})"
    difference = first_difference(
        normalise(expected, env_order_random), normalise(answer.objects, env_order_random)
    )
    return f"identical ({len(expected)})" if difference is None else f"DIFFER: {difference}"


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--sizes", default=os.environ.get("SIZES") or "1000,10000,50000,100000")
    parser.add_argument("--incremental-size", type=int, default=10000)
    parser.add_argument("--jobs-size", type=int, default=10000)
    parser.add_argument("--go-size", type=int, default=1000)
    parser.add_argument("--golden-sizes", default="1000,10000")
    parser.add_argument("--golden-repeat", type=int, default=3)
    parser.add_argument("--scratch", help="where repos and outputs go (default: a temp dir)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    started = time.perf_counter()
    # Nothing is deleted before the end: on ext4, creating a file skips every inode freed
    # in the last 60 s (360 s while its inode table block is dirty), so a run after a
    # deletion of thousands of files pays for it. Each run has its own render cache.
    with tempfile.TemporaryDirectory(prefix="trainc-bench-", dir=args.scratch) as folder:
        scratch = Path(folder)
        env = environment(scratch)
        timed([sys.executable, "-m", "compiler", "--help"], env)  # bytecode written once
        bench_sizes(sizes, scratch, env)
        if args.jobs_size:
            bench_jobs(args.jobs_size, scratch, env)
            bench_check_jobs(args.jobs_size, scratch, env)
        if args.incremental_size:
            bench_incremental(args.incremental_size, scratch, env)
            bench_one_file_incremental(args.incremental_size, scratch, env)
        if args.go_size:
            bench_go(args.go_size, scratch, env)
        for size in (int(s) for s in args.golden_sizes.split(",") if s):
            bench_golden_go(size, args.golden_repeat, scratch, env)
    print(f"render bench: done in {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
