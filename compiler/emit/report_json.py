"""The ``trainc check`` report as JSON, for programs.

Schema (``schemaVersion`` 1; fields are only ever added within a version)::

    {
      "schemaVersion": 1,
      "tool": {"name": "trainc", "version": "0.1.0"},
      "summary": {
        "errors": 1, "warnings": 0, "audit": 0,   # findings by severity
        "objects": {"input": 3, "output": 4},     # objects checked
        "policyFiles": ["policies/limits.cue"],   # CUE files found among the paths
        "exitCode": 1                             # what `trainc check` exits with
      },
      "findings": [
        {
          "rule": "crd-schema",             # built-in rule, "vap/<policy>" or "cue/<file>"
          "severity": "error",              # "error" | "warning" | "audit"
          "stage": "input",                 # "input" | "output" (found in rendered objects)
          "message": "Invalid value: ...",
          "object": {"kind": "TrainJob", "name": "smoke", "namespace": "vision"},  # or null
          "fieldPath": "spec.trainer.numNodes",                                   # or null
          "location": {"file": "jobs/smoke.yaml", "line": 11, "column": 5},       # or null
          "details": {"reason": "Invalid"}  # rule-specific strings, e.g. "renderedFrom"
        }
      ],
      "notes": ["..."]                      # checks that were skipped, and why
    }

``location`` always names an input file (for an output finding, the input that
produced the field); ``line`` and ``column`` are 1-based, both absent when the finding is
about the whole file (one that cannot be read, say).
Findings are sorted by file, line and column. The text is deterministic: the same
inputs give the same bytes.
"""

from __future__ import annotations

import json
from typing import Any

from compiler import __version__
from compiler.errors import Finding, Severity, SourceLocation
from compiler.plan.check import CheckResult

__all__ = ["SCHEMA_VERSION", "finding_json", "render_json", "report_json"]

SCHEMA_VERSION = 1


def finding_json(finding: Finding) -> dict[str, Any]:
    ref = finding.object
    location = finding.location
    return {
        "rule": finding.rule,
        "severity": finding.severity.value,
        "stage": finding.stage,
        "message": finding.message,
        "object": None
        if ref is None
        else {"kind": ref.kind, "name": ref.name, "namespace": ref.namespace},
        "fieldPath": finding.field_path,
        "location": None if location is None else _location(location),
        "details": dict(finding.details),
    }


def _location(location: SourceLocation) -> dict[str, Any]:
    """A place in a file; the whole file (a file that cannot be read) has no line."""
    if location.line <= 0:
        return {"file": location.file}
    return {"file": location.file, "line": location.line, "column": location.column}


def report_json(result: CheckResult) -> dict[str, Any]:
    stages = [o.stage for o in result.objects]
    return {
        "schemaVersion": SCHEMA_VERSION,
        "tool": {"name": "trainc", "version": __version__},
        "summary": {
            "errors": result.count(Severity.ERROR),
            "warnings": result.count(Severity.WARNING),
            "audit": result.count(Severity.AUDIT),
            "objects": {"input": stages.count("input"), "output": stages.count("output")},
            "policyFiles": list(result.policy_files),
            "exitCode": result.exit_code,
        },
        "findings": [finding_json(f) for f in result.findings],
        "notes": list(result.notes),
    }


def render_json(result: CheckResult) -> str:
    return json.dumps(report_json(result), indent=2, ensure_ascii=False) + "\n"
