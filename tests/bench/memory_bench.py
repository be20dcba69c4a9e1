"""``make bench``: trainc render's peak memory whatever the file layout (issue 28).

N TrainJobs (the render bench's mix of runtimes, :mod:`tests.bench.render_bench`) laid
out two ways: every TrainJob in one multi-document file, and one TrainJob a file (N
files); each rendered into a folder and to stdout, as a user does, one process per
figure (``-j 1``, a cold render cache of its own), timed whole, with its peak RSS from
``wait4`` (the largest of the process and its workers). One line per layout.

The issue's budget is 512 MiB at 100,000 TrainJobs for each layout and output. One file
of 100,000 of these TrainJobs is about 87 MB, over the default input file limit
(``TRAINC_MAX_FILE_BYTES``, 64 MiB): the line says when the run raised it.

A benchmark, not a test: it prints figures and never fails on them. ``--size`` (default
100,000; ``make bench MEMORY_SIZE=10000``), ``--layouts``, ``--outputs``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from tests.bench.render_bench import RUNTIMES, TRAINJOB, environment, timed, trainc

LAYOUTS = ("one-file", "files")


def trainjob(i: int) -> str:
    runtime = ("bench-torch", "bench-mpi", "bench-plain")[i % 3]
    return TRAINJOB.format(
        i=i, team=i % 17, runtime=runtime, nodes=1 + i % 8, cpu=2 + i % 6, mem=8 * (1 + i % 4),
        gpus=i % 9,
    )  # fmt: skip


def generate(repo: Path, size: int, layout: str) -> int:
    """The repo of ``size`` TrainJobs in ``layout``; the size of its largest file."""
    (repo / "jobs").mkdir(parents=True)
    (repo / "runtimes.yaml").write_text(RUNTIMES)
    if layout == "one-file":
        with open(repo / "jobs" / "sweep.yaml", "w") as out:
            for i in range(size):
                out.write(("---\n" if i else "") + trainjob(i))
        return (repo / "jobs" / "sweep.yaml").stat().st_size
    for i in range(size):
        (repo / "jobs" / f"job-{i:06d}.yaml").write_text(trainjob(i))
    return len(RUNTIMES)


def bench(size: int, layout: str, scratch: Path, env: dict[str, str], outputs: list[str]) -> None:
    repo = scratch / f"repo-{layout}"
    largest = generate(repo, size, layout)
    env = dict(env)
    raised = ""
    if largest > 64 * 1024 * 1024:
        env["TRAINC_MAX_FILE_BYTES"] = str(256 * 1024 * 1024)
        raised = f"; TRAINC_MAX_FILE_BYTES raised for its {largest / 2**20:.0f} MiB file"
    figures = []
    for output in outputs:
        own = {**env, "TRAINC_RENDER_CACHE": str(scratch / f"cache-{layout}-{output}")}
        target = "-" if output == "stdout" else str(scratch / f"out-{layout}")
        stdout = scratch / f"stream-{layout}.yaml" if output == "stdout" else None
        command = trainc(str(repo), "-o", target, "-q", "-j", "1")
        seconds, peak = timed(command, own, stdout)
        figures.append(f"-> {output} {seconds:6.1f} s, peak RSS {peak:4.0f} MiB")
    shape = "in one file" if layout == "one-file" else f"in {size} files"
    print(
        f"render memory: {size} TrainJobs {shape}: {' | '.join(figures)} "
        f"(-j 1, cold cache{raised})",
        flush=True,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--size", type=int, default=int(os.environ.get("MEMORY_SIZE") or 100000))
    parser.add_argument("--layouts", default=",".join(LAYOUTS))
    parser.add_argument("--outputs", default="folder,stdout")
    parser.add_argument("--scratch", help="where repos and outputs go (default: a temp dir)")
    args = parser.parse_args()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="trainc-memory-", dir=args.scratch) as folder:
        scratch = Path(folder)
        env = environment(scratch)
        timed([sys.executable, "-m", "compiler", "--help"], env)  # bytecode written once
        for layout in args.layouts.split(","):
            bench(args.size, layout, scratch, env, args.outputs.split(","))
    print(f"memory bench: done in {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
