"""The ``trainc check`` report as SARIF 2.1.0, for code scanning.

One run whose ``tool.driver`` is trainc with one ``rules`` entry per rule that
reported (built-in rules described, ``vap/<policy>`` and ``cue/<file>`` named). Each
finding is one ``result``:

* ``ruleId`` and ``ruleIndex``; ``level`` ``error`` / ``warning`` / ``note`` (audit);
* ``message.text``: ``<object>: <field path>: <message>``;
* ``locations[0].physicalLocation``: ``artifactLocation.uri`` relative to the repository
  root (the nearest directory above the working directory holding ``.git``, else the
  working directory) with ``uriBaseId`` ``%SRCROOT%``; a file outside it is an
  absolute ``file:`` URI. ``region.startLine`` / ``startColumn`` (1-based, in Unicode
  code points: ``run.columnKind``), left out for a finding about a whole file;
* ``locations[0].logicalLocations``: the Kubernetes object (``kind: resource``,
  ``fullyQualifiedName`` ``TrainJob vision/smoke``); for a finding on a rendered
  object that is the rendered object, while the physical location is the input that
  produced the field;
* ``partialFingerprints["trainc/v1"]``: a hash of rule, object, field path and
  message, stable when lines move;
* ``properties``: ``severity`` (trainc's), ``stage``, ``fieldPath`` and the details.

The document carries no absolute path of the machine it was made on unless a file
lies outside the repository, so the same inputs give the same bytes.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import quote

from compiler import __version__
from compiler.errors import Finding, Severity
from compiler.load.discover import repository_root
from compiler.model.check import RULE_DESCRIPTIONS, CheckResult

__all__ = ["SARIF_SCHEMA", "SARIF_VERSION", "render_sarif", "report_sarif"]

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
SRCROOT = "%SRCROOT%"

_LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.AUDIT: "note"}


def _artifact(file: str, root: Path, cwd: Path) -> dict[str, str] | None:
    if file.startswith("<"):  # <stdin>: no artifact to point at
        return None
    path = Path(os.path.abspath(cwd / file))
    try:
        relative = path.relative_to(root)
    except ValueError:
        return {"uri": path.as_uri()}
    return {"uri": quote(relative.as_posix()), "uriBaseId": SRCROOT}


def _rule(rule_id: str) -> dict[str, Any]:
    family, _, name = rule_id.partition("/")
    if rule_id in RULE_DESCRIPTIONS:
        text = RULE_DESCRIPTIONS[rule_id]
    elif family == "vap":
        text = f"ValidatingAdmissionPolicy {name}"
    elif family == "cue":
        text = f"CUE constraints in {name}"
    else:
        text = rule_id
    return {
        "id": rule_id,
        "name": rule_id.replace("/", "_").replace("-", "_"),
        "shortDescription": {"text": text},
        "properties": {"tags": ["kubernetes", "kubeflow-trainer", family]},
    }


def _message(finding: Finding) -> str:
    parts = [str(p) for p in (finding.object, finding.field_path) if p]
    parts.append(finding.message)
    return ": ".join(parts)


def _fingerprint(finding: Finding) -> str:
    key = "\0".join(
        (finding.rule, str(finding.object or ""), finding.field_path or "", finding.message)
    )
    return hashlib.sha256(key.encode()).hexdigest()[:32]


def _result(finding: Finding, rule_index: int, root: Path, cwd: Path) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": finding.rule,
        "ruleIndex": rule_index,
        "level": _LEVELS[finding.severity],
        "message": {"text": _message(finding)},
    }
    location: dict[str, Any] = {}
    if finding.location is not None:
        artifact = _artifact(finding.location.file, root, cwd)
        if artifact is not None:
            physical: dict[str, Any] = {"artifactLocation": artifact}
            if finding.location.line > 0:
                region = {"startLine": finding.location.line}
                if finding.location.column > 0:
                    region["startColumn"] = finding.location.column
                physical["region"] = region
            location["physicalLocation"] = physical
    if finding.object is not None:
        location["logicalLocations"] = [
            {
                "name": finding.object.name,
                "fullyQualifiedName": str(finding.object),
                "kind": "resource",
            }
        ]
    if location:
        result["locations"] = [location]
    result["partialFingerprints"] = {"trainc/v1": _fingerprint(finding)}
    properties: dict[str, Any] = {"severity": finding.severity.value, "stage": finding.stage}
    if finding.field_path is not None:
        properties["fieldPath"] = finding.field_path
    properties.update(dict(finding.details))
    result["properties"] = properties
    return result


def report_sarif(
    result: CheckResult, root: Path | None = None, cwd: Path | None = None
) -> dict[str, Any]:
    """The SARIF log; file names are taken relative to ``cwd`` (default: the current one)."""
    cwd = Path(os.path.abspath(cwd or Path.cwd()))
    root = (
        Path(os.path.abspath(root))
        if root is not None
        else (repository_root(cwd) or Path(os.path.abspath(cwd)))
    )
    rule_ids = sorted({f.rule for f in result.findings})
    index = {rule_id: i for i, rule_id in enumerate(rule_ids)}
    invocation: dict[str, Any] = {
        "executionSuccessful": not result.input_error,
        "exitCode": result.exit_code,
    }
    if result.notes:
        invocation["toolExecutionNotifications"] = [
            {"level": "note", "message": {"text": note}} for note in result.notes
        ]
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "trainc",
                "version": __version__,
                "semanticVersion": __version__,
                "rules": [_rule(r) for r in rule_ids],
            }
        },
        "invocations": [invocation],
        "columnKind": "unicodeCodePoints",
        "results": [_result(f, index[f.rule], root, cwd) for f in result.findings],
    }
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}


def render_sarif(result: CheckResult, root: Path | None = None, cwd: Path | None = None) -> str:
    return json.dumps(report_sarif(result, root, cwd), indent=2, ensure_ascii=False) + "\n"
