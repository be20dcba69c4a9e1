"""Volcano Job (batch.volcano.sh/v1alpha1) -> TrainJob + runtime with
``podGroupPolicy.volcano``.

* plugin ``pytorch`` (a master task of one pod and a worker task): merged into ``node``
  with ``mlPolicy.torch``;
* plugin ``mpi`` (with ``ssh``): the master task becomes the launcher, the worker task
  the ``node`` Job of ``mlPolicy.mpi``;
* plugin ``tensorflow``: one replicated job per role task, TF_CONFIG rebuilt by the shim;
* one task and no framework plugin: a plain runtime.

Other shapes (``ssh`` with pytorch, several tasks without a plugin, PVC templates) are
reported. Volcano's controller is not a Go module the harness can run, so these rules
follow the spec's reading of its source (plugins env, svc, ssh, pytorch, mpi,
tensorflow; the webhook's plugin defaults)."""

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
    differing_paths,
    env_index,
    env_value,
    listing_bytes,
    listing_fits,
    name_length,
    runtime_object,
    strip_for_compare,
    trainjob_object,
)


def _args(values: Any) -> dict[str, str]:
    out: dict[str, str] = {}
    for value in values or []:
        text = str(value)
        if text.startswith("--"):
            key, _, rest = text[2:].partition("=")
            out[key] = rest
    return out


def _port(job: Job, plugin: str, args: dict[str, str], default: int) -> int:
    """The plugin's ``--port`` flag, read as Go's flag package reads an int (base
    prefixes, a leading 0 for octal); one it cannot parse, or that is no port, is an
    input error at the plugin."""
    text = args.get("port") or ""
    if not text:
        return default
    try:
        port = int(text, 8) if re.fullmatch(r"[+-]?0[0-7_]+", text) else int(text, 0)
    except ValueError:
        job.reject(f"spec.plugins.{plugin}", f'invalid value "{text}" for flag -port: parse error')
        job.raise_problems()
        return default
    if not 0 < port < 65536:
        job.reject(
            f"spec.plugins.{plugin}",
            f"Invalid value: {port}: --port must be between 1 and 65535, inclusive",
        )
        job.raise_problems()
    return port


def _main_index(template: dict[str, Any], task: str) -> int:
    containers = ((template.get("spec") or {}).get("containers")) or []
    if len(containers) == 1:
        return 0
    for index, container in enumerate(containers):
        if container.get("name") == task:
            return index
    return 0


