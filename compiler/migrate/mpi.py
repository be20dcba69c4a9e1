"""MPIJob -> TrainJob + runtime with ``mlPolicy.mpi``, for both API versions:

* ``kubeflow.org/v1`` (Training Operator): the launcher ran commands through
  ``kubectl exec`` (kubexec.sh, a Role, the kubectl-delivery init container); v2 uses
  SSH, so the worker image must run sshd.
* ``kubeflow.org/v2beta1`` (MPI Operator): already SSH based; its fields map closely
  (slotsPerWorker, sshAuthMountPath, runLauncherAsWorker, launcherCreationPolicy).

The launcher becomes replicated job ``launcher`` (the trainer ancestor, container
``node``), the workers replicated job ``node`` sized by ``trainer.numNodes``."""

from __future__ import annotations

import copy
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
    listing_bytes,
    listing_fits,
    name_length,
    pod_template,
    refuse,
    restart_policy,
    run_policy,
    runtime_object,
    seq,
    trainjob_object,
    trainjob_run_fields,
)
from compiler.migrate.source import MPI_V2
from compiler.migrate.vcjob import (
    Tasks,
    add_port,
    backoff,
    drop_task_field,
    host_files,
    host_files_note,
    job_level,
    map_pod_scheduling,
    podgroup_note,
    queue,
    task_pod,
    upper,
)

SSHD = ("/usr/sbin/sshd", "-De")
BASE = "spec.mpiReplicaSpecs"


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
    worker = specs.get("Worker")
    # both defaulters make an unset Worker.replicas 0
    workers = 0 if worker is None else int_or_none(worker.get("replicas")) or 0
    if workers == 0:
        refuse(
            job,
            "MPI_NO_WORKERS",
            f"{BASE}[Worker]",
            "a launcher without workers: v2's MPI policy runs ranks on the replicated job node, which needs at least one pod",
            workaround="give the job one Worker, or run the launcher's command in a plain TrainJob",
        )
        return []
    for rtype, rspec in specs.items():
        if "replicas" in rspec:
            job.mapped(
                f"{BASE}[{rtype}].replicas",
                "TrainJob.spec.trainer.numNodes" if rtype == "Worker" else "launcher (one pod)",
            )
    slots, gpu, mount = _policy_fields(job, specs, v2)
    launcher_pod, worker_pod, worker_container, policies = _pods(job, specs, v2)
    depends = None
    creation = job.spec.get("launcherCreationPolicy")
    if not v2 or creation == "WaitForWorkersReady":
        depends = seq(cmap(("name", "node"), ("status", "Ready")))
    if creation is not None:
        job.mapped(
            "spec.launcherCreationPolicy",
            "launcher dependsOn node Ready" if depends else "(launcher starts at once)",
        )
    runtime = mpi_runtime(worker_pod, launcher_pod, workers, slots, mount, gpu, depends)
    run_policy(job, policies, runtime, mpi_operator=v2)
    if any(p == "ExitCode" for p in policies):
        runtime.exit_code = True
    if v2:
        worker_env = child(worker_container, "env", CommentedSeq())
        worker_env.append(env_value("K_MPI_JOB_ROLE", "worker"))
    _launcher_env(job, launcher_pod, v2, gpu)
    _notes(job, v2, slots, gpu)
    common_notes(job, [], False)
    spec = mpi_trainjob(job, workers, workers + (1 if gpu else 0), slots)
    trainjob_run_fields(job, spec)
    if job.report.errors:
        return []
    return [runtime_object(job, runtime, "mpi"), trainjob_object(job, spec)]


def mpi_runtime(
    worker_pod: CommentedMap,
    launcher_pod: CommentedMap,
    workers: int,
    slots: int,
    mount: str,
    gpu: bool,
    depends: CommentedSeq | None = None,
) -> Runtime:
    """The runtime every MPI job becomes: ``mlPolicy.mpi`` (OpenMPI), the workers as
    replicated job ``node``, the launcher (the trainer ancestor) as ``launcher``, and
    the JobSet done when the launcher is."""
    mpi = cmap(
        ("numProcPerNode", slots),
        ("mpiImplementation", "OpenMPI"),
        ("sshAuthMountPath", mount),
        ("runLauncherAsNode", gpu),
    )
    runtime = Runtime(cmap(("mpi", mpi)), total_pods=workers + 1)
    runtime.jobs = [
        ReplicatedJob("node", worker_pod),
        ReplicatedJob("launcher", launcher_pod, ancestor=True, depends_on=depends),
    ]
    runtime.success_policy = cmap(("operator", "All"), ("targetReplicatedJobs", seq("launcher")))
    return runtime


