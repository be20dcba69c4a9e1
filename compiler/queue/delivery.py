"""Delivery never bypasses a queue.

A TrainJob that names a Kueue queue is held back by Kueue only when Kueue sees a job it
manages: the TrainJob itself (delivery ``trainjobs``: Kueue's TrainJob integration
suspends it, admits it and writes its placement into ``runtimePatches``), or a JobSet
that Kueue's JobSet integration manages. Resolved JobSets as the Trainer controller
makes them for an admitted TrainJob (no queue label, ``suspend: false``) start at once,
outside every quota.

Kueue's JobSet integration (``pkg/controller/jobs/jobset`` and ``jobframework``) manages
a JobSet that carries the ``kueue.x-k8s.io/queue-name`` label (a valid name); it creates
its Workload from the replicated jobs and admits it by setting ``spec.suspend: false``
(its webhook suspends a queued JobSet on create, but only on create: a JobSet applied
again unsuspended after that is not held back, so it must be delivered suspended). The
integration must be enabled in Kueue's Configuration (``integrations.frameworks`` lists
``jobset.x-k8s.io/jobset``; the default lists only ``batch/job``). A JobSet whose owner
is a job Kueue manages is left to that owner, so the JobSet must not name a TrainJob as
its owner. :func:`for_jobset_integration` makes a rendered JobSet so;
:func:`jobset_integration_problems` checks one.

Kueue admits the JobSet with a JSON merge patch (``clientutil.Patch`` in
``jobframework``'s ``startJob``; ``RunWithPodSetsInfo`` sets ``spec.suspend: false`` and
merges the flavor's node selector, tolerations, labels and annotations into each pod
template). It names no field manager, so the API server names it after Kueue's user
agent: ``kueue`` (:data:`KUEUE_MANAGER`), an Update that takes every value it changes
away from trainc's apply; :func:`compiler.deliver.apply.kueue.left_to_kueue` leaves those
values out of a later apply.

    >>> js = {"metadata": {"name": "llm"}, "spec": {"suspend": False}}
    >>> out = for_jobset_integration(js, {QUEUE_LABEL: "research"})
    >>> out["metadata"]["labels"], out["spec"]["suspend"]
    ({'kueue.x-k8s.io/queue-name': 'research'}, True)
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any

from compiler.apiserver.manifest import Manifest
from compiler.errors import Problem
from compiler.queue.verdict import PRIORITY_CLASS_LABEL, QUEUE_LABEL, RULE

__all__ = [
    "KUEUE_MANAGER",
    "PRIORITY_CLASS_LABEL",
    "bypass_problem",
    "for_jobset_integration",
    "jobset_integration_problems",
]

# the field manager of Kueue's writes: the API server's default, its user agent
# (useragent.Default: "kueue/<version> (<os>/<arch>) <commit>") up to the first "/"
KUEUE_MANAGER = "kueue"

# the labels Kueue reads from a job: the queue and the WorkloadPriorityClass
_KUEUE_LABELS = (QUEUE_LABEL, PRIORITY_CLASS_LABEL)
# ValidateLabelAsCRDName: a DNS-1123 subdomain
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def bypass_problem(trainjob: Manifest, cluster: str, queue: str, by_flux: bool = False) -> Problem:
    """The error for a queued TrainJob delivered resolved to a cluster that runs Kueue
    (``by_flux``: through the rendered folder's kustomization.yaml, whatever ``delivery``)."""
    if by_flux:
        how = (
            "writes its resolved JobSets with a kustomization.yaml (`gitops: {kustomization: "
            "true}`) for Flux to apply, where they would start at once, outside every "
            "quota: point Flux at the TrainJobs instead and drop `kustomization`, or set "
        )
    else:
        how = (
            "delivers resolved JobSets, which would start at once, outside every quota: set "
            "`delivery: trainjobs` on the cluster in trainc.yaml, or "
        )
    return Problem(
        f"names Kueue queue {queue!r}, but cluster {cluster!r} runs Kueue and {how}"
        "`kueue: {jobSets: true}` (suspended, queue-labelled JobSets for Kueue's JobSet "
        "integration, which Kueue's integrations.frameworks must list)",
        trainjob.locate(("metadata", "labels", QUEUE_LABEL)),
        trainjob.ref,
        f"metadata.labels[{QUEUE_LABEL}]",
        RULE,
    )


def for_jobset_integration(
    jobset: Mapping[str, Any], trainjob_labels: Mapping[str, Any]
) -> dict[str, Any]:
    """``jobset`` (a copy) as Kueue's JobSet integration manages it: the TrainJob's queue
    and priority-class labels on the JobSet, ``spec.suspend: true``, no TrainJob owner."""
    out = copy.deepcopy(dict(jobset))
    metadata = out.setdefault("metadata", {})
    labels = metadata.setdefault("labels", {})
    for key in _KUEUE_LABELS:
        if trainjob_labels.get(key):
            labels[key] = str(trainjob_labels[key])
    owners = [o for o in metadata.get("ownerReferences") or () if o.get("kind") != "TrainJob"]
    if owners:
        metadata["ownerReferences"] = owners
    else:
        metadata.pop("ownerReferences", None)
    out.setdefault("spec", {})["suspend"] = True
    return out


def jobset_integration_problems(jobset: Manifest) -> list[str]:
    """What keeps Kueue's JobSet integration from holding ``jobset`` back (empty: none)."""
    labels = jobset.metadata.get("labels") or {}
    queue = labels.get(QUEUE_LABEL) if isinstance(labels, dict) else None
    problems = []
    if not queue:
        problems.append(f"the JobSet has no {QUEUE_LABEL} label: Kueue does not manage it")
    elif len(str(queue)) > 253 or not _DNS_SUBDOMAIN.match(str(queue)):
        problems.append(f"{QUEUE_LABEL} {queue!r} is not a valid queue name (DNS subdomain)")
    if (jobset.data.get("spec") or {}).get("suspend") is not True:
        problems.append("the JobSet is not suspended: it starts before Kueue admits it")
    if any(o.get("kind") == "TrainJob" for o in jobset.metadata.get("ownerReferences") or ()):
        problems.append("the JobSet is owned by a TrainJob: Kueue leaves it to its owner")
    return problems
