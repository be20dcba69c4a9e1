"""``make bench``: load + render + emit throughput and peak memory on generated repos.

Generates repos of 1,000 and 10,000 TrainJobs (a mix of torch, torchtune-like, MPI and
plain runtimes, with runtimePatches, env and resources) and renders each in a fresh
process on one core, printing TrainJobs/s and peak RSS. Targets (issue "Render core"):
>= 1,000 TrainJobs/s and < 1 GiB RSS at 10,000. A benchmark, not a test: it prints
figures and never fails on them.
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


def measure(count: int) -> dict[str, float]:
    """Run in this process: generate, then time load + render + emit, as the CLI runs."""
    from compiler.cli import tune_gc
    from compiler.driver import compile_paths
    from compiler.emit.output import write_directory
    from compiler.emit.yaml_text import dump_document
    from compiler.render.framework import RenderOptions

    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp, "repo")
        repo.mkdir()
        generate(repo, count)
        tune_gc()
        started = time.perf_counter()
        result = compile_paths([str(repo)], RenderOptions())
        compiled = time.perf_counter()
        for obj in result.objects:  # serialising alone: the CPU part of emit
            dump_document(obj.data)
        serialised = time.perf_counter()
        files = write_directory(result.objects, Path(tmp, "out"), result.secret_requirements)
        finished = time.perf_counter()
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "count": count,
        # end to end = load + render + emit (serialise and write), as `trainc render -o DIR`
        "seconds": (compiled - started) + (finished - serialised),
        "compile_seconds": compiled - started,
        "serialise_seconds": serialised - compiled,
        "write_seconds": finished - serialised,
        "files": files,
        "peak_mib": peak_kib / 1024,
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(args.one)))
        return 0
    for size in (int(s) for s in args.sizes.split(",")):
        # A fresh process per size, pinned to one core, so peak RSS and speed are its own.
        command = [sys.executable, "-m", "tests.bench.render_bench", "--one", str(size)]
        if hasattr(os, "sched_setaffinity"):
            command = ["taskset", "-c", "0", *command]
        out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
        figures = json.loads(out)
        rate = figures["count"] / figures["seconds"]
        cpu_rate = figures["count"] / (figures["compile_seconds"] + figures["serialise_seconds"])
        print(
            f"bench: {size:>6} TrainJobs  {figures['seconds']:7.2f} s  {rate:8.0f} TrainJobs/s  "
            f"(load+render+serialise {cpu_rate:.0f}/s; serialise {figures['serialise_seconds']:.2f}"
            f" s; writing {int(figures['files'])} files {figures['write_seconds']:.2f} s)  "
            f"peak RSS {figures['peak_mib']:.0f} MiB"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
