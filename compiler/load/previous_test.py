"""Transition rules (oldSelf) run when a previous revision of the object is given."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from compiler.errors import Problem
from compiler.load.loader import ObjectKey, load_previous, load_texts_collect, object_key

JOB = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {{name: llm, namespace: team}}
spec:
  runtimeRef: {{name: {runtime}}}
  managedBy: {managed_by}
"""


def _load(text: str, previous: dict[ObjectKey, dict[str, Any]] | None = None) -> list[Problem]:
    _, problems = load_texts_collect([("job.yaml", text)], previous=previous)
    return problems


def test_create_runs_no_transition_rules() -> None:
    text = JOB.format(runtime="b", managed_by="kueue.x-k8s.io/multikueue")
    assert _load(text) == []


def test_update_that_changes_an_immutable_field_is_rejected_at_its_line() -> None:
    before = JOB.format(runtime="a", managed_by="trainer.kubeflow.org/trainjob-controller")
    after = JOB.format(runtime="a", managed_by="kueue.x-k8s.io/multikueue")
    result, problems = load_texts_collect([("old.yaml", before)])
    assert problems == []
    previous = {object_key(m.data): m.data for m in result.objects}
    problems = _load(after, previous)
    assert [(p.field_path, p.location.line if p.location else 0) for p in problems] == [
        ("spec.managedBy", 6)
    ]
    assert "immutable" in problems[0].message.lower()


def test_unchanged_update_passes(tmp_path: Path) -> None:
    text = JOB.format(runtime="a", managed_by="trainer.kubeflow.org/trainjob-controller")
    (tmp_path / "job.yaml").write_text(text)
    previous = load_previous([str(tmp_path)])
    assert len(previous) == 1
    assert _load(text, previous) == []
