"""A queued job's Workload, as the pinned Kueue release computes it.

Kueue's JobSet integration makes one PodSet per replicated job: its pod template and
``count = replicas * min(parallelism, completions)`` (parallelism defaults to 1,
completions to parallelism). Its TrainJob integration builds the JobSet the Trainer
controller would (with the Trainer release Kueue embeds) and takes the same PodSets. The
job reconciler then adjusts each template (``AdjustResources``):

1. pod overhead: a template naming a RuntimeClass and no ``overhead`` gets the class's
   ``overhead.podFixed`` (a missing class adds nothing);
2. LimitRange defaults: the ``Container`` limits of the namespace's LimitRanges,
   summarised (the first ``default``/``defaultRequest`` of a resource wins, ranges by
   name), fill the limits and requests each container lacks;
3. limits stand in for the requests a container lacks.

A PodSet's requests are then ``PodRequests`` of the template (init containers and
sidecars included, pod-level requests and overhead), less the resources named by a
prefix of ``excludeResourcePrefixes``, after ``resources.transformations``, as Kueue's
int64 values (cpu in millicores, anything else rounded up to a whole unit), times the
count::

    >>> jobset = {"metadata": {"name": "llm", "namespace": "team"}, "spec": {
    ...     "replicatedJobs": [{"name": "node", "replicas": 1, "template": {"spec": {
    ...         "parallelism": 2, "completions": 2, "template": {"spec": {"containers": [
    ...             {"name": "t", "resources": {"limits": {"nvidia.com/gpu": 4}}}]}}}}}]}}
    >>> [(p.name, p.count, p.requests) for p in jobset_workload(jobset, QueueSetup())]
    [('node', 2, {'nvidia.com/gpu': 8})]
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from compiler.errors import TraincError
from compiler.kube.podrequests import pod_requests, resource_list
from compiler.kube.quantity import Quantity
from compiler.queue.objects import QueueSetup, ResourcesConfig
from compiler.render.framework import RenderOptions, TrainJobContext, run_phases
from compiler.render.info import json_copy
from compiler.render.pipeline import apply_configuration_json
from compiler.render.registry import default_phases
from compiler.render.runtime_info import new_runtime_info

__all__ = [
    "PodSet",
    "PodSetRequests",
    "adjust_resources",
    "jobset_podsets",
    "jobset_workload",
    "kueue_jobset",
    "kueue_value",
    "total_requests",
    "trainjob_workload",
]

JsonObject = dict[str, Any]
ResourceList = dict[str, Quantity]


@dataclass(frozen=True)
class PodSet:
    """One PodSet of a Workload: the replicated job's name, pod count and pod template."""

    name: str
    count: int
    template: JsonObject  # the pod template (metadata, spec), copied


@dataclass(frozen=True)
class PodSetRequests:
    """A PodSet's total requests as Kueue counts them (``workload.PodSetResources``)."""

    name: str
    count: int
    requests: dict[str, int]  # resource -> Kueue's value for all pods, keys sorted
    template: JsonObject  # the adjusted pod template (for node selectors, tolerations)

    def per_pod(self, resource: str) -> int:
        return self.requests[resource] // self.count if self.count else 0


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def jobset_podsets(jobset: Mapping[str, Any]) -> list[PodSet]:
    """The JobSet integration's PodSets (``JobSet.PodSets``), templates copied."""
    spec = jobset.get("spec") or {}
    podsets = []
    for rjob in spec.get("replicatedJobs") or ():
        job_spec = (rjob.get("template") or {}).get("spec") or {}
        parallelism = _int(job_spec.get("parallelism"), 1)
        per_replica = min(parallelism, _int(job_spec.get("completions"), parallelism))
        count = _int(rjob.get("replicas"), 1) * per_replica
        template = copy.deepcopy(job_spec.get("template") or {})
        podsets.append(PodSet(str(rjob.get("name", "")), count, template))
    return podsets


def _merge_keep_first(first: ResourceList, second: ResourceList) -> ResourceList:
    """``MergeResourceListKeepFirst``: ``first``, plus what only ``second`` names."""
    return {**second, **first}


def _container_defaults(namespace: str, setup: QueueSetup) -> tuple[ResourceList, ResourceList]:
    """The summarised ``Container`` ``default`` and ``defaultRequest`` of the namespace."""
    default: ResourceList = {}
    default_request: ResourceList = {}
    ranges = [m for m in setup.limit_ranges if (m.namespace or "default") == namespace]
    for manifest in sorted(ranges, key=lambda m: m.name):
        for item in (manifest.data.get("spec") or {}).get("limits") or ():
            if isinstance(item, dict) and item.get("type") == "Container":
                default = _merge_keep_first(default, resource_list(item.get("default")))
                default_request = _merge_keep_first(
                    default_request, resource_list(item.get("defaultRequest"))
                )
    return default, default_request


def _overhead(spec: JsonObject, setup: QueueSetup) -> None:
    name = spec.get("runtimeClassName")
    if not name or spec.get("overhead"):
        return
    runtime_class = setup.runtime_classes.get(str(name))
    if runtime_class is None:
        return  # Kueue logs the lookup error and goes on
    overhead = runtime_class.data.get("overhead")
    if isinstance(overhead, dict):
        spec["overhead"] = overhead.get("podFixed")


