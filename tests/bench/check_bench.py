"""``make bench`` (check part): ``trainc check`` with and without the shipped policies,
and the policy step next to the API server's own ValidatingAdmissionPolicy code.

Repos are the render bench's generated TrainJobs (:func:`tests.bench.render_bench.generate`)
in two variants:

* ``findings``: as generated. Every TrainJob lacks the ``team``/``cost-center`` labels
  and uses images outside the allowed registries, MPI and plain jobs are not
  gang-scheduled, MPI launchers request nothing: about 2.9 findings per TrainJob, each
  with its source line (the case that was quadratic);
* ``clean``: the same jobs made to pass: labels added, the bench's registries allowed,
  every runtime gang-scheduled, every container with a CPU request. No policy finding: the
  figure a CI gate on a healthy repo sees;
* ``onefile`` (``--variants``, not by default): ``findings`` with every TrainJob in one
  file, the shape in which the text report split the file once per finding (5,000
  TrainJobs in one file: 142 s of CPU before, 5.3 s after).

For each size, one line per (variant, format): ``trainc check`` as a whole process
without policies and with the 8 shipped ValidatingAdmissionPolicies (``policies/*/policy.yaml``
and their params), CPU seconds (user + system) and the ratio (goal: <= 1.3x), then the
wall seconds. ``--jobs N`` passes ``-j N`` to check (default: check's own default, the
cores it may use); ``--repeat N`` (default 3) runs each pair N times, without and with
policies in turn, and prints the median of the pairs' ratios with their range, and each
side's median seconds: on a shared machine one pair's ratio varies by ±0.15, a median
of paired runs by a few hundredths.

The policy step alone (:meth:`compiler.policy.vap.PolicySet.evaluate` on every input
and rendered object, source positions already read; the fastest of three passes after
a warm-up, on one core) is then put
next to ``tests/bench/vapbench`` (k8s.io/apiserver v0.36.2: the policy and binding
matchers and the validator the ValidatingAdmissionPolicy plugin builds, one process,
same objects, same namespaces and params, timed the same way): objects per second each,
and the decision counts, which must agree. The Go program is built with ``go build``
into ``tests/bench/vapbench/bin`` (git-ignored) on first use; without Go that line says
so. A benchmark, not a test: it prints figures and never fails on them.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.bench.render_bench import generate

ROOT = Path(__file__).resolve().parents[2]
VAPBENCH = ROOT / "tests" / "bench" / "vapbench"
VAPBENCH_BIN = VAPBENCH / "bin" / "vapbench"
PASSES = 3  # timed passes of the policy step after a warm-up, each side; the fastest counts

_GANG = "  podGroupPolicy: {coscheduling: {scheduleTimeoutSeconds: 90}}\n"
_REGISTRIES = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: trainc-allowed-registries, namespace: trainc-system}
data: {registries: "pytorch/, mpioperator/, python:"}
"""


def shipped_policies(clean: bool) -> list[Path]:
    """The 8 ValidatingAdmissionPolicies with their params (the registries of a clean
    repo are its own, written by :func:`make_clean`)."""
    files = sorted(ROOT.glob("policies/*/policy.yaml"))
    params = sorted(ROOT.glob("policies/*/params.yaml"))
    if clean:
        params = [p for p in params if p.parent.name != "allowed-registries"]
    return [*files, *params]


def make_clean(repo: Path) -> None:
    """Rewrite a generated repo so that every shipped policy passes."""
    runtimes = (repo / "runtimes.yaml").read_text()
    for name in ("bench-mpi", "bench-plain"):
        head = f"metadata: {{name: {name}}}\nspec:\n"
        runtimes = runtimes.replace(head, head + _GANG)
    # the MPI launcher and the plain runtime's container request nothing of their own
    for command in ("[mpirun, python, /workspace/train.py]", "[python, /workspace/job.py]"):
        line = f"command: {command}\n"
        runtimes = runtimes.replace(line, line + " " * 22 + 'resources: {requests: {cpu: "1"}}\n')
    (repo / "runtimes.yaml").write_text(runtimes)
    labelled = re.compile(r"metadata: \{name: (job-\d+), namespace: team-(\d+)\}")
    for path in repo.glob("jobs-*.yaml"):
        text = labelled.sub(
            r"metadata: {name: \1, namespace: team-\2, "
            r"labels: {team: team-\2, cost-center: cc-\2}}",
            path.read_text(),
        )
        path.write_text(text)
    (repo / "registries.yaml").write_text(_REGISTRIES)


