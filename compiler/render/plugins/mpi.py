"""MPI: the OpenMPI ML policy: SSH key volume, hostfile ConfigMap, OMPI env (spec §5).

Upstream: pkg/runtime/framework/plugins/mpi/mpi.go. Active when the runtime's
``mlPolicy.mpi`` is set. Roles are decided by replicated-job **name**, not by the
trainer-ancestor label: the job named ``launcher`` starts ``mpirun``, the job named
``node`` runs the SSH daemons. The shipped runtimes (deepspeed, mlx) label the launcher
as the trainer; upstream's test fixtures label ``node`` instead. Both work.

EnforceMLPolicy, in upstream's order:

1. With ``spec.trainer.numNodes``, the ``node`` PodSet's count becomes ``numNodes``, or
   ``max(numNodes - 1, 1)`` with ``runLauncherAsNode`` (the launcher is then a node too).
   The ``launcher`` count is never touched.
2. Slots per host: the TrainJob's ``numProcPerNode``; else, when the runtime says 1 and
   the per-node resources have more than one GPU, that GPU count; else the runtime's
   value. The result is written back into ``mlPolicy.mpi.numProcPerNode`` of the Info,
   where Build reads it, as upstream does.
3. For every PodSet named ``node`` or ``launcher``: the ``mpi-ssh-auth`` Secret volume,
   and on ``launcher`` also the ``mpi-hostfile`` ConfigMap volume; on their containers
   named ``node`` (only those) the SSH mount at ``sshAuthMountPath``; on the launcher's
   ``node`` container also the hostfile mount at ``/etc/mpi`` and the four OMPI env vars.

Build: the hostfile ConfigMap (one ``<endpoint> slots=<S>`` line per pod of each job
named ``node``, and of ``launcher`` with ``runLauncherAsNode``, in template order), and
the SSH Secret as a :class:`SecretRequirement`: upstream fills it with a fresh ECDSA
P-521 key pair, which trainc never renders.

Only ``OpenMPI`` is implemented upstream. Another ``mpiImplementation`` (the CRD admits
only ``OpenMPI`` and ``""``) fails the controller's reconcile with a message that prints
a Go pointer. trainc reports it up front from ``validate`` as an error on the TrainJob as
a whole (no field, like upstream's), under exactly upstream's condition (a launcher
``node`` container exists) and only when its own admission checks pass.
"""

from __future__ import annotations

from compiler.errors import FieldError, InputError
from compiler.render import upsert
from compiler.render.framework import (
    ComponentBuilderPlugin,
    CustomValidationPlugin,
    EnforceMLPolicyPlugin,
    TrainJobContext,
)
from compiler.render.info import Info, JsonObject, PodSet, SecretRequirement
from compiler.render.resources import effective_resources, num_gpu_per_node
from compiler.render.webhooks import reserved_env_errors
from compiler.upstream.names import LAUNCHER, NODE
from compiler.upstream.versions import DEFAULT_TRAINER_VERSION, Gate

NAME = "MPI"

# Version differences of this plugin (docs/trainer-versions.md).
SSH_FILE_MODES = Gate("v2.3.0", "SSH Secret volume defaultMode 0400 and per-file modes")
RESERVED_ENV_CHECK = Gate("v2.3.0", "the OpenMPI env vars are reserved (admission)")
# Before v2.2.0 numProcPerNode was an int or a string, and MPI refused strings.
MPI_INTEGER_NUM_PROC_PER_NODE = Gate(
    "v2.2.0", "numProcPerNode is an integer (before: strings refused by MPI)"
)
# From v2.1.0 a runtime numProcPerNode of 1 is raised to the GPU count (when above 1) of
# the TrainJob's, else the runtime's, resources; v2.0.0 keeps the 1.
MPI_NUM_PROC_FROM_GPUS = Gate("v2.1.0", "numProcPerNode 1 raised to the GPU count per node")
INVALID = "FieldValueInvalid"

OPEN_MPI = "OpenMPI"
DEFAULT_NUM_PROC_PER_NODE = 1
DEFAULT_SSH_AUTH_MOUNT_PATH = "/root/.ssh"

