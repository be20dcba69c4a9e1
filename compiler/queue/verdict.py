"""What the pinned Kueue release will say about each queued job (``trainc check``, rule
``kueue``), said before merge and located at the job's queue label.

For a job labelled ``kueue.x-k8s.io/queue-name: Q`` in namespace N, when the inputs hold
a queue setup (any ResourceFlavor, ClusterQueue, Cohort or LocalQueue):

* no LocalQueue Q in N: Kueue leaves the Workload pending forever;
* a ``kueue.x-k8s.io/priority-class`` label naming no WorkloadPriorityClass: Kueue cannot
  create the Workload (``ExtractPriority`` fails);
* its ClusterQueue is missing, stopped (``stopPolicy``), or sits under a Cohort cycle:
  the queue is inactive, nothing is admitted;
* the ClusterQueue's ``namespaceSelector`` excludes N (no selector selects nothing; the
  namespace's labels are those the project declares, plus ``kubernetes.io/metadata.name``);
* the Workload can never be admitted (:func:`compiler.queue.assign.assign_flavors` on an
  empty cluster): a requested resource no resource group covers, or more than any flavor
  can ever give (nominal quota plus what its Cohort can lend, within borrowing limits).

A ResourceFlavor a ClusterQueue names that is not among the inputs is a warning at that
name (:func:`missing_flavors`): the cluster may hold it, so it is taken to exist with no
node labels, taints or tolerations (if it does not, Kueue keeps the queue inactive).

Each message names the queue, the flavor, the resource, the requested and the available
amounts::

    >>> from compiler.apiserver.manifest import Manifest, SourceMap
    >>> job = Manifest({"kind": "TrainJob", "metadata": {"name": "llm", "namespace": "team",
    ...     "labels": {QUEUE_LABEL: "research"}}}, SourceMap("job.yaml", {}))
    >>> [p.message for p in queue_problems([QueuedJob(job, [])], QueueSetup(
    ...     cluster_queues={"x": job}))]
    ["LocalQueue 'research' does not exist in namespace 'team': Kueue never admits the job"]
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from compiler.apiserver.manifest import Manifest
from compiler.errors import Problem
from compiler.kube.labels import selector_matches
from compiler.queue.assign import Miss, QuotaTree, assign_flavors, format_amount, quota_tree
from compiler.queue.objects import QueueSetup
from compiler.queue.workload import PodSetRequests

__all__ = [
    "PRIORITY_CLASS_LABEL",
    "QUEUE_LABEL",
    "RULE",
    "QueuedJob",
    "missing_flavors",
    "queue_name",
    "queue_problems",
]

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
PRIORITY_CLASS_LABEL = "kueue.x-k8s.io/priority-class"
RULE = "kueue"
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"


@dataclass(frozen=True)
class QueuedJob:
    """A job that names a queue, and the Workload Kueue computes for it."""

    job: Manifest  # the TrainJob (where messages point)
    workload: list[PodSetRequests]


def queue_name(job: Manifest) -> str | None:
    labels = job.metadata.get("labels") or {}
    name = labels.get(QUEUE_LABEL) if isinstance(labels, dict) else None
    return str(name) if name else None


def _selector_matches(selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    """``metav1.LabelSelectorAsSelector(...).Matches``; None selects nothing."""
    if selector is None:
        return False
    expressions = (
        (e.get("key"), e.get("operator"), [str(v) for v in e.get("values") or ()])
        for e in selector.get("matchExpressions") or ()
    )
    return selector_matches(labels, (selector.get("matchLabels") or {}).items(), expressions)


def _inactive_reason(name: str, setup: QueueSetup, in_cycle: set[str]) -> str | None:
    queue = setup.cluster_queues[name]
    spec = queue.data.get("spec") or {}
    reasons = []
    if (spec.get("stopPolicy") or "None") != "None":
        reasons.append(f"is stopped (stopPolicy {spec['stopPolicy']})")
    cohort = spec.get("cohortName") or spec.get("cohort")
    if cohort and str(cohort) in in_cycle:
        reasons.append(f"is under Cohort {str(cohort)!r}, whose parents form a cycle")
    return "; ".join(reasons) or None


def _miss_text(miss: Miss, cluster_queue: str) -> str:
    resource = miss.resource
    requested = format_amount(resource, miss.requested)
    if not miss.tried:
        return (
            f"PodSet {miss.podset!r} requests {requested} {resource}, which no resource "
            f"group of ClusterQueue {cluster_queue!r} covers"
        )
    if miss.short:
        flavor, total, most = max(miss.short, key=lambda s: s[2])
        return (
            f"PodSet {miss.podset!r} requests {format_amount(resource, total)} {resource} "
            f"in flavor {flavor!r} of ClusterQueue {cluster_queue!r}, which can give at most "
            f"{format_amount(resource, most)} (its nominal quota plus what its cohort can "
            f"lend): {format_amount(resource, total)} requested, "
            f"{format_amount(resource, most)} available"
        )
    reasons = "; ".join(reason for _, reason in miss.tried)
    return (
        f"PodSet {miss.podset!r} requests {requested} {resource}, but no flavor of "
        f"ClusterQueue {cluster_queue!r} can take its pods ({reasons})"
    )


def _problem(job: Manifest, message: str, details: dict[str, str]) -> Problem:
    return Problem(
        message,
        job.locate(("metadata", "labels", QUEUE_LABEL)),
        job.ref,
        f"metadata.labels[{QUEUE_LABEL}]",
        RULE,
        details=tuple(sorted(details.items())),
    )


def _queue_of(
    queued: QueuedJob, local_name: str, setup: QueueSetup, in_cycle: set[str]
) -> tuple[str | None, str]:
    """The active ClusterQueue the job's LocalQueue points at, or None and why not."""
    namespace = queued.job.namespace or "default"
    local = setup.local_queues.get((namespace, local_name))
    if local is None:
        return None, (
            f"LocalQueue {local_name!r} does not exist in namespace {namespace!r}: "
            "Kueue never admits the job"
        )
    cq_name = str((local.data.get("spec") or {}).get("clusterQueue") or "")
    if cq_name not in setup.cluster_queues:
        return None, (
            f"LocalQueue {local_name!r} points at ClusterQueue {cq_name!r}, which does not "
            "exist: Kueue never admits the job"
        )
    reason = _inactive_reason(cq_name, setup, in_cycle)
    if reason is not None:
        return None, (
            f"ClusterQueue {cq_name!r} (of LocalQueue {local_name!r}) is inactive: it {reason}"
        )
    return cq_name, ""


