"""``make bench`` (validation part): built-in validation throughput, and cue's cost per run.

Built-in validation = the API server's create path for every TrainJob (strict decoding,
pruning, defaults, structural schema, metadata) plus all the TrainJob CRD's CEL rules
that apply on create. Target (issue "Validate ..."): >= 2,000 TrainJobs/s. The cue CLI
runs once per run, so its cost should not grow with the number of objects: measured
for 10 and 1,000 objects when `.cue` support and the CLI are present.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from tests.bench.render_bench import generate


def builtin_throughput(count: int) -> tuple[float, float]:
    """(objects/s for parse + validate, objects/s for validation alone)."""
    from compiler.apiserver.yaml_source import parse_yaml
    from compiler.load.loader import load_collect

    with tempfile.TemporaryDirectory() as tmp:
        generate(Path(tmp), count)
        files = sorted(Path(tmp).glob("*.yaml"))
        load_collect([tmp])  # warm: CRDs compiled, CEL programs compiled
        started = time.perf_counter()
        result, problems = load_collect([tmp])
        total = time.perf_counter() - started
        started = time.perf_counter()
        for path in files:
            parse_yaml(path.read_bytes(), str(path))
        parsing = time.perf_counter() - started
    assert not problems, problems[:3]
    objects = len(result.objects)
    return objects / total, objects / max(total - parsing, 1e-9)


def cue_seconds(count: int) -> float | None:
    try:
        from compiler.load.loader import load_collect
        from compiler.policy.cue import CueUnavailable, run_cue
        from compiler.policy.objects import PolicyObject
    except ImportError:
        return None
    policies = sorted(Path(__file__).resolve().parents[2].glob("policies/**/*.cue"))
    policies = [p for p in policies if "tests" not in p.parts]
    if not policies:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        generate(Path(tmp), count)
        loaded, _ = load_collect([tmp])
        objects = [PolicyObject(m.data, m) for m in loaded.objects]
        try:
            started = time.perf_counter()
            run_cue(policies, objects)
        except CueUnavailable:
            return None
        return time.perf_counter() - started


def main() -> int:
    for count in (1000, 10000):
        with_parsing, validation = builtin_throughput(count)
        print(
            f"bench: validate {count:>6} objects  {validation:8.0f} objects/s "
            f"(schema + defaults + CEL; {with_parsing:.0f}/s with YAML parsing)"
        )
    small, large = cue_seconds(10), cue_seconds(1000)
    if small is None or large is None:
        print("bench: cue not measured (no .cue policies or no cue CLI)")
    else:
        print(f"bench: cue one run: {small:.2f} s for 10 objects, {large:.2f} s for 1,000 objects")
    return 0


if __name__ == "__main__":
    sys.exit(main())
