"""The migration report: per job, what was mapped where, what has no v2 equivalent and
what the user must decide.

A :class:`Diagnostic` has a stable UPPER_SNAKE code, a severity (``error``: no faithful
output; ``warning``: output produced, behaviour differs; ``info``: renames and
behaviour-preserving changes), the v1 field it is about, the v2 field it went to, what
was done (``translated``, ``approximated``, ``shimmed``, ``dropped``, ``rejected``),
a sentence, the nearest workaround where there is one, and ``covers``: the differences
in what the training process sees that it accounts for (``env:main:MASTER_PORT``,
``initContainer:init-pytorch``; shell patterns), which ``make migrate-conformance``
checks against the v1 operator's pods.

    >>> d = Diagnostic("TTL_DELETES_JOBSET_ONLY", "warning", "spec.runPolicy.ttlSecondsAfterFinished",
    ...                "the TrainJob stays", target_path="runtime.spec.template.spec.ttlSecondsAfterFinished")
    >>> d.line()
    'warning TTL_DELETES_JOBSET_ONLY spec.runPolicy.ttlSecondsAfterFinished -> runtime.spec.template.spec.ttlSecondsAfterFinished: the TrainJob stays'
"""

from __future__ import annotations

import fnmatch
import json
from dataclasses import dataclass, field
from typing import Any

SEVERITIES = ("error", "warning", "info")


@dataclass(frozen=True)
class Diagnostic:
    code: str
    severity: str
    source_path: str
    message: str
    target_path: str = ""
    action: str = "translated"
    workaround: str = ""
    decide: bool = False  # the user must decide something
    covers: tuple[str, ...] = ()

    def line(self) -> str:
        where = self.source_path or "(job)"
        if self.target_path:
            where += f" -> {self.target_path}"
        text = f"{self.severity} {self.code} {where}: {self.message}"
        if self.workaround:
            text += f" (workaround: {self.workaround})"
        return text

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "code": self.code,
            "severity": self.severity,
            "sourcePath": self.source_path,
            "action": self.action,
            "message": self.message,
        }
        if self.target_path:
            out["targetPath"] = self.target_path
        if self.workaround:
            out["workaround"] = self.workaround
        if self.decide:
            out["decide"] = True
        if self.covers:
            out["covers"] = list(self.covers)
        return out


@dataclass(frozen=True)
class Mapping:
    """One v1 field (or subtree) carried over to a v2 place."""

    source_path: str
    target_path: str


@dataclass(frozen=True)
class ObjectId:
    api_version: str
    kind: str
    namespace: str
    name: str

    def as_json(self) -> dict[str, str]:
        return {
            "apiVersion": self.api_version,
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
        }

    def __str__(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}"


@dataclass
class JobReport:
    source: ObjectId
    file: str
    outputs: list[ObjectId] = field(default_factory=list)
    runtime_reason: str = ""  # why a dedicated runtime, or which existing runtime fits
    mappings: list[Mapping] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    # every v1 path the translation looked at (mapped, reported or consumed)
    accounted: set[str] = field(default_factory=set)
    # ports the v1 defaulter added to the main container (informational in a pod)
    defaulted_ports: list[tuple[str, int]] = field(default_factory=list)

    def add(self, diagnostic: Diagnostic) -> None:
        if diagnostic not in self.diagnostics:
            self.diagnostics.append(diagnostic)

    def mapped(self, source_path: str, target_path: str) -> None:
        mapping = Mapping(source_path, target_path)
        if mapping not in self.mappings:
            self.mappings.append(mapping)

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]

    def sorted_diagnostics(self) -> list[Diagnostic]:
        return sorted(self.diagnostics, key=lambda d: (d.source_path, d.code, d.message))

    def accounts_for(self, path: str) -> bool:
        """Whether the v1 field at ``path`` was mapped or reported (or a field above it)."""
        places = self.accounted | {m.source_path for m in self.mappings}
        places |= {d.source_path for d in self.diagnostics}
        places.discard("")
        return any(path == p or path.startswith((p + ".", p + "[")) for p in places)

    def covers(self, difference: str) -> bool:
        """Whether a diagnostic of this report names ``difference``."""
        return any(
            fnmatch.fnmatchcase(difference, pattern)
            for d in self.diagnostics
            for pattern in d.covers
        )

    def as_json(self) -> dict[str, Any]:
        return {
            "source": self.source.as_json(),
            "file": self.file,
            "outputs": [o.as_json() for o in self.outputs],
            "runtime": self.runtime_reason,
            "mapped": [
                {"sourcePath": m.source_path, "targetPath": m.target_path}
                for m in sorted(self.mappings, key=lambda m: (m.source_path, m.target_path))
            ],
            "diagnostics": [d.as_json() for d in self.sorted_diagnostics()],
            "decisions": [d.code for d in self.sorted_diagnostics() if d.decide],
        }

    def text(self) -> str:
        lines = [f"{self.source} ({self.source.api_version}, {self.file})"]
        if self.outputs:
            lines.append("  outputs: " + ", ".join(str(o) for o in self.outputs))
        if self.runtime_reason:
            lines.append(f"  runtime: {self.runtime_reason}")
        if self.mappings:
            lines.append("  mapped:")
            for m in sorted(self.mappings, key=lambda m: (m.source_path, m.target_path)):
                lines.append(f"    {m.source_path} -> {m.target_path}")
        for title, info in (("no v2 equivalent / behaviour differs", False), ("notes", True)):
            chosen = [d for d in self.sorted_diagnostics() if (d.severity == "info") == info]
            if chosen:
                lines.append(f"  {title}:")
                lines.extend(f"    {d.line()}" for d in chosen)
        decisions = [d for d in self.sorted_diagnostics() if d.decide]
        if decisions:
            lines.append("  you decide:")
            lines.extend(f"    {d.code}: {d.workaround or d.message}" for d in decisions)
        return "\n".join(lines)


def reports_json(reports: list[JobReport]) -> str:
    return json.dumps({"reports": [r.as_json() for r in reports]}, indent=2, sort_keys=False) + "\n"


def reports_text(reports: list[JobReport]) -> str:
    return "\n\n".join(r.text() for r in reports) + ("\n" if reports else "")
