"""TensorFlow (``tensorflow``): ``TF_CONFIG`` per pod, as Training Operator v1.9.4's TFJob controller.

Trainer v2.3.0 has no TensorFlow ML policy. The TFJob controller
(``pkg/controller.v1/tensorflow``: ``SetClusterSpec``, ``genTFConfigJSONStr``,
``genClusterSpec``, ``isDistributed``; the port default of ``tensorflow_defaults.go``)
gives every pod of a distributed job (more than one replica in total) one env var::

    TF_CONFIG={"cluster":{"<role>":["<host>:<port>", ...], ...},
               "task":{"type":"<role>","index":<i>},"environment":"cloud"}

with one list per replica type (``chief``, ``master``, ``ps``, ``worker``, ``evaluator``),
hosts ``<job>-<role>-<i>.<namespace>.svc`` and the port of the container port named
``tfjob-port`` (the default adds ``tfjob-port: 2222``).

Mapped onto Trainer's layout: each role is the replicated job of that name (one JobSet
replica; its Job's completions are the role's replicas), the TF container is the one
named ``node``, and host ``i`` of a role is the JobSet pod
``<trainjob>-<role>-0-<i>.<subdomain>.<namespace>.svc``. One pod template serves every
index of a role, so the task index comes from the Job completion index: the env var
``TRAINC_TF_TASK_INDEX`` reads it, and ``TF_CONFIG`` refers to it as ``$(...)``, which the
kubelet expands into exactly the operator's string.
"""

from __future__ import annotations

import json

from compiler.render import upsert
from compiler.render.extensions.base import (
    Extension,
    ExtensionPlugin,
    Parameters,
    node_port,
    role_job_problems,
)
from compiler.render.framework import EnforceMLPolicyPlugin, TrainJobContext
from compiler.render.info import Info, JsonObject
from compiler.upstream.names import NODE

NAME = "tensorflow"
ROLES = ("chief", "evaluator", "master", "ps", "worker")
PORT_NAME = "tfjob-port"
DEFAULT_PORT = 2222
TF_CONFIG = "TF_CONFIG"
TASK_INDEX = "TRAINC_TF_TASK_INDEX"
COMPLETION_INDEX = "metadata.annotations['batch.kubernetes.io/job-completion-index']"


def cluster_spec(info: Info, namespace: str) -> dict[str, list[str]]:
    cluster: dict[str, list[str]] = {}
    for pod_set in info.pod_sets:
        if pod_set.name in ROLES:
            port = node_port(pod_set, PORT_NAME, DEFAULT_PORT)
            cluster[pod_set.name] = [
                f"{endpoint}.{namespace}.svc:{port}" for endpoint in pod_set.endpoints()
            ]
    return cluster


def tf_config(cluster: dict[str, list[str]], role: str) -> str:
    """Go's ``json.Marshal`` of TFConfig: map keys sorted, no spaces; the index a reference."""
    spec = json.dumps(cluster, sort_keys=True, separators=(",", ":"))
    task = f'{{"type":{json.dumps(role)},"index":$({TASK_INDEX})}}'
    return f'{{"cluster":{spec},"task":{task},"environment":"cloud"}}'


class TensorFlowExtension(ExtensionPlugin, EnforceMLPolicyPlugin):
    name = f"extension {NAME}"

    def enforce_ml_policy(self, info: Info, job: TrainJobContext) -> None:
        roles = [ps for ps in info.pod_sets if ps.name in ROLES]
        # isDistributed: exactly one replica in all is a local job, no TF_CONFIG
        distributed = sum(ps.count for ps in roles) != 1
        cluster = cluster_spec(info, job.namespace)
        for pod_set in roles:
            container = pod_set.container(NODE)
            if container is None:
                continue
            port = node_port(pod_set, PORT_NAME, DEFAULT_PORT)
            upsert.upsert_ports(container.ports, [{"name": PORT_NAME, "containerPort": port}])
            if not distributed:
                continue
            upsert.upsert_env(
                container.env,
                [
                    {
                        "name": TASK_INDEX,
                        "valueFrom": {"fieldRef": {"fieldPath": COMPLETION_INDEX}},
                    },
                    {"name": TF_CONFIG, "value": tf_config(cluster, pod_set.name)},
                ],
            )


def _check_runtime(spec: JsonObject, params: Parameters) -> list[str]:
    problems = []
    policy = spec.get("mlPolicy") or {}
    if any(policy.get(member) is not None for member in ("torch", "mpi", "jax")):
        problems.append("tensorflow needs a runtime without mlPolicy torch, mpi or jax")
    jobs = ((spec.get("template") or {}).get("spec") or {}).get("replicatedJobs") or []
    roles = [j for j in jobs if j.get("name") in ROLES]
    if not roles:
        problems.append(f"tensorflow needs a replicated job named one of {', '.join(ROLES)}")
    if sum(1 for j in roles if j.get("name") in ("chief", "master")) > 1:
        problems.append("tensorflow: must not have more than 1 Chief or Master role")
    return problems + role_job_problems("tensorflow", roles)


EXTENSION = Extension(
    name=NAME,
    summary="TF_CONFIG and the tfjob-port per role, as Training Operator v1.9.4's TFJob",
    plugin=lambda params: TensorFlowExtension(),
    check_runtime=_check_runtime,
)
