"""Findings: what validation reports, whichever check found it.

A finding names the rule or policy, the object, the field path and the source
location. For an object trainc rendered, the location is the input that produced it
(the TrainJob, or the runtime where the field came from), never the output file.

Severities follow ValidatingAdmissionPolicy's validationActions: ``error`` (Deny, the
built-in checks), ``warning`` (Warn) and ``audit`` (Audit). ``trainc check`` exits 1
when any ``error`` is found, 0 otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from compiler.errors import ObjectRef, Problem, SourceLocation
from compiler.load.manifest import Manifest


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    AUDIT = "audit"


@dataclass(frozen=True)
class Finding:
    """One result of one check on one object."""

    rule: str  # e.g. "crd-schema", "crd-cel", "webhook", "vap/<policy name>", "cue/<file>"
    severity: Severity
    message: str
    object: ObjectRef | None = None
    field_path: str | None = None
    location: SourceLocation | None = None
    stage: str = "input"  # "input" or "output" (found in what trainc rendered)
    details: tuple[tuple[str, str], ...] = ()  # e.g. (("reason", "Invalid"),) or audit annotations

    @classmethod
    def of_problem(
        cls, problem: Problem, rule: str, severity: Severity = Severity.ERROR
    ) -> Finding:
        return cls(
            rule, severity, problem.message, problem.object, problem.field_path, problem.location
        )


@dataclass
class PolicyObject:
    """An object a policy sees: input as loaded, or output as rendered.

    ``origin`` is where to point a finding: the manifest itself for inputs, the
    TrainJob that produced it for outputs.
    """

    data: dict[str, Any]
    origin: Manifest
    stage: str = "input"
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ref(self) -> ObjectRef:
        metadata = self.data.get("metadata") or {}
        return ObjectRef(
            str(self.data.get("kind", "")), str(metadata.get("name", "")), metadata.get("namespace")
        )
