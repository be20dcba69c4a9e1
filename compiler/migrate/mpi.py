"""MPIJob -> TrainJob + runtime with ``mlPolicy.mpi``, for both API versions:

* ``kubeflow.org/v1`` (Training Operator): the launcher ran commands through
  ``kubectl exec`` (kubexec.sh, a Role, the kubectl-delivery init container); v2 uses
  SSH, so the worker image must run sshd.
* ``kubeflow.org/v2beta1`` (MPI Operator): already SSH based; its fields map closely
  (slotsPerWorker, sshAuthMountPath, runLauncherAsWorker, launcherCreationPolicy).

The launcher becomes replicated job ``launcher`` (the trainer ancestor, container
``node``), the workers replicated job ``node`` sized by ``trainer.numNodes``."""

from __future__ import annotations

import re
from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq

from compiler.migrate.common import (
    Job,
    ReplicatedJob,
    Runtime,
    check_metadata,
    child,
    cmap,
    common_notes,
    dedicated_runtime_ref,
    env_value,
    int_or_none,
    name_length,
    pod_template,
    restart_policy,
    run_policy,
    runtime_object,
    seq,
    trainjob_object,
    trainjob_run_fields,
)
from compiler.migrate.source import MPI_V2

SSHD = ("/usr/sbin/sshd", "-De")


