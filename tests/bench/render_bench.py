"""``make bench``: load + render + emit throughput and peak memory on generated repos.

Generates repos of 1,000 and 10,000 TrainJobs (a mix of torch, torchtune-like, MPI and
plain runtimes, with runtimePatches, env and resources) and renders each in a fresh
process on one core, printing TrainJobs/s and peak RSS. Targets (issue "Render core"):
>= 1,000 TrainJobs/s and < 1 GiB RSS at 10,000. A benchmark, not a test: it prints
figures and never fails on them.

Writing the files is the filesystem's work as much as trainc's, and on a shared VM its
cost swings from run to run (the same bare loop creating 16,667 files measured 0.2 s
and 2.8 s minutes apart). Each run therefore also times a bare loop writing the same
bytes to the same layout right after trainc did: the floor no writer goes below at
that moment. The CPU figures (process time) leave the disk out entirely;
``--output-parent`` puts the output on another filesystem (a tmpfs, say).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

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


def plain_write(files: list[tuple[str, bytes]], directory: Path) -> float:
    """Seconds a bare loop needs to write ``files`` (no trainc code): the filesystem's floor."""
    started = time.perf_counter()
    made: set[str] = set()
    for relative, data in files:
        folder = relative.rpartition("/")[0]
        if folder not in made:
            os.makedirs(directory / folder, exist_ok=True)
            made.add(folder)
        descriptor = os.open(directory / relative, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        os.write(descriptor, data)
        os.close(descriptor)
    return time.perf_counter() - started


def measure(count: int, scratch: Path, output_parent: Path) -> dict[str, float]:
    """Run in this process: generate, then time load + render + emit, as the CLI runs.

    Nothing is deleted here: the caller removes every run's files after the last run.
    """
    from compiler.cli import tune_gc
    from compiler.emit.output import planned_files, write_directory
    from compiler.emit.yaml_text import dump_document
    from compiler.plan.stages import compile_paths
    from compiler.render.framework import RenderOptions

    repo = Path(tempfile.mkdtemp(dir=scratch))
    out = Path(tempfile.mkdtemp(dir=output_parent))
    generate(repo, count)
    # Flush what the generator left for the disk to do, so the timed part does not pay
    # for it (the usual hygiene of disk benchmarks).
    os.sync()
    tune_gc()
    started, started_cpu = time.perf_counter(), time.process_time()
    result = compile_paths([str(repo)], RenderOptions())
    compiled, compiled_cpu = time.perf_counter(), time.process_time()
    # serialising alone, the CPU part of emit (write_directory below does it again)
    texts = [
        (path, dump_document(obj.data).encode()) for path, obj in planned_files(result.objects)
    ]
    serialised_cpu = time.process_time()
    serialised = time.perf_counter()
    files = write_directory(result.objects, out / "rendered", result.secret_requirements)
    finished = time.perf_counter()
    floor = plain_write(texts, out / "plain")
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "count": count,
        # end to end = load + render + emit (serialise and write), as `trainc render -o DIR`
        "seconds": (compiled - started) + (finished - serialised),
        "compile_cpu": compiled_cpu - started_cpu,
        "serialise_cpu": serialised_cpu - compiled_cpu,
        "write_seconds": finished - serialised,
        "plain_write_seconds": floor,
        "files": files,
        "peak_mib": peak_kib / 1024,
    }


def run_once(size: int, scratch: Path, output_parent: Path) -> dict[str, float]:
    """One run in a fresh process pinned to one core, so peak RSS and speed are its own."""
    command = [sys.executable, "-m", "tests.bench.render_bench", "--one", str(size)]
    command += ["--scratch", str(scratch), "--output-parent", str(output_parent)]
    if hasattr(os, "sched_setaffinity"):
        command = ["taskset", "-c", "0", *command]
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    figures: dict[str, float] = json.loads(out)
    return figures


def report(size: int, f: dict[str, float]) -> float:
    rate = f["count"] / f["seconds"]
    cpu_rate = f["count"] / (f["compile_cpu"] + f["serialise_cpu"])
    print(
        f"bench: {size:>6} TrainJobs  end to end {f['seconds']:6.2f} s = {rate:5.0f}/s"
        f"  | CPU load+render {f['compile_cpu']:.2f} s, serialise {f['serialise_cpu']:.2f} s"
        f" = {cpu_rate:.0f}/s  | serialising + writing {int(f['files'])} files {f['write_seconds']:.2f} s"
        f" (a bare loop writing the same files next: {f['plain_write_seconds']:.2f} s)"
        f"  | peak RSS {f['peak_mib']:.0f} MiB",
        flush=True,
    )
    return rate


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--runs", type=int, default=3, help="runs per size (default 3)")
    parser.add_argument(
        "--output-parent",
        help="write the rendered trees under this directory (default: the system temp "
        "directory), e.g. a tmpfs to leave the disk out of the figure",
    )
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--scratch", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        figures = measure(args.one, Path(args.scratch), Path(args.output_parent))
        print(json.dumps(figures))
        return 0
    # Every run's files are deleted only after the last run: on ext4 without a journal,
    # creating a file skips over every inode freed in the last 60 s (360 s while its
    # inode-table block is not yet written back: RECENTCY_MIN/DIRTY in ext4's ialloc.c),
    # so a run that follows a deletion of thousands of files pays for it.
    with (
        tempfile.TemporaryDirectory(prefix="trainc-bench-") as scratch,
        tempfile.TemporaryDirectory(prefix="trainc-bench-", dir=args.output_parent) as outputs,
    ):
        for size in (int(s) for s in args.sizes.split(",")):
            rates = sorted(
                report(size, run_once(size, Path(scratch), Path(outputs))) for _ in range(args.runs)
            )
            print(
                f"bench: {size:>6} TrainJobs  end to end over {len(rates)} runs: median "
                f"{rates[len(rates) // 2]:.0f}/s (min {rates[0]:.0f}, max {rates[-1]:.0f})"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
