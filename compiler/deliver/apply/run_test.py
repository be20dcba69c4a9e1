"""The messages of an apply that stops: bounded lists, whatever the size of the run."""

from __future__ import annotations

from compiler.cli.apply import wait_outcome
from compiler.deliver.apply.client import Unreachable
from compiler.deliver.apply.run import Interrupted, Outcome


def test_an_interrupted_apply_names_ten_objects_of_each_list_and_counts_the_rest() -> None:
    done = [Outcome(f"JobSet ns/job-{i:03d}", "created") for i in range(45)]
    pending = [f"JobSet ns/job-{i:03d}" for i in range(45, 345)]
    message = str(Interrupted(Unreachable("the API server went away"), done, pending))
    lines = message.splitlines()
    assert lines[1] == (
        "applied (45): "
        + ", ".join(f"JobSet ns/job-{i:03d}" for i in range(10))
        + ", ... and 35 more"
    )
    assert lines[2].startswith("not applied (300): JobSet ns/job-045, ")
    assert lines[2].endswith("JobSet ns/job-054, ... and 290 more")
    assert max(len(line) for line in lines) < 250


def test_a_short_list_is_named_whole() -> None:
    message = str(Interrupted(Unreachable("gone"), [Outcome("JobSet a/b", "unchanged")], []))
    assert message.splitlines()[1:3] == ["applied (1): JobSet a/b", "not applied (0): nothing"]


def test_wait_says_timed_out_also_when_another_jobset_failed() -> None:
    states = {"a/one": "failed", "a/two": "waiting", "a/three": "started"}
    assert wait_outcome(states, 30) == (
        1,
        "--wait: timed out after 30s: 1 of 3 JobSets not started: a/two",
    )
    many = {f"a/j{i:02d}": "waiting" for i in range(12)}
    code, message = wait_outcome(many, 2.5)
    assert code == 2
    assert message.startswith("--wait: timed out after 2.5s: 12 of 12 JobSets not started: a/j00")
    assert message.endswith("a/j09, ... and 2 more")
    assert wait_outcome({"a/one": "started"}, 30) == (0, "")
    assert wait_outcome({"a/one": "failed"}, 30) == (1, "")
