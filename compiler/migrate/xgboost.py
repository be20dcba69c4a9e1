"""XGBoostJob (kubeflow.org/v1) -> TrainJob + runtime with ``mlPolicy.xgboost``.

Master (1) and Worker (N) merge into ``node``; the master (tracker) is index 0."""

from __future__ import annotations

from ruamel.yaml.comments import CommentedMap

from compiler.migrate.common import Job, Kind, env_index, env_value, listing_bytes, listing_fits
from compiler.migrate.peers import Peers, migrate_peers

KIND = Kind(
    "XGBoostJob",
    "xgbReplicaSpecs",
    ("Master", "Worker"),
    "xgboost",
    "xgboostjob-port",
    9999,
    "Never",
    "xgboost",
)


def migrate(job: Job) -> list[CommentedMap]:
    return migrate_peers(job, KIND, "xgboost", _xgboost)


def _xgboost(peers: Peers) -> None:
    job = peers.job
    variables = [
        env_value("MASTER_PORT", str(peers.port("Master"))),
        env_value("MASTER_ADDR", peers.host(0)),
        env_value("WORLD_SIZE", str(peers.total)),
        env_index("RANK"),
        env_value("PYTHONUNBUFFERED", "1"),
    ]
    hosts = listing_bytes(peers.total - 1, len(f"{job.name}-node-0-.{job.name}"), start=1)
    if job.options.compat_env and not listing_fits(
        job, f"spec.{KIND.replica_field}[Worker].replicas", "WORKER_ADDRS", hosts
    ):
        return
    if peers.total > 1:
        # v1 listed <job>-worker-0 .. <job>-worker-(N-2): the workers are indexes 1..
        addresses = (
            ",".join(peers.host(i) for i in range(1, peers.total))
            if job.options.compat_env  # only the name is reported otherwise: not built
            else ""
        )
        variables.append(env_value("WORKER_PORT", str(peers.port("Worker"))))
        variables.append(env_value("WORKER_ADDRS", addresses))
    peers.compat(*variables)
    job.diag(
        "XGBOOST_ENV_CONTRACT_CHANGED",
        "warning",
        f"spec.{KIND.replica_field}",
        "v2's xgboost policy sets DMLC_TRACKER_URI, DMLC_TRACKER_PORT (29500), DMLC_TASK_ID and DMLC_NUM_WORKER; v1's MASTER_*/WORLD_SIZE/RANK/WORKER_* stay only through the compat env",
        target="container node env",
        action="approximated",
        workaround="read DMLC_* in new code",
        covers=("env:main:DMLC_*", "port:main:29500"),
    )