SSH_AUTH_SECRET_SUFFIX = "-mpi-ssh-auth"
SSH_AUTH_VOLUME = "mpi-ssh-auth"
SSH_AUTH_SECRET_TYPE = "kubernetes.io/ssh-auth"
SSH_PRIVATE_KEY = "ssh-privatekey"
SSH_PUBLIC_KEY = "ssh-publickey"
SSH_KEY_GENERATOR = "ssh-ecdsa-p521"
SSH_PRIVATE_KEY_FILE = "id_rsa"
SSH_PUBLIC_KEY_FILE = "id_rsa.pub"
SSH_AUTHORIZED_KEYS_FILE = "authorized_keys"
SSH_AUTH_DEFAULT_MODE = 0o400
SSH_PRIVATE_KEY_FILE_MODE = 0o640
SSH_PUBLIC_KEY_FILE_MODE = 0o644

HOSTFILE_CONFIGMAP_SUFFIX = "-mpi-hostfile"
HOSTFILE_VOLUME = "mpi-hostfile"
HOSTFILE_DIR = "/etc/mpi"
HOSTFILE_NAME = "hostfile"
HOSTFILE_MODE = 0o444

OMPI_HOSTFILE = "OMPI_MCA_orte_default_hostfile"
OMPI_RSH_ARGS = "OMPI_MCA_plm_rsh_args"
OMPI_KEEP_FQDN_HOSTNAMES = "OMPI_MCA_orte_keep_fqdn_hostnames"
OMPI_DEFAULT_SLOTS = "OMPI_MCA_orte_set_default_slots"
OMPI_RSH_ARGS_VALUE = "-o ConnectionAttempts=10"
RESERVED_ENV_NAMES = frozenset(
    {OMPI_HOSTFILE, OMPI_RSH_ARGS, OMPI_KEEP_FQDN_HOSTNAMES, OMPI_DEFAULT_SLOTS}
)

LAUNCHER_AS_NODE_MESSAGE = (
    "must have 1 when MPI trainingRuntime with enabled runLauncherAsNode "
    "does not have either launcher and node"
)


# --- the policy, with the CRD defaults the loader normally applied already


def _mpi_policy(info: Info) -> JsonObject | None:
    policy: JsonObject | None = (info.ml_policy or {}).get("mpi")
    return policy


def _num_proc_per_node(policy: JsonObject) -> int:
    value: int = policy.get("numProcPerNode", DEFAULT_NUM_PROC_PER_NODE)
    return value


def _implementation(policy: JsonObject) -> str:
    return str(policy.get("mpiImplementation", OPEN_MPI))


def _ssh_auth_mount_path(policy: JsonObject) -> str:
    return str(policy.get("sshAuthMountPath", DEFAULT_SSH_AUTH_MOUNT_PATH))


def ssh_auth_secret_name(trainjob_name: str) -> str:
    return f"{trainjob_name}{SSH_AUTH_SECRET_SUFFIX}"


def hostfile_configmap_name(trainjob_name: str) -> str:
    return f"{trainjob_name}{HOSTFILE_CONFIGMAP_SUFFIX}"


# --- what EnforceMLPolicy adds


def ssh_auth_volume(trainjob_name: str, version: str = DEFAULT_TRAINER_VERSION) -> JsonObject:
    """The Secret volume on ``node`` and ``launcher``: 0400 by default, per-item modes
    (before v2.3.0 no modes: the kubelet's 0644)."""
    volume: JsonObject = {
        "name": SSH_AUTH_VOLUME,
        "secret": {
            "secretName": ssh_auth_secret_name(trainjob_name),
            "items": [
                {
                    "key": SSH_PRIVATE_KEY,
                    "path": SSH_PRIVATE_KEY_FILE,
                    "mode": SSH_PRIVATE_KEY_FILE_MODE,
                },
                {
                    "key": SSH_PUBLIC_KEY,
                    "path": SSH_PUBLIC_KEY_FILE,
                    "mode": SSH_PUBLIC_KEY_FILE_MODE,
                },
                {
                    "key": SSH_PUBLIC_KEY,
                    "path": SSH_AUTHORIZED_KEYS_FILE,
                    "mode": SSH_PUBLIC_KEY_FILE_MODE,
                },
            ],
            "defaultMode": SSH_AUTH_DEFAULT_MODE,
        },
    }
    if not SSH_FILE_MODES.on(version):
        del volume["secret"]["defaultMode"]
        for item in volume["secret"]["items"]:
            del item["mode"]
    return volume


