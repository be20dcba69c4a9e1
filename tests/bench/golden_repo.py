"""The golden-template repo: N TrainJobs made from the golden cases, one file each.

Issue 28 measures trainc against upstream's Go render on "TrainJobs from the golden
templates, one file each": the TrainJobs of every golden case that the real controller
renders (``expected.yaml`` for the default Trainer release) and for which no controller
below the Trainer refused anything (no ``downstream.yaml``), taken in turn and renamed
``<name>-<i>`` so that each is unique, each in its own file ``job-<i>.yaml``; beside
them, one file per runtime and per other object of those cases (their PriorityClasses).
The cases' runtimes never clash (checked: one runtime of one kind, namespace and name
means one definition). Deterministic: the same count gives the same bytes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tests.conformance.cases import Case, all_cases


def golden_cases() -> list[Case]:
    """The cases whose TrainJobs render without error, by name."""
    return [
        case
        for case in all_cases()
        if case.expected_objects_path.is_file() and not case.downstream_path.is_file()
    ]


def _documents(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if isinstance(d, dict)]


def templates() -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """The TrainJobs of :func:`golden_cases` in case order, and every other object of
    those cases by file name (one per runtime, PriorityClass, ...)."""
    jobs: list[dict[str, Any]] = []
    context: dict[str, dict[str, Any]] = {}
    for case in golden_cases():
        for path in case.inputs:
            for document in _documents(path):
                if document.get("kind") == "TrainJob":
                    jobs.append(document)
                    continue
                metadata = document.get("metadata") or {}
                name = "-".join(
                    str(part)
                    for part in (document["kind"], metadata.get("namespace"), metadata["name"])
                    if part
                ).lower()
                if context.setdefault(f"{name}.yaml", document) != document:
                    raise ValueError(f"two golden cases define {name} differently")
    return jobs, context


def generate_golden(directory: Path, count: int) -> int:
    """Write the repo of ``count`` TrainJobs into ``directory``; the number of templates."""
    jobs, context = templates()
    for name, document in sorted(context.items()):
        (directory / name).write_text(yaml.safe_dump(document, sort_keys=False))
    for i in range(count):
        job = dict(jobs[i % len(jobs)])
        job["metadata"] = {**job["metadata"], "name": f"{job['metadata']['name']}-{i}"}
        (directory / f"job-{i:05d}.yaml").write_text(yaml.safe_dump(job, sort_keys=False))
    return len(jobs)


if __name__ == "__main__":  # python -m tests.bench.golden_repo DIR COUNT
    import sys

    made = generate_golden(Path(sys.argv[1]), int(sys.argv[2]))
    print(f"{sys.argv[2]} TrainJobs from {made} golden templates in {sys.argv[1]}")