def mpi_trainjob(job: Job, workers: int, numnodes: int, slots: int) -> CommentedMap:
    """The TrainJob spec over the dedicated MPI runtime (and the name-length check of
    its pods)."""
    name_length(job, [("node", max(workers, 1)), ("launcher", 1)])
    trainer = cmap(("numNodes", numnodes), ("numProcPerNode", slots))
    return cmap(("runtimeRef", dedicated_runtime_ref(job)), ("trainer", trainer))


def _policy_fields(job: Job, specs: dict[str, Any], v2: bool) -> tuple[int, bool, str]:
    """slotsPerWorker, whether the launcher runs as a node, sshAuthMountPath; the
    implementation (OpenMPI only) is checked."""
    slots = int_or_none(job.spec.get("slotsPerWorker"))
    slots = 1 if slots is None else slots
    if "slotsPerWorker" in job.spec:
        job.mapped(
            "spec.slotsPerWorker",
            "TrainingRuntime.spec.mlPolicy.mpi.numProcPerNode + TrainJob.spec.trainer.numProcPerNode",
        )
    launcher = specs.get("Launcher") or {}
    gpu = _gpu_launcher(launcher) if not v2 else bool(job.spec.get("runLauncherAsWorker"))
    if v2 and "runLauncherAsWorker" in job.spec:
        job.mapped(
            "spec.runLauncherAsWorker", "TrainingRuntime.spec.mlPolicy.mpi.runLauncherAsNode"
        )
    mount = str(job.spec.get("sshAuthMountPath") or "/root/.ssh")
    if "sshAuthMountPath" in job.spec:
        job.mapped("spec.sshAuthMountPath", "TrainingRuntime.spec.mlPolicy.mpi.sshAuthMountPath")
    implementation = str(job.spec.get("mpiImplementation") or "OpenMPI")
    if "mpiImplementation" not in job.spec:
        return slots, gpu, mount
    if implementation == "OpenMPI":
        job.mapped("spec.mpiImplementation", "TrainingRuntime.spec.mlPolicy.mpi.mpiImplementation")
        return slots, gpu, mount
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
    return slots, gpu, mount


def _pods(
    job: Job, specs: dict[str, Any], v2: bool
) -> tuple[CommentedMap, CommentedMap, CommentedMap, list[str]]:
    """The launcher and worker pod templates (container ``node``, restart policies),
    the worker's main container, and the replica restart policies as v1 had them."""
    launcher = specs.get("Launcher") or {}
    worker = specs.get("Worker")
    policies: list[str] = []
    launcher_pod, _ = pod_template(
        job, launcher.get("template"), f"{BASE}[Launcher].template", "\0"
    )
    main_worker = str(job.spec.get("mainContainer") or "")
    if "mainContainer" in job.spec:
        job.mapped("spec.mainContainer", "the worker container renamed node")
    worker_pod, worker_main = pod_template(
        job, (worker or {}).get("template"), f"{BASE}[Worker].template", main_worker or "\0"
    )
    for pod, rtype, rspec in (
        (launcher_pod, "Launcher", launcher),
        (worker_pod, "Worker", worker or {}),
    ):
        # the MPI Operator restarts its launcher OnFailure by default; v1 and workers: Never
        default = "OnFailure" if v2 and rtype == "Launcher" else "Never"
        policy, _ = restart_policy(
            job, f"{BASE}[{rtype}].restartPolicy", rspec.get("restartPolicy"), default
        )
        policies.append(rspec.get("restartPolicy") or default)
        pod["spec"]["restartPolicy"] = policy
    worker_container = (worker_pod["spec"].get("containers") or [{}])[worker_main]
    if (
        worker is not None
        and not worker_container.get("command")
        and not worker_container.get("args")
    ):
        _sshd_command(job, worker_container, v2)
    return launcher_pod, worker_pod, worker_container, policies


