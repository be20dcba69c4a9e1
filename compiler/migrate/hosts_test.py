"""Values that list every pod (TF_CONFIG, host variables) are sized before they are
built: a job with 100,000,000 replicas is a report error within seconds, in a process
whose address space is limited to 1 GiB, not a list of every host (issue 25)."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from compiler.migrate.common import MAX_OBJECT_BYTES, digit_count, listing_bytes

ROOT = Path(__file__).resolve().parents[2]
HUGE = 100_000_000
TEMPLATE = """
      template:
        spec:
          containers:
            - name: {container}
              image: img:1
              command: [python, train.py]
"""


def _v1(kind: str, field: str, container: str, roles: dict[str, int]) -> str:
    text = f"apiVersion: kubeflow.org/v1\nkind: {kind}\nmetadata:\n  name: big\nspec:\n  {field}:\n"
    for role, replicas in roles.items():
        text += f"    {role}:\n      replicas: {replicas}\n      restartPolicy: OnFailure"
        text += TEMPLATE.format(container=container)
    return text


def _volcano(plugin: str, tasks: dict[str, int]) -> str:
    text = "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: big\nspec:\n"
    text += f"  plugins:\n    {plugin}: []\n  tasks:\n"
    for name, replicas in tasks.items():
        text += f"    - name: {name}\n      replicas: {replicas}"
        text += TEMPLATE.format(container=name)
    return text


JOBS = {
    "tf-workers": _v1("TFJob", "tfReplicaSpecs", "tensorflow", {"Worker": HUGE}),
    "tf-ps-worker": _v1("TFJob", "tfReplicaSpecs", "tensorflow", {"PS": 1, "Worker": HUGE}),
    "xgboost": _v1("XGBoostJob", "xgbReplicaSpecs", "xgboost", {"Master": 1, "Worker": HUGE}),
    "volcano-tensorflow": _volcano("tensorflow", {"ps": 1, "worker": HUGE}),
    "volcano-pytorch": _volcano("pytorch", {"master": 1, "worker": HUGE}),
    "volcano-mpi": _volcano("mpi", {"master": 1, "worker": HUGE}),
}


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


@pytest.mark.parametrize("name", sorted(JOBS))
def test_a_huge_replica_count_is_a_report_error_not_a_list(name: str, tmp_path: Path) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(JOBS[name], encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "compiler", "migrate", str(path), "-o", "-"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        preexec_fn=_limit_memory,
        timeout=60,
    )
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 1, done.stderr
    assert "error HOST_LIST_TOO_LARGE" in done.stderr
    assert done.stdout == ""


def test_sizes_are_computed_exactly() -> None:
    assert digit_count(0, 1234) == sum(len(str(i)) for i in range(1234))
    assert digit_count(95, 1005) == sum(len(str(i)) for i in range(95, 1005))
    hosts = ",".join(f"j-node-0-{i}.j" for i in range(7, 7 + 130))
    assert listing_bytes(130, len("j-node-0-.j"), 7) == len(hosts)
    assert listing_bytes(0, 10) == 0


def test_a_list_that_fits_is_still_written(tmp_path: Path) -> None:
    """The bound is the stored object's, not a small arbitrary one: 2,000 workers fit."""
    from compiler.cli import main

    path = tmp_path / "job.yaml"
    path.write_text(_v1("TFJob", "tfReplicaSpecs", "tensorflow", {"Worker": 2000}))
    out = tmp_path / "out"
    assert main(["migrate", str(path), "-o", str(out), "--report", str(tmp_path / "r")]) == 0
    text = (out / "default" / "big.yaml").read_text()
    assert "big-node-0-1999.big:2222" in text
    assert len(text) < MAX_OBJECT_BYTES
