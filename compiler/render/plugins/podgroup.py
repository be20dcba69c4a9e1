"""What the coscheduling and Volcano PodGroups share: gang size and resources (R-10.2)."""

from __future__ import annotations

from compiler.kube.podrequests import sum_requests
from compiler.render.info import Info


def min_member(info: Info) -> int:
    """Every PodSet counts, initializers and launcher included; ``replicas`` does not."""
    return sum(pod_set.count for pod_set in info.pod_sets)


def min_resources(info: Info) -> dict[str, str]:
    """Sum of single-pod requests times count, in canonical quantity form, keys sorted."""
    totals = sum_requests([(ps.single_pod_requests, ps.count) for ps in info.pod_sets])
    return {name: totals[name].canonical() for name in sorted(totals)}
