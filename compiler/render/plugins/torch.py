"""Torch: the PyTorch ML policy, torchrun and torchtune modes (spec §4).

Upstream: pkg/runtime/framework/plugins/torch/torch.go (torchtune mode: ``torchtune.py``),
and the per-node resource helpers of pkg/runtime/runtime.go. Active when the runtime's
``mlPolicy.torch`` is set. On the trainer ``node`` container, and only when the TrainJob
has ``spec.trainer``, it upserts in this order: the TrainJob env, ``PET_NNODES``,
``PET_NPROC_PER_NODE``, ``PET_NODE_RANK``, then (torchrun mode only) ``PET_MASTER_ADDR``
and ``PET_MASTER_PORT``, then the port 29500. ``mlPolicy.torch.envInjection`` targets get
all five PET variables, in both modes, even without ``spec.trainer``.

GPU count when several resource names contain ``gpu`` (say ``nvidia.com/gpu`` and
``amd.com/gpu``): upstream takes whichever a Go map iteration yields first, so the result
varies from call to call. trainc takes the lexicographically smallest such name, which
is also the order the runtime's resources have after the Go round trip.
"""

from __future__ import annotations

from typing import Any

from compiler.errors import InputError
from compiler.render import apply
from compiler.render.constants import ANCESTOR_TRAINER, LABEL_ANCESTOR, NODE
from compiler.render.framework import FieldError, TrainJobContext
from compiler.render.info import Info, JsonObject, PodSetContainer
from compiler.render.plugins import torchtune
from compiler.render.plugins.torchtune import AUTO, CONTAINER_TRAINER_PORT, INVALID, NumProc
from compiler.render.quantity import Quantity

NAME = "Torch"

PET_NNODES = "PET_NNODES"
PET_NPROC_PER_NODE = "PET_NPROC_PER_NODE"
PET_NODE_RANK = "PET_NODE_RANK"
PET_MASTER_ADDR = "PET_MASTER_ADDR"
PET_MASTER_PORT = "PET_MASTER_PORT"
RESERVED_ENV_NAMES = frozenset(
    {PET_NNODES, PET_NPROC_PER_NODE, PET_NODE_RANK, PET_MASTER_ADDR, PET_MASTER_PORT}
)
JOB_COMPLETION_INDEX_FIELD_PATH = "metadata.annotations['batch.kubernetes.io/job-completion-index']"


# --- Per-node resources (upstream runtime.ExtractResourcePerNodeFromRuntime, GetNumGPUPerNode)


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


# --- numProcPerNode and the PET variables


def num_proc_per_node(trainer: JsonObject | None, gpus: int, resources: JsonObject) -> NumProc:
    """The TrainJob's integer if set; else ``auto`` with GPUs; else ``max(1, CPUs)``.

    >>> num_proc_per_node({"numProcPerNode": 0}, 4, {})
    0
    >>> num_proc_per_node({}, 2, {})
    'auto'
    >>> num_proc_per_node(None, 0, {"limits": {"cpu": "3.7"}})
    4
    """
    if trainer is not None and trainer.get("numProcPerNode") is not None:
        value: int = trainer["numProcPerNode"]
        return value
    if gpus == 0:
        return max(1, num_cpu_per_node(resources))
    return AUTO


def pet_envs(num_nodes: int, nproc: NumProc) -> list[JsonObject]:
    return [
        {"name": PET_NNODES, "value": str(num_nodes)},
        {"name": PET_NPROC_PER_NODE, "value": str(nproc)},
        {
            "name": PET_NODE_RANK,
            "valueFrom": {"fieldRef": {"fieldPath": JOB_COMPLETION_INDEX_FIELD_PATH}},
        },
    ]


def master_envs(trainjob_name: str) -> list[JsonObject]:
    return [
        {"name": PET_MASTER_ADDR, "value": torchtune.trainer_endpoint(trainjob_name)},
        {"name": PET_MASTER_PORT, "value": str(CONTAINER_TRAINER_PORT)},
    ]


# --- envInjection


def _torch_policy(info: Info) -> JsonObject | None:
    policy: JsonObject | None = (info.ml_policy or {}).get("torch")
    return policy


def _injection_targets(info: Info) -> list[JsonObject]:
    targets: list[JsonObject] = ((_torch_policy(info) or {}).get("envInjection") or {}).get(
        "targets"
    ) or []
    return targets


