"""What every Volcano Job (batch.volcano.sh/v1alpha1) shape shares, for the framework
translators that take one (``pytorch``, ``mpi``, ``tensorflow``) and the plain shape in
``volcano``: the tasks and plugins read once, plugin flags read as Go's flag package
reads them, a task's pod template as v2 runs it, and the job-level fields (queue,
lifecycle policies, retries, minAvailable, TTL)."""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq

from compiler.migrate.common import Job, Runtime, child, cmap

MAX_INT32 = 2147483647


@dataclass
class Tasks:
    """A Volcano Job's tasks and (webhook-defaulted) plugins."""

    job: Job
    names: list[str]
    tasks: list[Any]
    plugins: dict[str, Any]

    @property
    def by_name(self) -> dict[str, Any]:
        return dict(zip(self.names, self.tasks, strict=True))

    def index(self, name: str) -> int:
        return self.names.index(name)

    def replicas(self, name: str) -> int:
        return int(self.by_name[name].get("replicas") or 0)

    def args(self, plugin: str) -> dict[str, str]:
        return plugin_args(self.plugins.get(plugin))

    def port(self, plugin: str, default: int) -> int:
        return plugin_port(self.job, plugin, self.args(plugin), default)


def plugin_args(values: Any) -> dict[str, str]:
    """A plugin's ``--key=value`` arguments."""
    out: dict[str, str] = {}
    for value in values or []:
        text = str(value)
        if text.startswith("--"):
            key, _, rest = text[2:].partition("=")
            out[key] = rest
    return out


def plugin_port(job: Job, plugin: str, args: dict[str, str], default: int) -> int:
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


def main_index(template: dict[str, Any], task: str) -> int:
    """The task's main container: the only one, else the one named after the task."""
    containers = ((template.get("spec") or {}).get("containers")) or []
    if len(containers) == 1:
        return 0
    for index, container in enumerate(containers):
        if container.get("name") == task:
            return index
    return 0


def renamed(template: dict[str, Any], task: str) -> dict[str, Any]:
    """A copy of the template with its main container named ``node`` (for comparing)."""
    out = copy.deepcopy(template)
    containers = (out.get("spec") or {}).get("containers") or []
    if containers:
        containers[main_index(out, task)]["name"] = "node"
    return out


def drop_task_field(job: Job, index: int, key: str) -> None:
    job.diag(
        "VOLCANO_FIELD_DROPPED",
        "warning",
        f"spec.tasks[{index}].{key}",
        f"task {key} has no v2 equivalent",
        action="dropped",
    )


def task_pod(
    tasks: Tasks, name: str, *, node_first: bool = False, priority_target: str = ""
) -> CommentedMap:
    """The task's pod template as v2 runs it: the main container named ``node`` (first,
    with ``node_first``), restartPolicy Always (Volcano's default) as OnFailure, the
    job's schedulerName and priorityClassName where the pod sets none."""
    job, index = tasks.job, tasks.index(name)
    pod = copy.deepcopy(tasks.by_name[name].get("template") or CommentedMap())
    pspec = child(pod, "spec", CommentedMap())
    main = main_index(pod, name)
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
    if node_first and main != 0:
        pspec["containers"].insert(0, pspec["containers"].pop(main))
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
    pod_scheduling(job, pod, priority_target)
    return pod


def add_port(container: CommentedMap, name: str, port: int) -> None:
    """The container port a plugin adds unless the container has that port."""
    if not any(int(p.get("containerPort") or 0) == port for p in container.get("ports") or []):
        child(container, "ports", CommentedSeq()).append(
            cmap(("name", name), ("containerPort", port))
        )


def pod_scheduling(job: Job, pod: CommentedMap, priority_target: str = "") -> None:
    """The job's schedulerName (default volcano) and priorityClassName where the pod
    sets none; ``priority_target`` maps the priority where it is set."""
    spec, pspec = job.spec, pod["spec"]
    if not pspec.get("schedulerName"):
        pspec["schedulerName"] = str(spec.get("schedulerName") or "volcano")
    if spec.get("priorityClassName") and not pspec.get("priorityClassName"):
        pspec["priorityClassName"] = spec["priorityClassName"]
        if priority_target:
            job.mapped("spec.priorityClassName", priority_target)


def map_pod_scheduling(job: Job) -> None:
    for key in ("schedulerName", "priorityClassName"):
        if key in job.spec:
            job.mapped(f"spec.{key}", f"pod {key}")