def migrate(job: Job) -> list[CommentedMap]:
    v2 = job.src.api_version == MPI_V2
    found = job.spec.get("mpiReplicaSpecs")
    if not isinstance(found, dict):
        job.reject("spec.mpiReplicaSpecs", "Required value: MPIReplicaSpecs is not valid")
        job.raise_problems()
    specs: dict[str, Any] = found if isinstance(found, dict) else {}
    _validate(job, specs, v2)
    job.raise_problems()
    check_metadata(job)
    base = "spec.mpiReplicaSpecs"
    launcher = specs.get("Launcher") or {}
    worker = specs.get("Worker")
    # both defaulters make an unset Worker.replicas 0
    workers = 0 if worker is None else int_or_none(worker.get("replicas")) or 0
    if workers == 0:
        job.diag(
            "MPI_NO_WORKERS",
            "error",
            f"{base}[Worker]",
            "a launcher without workers: v2's MPI policy runs ranks on the replicated job node, which needs at least one pod",
            action="rejected",
            workaround="give the job one Worker, or run the launcher's command in a plain TrainJob",
            decide=True,
            covers=("*",),
            hard=True,
        )
        return []
    for rtype, rspec in specs.items():
        if "replicas" in rspec:
            job.mapped(
                f"{base}[{rtype}].replicas",
                "TrainJob.spec.trainer.numNodes" if rtype == "Worker" else "launcher (one pod)",
            )
    slots = int_or_none(job.spec.get("slotsPerWorker"))
    slots = 1 if slots is None else slots
    if "slotsPerWorker" in job.spec:
        job.mapped(
            "spec.slotsPerWorker",
            "TrainingRuntime.spec.mlPolicy.mpi.numProcPerNode + TrainJob.spec.trainer.numProcPerNode",
        )
    gpu = _gpu_launcher(launcher) if not v2 else bool(job.spec.get("runLauncherAsWorker"))
    if v2 and "runLauncherAsWorker" in job.spec:
        job.mapped(
            "spec.runLauncherAsWorker", "TrainingRuntime.spec.mlPolicy.mpi.runLauncherAsNode"
        )
    mount = str(job.spec.get("sshAuthMountPath") or "/root/.ssh")
    if "sshAuthMountPath" in job.spec:
        job.mapped("spec.sshAuthMountPath", "TrainingRuntime.spec.mlPolicy.mpi.sshAuthMountPath")
    implementation = str(job.spec.get("mpiImplementation") or "OpenMPI")
    if "mpiImplementation" in job.spec:
        if implementation == "OpenMPI":
            job.mapped(
                "spec.mpiImplementation", "TrainingRuntime.spec.mlPolicy.mpi.mpiImplementation"
            )
        else:
            job.diag(
                "MPI_IMPLEMENTATION_UNSUPPORTED",
                "error",
                "spec.mpiImplementation",
                f"{implementation}: Trainer v2.3.0 accepts only OpenMPI",
                action="rejected",
                workaround="build the image with OpenMPI, or keep the job on the MPI Operator",
                decide=True,
                covers=("*",)
                if not job.options.allow_lossy
                else ("env:main:I_MPI_*", "env:main:HYDRA_*", "env:main:OMPI_*", "file:*"),
            )
    policies: list[str] = []
    launcher_pod, _ = pod_template(
        job, launcher.get("template"), f"{base}[Launcher].template", "\0"
    )
    main_worker = str(job.spec.get("mainContainer") or "")
    if "mainContainer" in job.spec:
        job.mapped("spec.mainContainer", "the worker container renamed node")
    worker_pod, worker_main = pod_template(
        job, (worker or {}).get("template"), f"{base}[Worker].template", main_worker or "\0"
    )
    for pod, rtype, rspec in (
        (launcher_pod, "Launcher", launcher),
        (worker_pod, "Worker", worker or {}),
    ):
        # the MPI Operator restarts its launcher OnFailure by default; v1 and workers: Never
        default = "OnFailure" if v2 and rtype == "Launcher" else "Never"
        policy, _ = restart_policy(
            job, f"{base}[{rtype}].restartPolicy", rspec.get("restartPolicy"), default
        )
        policies.append(rspec.get("restartPolicy") or default)
        pod["spec"]["restartPolicy"] = policy
    # the worker command: v1 ran sleep, the MPI Operator sshd, when none was given
    worker_container = (worker_pod["spec"].get("containers") or [{}])[worker_main]
    if (
        worker is not None
        and not worker_container.get("command")
        and not worker_container.get("args")
    ):
        worker_container["command"] = CommentedSeq(SSHD)
        if v2:
            job.diag(
                "MPI_WORKER_SSHD_DEFAULT",
                "info",
                f"{base}[Worker].template.spec.containers[0].command",
                "the MPI Operator ran /usr/sbin/sshd -De when no command was given; it is written out",
                target="container node command",
            )
        else:
            job.diag(
                "MPI_WORKER_HAS_NO_SSHD_COMMAND",
                "warning",
                f"{base}[Worker].template.spec.containers[0].command",
                "v1 kept workers alive with `sleep 365d` and ran commands through kubectl exec; v2 reaches workers over SSH, so the worker runs /usr/sbin/sshd -De",
                target="container node command",
                action="approximated",
                workaround="make sure the worker image has sshd",
                decide=True,
                covers=("command:main@worker-*", "args:main@worker-*"),
            )
    numnodes = workers + (1 if gpu else 0)
    mpi = cmap(
        ("numProcPerNode", slots),
        ("mpiImplementation", "OpenMPI"),
        ("sshAuthMountPath", mount),
        ("runLauncherAsNode", gpu),
    )
    runtime = Runtime(cmap(("mpi", mpi)), total_pods=workers + 1)
    depends = None
    creation = job.spec.get("launcherCreationPolicy")
    if not v2 or creation == "WaitForWorkersReady":
        depends = seq(cmap(("name", "node"), ("status", "Ready")))
    if creation is not None:
        job.mapped(
            "spec.launcherCreationPolicy",
            "launcher dependsOn node Ready" if depends else "(launcher starts at once)",
        )
    worker_job = ReplicatedJob("node", worker_pod)
    runtime.jobs = [
        worker_job,
        ReplicatedJob("launcher", launcher_pod, ancestor=True, depends_on=depends),
    ]
    runtime.success_policy = cmap(("operator", "All"), ("targetReplicatedJobs", seq("launcher")))
    run_policy(job, policies, runtime)
    if any(p == "ExitCode" for p in policies):
        runtime.exit_code = True
    if v2:
        worker_env = child(worker_container, "env", CommentedSeq())
        worker_env.append(env_value("K_MPI_JOB_ROLE", "worker"))
    trainer = cmap(("numNodes", numnodes), ("numProcPerNode", slots))
    # The launcher's variables go into its template (trainer.env would reach the
    # workers too when the launcher runs as a node).
    env = CommentedSeq()
    if job.options.compat_env:
        if v2:
            env.append(env_value("K_MPI_JOB_ROLE", "launcher"))
        if not gpu:
            env.append(env_value("NVIDIA_VISIBLE_DEVICES", ""))
            env.append(env_value("NVIDIA_DRIVER_CAPABILITIES", ""))
        if env:
            launcher_container = launcher_pod["spec"]["containers"][0]
            child(launcher_container, "env", CommentedSeq()).extend(env)
            job.diag(
                "COMPAT_ENV_ADDED",
                "info",
                "",
                "launcher variables kept: " + ", ".join(str(e["name"]) for e in env),
                target="launcher container node env",
                action="shimmed",
            )
    elif v2 or not gpu:
        job.diag(
            "COMPAT_ENV_OFF",
            "warning",
            "",
            "--no-compat-env: the launcher's K_MPI_JOB_ROLE / NVIDIA_* variables are not set",
            action="dropped",
            covers=("env:main:K_MPI_JOB_ROLE", "env:main:NVIDIA_*"),
        )
    _notes(job, v2, slots, gpu)
    common_notes(job, [], False)
    name_length(job, [("node", max(workers, 1)), ("launcher", 1)])
    spec = cmap(
        (
            "runtimeRef",
            dedicated_runtime_ref(job),
        ),
        ("trainer", trainer),
    )
    trainjob_run_fields(job, spec)
    if job.report.errors:
        return []
    return [runtime_object(job, runtime, "mpi"), trainjob_object(job, spec)]


