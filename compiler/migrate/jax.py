"""JAXJob (kubeflow.org/v1) -> TrainJob + runtime with ``mlPolicy.jax``."""

from __future__ import annotations

from ruamel.yaml.comments import CommentedMap

from compiler.migrate.common import Job, Kind, env_index, env_value
from compiler.migrate.peers import Peers, migrate_peers

KIND = Kind(
    "JAXJob",
    "jaxReplicaSpecs",
    ("Worker",),
    "jax",
    "jaxjob-port",
    6666,
    "Never",
    "jax",
    check_run_policy=False,
)


def migrate(job: Job) -> list[CommentedMap]:
    return migrate_peers(job, KIND, "jax", _jax)


def _jax(peers: Peers) -> None:
    peers.compat(
        env_value("PYTHONUNBUFFERED", "1"),
        env_value("COORDINATOR_PORT", str(peers.port("Worker"))),
        env_value("COORDINATOR_ADDRESS", peers.host(0)),
        env_value("NUM_PROCESSES", str(peers.total)),
        env_index("PROCESS_ID"),
    )
    peers.job.diag(
        "JAX_ENV_RENAMED",
        "warning",
        f"spec.{KIND.replica_field}",
        "v2's jax policy sets JAX_COORDINATOR_ADDRESS (host:29500), JAX_NUM_PROCESSES and JAX_PROCESS_ID; v1's COORDINATOR_*/NUM_PROCESSES/PROCESS_ID stay only through the compat env",
        target="container node env",
        action="approximated",
        covers=("env:main:JAX_*", "port:main:29500"),
    )