def make_one_file(repo: Path) -> None:
    """Put every TrainJob of a generated repo in one file (findings reported per file)."""
    parts = sorted(repo.glob("jobs-*.yaml"))
    (repo / "jobs.yaml").write_text("\n---\n".join(p.read_text() for p in parts))
    for part in parts:
        part.unlink()


def make_repo(parent: Path, count: int, variant: str) -> Path:
    repo = parent / f"{variant}-{count}"
    if not repo.exists():
        repo.mkdir()
        generate(repo, count)
        if variant == "clean":
            make_clean(repo)
        elif variant == "onefile":
            make_one_file(repo)
    return repo


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed_check(
    repo: Path, policies: list[Path], format: str, jobs: int | None = None
) -> tuple[float, float, str]:
    """CPU and wall seconds of ``trainc check`` as a fresh process, and its summary line.

    The ratios use CPU time: on a shared machine wall time follows the neighbours' load.
    """
    command = [sys.executable, "-m", "compiler", "check", str(repo), *map(str, policies)]
    # --no-cache: check every chunk each time (findings kept from the previous run would
    # skip the work measured); compiled CEL programs are still reused from the program
    # store, as every run after the first does
    command += ["--format", format, "--no-cache"]
    if jobs is not None:
        command += ["-j", str(jobs)]
    with tempfile.TemporaryFile() as out:
        started, started_cpu = time.perf_counter(), _children_cpu()
        done = subprocess.run(command, stdout=out, stderr=subprocess.PIPE, text=True)
        seconds, cpu = time.perf_counter() - started, _children_cpu() - started_cpu
        out.seek(0)
        tail = out.read()[-4000:].decode(errors="replace")
    if done.returncode not in (0, 1):
        raise SystemExit(f"check failed ({done.returncode}): {done.stderr[-2000:]}")
    summary = re.findall(r"(\d+ errors?, \d+ warnings?, \d+ audit)", tail + done.stderr)
    return cpu, seconds, summary[-1] if summary else "?"


def check_lines(
    parent: Path,
    count: int,
    formats: list[str],
    variants: list[str],
    jobs: int | None = None,
    repeat: int = 1,
) -> None:
    for variant in variants:
        clean = variant == "clean"
        repo = make_repo(parent, count, variant)
        policies = shipped_policies(clean)
        if clean:
            policies = [*policies, repo / "registries.yaml"]
        for format in formats:
            pairs: list[tuple[float, float, float, float]] = []  # CPU and wall, each side
            summary = "?"
            for _ in range(repeat):
                cpu, wall, _ = timed_check(repo, [], format, jobs)
                cpu_with, wall_with, summary = timed_check(repo, policies, format, jobs)
                pairs.append((cpu, cpu_with, wall, wall_with))
            ratios = sorted(with_cpu / cpu for cpu, with_cpu, _, _ in pairs)
            without, with_policies, without_wall, with_wall = (
                statistics.median(p[i] for p in pairs) for i in range(4)
            )
            spread = f" (pairs {ratios[0]:.2f}-{ratios[-1]:.2f})" if repeat > 1 else ""
            print(
                f"bench: check {count:>6} TrainJobs  {variant:8}"
                f" {format:4}  CPU without policies {without:6.2f} s, with the 8 VAPs"
                f" {with_policies:6.2f} s = {statistics.median(ratios):.2f}x{spread}"
                f"  (wall {without_wall:.2f} s, {with_wall:.2f} s; {summary})",
                flush=True,
            )


# --- one file changed, the cache warm ---------------------------------------------------