def migrate(job: Job) -> list[CommentedMap]:
    spec = job.spec
    tasks = spec.get("tasks") or []
    if not tasks:
        job.reject("spec.tasks", "Required value: No task specified in job spec")
    names = [str(t.get("name") or f"default{i}") for i, t in enumerate(tasks)]
    if len(set(names)) != len(names):
        job.reject("spec.tasks", "Invalid value: duplicated task name")
    for index, task in enumerate(tasks):
        if int(task.get("replicas") or 0) < 0:
            job.reject(f"spec.tasks[{index}].replicas", "Invalid value: replicas must be >= 0")
        if not ((task.get("template") or {}).get("spec") or {}).get("containers"):
            job.reject(
                f"spec.tasks[{index}].template.spec.containers",
                "Required value: a task needs containers",
            )
    job.raise_problems()
    check_metadata(job)
    plugins = spec.get("plugins") or {}
    for name in plugins:
        if name in ("pytorch", "svc", "env"):
            job.consume(f"spec.plugins.{name}")
        elif name not in ("ssh", "mpi", "tensorflow"):
            job.diag(
                "VOLCANO_PLUGIN_DROPPED",
                "warning",
                f"spec.plugins.{name}",
                f"the {name} plugin has no v2 equivalent",
                action="dropped",
            )
    # Volcano's mutating webhook adds svc to framework jobs (and ssh to mpi ones).
    plugins = dict(plugins)
    if any(p in plugins for p in ("tensorflow", "mpi", "pytorch", "ray")) and "svc" not in plugins:
        plugins["svc"] = []
        job.diag(
            "VOLCANO_SVC_DEFAULTED",
            "info",
            "spec.plugins",
            "Volcano's webhook adds the svc plugin to framework jobs; its variables are reproduced",
        )
    if "mpi" in plugins and "ssh" not in plugins:
        plugins["ssh"] = []
    torch = "pytorch" in plugins
    if "mpi" in plugins and "tensorflow" not in plugins and "pytorch" not in plugins:
        return _migrate_mpi(job, names, tasks, plugins)
    if "tensorflow" in plugins and "pytorch" not in plugins and "mpi" not in plugins:
        return _migrate_tf(job, names, tasks, plugins)
    if "ssh" in plugins or "mpi" in plugins:
        job.diag(
            "VOLCANO_SSH_UNSUPPORTED",
            "error",
            "spec.plugins.ssh" if "ssh" in plugins else "spec.plugins.mpi",
            "Volcano's ssh/mpi plugins have no v2 equivalent outside mlPolicy.mpi, which this migration does not build from a Volcano Job",
            action="rejected",
            decide=True,
            covers=("*",),
            hard=True,
        )
    if "tensorflow" in plugins:
        job.diag(
            "VOLCANO_TF_UNSUPPORTED",
            "error",
            "spec.plugins.tensorflow",
            "per-task TF_CONFIG has no v2 equivalent",
            action="rejected",
            decide=True,
            covers=("*",),
            hard=True,
        )
    by_name = dict(zip(names, tasks, strict=True))
    if torch:
        args = _args(plugins.get("pytorch"))
        master, worker = args.get("master") or "master", args.get("worker") or "worker"
        port = _port(job, "pytorch", args, 23456)
        order = [n for n in (master, worker) if n in by_name]
        extra = [n for n in names if n not in (master, worker)]
        if extra:
            job.diag(
                "VOLCANO_EXTRA_TASK_UNSUPPORTED",
                "error",
                "spec.tasks",
                f"tasks {', '.join(extra)} are neither the pytorch master nor worker",
                action="rejected",
                decide=True,
                covers=("*",),
                hard=True,
            )
        if master in by_name and int(by_name[master].get("replicas") or 0) != 1:
            job.diag(
                "VOLCANO_EXTRA_TASK_UNSUPPORTED",
                "error",
                f"spec.tasks[{names.index(master)}].replicas",
                "the pytorch master task must have one pod",
                action="rejected",
                decide=True,
                covers=("*",),
                hard=True,
            )
        if "wait-master-enabled" in args:
            job.diag(
                "VOLCANO_WAIT_MASTER_DROPPED",
                "info",
                "spec.plugins.pytorch",
                "the wait-for-master init container is not emitted",
                action="dropped",
                covers=("initContainer:wait-for-master",),
            )
    else:
        order = names
        port = 0
        if len(names) > 1:
            job.diag(
                "VOLCANO_MULTI_TASK_UNSUPPORTED",
                "error",
                "spec.tasks",
                "several tasks without a framework plugin: v2 sizes one replicated job",
                action="rejected",
                decide=True,
                covers=("*",),
                hard=True,
            )
    if job.report.errors or not order:
        return []
    primary = order[-1]
    ptask = by_name[primary]
    total = sum(int(by_name[n].get("replicas") or 0) for n in order)
    reference = strip_for_compare(_renamed(ptask.get("template") or {}, primary))
    for name in order:
        index = names.index(name)
        if name != primary:
            paths = differing_paths(
                reference, strip_for_compare(_renamed(by_name[name].get("template") or {}, name))
            )
            if paths:
                job.diag(
                    "MASTER_WORKER_TEMPLATE_MISMATCH",
                    "error",
                    f"spec.tasks[{index}].template",
                    f"the {name} and {primary} templates differ at {', '.join(paths)}",
                    action="rejected",
                    decide=True,
                    covers=("*",),
                )
        for key in by_name[name]:
            if key in ("name", "replicas", "template"):
                job.mapped(
                    f"spec.tasks[{index}].{key}",
                    "replicated job node"
                    if key != "replicas"
                    else "TrainJob.spec.trainer.numNodes (summed)",
                )
            elif key == "minAvailable":
                if by_name[name][key] != by_name[name].get("replicas"):
                    job.diag(
                        "MIN_AVAILABLE_DROPPED",
                        "warning",
                        f"spec.tasks[{index}].minAvailable",
                        "v2's PodGroup minMember is the pod count",
                        action="dropped",
                    )
                else:
                    job.consume(f"spec.tasks[{index}].minAvailable")
            elif key == "maxRetry":
                job.diag(
                    "VOLCANO_TASK_MAXRETRY_DROPPED",
                    "warning",
                    f"spec.tasks[{index}].maxRetry",
                    "per-task retries have no v2 equivalent",
                    action="dropped",
                )
            else:
                job.diag(
                    "VOLCANO_FIELD_DROPPED",
                    "warning",
                    f"spec.tasks[{index}].{key}",
                    f"task {key} has no v2 equivalent",
                    action="dropped",
                )
    if job.report.errors:
        return []
    pod = copy.deepcopy(ptask.get("template") or CommentedMap())
    pspec = child(pod, "spec", CommentedMap())
    main = _main_index(pod, primary)
    container = pspec["containers"][main]
    if container.get("name") != "node":
        job.diag(
            "MAIN_CONTAINER_RENAMED",
            "info",
            f"spec.tasks[{names.index(primary)}].template.spec.containers[{main}].name",
            f"the main container {container.get('name')!r} is named node in v2",
            target="container node",
        )
        container["name"] = "node"
    restart = pspec.get("restartPolicy") or "Always"
    if restart == "Always":
        job.diag(
            "RESTART_ALWAYS_UNSUPPORTED",
            "warning",
            f"spec.tasks[{names.index(primary)}].template.spec.restartPolicy",
            "Volcano pods restart Always (the pod default when the template sets none); Jobs forbid Always: pods restart OnFailure",
            action="approximated",
            covers=("restartPolicy",),
        )
        restart = "OnFailure"
    pspec["restartPolicy"] = restart
    if torch and not any(
        int(p.get("containerPort") or 0) == port for p in container.get("ports") or []
    ):
        child(container, "ports", CommentedSeq()).append(
            cmap(("name", "pytorchjob-port"), ("containerPort", port))
        )
    if not pspec.get("schedulerName"):
        pspec["schedulerName"] = str(spec.get("schedulerName") or "volcano")
    if "schedulerName" in spec:
        job.mapped("spec.schedulerName", "pod schedulerName")
    if spec.get("priorityClassName") and not pspec.get("priorityClassName"):
        pspec["priorityClassName"] = spec["priorityClassName"]
        job.mapped("spec.priorityClassName", "pod priorityClassName (drives the PodGroup priority)")
    for index, volume in enumerate(spec.get("volumes") or []):
        path = f"spec.volumes[{index}]"
        if volume.get("volumeClaimName"):
            name = f"volcano-volume-{index}"
            child(pspec, "volumes", CommentedSeq()).append(
                cmap(
                    ("name", name),
                    ("persistentVolumeClaim", cmap(("claimName", volume["volumeClaimName"]))),
                )
            )
            for c in pspec["containers"]:
                child(c, "volumeMounts", CommentedSeq()).append(
                    cmap(("name", name), ("mountPath", volume.get("mountPath")))
                )
            job.mapped(path, "pod volume + mount in every container")
        else:
            job.diag(
                "VOLCANO_PVC_TEMPLATE_UNSUPPORTED",
                "error",
                path,
                "a PVC template per job has no TrainingRuntime equivalent here",
                action="rejected",
                decide=True,
                covers=("*",),
                hard=True,
            )
    runtime = Runtime(
        cmap(("numNodes", total)), [ReplicatedJob("node", pod, ancestor=True)], total_pods=total
    )
    if torch:
        runtime.ml_policy["torch"] = CommentedMap()
    runtime.pod_group = cmap(("volcano", CommentedMap()))
    topology = spec.get("networkTopology")
    if topology:
        if topology.get("highestTierName"):
            job.diag(
                "VOLCANO_TIER_NAME_UNSUPPORTED",
                "error",
                "spec.networkTopology.highestTierName",
                "v2.3.0 does not pass highestTierName to the PodGroup",
                action="rejected",
                decide=True,
                covers=("*",),
            )
        runtime.pod_group["volcano"]["networkTopology"] = cmap(
            ("mode", topology.get("mode") or "hard"),
            ("highestTierAllowed", topology.get("highestTierAllowed") or 1),
        )
        job.mapped(
            "spec.networkTopology", "TrainingRuntime.spec.podGroupPolicy.volcano.networkTopology"
        )
    queue = spec.get("queue")
    if queue and queue != "default":
        runtime.template_annotations["scheduling.volcano.sh/queue-name"] = queue
    if "queue" in spec:
        job.mapped(
            "spec.queue",
            "TrainingRuntime.spec.template.metadata.annotations[scheduling.volcano.sh/queue-name]",
        )
    runtime.backoff_limit = 0 if restart == "Never" else 2147483647
    _lifecycle(job, runtime, total)
    job.diag(
        "VOLCANO_PODGROUP_NAME",
        "info",
        "",
        "the PodGroup is <job> (Volcano: <job>-<uid>)",
        covers=("annotation:scheduling.k8s.io/group-name",),
    )
    env = CommentedSeq()
    if torch:
        env.extend(
            [
                env_value("MASTER_ADDR", f"{job.name}-node-0-0.{job.name}"),
                env_value("MASTER_PORT", str(port)),
                env_value("WORLD_SIZE", str(total)),
                env_index("RANK"),
            ]
        )
        job.diag(
            "MASTER_PORT_CHANGED",
            "info",
            "spec.plugins.pytorch",
            "torchrun's PET_MASTER_PORT is 29500 in v2",
            covers=("env:main:PET_*", "port:main:29500"),
        )
    if "svc" in plugins:
        job.diag(
            "VOLCANO_SVC_HOSTS_CHANGED",
            "warning",
            "spec.plugins.svc",
            "JobSet's headless Service <job> replaces Volcano's; hosts are <job>-node-0-<i>.<job>",
            action="approximated",
            covers=("peer:*",),
        )
        job.diag(
            "VOLCANO_HOSTFILE_DROPPED",
            "warning",
            "spec.plugins.svc",
            "the /etc/volcano/*.host files and VC_*_HOSTS/VC_*_NUM from a ConfigMap are not produced; static VC_* values are set instead",
            action="shimmed",
            covers=("mount:*:/etc/volcano", "volume:*", "env:*:VC_*"),
        )
        job.diag(
            "VOLCANO_NETWORKPOLICY_DROPPED",
            "warning",
            "spec.plugins.svc",
            "Volcano's NetworkPolicy isolating the job is not produced",
            action="dropped",
            workaround="add a NetworkPolicy selecting jobset.sigs.k8s.io/jobset-name",
        )
        counts = [int(by_name[n].get("replicas") or 0) for n in order]
        starts = [sum(counts[:i]) for i in range(len(order))]
        fixed = len(f"{job.name}-node-0-.{job.name}")
        size = max(listing_bytes(c, fixed, s) for c, s in zip(counts, starts, strict=True))
        if job.options.compat_env and not listing_fits(
            job, "spec.plugins.svc", "A VC_<TASK>_HOSTS variable", size
        ):
            return []
        for name, count, start in zip(order, counts, starts, strict=True):
            upper = name.upper().replace("-", "_")
            env.append(
                env_value(
                    f"VC_{upper}_HOSTS",
                    ",".join(f"{job.name}-node-0-{start + i}.{job.name}" for i in range(count))
                    if job.options.compat_env  # dropped below otherwise: not built
                    else "",
                )
            )
            env.append(env_value(f"VC_{upper}_NUM", str(count)))
    if "env" in plugins:
        job.diag(
            "VOLCANO_TASK_INDEX_CHANGED",
            "warning",
            "spec.plugins.env",
            "VC_TASK_INDEX/VK_TASK_INDEX were per task; v2 has one index over all pods (JOB_COMPLETION_INDEX)",
            action="dropped",
            workaround="read JOB_COMPLETION_INDEX (worker i of Volcano is index i + 1)",
            decide=True,
            covers=("env:*:VC_TASK_INDEX", "env:*:VK_TASK_INDEX"),
        )
    if env and job.options.compat_env:
        job.diag(
            "COMPAT_ENV_ADDED",
            "info",
            "",
            "Volcano plugin variables kept: " + ", ".join(str(e["name"]) for e in env),
            target="TrainJob.spec.trainer.env",
            action="shimmed",
        )
    elif env:
        env = CommentedSeq()
    common_notes(
        job, [str(c.get("name")) for i, c in enumerate(pspec["containers"]) if i != main], torch
    )
    name_length(job, [("node", total)])
    trainer = cmap(("numNodes", total))
    if env:
        trainer["env"] = env
    tj = cmap(
        (
            "runtimeRef",
            dedicated_runtime_ref(job),
        ),
        ("trainer", trainer),
    )
    if job.report.errors:
        return []
    return [runtime_object(job, runtime, "torch" if torch else "plainml"), trainjob_object(job, tj)]


