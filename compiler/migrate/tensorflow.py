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

from compiler.migrate.common import Job, Kind, listing_bytes, listing_fits, replicas_of
from compiler.migrate.peers import Peers, migrate_peers

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
        job.diag(
            "TF_TOPOLOGY_UNSUPPORTED",
            "error",
            f"spec.{KIND.replica_field}",
            f"{roles}: v2 sizes one replicated job per TrainJob and has no TensorFlow policy to build per-role TF_CONFIG",
            action="rejected",
            workaround="move to MultiWorkerMirroredStrategy (Workers only), or keep this job on the Training Operator",
            decide=True,
            covers=("*",),
            hard=True,
        )
    if job.spec.get("enableDynamicWorker"):
        job.diag(
            "TF_DYNAMIC_WORKER_UNSUPPORTED",
            "error",
            "spec.enableDynamicWorker",
            "the sparse TF_CONFIG and tolerated worker failures have no v2 equivalent",
            action="rejected",
            decide=True,
            covers=("*",),
            hard=True,
        )
    elif "enableDynamicWorker" in job.spec:
        job.mapped("spec.enableDynamicWorker", "(false: the default TF_CONFIG)")
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
        job.diag(
            "TF_CONFIG_NOT_SUPPORTED",
            "error",
            f"spec.{KIND.replica_field}",
            "TF_CONFIG differs per pod and cannot be a static env (--no-compat-env)",
            action="rejected",
            workaround="turn the compat env on (it wraps the command to build TF_CONFIG)",
            decide=True,
            covers=("*",),
            hard=True,
        )
        return
    container = peers.pod["spec"]["containers"][peers.main_index]
    command = list(container.get("command") or [])
    if not command:
        job.diag(
            "TF_CONFIG_NEEDS_COMMAND",
            "error",
            f"spec.{KIND.replica_field}[Worker].template.spec.containers[{peers.main_index}].command",
            "the TF_CONFIG shim wraps the container command, and this container runs its image's entrypoint",
            action="rejected",
            workaround="write the image's entrypoint as the command",
            decide=True,
            covers=("*",),
            hard=True,
        )
        return
    port = peers.port("Worker")
    # each entry is "<job>-node-0-<i>.<job>:<port>" (see Peers.host)
    size = listing_bytes(peers.total, len(f'"{job.name}-node-0-.{job.name}:{port}"'))
    if not listing_fits(job, f"spec.{KIND.replica_field}[Worker].replicas", "TF_CONFIG", size):
        return
    cluster = {"worker": [f"{peers.host(i)}:{port}" for i in range(peers.total)]}
    head = json.dumps({"cluster": cluster}, separators=(",", ":"))[:-1]
    script = (
        f'export {SHIM_MARK}\'{head},"task":{{"type":"worker","index":\'"$JOB_COMPLETION_INDEX"\'}},"environment":"cloud"}}\''
        + SHIM_EXEC
    )
    container["command"] = CommentedSeq(["/bin/sh", "-c", script, *command])
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
    from compiler.migrate.common import (
        ReplicatedJob,
        Runtime,
        check_metadata,
        cmap,
        common_notes,
        dedicated_runtime_ref,
        hardcoded_addresses,
        name_length,
        normalise_types,
        pod_template,
        port_of,
        restart_policy,
        run_policy,
        runtime_object,
        trainjob_object,
        trainjob_run_fields,
        webhook_checks,
    )

    webhook_checks(job, KIND)
    job.raise_problems()
    check_metadata(job)
    specs = normalise_types(job, KIND)
    base = f"spec.{KIND.replica_field}"
    if job.spec.get("enableDynamicWorker"):
        job.diag(
            "TF_DYNAMIC_WORKER_UNSUPPORTED",
            "error",
            "spec.enableDynamicWorker",
            "the sparse TF_CONFIG and tolerated worker failures have no v2 equivalent",
            action="rejected",
            decide=True,
            covers=("*",),
            hard=True,
        )
    elif "enableDynamicWorker" in job.spec:
        job.mapped("spec.enableDynamicWorker", "(false: the default TF_CONFIG)")
    if not job.options.compat_env:
        job.diag(
            "TF_TOPOLOGY_UNSUPPORTED",
            "error",
            base,
            "several roles need per-role TF_CONFIG, which only the compat env's shim builds (--no-compat-env)",
            action="rejected",
            workaround="turn the compat env on",
            decide=True,
            covers=("*",),
            hard=True,
        )
    if "Worker" not in specs:
        job.diag(
            "TF_TOPOLOGY_UNSUPPORTED",
            "error",
            base,
            "the TrainJob sizes the workers; a TFJob without Workers has nothing for it to size",
            action="rejected",
            workaround="keep this job on the Training Operator",
            decide=True,
            covers=("*",),
            hard=True,
        )
    if job.report.errors:
        return []
    counts = {rtype: replicas_of(rspec) for rtype, rspec in specs.items()}
    ports = {rtype: port_of(specs[rtype], KIND.main, KIND.port_name, KIND.port) for rtype in specs}
    size = sum(
        listing_bytes(counts[r], len(f'"{job.name}-{ROLE_JOB[r]}-0-.{job.name}:{ports[r]}"'))
        for r in specs
    )
    if not listing_fits(job, base, "TF_CONFIG", size):
        return []
    cluster = {
        rtype.lower(): [
            f"{job.name}-{ROLE_JOB[rtype]}-0-{i}.{job.name}:{ports[rtype]}"
            for i in range(counts[rtype])
        ]
        for rtype in specs
    }
    jobs: list[ReplicatedJob] = []
    policies: list[str] = []
    exit_code = False
    for rtype in ("Chief", "Master", "PS", "Worker", "Evaluator"):
        if rtype not in specs:
            continue
        rspec = specs[rtype]
        path = f"{base}[{rtype}]"
        if "replicas" in rspec:
            job.mapped(
                f"{path}.replicas",
                "TrainJob.spec.trainer.numNodes"
                if rtype == "Worker"
                else f"replicated job {ROLE_JOB[rtype]} parallelism",
            )
        hardcoded_addresses(
            job, rspec.get("template") or {}, f"{path}.template", "ps|worker|chief|master|evaluator"
        )
        policy, code = restart_policy(
            job, f"{path}.restartPolicy", rspec.get("restartPolicy"), KIND.restart
        )
        policies.append(rspec.get("restartPolicy") or KIND.restart)
        exit_code = exit_code or code
        pod, main = pod_template(
            job,
            rspec.get("template"),
            f"{path}.template",
            KIND.main,
            defaulted_port=(KIND.port_name, port_of(rspec, KIND.main, KIND.port_name, KIND.port)),
        )
        pod["spec"]["restartPolicy"] = policy
        container = pod["spec"]["containers"][main]
        command = list(container.get("command") or [])
        if not command:
            job.diag(
                "TF_CONFIG_NEEDS_COMMAND",
                "error",
                f"{path}.template.spec.containers[{main}].command",
                "the TF_CONFIG shim wraps the container command, and this container runs its image's entrypoint",
                action="rejected",
                workaround="write the image's entrypoint as the command",
                decide=True,
                covers=("*",),
                hard=True,
            )
            continue
        container["command"] = CommentedSeq(
            ["/bin/sh", "-c", shim(cluster, rtype.lower()), *command]
        )
        count = counts[rtype]
        jobs.append(
            ReplicatedJob(
                ROLE_JOB[rtype],
                pod,
                ancestor=rtype == "Worker",
                parallelism=None if rtype == "Worker" else count,
            )
        )
    if job.report.errors:
        return []
    # the workers first: JobSet keeps the order, the TrainJob sizes the ancestor
    jobs.sort(key=lambda j: 0 if j.name == "node" else 1)
    runtime = Runtime(
        cmap(("numNodes", counts["Worker"])),
        jobs,
        total_pods=sum(counts.values()),
        exit_code=exit_code,
    )
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
    run_policy(job, policies, runtime)
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
    common_notes(job, [], False)
    name_length(job, [(j.name, j.parallelism or counts["Worker"]) for j in jobs])
    spec = cmap(
        (
            "runtimeRef",
            dedicated_runtime_ref(job),
        ),
        ("trainer", cmap(("numNodes", counts["Worker"]))),
    )
    trainjob_run_fields(job, spec)
    if job.report.errors:
        return []
    return [runtime_object(job, runtime, "tensorflow"), trainjob_object(job, spec)]
