"""TFJob (kubeflow.org/v1) -> TrainJob + plain runtime (v2.3.0 has no TensorFlow policy).

Workers only (MultiWorkerMirroredStrategy) become the replicated job ``node``. PS /
Chief / Master / Evaluator topologies become one replicated job per role (``node`` for
the workers, which the TrainJob sizes, and ``ps``, ``chief``, ``master``, ``evaluator``).
TF_CONFIG differs per pod, so it cannot be a static env: with the compat env on, the
main container's command is wrapped in ``/bin/sh -c`` that exports TF_CONFIG built
from ``JOB_COMPLETION_INDEX`` (Kubernetes sets it in Indexed Jobs) and then execs the
original command."""

from __future__ import annotations

import json
from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq

from compiler.migrate.common import (
    Job,
    Kind,
    ReplicatedJob,
    Runtime,
    check_metadata,
    child,
    cmap,
    common_notes,
    dedicated_runtime_ref,
    env_index,
    env_value,
    listing_bytes,
    listing_fits,
    name_length,
    normalise_types,
    port_of,
    refuse,
    replicas_of,
    role_job,
    role_pod,
    run_policy,
    runtime_object,
    trainjob_object,
    trainjob_run_fields,
    webhook_checks,
)
from compiler.migrate.peers import Peers, migrate_peers
from compiler.migrate.vcjob import (
    Tasks,
    backoff,
    drop_task_field,
    host_files,
    host_files_note,
    job_level,
    main_index,
    map_pod_scheduling,
    podgroup_note,
    queue,
    task_pod,
    upper,
)

KIND = Kind(
    "TFJob",
    "tfReplicaSpecs",
    ("PS", "Worker", "Chief", "Master", "Evaluator"),
    "tensorflow",
    "tfjob-port",
    2222,
    "Never",
    "tensorflow",
    check_types=False,
)
SHIM_EXEC = '; exec "$0" "$@"'
SHIM_MARK = "TF_CONFIG="
KIND_PATH = f"spec.{KIND.replica_field}"


def migrate(job: Job) -> list[CommentedMap]:
    specs = job.spec.get(KIND.replica_field) or {}
    types = {next((t for t in KIND.types if t.lower() == str(k).lower()), str(k)) for k in specs}
    total = sum(replicas_of(s or {}) for s in specs.values()) if isinstance(specs, dict) else 0
    if isinstance(specs, dict) and types and not (types == {"Worker"} or total <= 1):
        return _migrate_roles(job)
    return migrate_peers(job, KIND, None, _tf, pre=_pre, v1_env_everywhere=False)


def _pre(job: Job, specs: dict[str, dict[str, Any]]) -> None:
    total = sum(replicas_of(s) for s in specs.values())
    if len(specs) > 1 or (total > 1 and "Worker" not in specs):
        roles = ", ".join(specs)
        refuse(
            job,
            "TF_TOPOLOGY_UNSUPPORTED",
            f"spec.{KIND.replica_field}",
            f"{roles}: v2 sizes one replicated job per TrainJob and has no TensorFlow policy to build per-role TF_CONFIG",
            workaround="move to MultiWorkerMirroredStrategy (Workers only), or keep this job on the Training Operator",
        )
    _dynamic_worker(job)
    success = job.spec.get("successPolicy")
    if total > 1 and success in (None, ""):
        job.diag(
            "TF_SUCCESS_POLICY_APPROX",
            "warning",
            "spec.successPolicy",
            "v1 finished the job when worker-0 succeeded; JobSet waits for every worker",
            action="approximated",
            workaround="end all workers together (MultiWorkerMirroredStrategy does)",
        )
    elif success is not None:
        job.mapped("spec.successPolicy", "JobSet successPolicy All (the default)")


def _dynamic_worker(job: Job) -> None:
    """enableDynamicWorker: the sparse TF_CONFIG has no v2 form."""
    if job.spec.get("enableDynamicWorker"):
        refuse(
            job,
            "TF_DYNAMIC_WORKER_UNSUPPORTED",
            "spec.enableDynamicWorker",
            "the sparse TF_CONFIG and tolerated worker failures have no v2 equivalent",
        )
    elif "enableDynamicWorker" in job.spec:
        job.mapped("spec.enableDynamicWorker", "(false: the default TF_CONFIG)")


