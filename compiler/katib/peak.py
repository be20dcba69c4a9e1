"""What an Experiment costs at ``parallelTrialCount``: the peak requests when the costliest
trials run at once.

A trial's requests are those of the pods its rendered JobSets create (each replicated job's
pods, as Kueue's JobSet integration counts them), a container's missing requests taken from
its limits as the API server defaults them. The peak is, per resource, the sum over the
``parallelTrialCount`` trials that request the most of it: an upper bound, as Katib may
never run those trials together.

    >>> from compiler.kube.quantity import Quantity
    >>> peak_text(peak([{"cpu": Quantity.parse("1")}, {"cpu": Quantity.parse("4")},
    ...                 {"cpu": Quantity.parse("2")}], 2))
    'cpu 6'
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

from compiler.kube.podrequests import pod_requests
from compiler.kube.quantity import Quantity, QuantityError
from compiler.queue.workload import jobset_podsets

__all__ = ["peak", "peak_text", "trial_requests"]


def _with_default_requests(spec: dict[str, Any]) -> dict[str, Any]:
    """The pod spec with each container's missing requests taken from its limits."""
    spec = copy.deepcopy(spec)
    for key in ("initContainers", "containers"):
        for container in spec.get(key) or []:
            if not isinstance(container, dict):
                continue
            resources = container.get("resources")
            if not isinstance(resources, dict) or not isinstance(resources.get("limits"), dict):
                continue
            requests = resources.get("requests")
            requests = dict(requests) if isinstance(requests, dict) else {}
            for name, value in resources["limits"].items():
                requests.setdefault(name, value)
            resources["requests"] = requests
    return spec


def trial_requests(objects: Iterable[Mapping[str, Any]]) -> dict[str, Quantity]:
    """The total requests of the pods of the JobSets among ``objects``."""
    total: dict[str, Quantity] = {}
    for obj in objects:
        if obj.get("kind") != "JobSet":
            continue
        for podset in jobset_podsets(obj):
            try:
                requests = pod_requests(_with_default_requests(podset.template.get("spec") or {}))
            except QuantityError:
                continue  # output admission reports it
            for name, quantity in requests.items():
                scaled = quantity.mul(podset.count)
                total[name] = total[name].add(scaled) if name in total else scaled
    return total


def peak(trials: list[dict[str, Quantity]], parallel: int) -> dict[str, Quantity]:
    """Per resource, the sum of the ``parallel`` largest trial requests."""
    names = sorted({name for trial in trials for name in trial})
    out: dict[str, Quantity] = {}
    for name in names:
        values = [t[name] for t in trials if name in t]
        values.sort(key=lambda q: q.as_decimal(), reverse=True)
        total = Quantity.zero()
        for value in values[: max(parallel, 0)]:
            total = total.add(value)
        out[name] = total
    return out


def peak_text(requests: dict[str, Quantity]) -> str:
    return ", ".join(f"{name} {quantity}" for name, quantity in requests.items()) or "nothing"
