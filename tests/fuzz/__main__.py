"""``python -m tests.fuzz --count N``: see :mod:`tests.fuzz`."""

from __future__ import annotations

import argparse
import gc
import json
import multiprocessing
import os
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from tests.fuzz import surfaces

_STATES: dict[str, Any] = {}


def _init(names: list[str]) -> None:
    # A case runs trainc's main() as its CLI process would, and a render by chunks starts
    # a process pool of its own: a pool worker is daemonic, which would forbid that.
    multiprocessing.current_process().daemon = False
    for name in names:
        _STATES[name] = surfaces.load(name).prepare()


def _work(task: tuple[str, int, int, float]) -> tuple[int, dict[str, Any]]:
    name, seed, index, limit = task
    verdict, detail = surfaces.load(name).run_case(_STATES[name], seed, index, limit)
    if detail is not None:
        detail = {"surface": name, **detail}
    if index % 200 == 0:
        gc.collect()
    counts = {
        "surface": name,
        "code": verdict.code,
        "traceback": bool(verdict.traceback),
        "hang": verdict.hang,
        "memory": verdict.memory,
        "unlocated": bool(verdict.unlocated),
        "wrong": bool(verdict.wrong),
    }
    return index, {"counts": counts, "detail": detail if verdict.bad else None}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz")
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--time-limit", type=float, default=20.0, help="seconds per case")
    parser.add_argument("--out", type=Path, default=Path("fuzz-out"), help="failing cases")
    parser.add_argument(
        "--surfaces",
        default=",".join(surfaces.SURFACES),
        help="comma-separated NAME or NAME:WEIGHT (default: all, weight 1 each)",
    )
    args = parser.parse_args(argv)
    try:
        weights = surfaces.weights(args.surfaces)
    except ValueError as error:
        parser.error(str(error))
    names = list(weights)
    order = surfaces.interleave(weights)

    started = time.monotonic()
    tasks = [
        (order[index % len(order)], args.seed, index, args.time_limit)
        for index in range(args.count)
    ]
    tally: Counter[str] = Counter()
    codes: Counter[str] = Counter()
    per_surface: dict[str, Counter[str]] = {name: Counter() for name in names}
    failures: list[dict[str, Any]] = []
    with multiprocessing.get_context("fork").Pool(
        args.jobs, initializer=_init, initargs=(names,)
    ) as pool:
        for done, (index, result) in enumerate(pool.imap_unordered(_work, tasks, chunksize=8), 1):
            counts = result["counts"]
            codes[str(counts["code"])] += 1
            for key in ("traceback", "hang", "memory", "unlocated", "wrong"):
                tally[key] += int(counts[key])
            if counts["code"] not in (0, 1, 2) and not counts["hang"]:
                tally["exit"] += 1
            surface = per_surface[counts["surface"]]
            surface["cases"] += 1
            surface["bad"] += int(result["detail"] is not None)
            if result["detail"] is not None:
                failures.append({"case": index, **result["detail"]})
            if done % 5000 == 0:
                print(
                    f"fuzz: {done}/{args.count} ({time.monotonic() - started:.0f}s)",
                    file=sys.stderr,
                )
    if failures:
        args.out.mkdir(parents=True, exist_ok=True)
        for failure in sorted(failures, key=lambda f: f["case"])[:200]:
            (args.out / f"case-{failure['case']}.json").write_text(
                json.dumps(failure, indent=2, ensure_ascii=False), encoding="utf-8"
            )
        print(f"fuzz: failing cases written to {args.out}/", file=sys.stderr)
    elapsed = time.monotonic() - started
    print(
        "fuzz: by surface: "
        + ", ".join(
            f"{name} {counted['cases']} cases ({counted['bad']} bad)"
            for name, counted in per_surface.items()
        )
    )
    print(
        f"fuzz: exit codes {dict(sorted(codes.items()))}, {tally['exit']} outside 0/1/2, "
        f"{tally['memory']} over 1 GiB, {tally['wrong']} false successes, "
        f"{elapsed:.0f}s with {args.jobs} workers"
    )
    print(
        f"fuzz: {args.count} cases, {tally['traceback']} tracebacks, {tally['hang']} hangs, "
        f"{tally['unlocated']} without location"
    )
    bad = sum(tally[k] for k in ("traceback", "hang", "memory", "unlocated", "wrong", "exit"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
