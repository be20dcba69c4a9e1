"""A Volcano Job whose tasks run as one group of peers: merged into the replicated job
``node`` (the tasks' templates must be equal), sized by the TrainJob. The plain shape
(one task, no framework plugin) and the ``pytorch`` plugin's master + worker (with a
:class:`Peer` from ``pytorch``) take it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ruamel.yaml.comments import CommentedMap, CommentedSeq

from compiler.migrate.common import (
    Job,
    ReplicatedJob,
    Runtime,
    child,
    cmap,
    common_notes,
    dedicated_runtime_ref,
    differing_paths,
    env_value,
    listing_bytes,
    listing_fits,
    name_length,
    refuse,
    runtime_object,
    strip_for_compare,
    trainjob_object,
)
from compiler.migrate.vcjob import (
    Tasks,
    add_port,
    backoff,
    drop_task_field,
    lifecycle,
    main_index,
    podgroup_note,
    queue,
    renamed,
    task_pod,
    upper,
)


@dataclass
class Peer:
    """The framework plugin the group runs: its ML policy, port and variables."""

    policy: str  # the mlPolicy key and the runtime's framework label
    port_name: str
    port: int
    env: Callable[[Job, int], list[CommentedMap]]  # (job, pod count) -> its variables


def migrate_group(tasks: Tasks, order: list[str], peer: Peer | None) -> list[CommentedMap]:
    """The tasks ``order`` (the last is the primary, whose template runs) as ``node``."""
    job = tasks.job
    if job.report.errors or not order:
        return []
    primary = order[-1]
    total = sum(tasks.replicas(n) for n in order)
    _task_fields(tasks, order, primary)
    if job.report.errors:
        return []
    pod = task_pod(
        tasks, primary, priority_target="pod priorityClassName (drives the PodGroup priority)"
    )
    main = main_index(tasks.by_name[primary].get("template") or {}, primary)
    if peer is not None:
        add_port(pod["spec"]["containers"][main], peer.port_name, peer.port)
    if "schedulerName" in job.spec:
        job.mapped("spec.schedulerName", "pod schedulerName")
    _volumes(job, pod)
    runtime = _runtime(job, pod, total, peer)
    env = _env(tasks, order, peer, total)
    if env is None:
        return []
    containers = pod["spec"]["containers"]
    sidecars = [str(c.get("name")) for i, c in enumerate(containers) if i != main]
    common_notes(job, sidecars, peer is not None)
    name_length(job, [("node", total)])
    trainer = cmap(("numNodes", total))
    if env:
        trainer["env"] = env
    spec = cmap(("runtimeRef", dedicated_runtime_ref(job)), ("trainer", trainer))
    if job.report.errors:
        return []
    framework = peer.policy if peer is not None else "plainml"
    return [runtime_object(job, runtime, framework), trainjob_object(job, spec)]


def _task_fields(tasks: Tasks, order: list[str], primary: str) -> None:
    """Each task's template must equal the primary's; its fields are mapped or
    reported."""
    job = tasks.job
    reference = strip_for_compare(renamed(tasks.by_name[primary].get("template") or {}, primary))
    for name in order:
        index, task = tasks.index(name), tasks.by_name[name]
        if name != primary:
            other = strip_for_compare(renamed(task.get("template") or {}, name))
            paths = differing_paths(reference, other)
            if paths:
                refuse(
                    job,
                    "MASTER_WORKER_TEMPLATE_MISMATCH",
                    f"spec.tasks[{index}].template",
                    f"the {name} and {primary} templates differ at {', '.join(paths)}",
                    hard=False,
                )
        for key in task:
            _task_field(job, index, key, task)


def _task_field(job: Job, index: int, key: str, task: CommentedMap) -> None:
    if key in ("name", "replicas", "template"):
        job.mapped(
            f"spec.tasks[{index}].{key}",
            "replicated job node"
            if key != "replicas"
            else "TrainJob.spec.trainer.numNodes (summed)",
        )
    elif key == "minAvailable":
        if task[key] != task.get("replicas"):
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
        drop_task_field(job, index, key)


def _volumes(job: Job, pod: CommentedMap) -> None:
    """A job volume naming a claim is mounted in every container; a PVC template per
    job has no runtime form."""
    pspec = pod["spec"]
    for index, volume in enumerate(job.spec.get("volumes") or []):
        path = f"spec.volumes[{index}]"
        if not volume.get("volumeClaimName"):
            refuse(
                job,
                "VOLCANO_PVC_TEMPLATE_UNSUPPORTED",
                path,
                "a PVC template per job has no TrainingRuntime equivalent here",
            )
            continue
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


def _runtime(job: Job, pod: CommentedMap, total: int, peer: Peer | None) -> Runtime:
    runtime = Runtime(
        cmap(("numNodes", total)), [ReplicatedJob("node", pod, ancestor=True)], total_pods=total
    )
    if peer is not None:
        runtime.ml_policy[peer.policy] = CommentedMap()
    runtime.pod_group = cmap(("volcano", CommentedMap()))
    _network_topology(job, runtime)
    queue(job, runtime)
    runtime.backoff_limit = backoff({pod["spec"]["restartPolicy"]})
    lifecycle(job, runtime, total)
    podgroup_note(job)
    return runtime


def _network_topology(job: Job, runtime: Runtime) -> None:
    topology = job.spec.get("networkTopology")
    if not topology:
        return
    if topology.get("highestTierName"):
        refuse(
            job,
            "VOLCANO_TIER_NAME_UNSUPPORTED",
            "spec.networkTopology.highestTierName",
            "v2.3.0 does not pass highestTierName to the PodGroup",
            hard=False,
        )
    assert runtime.pod_group is not None
    runtime.pod_group["volcano"]["networkTopology"] = cmap(
        ("mode", topology.get("mode") or "hard"),
        ("highestTierAllowed", topology.get("highestTierAllowed") or 1),
    )
    job.mapped(
        "spec.networkTopology", "TrainingRuntime.spec.podGroupPolicy.volcano.networkTopology"
    )


def _env(tasks: Tasks, order: list[str], peer: Peer | None, total: int) -> CommentedSeq | None:
    """The framework's and the svc plugin's variables (compat env; empty without it);
    None when a host list cannot be stored."""
    job = tasks.job
    env = CommentedSeq(peer.env(job, total) if peer is not None else [])
    if "svc" in tasks.plugins and not _svc_env(tasks, order, env):
        return None
    if "env" in tasks.plugins:
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
        return env
    return CommentedSeq()


def _svc_env(tasks: Tasks, order: list[str], env: CommentedSeq) -> bool:
    """VC_<TASK>_HOSTS / VC_<TASK>_NUM over the merged pods (the svc plugin)."""
    job = tasks.job
    _svc_notes(job)
    counts = [tasks.replicas(n) for n in order]
    starts = [sum(counts[:i]) for i in range(len(order))]
    fixed = len(f"{job.name}-node-0-.{job.name}")
    size = max(listing_bytes(c, fixed, s) for c, s in zip(counts, starts, strict=True))
    if job.options.compat_env and not listing_fits(
        job, "spec.plugins.svc", "A VC_<TASK>_HOSTS variable", size
    ):
        return False
    for name, count, start in zip(order, counts, starts, strict=True):
        hosts = (
            ",".join(f"{job.name}-node-0-{start + i}.{job.name}" for i in range(count))
            if job.options.compat_env  # dropped by the caller otherwise: not built
            else ""
        )
        env.append(env_value(f"VC_{upper(name)}_HOSTS", hosts))
        env.append(env_value(f"VC_{upper(name)}_NUM", str(count)))
    return True


def _svc_notes(job: Job) -> None:
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
