"""Torch: the PyTorch ML policy, torchrun and torchtune modes (spec §4).

Upstream: pkg/runtime/framework/plugins/torch/torch.go (torchtune mode: ``torchtune.py``),
and the per-node resource helpers of pkg/runtime/runtime.go. Active when the runtime's
``mlPolicy.torch`` is set. On the trainer ``node`` container, and only when the TrainJob
has ``spec.trainer``, it upserts in this order: the TrainJob env, ``PET_NNODES``,
``PET_NPROC_PER_NODE``, ``PET_NODE_RANK``, then (torchrun mode only) ``PET_MASTER_ADDR``
and ``PET_MASTER_PORT``, then the port 29500. ``mlPolicy.torch.envInjection`` targets get
all five PET variables, in both modes, even without ``spec.trainer``.
"""

from __future__ import annotations

from compiler.errors import FieldError, InputError
from compiler.render import upsert
from compiler.render.framework import CustomValidationPlugin, EnforceMLPolicyPlugin, TrainJobContext
from compiler.render.info import Info, JsonObject, PodSetContainer
from compiler.render.plugins import torchtune
from compiler.render.plugins.torchtune import AUTO, CONTAINER_TRAINER_PORT, INVALID, NumProc
from compiler.render.resources import (
    effective_resources,
    num_cpu_per_node,
    num_gpu_per_node,
    resource_value,
)
from compiler.render.webhooks import reserved_env_errors
from compiler.upstream.names import ANCESTOR_TRAINER, NODE
from compiler.upstream.versions import DEFAULT_TRAINER_VERSION, Gate

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

# Version differences of this plugin (docs/trainer-versions.md). Before v2.2.0,
# numProcPerNode was an int or "auto"/"cpu"/"gpu", the runtime's
# mlPolicy.torch.numProcPerNode was the default, and admission only looked at a TrainJob
# that sets numProcPerNode (reserved env and torchtune checks included).
INTEGER_NUM_PROC_PER_NODE = Gate(
    "v2.2.0", "numProcPerNode is the TrainJob's integer (before: int or auto/cpu/gpu)"
)
# v2.0.0 works numProcPerNode out only when the TrainJob sets resourcesPerNode, from
# those resources alone (limits first, then requests); from v2.1.0 cpu, or auto without
# GPUs, always becomes the CPU count of the TrainJob's else the runtime's resources.
NUM_PROC_PER_NODE_FROM_RESOURCES = Gate(
    "v2.1.0", "numProcPerNode from the CPU count of the effective resources, always"
)
NUM_PROC_STRINGS = ("auto", "cpu", "gpu")


# --- numProcPerNode and the PET variables


def num_proc_per_node(
    trainer: JsonObject | None,
    gpus: int,
    resources: JsonObject,
    policy: JsonObject | None = None,
    version: str = DEFAULT_TRAINER_VERSION,
) -> NumProc:
    """The TrainJob's integer if set; else ``auto`` with GPUs; else ``max(1, CPUs)``.

    Before v2.2.0 the value is the TrainJob's, else the runtime ``policy``'s, else
    ``auto``; ``cpu``, or ``auto`` without GPUs, becomes ``max(1, CPUs)``.

    >>> num_proc_per_node({"numProcPerNode": 0}, 4, {})
    0
    >>> num_proc_per_node({}, 2, {})
    'auto'
    >>> num_proc_per_node(None, 0, {"limits": {"cpu": "3.7"}})
    4
    """
    if not NUM_PROC_PER_NODE_FROM_RESOURCES.on(version):
        return _num_proc_from_trainjob_resources(trainer, policy)
    if not INTEGER_NUM_PROC_PER_NODE.on(version):
        chosen: NumProc = (policy or {}).get("numProcPerNode", AUTO)
        if trainer is not None and trainer.get("numProcPerNode") is not None:
            chosen = trainer["numProcPerNode"]
        if chosen == "cpu" or (chosen == AUTO and gpus == 0):
            return max(1, num_cpu_per_node(resources))
        return chosen
    if trainer is not None and trainer.get("numProcPerNode") is not None:
        value: int = trainer["numProcPerNode"]
        return value
    if gpus == 0:
        return max(1, num_cpu_per_node(resources))
    return AUTO


def _counts_cpus(chosen: NumProc, resource_list: JsonObject) -> bool:
    """v2.0.0's shouldUseCPU: ``auto`` when no resource name contains ``gpu``, ``cpu``
    when ``cpu`` is listed, never for an integer or ``gpu``."""
    if chosen == AUTO:
        return not any("gpu" in name.lower() for name in resource_list)
    return chosen == "cpu" and "cpu" in resource_list


