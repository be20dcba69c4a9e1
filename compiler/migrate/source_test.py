"""Reading v1 jobs: an anchor defined twice is valid YAML (the later one counts) and
prints no ruamel warning (a stray line on stderr that names no file; fuzz finding)."""

from __future__ import annotations

import warnings
from pathlib import Path

from compiler.migrate.source import read_sources

ROOT = Path(__file__).resolve().parents[2]


def test_a_reused_anchor_warns_nothing(tmp_path: Path) -> None:
    text = (ROOT / "tests/migrate/cases/tf-workers-shim/job.yaml").read_text()
    text = text.replace("namespace: ml", "namespace: &a ml\n  labels: {x: *a, y: &a b, z: *a}")
    path = tmp_path / "job.yaml"
    path.write_text(text)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        [job] = list(read_sources([str(path)]))
    assert [str(w.message) for w in caught] == []
    assert dict(job.data["metadata"]["labels"]) == {"x": "ml", "y": "b", "z": "b"}
