"""PyTorchJob (kubeflow.org/v1) -> TrainJob + runtime with ``mlPolicy.torch``.

Master (1) and Worker (N) merge into ``node`` (numNodes 1 + N), the master first, so
v1's RANK (master 0, worker i -> i + 1) is the completion index."""

from __future__ import annotations

from typing import Any

from ruamel.yaml.comments import CommentedMap

from compiler.migrate.common import Job, Kind, env_index, env_value, refuse
from compiler.migrate.peers import Peers, migrate_peers
from compiler.migrate.vcgroup import Peer, migrate_group
from compiler.migrate.vcjob import Tasks

KIND = Kind(
    "PyTorchJob",
    "pytorchReplicaSpecs",
    ("Master", "Worker"),
    "pytorch",
    "pytorchjob-port",
    23456,
    "OnFailure",
    "torch",
)
ELASTIC_ENV = (
    "env:*:PET_RDZV_ENDPOINT",
    "env:*:PET_RDZV_BACKEND",
    "env:*:PET_RDZV_ID",
    "env:*:PET_RDZV_CONF",
    "env:*:PET_MAX_RESTARTS",
    "env:*:PET_STANDALONE",
    "env:*:PET_NNODES",
)


def migrate(job: Job) -> list[CommentedMap]:
    spec = job.spec
    elastic = spec.get("elasticPolicy")
    specs = spec.get(KIND.replica_field) or {}
    if isinstance(elastic, dict):
        if "Worker" not in specs:
            job.reject(
                f"spec.{KIND.replica_field}[Worker]",
                "Required value: must be configured if elastic policy is used",
            )
        if elastic.get("nProcPerNode") is not None and spec.get("nprocPerNode") is not None:
            job.reject(
                "spec.elasticPolicy.nProcPerNode",
                "Forbidden: must not be used with spec.nprocPerNode",
            )
    return migrate_peers(job, KIND, "torch", _torch)


def _nproc(peers: Peers) -> tuple[str, int]:
    """v1's nprocPerNode after defaults (a string) and its integer for WORLD_SIZE."""
    job = peers.job
    spec = job.spec
    elastic = spec.get("elasticPolicy") or {}
    raw = spec.get("nprocPerNode")
    if raw is None and elastic.get("nProcPerNode") is not None:
        job.diag(
            "NPROC_DEPRECATED_FIELD",
            "info",
            "spec.elasticPolicy.nProcPerNode",
            "the deprecated elastic nProcPerNode becomes TrainJob numProcPerNode",
            target="TrainJob.spec.trainer.numProcPerNode",
        )
        value = int(elastic["nProcPerNode"])
        peers.trainer["numProcPerNode"] = value
        return str(value), value
    text = "auto" if raw is None else str(raw)
    path = "spec.nprocPerNode"
    if text.isascii() and text.isdigit():  # "²".isdigit() is true, int("²") fails
        peers.trainer["numProcPerNode"] = int(text)
        job.mapped(path, "TrainJob.spec.trainer.numProcPerNode")
        return text, int(text)
    gpus = _has_gpu(peers.pod)
    if text in ("auto", "gpu") and gpus:
        if raw is not None:
            job.mapped(path, "PET_NPROC_PER_NODE auto (v2 picks auto when the node requests GPUs)")
        return text, 1
    job.diag(
        "NPROC_AUTO_CPU_SEMANTICS"
        if text == "auto"
        else "NPROC_CPU_RESOLVED"
        if text == "cpu"
        else "NPROC_NO_GPU",
        "warning",
        path,
        f"nprocPerNode {text!r}: v1 passed it to torchrun as is; v2 sets PET_NPROC_PER_NODE to auto only when the node requests GPUs, else to the CPU count of its requests (at least 1)",
        target="PET_NPROC_PER_NODE",
        action="approximated",
        workaround="set TrainJob spec.trainer.numProcPerNode to the number of processes you want",
        decide=True,
        covers=("env:main:PET_NPROC_PER_NODE",),
    )
    return text, 1


def _has_gpu(pod: CommentedMap) -> bool:
    for container in (pod.get("spec") or {}).get("containers") or []:
        if container.get("name") != "node":
            continue
        resources = container.get("resources") or {}
        for group in ("requests", "limits"):
            if any("gpu" in str(k) for k in (resources.get(group) or {})):
                return True
    return False


