"""JAX: the ML policy of ``jax-distributed`` runtimes (spec §6).

Upstream: pkg/runtime/framework/plugins/jax/jax.go. Active when the runtime's
``mlPolicy.jax`` is set (PlainML then stays out, spec §1.2).

- The trainer PodSet count becomes ``spec.trainer.numNodes`` when that is set.
- Only when the TrainJob has ``spec.trainer`` and the trainer PodSet has a ``node``
  container, it upserts, in this order: ``JAX_NUM_PROCESSES`` (the trainer count: one
  process per pod, whatever ``numProcPerNode`` or the GPUs say), ``JAX_PROCESS_ID``
  (the Job completion index), ``JAX_COORDINATOR_ADDRESS``
  (``<name>-node-0-0.<name>:29500``, hard-coded like Torch's master address), then the
  unnamed port 29500 (with upsert's unnamed-port quirk, spec §1.5).

It does not upsert the TrainJob env itself; the JobSet builder does that afterwards,
so user env names new to the container follow the JAX block, and a user value for a
``JAX_*`` name replaces the plugin's in place.

Validation: none. v2.3.0 declares the plugin a validator but it returns no errors;
pkg/constants has no reserved JAX env names (unlike Torch's ``PET_*``, MPI's
``OMPI_MCA_*`` and XGBoost's ``DMLC_*``), so ``JAX_*`` env in a TrainJob is accepted.
"""

from __future__ import annotations

from compiler.errors import FieldError
from compiler.render import upsert
from compiler.render.framework import CustomValidationPlugin, EnforceMLPolicyPlugin, TrainJobContext
from compiler.render.info import Info, JsonObject
from compiler.render.plugins.torch import JOB_COMPLETION_INDEX_FIELD_PATH
from compiler.render.plugins.torchtune import CONTAINER_TRAINER_PORT, trainer_endpoint
from compiler.upstream.names import ANCESTOR_TRAINER, NODE

NAME = "JAX"

JAX_NUM_PROCESSES = "JAX_NUM_PROCESSES"
JAX_PROCESS_ID = "JAX_PROCESS_ID"
JAX_COORDINATOR_ADDRESS = "JAX_COORDINATOR_ADDRESS"


def jax_envs(trainjob_name: str, num_processes: int) -> list[JsonObject]:
    """The JAX block, in upstream's order.

    >>> [e.get("value") for e in jax_envs("job", 2)]
    ['2', None, 'job-node-0-0.job:29500']
    """
    return [
        {"name": JAX_NUM_PROCESSES, "value": str(num_processes)},
        {
            "name": JAX_PROCESS_ID,
            "valueFrom": {"fieldRef": {"fieldPath": JOB_COMPLETION_INDEX_FIELD_PATH}},
        },
        {
            "name": JAX_COORDINATOR_ADDRESS,
            "value": f"{trainer_endpoint(trainjob_name)}:{CONTAINER_TRAINER_PORT}",
        },
    ]


class JAXPlugin(EnforceMLPolicyPlugin, CustomValidationPlugin):
    name = NAME

    def enforce_ml_policy(self, info: Info, job: TrainJobContext) -> None:
        """Trainer count, the JAX env block and port 29500 on the trainer ``node`` container."""
        if not info.has_policy("jax"):
            return
        trainer = job.trainer
        pod_set = info.pod_set_by_ancestor(ANCESTOR_TRAINER)
        if pod_set is not None and trainer is not None and trainer.get("numNodes") is not None:
            pod_set.count = trainer["numNodes"]
        if trainer is None:
            return
        container = info.container_by_ancestor(ANCESTOR_TRAINER, NODE)
        if container is None:
            return
        num_nodes = pod_set.count if pod_set is not None else 1
        upsert.upsert_env(container.env, jax_envs(job.name, num_nodes))
        upsert.upsert_ports(container.ports, [{"containerPort": CONTAINER_TRAINER_PORT}])

    def validate(self, info: Info, job: TrainJobContext) -> list[FieldError]:
        """Upstream's JAX validator accepts everything (no reserved env names in v2.3.0)."""
        return []
