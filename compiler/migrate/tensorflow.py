"""TFJob (kubeflow.org/v1) -> TrainJob + plain runtime (v2.3.0 has no TensorFlow policy).

Workers only (MultiWorkerMirroredStrategy) or a single pod migrate; PS / Chief / Master /
Evaluator topologies do not (one replicated job per role and per-role TF_CONFIG).
TF_CONFIG differs per pod, so it cannot be a static env: with the compat env on, the
main container's command is wrapped in ``/bin/sh -c`` that exports TF_CONFIG built
from ``JOB_COMPLETION_INDEX`` (Kubernetes sets it in Indexed Jobs) and then execs the
original command."""

from __future__ import annotations

import json
from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq

from compiler.migrate.common import Job, Kind, replicas_of
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
