"""Per-node resources as the ML plugins read them (upstream pkg/runtime/runtime.go).

``ExtractResourcePerNodeFromRuntime`` and ``GetNumGPUPerNode``, shared by Torch, MPI,
XGBoost and Flux.

GPU count when several resource names contain ``gpu`` (say ``nvidia.com/gpu`` and
``amd.com/gpu``): upstream takes whichever a Go map iteration yields first, so the result
varies from call to call. trainc takes the lexicographically smallest such name, which
is also the order the runtime's resources have after the Go round trip.
"""

from __future__ import annotations

from typing import Any

from compiler.kube.quantity import Quantity
from compiler.render.info import Info, JsonObject
from compiler.upstream.names import ANCESTOR_TRAINER, LABEL_ANCESTOR, NODE


def resources_per_node_from_runtime(info: Info) -> JsonObject | None:
    """``resources`` of the ``node`` container of the first job named ``node`` or labelled trainer.

    The job test is ``name == "node" or ancestor == "trainer"`` (Go's ``a && b || c``).
    Every container of the controller's working spec carries a (maybe empty) resources
    object, so the first matching job with a ``node`` container ends the search even when
    that container sets no resources::

        >>> resources_per_node_from_runtime(Info({}, {}, None, None, {"replicatedJobs": [
        ...     {"name": "node", "template": {"spec": {"template": {"spec": {
        ...         "containers": [{"name": "node"}]}}}}}]}, []))
        {'limits': {}, 'requests': {}}
    """
    for rjob in info.jobset_spec.get("replicatedJobs") or ():
        template = rjob.get("template") or {}
        labels = (template.get("metadata") or {}).get("labels") or {}
        if rjob.get("name") != NODE and labels.get(LABEL_ANCESTOR) != ANCESTOR_TRAINER:
            continue
        pod_spec = ((template.get("spec") or {}).get("template") or {}).get("spec") or {}
        for container in pod_spec.get("containers") or ():
            if container.get("name") == NODE:
                resources = container.get("resources") or {}
                return {
                    "limits": dict(resources.get("limits") or {}),
                    "requests": dict(resources.get("requests") or {}),
                }
    return None


def effective_resources(info: Info, trainer: JsonObject | None) -> JsonObject:
    """The TrainJob's ``resourcesPerNode`` as is (not merged), else the runtime's, else empty."""
    if trainer is not None and trainer.get("resourcesPerNode") is not None:
        resources: JsonObject = trainer["resourcesPerNode"]
        return resources
    return resources_per_node_from_runtime(info) or {}


def _quantity(raw: Any) -> Quantity:
    """A resource value as written (canonical string, or a raw YAML number) as Go decodes it."""
    return Quantity.from_manifest(raw)


def _value(raw: Any) -> int:
    """Go ``Quantity.Value()``: the integer value, rounded up (``1500m`` -> 2)."""
    value: int = _quantity(raw).value()
    return value


def resource_value(raw: Any) -> int:
    """Go ``Quantity.Value()`` of a resource value as written (rounded up)."""
    return _value(raw)


def _num_gpu(resource_list: JsonObject | None) -> int:
    """Rounded-up value of the first resource whose lower-cased name contains ``gpu``.

    First in sorted name order (upstream: Go map order, see the module docstring)::

        >>> _num_gpu({"cpu": "8", "nvidia.com/GPU": "1500m", "google.com/tpu": "4"})
        2
    """
    resource_list = resource_list or {}
    for name in sorted(resource_list):
        if "gpu" in name.lower():
            return _value(resource_list[name])
    return 0


def num_gpu_per_node(resources: JsonObject | None) -> int:
    """GPUs from requests; from limits only when requests give 0."""
    if resources is None:
        return 0
    gpus = _num_gpu(resources.get("requests"))
    if gpus == 0:
        gpus = max(gpus, _num_gpu(resources.get("limits")))
    return gpus


def num_cpu_per_node(resources: JsonObject | None) -> int:
    """Rounded-up CPU request; the limit only when the request is absent or zero.

    >>> num_cpu_per_node({"requests": {"cpu": "2500m"}, "limits": {"cpu": "8"}})
    3
    >>> num_cpu_per_node({"requests": {"cpu": "0"}, "limits": {"cpu": "0.7"}})
    1
    """
    if resources is None:
        return 0
    request = (resources.get("requests") or {}).get("cpu")
    if request is not None and not _quantity(request).is_zero():
        return _value(request)
    limit = (resources.get("limits") or {}).get("cpu")
    return _value(limit) if limit is not None else 0
