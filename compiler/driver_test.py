"""The pipeline over whole input trees."""

from __future__ import annotations

from pathlib import Path

from compiler.driver import compile_loaded
from compiler.load.loader import load_collect

EXAMPLE = Path(__file__).resolve().parents[1] / "example"


def test_a_render_with_nothing_to_report_never_works_out_positions() -> None:
    # Positions cost a re-parse of each stream; asking for them on every object (say, to
    # locate a field before knowing there is an error) would double the load time.
    loaded, problems = load_collect([str(EXAMPLE)])
    result, problems = compile_loaded(loaded, problems)
    assert problems == [] and result.objects
    manifests = loaded.objects + loaded.others
    assert manifests
    assert all(m.source._positions is None for m in manifests)
