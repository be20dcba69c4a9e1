"""The pipeline over whole input trees."""

from __future__ import annotations

from pathlib import Path

from compiler.plan.build_plan import plan_for_paths
from compiler.plan.stages import run

EXAMPLE = Path(__file__).resolve().parents[2] / "example"


def test_a_render_with_nothing_to_report_never_works_out_positions() -> None:
    # Positions cost a re-parse of each stream; asking for them on every object (say, to
    # locate a field before knowing there is an error) would double the load time.
    build = run(plan_for_paths([str(EXAMPLE)]))
    assert build.problems == [] and build.objects
    manifests = build.loaded.objects + build.loaded.others
    assert manifests
    assert all(m.source._positions is None for m in manifests)
