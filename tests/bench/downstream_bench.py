"""``make bench`` (below the JobSet): what the downstream checks add to ``render``, and
the cost of ``--expand pods``.

Renders N generated TrainJobs (tests/bench/render_bench.py's mix of torch, MPI and
plain runtimes) in-process through the render chain without the ``check_downstream``
stage, then times that stage alone on the result (the JobSet webhook's verdict, plus the API server's Job and
Pod validation when it is registered), best of three each; then expands every stored
JobSet to Pods, so that the cost per TrainJob shows whether ``--expand pods`` is linear.
Target (issue 27): the downstream checks add at most 25% to render at 10,000 TrainJobs.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from tests.bench.render_bench import generate


def _best(runs: int, action: object) -> float:
    assert callable(action)
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        action()
        best = min(best, time.perf_counter() - started)
    return best


def measure(count: int) -> str:
    from compiler.expand import expand
    from compiler.expand.downstream import workload_checks
    from compiler.plan import stages
    from compiler.plan.build_plan import plan_for_paths

    with tempfile.TemporaryDirectory() as tmp:
        generate(Path(tmp), count)
        plan = plan_for_paths([tmp])
        without = tuple(s for s in stages.RENDER_STAGES if s is not stages.check_downstream)
        build = stages.run(plan)  # warm: CRDs and CEL programs compiled
        assert not build.problems, build.problems[:3]
        base = _best(3, lambda: stages.run(plan, without))
        # the stage alone, on the finished build: the difference of two whole runs is
        # within the noise of a shared machine
        added = _best(3, lambda: stages.check_downstream(build))
        jobsets = [o.stored for o in build.outputs if o.stored and o.stored.get("kind") == "JobSet"]
        objects: list[object] = []
        expanding = _best(
            1, lambda: objects.extend(o for js in jobsets for o in expand([js], "pods"))
        )
    validation = "with Job/Pod validation" if workload_checks() else "webhook only"
    return (
        f"downstream: {count} TrainJobs, render {base:.2f} s, checks below the JobSet +{added:.2f} s "
        f"({added / base * 100:+.0f}%, {validation}); --expand pods {expanding:.2f} s for "
        f"{len(objects)} objects ({expanding / max(count, 1) * 1e3:.2f} ms per TrainJob)"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", default="1000,10000")
    args = parser.parse_args()
    for size in (int(s) for s in args.sizes.split(",") if s):
        print(measure(size), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