def _num_proc_from_list(chosen: NumProc, resource_list: JsonObject | None) -> tuple[NumProc, bool]:
    """v2.0.0's calculateNumProcPerNode over one list: the CPU count (at least 1) when it
    counts CPUs, else the fallback (1 for ``cpu``); 1 when the list is absent. Also
    whether the CPU count was used."""
    if resource_list is None:
        return 1, False
    if _counts_cpus(chosen, resource_list):
        return max(1, resource_value(resource_list.get("cpu", 0))), True
    return (1 if chosen == "cpu" else chosen), False


def _num_proc_from_trainjob_resources(
    trainer: JsonObject | None, policy: JsonObject | None
) -> NumProc:
    """v2.0.0: the TrainJob's (else the runtime's, else ``auto``) value, worked out from
    the TrainJob's ``resourcesPerNode`` when it sets them: from the limits, else from
    the requests (so ``4`` with only limits becomes 1)::

        >>> _num_proc_from_trainjob_resources(
        ...     {"numProcPerNode": 4, "resourcesPerNode": {"limits": {"cpu": "2"}}}, None)
        1
        >>> _num_proc_from_trainjob_resources(
        ...     {"resourcesPerNode": {"limits": {"cpu": "2500m"}}}, {"numProcPerNode": 8})
        1
        >>> _num_proc_from_trainjob_resources({"resourcesPerNode": {"requests": {"cpu": "3"}}}, None)
        3
    """
    chosen: NumProc = (policy or {}).get("numProcPerNode", AUTO)
    if trainer is not None and trainer.get("numProcPerNode") is not None:
        chosen = trainer["numProcPerNode"]
    resources = (trainer or {}).get("resourcesPerNode")
    if resources is None:
        return chosen
    nproc, used_cpu = _num_proc_from_list(chosen, resources.get("limits"))
    if not used_cpu:
        nproc, _ = _num_proc_from_list(chosen, resources.get("requests"))
    return nproc


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
            if info.container_in_pod_set(job_name, container) is None:
                message = _missing_target_message(job_name, container)
                errors.append(FieldError(INVALID, "spec.runtimeRef", message, target))
    return errors


def _inject_into_targets(info: Info, envs: list[JsonObject]) -> None:
    for target in _injection_targets(info):
        job_name = target.get("jobName", "")
        for name in target.get("containerNames") or ():
            container = info.container_in_pod_set(job_name, name)
            if container is None:
                raise InputError.single(_missing_target_message(job_name, name))
            upsert.upsert_env(container.env, envs)


# --- The plugin


def _enforce_trainer_container(
    info: Info,
    job: TrainJobContext,
    trainer: JsonObject,
    container: PodSetContainer,
    num_nodes: int,
    nproc: NumProc,
    gpus: int,
) -> None:
    upsert.upsert_env(container.env, upsert.reencode_envs(trainer.get("env")))
    upsert.upsert_env(container.env, pet_envs(num_nodes, nproc))
    if not torchtune.is_torchtune(trainer):
        upsert.upsert_env(container.env, master_envs(job.name))
    else:
        runtime_ref_name = str((job.spec.get("runtimeRef") or {}).get("name", ""))
        tail = torchtune.command_tail(
            info.jobset_spec,
            trainer,
            runtime_ref_name,
            job.name,
            num_nodes,
            nproc,
            gpus,
            job.trainer_version,
        )
        trainer["command"] = [*trainer["command"], *tail]
    upsert.upsert_ports(container.ports, [{"containerPort": CONTAINER_TRAINER_PORT}])


def _num_proc_string_errors(value: NumProc) -> list[FieldError]:
    """Before v2.2.0: a string numProcPerNode must be auto, cpu or gpu."""
    if isinstance(value, int) or value in NUM_PROC_STRINGS:
        return []
    message = f"must have an int value or [{' '.join(NUM_PROC_STRINGS)}]"
    return [FieldError(INVALID, "spec.trainer.numProcPerNode", message, value)]


class TorchPlugin(EnforceMLPolicyPlugin, CustomValidationPlugin):
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
        nproc = num_proc_per_node(
            trainer, gpus, resources, _torch_policy(info), job.trainer_version
        )
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
        if not INTEGER_NUM_PROC_PER_NODE.on(job.trainer_version):
            if trainer.get("numProcPerNode") is None:
                return errors
            errors += _num_proc_string_errors(trainer["numProcPerNode"])
        errors += reserved_env_errors(trainer, RESERVED_ENV_NAMES)
        if torchtune.is_torchtune(trainer):
            gpus = num_gpu_per_node(effective_resources(info, trainer))
            errors += torchtune.validate_torchtune(job, gpus)
        return errors
