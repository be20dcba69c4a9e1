"""``make bench`` (overlay part): the cost of the shipped cluster overlays at scale.

A project (``trainc.yaml``) over the render bench's generated TrainJobs
(:func:`tests.bench.render_bench.generate`) with three clusters: ``bare`` (no overlays),
``staging`` (``overlays/staging``: input patches on every TrainJob, output patches on
JobSets and PodGroups) and ``production`` (``overlays/production``: input patches on
TrainJobs and runtimes, an output JSON patch, and locks; every generated TrainJob
breaks the tolerations lock with its runtimePatch, so each also gets a located error).
Each cluster's build runs in a fresh process pinned to one core; the overlay step is
the ``overlay_inputs`` and ``overlay_outputs`` stages, in CPU seconds, and the line
gives it per 1,000 TrainJobs, which stays flat when the step is linear. The whole
build's CPU time is next to the bare cluster's (CPU, not wall: on a shared machine wall
time follows the neighbours' load). A benchmark, not a test: it prints figures and
never fails on them.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.bench.render_bench import generate

ROOT = Path(__file__).resolve().parents[2]
CLUSTERS = ("bare", "staging", "production")


def make_project(parent: Path, count: int) -> Path:
    project = parent / f"overlays-{count}"
    if project.exists():
        return project
    (project / "jobs").mkdir(parents=True)
    generate(project / "jobs", count)
    # the shipped overlays, copied in: a project names nothing outside its repository
    shutil.copytree(ROOT / "overlays", project / "overlays", ignore=shutil.ignore_patterns("*.md"))
    clusters = []
    for name in CLUSTERS:
        overlays = "" if name == "bare" else f"\n    overlays: [overlays/{name}]"
        clusters.append(
            f"  - name: {name}\n    trainer: v2.3.0\n    kubernetes: v1.31.0\n"
            # the shipped overlays queue every TrainJob: Kueue gets them as TrainJobs
            "    delivery: trainjobs\n"
            f"    schedulers: [coscheduling, kueue]{overlays}\n"
        )
    (project / "trainc.yaml").write_text(
        'inputs:\n  jobs: ["jobs/"]\noutput: rendered\nclusters:\n' + "".join(clusters)
    )
    return project


def measure(project: Path, cluster: str) -> dict[str, float]:
    """Run in this process: the cluster's build, the overlay stages timed on their own."""
    from compiler.cli import tune_gc
    from compiler.model.build import Build, Stage
    from compiler.plan import stages
    from compiler.plan.build_plan import plans_for_project
    from compiler.project.loader import load_project

    tune_gc()
    [plan] = [
        p
        for p in plans_for_project(load_project(project / "trainc.yaml"))
        if p.cluster_name == cluster
    ]
    cpu: dict[str, float] = {}

    def timed(stage: Stage) -> Stage:
        def run(build: Build) -> None:
            started = time.process_time()
            stage(build)
            cpu[stage.__name__] = time.process_time() - started

        return run

    started = time.process_time()
    build = stages.run(plan, tuple(timed(s) for s in stages.RENDER_STAGES))
    total = time.process_time() - started
    overlay = cpu.get("overlay_inputs", 0.0) + cpu.get("overlay_outputs", 0.0)
    return {"cpu": total, "overlay_cpu": overlay, "problems": len(build.problems)}


def run_once(project: Path, cluster: str) -> dict[str, float]:
    command = [sys.executable, "-m", "tests.bench.overlay_bench", "--one", str(project), cluster]
    if hasattr(os, "sched_setaffinity"):
        command = ["taskset", "-c", "0", *command]
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    figures: dict[str, float] = json.loads(out)
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--sizes", default="10000,50000")
    parser.add_argument("--one", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(Path(args.one[0]), args.one[1])))
        return 0
    with tempfile.TemporaryDirectory(prefix="trainc-overlay-bench-") as scratch:
        for count in (int(s) for s in args.sizes.split(",") if s):
            project = make_project(Path(scratch), count)
            bare = run_once(project, "bare")
            for cluster in CLUSTERS[1:]:
                f = run_once(project, cluster)
                print(
                    f"bench: overlays {count:>6} TrainJobs  {cluster:10} overlay step"
                    f" {f['overlay_cpu']:6.2f} s CPU = {f['overlay_cpu'] / count * 1000:.3f} s"
                    f" per 1,000 TrainJobs | whole build {f['cpu']:6.2f} s CPU vs"
                    f" {bare['cpu']:6.2f} s without overlays ({int(f['problems'])} problems)",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
