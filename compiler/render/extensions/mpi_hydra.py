"""Intel MPI and MPICH (``intel-mpi``, ``mpich``): the Hydra launchers, as the MPI Operator renders them.

Trainer v2.3.0 implements OpenMPI only (its CRD's ``mpiImplementation`` enum). The MPI
Operator v0.7.0 (``pkg/controller/mpi_job_controller.go``: ``newConfigMap``,
``newLauncherPodTemplate``, ``newWorker``) differs per implementation in three places,
which this extension applies on top of upstream's MPI plugin (SSH key Secret and its
mounts, the hostfile ConfigMap and its mount at ``/etc/mpi``, the slots: all the same for
every implementation, in the operator too):

- the hostfile lines: ``<host>:<slots>`` instead of OpenMPI's ``<host> slots=<slots>``;
- the launcher env, instead of the four ``OMPI_MCA_*`` variables: Intel
  ``I_MPI_HYDRA_HOST_FILE``, ``I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS``, ``I_MPI_PERHOST``;
  MPICH ``HYDRA_HOST_FILE``, ``HYDRA_LAUNCH_EXTRA_ARGS`` (no slots variable);
- the worker pods search ``<service>.<namespace>.svc.cluster.local``, so that Hydra's
  proxies reach the launcher by its bare hostname.

Mapped onto Trainer's layout: the operator's worker ``i`` is pod ``i`` of the ``node``
job, its launcher the ``launcher`` job, its Service (``<mpijob>``) the JobSet subdomain,
``slotsPerWorker`` the resolved ``numProcPerNode``, ``runLauncherAsWorker`` the runtime's
``runLauncherAsNode``. Host names keep Trainer's ``<pod>.<subdomain>`` form.
"""

from __future__ import annotations

from compiler.errors import FieldError
from compiler.render import upsert
from compiler.render.extensions.base import Extension, ExtensionPlugin, Parameters
from compiler.render.framework import (
    AmendObjectsPlugin,
    CustomValidationPlugin,
    EnforceMLPolicyPlugin,
    TrainJobContext,
)
from compiler.render.info import Info, JsonObject
from compiler.render.plugins import mpi
from compiler.upstream.names import LAUNCHER, NODE

INTEL = "intel-mpi"
MPICH_NAME = "mpich"
HOSTFILE_PATH = f"{mpi.HOSTFILE_DIR}/{mpi.HOSTFILE_NAME}"
CONNECTION_ATTEMPTS = "-o ConnectionAttempts=10"
OPEN_MPI_ENV_NAMES = frozenset(mpi.RESERVED_ENV_NAMES)


def launcher_envs(extension: str, slots: int) -> list[JsonObject]:
    """The operator's env for the launcher's first container, in its order."""
    if extension == INTEL:
        return [
            {"name": "I_MPI_HYDRA_HOST_FILE", "value": HOSTFILE_PATH},
            {"name": "I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS", "value": CONNECTION_ATTEMPTS},
            {"name": "I_MPI_PERHOST", "value": str(slots)},
        ]
    return [
        {"name": "HYDRA_HOST_FILE", "value": HOSTFILE_PATH},
        {"name": "HYDRA_LAUNCH_EXTRA_ARGS", "value": CONNECTION_ATTEMPTS},
    ]


def hostfile(info: Info, slots: int, run_launcher_as_node: bool) -> str:
    """``<host>:<slots>`` per pod, the same hosts and order as upstream's OpenMPI hostfile."""
    lines: list[str] = []
    for pod_set in info.pod_sets:
        if pod_set.name == NODE or (run_launcher_as_node and pod_set.name == LAUNCHER):
            lines.extend(f"{endpoint}:{slots}\n" for endpoint in pod_set.endpoints())
    return "".join(lines)


def search_domain(subdomain: str, namespace: str) -> str:
    return f"{subdomain}.{namespace}.svc.cluster.local"


class HydraMPIExtension(
    ExtensionPlugin, EnforceMLPolicyPlugin, AmendObjectsPlugin, CustomValidationPlugin
):
    def __init__(self, extension: str) -> None:
        self.extension = extension
        self.name = f"extension {extension}"

    def _slots(self, info: Info) -> int:
        value: int = ((info.ml_policy or {}).get("mpi") or {}).get("numProcPerNode", 1)
        return value

    def enforce_ml_policy(self, info: Info, job: TrainJobContext) -> None:
        launcher = info.pod_set_by_name(LAUNCHER)
        container = launcher.container(NODE) if launcher is not None else None
        if container is None:
            return
        container.env[:] = [e for e in container.env if e.get("name") not in OPEN_MPI_ENV_NAMES]
        upsert.upsert_env(container.env, launcher_envs(self.extension, self._slots(info)))

    def amend(self, objects: list[JsonObject], info: Info, job: TrainJobContext) -> None:
        name = mpi.hostfile_configmap_name(job.name)
        for obj in objects:
            if obj.get("kind") == "ConfigMap" and obj["metadata"]["name"] == name:
                obj["data"][mpi.HOSTFILE_NAME] = hostfile(
                    info, self._slots(info), info.run_launcher_as_node
                )
            if obj.get("kind") == "JobSet":
                self._search_launcher(obj, info, job)

    def validate(self, info: Info, job: TrainJobContext) -> list[FieldError]:
        """The operator's ``slotsPerWorker`` check (Trainer admits a negative numProcPerNode)."""
        slots = (job.trainer or {}).get("numProcPerNode")
        if isinstance(slots, int) and slots < 0:
            message = f"extension {self.extension}: must be greater than or equal to 0 (slots)"
            return [FieldError("FieldValueInvalid", "spec.trainer.numProcPerNode", message, slots)]
        return []

    def _search_launcher(self, jobset: JsonObject, info: Info, job: TrainJobContext) -> None:
        node = info.pod_set_by_name(NODE)
        if node is None:
            return
        domain = search_domain(node.subdomain, job.namespace)
        for rjob in jobset["spec"].get("replicatedJobs") or ():
            if rjob.get("name") != NODE:
                continue
            pod_spec = rjob["template"]["spec"]["template"]["spec"]
            searches = pod_spec.setdefault("dnsConfig", {}).setdefault("searches", [])
            searches.append(domain)


def _check_runtime(spec: JsonObject, params: Parameters) -> list[str]:
    policy = (spec.get("mlPolicy") or {}).get("mpi")
    if policy is None:
        return ["an MPI implementation extension needs the runtime's mlPolicy.mpi"]
    if policy.get("mpiImplementation", mpi.OPEN_MPI) != mpi.OPEN_MPI:
        return ["keep mlPolicy.mpi.mpiImplementation OpenMPI (the CRD's only value)"]
    return []


INTEL_EXTENSION = Extension(
    name=INTEL,
    summary="Intel MPI (Hydra) launcher env and hostfile, as the MPI Operator v0.7.0",
    plugin=lambda params: HydraMPIExtension(INTEL),
    check_runtime=_check_runtime,
    conflicts=(MPICH_NAME,),
)
MPICH_EXTENSION = Extension(
    name=MPICH_NAME,
    summary="MPICH (Hydra) launcher env and hostfile, as the MPI Operator v0.7.0",
    plugin=lambda params: HydraMPIExtension(MPICH_NAME),
    check_runtime=_check_runtime,
    conflicts=(INTEL,),
)
