from __future__ import annotations

from compiler.deliver.diff import InputImpact, diff_renders
from compiler.deliver.diff_format import render_markdown, render_text
from compiler.model.objects import RenderedObject


def _cm(name: str, value: str) -> RenderedObject:
    data = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "n"},
        "data": {"k": value},
    }
    return RenderedObject("n", "job", data)


def test_markdown_escapes_pipes_and_backticks_and_is_deterministic() -> None:
    diff = diff_renders({"c": [_cm("x", "a|b")]}, {"c": [_cm("x", "``x")]}, "main")
    diff.impact = [InputImpact("jobs/a|b.yaml", "modified", [("c", "n", "job")])]
    markdown = render_markdown(diff)
    assert markdown == render_markdown(diff)
    assert "| `c` | `n/job` | changed | ConfigMap ~ | 1 |" in markdown
    assert "| `jobs/a\\|b.yaml` | modified | `c: n/job` |" in markdown
    assert "`a|b` → ``` ``x ```" in markdown
    assert "<summary><code>c</code> · <code>n/job</code> — changed, 1 field</summary>" in markdown


def test_text_groups_by_cluster_and_says_when_nothing_changed() -> None:
    diff = diff_renders({"c": [_cm("x", "1")]}, {"c": [], "d": [_cm("x", "1")]}, "main")
    text = render_text(diff)
    assert "cluster c\n  TrainJob n/job: removed\n    - ConfigMap n/x (v1): removed" in text
    assert "cluster d\n  TrainJob n/job: added\n    + ConfigMap n/x (v1): added" in text
    assert render_text(diff_renders({}, {}, "main")).startswith(
        "trainc diff: no rendered output changes against main"
    )
