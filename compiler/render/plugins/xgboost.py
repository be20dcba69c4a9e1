"""XGBoost: the ML policy of ``xgboost-distributed`` runtimes (spec §7).

Upstream: pkg/runtime/framework/plugins/xgboost/xgboost.go. Active when the runtime's
``mlPolicy.xgboost`` is set. PlainML runs for such runtimes too (spec §1.2).

- Nothing at all without a trainer PodSet.
- The trainer PodSet count becomes ``spec.trainer.numNodes`` when that is set.
- Only when the TrainJob has ``spec.trainer`` and the trainer PodSet has a ``node``
  container, it upserts, in this order:

  ``DMLC_TRACKER_URI``   ``<name>-node-0-0.<name>`` (hard-coded, no port, no subdomain)
  ``DMLC_TRACKER_PORT``  ``29500``
  ``DMLC_TASK_ID``       the Job completion index (the pod's index, not a per-GPU rank)
  ``DMLC_NUM_WORKER``    trainer count x workers per node, where workers per node is the
                         GPU count of the effective per-node resources (the TrainJob's
                         ``resourcesPerNode`` as is, else the runtime's ``node``
                         container), or 1 without GPUs; ``numProcPerNode`` is ignored

  then the unnamed port 29500 (with upsert's unnamed-port quirk, spec §1.5).

Validation: every ``spec.trainer.env[i]`` named like one of the four ``DMLC_*``
variables is Forbidden at ``spec.trainer.env[i]``: ``<NAME> is reserved for the XGBoost
runtime`` (one error per entry, in env order).

Env order (trainc's canonical choice). Upstream runs PlainML and XGBoost in Go map
order, so the relative order of the user env and the DMLC block differs between
controller processes. trainc's registry runs XGBoost before PlainML, so the trainer
container ends as: the runtime template's env (names keep their positions), the four
``DMLC_*`` in the order above, then the TrainJob env names new to the container, in
TrainJob order. The reserved-name check guarantees that no user entry replaces a
``DMLC_*`` one, so only the order differs from the other upstream outcome (where the
new user names come before the DMLC block); the conformance tests compare env lists of
xgboost runtimes sorted by name.

Arithmetic is Go's ``int32``: the GPU count is truncated to ``int32`` and the product
wraps, as upstream's ``int32(gpuCount)`` and ``numNodes * numWorkersPerNode`` do.
"""

from __future__ import annotations

from compiler.errors import FieldError
from compiler.render import upsert
from compiler.render.framework import CustomValidationPlugin, EnforceMLPolicyPlugin, TrainJobContext
from compiler.render.info import Info, JsonObject
from compiler.render.plugins.torch import JOB_COMPLETION_INDEX_FIELD_PATH
from compiler.render.plugins.torchtune import CONTAINER_TRAINER_PORT, trainer_endpoint
from compiler.render.resources import effective_resources, num_gpu_per_node
from compiler.upstream.names import ANCESTOR_TRAINER, NODE

NAME = "XGBoost"

DMLC_TRACKER_URI = "DMLC_TRACKER_URI"
DMLC_TRACKER_PORT = "DMLC_TRACKER_PORT"
DMLC_TASK_ID = "DMLC_TASK_ID"
DMLC_NUM_WORKER = "DMLC_NUM_WORKER"
RESERVED_ENV_NAMES = frozenset({DMLC_TRACKER_URI, DMLC_TRACKER_PORT, DMLC_TASK_ID, DMLC_NUM_WORKER})

FORBIDDEN = "FieldValueForbidden"


def int32(value: int) -> int:
    """Go's conversion to ``int32``: keep the low 32 bits, two's complement.

    >>> int32(2**31), int32(-1), int32(6)
    (-2147483648, -1, 6)
    """
    return (value + 2**31) % 2**32 - 2**31


def num_workers(num_nodes: int, resources: JsonObject) -> int:
    """``DMLC_NUM_WORKER``: one worker per GPU of a node, one per node without GPUs.

    >>> num_workers(2, {"requests": {"example.com/gpu": "4"}})
    8
    >>> num_workers(3, {"limits": {"cpu": "16"}})
    3
    """
    workers_per_node = 1
    gpus = num_gpu_per_node(resources)
    if gpus > 0:
        workers_per_node = int32(gpus)
    return int32(num_nodes * workers_per_node)


def dmlc_envs(trainjob_name: str, total_workers: int) -> list[JsonObject]:
    return [
        {"name": DMLC_TRACKER_URI, "value": trainer_endpoint(trainjob_name)},
        {"name": DMLC_TRACKER_PORT, "value": str(CONTAINER_TRAINER_PORT)},
        {
            "name": DMLC_TASK_ID,
            "valueFrom": {"fieldRef": {"fieldPath": JOB_COMPLETION_INDEX_FIELD_PATH}},
        },
        {"name": DMLC_NUM_WORKER, "value": str(total_workers)},
    ]


class XGBoostPlugin(EnforceMLPolicyPlugin, CustomValidationPlugin):
    name = NAME

    def enforce_ml_policy(self, info: Info, job: TrainJobContext) -> None:
        """Trainer count, the DMLC env block and port 29500 on the trainer ``node`` container."""
        if not info.has_policy("xgboost"):
            return
        pod_set = info.pod_set_by_ancestor(ANCESTOR_TRAINER)
        if pod_set is None:
            return
        trainer = job.trainer
        if trainer is None:
            return
        if trainer.get("numNodes") is not None:
            pod_set.count = trainer["numNodes"]
        container = info.container_by_ancestor(ANCESTOR_TRAINER, NODE)
        if container is None:
            return
        total = num_workers(pod_set.count, effective_resources(info, trainer))
        upsert.upsert_env(container.env, dmlc_envs(job.name, total))
        upsert.upsert_ports(container.ports, [{"containerPort": CONTAINER_TRAINER_PORT}])

    def validate(self, info: Info, job: TrainJobContext) -> list[FieldError]:
        """One Forbidden error per TrainJob env entry with a reserved ``DMLC_*`` name."""
        if not info.has_policy("xgboost") or job.trainer is None:
            return []
        return [
            FieldError(
                FORBIDDEN,
                f"spec.trainer.env[{index}]",
                f"{env.get('name')} is reserved for the XGBoost runtime",
            )
            for index, env in enumerate(job.trainer.get("env") or ())
            if env.get("name") in RESERVED_ENV_NAMES
        ]