def _tf(peers: Peers) -> None:
    job = peers.job
    if peers.total <= 1:
        job.diag(
            "TF_SINGLE_POD",
            "info",
            f"spec.{KIND.replica_field}",
            "one pod: v1 set no TF_CONFIG either",
        )
        return
    job.diag(
        "TF_NO_NATIVE_RUNTIME",
        "info",
        f"spec.{KIND.replica_field}",
        "v2.3.0 has no TensorFlow policy: a plain runtime (numNodes only)",
    )
    if not job.options.compat_env:
        refuse(
            job,
            "TF_CONFIG_NOT_SUPPORTED",
            f"spec.{KIND.replica_field}",
            "TF_CONFIG differs per pod and cannot be a static env (--no-compat-env)",
            workaround="turn the compat env on (it wraps the command to build TF_CONFIG)",
        )
        return
    container = peers.pod["spec"]["containers"][peers.main_index]
    path = f"{KIND_PATH}[Worker].template.spec.containers[{peers.main_index}].command"
    if not container.get("command"):
        wrap_command(job, container, path, "")  # reports the entrypoint it cannot wrap
        return
    port = peers.port("Worker")
    # each entry is "<job>-node-0-<i>.<job>:<port>" (see Peers.host)
    size = listing_bytes(peers.total, len(f'"{job.name}-node-0-.{job.name}:{port}"'))
    if not listing_fits(job, f"{KIND_PATH}[Worker].replicas", "TF_CONFIG", size):
        return
    cluster = {"worker": [f"{peers.host(i)}:{port}" for i in range(peers.total)]}
    wrap_command(job, container, path, shim(cluster, "worker"))
    job.diag(
        "TF_CONFIG_SHIMMED",
        "warning",
        f"spec.{KIND.replica_field}[Worker].template.spec.containers[{peers.main_index}].command",
        "the command is wrapped in /bin/sh -c that exports TF_CONFIG (workers at their v2 addresses, task index = JOB_COMPLETION_INDEX) and execs the original command",
        target="container node command",
        action="shimmed",
        workaround="read the cluster from TF_CONFIG as before; the image needs /bin/sh",
    )


ROLE_JOB = {
    "Worker": "node",
    "PS": "ps",
    "Chief": "chief",
    "Master": "master",
    "Evaluator": "evaluator",
}


def shim(cluster: dict[str, list[str]], role: str, environment: bool = True) -> str:
    """The shell that exports this role's TF_CONFIG (Go's encoding: map keys sorted);
    Volcano's tensorflow plugin writes no ``environment``."""
    head = json.dumps({"cluster": dict(sorted(cluster.items()))}, separators=(",", ":"))[:-1]
    tail = ',"environment":"cloud"}' if environment else "}"
    return (
        f'export {SHIM_MARK}\'{head},"task":{{"type":"{role}","index":\''
        f"\"$JOB_COMPLETION_INDEX\"'}}{tail}'" + SHIM_EXEC
    )


def _migrate_roles(job: Job) -> list[CommentedMap]:
    """PS / Chief / Master / Evaluator: one replicated job per role, TF_CONFIG by shim."""
    webhook_checks(job, KIND)
    job.raise_problems()
    check_metadata(job)
    specs = normalise_types(job, KIND)
    base = f"spec.{KIND.replica_field}"
    _roles_refusals(job, specs, base)
    if job.report.errors:
        return []
    counts = {rtype: replicas_of(rspec) for rtype, rspec in specs.items()}
    ports = {rtype: port_of(specs[rtype], KIND.main, KIND.port_name, KIND.port) for rtype in specs}
    members = [(rtype.lower(), ROLE_JOB[rtype], counts[rtype], ports[rtype]) for rtype in specs]
    if not listing_fits(job, base, "TF_CONFIG", cluster_size(job, members)):
        return []
    cluster = cluster_of(job, members)
    jobs: list[ReplicatedJob] = []
    policies: list[str] = []
    exit_code = False
    for rtype in ("Chief", "Master", "PS", "Worker", "Evaluator"):
        if rtype in specs:
            rjob, code = _role_job(job, rtype, specs[rtype], counts[rtype], cluster, policies)
            exit_code = exit_code or code
            if rjob is not None:
                jobs.append(rjob)
    if job.report.errors:
        return []
    runtime = role_runtime(jobs, counts["Worker"], sum(counts.values()))
    runtime.exit_code = exit_code
    _role_success(job, specs, runtime, base)
    run_policy(job, policies, runtime)
    _roles_notes(job, base)
    common_notes(job, [], False)
    spec = role_trainjob(job, jobs, counts["Worker"])
    trainjob_run_fields(job, spec)
    if job.report.errors:
        return []
    return [runtime_object(job, runtime, "tensorflow"), trainjob_object(job, spec)]


