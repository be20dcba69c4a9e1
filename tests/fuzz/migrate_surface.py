"""The ``migrate`` surface: mutated v1 jobs (every kind), MPI Operator MPIJobs and
Volcano Jobs through ``trainc migrate`` (issue 25).

Seeds are the migration test cases (``tests/migrate/cases/*/*.yaml``). A case applies the
render surface's mutations (:func:`tests.fuzz.engine.mutate`) and, half the time, one
aimed at what migrate reads: a replica count, a port or a role replaced by a hostile
value (``"3"``, ``2.5``, ``.inf``, ``100000000``, ``-1``, ...). It runs in-process with a
random choice of output (``-o -`` or ``-o DIR``), report format and migrate options, and
is judged as the render surface judges (traceback, hang, memory, an exit outside 0/1/2,
an error line at exit 2 that does not start with a file of the case).
"""

from __future__ import annotations

import gc
import random
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from tests.fuzz.engine import (
    HOSTILE,
    REPO,
    Seed,
    Verdict,
    judged_run,
    limit_memory,
    mutate,
    run_main,
    write_case,
)

CASES = REPO / "tests" / "migrate" / "cases"
# values a replica count, a port or a number of slots may be given
NUMBERS: list[Any] = [
    "3",
    2.5,
    "two",
    float("inf"),
    float("nan"),
    100_000_000,
    2**31,
    -1,
    0,
    None,
    True,
    [],
    {},
    "1e3",
]
AIMED = (
    "replicas",
    "containerPort",
    "slotsPerWorker",
    "minAvailable",
    "maxReplicas",
    "minReplicas",
    "nProcPerNode",
    "nprocPerNode",
    "template",
    "containers",
    "runPolicy",
    "schedulingPolicy",
    "elasticPolicy",
    "plugins",
    "tasks",
    "ports",
    "command",
    "env",
    "name",
    "image",
    "restartPolicy",
    "metadata",
    "spec",
)


def load_seeds() -> list[Seed]:
    """One seed per migration test case: its YAML files (not ``case.yaml``)."""
    seeds = []
    for directory in sorted(CASES.iterdir()):
        files = {
            p.name: p.read_text(encoding="utf-8")
            for p in sorted(directory.glob("*.yaml"))
            if p.name != "case.yaml"
        }
        if files:
            seeds.append(Seed(directory.name, files))
    return seeds


def _walk(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = []
    stack = [(value, path)]
    while stack:
        item, at = stack.pop()
        if isinstance(item, dict):
            for key, sub in item.items():
                out.append((*at, key))
                stack.append((sub, (*at, key)))
        elif isinstance(item, list):
            for index, sub in enumerate(item):
                stack.append((sub, (*at, index)))
    return out


def aimed(text: str, rng: random.Random) -> str | None:
    """One field migrate reads (a key of :data:`AIMED`) given a hostile value."""
    try:
        documents = list(yaml.safe_load_all(text))
    except yaml.YAMLError:
        return None
    targets = [
        (index, path)
        for index, document in enumerate(documents)
        for path in _walk(document)
        if path[-1] in AIMED
    ]
    if not targets:
        return None
    index, path = rng.choice(targets)
    parent = documents[index]
    for part in path[:-1]:
        parent = parent[part]
    parent[path[-1]] = rng.choice(NUMBERS + HOSTILE)
    try:
        return yaml.safe_dump_all(documents, sort_keys=False, allow_unicode=True)
    except (yaml.YAMLError, RecursionError):
        return None


def commands(root: Path, rng: random.Random) -> list[str]:
    argv = ["migrate", str(root / "in")]
    argv += rng.choice([["-o", "-"], ["-o", str(root / "out")]])
    if rng.random() < 0.3:
        argv += ["--report-format", "json"]
    if rng.random() < 0.2:
        argv.append("--no-compat-env")
    if rng.random() < 0.2:
        argv.append("--allow-lossy")
    if rng.random() < 0.15:
        argv += ["--v1-gang-scheduler", rng.choice(["volcano", "scheduler-plugins-scheduler"])]
    if rng.random() < 0.1:
        argv += ["--merge-template", rng.choice(["worker", "master"])]
    return argv


def run_case(
    seeds: list[Seed], seed: int, index: int, limit: float
) -> tuple[Verdict, dict[str, Any]]:
    """Case ``index`` of run ``seed``: generated, written, run and judged."""
    rng = random.Random(seed * 1_000_003 + index)
    chosen = rng.choice(seeds)
    files: dict[str, str | None]
    if rng.random() < 0.5:
        files = dict(chosen.files)
        for _ in range(rng.choice((1, 1, 2))):
            name = rng.choice(sorted(files))
            text = files[name]
            changed = aimed(text, rng) if text is not None else None
            if changed is not None:
                files[name] = changed
    else:
        files = mutate(chosen, rng)
    root = Path(tempfile.mkdtemp(prefix="trainc-fuzz-migrate-"))
    try:
        (root / "in").mkdir()
        write_case(root / "in", files, rng)
        return judged_run(commands(root, rng), root, chosen.name, files, limit)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def prepare() -> list[Seed]:
    """Seeds, a warm process (the Trainer CRDs and runtimes read once) and the memory
    limit (see :mod:`tests.fuzz.surfaces`)."""
    import compiler.cli

    no_freeze: Callable[[], None] = lambda: None  # noqa: E731 - as the render surface
    compiler.cli.tune_gc = no_freeze
    seeds = load_seeds()
    warm = Path(tempfile.mkdtemp(prefix="trainc-fuzz-migrate-"))
    try:
        for name in ("tf-workers-shim", "volcano-tensorflow", "mpi-v2beta1-pi"):
            run_main(["migrate", str(CASES / name), "-o", str(warm / "out")], 120.0)
    finally:
        shutil.rmtree(warm, ignore_errors=True)
    gc.collect()
    limit_memory()
    return seeds