def hostfile_volume(trainjob_name: str) -> JsonObject:
    """The ConfigMap volume on ``launcher`` only; no defaultMode, item mode 0444."""
    return {
        "name": HOSTFILE_VOLUME,
        "configMap": {
            "name": hostfile_configmap_name(trainjob_name),
            "items": [{"key": HOSTFILE_NAME, "path": HOSTFILE_NAME, "mode": HOSTFILE_MODE}],
        },
    }


def open_mpi_envs(slots: int) -> list[JsonObject]:
    return [
        {"name": OMPI_HOSTFILE, "value": f"{HOSTFILE_DIR}/{HOSTFILE_NAME}"},
        {"name": OMPI_KEEP_FQDN_HOSTNAMES, "value": "true"},
        {"name": OMPI_DEFAULT_SLOTS, "value": str(slots)},
        {"name": OMPI_RSH_ARGS, "value": OMPI_RSH_ARGS_VALUE},
    ]


def _unsupported_message(implementation: str) -> str:
    # The controller's reconcile error, word for word but for the address: upstream
    # formats the *pointer* to the value, a new address each time.
    return (
        "TrainJob resources reconciliation failed: MPI implementation for 0x<address> "
        "doesn't supported (the address of the runtime's mlPolicy.mpi.mpiImplementation, "
        f'which is "{implementation}": only OpenMPI is implemented)'
    )


def _raises_unsupported(info: Info, policy: JsonObject) -> bool:
    """Whether upstream's EnforceMLPolicy fails: not OpenMPI and a launcher ``node`` container."""
    if _implementation(policy) == OPEN_MPI:
        return False
    return any(
        ps.name == LAUNCHER and any(c.name == NODE for c in ps.containers) for ps in info.pod_sets
    )


def _slots(info: Info, policy: JsonObject, trainer: JsonObject | None, version: str) -> int:
    if trainer is not None and trainer.get("numProcPerNode") is not None:
        value: int = trainer["numProcPerNode"]
        return value
    slots = _num_proc_per_node(policy)
    if slots == 1 and MPI_NUM_PROC_FROM_GPUS.on(version):
        gpus = num_gpu_per_node(effective_resources(info, trainer))
        if gpus > 1:
            return gpus
    return slots


def _enforce_pod_set(pod_set: PodSet, policy: JsonObject, trainjob_name: str, version: str) -> None:
    upsert.upsert_volumes(pod_set.volumes, [ssh_auth_volume(trainjob_name, version)])
    is_launcher = pod_set.name == LAUNCHER
    if is_launcher:
        upsert.upsert_volumes(pod_set.volumes, [hostfile_volume(trainjob_name)])
    for container in pod_set.containers:
        if container.name != NODE:
            continue
        upsert.upsert_volume_mounts(
            container.volume_mounts,
            [{"name": SSH_AUTH_VOLUME, "mountPath": _ssh_auth_mount_path(policy)}],
        )
        if not is_launcher:
            continue
        upsert.upsert_volume_mounts(
            container.volume_mounts, [{"name": HOSTFILE_VOLUME, "mountPath": HOSTFILE_DIR}]
        )
        implementation = _implementation(policy)
        if implementation != OPEN_MPI:
            # Normally caught by validate(); kept for callers that skip it.
            raise InputError.single(_unsupported_message(implementation))
        upsert.upsert_env(container.env, open_mpi_envs(_num_proc_per_node(policy)))


# --- what Build returns


