"""The quota impact of a change (for ``trainc diff``): per ClusterQueue and resource, what
the queued Workloads request before and after, beside the queue's nominal quota.

A queued job counts in the ClusterQueue its LocalQueue points at (jobs whose queue does
not resolve are left out: ``check`` reports them). Amounts are Kueue's values (cpu in
millicores), summed over every PodSet; the nominal quota is the sum over the queue's
flavors::

    >>> rows = [ImpactRow("research", "nvidia.com/gpu", 8, 16, 8)]
    >>> print(format_impact(rows))
    ClusterQueue research: nvidia.com/gpu 8 -> 16 (nominal 8; over by 8)
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from compiler.kube.quantity import Quantity
from compiler.queue.assign import format_amount
from compiler.queue.objects import QueueSetup
from compiler.queue.verdict import QueuedJob, queue_name
from compiler.queue.workload import kueue_value

__all__ = ["ImpactRow", "format_impact", "queue_usage", "quota_impact"]

Usage = dict[tuple[str, str], int]  # (ClusterQueue, resource) -> requested


@dataclass(frozen=True)
class ImpactRow:
    cluster_queue: str
    resource: str
    before: int
    after: int
    nominal: int


def queue_usage(jobs: Iterable[QueuedJob], setup: QueueSetup) -> Usage:
    """What the queued jobs request, by (ClusterQueue, resource)."""
    usage: Usage = {}
    for queued in jobs:
        name = queue_name(queued.job)
        local = setup.local_queues.get((queued.job.namespace or "default", name or ""))
        if local is None:
            continue
        cluster_queue = str((local.data.get("spec") or {}).get("clusterQueue") or "")
        if cluster_queue not in setup.cluster_queues:
            continue
        for podset in queued.workload:
            for resource, value in podset.requests.items():
                key = (cluster_queue, resource)
                usage[key] = usage.get(key, 0) + value
    return usage


def _nominal(setup: QueueSetup, cluster_queue: str, resource: str) -> int:
    manifest = setup.cluster_queues.get(cluster_queue)
    spec = (manifest.data.get("spec") or {}) if manifest is not None else {}
    total = 0
    for group in spec.get("resourceGroups") or ():
        for flavor in group.get("flavors") or ():
            for quota in flavor.get("resources") or ():
                if quota.get("name") == resource:
                    total += kueue_value(resource, Quantity.from_manifest(quota["nominalQuota"]))
    return total


def quota_impact(before: Usage, after: Usage, setup: QueueSetup) -> list[ImpactRow]:
    """The (ClusterQueue, resource) pairs whose request changes, sorted."""
    rows = []
    for key in sorted(set(before) | set(after)):
        old, new = before.get(key, 0), after.get(key, 0)
        if old != new:
            rows.append(ImpactRow(key[0], key[1], old, new, _nominal(setup, *key)))
    return rows


def format_impact(rows: Iterable[ImpactRow]) -> str:
    """One line per row: before -> after, the nominal quota, how far over it."""
    lines = []
    for row in rows:
        before, after, nominal, over = (
            format_amount(row.resource, value)
            for value in (row.before, row.after, row.nominal, row.after - row.nominal)
        )
        tail = f"; over by {over}" if row.after > row.nominal else ""
        lines.append(
            f"ClusterQueue {row.cluster_queue}: {row.resource} {before} -> {after} "
            f"(nominal {nominal}{tail})"
        )
    return "\n".join(lines)