def _renamed(template: dict[str, Any], task: str) -> dict[str, Any]:
    out = copy.deepcopy(template)
    containers = (out.get("spec") or {}).get("containers") or []
    if containers:
        containers[_main_index(out, task)]["name"] = "node"
    return out


def _migrate_mpi(
    job: Job, names: list[str], tasks: list[Any], plugins: dict[str, Any]
) -> list[CommentedMap]:
    """The ``mpi`` plugin (with ``ssh`` and ``svc``, which Volcano's webhook adds): the
    master task becomes the launcher, the worker task the ``node`` Job of
    ``mlPolicy.mpi``; the Trainer's SSH keys replace Volcano's."""
    spec = job.spec
    args = _args(plugins.get("mpi"))
    master, worker = args.get("master") or "master", args.get("worker") or "worker"
    port = _port(job, "mpi", args, 22)
    by_name = dict(zip(names, tasks, strict=True))
    extra = [n for n in names if n not in (master, worker)]
    if extra or master not in by_name or worker not in by_name:
        job.diag(
            "VOLCANO_EXTRA_TASK_UNSUPPORTED",
            "error",
            "spec.tasks",
            f"the mpi plugin needs exactly the tasks {master} and {worker} (found {', '.join(names)})",
            action="rejected",
            decide=True,
            covers=("*",),
            hard=True,
        )
        return []
    if int(by_name[master].get("replicas") or 0) != 1:
        job.diag(
            "VOLCANO_EXTRA_TASK_UNSUPPORTED",
            "error",
            f"spec.tasks[{names.index(master)}].replicas",
            "the mpi master task must have one pod",
            action="rejected",
            decide=True,
            covers=("*",),
            hard=True,
        )
        return []
    ssh_args = _args(plugins.get("ssh"))
    mount = ssh_args.get("ssh-key-file-path") or "/root/.ssh"
    workers = int(by_name[worker].get("replicas") or 0)
    pods: dict[str, CommentedMap] = {}
    for name in (master, worker):
        index = names.index(name)
        task = by_name[name]
        for key in task:
            if key in ("name", "replicas", "template"):
                job.mapped(
                    f"spec.tasks[{index}].{key}",
                    "replicated job " + ("launcher" if name == master else "node"),
                )
            elif key == "policies":
                job.diag(
                    "VOLCANO_POLICY_APPROX",
                    "warning",
                    f"spec.tasks[{index}].policies",
                    "task lifecycle policies: the JobSet succeeds when the launcher does (successPolicy targets launcher)",
                    action="approximated",
                )
            else:
                job.diag(
                    "VOLCANO_FIELD_DROPPED",
                    "warning",
                    f"spec.tasks[{index}].{key}",
                    f"task {key} has no v2 equivalent",
                    action="dropped",
                )
        pod = copy.deepcopy(task.get("template") or CommentedMap())
        pspec = child(pod, "spec", CommentedMap())
        main = _main_index(pod, name)
        container = pspec["containers"][main]
        if container.get("name") != "node":
            job.diag(
                "MAIN_CONTAINER_RENAMED",
                "info",
                f"spec.tasks[{index}].template.spec.containers[{main}].name",
                f"the main container {container.get('name')!r} is named node in v2",
                target="container node",
            )
            container["name"] = "node"
        if main != 0:
            pspec["containers"].insert(0, pspec["containers"].pop(main))  # node first
        restart = pspec.get("restartPolicy") or "Always"
        if restart == "Always":
            job.diag(
                "RESTART_ALWAYS_UNSUPPORTED",
                "warning",
                f"spec.tasks[{index}].template.spec.restartPolicy",
                "Volcano pods restart Always (the pod default when the template sets none); Jobs forbid Always: pods restart OnFailure",
                action="approximated",
                covers=("restartPolicy",),
            )
            restart = "OnFailure"
        pspec["restartPolicy"] = restart
        for c in pspec["containers"]:
            if not any(int(p.get("containerPort") or 0) == port for p in c.get("ports") or []):
                child(c, "ports", CommentedSeq()).append(
                    cmap(("name", "mpijob-port"), ("containerPort", port))
                )
        if not pspec.get("schedulerName"):
            pspec["schedulerName"] = str(spec.get("schedulerName") or "volcano")
        if spec.get("priorityClassName") and not pspec.get("priorityClassName"):
            pspec["priorityClassName"] = spec["priorityClassName"]
        pods[name] = pod
    for key in ("schedulerName", "priorityClassName"):
        if key in spec:
            job.mapped(f"spec.{key}", f"pod {key}")
    size = listing_bytes(workers, len(f"{job.name}-node-0-.{job.name}"))
    if job.options.compat_env and not listing_fits(
        job, f"spec.tasks[{names.index(worker)}].replicas", "MPI_HOST", size
    ):
        return []
    hosts = (
        ",".join(f"{job.name}-node-0-{i}.{job.name}" for i in range(workers))
        if job.options.compat_env  # the variables are not written otherwise
        else ""
    )
    env = CommentedSeq([env_value("MPI_HOST", hosts)])
    for name in (master, worker):
        upper = name.upper().replace("-", "_")
        count = 1 if name == master else workers
        value = f"{job.name}-launcher-0-0.{job.name}" if name == master else hosts
        env.append(env_value(f"VC_{upper}_HOSTS", value))
        env.append(env_value(f"VC_{upper}_NUM", str(count)))
    if job.options.compat_env:
        child(pods[master]["spec"]["containers"][0], "env", CommentedSeq()).extend(env)
        for var in env[1:]:
            child(pods[worker]["spec"]["containers"][0], "env", CommentedSeq()).append(
                copy.deepcopy(var)
            )
        job.diag(
            "COMPAT_ENV_ADDED",
            "info",
            "spec.plugins.mpi",
            "Volcano variables kept: MPI_HOST on the launcher, VC_*_HOSTS/VC_*_NUM everywhere (values use v2 addresses)",
            target="launcher and node container env",
            action="shimmed",
        )
    mpi = cmap(
        ("numProcPerNode", 1),
        ("mpiImplementation", "OpenMPI"),
        ("sshAuthMountPath", mount),
        ("runLauncherAsNode", False),
    )
    runtime = Runtime(cmap(("mpi", mpi)), total_pods=workers + 1)
    runtime.jobs = [
        ReplicatedJob("node", pods[worker]),
        ReplicatedJob("launcher", pods[master], ancestor=True),
    ]
    runtime.success_policy = cmap(
        ("operator", "All"), ("targetReplicatedJobs", CommentedSeq(["launcher"]))
    )
    runtime.pod_group = cmap(("volcano", CommentedMap()))
    restarts = {pods[n]["spec"]["restartPolicy"] for n in (master, worker)}
    runtime.backoff_limit = 0 if restarts == {"Never"} else 2147483647
    queue = spec.get("queue")
    if queue and queue != "default":
        runtime.template_annotations["scheduling.volcano.sh/queue-name"] = queue
    if "queue" in spec:
        job.mapped(
            "spec.queue",
            "TrainingRuntime.spec.template.metadata.annotations[scheduling.volcano.sh/queue-name]",
        )
    _job_level(job, runtime, workers + 1)
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
    job.diag(
        "VOLCANO_HOSTFILE_DROPPED",
        "warning",
        "spec.plugins.svc",
        "the /etc/volcano/*.host files are not produced; the Trainer's hostfile is /etc/mpi/hostfile (OMPI_MCA_orte_default_hostfile)",
        action="dropped",
        workaround="read MPI_HOST or /etc/mpi/hostfile instead of /etc/volcano/<task>.host",
        decide=True,
        covers=("mount:*:/etc/volcano",),
    )
    job.diag(
        "MPI_OPERATOR_TO_TRAINER",
        "info",
        "spec.plugins.mpi",
        "the Trainer's MPI policy sets OMPI_MCA_* and mounts its hostfile at /etc/mpi on the launcher",
        covers=("env:main:OMPI_MCA_*", "mount:*:/etc/mpi"),
    )
    job.diag(
        "VOLCANO_PODGROUP_NAME",
        "info",
        "",
        "the PodGroup is <job> (Volcano: <job>-<uid>)",
        covers=("annotation:scheduling.k8s.io/group-name",),
    )
    common_notes(job, [], False)
    name_length(job, [("node", max(workers, 1)), ("launcher", 1)])
    trainer = cmap(("numNodes", workers), ("numProcPerNode", 1))
    tj = cmap(
        (
            "runtimeRef",
            dedicated_runtime_ref(job),
        ),
        ("trainer", trainer),
    )
    if job.report.errors:
        return []
    return [runtime_object(job, runtime, "mpi"), trainjob_object(job, tj)]