def _roles_refusals(job: Job, specs: dict[str, dict[str, Any]], base: str) -> None:
    """What keeps a role topology from v2: dynamic workers, no compat env, no workers."""
    _dynamic_worker(job)
    if not job.options.compat_env:
        refuse(
            job,
            "TF_TOPOLOGY_UNSUPPORTED",
            base,
            "several roles need per-role TF_CONFIG, which only the compat env's shim builds (--no-compat-env)",
            workaround="turn the compat env on",
        )
    if "Worker" not in specs:
        refuse(
            job,
            "TF_TOPOLOGY_UNSUPPORTED",
            base,
            "the TrainJob sizes the workers; a TFJob without Workers has nothing for it to size",
            workaround="keep this job on the Training Operator",
        )


Member = tuple[str, str, int, int]  # TF_CONFIG role, replicated job, pods, port


def cluster_size(job: Job, members: list[Member]) -> int:
    """The bytes of TF_CONFIG's host lists (sized before they are built)."""
    return sum(
        listing_bytes(count, len(f'"{job.name}-{rjob}-0-.{job.name}:{port}"'))
        for _, rjob, count, port in members
    )


def cluster_of(job: Job, members: list[Member]) -> dict[str, list[str]]:
    """TF_CONFIG's cluster: each role's pods at their v2 addresses."""
    return {
        role: [f"{job.name}-{rjob}-0-{i}.{job.name}:{port}" for i in range(count)]
        for role, rjob, count, port in members
    }


def wrap_command(
    job: Job,
    container: CommentedMap,
    path: str,
    shell: str,
    workaround: str = "write the image's entrypoint as the command",
) -> bool:
    """Wrap the container's command in the TF_CONFIG shim ``shell``; a container that
    runs its image's entrypoint cannot be wrapped (a report error, False)."""
    command = list(container.get("command") or [])
    if not command:
        refuse(
            job,
            "TF_CONFIG_NEEDS_COMMAND",
            path,
            "the TF_CONFIG shim wraps the container command, and this container runs its image's entrypoint",
            workaround=workaround,
        )
        return False
    container["command"] = CommentedSeq(["/bin/sh", "-c", shell, *command])
    return True


def role_runtime(jobs: list[ReplicatedJob], workers: int, total: int) -> Runtime:
    # the workers first: JobSet keeps the order, the TrainJob sizes the ancestor
    jobs.sort(key=lambda j: 0 if j.name == "node" else 1)
    return Runtime(cmap(("numNodes", workers)), jobs, total_pods=total)


def role_trainjob(job: Job, jobs: list[ReplicatedJob], workers: int) -> CommentedMap:
    """The TrainJob spec over a role runtime (and the name-length check of its pods)."""
    name_length(job, [(j.name, j.parallelism or workers) for j in jobs])
    return cmap(
        ("runtimeRef", dedicated_runtime_ref(job)), ("trainer", cmap(("numNodes", workers)))
    )


def _role_job(
    job: Job,
    rtype: str,
    rspec: dict[str, Any],
    count: int,
    cluster: dict[str, list[str]],
    policies: list[str],
) -> tuple[ReplicatedJob | None, bool]:
    """One TFJob role as a replicated job (None when its command cannot be wrapped),
    and whether its restart policy is ExitCode."""
    target = (
        "TrainJob.spec.trainer.numNodes"
        if rtype == "Worker"
        else f"replicated job {ROLE_JOB[rtype]} parallelism"
    )
    pod, main, code = role_pod(job, KIND, rtype, rspec, target, policies)
    container = pod["spec"]["containers"][main]
    command_path = f"{KIND_PATH}[{rtype}].template.spec.containers[{main}].command"
    if not wrap_command(job, container, command_path, shim(cluster, rtype.lower())):
        return None, code
    return role_job(ROLE_JOB[rtype], pod, count), code