def adjust_resources(podsets: list[PodSet], namespace: str, setup: QueueSetup) -> list[PodSet]:
    """``workload.AdjustResources``: overhead, LimitRange defaults, limits as requests."""
    default, default_request = _container_defaults(namespace, setup)
    has_container_range = any(
        isinstance(item, dict) and item.get("type") == "Container"
        for m in setup.limit_ranges
        if (m.namespace or "default") == namespace
        for item in (m.data.get("spec") or {}).get("limits") or ()
    )
    out = []
    for podset in podsets:
        template = copy.deepcopy(podset.template)
        spec = template.setdefault("spec", {})
        _overhead(spec, setup)
        for key in ("initContainers", "containers"):
            for container in spec.get(key) or ():
                resources = container.setdefault("resources", {})
                limits = resource_list(resources.get("limits"))
                requests = resource_list(resources.get("requests"))
                if has_container_range:
                    limits = _merge_keep_first(limits, default)
                    requests = _merge_keep_first(requests, default_request)
                requests = _merge_keep_first(requests, limits)
                resources["limits"], resources["requests"] = limits, requests
        out.append(PodSet(podset.name, podset.count, template))
    return out


def kueue_value(resource: str, quantity: Quantity) -> int:
    """``resources.ResourceValue``: cpu in millicores, anything else in whole units."""
    return quantity.milli_value() if resource == "cpu" else quantity.value()


def _transform(requests: ResourceList, config: ResourcesConfig) -> ResourceList:
    """``applyResourceTransformations`` (no match: the requests as they are)."""
    by_input = {t.input: t for t in config.transformations}
    if not any(name in by_input for name in requests):
        return requests
    out: ResourceList = {}
    for name, quantity in requests.items():
        transformation = by_input.get(name)
        if transformation is None:
            out[name] = quantity
            continue
        if transformation.multiply_by and transformation.multiply_by in requests:
            quantity = quantity.mul(requests[transformation.multiply_by].value())
        for output, factor in transformation.outputs:
            value = factor.mul(quantity.value())
            out[output] = value.add(out[output]) if output in out else value
        if transformation.retain:
            out[name] = quantity
    return out


def total_requests(podsets: list[PodSet], config: ResourcesConfig) -> list[PodSetRequests]:
    """``totalRequestsFromPodSets``: each PodSet's requests, as Kueue counts them."""
    out = []
    for podset in podsets:
        requests = pod_requests(podset.template.get("spec") or {})
        kept = {
            name: quantity
            for name, quantity in requests.items()
            if not any(name.startswith(prefix) for prefix in config.exclude_prefixes)
        }
        values = {
            name: kueue_value(name, quantity) * podset.count
            for name, quantity in _transform(kept, config).items()
        }
        out.append(
            PodSetRequests(podset.name, podset.count, dict(sorted(values.items())), podset.template)
        )
    return out


def jobset_workload(
    jobset: Mapping[str, Any], setup: QueueSetup, namespace: str | None = None
) -> list[PodSetRequests]:
    """The Workload of ``jobset`` (rendered, or as Kueue's TrainJob integration builds it)."""
    if namespace is None:
        namespace = str((jobset.get("metadata") or {}).get("namespace") or "default")
    podsets = adjust_resources(jobset_podsets(jobset), namespace, setup)
    return total_requests(podsets, setup.resources)


def kueue_jobset(
    trainjob: Mapping[str, Any], runtime_spec: Mapping[str, Any], trainer_version: str
) -> tuple[JsonObject | None, list[str]]:
    """The JobSet Kueue's TrainJob integration builds for ``trainjob`` (``getChildJobSet``:
    ``RuntimeInfo``, then the JobSet builder, with the Trainer release Kueue embeds):
    trainc's Trainer framework at that release, without the admission checks (Kueue runs
    none; a TrainJob the cluster's webhook refuses never reaches it) and before any
    output overlay (Kueue reads the TrainJob and its runtime, never what a cluster
    overlay makes of the JobSet). The errors instead when that build fails."""
    job = TrainJobContext(json_copy(dict(trainjob)), RenderOptions(trainer_version=trainer_version))
    try:
        info = new_runtime_info(job, json_copy(dict(runtime_spec)))
        objects = run_phases(default_phases(), info, job)
    except TraincError as error:  # what the controller's reconcile would fail with
        return None, [str(error)]
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as error:
        # input the cluster's own webhook refuses (Kueue runs no admission checks)
        return None, [f"the Trainer {trainer_version} framework cannot build it: {error}"]
    jobset = next((o for o in objects if o.get("kind") == "JobSet"), None)
    if jobset is None:
        return None, ["the runtime builds no JobSet"]
    return apply_configuration_json(jobset), []


def trainjob_workload(
    trainjob: Mapping[str, Any],
    runtime_spec: Mapping[str, Any],
    setup: QueueSetup,
    trainer_version: str,
) -> tuple[list[PodSetRequests], list[str]]:
    """The Workload of a TrainJob delivered as is (Kueue's TrainJob integration)."""
    jobset, errors = kueue_jobset(trainjob, runtime_spec, trainer_version)
    if jobset is None:
        return [], errors
    namespace = str((trainjob.get("metadata") or {}).get("namespace") or "default")
    return jobset_workload(jobset, setup, namespace), []
