"""Below the JobSet: what a cluster makes of it, down to the Pods (issue 27).

Each step is a pure function of its input, emulating one component at the version
every Trainer installation runs:

    JobSet --(API server: JobSet CRD defaults)--> mutating webhook  (jobset_webhook)
           --(CRD defaults again)--> validating webhook             (jobset_webhook)
           --> JobSet controller: Jobs + headless Service            (jobset_controller)
           --(API server: defaults, Job strategy)-->                 (apiserver)
           --> Job controller: Pods                                  (job_controller)
           --(API server: defaults, admission)--> JobSet Pod webhook (apiserver, pod_webhook)
           --(API server: Pod strategy's PrepareForCreate)-->        (apiserver)

:func:`expand` runs the chain over the rendered objects of one TrainJob. It raises
:class:`JobSetRefused` when the JobSet webhook refuses the JobSet; :mod:`.refusal`
turns that into the problem ``render`` reports. Random values (UIDs, generated name
suffixes) are placeholders (:mod:`.names`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any, Literal

from compiler.apiserver.crds import load_crd
from compiler.apiserver.structural import Schema, admit_schema
from compiler.errors import FieldError
from compiler.expand.apiserver import (
    NO_CLASSES,
    PriorityClasses,
    create_job,
    create_pod,
    create_service,
    prepare_pod,
    priority_classes,
)
from compiler.expand.job_controller import job_pods
from compiler.expand.jobset_controller import construct_jobs, headless_service
from compiler.expand.jobset_webhook import default_jobset, denial, patched, validate_create
from compiler.expand.pod_webhook import mutate_pod
from compiler.kube.roundtrip import go_roundtrip
from compiler.render.info import json_copy
from compiler.upstream.artifacts import DEFAULT_TRAINER_VERSION, upstream

__all__ = [
    "Depth",
    "JobSetRefused",
    "admit_jobset",
    "expand",
    "expand_jobset",
    "webhook_defaults",
    "webhook_errors",
]

Depth = Literal["jobs", "pods"]
DEPTHS: tuple[Depth, ...] = ("jobs", "pods")


class JobSetRefused(Exception):
    """The JobSet webhook refuses the JobSet: ``message`` is the API server's error."""

    def __init__(self, name: str, errors: Sequence[FieldError]) -> None:
        self.name = name
        self.errors = list(errors)
        self.message = denial(name, self.errors)
        super().__init__(self.message)


@cache
def _jobset_schema() -> Schema:
    for path in upstream(DEFAULT_TRAINER_VERSION).output_crd_paths():
        for info in load_crd(path):
            if info.kind == "JobSet" and info.version == "v1alpha2":
                return info.schema
    raise LookupError("the pinned JobSet CRD is missing")  # pragma: no cover - setup checks it


def _crd_defaults(jobset: dict[str, Any]) -> dict[str, Any]:
    admit_schema(jobset, _jobset_schema())  # output admission has reported its errors
    return jobset


def webhook_defaults(jobset: Mapping[str, Any]) -> dict[str, Any]:
    """The JobSet after the API server's CRD defaults and the mutating webhook's patch."""
    stored = _crd_defaults(json_copy(dict(jobset)))
    original = go_roundtrip(stored, "jobset.v1alpha2.JobSet")
    defaulted = go_roundtrip(default_jobset(stored), "jobset.v1alpha2.JobSet")
    out = patched(stored, original, defaulted)
    out.pop("status", None)  # a create's status is reset by the API server
    return out


def webhook_errors(stored: Mapping[str, Any]) -> list[FieldError]:
    """The validating webhook's errors on a JobSet the API server stored (CRD defaults
    applied), after the mutating webhook: :func:`admit_jobset`'s verdict, without the
    Go round trips (they change no field the webhook checks; the fields the mutating
    webhook adds have no CRD defaults of their own)."""
    return validate_create(default_jobset(stored))


def admit_jobset(jobset: Mapping[str, Any]) -> dict[str, Any]:
    """The JobSet as the API server stores it after both webhooks; raises JobSetRefused."""
    mutated = _crd_defaults(webhook_defaults(jobset))
    errors = validate_create(mutated)
    if errors:
        raise JobSetRefused(str((mutated.get("metadata") or {}).get("name", "")), errors)
    return mutated


def expand_jobset(
    jobset: Mapping[str, Any],
    depth: Depth,
    classes: PriorityClasses = NO_CLASSES,
) -> list[dict[str, Any]]:
    """The Jobs, the Service and (depth ``pods``) the Pods one JobSet becomes, on a
    cluster with the PriorityClasses ``classes`` besides the system ones."""
    admitted = admit_jobset(jobset)
    jobs = [create_job(job) for job in construct_jobs(admitted)]
    out: list[dict[str, Any]] = list(jobs)
    service = headless_service(admitted)
    if service is not None:
        out.append(create_service(service))
    if depth == "pods":
        for job in jobs:
            prefixes: Counter[str] = Counter()  # a NonIndexed Job's Pods share one
            for pod in job_pods(job):
                prefix = str(pod["metadata"].get("generateName", ""))
                out.append(prepare_pod(mutate_pod(create_pod(pod, prefixes[prefix], classes))))
                prefixes[prefix] += 1
    return [_go_order(obj) for obj in out]


_GO_TYPES = {"Job": "io.k8s.api.batch.v1.Job", "Pod": "io.k8s.api.core.v1.Pod"}


def _go_order(obj: dict[str, Any]) -> dict[str, Any]:
    """``obj`` with its fields in Go's order, as the API server returns it."""
    go_type = _GO_TYPES.get(str(obj.get("kind")))
    if go_type is None:
        return obj
    out: dict[str, Any] = go_roundtrip(obj, go_type)
    out.pop("status", None)
    return out


def expand(objects: Sequence[Mapping[str, Any]], depth: Depth) -> list[dict[str, Any]]:
    """What the rendered ``objects`` of one TrainJob become in a cluster, deterministically.

    For each JobSet among ``objects``: its Jobs (replicated-job order, then index), its
    headless Service, and with ``depth="pods"`` the Pods the Job controller creates
    first (Job order, then completion index). The PriorityClass objects among
    ``objects`` are the cluster's: the Priority admission plugin gives a Pod that names
    one its value (and so the JobSet priority label). Raises :class:`JobSetRefused`.
    """
    if depth not in DEPTHS:
        raise ValueError(f"depth must be one of {', '.join(DEPTHS)}, not {depth!r}")
    classes = priority_classes(objects)
    out: list[dict[str, Any]] = []
    for obj in objects:
        if obj.get("kind") == "JobSet" and str(obj.get("apiVersion", "")).startswith(
            "jobset.x-k8s.io/"
        ):
            out.extend(expand_jobset(obj, depth, classes))
    return out