def incremental_line(parent: Path, count: int, repeat: int = 3) -> None:
    """``trainc check`` (the default ``-j``: chunks, their findings in the render cache) of
    a ``count``-TrainJob repo after one job file changed, CPU and wall seconds, the median
    of ``repeat`` changes; nothing changed; the first run; the report compared with a
    check without the cache."""
    from tests.bench.render_bench import cpu_timed, environment

    repo = parent / f"incremental-{count}"
    shutil.rmtree(repo, ignore_errors=True)
    shutil.copytree(make_repo(parent, count, "findings"), repo)
    env = {**environment(parent), "TRAINC_RENDER_CACHE": str(parent / "cache-incremental")}
    command = [sys.executable, "-m", "compiler", "check", str(repo)]
    report = parent / "incremental-report.txt"

    def run(*extra: str) -> tuple[float, float]:
        return cpu_timed([*command, *extra], env, report, codes=(0, 1))

    first = run()  # fills the cache
    unchanged = [run() for _ in range(repeat)]
    files = sorted(repo.glob("jobs-*.yaml"))
    changed = []
    for attempt in range(repeat):
        target = files[(attempt * 37) % len(files)]
        target.write_text(target.read_text().replace('value: "', 'value: "y', 1))
        changed.append(run())
    cached = report.read_bytes()
    run("--no-cache")
    same = report.read_bytes() == cached

    def median(runs: list[tuple[float, float]], which: int) -> float:
        return statistics.median(r[which] for r in runs)

    print(
        f"bench: check incremental {count} TrainJobs (default -j), one file of 100 changed: "
        f"CPU {median(changed, 1):.2f} s, wall {median(changed, 0):.2f} s (median of {repeat});"
        f" nothing changed: CPU {median(unchanged, 1):.2f} s, wall {median(unchanged, 0):.2f} s;"
        f" first run CPU {first[1]:.2f} s, wall {first[0]:.2f} s; report "
        f"{'identical to' if same else 'DIFFERENT from'} a check without the cache",
        flush=True,
    )


# --- the policy step next to the Go evaluator -------------------------------------------


def _build_vapbench() -> str | None:
    """Build the Go evaluator when it is missing or older than its sources; the reason
    when it cannot be built, else None."""
    sources = [VAPBENCH / "main.go", VAPBENCH / "go.mod", VAPBENCH / "go.sum"]
    if VAPBENCH_BIN.exists() and all(
        p.stat().st_mtime <= VAPBENCH_BIN.stat().st_mtime for p in sources
    ):
        return None
    if shutil.which("go") is None:
        return "no go on PATH"
    done = subprocess.run(
        ["go", "build", "-o", str(VAPBENCH_BIN), "."],
        cwd=VAPBENCH,
        capture_output=True,
        text=True,
    )
    return None if done.returncode == 0 else done.stderr[-400:]


def policy_step(repo: Path, policies: list[Path], scratch: Path) -> dict[str, Any]:
    """Run in this process: the check up to the policy stage, then time the policies."""
    from compiler.apiserver.manifest import Manifest
    from compiler.plan.build_plan import plan_for_paths
    from compiler.plan.check import CHECK_STAGES, _namespaces, evaluate_policies
    from compiler.plan.stages import run
    from compiler.policy.vap import PolicySet, resource_of

    before = CHECK_STAGES[: CHECK_STAGES.index(evaluate_policies)]
    build = run(plan_for_paths([str(repo), *map(str, policies)]), before)
    objects = build.checked
    for obj in objects:  # read every source position now: the Go side locates nothing
        _ = obj.origin.source.positions
    others: list[Manifest] = build.loaded.others
    namespaces = _namespaces(others, objects)
    policy_set = PolicySet.from_manifests(others)
    policy_set.evaluate(objects, namespaces)  # warm-up, as the Go side does
    seconds = cpu = float("inf")
    for _ in range(PASSES):  # the fastest pass: the least disturbed by other processes
        started, started_cpu = time.perf_counter(), time.process_time()
        findings = policy_set.evaluate(objects, namespaces)
        seconds = min(seconds, time.perf_counter() - started)
        cpu = min(cpu, time.process_time() - started_cpu)
    vap: dict[str, Any] = {"policies": [], "bindings": [], "params": [], "namespaces": namespaces}
    for manifest in others:
        if manifest.kind == "ValidatingAdmissionPolicy":
            vap["policies"].append(manifest.data)
        elif manifest.kind == "ValidatingAdmissionPolicyBinding":
            vap["bindings"].append(manifest.data)
        else:
            vap["params"].append(manifest.data)
    rows = []
    for obj in objects:
        found = resource_of(obj.data)
        rows.append(
            {"object": obj.data, "resource": found.resource, "namespaced": found.namespaced}
        )
    vap["objects"] = rows
    dump = scratch / "vap-input.json"
    dump.write_text(json.dumps(vap))
    severities = [f.severity.value for f in findings]
    return {
        "objects": len(objects),
        "seconds": seconds,
        "cpu": cpu,
        "errors": severities.count("error"),
        "warnings": severities.count("warning"),
        "input": str(dump),
    }