def _role_success(job: Job, specs: dict[str, dict[str, Any]], runtime: Runtime, base: str) -> None:
    """The JobSet succeeds with the chief (or master), else with every worker."""
    chief = next((r for r in ("Chief", "Master") if r in specs), None)
    if chief is not None:
        runtime.success_policy = cmap(
            ("operator", "All"), ("targetReplicatedJobs", CommentedSeq([ROLE_JOB[chief]]))
        )
        job.diag(
            "TF_SUCCESS_ON_CHIEF",
            "info",
            f"{base}[{chief}]",
            f"the JobSet succeeds when the {chief.lower()} does, as v1 did; the other roles are stopped then",
            target="TrainingRuntime.spec.template.spec.successPolicy",
        )
    else:
        runtime.success_policy = cmap(
            ("operator", "All"), ("targetReplicatedJobs", CommentedSeq(["node"]))
        )
        job.diag(
            "TF_SUCCESS_POLICY_APPROX",
            "warning",
            "spec.successPolicy",
            "v1 finished the job when worker-0 succeeded (or every worker); the JobSet succeeds when every worker has",
            action="approximated",
            workaround="end all workers together",
        )
    if "successPolicy" in job.spec:
        job.consume("spec.successPolicy")
    if "PS" in specs:
        job.diag(
            "TF_PS_RUN_UNTIL_DONE",
            "info",
            f"{base}[PS]",
            "parameter servers run until the JobSet finishes, then JobSet deletes them (v1 deleted them per cleanPodPolicy)",
        )


def _roles_notes(job: Job, base: str) -> None:
    job.diag(
        "TF_CONFIG_SHIMMED",
        "warning",
        base,
        "each role's command is wrapped in /bin/sh -c that exports TF_CONFIG (the cluster at v2 addresses, task index = JOB_COMPLETION_INDEX) and execs the original command",
        target="container node command",
        action="shimmed",
        workaround="the images need /bin/sh",
    )
    job.diag(
        "TF_NO_NATIVE_RUNTIME",
        "info",
        base,
        "v2.3.0 has no TensorFlow policy: a plain runtime with one replicated job per role; the TrainJob sizes the workers (node)",
    )


def migrate_volcano(tasks: Tasks, role_of: dict[str, str], port: int | None) -> list[CommentedMap]:
    """A Volcano Job's ``tensorflow`` plugin: one replicated job per role task (the
    worker task is ``node``, which the TrainJob sizes), each command wrapped to export
    the TF_CONFIG the plugin wrote (cluster at v2 addresses, no ``environment``). Without
    the plugin (``port`` None: ``svc`` tasks named as TensorFlow roles, whose commands
    build TF_CONFIG from the host files) the same replicated jobs, no TF_CONFIG."""
    job, names = tasks.job, tasks.names
    extra = [n for n in names if n not in role_of]
    if extra or not any(role_of.get(n) == "worker" for n in names):
        refuse(
            job,
            "VOLCANO_EXTRA_TASK_UNSUPPORTED",
            "spec.tasks",
            f"the tensorflow plugin's roles are {', '.join(role_of)}; tasks {', '.join(extra) or '(no worker task)'} have none",
        )
        return []
    counts = {n: tasks.replicas(n) for n in names}
    rjob_of = {n: "node" if role_of[n] == "worker" else role_of[n] for n in names}
    single = port is None or (len(names) == 1 and sum(counts.values()) == 1)  # no TF_CONFIG
    members = [(role_of[n], rjob_of[n], counts[n], port or 0) for n in names]
    shimmed = job.options.compat_env and not single  # only the shim writes the cluster
    if shimmed and not listing_fits(job, "spec.tasks", "TF_CONFIG", cluster_size(job, members)):
        return []
    cluster = cluster_of(job, [m for m in members if m[2] > 0]) if shimmed else {}
    jobs: list[ReplicatedJob] = []
    restarts: set[str] = set()
    for name in names:
        for key in tasks.by_name[name]:
            if key in ("name", "replicas", "template"):
                job.mapped(
                    f"spec.tasks[{tasks.index(name)}].{key}", f"replicated job {rjob_of[name]}"
                )
            else:
                drop_task_field(job, tasks.index(name), key)
        pod = task_pod(tasks, name)
        restarts.add(pod["spec"]["restartPolicy"])
        if not single:
            _volcano_shim(tasks, name, pod, shim(cluster, role_of[name], environment=False))
        if job.options.compat_env:
            _volcano_env(tasks, pod, rjob_of, counts)
            host_files(pod, _hosts(job, tasks.names, rjob_of, counts), _image(tasks, name))
        jobs.append(role_job(rjob_of[name], pod, counts[name]))
    if job.report.errors:
        return []
    workers = next(counts[n] for n in names if role_of[n] == "worker")
    runtime = role_runtime(jobs, workers, sum(counts.values()))
    runtime.pod_group = cmap(("volcano", CommentedMap()))
    runtime.backoff_limit = backoff(restarts)
    queue(job, runtime)
    map_pod_scheduling(job)
    job_level(job, runtime, sum(counts.values()))
    if not single and not _volcano_shim_note(job):
        return []
    _volcano_notes(job, "env" in tasks.plugins)
    common_notes(job, [], False)
    spec = role_trainjob(job, jobs, workers)
    if job.report.errors:
        return []
    return [runtime_object(job, runtime, "tensorflow"), trainjob_object(job, spec)]


