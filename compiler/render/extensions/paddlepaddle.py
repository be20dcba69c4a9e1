"""PaddlePaddle (``paddlepaddle``): the ``PADDLE_*`` env, as Training Operator v1.9.4's PaddleJob.

Trainer v2.3.0 has no PaddlePaddle ML policy. The PaddleJob controller
(``pkg/controller.v1/paddlepaddle/envvar.go``: ``setPodEnv``; the port default of
``paddlepaddle_defaults.go``) gives every container of every pod::

    PYTHONUNBUFFERED    1
    PADDLE_JOB_ID       <job>
    PADDLE_NNODES       <replicas of all types>
    PADDLE_MASTER       <rendezvous host>:<port>
    PADDLE_SERVER_NUM   1     (PS mode, master pods)   | PADDLE_TRAINER_NUM 1 (PS mode, others)

Collective mode (no ``master`` replica type): the rendezvous is worker 0 and the port
that of the worker container's port named ``master`` (the default adds ``master: 36543``). PS mode: master 0
and the master's port. Roles are the replicated jobs named ``master`` and ``worker``;
host ``i`` of a role is ``<trainjob>-<role>-0-<i>.<subdomain>``.

One difference, from Trainer's layout, is written down in the conformance mapping: the
operator gives the rendezvous pod itself ``$(POD_IP_DUMMY):<port>`` (its own pod IP,
from a second env var), other pods ``<host>:<port>``. A JobSet renders one template for
every index of a job, so every pod here gets ``<host>:<port>``: the same address, by name.
"""

from __future__ import annotations

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

NAME = "paddlepaddle"
MASTER = "master"
WORKER = "worker"
ROLES = (MASTER, WORKER)
PORT_NAME = "master"  # PaddleJobDefaultPortName
DEFAULT_PORT = 36543


def paddle_envs(info: Info, job: TrainJobContext, role: str) -> list[JsonObject]:
    roles = {ps.name: ps for ps in info.pod_sets if ps.name in ROLES}
    total = sum(ps.count for ps in roles.values())
    rendezvous = roles.get(MASTER) or roles[WORKER]
    host = next(iter(rendezvous.endpoints()))
    envs: list[JsonObject] = [
        {"name": "PYTHONUNBUFFERED", "value": "1"},
        {"name": "PADDLE_JOB_ID", "value": job.name},
        {"name": "PADDLE_NNODES", "value": str(total)},
        {
            "name": "PADDLE_MASTER",
            "value": f"{host}:{node_port(rendezvous, PORT_NAME, DEFAULT_PORT)}",
        },
    ]
    if MASTER in roles:
        count_env = "PADDLE_SERVER_NUM" if role == MASTER else "PADDLE_TRAINER_NUM"
        envs.append({"name": count_env, "value": "1"})
    return envs


class PaddleExtension(ExtensionPlugin, EnforceMLPolicyPlugin):
    name = f"extension {NAME}"

    def enforce_ml_policy(self, info: Info, job: TrainJobContext) -> None:
        for pod_set in info.pod_sets:
            if pod_set.name not in ROLES:
                continue
            envs = paddle_envs(info, job, pod_set.name)
            for container in pod_set.containers:
                upsert.upsert_env(container.env, envs)
            node = pod_set.container(NODE)
            if node is not None:
                port = {
                    "name": PORT_NAME,
                    "containerPort": node_port(pod_set, PORT_NAME, DEFAULT_PORT),
                }
                upsert.upsert_ports(node.ports, [port])


def _check_runtime(spec: JsonObject, params: Parameters) -> list[str]:
    problems = []
    policy = spec.get("mlPolicy") or {}
    if any(policy.get(member) is not None for member in ("torch", "mpi", "jax")):
        problems.append(f"{NAME} needs a runtime without mlPolicy torch, mpi or jax")
    jobs = ((spec.get("template") or {}).get("spec") or {}).get("replicatedJobs") or []
    names = [j.get("name") for j in jobs]
    if WORKER not in names:
        problems.append(f"{NAME} needs a replicated job named worker")
    return problems + role_job_problems(NAME, (j for j in jobs if j.get("name") in ROLES))


EXTENSION = Extension(
    name=NAME,
    summary="PADDLE_* env and the master endpoint, as Training Operator v1.9.4's PaddleJob",
    plugin=lambda params: PaddleExtension(),
    check_runtime=_check_runtime,
)