def container_by_pod_set_name(info: Info, job_name: str, name: str) -> PodSetContainer | None:
    """Container ``name`` of the PodSet ``job_name``: regular containers first, then init ones."""
    pod_set = info.pod_set_by_name(job_name)
    if pod_set is None:
        return None
    for container in [*pod_set.containers, *pod_set.init_containers]:
        if container.name == name:
            return container
    return None


def _missing_target_message(job_name: str, container: str) -> str:
    return (
        f'envInjection target podSet "{job_name}" container "{container}" '
        "not found in runtime template"
    )


def validate_env_injection_targets(info: Info) -> list[FieldError]:
    errors: list[FieldError] = []
    for target in _injection_targets(info):
        job_name = target.get("jobName", "")
        for container in target.get("containerNames") or ():
            if container_by_pod_set_name(info, job_name, container) is None:
                message = _missing_target_message(job_name, container)
                errors.append(FieldError(INVALID, "spec.runtimeRef", message, target))
    return errors


def _inject_into_targets(info: Info, envs: list[JsonObject]) -> None:
    for target in _injection_targets(info):
        job_name = target.get("jobName", "")
        for name in target.get("containerNames") or ():
            container = container_by_pod_set_name(info, job_name, name)
            if container is None:
                raise InputError.single(_missing_target_message(job_name, name))
            apply.upsert_env(container.env, envs)


# --- The plugin


def _reserved_env_errors(trainer: JsonObject) -> list[FieldError]:
    envs = trainer.get("env") or []
    reserved = sorted({e.get("name") for e in envs if e.get("name") in RESERVED_ENV_NAMES})
    if not reserved:
        return []
    message = f"must not have reserved envs, invalid envs configured: [{' '.join(reserved)}]"
    return [FieldError(INVALID, "spec.trainer.env", message, envs)]


def _enforce_trainer_container(
    info: Info,
    job: TrainJobContext,
    trainer: JsonObject,
    container: PodSetContainer,
    num_nodes: int,
    nproc: NumProc,
    gpus: int,
) -> None:
    apply.upsert_env(container.env, apply.reencode_envs(trainer.get("env")))
    apply.upsert_env(container.env, pet_envs(num_nodes, nproc))
    if not torchtune.is_torchtune(trainer):
        apply.upsert_env(container.env, master_envs(job.name))
    else:
        runtime_ref_name = str((job.spec.get("runtimeRef") or {}).get("name", ""))
        tail = torchtune.command_tail(
            info.jobset_spec, trainer, runtime_ref_name, job.name, num_nodes, nproc, gpus
        )
        trainer["command"] = [*trainer["command"], *tail]
    apply.upsert_ports(container.ports, [{"containerPort": CONTAINER_TRAINER_PORT}])


class TorchPlugin:
    name = NAME

    def enforce_ml_policy(self, info: Info, job: TrainJobContext) -> None:
        """Counts, PET env, port, torchtune command; raises on a missing envInjection target."""
        if _torch_policy(info) is None:
            return
        trainer = job.trainer
        pod_set = info.pod_set_by_ancestor(ANCESTOR_TRAINER)
        if pod_set is not None and trainer is not None and trainer.get("numNodes") is not None:
            pod_set.count = trainer["numNodes"]
        resources = effective_resources(info, trainer)
        gpus = num_gpu_per_node(resources)
        nproc = num_proc_per_node(trainer, gpus, resources)
        num_nodes = pod_set.count if pod_set is not None else 1
        container = info.container_by_ancestor(ANCESTOR_TRAINER, NODE)
        if trainer is not None and container is not None:
            _enforce_trainer_container(info, job, trainer, container, num_nodes, nproc, gpus)
        _inject_into_targets(info, [*pet_envs(num_nodes, nproc), *master_envs(job.name)])

    def validate(self, info: Info, job: TrainJobContext) -> list[FieldError]:
        """envInjection targets, reserved PET env names, then the torchtune checks."""
        if _torch_policy(info) is None:
            return []
        errors = validate_env_injection_targets(info)
        trainer = job.trainer
        if trainer is None:
            return errors
        errors += _reserved_env_errors(trainer)
        if torchtune.is_torchtune(trainer):
            gpus = num_gpu_per_node(effective_resources(info, trainer))
            errors += torchtune.validate_torchtune(job, gpus)
        return errors