def policy_lines(parent: Path, count: int, variants: list[str]) -> None:
    problem = _build_vapbench()
    for variant in variants:
        clean = variant == "clean"
        repo = make_repo(parent, count, variant)
        command = [sys.executable, "-m", "tests.bench.check_bench", "--policy-step", str(repo)]
        command += ["--scratch", str(parent), "--clean" if clean else "--findings"]
        if hasattr(os, "sched_setaffinity"):
            command = ["taskset", "-c", "0", *command]
        ours = json.loads(
            subprocess.run(command, capture_output=True, text=True, check=True).stdout
        )
        rate = ours["objects"] / ours["seconds"]
        line = (
            f"bench: policy step {count:>6} TrainJobs  {variant:8}"
            f" {ours['objects']} objects x 8 VAPs: trainc {ours['seconds']:.2f} s"
            f" = {rate:,.0f} objects/s ({ours['errors']} denials, {ours['warnings']} warnings)"
        )
        if problem is not None:
            print(f"{line} | Go VAP evaluator not measured: {problem}", flush=True)
            continue
        go_command = [str(VAPBENCH_BIN), ours["input"]]
        if hasattr(os, "sched_setaffinity"):
            go_command = ["taskset", "-c", "0", *go_command]
        go = json.loads(
            subprocess.run(go_command, capture_output=True, text=True, check=True).stdout
        )
        agree = (
            "same"
            if (go["denials"], go["warnings"]) == (ours["errors"], ours["warnings"])
            else (f"DIFFERENT: Go {go['denials']} denials, {go['warnings']} warnings")
        )
        print(
            f"{line} | Go k8s.io/apiserver {go['seconds']:.2f} s = {go['objects_per_second']:,.0f}"
            f" objects/s | trainc/Go speed {rate / go['objects_per_second']:.2f}x"
            f" | decisions {agree}",
            flush=True,
        )
        Path(ours["input"]).unlink()


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--sizes", default="1000,10000,50000", help="check sizes")
    parser.add_argument("--policy-sizes", default="1000,10000", help="policy step sizes")
    parser.add_argument("--formats", default="text,json")
    parser.add_argument("--variants", default="findings,clean", help="and onefile")
    parser.add_argument("--jobs", type=int, help="check -j N (default: check's default)")
    parser.add_argument("--repeat", type=int, default=3, help="pairs per line (median ratio)")
    parser.add_argument("--incremental-size", type=int, default=10000, help="0: no such line")
    parser.add_argument("--policy-step", help=argparse.SUPPRESS)
    parser.add_argument("--scratch", help=argparse.SUPPRESS)
    parser.add_argument("--clean", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--findings", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.policy_step:
        repo = Path(args.policy_step)
        policies = shipped_policies(args.clean)
        if args.clean:
            policies = [*policies, repo / "registries.yaml"]
        print(json.dumps(policy_step(repo, policies, Path(args.scratch))))
        return 0
    variants = [v for v in args.variants.split(",") if v]
    formats = [f for f in args.formats.split(",") if f]
    with tempfile.TemporaryDirectory(prefix="trainc-check-bench-") as scratch:
        for size in (int(s) for s in args.sizes.split(",") if s):
            check_lines(Path(scratch), size, formats, variants, args.jobs, args.repeat)
        if args.incremental_size:
            incremental_line(Path(scratch), args.incremental_size)
        # before the policy step, which holds a whole build in one process
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        for size in (int(s) for s in args.policy_sizes.split(",") if s):
            policy_lines(Path(scratch), size, variants)
    print(f"bench: check runs' largest peak RSS (one process) {peak:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