def _hosts(
    job: Job, names: list[str], rjob_of: dict[str, str], counts: dict[str, int]
) -> dict[str, list[str]]:
    """Each task's pods at their v2 addresses."""
    return {
        n: [f"{job.name}-{rjob_of[n]}-0-{k}.{job.name}" for k in range(counts[n])] for n in names
    }


def _image(tasks: Tasks, name: str) -> Any:
    template = tasks.by_name[name].get("template") or {}
    containers = (template.get("spec") or {}).get("containers") or [{}]
    return containers[main_index(template, name)].get("image")


def _volcano_shim(tasks: Tasks, name: str, pod: CommentedMap, shell: str) -> None:
    """Every container of the task runs under the TF_CONFIG shim (compat env)."""
    for i, container in enumerate(pod["spec"]["containers"]):
        path = f"spec.tasks[{tasks.index(name)}].template.spec.containers[{i}].command"
        if not container.get("command"):
            wrap_command(tasks.job, container, path, "", workaround="")
        elif tasks.job.options.compat_env:
            wrap_command(tasks.job, container, path, shell)


def _volcano_env(
    tasks: Tasks, pod: CommentedMap, rjob_of: dict[str, str], counts: dict[str, int]
) -> None:
    """The env and svc plugins' variables at v2 addresses: one replicated job per task,
    so the task index is the completion index."""
    job = tasks.job
    for container in pod["spec"]["containers"]:
        env = child(container, "env", CommentedSeq())
        if "env" in tasks.plugins:
            env.extend([env_index("VK_TASK_INDEX"), env_index("VC_TASK_INDEX")])
        for other in tasks.names:
            hosts = ",".join(
                f"{job.name}-{rjob_of[other]}-0-{k}.{job.name}" for k in range(counts[other])
            )
            env.extend(
                [
                    env_value(f"VC_{upper(other)}_HOSTS", hosts),
                    env_value(f"VC_{upper(other)}_NUM", str(counts[other])),
                ]
            )


def _volcano_shim_note(job: Job) -> bool:
    """The shim is reported; without the compat env there is none (False: refused)."""
    if job.options.compat_env:
        job.diag(
            "TF_CONFIG_SHIMMED",
            "warning",
            "spec.plugins.tensorflow",
            "every container's command is wrapped in /bin/sh -c that exports the TF_CONFIG Volcano's plugin wrote (cluster at v2 addresses, task index = JOB_COMPLETION_INDEX) and execs it",
            action="shimmed",
            workaround="the images need /bin/sh",
        )
        return True
    refuse(
        job,
        "TF_CONFIG_NOT_SUPPORTED",
        "spec.plugins.tensorflow",
        "TF_CONFIG differs per pod and cannot be a static env (--no-compat-env)",
    )
    return False


def _volcano_notes(job: Job, env_plugin: bool) -> None:
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
                if env_plugin
                else ""
            ),
            target="role templates",
            action="shimmed",
        )
    host_files_note(
        job,
        "<job>-<rjob>-0-<i>.<job>",
        "the /etc/volcano/*.host files are not produced",
        "read TF_CONFIG or VC_<TASK>_HOSTS",
        ("mount:*:/etc/volcano", "env:*:VC_*", "env:*:VK_*"),
    )
    podgroup_note(job)
