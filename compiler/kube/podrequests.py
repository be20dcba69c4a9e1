"""Single-pod requests and PodGroup ``minResources`` (R-3.10, R-10.2).

:func:`pod_requests` reproduces ``resourcehelpers.PodRequests`` of k8s.io/component-helpers
v0.36.2 with the empty ``PodResourcesOptions{}`` Trainer v2.3.0 passes (``runtime.WithPodSet``):
no status resources, no ``NonMissingContainerRequests`` defaults, pod-level requests and
overhead both included. :func:`sum_requests` is the aggregation loop of the coscheduling and
Volcano plugins.

Go map iteration: PodRequests ranges over ResourceList maps (container requests, the running
maps, pod-level requests, overhead) and both plugins range over ``SinglePodRequests``. Every
step handles one resource name independently of the others, so the random order changes
nothing: the result, including each sum's format, depends only on container order and PodSet
order, which are slices. The one order-dependent effect is across the two plugins, see
:func:`after_podgroup_build`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from compiler.kube.quantity import Quantity

__all__ = [
    "after_podgroup_build",
    "is_pod_level_resource",
    "pod_requests",
    "resource_list",
    "sum_requests",
]

ResourceList = dict[str, Quantity]

_RESTART_ALWAYS = "Always"
_HUGEPAGES_PREFIX = "hugepages-"


def is_pod_level_resource(name: str) -> bool:
    """Pod-level ``resources`` may set ``cpu``, ``memory`` and ``hugepages-*``."""
    return name in ("cpu", "memory") or name.startswith(_HUGEPAGES_PREFIX)


def resource_list(raw: Mapping[str, Any] | None) -> ResourceList:
    """A ``requests``/``overhead`` map from a parsed manifest: ``{"cpu": 2}`` -> {cpu: 2}.

    Values may be YAML scalars (see :meth:`Quantity.from_manifest`) or Quantities. A null
    value is dropped, as the API server prunes nulls from custom resources.
    """
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise ValueError(f"expected a map of quantities, got {type(raw).__name__}")
    out: ResourceList = {}
    for name, value in raw.items():
        if value is None:
            continue
        out[str(name)] = value if isinstance(value, Quantity) else Quantity.from_manifest(value)
    return out


def _requests(container: Mapping[str, Any]) -> ResourceList:
    resources = container.get("resources") or {}
    return resource_list(resources.get("requests"))


def _add_into(target: ResourceList, new: ResourceList) -> None:
    """``addResourceList``: a new name takes the value as is, an existing one is summed."""
    for name, quantity in new.items():
        current = target.get(name)
        target[name] = quantity if current is None else current.add(quantity)


def _max_into(target: ResourceList, new: ResourceList) -> None:
    """``maxResourceList``: keep the larger value; on a tie the existing one stays.

    Go compares with ``quantity.Cmp(existing)``, which converts ``quantity`` to its big form
    when either side is big; the converted copy is what gets stored.
    """
    for name, quantity in new.items():
        current = target.get(name)
        if current is None:
            target[name] = quantity
            continue
        if quantity.is_big or current.is_big:
            quantity = quantity.with_big()
        if quantity.cmp(current) > 0:
            target[name] = quantity


def pod_requests(pod_spec: Mapping[str, Any]) -> dict[str, Quantity]:
    """Requests of one pod built from ``pod_spec`` (a PodSpec as parsed YAML), keys sorted.

    max(Σ containers + Σ sidecars, max over init containers of (own + sidecars so far)),
    then pod-level ``resources.requests`` for cpu/memory/hugepages-* replace the aggregate,
    then ``overhead`` is added. Limits are never read::

        >>> r = pod_requests({
        ...     "containers": [{"resources": {"requests": {"cpu": "500m"}}}],
        ...     "initContainers": [
        ...         {"restartPolicy": "Always", "resources": {"requests": {"cpu": "250m"}}},
        ...         {"resources": {"requests": {"cpu": "2"}}}]})
        >>> r["cpu"].canonical()     # max(500m + 250m, 2 + 250m)
        '2250m'
    """
    reqs: ResourceList = {}
    for container in pod_spec.get("containers") or ():
        _add_into(reqs, _requests(container))

    sidecars: ResourceList = {}
    init_max: ResourceList = {}
    for container in pod_spec.get("initContainers") or ():
        own = _requests(container)
        if container.get("restartPolicy") == _RESTART_ALWAYS:
            _add_into(reqs, own)
            _add_into(sidecars, own)
            in_use = sidecars
        else:
            in_use = {}
            _add_into(in_use, own)
            _add_into(in_use, sidecars)
        _max_into(init_max, in_use)
    _max_into(reqs, init_max)

    pod_level = resource_list((pod_spec.get("resources") or {}).get("requests"))
    if any(is_pod_level_resource(name) for name in pod_level):
        for name, quantity in pod_level.items():
            if is_pod_level_resource(name):
                reqs[name] = quantity

    if pod_spec.get("overhead") is not None:
        _add_into(reqs, resource_list(pod_spec["overhead"]))
    return dict(sorted(reqs.items()))


def sum_requests(per_podset: Iterable[tuple[Mapping[str, Quantity], int]]) -> dict[str, Quantity]:
    """PodGroup ``minResources``: Σ over PodSets, in order, of requests * count; keys sorted.

    Each total starts as Go's zero ``Quantity{}`` and takes the format of the addend it meets
    while still zero, so normally the first PodSet (in replicated-job order) that has the
    resource; a zero request or ``count == 0`` leaves it open for the next one::

        >>> cpu = lambda s: {"cpu": Quantity.parse(s)}
        >>> sum_requests([(cpu("300m"), 1), (cpu("500m"), 4)])["cpu"].canonical()
        '2300m'
    """
    totals: ResourceList = {}
    for requests, count in per_podset:
        for name, quantity in requests.items():
            current = totals.get(name, Quantity.zero())
            totals[name] = current.add(quantity.mul(count))
    return dict(sorted(totals.items()))


def after_podgroup_build(
    per_podset: Iterable[tuple[Mapping[str, Quantity], int]],
) -> list[tuple[dict[str, Quantity], int]]:
    """SinglePodRequests as left behind by one PodGroup plugin's Build.

    Upstream multiplies a copy of each request in place; for a big (``inf.Dec``) value the
    copy shares its decimal with ``PodSet.SinglePodRequests``, so the PodSet's request itself
    becomes request * count (small int64 values are unaffected). It matters only when a
    runtime sets both ``coscheduling`` and ``volcano``: the second plugin to run (random
    order upstream, R-2.3) sums the already multiplied values::

        >>> half = [({"memory": Quantity.parse("0.5Gi")}, 4)]     # 0.5Gi parses big
        >>> sum_requests(half)["memory"].canonical()
        '2Gi'
        >>> sum_requests(after_podgroup_build(half))["memory"].canonical()
        '8Gi'
    """
    out: list[tuple[dict[str, Quantity], int]] = []
    for requests, count in per_podset:
        updated = {
            name: quantity.mul(count) if quantity.is_big else quantity
            for name, quantity in requests.items()
        }
        out.append((updated, count))
    return out
