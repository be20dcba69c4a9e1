"""PaddleJob (kubeflow.org/v1) -> TrainJob + plain runtime (v2.3.0 has no Paddle policy).

Collective mode (Workers only) merges into ``node``. Parameter-server mode (a Master)
becomes two replicated jobs, ``master`` and ``node`` (the workers, which the TrainJob
sizes), with v1's per-role variables written into each template."""

from __future__ import annotations

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
    env_value,
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

KIND = Kind(
    "PaddleJob",
    "paddleReplicaSpecs",
    ("Master", "Worker"),
    "paddle",
    "master",
    36543,
    "OnFailure",
    "paddle",
)
BASE = f"spec.{KIND.replica_field}"


def migrate(job: Job) -> list[CommentedMap]:
    specs = job.spec.get(KIND.replica_field)
    if isinstance(specs, dict) and any(str(k).lower() == "master" for k in specs):
        return _migrate_ps(job)
    return migrate_peers(job, KIND, None, _paddle, pre=_pre)


def _pre(job: Job, specs: dict[str, dict[str, Any]]) -> None:
    elastic = job.spec.get("elasticPolicy")
    if elastic is not None:
        job.diag(
            "PADDLE_ELASTIC_DROPPED",
            "warning",
            "spec.elasticPolicy",
            "v1 read the Paddle elastic policy only when defaulting; v2 has none",
            action="dropped",
        )


def _paddle(peers: Peers) -> None:
    job = peers.job
    port = peers.port("Worker")
    job.diag(
        "PADDLE_NO_NATIVE_RUNTIME",
        "warning",
        f"spec.{KIND.replica_field}",
        "v2.3.0 has no Paddle policy: a plain runtime (numNodes only) with static env",
        action="approximated",
    )
    peers.compat(
        env_value("PYTHONUNBUFFERED", "1"),
        env_value("PADDLE_JOB_ID", job.name),
        env_value("PADDLE_NNODES", str(peers.total)),
        env_value("PADDLE_MASTER", f"{peers.host(0)}:{port}"),
    )
    job.diag(
        "PADDLE_MASTER_BY_DNS",
        "warning",
        f"spec.{KIND.replica_field}[Worker]",
        "v1 gave rank 0 its own pod IP as PADDLE_MASTER ($(POD_IP_DUMMY)); v2 gives every pod rank 0's DNS name",
        target="TrainJob.spec.trainer.env[PADDLE_MASTER]",
        action="approximated",
        covers=("env:main:POD_IP_DUMMY", "env:main:PADDLE_MASTER@rank-0"),
    )


def _migrate_ps(job: Job) -> list[CommentedMap]:
    """Parameter-server mode: replicated jobs ``master`` and ``node``; every pod gets
    PADDLE_JOB_ID, PADDLE_NNODES and PADDLE_MASTER (master-0's DNS name; v1 gave master-0
    its own pod IP), masters PADDLE_SERVER_NUM=1 and workers PADDLE_TRAINER_NUM=1."""
    webhook_checks(job, KIND)
    job.raise_problems()
    check_metadata(job)
    specs = normalise_types(job, KIND)
    _pre(job, specs)
    if "Worker" not in specs:
        refuse(
            job,
            "PADDLE_PS_MODE_UNSUPPORTED",
            BASE,
            "parameter-server mode without Workers: the TrainJob has no workers to size",
        )
        return []
    counts = {rtype: replicas_of(rspec) for rtype, rspec in specs.items()}
    total = sum(counts.values())
    port = port_of(specs["Master"], KIND.main, KIND.port_name, KIND.port)
    master_host = f"{job.name}-master-0-0.{job.name}:{port}"
    jobs: list[ReplicatedJob] = []
    policies: list[str] = []
    exit_code = False
    sidecars: list[str] = []
    for rtype, rjob in (("Worker", "node"), ("Master", "master")):
        target = (
            "TrainJob.spec.trainer.numNodes"
            if rtype == "Worker"
            else "replicated job master parallelism"
        )
        pod, main, code = role_pod(job, KIND, rtype, specs[rtype], target, policies)
        exit_code = exit_code or code
        containers = pod["spec"]["containers"]
        sidecars += [str(c.get("name")) for i, c in enumerate(containers) if i != main]
        if job.options.compat_env:
            child(containers[main], "env", CommentedSeq()).extend(
                [
                    env_value("PYTHONUNBUFFERED", "1"),
                    env_value("PADDLE_JOB_ID", job.name),
                    env_value("PADDLE_NNODES", str(total)),
                    env_value("PADDLE_MASTER", master_host),
                    env_value(
                        "PADDLE_SERVER_NUM" if rtype == "Master" else "PADDLE_TRAINER_NUM", "1"
                    ),
                ]
            )
        jobs.append(role_job(rjob, pod, counts[rtype]))
    runtime = Runtime(
        cmap(("numNodes", counts["Worker"])), jobs, total_pods=total, exit_code=exit_code
    )
    run_policy(job, policies, runtime)
    _ps_notes(job)
    common_notes(job, sidecars, True)
    name_length(job, [("node", counts["Worker"]), ("master", counts["Master"])])
    spec = cmap(
        ("runtimeRef", dedicated_runtime_ref(job)),
        ("trainer", cmap(("numNodes", counts["Worker"]))),
    )
    trainjob_run_fields(job, spec)
    if job.report.errors:
        return []
    return [runtime_object(job, runtime, "paddle"), trainjob_object(job, spec)]


def _ps_notes(job: Job) -> None:
    if job.options.compat_env:
        job.diag(
            "COMPAT_ENV_ADDED",
            "info",
            BASE,
            "v1's Paddle variables are written into each role's template: PYTHONUNBUFFERED, PADDLE_JOB_ID, PADDLE_NNODES, PADDLE_MASTER, PADDLE_SERVER_NUM (masters) / PADDLE_TRAINER_NUM (workers)",
            target="master and node container env",
            action="shimmed",
        )
    else:
        job.diag(
            "COMPAT_ENV_OFF",
            "warning",
            BASE,
            "--no-compat-env: the PADDLE_* variables are not set",
            action="dropped",
            covers=("env:main:PADDLE_*", "env:main:PYTHONUNBUFFERED", "env:main:POD_IP_DUMMY"),
        )
    job.diag(
        "PADDLE_NO_NATIVE_RUNTIME",
        "warning",
        BASE,
        "v2.3.0 has no Paddle policy: a plain runtime with replicated jobs master and node",
        action="approximated",
    )
    job.diag(
        "PADDLE_MASTER_BY_DNS",
        "warning",
        f"{BASE}[Master]",
        "v1 gave master-0 its own pod IP as PADDLE_MASTER ($(POD_IP_DUMMY)); v2 gives every pod master-0's DNS name",
        action="approximated",
        covers=("env:main:POD_IP_DUMMY@master-0", "env:main:PADDLE_MASTER@master-0"),
    )
    job.diag(
        "PADDLE_PS_SUCCESS",
        "warning",
        BASE,
        "v1 finished the job when the masters succeeded; the JobSet waits for every replicated job",
        action="approximated",
    )
