"""What an apply sends, in which order, from the build of one cluster.

Order (fixed): the Namespaces the project manages (a project cluster's ``namespaces``,
with their labels), ConfigMaps, other kinds, PodGroups, JobSets, then the required
Secrets, each right after the JobSets (in resolved mode a required Secret is owned by
its JobSet, so the JobSet must exist first: deleting the job removes its keys). In
``trainjobs`` delivery: runtimes (ClusterTrainingRuntime, TrainingRuntime), then
TrainJobs; the Trainer controller makes the rest, required Secrets included (they are
reported ``skipped``). Within a kind: by namespace and name.

    >>> [phase_of(k) for k in ("Namespace", "ConfigMap", "PodGroup", "JobSet", "TrainJob")]
    [0, 2, 4, 5, 8]
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from compiler.errors import InputError
from compiler.model.objects import RenderedObject, TrainJobSummary
from compiler.plan.compile import extension_refusals
from compiler.plan.gitops import annotate_objects
from compiler.render.info import SecretRequirement
from compiler.upstream.names import (
    CLUSTER_TRAINING_RUNTIME_KIND,
    TRAINING_RUNTIME_KIND,
    TRAINJOB_KIND,
)

if TYPE_CHECKING:
    from compiler.model.build import Build
    from compiler.project.model import ApplySetSetting

__all__ = [
    "DELIVERIES",
    "ApplyPlan",
    "Delivery",
    "Desired",
    "Required",
    "apply_plan",
    "as_trainjobs",
    "phase_of",
]

Json = dict[str, Any]
Delivery = Literal["resolved", "trainjobs"]
DELIVERIES: tuple[Delivery, ...] = ("resolved", "trainjobs")

_PHASES = {
    "Namespace": 0,
    "Secret": 1,
    "ConfigMap": 2,
    "PodGroup": 4,
    "JobSet": 5,
    CLUSTER_TRAINING_RUNTIME_KIND: 7,
    TRAINING_RUNTIME_KIND: 7,
    TRAINJOB_KIND: 8,
}
OTHER_PHASE = 3
REQUIRED_SECRET_PHASE = 6


def phase_of(kind: str) -> int:
    return _PHASES.get(kind, OTHER_PHASE)


@dataclass
class Desired:
    """One object to apply and the TrainJob it belongs to ("" for project objects)."""

    obj: Json
    trainjob_namespace: str = ""
    trainjob_name: str = ""

    @property
    def kind(self) -> str:
        return str(self.obj.get("kind", ""))

    @property
    def api_version(self) -> str:
        return str(self.obj.get("apiVersion", ""))

    @property
    def name(self) -> str:
        return str((self.obj.get("metadata") or {}).get("name", ""))

    @property
    def namespace(self) -> str:
        return str((self.obj.get("metadata") or {}).get("namespace") or "")

    @property
    def title(self) -> str:
        where = f"{self.namespace}/{self.name}" if self.namespace else self.name
        return f"{self.kind} {where}"

    @property
    def sort_key(self) -> tuple[int, str, str, str]:
        return (phase_of(self.kind), self.kind, self.namespace, self.name)


@dataclass
class Required:
    """A required Secret and, in resolved mode, the JobSet that owns it."""

    requirement: SecretRequirement
    jobset: str | None = None
    trainjob_name: str = ""

    @property
    def title(self) -> str:
        return f"Secret {self.requirement.namespace}/{self.requirement.name}"


@dataclass
class ApplyPlan:
    delivery: Delivery
    objects: list[Desired] = field(default_factory=list)
    secrets: list[Required] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (title, why)
    # the project cluster's ApplySet (trainc.yaml ``applyset``, defaults filled in)
    applyset: ApplySetSetting | None = None


def _namespace_object(name: str, labels: dict[str, str]) -> Json:
    metadata: Json = {"name": name}
    if labels:
        metadata["labels"] = dict(labels)
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": metadata}


def apply_plan(build: Build, delivery: Delivery = "resolved") -> ApplyPlan:
    """The objects of ``build`` to apply, in apply order (objects are deep copies)."""
    plan = ApplyPlan(delivery)
    cluster = build.plan.cluster
    if cluster is not None:
        plan.applyset = cluster.applyset
        for name, labels in sorted(cluster.namespaces.items()):
            plan.objects.append(Desired(_namespace_object(name, dict(labels))))
    if delivery == "trainjobs":
        for summary in as_trainjobs(build).summaries:
            for rendered in summary.objects:
                plan.objects.append(
                    Desired(rendered.data, rendered.trainjob_namespace, rendered.trainjob_name)
                )
        for requirement in build.secret_requirements:
            plan.skipped.append(
                (
                    f"Secret {requirement.namespace}/{requirement.name}",
                    "trainjobs delivery: the Trainer controller creates it",
                )
            )
    else:
        for summary in build.summaries:
            jobsets = [o for o in summary.objects if o.data.get("kind") == "JobSet"]
            for rendered in summary.objects:
                plan.objects.append(
                    Desired(
                        copy.deepcopy(rendered.data),
                        rendered.trainjob_namespace,
                        rendered.trainjob_name,
                    )
                )
            for requirement in summary.secret_requirements:
                owner = jobsets[0].data["metadata"]["name"] if jobsets else None
                plan.secrets.append(Required(requirement, owner, summary.name))
    plan.objects.sort(key=lambda d: d.sort_key)
    plan.secrets.sort(key=lambda r: (r.requirement.namespace, r.requirement.name))
    return plan


def as_trainjobs(build: Build) -> Build:
    """``build`` with its objects replaced by the runtimes and TrainJobs it read, after
    input overlays and admission (what ``--emit trainjobs`` delivers): one summary per
    runtime and per TrainJob, no required Secrets (the Trainer controller makes them).
    Only a build without problems should be emitted."""
    from dataclasses import replace

    kinds = (CLUSTER_TRAINING_RUNTIME_KIND, TRAINING_RUNTIME_KIND, TRAINJOB_KIND)
    if refused := extension_refusals(build.loaded.objects):
        raise InputError(refused)
    summaries = []
    for manifest in build.loaded.objects:
        if manifest.kind not in kinds:
            continue
        data = copy.deepcopy(manifest.data)
        data.pop("status", None)
        namespace = manifest.namespace or ""
        trainjob = manifest.name if manifest.kind == TRAINJOB_KIND else ""
        summary = TrainJobSummary(
            namespace, manifest.name if trainjob else f"{manifest.kind} {manifest.name}"
        )
        summary.objects = [RenderedObject(namespace, trainjob, data)]
        summaries.append(summary)
    result = replace(build, summaries=summaries)
    annotate_objects(result)  # the cluster's delivery hints, on what is delivered now
    return result