def _selector_problem(
    cq_name: str,
    local_name: str,
    namespace: str,
    setup: QueueSetup,
    namespace_labels: Mapping[str, Mapping[str, str]] | None,
) -> str | None:
    """Why the ClusterQueue's namespaceSelector excludes ``namespace`` (None: it does not,
    or the namespace's labels are unknown)."""
    spec = setup.cluster_queues[cq_name].data.get("spec") or {}
    known = namespace_labels.get(namespace) if namespace_labels is not None else None
    labels = {**(known or {}), NAMESPACE_NAME_LABEL: namespace}
    selector = spec.get("namespaceSelector")
    if selector is not None and known is None:
        return None  # a selector, but the namespace's labels are unknown: not judged
    if _selector_matches(selector, labels):
        return None
    why = "has no namespaceSelector (it selects no namespace)"
    if selector is not None:
        why = f"has a namespaceSelector that excludes namespace {namespace!r}"
    return (
        f"ClusterQueue {cq_name!r} (of LocalQueue {local_name!r}) {why}: Kueue never admits the job"
    )


def _job_problems(
    queued: QueuedJob,
    local_name: str,
    setup: QueueSetup,
    tree: QuotaTree,
    namespace_labels: Mapping[str, Mapping[str, str]] | None,
) -> list[Problem]:
    namespace = queued.job.namespace or "default"
    details = {"localQueue": local_name, "namespace": namespace}
    problems = []
    priority = (queued.job.metadata.get("labels") or {}).get(PRIORITY_CLASS_LABEL)
    if priority and str(priority) not in setup.priority_classes:
        message = (
            f"WorkloadPriorityClass {str(priority)!r} (label {PRIORITY_CLASS_LABEL}) does not "
            "exist: Kueue cannot create the job's Workload"
        )
        found = {**details, "workloadPriorityClass": str(priority)}
        problems.append(_problem(queued.job, message, found))
    cq_name, why = _queue_of(queued, local_name, setup, tree.in_cycle)
    if cq_name is None:
        return [*problems, _problem(queued.job, why, details)]
    details["clusterQueue"] = cq_name
    excluded = _selector_problem(cq_name, local_name, namespace, setup, namespace_labels)
    if excluded is not None:
        return [*problems, _problem(queued.job, excluded, details)]
    for miss in assign_flavors(queued.workload, cq_name, setup, tree).misses:
        flavor = max(miss.short, key=lambda s: s[2])[0] if miss.short else ""
        message = f"can never be admitted by LocalQueue {local_name!r}: " + _miss_text(
            miss, cq_name
        )
        found = {**details, "resource": miss.resource, "flavor": flavor}
        problems.append(_problem(queued.job, message, found))
    return problems


def queue_problems(
    jobs: Iterable[QueuedJob],
    setup: QueueSetup,
    namespace_labels: Mapping[str, Mapping[str, str]] | None = None,
) -> list[Problem]:
    """Every reason Kueue will never admit one of ``jobs`` (none when ``setup`` is empty:
    the queues are then not in the inputs, and nothing can be said)."""
    if setup.empty:
        return []
    tree = quota_tree(setup)
    problems = []
    for queued in jobs:
        local_name = queue_name(queued.job)
        if local_name is not None:
            problems += _job_problems(queued, local_name, setup, tree, namespace_labels)
    return problems


def missing_flavors(setup: QueueSetup) -> list[Problem]:
    """A warning at each ResourceFlavor name of a ClusterQueue that no input defines."""
    warnings = []
    for name, queue in sorted(setup.cluster_queues.items()):
        groups = (queue.data.get("spec") or {}).get("resourceGroups") or ()
        for g, group in enumerate(groups):
            for f, flavor in enumerate(group.get("flavors") or ()):
                flavor_name = str(flavor.get("name"))
                if flavor_name in setup.flavors:
                    continue
                path = ("spec", "resourceGroups", g, "flavors", f, "name")
                warnings.append(
                    Problem(
                        f"ResourceFlavor {flavor_name!r} is not among the inputs: taken to "
                        "exist with no node labels or taints (if the cluster lacks it, Kueue "
                        f"keeps ClusterQueue {name!r} inactive)",
                        queue.locate(path),
                        queue.ref,
                        f"spec.resourceGroups[{g}].flavors[{f}].name",
                        RULE,
                    )
                )
    return warnings
