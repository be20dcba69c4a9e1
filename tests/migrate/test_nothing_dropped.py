"""Nothing is dropped silently: every field of every input job of every case is either
carried over (mapped) or named by a diagnostic of its report."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from compiler.errors import InputError
from compiler.migrate import migrate_paths
from tests.migrate.conformance import CASES, load_cases

REPLICA_MAPS = ("ReplicaSpecs",)


def leaves(value: Any, path: str = "") -> list[str]:
    """Every leaf of a v1 object as the report writes paths: replica maps as ``[Key]``,
    list items as ``[i]``, other keys dotted."""
    if isinstance(value, dict) and value:
        out: list[str] = []
        for key, item in value.items():
            if path.endswith(REPLICA_MAPS):
                child = f"{path}[{key}]"
            else:
                child = f"{path}.{key}" if path else str(key)
            out += leaves(item, child)
        return out
    if isinstance(value, list) and value:
        out = []
        for index, item in enumerate(value):
            out += leaves(item, f"{path}[{index}]")
        return out
    return [path]


CASE_NAMES = [c.name for c in load_cases()]


@pytest.mark.parametrize("name", CASE_NAMES)
def test_every_field_is_mapped_or_reported(name: str) -> None:
    [case] = load_cases([name])
    try:
        result = migrate_paths([str(case.path)], case.options)
    except InputError as error:
        # the v1 webhook rejects this job: nothing is translated, so nothing is dropped,
        # and the rejection is said with its place
        assert error.problems and all(p.location is not None for p in error.problems)
        return
    [report] = result.reports
    if report.errors and not report.outputs:
        return  # the job is not migrated, and its report says why
    missing = [
        leaf
        for leaf in leaves(case.job)
        if not leaf.startswith(("apiVersion", "kind"))
        and leaf not in ("metadata.namespace",)
        and not report.accounts_for(leaf)
    ]
    assert not missing, f"{name}: neither mapped nor reported: {missing}"


def test_leaves_walks_replica_maps() -> None:
    job = {"spec": {"pytorchReplicaSpecs": {"Master": {"replicas": 1}}, "x": [{"a": 1}]}}
    assert leaves(job) == ["spec.pytorchReplicaSpecs[Master].replicas", "spec.x[0].a"]


def test_cases_exist() -> None:
    assert Path(CASES).is_dir() and len(CASE_NAMES) >= 60


def test_an_unhandled_field_is_caught(tmp_path: Path) -> None:
    """The walk has teeth: a field no translator looks at is neither mapped nor reported."""
    job = tmp_path / "job.yaml"
    job.write_text(
        "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: teeth}\n"
        "spec:\n  runPolicy: {futureField: 1}\n  pytorchReplicaSpecs:\n    Worker:\n"
        "      template:\n        spec:\n          containers: [{name: pytorch, image: i, command: [x]}]\n"
    )
    [report] = migrate_paths([str(job)]).reports
    assert not report.accounts_for("spec.runPolicy.futureField")
    assert report.accounts_for("spec.pytorchReplicaSpecs[Worker].template.spec.containers[0].image")
