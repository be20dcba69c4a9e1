"""PaddleJob (kubeflow.org/v1) -> TrainJob + plain runtime (v2.3.0 has no Paddle policy).

Collective mode (Workers only) migrates; parameter-server mode (a Master) does not:
it needs per-role env and a pod-IP endpoint on master-0 only."""

from __future__ import annotations

from typing import Any

from ruamel.yaml.comments import CommentedMap

from compiler.migrate.common import Job, Kind, env_value
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


def migrate(job: Job) -> list[CommentedMap]:
    return migrate_peers(job, KIND, None, _paddle, pre=_pre)


def _pre(job: Job, specs: dict[str, dict[str, Any]]) -> None:
    if "Master" in specs:
        job.diag(
            "PADDLE_PS_MODE_UNSUPPORTED",
            "error",
            f"spec.{KIND.replica_field}[Master]",
            "parameter-server mode needs two replicated jobs with per-role env (PADDLE_SERVER_NUM, PADDLE_TRAINER_NUM) and a pod-IP endpoint on master-0 only; v2.3.0 has no Paddle policy",
            action="rejected",
            workaround="run collective mode (Workers only), or write a runtime by hand",
            decide=True,
            covers=("*",),
            hard=True,
        )
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
