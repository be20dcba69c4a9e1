"""``make bench``: trainc render's peak memory whatever the file layout (issue 28).

N TrainJobs (the render bench's mix of runtimes, :mod:`tests.bench.render_bench`) laid
out two ways: every TrainJob in one multi-document file, and one TrainJob a file (N
files); each rendered into a folder and to stdout, as a user does, one process per
figure (``-j 1``, a cold render cache of its own), timed whole, with its peak RSS from
``wait4`` (the largest of the process and its workers). One line per layout.

The issue's budget is 512 MiB at 100,000 TrainJobs for each layout and output, with the
default limits: one file of 100,000 of these TrainJobs is about 83 MiB, within the
default input file limit (``TRAINC_MAX_FILE_BYTES``, 128 MiB). ``--at-limit`` adds the
one-file layout padded (an annotation on each TrainJob) to just under that limit: the
peak a file trainc accepts by default can cost.

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

from compiler.apiserver.source_bytes import DEFAULT_MAX_FILE_BYTES
from tests.bench.render_bench import RUNTIMES, TRAINJOB, environment, timed, trainc

LAYOUTS = ("one-file", "files")


def trainjob(i: int) -> str:
    runtime = ("bench-torch", "bench-mpi", "bench-plain")[i % 3]
    return TRAINJOB.format(
        i=i, team=i % 17, runtime=runtime, nodes=1 + i % 8, cpu=2 + i % 6, mem=8 * (1 + i % 4),
        gpus=i % 9,
    )  # fmt: skip


def padded(i: int, size: int) -> str:
    """:func:`trainjob` with an annotation that brings ``size`` of them to just under the
    default file limit."""
    text = trainjob(i)
    note = (DEFAULT_MAX_FILE_BYTES - 200_000) // size - len(text) - 40
    return text.replace("metadata: {", f'metadata: {{annotations: {{note: "{"x" * note}"}}, ', 1)


def generate(repo: Path, size: int, layout: str) -> int:
    """The repo of ``size`` TrainJobs in ``layout``; the size of its largest file."""
    (repo / "jobs").mkdir(parents=True)
    (repo / "runtimes.yaml").write_text(RUNTIMES)
    if layout in ("one-file", "one-file-at-limit"):
        make = (lambda i: padded(i, size)) if layout == "one-file-at-limit" else trainjob
        with open(repo / "jobs" / "sweep.yaml", "w") as out:
            for i in range(size):
                out.write(("---\n" if i else "") + make(i))
        return (repo / "jobs" / "sweep.yaml").stat().st_size
    for i in range(size):
        (repo / "jobs" / f"job-{i:06d}.yaml").write_text(trainjob(i))
    return len(RUNTIMES)


def bench(size: int, layout: str, scratch: Path, env: dict[str, str], outputs: list[str]) -> None:
    repo = scratch / f"repo-{layout}"
    largest = generate(repo, size, layout)
    env = {k: v for k, v in env.items() if not k.startswith("TRAINC_MAX_FILE_")}
    limits = f"; default limits, largest file {largest / 2**20:.0f} MiB"
    if largest > DEFAULT_MAX_FILE_BYTES:
        env["TRAINC_MAX_FILE_BYTES"] = str(4 * largest)
        limits = f"; TRAINC_MAX_FILE_BYTES raised for its {largest / 2**20:.0f} MiB file"
    figures = []
    for output in outputs:
        own = {**env, "TRAINC_RENDER_CACHE": str(scratch / f"cache-{layout}-{output}")}
        target = "-" if output == "stdout" else str(scratch / f"out-{layout}")
        stdout = scratch / f"stream-{layout}.yaml" if output == "stdout" else None
        command = trainc(str(repo), "-o", target, "-q", "-j", "1")
        seconds, peak = timed(command, own, stdout)
        figures.append(f"-> {output} {seconds:6.1f} s, peak RSS {peak:4.0f} MiB")
    shape = {
        "one-file": "in one file",
        "one-file-at-limit": "in one file at the size limit",
    }.get(layout, f"in {size} files")
    print(
        f"render memory: {size} TrainJobs {shape}: {' | '.join(figures)} "
        f"(-j 1, cold cache{limits})",
        flush=True,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--size", type=int, default=int(os.environ.get("MEMORY_SIZE") or 100000))
    parser.add_argument("--layouts", default=",".join(LAYOUTS))
    parser.add_argument(
        "--at-limit", action="store_true", help="and one file padded to the file size limit"
    )
    parser.add_argument("--outputs", default="folder,stdout")
    parser.add_argument("--scratch", help="where repos and outputs go (default: a temp dir)")
    args = parser.parse_args()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="trainc-memory-", dir=args.scratch) as folder:
        scratch = Path(folder)
        env = environment(scratch)
        timed([sys.executable, "-m", "compiler", "--help"], env)  # bytecode written once
        layouts = [*args.layouts.split(","), *(["one-file-at-limit"] if args.at_limit else [])]
        for layout in layouts:
            bench(args.size, layout, scratch, env, args.outputs.split(","))
    print(f"memory bench: done in {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
