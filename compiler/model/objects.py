"""What the render makes: the rendered objects, per TrainJob, and their admission.

Records only (no stage): :class:`RenderedObject` (an object and the TrainJob it was
rendered for), :class:`TrainJobSummary` (one TrainJob's objects, the Secrets they need,
or why it was skipped) and :class:`AdmittedOutput` (an object after the API server's
create path). The stages of :mod:`compiler.plan` make them; writers (:mod:`compiler.emit`)
and delivery steps (:mod:`compiler.deliver`) read them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from compiler.apiserver.manifest import Manifest
from compiler.errors import Problem
from compiler.render.info import SecretRequirement

__all__ = ["AdmittedOutput", "RenderedObject", "TrainJobSummary", "sorted_objects"]


@dataclass(frozen=True)
class RenderedObject:
    """An object and the TrainJob it was rendered for."""

    trainjob_namespace: str
    trainjob_name: str
    data: dict[str, Any]

    @property
    def sort_key(self) -> tuple[str, str, str, str, str]:
        return (
            self.trainjob_namespace,
            self.trainjob_name,
            str(self.data.get("kind", "")),
            str(self.data.get("apiVersion", "")),
            str(self.data.get("metadata", {}).get("name", "")),
        )

    @property
    def relative_path(self) -> str:
        """``<namespace>/<group>_<Kind>_<name>.yaml``, POSIX style."""
        data = self.data
        api_version = str(data.get("apiVersion", ""))
        group = api_version.split("/")[0] if "/" in api_version else "core"
        metadata = data.get("metadata") or {}
        namespace = metadata.get("namespace") or self.trainjob_namespace
        return f"{namespace}/{group}_{data.get('kind', '')}_{metadata.get('name', '')}.yaml"


def sorted_objects(objects: Iterable[RenderedObject]) -> list[RenderedObject]:
    return sorted(objects, key=lambda o: o.sort_key)


@dataclass
class TrainJobSummary:
    namespace: str
    name: str
    objects: list[RenderedObject] = field(default_factory=list)
    secret_requirements: list[SecretRequirement] = field(default_factory=list)
    skipped: str | None = None
    # the inputs it came from (for reports that point an output field back to its input)
    trainjob: Manifest | None = field(default=None, repr=False, compare=False)
    runtime: Manifest | None = field(default=None, repr=False, compare=False)

    def line(self) -> str:
        head = f"{self.namespace}/{self.name}"
        if self.skipped:
            return f"{head}: skipped ({self.skipped})"
        parts = []
        for obj in sorted_objects(self.objects):
            kind = obj.data["kind"]
            spec = obj.data.get("spec", {})
            if kind == "JobSet":
                jobs = spec.get("replicatedJobs") or []
                pods = sum(
                    (j.get("replicas", 1)) * (j["template"]["spec"].get("parallelism", 1))
                    for j in jobs
                )
                parts.append(f"JobSet ({len(jobs)} replicated jobs, {pods} pods)")
            elif kind == "PodGroup":
                group = obj.data["apiVersion"].split("/")[0]
                parts.append(f"PodGroup {group} (minMember {spec.get('minMember')})")
            else:
                parts.append(f"{kind} {obj.data['metadata']['name']}")
        for requirement in self.secret_requirements:
            parts.append(f"needs Secret {requirement.name} (generated on apply)")
        return f"{head}: " + ", ".join(parts)


@dataclass
class AdmittedOutput:
    """One rendered object after the API server's create path."""

    summary: TrainJobSummary
    rendered: RenderedObject
    stored: dict[str, Any] | None  # as the server stores it; None when it refuses it
    problems: list[Problem]
    validated: bool  # False: no CRD of its kind is known (the object is kept as rendered)
