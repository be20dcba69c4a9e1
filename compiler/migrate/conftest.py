"""The ``migrated`` fixture: one YAML text through ``migrate_paths``, the result as
plain data (the dedicated runtime and the TrainJob by kind) with its reports."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from compiler.migrate import Migration, Options, migrate_paths


@dataclass
class Result:
    migration: Migration
    objects: dict[str, Any] = field(default_factory=dict)  # kind -> plain object

    @property
    def codes(self) -> set[str]:
        return {d.code for r in self.migration.reports for d in r.diagnostics}

    def rjob(self, name: str) -> dict[str, Any]:
        """A replicated job of the runtime, by name."""
        jobs = self.objects["TrainingRuntime"]["spec"]["template"]["spec"]["replicatedJobs"]
        return next(j for j in jobs if j["name"] == name)

    def container(self, rjob: str, index: int = 0) -> dict[str, Any]:
        pod = self.rjob(rjob)["template"]["spec"]["template"]
        return pod["spec"]["containers"][index]  # type: ignore[no-any-return]

    def env(self, rjob: str, index: int = 0) -> dict[str, Any]:
        """The container's env as name -> value (or valueFrom)."""
        return {
            e["name"]: e.get("value", e.get("valueFrom"))
            for e in self.container(rjob, index).get("env") or []
        }


Migrate = Callable[..., Result]


@pytest.fixture
def migrated(tmp_path: Path) -> Migrate:
    def run(text: str, **options: Any) -> Result:
        path = tmp_path / "job.yaml"
        path.write_text(text)
        migration = migrate_paths([str(path)], Options(**options))
        plain = json.loads(json.dumps(migration.objects))
        return Result(migration, {o["kind"]: o for o in plain})

    return run
