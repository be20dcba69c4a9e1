"""PlainML: the generic ML policy, for runtimes without torch, mpi or jax (spec §6).

Upstream: pkg/runtime/framework/plugins/plainml/plainml.go. It also runs for xgboost and
flux runtimes and for runtimes without any mlPolicy.
"""

from __future__ import annotations

from compiler.render import upsert
from compiler.render.framework import EnforceMLPolicyPlugin, TrainJobContext
from compiler.render.info import Info
from compiler.upstream.names import ANCESTOR_TRAINER, NODE

NAME = "PlainML"


class PlainMLPlugin(EnforceMLPolicyPlugin):
    name = NAME

    def enforce_ml_policy(self, info: Info, job: TrainJobContext) -> None:
        if any(info.has_policy(member) for member in ("torch", "mpi", "jax")):
            return
        trainer = job.trainer
        if trainer is None:
            return
        if trainer.get("numNodes") is not None:
            pod_set = info.pod_set_by_ancestor(ANCESTOR_TRAINER)
            if pod_set is not None:
                pod_set.count = trainer["numNodes"]
        container = info.container_by_ancestor(ANCESTOR_TRAINER, NODE)
        if container is not None:
            upsert.upsert_env(container.env, upsert.reencode_envs(trainer.get("env")))
