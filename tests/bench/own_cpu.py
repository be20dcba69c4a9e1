"""``trainc`` that writes the CPU seconds its own process spent (not its workers') to the
file ``$TRAINC_BENCH_OWN_CPU`` when it ends (``python -m tests.bench.own_cpu render ...``):
with ``-j N`` that is the serial part of a run (reading the inputs, the context alone,
merging, writing the output), what the workers' CPU is not. Only for benchmarks."""

from __future__ import annotations

import os
import resource

from compiler.cli import main


def run() -> int:
    try:
        return main()
    finally:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        with open(os.environ["TRAINC_BENCH_OWN_CPU"], "w", encoding="utf-8") as out:
            out.write(f"{usage.ru_utime + usage.ru_stime}\n")


if __name__ == "__main__":
    raise SystemExit(run())