def _lifecycle(job: Job, runtime: Runtime, total: int) -> None:
    """Volcano job fields every shape shares: policies and retries, minAvailable,
    minSuccess, runningEstimate, TTL."""
    spec = job.spec
    retry = spec.get("maxRetry")
    policies = spec.get("policies") or []
    if any(p.get("action") == "RestartJob" for p in policies):
        runtime.jobset_spec["failurePolicy"] = cmap(
            ("maxRestarts", int(retry if retry is not None else 3))
        )
        job.diag(
            "VOLCANO_POLICY_APPROX",
            "warning",
            "spec.policies",
            "RestartJob becomes JobSet failurePolicy.maxRestarts (the whole gang restarts on any Job failure)",
            target="TrainingRuntime.spec.template.spec.failurePolicy",
            action="approximated",
        )
        job.consume("spec.maxRetry")
    elif retry is not None:
        job.diag(
            "VOLCANO_MAXRETRY_DROPPED",
            "info",
            "spec.maxRetry",
            "no RestartJob policy: retries do not apply",
            action="dropped",
        )
    for index, policy in enumerate(policies):
        if policy.get("action") != "RestartJob":
            job.diag(
                "VOLCANO_POLICY_DROPPED",
                "warning",
                f"spec.policies[{index}]",
                f"lifecycle policy {policy.get('action')} has no v2 equivalent",
                action="dropped",
            )
    job.consume("spec.policies")
    minimum = spec.get("minAvailable")
    if minimum is not None and minimum != total:
        job.diag(
            "MIN_AVAILABLE_DROPPED",
            "warning",
            "spec.minAvailable",
            f"v2's PodGroup minMember is the pod count ({total}), not {minimum}",
            action="dropped",
        )
    elif minimum is not None:
        job.mapped("spec.minAvailable", "PodGroup.spec.minMember")
    for key in ("minSuccess", "runningEstimate"):
        if key in spec:
            job.diag(
                "VOLCANO_FIELD_DROPPED" if key != "minSuccess" else "VOLCANO_MINSUCCESS_DROPPED",
                "warning",
                f"spec.{key}",
                f"{key} has no v2 equivalent",
                action="dropped",
            )
    if "ttlSecondsAfterFinished" in spec:
        runtime.jobset_spec["ttlSecondsAfterFinished"] = spec["ttlSecondsAfterFinished"]
        job.diag(
            "TTL_DELETES_JOBSET_ONLY",
            "warning",
            "spec.ttlSecondsAfterFinished",
            "v2 deletes the JobSet after the TTL; the TrainJob stays",
            action="approximated",
        )