def backoff(restarts: set[str]) -> int:
    """Volcano restarts its pods in place: unbounded, unless every task says Never."""
    return 0 if restarts == {"Never"} else MAX_INT32


def queue(job: Job, runtime: Runtime) -> None:
    spec = job.spec
    name = spec.get("queue")
    if name and name != "default":
        runtime.template_annotations["scheduling.volcano.sh/queue-name"] = name
    if "queue" in spec:
        job.mapped(
            "spec.queue",
            "TrainingRuntime.spec.template.metadata.annotations[scheduling.volcano.sh/queue-name]",
        )


def podgroup_note(job: Job) -> None:
    job.diag(
        "VOLCANO_PODGROUP_NAME",
        "info",
        "",
        "the PodGroup is <job> (Volcano: <job>-<uid>)",
        covers=("annotation:scheduling.k8s.io/group-name",),
    )


def lifecycle(job: Job, runtime: Runtime, total: int) -> None:
    """Volcano job fields every shape shares: policies and retries, minAvailable,
    minSuccess, runningEstimate, TTL."""
    _policies(job, runtime)
    spec = job.spec
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


def _policies(job: Job, runtime: Runtime) -> None:
    """RestartJob (with maxRetry) becomes the JobSet's failurePolicy; other actions are
    dropped."""
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


def job_level(job: Job, runtime: Runtime, total: int) -> None:
    """The shared job fields (:func:`lifecycle`), then job volumes and network topology,
    which a runtime of several replicated jobs does not carry."""
    spec = job.spec
    lifecycle(job, runtime, total)
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


def upper(task: str) -> str:
    """The task's part of a ``VC_<TASK>_*`` variable name."""
    return task.upper().replace("-", "_")


HOSTS = "volcano-hosts"  # the init container and emptyDir of the host-file shim
HOSTS_DIR = "/etc/volcano"


def host_files(pod: CommentedMap, hosts: dict[str, list[str]], image: Any) -> None:
    """Volcano's svc plugin mounts ``/etc/volcano/<task>.host`` (the task's hosts, one
    a line) from a ConfigMap in every container. The shim: an init container of the
    main container's image writes the same files, at v2 addresses, into an emptyDir
    that every container mounts at ``/etc/volcano``."""
    script = "; ".join(
        f"printf '{_lines(names)}' > {HOSTS_DIR}/{task.replace('-', '_')}.host"
        for task, names in hosts.items()
    )
    pspec = pod["spec"]
    mount = cmap(("name", HOSTS), ("mountPath", HOSTS_DIR))
    init = cmap(
        ("name", HOSTS),
        ("image", image),
        ("command", CommentedSeq(["/bin/sh", "-c", script])),
        ("volumeMounts", CommentedSeq([copy.deepcopy(mount)])),
    )
    child(pspec, "initContainers", CommentedSeq()).insert(0, init)
    child(pspec, "volumes", CommentedSeq()).append(
        cmap(("name", HOSTS), ("emptyDir", CommentedMap()))
    )
    for container in pspec["containers"]:
        child(container, "volumeMounts", CommentedSeq()).append(copy.deepcopy(mount))


def _lines(names: list[str]) -> str:
    """The hosts as a printf format, one a line and no newline after the last (as
    Volcano joins them); host names hold no ``%`` or ``\\``."""
    return "\\n".join(names)


def host_files_note(
    job: Job, rjobs: str, dropped: str, workaround: str, covers: tuple[str, ...]
) -> None:
    """The host files as shimmed (compat env), or as ``dropped`` without it."""
    if not job.options.compat_env:
        job.diag(
            "VOLCANO_HOSTFILE_DROPPED",
            "warning",
            "spec.plugins.svc",
            dropped,
            action="dropped",
            workaround=workaround,
            decide=True,
            covers=covers,
        )
        return
    job.diag(
        "VOLCANO_HOSTFILE_SHIMMED",
        "warning",
        "spec.plugins.svc",
        f"Volcano's svc plugin mounted /etc/volcano/<task>.host from a ConfigMap; an init container ({HOSTS}: the main container's image, /bin/sh) writes the same files at v2 addresses ({rjobs}) into an emptyDir mounted at /etc/volcano in every container; they list the pods of the migrated size",
        action="shimmed",
        workaround="the image needs /bin/sh and printf; a TrainJob that changes numNodes gets stale host files: read VC_<TASK>_HOSTS or the framework's own hostfile instead",
        decide=True,
        covers=("mount:*:/etc/volcano", "volume:*", f"initContainer:{HOSTS}"),
    )