def hostfile(info: Info, policy: JsonObject) -> str:
    """``<endpoint> slots=<S>`` per pod of the host jobs, in template order; "" unless OpenMPI."""
    if _implementation(policy) != OPEN_MPI:
        return ""
    run_launcher_as_node = bool(policy.get("runLauncherAsNode"))
    slots = _num_proc_per_node(policy)
    lines: list[str] = []
    for pod_set in info.pod_sets:
        if pod_set.name == NODE or (run_launcher_as_node and pod_set.name == LAUNCHER):
            lines.extend(f"{endpoint} slots={slots}\n" for endpoint in pod_set.endpoints())
    return "".join(lines)


def ssh_auth_secret_requirement(job: TrainJobContext) -> SecretRequirement:
    """Upstream's immutable ``kubernetes.io/ssh-auth`` Secret, as a requirement (no data)."""
    return SecretRequirement(
        name=ssh_auth_secret_name(job.name),
        namespace=job.namespace,
        type=SSH_AUTH_SECRET_TYPE,
        keys=(SSH_PRIVATE_KEY, SSH_PUBLIC_KEY),
        generator=SSH_KEY_GENERATOR,
        immutable=True,
        owner_references=tuple(job.owner_references()),
    )


# --- admission checks


def _launcher_as_node_errors(
    info: Info, policy: JsonObject, trainer: JsonObject
) -> list[FieldError]:
    num_nodes = trainer.get("numNodes")
    if (1 if num_nodes is None else num_nodes) < 2 or not policy.get("runLauncherAsNode"):
        return []
    if info.pod_set_by_name(LAUNCHER) is not None and info.pod_set_by_name(NODE) is not None:
        return []
    return [FieldError(INVALID, "spec.trainer.numNodes", LAUNCHER_AS_NODE_MESSAGE, num_nodes)]


# --- the plugin


class MPIPlugin(EnforceMLPolicyPlugin, ComponentBuilderPlugin, CustomValidationPlugin):
    name = NAME

    def enforce_ml_policy(self, info: Info, job: TrainJobContext) -> None:
        policy = _mpi_policy(info)
        if policy is None:
            return
        trainer = job.trainer
        if trainer is not None and trainer.get("numNodes") is not None:
            node = info.pod_set_by_name(NODE)
            if node is not None:
                num_nodes: int = trainer["numNodes"]
                node.count = max(num_nodes - 1, 1) if policy.get("runLauncherAsNode") else num_nodes
        policy["numProcPerNode"] = _slots(info, policy, trainer, job.trainer_version)
        for pod_set in info.pod_sets:
            if pod_set.name in (NODE, LAUNCHER):
                _enforce_pod_set(pod_set, policy, job.name, job.trainer_version)

    def sync_parallel_count(self, info: Info) -> None:
        return None

    def build(self, info: Info, job: TrainJobContext) -> list[JsonObject]:
        """The hostfile ConfigMap; the SSH Secret goes to ``info.secret_requirements``."""
        policy = _mpi_policy(info)
        if policy is None:
            return []
        info.secret_requirements.append(ssh_auth_secret_requirement(job))
        metadata = {**job.object_metadata(), "name": hostfile_configmap_name(job.name)}
        return [
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": metadata,
                "data": {HOSTFILE_NAME: hostfile(info, policy)},
            }
        ]

    def validate(self, info: Info, job: TrainJobContext) -> list[FieldError]:
        """Upstream's two checks, then the reconcile failure trainc reports up front."""
        policy = _mpi_policy(info)
        if policy is None:
            return []
        errors: list[FieldError] = []
        trainer = job.trainer
        if trainer is not None:
            nproc = trainer.get("numProcPerNode")
            if not MPI_INTEGER_NUM_PROC_PER_NODE.on(job.trainer_version) and isinstance(nproc, str):
                message = "must have an int value for MPI TrainJob"
                errors.append(
                    FieldError("FieldValueInvalid", "spec.trainer.numProcPerNode", message, nproc)
                )
            errors += _launcher_as_node_errors(info, policy, trainer)
            if RESERVED_ENV_CHECK.on(job.trainer_version):
                errors += reserved_env_errors(trainer, RESERVED_ENV_NAMES)
        if not errors and _raises_unsupported(info, policy):
            message = _unsupported_message(_implementation(policy))
            # Upstream's reconcile error names no field: the TrainJob as a whole.
            errors.append(FieldError("", "", message))
        return errors