def _sshd_command(job: Job, container: CommentedMap, v2: bool) -> None:
    """The worker command when none was given: v1 ran sleep, the MPI Operator sshd."""
    container["command"] = CommentedSeq(SSHD)
    path = f"{BASE}[Worker].template.spec.containers[0].command"
    if v2:
        job.diag(
            "MPI_WORKER_SSHD_DEFAULT",
            "info",
            path,
            "the MPI Operator ran /usr/sbin/sshd -De when no command was given; it is written out",
            target="container node command",
        )
        return
    job.diag(
        "MPI_WORKER_HAS_NO_SSHD_COMMAND",
        "warning",
        path,
        "v1 kept workers alive with `sleep 365d` and ran commands through kubectl exec; v2 reaches workers over SSH, so the worker runs /usr/sbin/sshd -De",
        target="container node command",
        action="approximated",
        workaround="make sure the worker image has sshd",
        decide=True,
        covers=("command:main@worker-*", "args:main@worker-*"),
    )


def _launcher_env(job: Job, launcher_pod: CommentedMap, v2: bool, gpu: bool) -> None:
    """The launcher's variables go into its template (trainer.env would reach the
    workers too when the launcher runs as a node)."""
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


def _validate(job: Job, specs: dict[str, Any], v2: bool) -> None:
    if v2:
        _validate_v2beta1(job, specs)
        return
    # kubeflow.org/v1: the controller's ValidateV1MpiJobSpec, before defaults
    base = BASE
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


def migrate_volcano(tasks: Tasks, master: str, worker: str, port: int | None) -> list[CommentedMap]:
    """A Volcano Job's ``mpi`` plugin (with ``ssh`` and ``svc``, which Volcano's
    webhook adds), or an ``ssh`` + ``svc`` master/worker pair without it (``port``
    None): the master task becomes the launcher, the worker task the ``node`` Job; the
    Trainer's SSH keys replace Volcano's, the host files are shimmed."""
    job = tasks.job
    names = tasks.names
    if [n for n in names if n not in (master, worker)] or not {master, worker} <= set(names):
        refuse(
            job,
            "VOLCANO_EXTRA_TASK_UNSUPPORTED",
            "spec.tasks",
            f"the mpi plugin needs exactly the tasks {master} and {worker} (found {', '.join(names)})",
        )
        return []
    if tasks.replicas(master) != 1:
        refuse(
            job,
            "VOLCANO_EXTRA_TASK_UNSUPPORTED",
            f"spec.tasks[{tasks.index(master)}].replicas",
            "the mpi master task must have one pod",
        )
        return []
    mount = tasks.args("ssh").get("ssh-key-file-path") or "/root/.ssh"
    workers = tasks.replicas(worker)
    pods = {name: _volcano_pod(tasks, name, master, port) for name in (master, worker)}
    map_pod_scheduling(job)
    if not _volcano_env(tasks, pods, master, worker, port is not None):
        return []
    depends = None
    if _waits_for_workers(tasks, master):
        depends = seq(cmap(("name", "node"), ("status", "Ready")))
    runtime = mpi_runtime(pods[worker], pods[master], workers, 1, mount, False, depends)
    runtime.pod_group = cmap(("volcano", CommentedMap()))
    runtime.backoff_limit = backoff({pods[n]["spec"]["restartPolicy"] for n in (master, worker)})
    queue(job, runtime)
    job_level(job, runtime, workers + 1)
    _volcano_notes(job, "mpi" if port is not None else "ssh")
    common_notes(job, [], False)
    spec = mpi_trainjob(job, workers, workers, 1)
    if job.report.errors:
        return []
    return [runtime_object(job, runtime, "mpi"), trainjob_object(job, spec)]


def _volcano_pod(tasks: Tasks, name: str, master: str, port: int | None) -> CommentedMap:
    """A task's pod: its fields mapped or reported, the main container first, the mpi
    plugin's port (if any) on every container."""
    job, index = tasks.job, tasks.index(name)
    for key in tasks.by_name[name]:
        if key in ("name", "replicas", "template"):
            job.mapped(
                f"spec.tasks[{index}].{key}",
                "replicated job " + ("launcher" if name == master else "node"),
            )
        elif key == "dependsOn" and name == master and _waits_for_workers(tasks, name):
            job.mapped(f"spec.tasks[{index}].dependsOn", "launcher dependsOn node Ready")
        elif key == "policies":
            job.diag(
                "VOLCANO_POLICY_APPROX",
                "warning",
                f"spec.tasks[{index}].policies",
                "task lifecycle policies: the JobSet succeeds when the launcher does (successPolicy targets launcher)",
                action="approximated",
            )
        else:
            drop_task_field(job, index, key)
    pod = task_pod(tasks, name, node_first=True)
    for container in pod["spec"]["containers"]:
        if port is not None:
            add_port(container, "mpijob-port", port)
    return pod