def _job_level(job: Job, runtime: Runtime, total: int) -> None:
    """The shared job fields (:func:`_lifecycle`), then job volumes and network topology."""
    spec = job.spec
    _lifecycle(job, runtime, total)
    for index, _volume in enumerate(spec.get("volumes") or []):
        job.diag(
            "VOLCANO_VOLUME_DROPPED",
            "warning",
            f"spec.volumes[{index}]",
            "job volumes are not carried into an MPI runtime; add them to the templates",
            action="dropped",
            covers=("mount:*",),
        )
    if spec.get("networkTopology"):
        job.diag(
            "VOLCANO_FIELD_DROPPED",
            "warning",
            "spec.networkTopology",
            "not carried into an MPI runtime",
            action="dropped",
        )


TF_ROLES = ("ps", "worker", "chief", "evaluator")


def _migrate_tf(
    job: Job, names: list[str], tasks: list[Any], plugins: dict[str, Any]
) -> list[CommentedMap]:
    """The ``tensorflow`` plugin: one replicated job per role task (the worker task is
    ``node``, which the TrainJob sizes), each command wrapped to export the TF_CONFIG the
    plugin wrote (cluster at v2 addresses, no ``environment``)."""
    from compiler.migrate.tensorflow import shim

    spec = job.spec
    args = _args(plugins.get("tensorflow"))
    role_of = {args.get(role) or role: role for role in TF_ROLES}
    port = _port(job, "tensorflow", args, 2222)
    by_name = dict(zip(names, tasks, strict=True))
    extra = [n for n in names if n not in role_of]
    if extra or not any(role_of.get(n) == "worker" for n in names):
        job.diag(
            "VOLCANO_EXTRA_TASK_UNSUPPORTED",
            "error",
            "spec.tasks",
            f"the tensorflow plugin's roles are {', '.join(role_of)}; tasks {', '.join(extra) or '(no worker task)'} have none",
            action="rejected",
            decide=True,
            covers=("*",),
            hard=True,
        )
        return []
    counts = {n: int(by_name[n].get("replicas") or 0) for n in names}
    rjob_of = {n: "node" if role_of[n] == "worker" else role_of[n] for n in names}
    single = len(names) == 1 and sum(counts.values()) == 1
    size = sum(
        listing_bytes(counts[n], len(f'"{job.name}-{rjob_of[n]}-0-.{job.name}:{port}"'))
        for n in names
    )
    shimmed = job.options.compat_env and not single  # only the shim writes the cluster
    if shimmed and not listing_fits(job, "spec.tasks", "TF_CONFIG", size):
        return []
    cluster = {
        role_of[n]: [f"{job.name}-{rjob_of[n]}-0-{i}.{job.name}:{port}" for i in range(counts[n])]
        for n in names
        if counts[n] > 0 and shimmed
    }
    jobs: list[ReplicatedJob] = []
    restarts: set[str] = set()
    for name in names:
        index = names.index(name)
        task = by_name[name]
        for key in task:
            if key in ("name", "replicas", "template"):
                job.mapped(f"spec.tasks[{index}].{key}", f"replicated job {rjob_of[name]}")
            else:
                job.diag(
                    "VOLCANO_FIELD_DROPPED",
                    "warning",
                    f"spec.tasks[{index}].{key}",
                    f"task {key} has no v2 equivalent",
                    action="dropped",
                )
        pod = copy.deepcopy(task.get("template") or CommentedMap())
        pspec = child(pod, "spec", CommentedMap())
        main = _main_index(pod, name)
        restart = pspec.get("restartPolicy") or "Always"
        if restart == "Always":
            job.diag(
                "RESTART_ALWAYS_UNSUPPORTED",
                "warning",
                f"spec.tasks[{index}].template.spec.restartPolicy",
                "Volcano pods restart Always (the pod default when the template sets none); Jobs forbid Always: pods restart OnFailure",
                action="approximated",
                covers=("restartPolicy",),
            )
            restart = "OnFailure"
        pspec["restartPolicy"] = restart
        restarts.add(restart)
        if not pspec.get("schedulerName"):
            pspec["schedulerName"] = str(spec.get("schedulerName") or "volcano")
        if spec.get("priorityClassName") and not pspec.get("priorityClassName"):
            pspec["priorityClassName"] = spec["priorityClassName"]
        for i, c in enumerate(pspec["containers"]):
            command = list(c.get("command") or [])
            if single:
                pass
            elif not command:
                job.diag(
                    "TF_CONFIG_NEEDS_COMMAND",
                    "error",
                    f"spec.tasks[{index}].template.spec.containers[{i}].command",
                    "the TF_CONFIG shim wraps the container command, and this container runs its image's entrypoint",
                    action="rejected",
                    decide=True,
                    covers=("*",),
                    hard=True,
                )
            elif job.options.compat_env:
                c["command"] = CommentedSeq(
                    ["/bin/sh", "-c", shim(cluster, role_of[name], environment=False), *command]
                )
        if job.options.compat_env:
            # one replicated job per task: the task index is the completion index
            for c in pspec["containers"]:
                env = child(c, "env", CommentedSeq())
                if "env" in plugins:
                    env.extend([env_index("VK_TASK_INDEX"), env_index("VC_TASK_INDEX")])
                for other in names:
                    upper = other.upper().replace("-", "_")
                    hosts = ",".join(
                        f"{job.name}-{rjob_of[other]}-0-{k}.{job.name}"
                        for k in range(counts[other])
                    )
                    env.extend(
                        [
                            env_value(f"VC_{upper}_HOSTS", hosts),
                            env_value(f"VC_{upper}_NUM", str(counts[other])),
                        ]
                    )
        container = pspec["containers"][main]
        if container.get("name") != "node":
            job.diag(
                "MAIN_CONTAINER_RENAMED",
                "info",
                f"spec.tasks[{index}].template.spec.containers[{main}].name",
                f"the main container {container.get('name')!r} is named node in v2",
                target="container node",
            )
            container["name"] = "node"
        jobs.append(
            ReplicatedJob(
                rjob_of[name],
                pod,
                ancestor=rjob_of[name] == "node",
                parallelism=None if rjob_of[name] == "node" else counts[name],
            )
        )
    if job.report.errors:
        return []
    jobs.sort(key=lambda j: 0 if j.name == "node" else 1)
    workers = next(counts[n] for n in names if role_of[n] == "worker")
    runtime = Runtime(cmap(("numNodes", workers)), jobs, total_pods=sum(counts.values()))
    runtime.pod_group = cmap(("volcano", CommentedMap()))
    runtime.backoff_limit = 0 if restarts == {"Never"} else 2147483647
    queue = spec.get("queue")
    if queue and queue != "default":
        runtime.template_annotations["scheduling.volcano.sh/queue-name"] = queue
    if "queue" in spec:
        job.mapped(
            "spec.queue",
            "TrainingRuntime.spec.template.metadata.annotations[scheduling.volcano.sh/queue-name]",
        )
    for key in ("schedulerName", "priorityClassName"):
        if key in spec:
            job.mapped(f"spec.{key}", f"pod {key}")
    _job_level(job, runtime, sum(counts.values()))
    if not single:
        if job.options.compat_env:
            job.diag(
                "TF_CONFIG_SHIMMED",
                "warning",
                "spec.plugins.tensorflow",
                "every container's command is wrapped in /bin/sh -c that exports the TF_CONFIG Volcano's plugin wrote (cluster at v2 addresses, task index = JOB_COMPLETION_INDEX) and execs it",
                action="shimmed",
                workaround="the images need /bin/sh",
            )
        else:
            job.diag(
                "TF_CONFIG_NOT_SUPPORTED",
                "error",
                "spec.plugins.tensorflow",
                "TF_CONFIG differs per pod and cannot be a static env (--no-compat-env)",
                action="rejected",
                decide=True,
                covers=("*",),
                hard=True,
            )
            return []
    job.diag(
        "VOLCANO_SVC_HOSTS_CHANGED",
        "warning",
        "spec.plugins.svc",
        "JobSet's headless Service <job> replaces Volcano's; hosts are <job>-<rjob>-0-<i>.<job>",
        action="approximated",
        covers=("peer:*",),
    )
    if job.options.compat_env:
        job.diag(
            "COMPAT_ENV_ADDED",
            "info",
            "spec.plugins",
            "Volcano variables kept in every container: VC_<TASK>_HOSTS, VC_<TASK>_NUM"
            + (
                ", VK_TASK_INDEX and VC_TASK_INDEX (the completion index: one replicated job per task)"
                if "env" in plugins
                else ""
            ),
            target="role templates",
            action="shimmed",
        )
    job.diag(
        "VOLCANO_HOSTFILE_DROPPED",
        "warning",
        "spec.plugins.svc",
        "the /etc/volcano/*.host files are not produced",
        action="dropped",
        workaround="read TF_CONFIG or VC_<TASK>_HOSTS",
        covers=("mount:*:/etc/volcano",)
        if job.options.compat_env
        else ("mount:*:/etc/volcano", "env:*:VC_*", "env:*:VK_*"),
    )
    job.diag(
        "VOLCANO_PODGROUP_NAME",
        "info",
        "",
        "the PodGroup is <job> (Volcano: <job>-<uid>)",
        covers=("annotation:scheduling.k8s.io/group-name",),
    )
    common_notes(job, [], False)
    name_length(job, [(j.name, j.parallelism or workers) for j in jobs])
    tj = cmap(
        (
            "runtimeRef",
            dedicated_runtime_ref(job),
        ),
        ("trainer", cmap(("numNodes", workers))),
    )
    if job.report.errors:
        return []
    return [runtime_object(job, runtime, "tensorflow"), trainjob_object(job, tj)]