def _validate(job: Job, specs: dict[str, Any], v2: bool) -> None:
    if v2:
        _validate_v2beta1(job, specs)
        return
    # kubeflow.org/v1: the controller's ValidateV1MpiJobSpec, before defaults
    base = "spec.mpiReplicaSpecs"
    if "Launcher" not in specs:
        job.reject(
            f"{base}[Launcher]", "MPIReplicaSpec is not valid: Master ReplicaSpec must be present"
        )
    for rtype, rspec in specs.items():
        path = f"{base}[{rtype}]"
        if rtype not in ("Launcher", "Worker"):
            job.reject(path, f"MPIReplicaType is {rtype} but must be one of [Launcher Worker]")
            continue
        containers = _containers(rspec)
        if not containers:
            job.reject(
                f"{path}.template.spec.containers",
                f"MPIReplicaSpecs is not valid: containers definition expected in {rtype}",
            )
        for index, container in enumerate(containers):
            if not container.get("image"):
                job.reject(
                    f"{path}.template.spec.containers[{index}].image",
                    f"MPIReplicaSpec is not valid: Image is undefined in the container of {rtype}",
                )
            if not container.get("name"):
                job.reject(
                    f"{path}.template.spec.containers[{index}].name",
                    f"MPIReplicaSpec is not valid: ImageName is undefined in the container of {rtype}",
                )
        replicas = (rspec or {}).get("replicas")
        if rtype == "Launcher" and replicas is not None and replicas != 1:
            job.reject(
                f"{path}.replicas",
                "MPIReplicaSpec is not valid: There must be only 1 launcher replica",
            )


def _containers(rspec: Any) -> list[Any]:
    return list((((rspec or {}).get("template") or {}).get("spec") or {}).get("containers") or [])


_DNS1035 = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?\Z")