def _waits_for_workers(tasks: Tasks, master: str) -> bool:
    """The master task dependsOn the worker task alone: Volcano creates its pods once
    the workers' are running and ready, as JobSet's dependsOn status Ready."""
    names = (tasks.by_name[master].get("dependsOn") or {}).get("name") or []
    return [str(n) for n in names] == [n for n in tasks.names if n != master]


def _volcano_env(
    tasks: Tasks, pods: dict[str, CommentedMap], master: str, worker: str, mpi_host: bool
) -> bool:
    """MPI_HOST on the launcher (the mpi plugin's), VC_<TASK>_HOSTS/NUM everywhere and
    the /etc/volcano host files, at v2 addresses (compat env); False when the host list
    cannot be stored."""
    job = tasks.job
    workers = tasks.replicas(worker)
    size = listing_bytes(workers, len(f"{job.name}-node-0-.{job.name}"))
    if job.options.compat_env and not listing_fits(
        job, f"spec.tasks[{tasks.index(worker)}].replicas", "MPI_HOST", size
    ):
        return False
    hosts = (
        ",".join(f"{job.name}-node-0-{i}.{job.name}" for i in range(workers))
        if job.options.compat_env  # the variables are not written otherwise
        else ""
    )
    env = CommentedSeq([env_value("MPI_HOST", hosts)] if mpi_host else [])
    for name in (master, worker):
        count = 1 if name == master else workers
        value = f"{job.name}-launcher-0-0.{job.name}" if name == master else hosts
        env.append(env_value(f"VC_{upper(name)}_HOSTS", value))
        env.append(env_value(f"VC_{upper(name)}_NUM", str(count)))
    if not job.options.compat_env:
        return True
    child(pods[master]["spec"]["containers"][0], "env", CommentedSeq()).extend(env)
    for var in env[1:] if mpi_host else env:
        child(pods[worker]["spec"]["containers"][0], "env", CommentedSeq()).append(
            copy.deepcopy(var)
        )
    job.diag(
        "COMPAT_ENV_ADDED",
        "info",
        "spec.plugins.mpi" if mpi_host else "spec.plugins.svc",
        (
            "Volcano variables kept: MPI_HOST on the launcher, "
            if mpi_host
            else "Volcano variables kept: "
        )
        + "VC_*_HOSTS/VC_*_NUM everywhere (values use v2 addresses)",
        target="launcher and node container env",
        action="shimmed",
    )
    files = {
        master: [f"{job.name}-launcher-0-0.{job.name}"],
        worker: [f"{job.name}-node-0-{i}.{job.name}" for i in range(workers)],
    }
    for pod in pods.values():
        host_files(pod, files, pod["spec"]["containers"][0].get("image"))
    return True


def _volcano_notes(job: Job, plugin: str) -> None:
    job.diag(
        "VOLCANO_SSH_REPLACED",
        "warning",
        "spec.plugins.ssh",
        "the Trainer's SSH Secret (keys id_rsa, id_rsa.pub, authorized_keys) replaces Volcano's; Volcano's ssh config file (StrictHostKeyChecking no) is not produced",
        action="approximated",
        workaround="set StrictHostKeyChecking in the image, or pass -o StrictHostKeyChecking=no to the MPI launcher",
        decide=True,
        covers=("mount:*", "volume:*"),
    )
    host_files_note(
        job,
        "<job>-launcher-0-0.<job>, <job>-node-0-<i>.<job>",
        "the /etc/volcano/*.host files are not produced; the Trainer's hostfile is /etc/mpi/hostfile (OMPI_MCA_orte_default_hostfile)",
        "read /etc/mpi/hostfile instead of /etc/volcano/<task>.host",
        ("mount:*:/etc/volcano",),
    )
    job.diag(
        "MPI_OPERATOR_TO_TRAINER",
        "info",
        f"spec.plugins.{plugin}",
        "the Trainer's MPI policy sets OMPI_MCA_* and mounts its hostfile at /etc/mpi on the launcher",
        covers=("env:main:OMPI_MCA_*", "mount:*:/etc/mpi"),
    )
    podgroup_note(job)
