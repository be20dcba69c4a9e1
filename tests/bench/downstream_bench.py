"""``make bench`` (below the JobSet): what the downstream checks add to ``render``, and
the cost of ``--expand pods``.

Renders N TrainJobs with ``trainc render DIR --no-cache -j J -o OUT``, run in this
process through the CLI, twice a round: as it is, and with the check below each JobSet
(the ``check_downstream`` stage's call: the JobSet webhook's verdict and the API
server's Job and Pod validation) answering nothing, so that both go through the same
chain and differ only by the checks. Two repos: the generator's (tests/bench/render_bench.py's
mix of torch, MPI and plain runtimes) and the golden templates'
(tests/bench/golden_repo.py), at ``-j 1`` and at the default ``-j``. Each run starts
with empty memories (of valid pod specs, of JobSets below which nothing was refused), as
a new ``trainc`` process does. The figure is CPU time, this process's and its workers'
(user + sys); the line gives the best of the rounds with and without, and the range and
median of the rounds' paired ratios.

Then every stored JobSet of the generator's repo is expanded to Pods (``render --expand
pods``' chain), and the cost per TrainJob is printed for each size and, last, compared
across sizes: equal costs per TrainJob mean ``--expand pods`` is linear.
Target (issue 27): the downstream checks add at most 25% to render at 10,000 TrainJobs.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import sys
import tempfile
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


def _cpu() -> float:
    """CPU seconds so far of this process and of its workers that ended."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    workers = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + workers.ru_utime + workers.ru_stime


def _render_cpu(repo: Path, out: Path, checks: bool, jobs: str = "1") -> float:
    from compiler.cli import main

    shutil.rmtree(out, ignore_errors=True)
    parallel = [] if jobs == "default" else ["-j", jobs]
    with _checks(checks):
        started = _cpu()
        code = main(["render", str(repo), "--no-cache", *parallel, "-q", "-o", str(out)])
        seconds = _cpu() - started
    if code != 0:
        raise RuntimeError(f"render of {repo} exited {code}")
    return seconds


def _overhead(repo: Path, out: Path, rounds: int, jobs: str) -> tuple[float, float, list[float]]:
    """The best CPU without and with the checks, and each round's with/without - 1."""
    _render_cpu(repo, out, True, jobs)  # warm: CRDs, CEL programs, imports
    best = {True: float("inf"), False: float("inf")}
    ratios = []
    for _ in range(rounds):  # paired: each round runs both, close in time
        seconds = {checks: _render_cpu(repo, out, checks, jobs) for checks in (False, True)}
        ratios.append(seconds[True] / seconds[False] - 1)
        for checks in (False, True):
            best[checks] = min(best[checks], seconds[checks])
    return best[False], best[True], ratios


def _overhead_line(
    repo_name: str, count: int, jobs: str, figures: tuple[float, float, list[float]]
) -> str:
    from compiler.expand.downstream import workload_checks

    without, with_checks, ratios = figures
    validation = "with Job/Pod validation" if workload_checks() else "webhook only"
    return (
        f"downstream: {count} TrainJobs ({repo_name}), render -j {jobs} CPU {without:.2f} s "
        f"without the checks below the JobSet, {with_checks:.2f} s with them: "
        f"{(with_checks - without) / without * 100:+.0f}% (rounds {min(ratios) * 100:+.0f}% to "
        f"{max(ratios) * 100:+.0f}%, median {statistics.median(ratios) * 100:+.0f}%; "
        f"{validation}; target +25% at 10000)"
    )


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
    started = _cpu()
    count = sum(len(expand([js], "pods")) for js in jobsets)
    return _cpu() - started, count


def measure(
    count: int, rounds: int, expand_costs: dict[int, float], jobs: list[str], golden: bool
) -> Iterator[str]:
    """The overhead lines of the generator's repo (and the golden templates' with
    ``golden``) of ``count`` TrainJobs at each ``-j``, then the ``--expand pods`` line."""
    from tests.bench.golden_repo import generate_golden

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        repos = [("generated", Path(tmp) / "repo", generate)]
        if golden:
            repos.append(("golden templates", Path(tmp) / "golden", generate_golden))
        for name, repo, make in repos:
            repo.mkdir()
            make(repo, count)
            for parallel in jobs:
                yield _overhead_line(name, count, parallel, _overhead(repo, out, rounds, parallel))
        expanding, objects = _expand_cpu(repos[0][1])
    expand_costs[count] = expanding / max(count, 1)
    yield (
        f"downstream: {count} TrainJobs, --expand pods {expanding:.2f} s CPU for {objects} "
        f"objects ({expand_costs[count] * 1e3:.2f} ms per TrainJob)"
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
    parser.add_argument("--rounds", type=int, default=3, help="paired runs per size and -j")
    parser.add_argument("--jobs", default="1,default", help="the -j values (default: trainc's)")
    parser.add_argument("--no-golden", action="store_true", help="the generator's repo only")
    args = parser.parse_args(argv)
    costs: dict[int, float] = {}
    jobs = [j for j in args.jobs.split(",") if j]
    for size in (int(s) for s in args.sizes.split(",") if s):
        for line in measure(size, args.rounds, costs, jobs, not args.no_golden):
            echo(line)
    line = linearity(costs)
    if line:
        echo(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