def _validate_v2beta1(job: Job, specs: dict[str, Any]) -> None:
    """The MPI Operator's validation.ValidateMPIJob, after its defaults (Launcher
    replicas 1, Worker replicas 0, restart policies, cleanPodPolicy None, slots 1)."""
    base = "spec.mpiReplicaSpecs"
    worker = specs.get("Worker")
    replicas = int_or_none((worker or {}).get("replicas")) or 0
    host = f"{job.name}-worker-{max(replicas, 1) - 1}"
    reasons = []
    if len(host) > 63:
        reasons.append("must be no more than 63 characters")
    if not _DNS1035.match(host):
        reasons.append(
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start "
            "with an alphabetic character, and end with an alphanumeric character (e.g. "
            "'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
        )
    if reasons:
        job.reject(
            "metadata.name",
            f'Invalid value: "{job.name}": will not able to create pod and service with invalid '
            f'DNS label "{host}": ' + ", ".join(reasons),
        )
    for rtype in ("Launcher", "Worker"):
        rspec = specs.get(rtype)
        path = f"{base}[{rtype}]"
        if rspec is None:
            if rtype == "Launcher":
                job.reject(path, "Required value: must have Launcher replica spec")
            continue
        policy = rspec.get("restartPolicy")
        if policy is not None and policy not in ("Never", "OnFailure"):
            job.reject(
                f"{path}.restartPolicy",
                f'Unsupported value: "{policy}": supported values: "Never", "OnFailure"',
            )
        if not _containers(rspec):
            job.reject(
                f"{path}.template.spec.containers",
                "Required value: must define at least one container",
            )
        count = int_or_none(rspec.get("replicas"))
        if rtype == "Launcher" and count is not None and count != 1:
            job.reject(f"{path}.replicas", f"Invalid value: {count}: must be 1")
        if rtype == "Worker" and (count or 0) <= 0:
            job.reject(
                f"{path}.replicas",
                f"Invalid value: {count or 0}: must be greater than or equal to 1",
            )
    slots = int_or_none(job.spec.get("slotsPerWorker"))
    if slots is not None and slots < 0:
        job.reject(
            "spec.slotsPerWorker", f"Invalid value: {slots}: must be greater than or equal to 0"
        )
    run = job.spec.get("runPolicy") or {}
    clean = run.get("cleanPodPolicy")
    if clean is not None and clean not in ("None", "Running", "All"):
        job.reject(
            "spec.runPolicy.cleanPodPolicy",
            f'Unsupported value: "{clean}": supported values: "All", "None", "Running"',
        )
    for key in ("ttlSecondsAfterFinished", "activeDeadlineSeconds", "backoffLimit"):
        value = int_or_none(run.get(key))
        if value is not None and value < 0:
            job.reject(
                f"spec.runPolicy.{key}",
                f"Invalid value: {value}: must be greater than or equal to 0",
            )
    managed = run.get("managedBy")
    if managed is not None and managed not in (
        "kubeflow.org/mpi-operator",
        "kueue.x-k8s.io/multikueue",
    ):
        job.reject(
            "spec.runPolicy.managedBy",
            f'Unsupported value: "{managed}": supported values: "kubeflow.org/mpi-operator", '
            '"kueue.x-k8s.io/multikueue"',
        )
    implementation = job.spec.get("mpiImplementation")
    if implementation is not None and implementation not in ("Intel", "MPICH", "OpenMPI"):
        job.reject(
            "spec.mpiImplementation",
            f'Unsupported value: "{implementation}": supported values: "Intel", "MPICH", "OpenMPI"',
        )
    for rtype in specs:
        if rtype not in ("Launcher", "Worker"):
            job.diag(
                "MPI_REPLICA_TYPE_IGNORED",
                "warning",
                f"{base}[{rtype}]",
                f"the MPI Operator ignores replica type {rtype}; so does the migration",
                action="dropped",
            )


def _gpu_launcher(launcher: dict[str, Any]) -> bool:
    for container in ((launcher.get("template") or {}).get("spec") or {}).get("containers") or []:
        for key in (container.get("resources") or {}).get("limits") or {}:
            if str(key).endswith(".com/gpu") or "gpu" in str(key):
                return True
    return False


def _notes(job: Job, v2: bool, slots: int, gpu: bool) -> None:
    if not v2:
        job.diag(
            "MPI_SSH_REQUIRED",
            "warning",
            "spec.mpiReplicaSpecs",
            "v1 launched ranks with kubectl exec (kubexec.sh, a ServiceAccount/Role, the kubectl-delivery init container); v2 launches them over SSH with keys mounted at sshAuthMountPath",
            action="approximated",
            workaround="worker images must run sshd",
            decide=True,
            covers=(
                "initContainer:kubectl-delivery",
                "env:main:OMPI_MCA_plm_rsh_agent",
                "env:main:I_MPI_HYDRA_BOOTSTRAP*",
                "env:main:OMPI_MCA_orte_keep_fqdn_hostnames",
                "env:main:OMPI_MCA_orte_set_default_slots",
                "env:main:OMPI_MCA_plm_rsh_args",
                "mount:*",
                "volume:*",
                "file:/etc/mpi/kubexec.sh",
                "file:/etc/mpi/discover_hosts.sh",
                "pod:serviceAccountName",
            ),
        )
    else:
        job.diag(
            "MPI_OPERATOR_TO_TRAINER",
            "info",
            "spec.mpiReplicaSpecs",
            "the MPI Operator's launcher Job and worker pods become JobSet replicated jobs launcher and node; SSH keys and the hostfile are the Trainer's",
            covers=(
                "mount:*",
                "volume:*",
                "file:/etc/mpi/discover_hosts.sh",
                "pod:dnsConfig",
                "env:main:OMPI_MCA_orte_set_default_slots",
            ),
        )
    job.diag(
        "MPI_HOSTFILE_FQDN",
        "info",
        "spec.slotsPerWorker",
        f"the hostfile lists v2 addresses <job>-node-0-<i>.<job> slots={slots}"
        + (" with the launcher first (runLauncherAsNode)" if gpu else ""),
        covers=(),
    )