def _torch(peers: Peers) -> None:
    job = peers.job
    _, nproc = _nproc(peers)
    elastic = job.spec.get("elasticPolicy")
    master = "Master" in peers.specs
    if master:
        port = peers.port("Master")
        peers.compat(
            env_value("PYTHONUNBUFFERED", "1"),
            env_value("MASTER_ADDR", peers.host(0)),
            env_value("MASTER_PORT", str(port)),
            env_value("WORLD_SIZE", str(peers.total * nproc)),
            env_index("RANK"),
        )
        job.diag(
            "MASTER_PORT_CHANGED",
            "info",
            f"spec.{KIND.replica_field}[Master]",
            f"torchrun's rendezvous port PET_MASTER_PORT is 29500 in v2 (v1: {port}); MASTER_PORT keeps {port}",
            target="PET_MASTER_PORT",
            covers=("env:main:PET_MASTER_PORT", "port:main:29500"),
        )
        if "Worker" in peers.specs:
            job.diag(
                "INIT_CONTAINER_DROPPED",
                "info",
                f"spec.{KIND.replica_field}[Worker]",
                "v1's init-pytorch container (waits for the master's DNS name) is not emitted; torchrun's static rendezvous retries instead",
                action="dropped",
                covers=("initContainer:init-pytorch",),
            )
    else:
        peers.compat(env_value("PYTHONUNBUFFERED", "1"))
        job.diag(
            "TORCH_RENDEZVOUS_ADDED",
            "info",
            f"spec.{KIND.replica_field}",
            "v1 set no master address without a Master; v2 sets PET_MASTER_ADDR, PET_MASTER_PORT and PET_NODE_RANK (index 0 is the rendezvous host)",
            covers=(
                "env:main:PET_MASTER_ADDR",
                "env:main:PET_MASTER_PORT",
                "env:main:PET_NODE_RANK",
                "port:main:29500",
            ),
        )
    if isinstance(elastic, dict):
        _elastic(peers, elastic)


def _elastic(peers: Peers, elastic: dict[str, Any]) -> None:
    job = peers.job
    base = "spec.elasticPolicy"
    workers = peers.specs.get("Worker") or {}
    replicas = int(workers.get("replicas") or 1)
    low = elastic.get("minReplicas")
    high = elastic.get("maxReplicas")
    low = low if low is not None else high if high is not None else replicas
    high = high if high is not None else low
    if elastic.get("metrics"):
        job.diag(
            "ELASTIC_HPA_UNSUPPORTED",
            "error",
            f"{base}.metrics",
            "v1 created a HorizontalPodAutoscaler on the workers; v2 has no elastic training",
            action="rejected",
            workaround="size the job with numNodes; --allow-lossy migrates it at its current size",
            decide=True,
            covers=("*",) if not job.options.allow_lossy else ELASTIC_ENV,
        )
    if low != high:
        job.diag(
            "ELASTIC_RANGE_LOST",
            "warning",
            base,
            f"v1 let torchrun run with {low} to {high} nodes (PET_NNODES {low}:{high}); v2 runs exactly {peers.total} pods",
            target="TrainJob.spec.trainer.numNodes",
            action="approximated",
            decide=True,
            workaround="pick the node count in trainer.numNodes",
            covers=ELASTIC_ENV,
        )
        if not low <= replicas <= high:
            job.diag(
                "ELASTIC_REPLICAS_OUTSIDE_RANGE",
                "warning",
                f"spec.{KIND.replica_field}[Worker].replicas",
                f"{replicas} workers lie outside [{low}, {high}]",
                action="approximated",
            )
    job.diag(
        "ELASTIC_DROPPED",
        "warning",
        base,
        "v2 has no elastic policy: torchrun uses static rendezvous at PET_MASTER_ADDR:29500; rdzvBackend, rdzvHost, rdzvPort, rdzvId, rdzvConf, standalone, maxRestarts have no target",
        action="dropped",
        workaround="a JobSet failurePolicy.maxRestarts in the runtime restarts the whole gang",
        covers=ELASTIC_ENV,
    )


def migrate_volcano(tasks: Tasks) -> list[CommentedMap]:
    """A Volcano Job's ``pytorch`` plugin: the master task (one pod) and the worker task
    merge into ``node`` with ``mlPolicy.torch``, the master first (RANK 0)."""
    job, names = tasks.job, tasks.names
    args = tasks.args("pytorch")
    master, worker = args.get("master") or "master", args.get("worker") or "worker"
    port = tasks.port("pytorch", 23456)
    order = [n for n in (master, worker) if n in tasks.by_name]
    extra = [n for n in names if n not in (master, worker)]
    if extra:
        refuse(
            job,
            "VOLCANO_EXTRA_TASK_UNSUPPORTED",
            "spec.tasks",
            f"tasks {', '.join(extra)} are neither the pytorch master nor worker",
        )
    if master in tasks.by_name and tasks.replicas(master) != 1:
        refuse(
            job,
            "VOLCANO_EXTRA_TASK_UNSUPPORTED",
            f"spec.tasks[{names.index(master)}].replicas",
            "the pytorch master task must have one pod",
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
    peer = Peer("torch", "pytorchjob-port", port, lambda job, total: _volcano_env(job, port, total))
    return migrate_group(tasks, order, peer)


def _volcano_env(job: Job, port: int, total: int) -> list[CommentedMap]:
    """The pytorch plugin's variables, at v2 addresses (RANK: the completion index)."""
    job.diag(
        "MASTER_PORT_CHANGED",
        "info",
        "spec.plugins.pytorch",
        "torchrun's PET_MASTER_PORT is 29500 in v2",
        covers=("env:main:PET_*", "port:main:29500"),
    )
    return [
        env_value("MASTER_ADDR", f"{job.name}-node-0-0.{job.name}"),
        env_value("MASTER_PORT", str(port)),
        env_value("WORLD_SIZE", str(total)),
        env_index("RANK"),
    ]
