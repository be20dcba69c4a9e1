"""``make bench`` (below the JobSet): what the downstream checks add to ``render``, and
the cost of ``--expand pods``.

Renders N generated TrainJobs (tests/bench/render_bench.py's mix of torch, MPI and
plain runtimes) with ``trainc render DIR --no-cache -j 1 -o OUT``, run in this process
through the CLI, twice a round: as it is, and with the check below each JobSet (the
``check_downstream`` stage's call, the JobSet webhook's verdict and the API server's Job
and Pod validation) answering nothing, so that both go through the same chain and
differ only by the checks. Each run starts with an empty memory of valid pod specs, as a
new ``trainc`` process does. The figure is CPU time (``time.process_time``: this
process's own, steadier than wall time on a shared machine), the best of the rounds.

Then every stored JobSet is expanded to Pods (``render --expand pods``' chain), and the
cost per TrainJob is printed for each size and, last, compared across sizes: equal
costs per TrainJob mean ``--expand pods`` is linear.
Target (issue 27): the downstream checks add at most 25% to render at 10,000 TrainJobs.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.bench.render_bench import generate


@contextmanager
def _checks(on: bool) -> Iterator[None]:
    """The render chain with the checks below the JobSet, or with them answering nothing."""
    from compiler.apiserver.workloads import pod
    from compiler.expand import downstream
    from compiler.plan import stages

    real = stages.downstream_problems
    pod.forget_valid_specs()  # a new process's memory
    downstream.forget_outcomes()
    if not on:
        stages.downstream_problems = lambda *args, **kwargs: []
    try:
        yield
    finally:
        stages.downstream_problems = real


def _render_cpu(repo: Path, out: Path, checks: bool) -> float:
    from compiler.cli import main

    shutil.rmtree(out, ignore_errors=True)
    with _checks(checks):
        started = time.process_time()
        code = main(["render", str(repo), "--no-cache", "-j", "1", "-q", "-o", str(out)])
        seconds = time.process_time() - started
    if code != 0:
        raise RuntimeError(f"render of {repo} exited {code}")
    return seconds


def _expand_cpu(repo: Path) -> tuple[float, int]:
    """CPU seconds to expand every JobSet of ``repo``'s render to Pods, and the objects."""
    from compiler.expand import expand
    from compiler.plan import stages
    from compiler.plan.build_plan import plan_for_paths

    build = stages.run(plan_for_paths([str(repo)]))
    assert not build.problems, build.problems[:3]
    jobsets: list[dict[str, Any]] = [
        o.stored for o in build.outputs if o.stored and o.stored.get("kind") == "JobSet"
    ]
    started = time.process_time()
    count = sum(len(expand([js], "pods")) for js in jobsets)
    return time.process_time() - started, count


def measure(count: int, rounds: int, expand_costs: dict[int, float]) -> str:
    from compiler.expand.downstream import workload_checks

    with tempfile.TemporaryDirectory() as tmp:
        repo, out = Path(tmp) / "repo", Path(tmp) / "out"
        repo.mkdir()
        generate(repo, count)
        _render_cpu(repo, out, True)  # warm: CRDs, CEL programs, imports
        best = {True: float("inf"), False: float("inf")}
        for _ in range(rounds):  # paired: each round runs both, close in time
            for checks in (False, True):
                best[checks] = min(best[checks], _render_cpu(repo, out, checks))
        expanding, objects = _expand_cpu(repo)
    expand_costs[count] = expanding / max(count, 1)
    without, with_checks = best[False], best[True]
    validation = "with Job/Pod validation" if workload_checks() else "webhook only"
    return (
        f"downstream: {count} TrainJobs, render -j 1 CPU {without:.2f} s without the checks "
        f"below the JobSet, {with_checks:.2f} s with them: "
        f"{(with_checks - without) / without * 100:+.0f}% ({validation}; target +25% at "
        f"10000); --expand pods {expanding:.2f} s CPU for {objects} objects "
        f"({expand_costs[count] * 1e3:.2f} ms per TrainJob)"
    )


def linearity(costs: dict[int, float]) -> str | None:
    """The ``--expand pods`` cost per TrainJob of the largest size against the smallest."""
    if len(costs) < 2:
        return None
    low, high = min(costs), max(costs)
    ratio = costs[high] / costs[low]
    return (
        f"downstream: --expand pods per TrainJob {costs[low] * 1e3:.2f} ms at {low}, "
        f"{costs[high] * 1e3:.2f} ms at {high}: x{ratio:.2f} for x{high / low:.0f} TrainJobs"
    )


def main(argv: list[str] | None = None, echo: Callable[[str], None] = print) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--rounds", type=int, default=2, help="paired runs per size (best of)")
    args = parser.parse_args(argv)
    costs: dict[int, float] = {}
    for size in (int(s) for s in args.sizes.split(",") if s):
        echo(measure(size, args.rounds, costs))
    line = linearity(costs)
    if line:
        echo(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
