"""Elastic PyTorch (``elastic-torch``): torchrun's rendezvous env, as Training Operator v1.9.4.

Trainer v2 dropped v1's ``elasticPolicy``. The PyTorchJob controller
(``pkg/controller.v1/pytorch/elastic.go``: ``ElasticEnvVarGenerator.Generate``; the
defaults of ``pytorch_defaults.go``: ``setElasticPolicy``) gives every worker of an
elastic job, in this order::

    PET_RDZV_ENDPOINT  <job>-worker-0:<port>        (rdzvHost/rdzvPort override)
    PET_RDZV_BACKEND   c10d                         (rdzvBackend)
    PET_NNODES         <minReplicas>:<maxReplicas>  (one given: both; none: the worker count)
    PET_MAX_RESTARTS   <maxRestarts>                (when set)
    PET_RDZV_ID        <rdzvId>                     (when set)
    PET_RDZV_CONF      k1=v1,k2=v2                  (when set)

and no ``PET_NODE_RANK``/``PET_MASTER_ADDR``/``PET_MASTER_PORT`` (an elastic job has no
master; ranks come from the rendezvous). This extension applies that on top of upstream's
Torch plugin (which keeps ``PET_NPROC_PER_NODE`` and the port 29500): it drops the three
static variables and upserts the six. Mapped onto Trainer's layout: the operator's
``<job>-worker-0`` is the first pod of the trainer job, ``<trainjob>-node-0-0.<subdomain>``;
its worker port (``pytorchjob-port``) is Trainer's torch port 29500 unless ``rdzv-port``
says otherwise. The JobSet keeps completions = parallelism = ``numNodes``, which must lie
in ``[min-nodes, max-nodes]`` (checked as an admission error on the TrainJob).
"""

from __future__ import annotations

from compiler.errors import FieldError
from compiler.render import upsert
from compiler.render.extensions.base import (
    Extension,
    ExtensionPlugin,
    Parameter,
    Parameters,
    choice,
    integer,
    text,
)
from compiler.render.framework import CustomValidationPlugin, EnforceMLPolicyPlugin, TrainJobContext
from compiler.render.info import Info, JsonObject
from compiler.render.plugins.torch import PET_MASTER_ADDR, PET_MASTER_PORT, PET_NODE_RANK
from compiler.render.plugins.torchtune import CONTAINER_TRAINER_PORT
from compiler.upstream.names import ANCESTOR_TRAINER, LABEL_ANCESTOR, NODE

NAME = "elastic-torch"
STATIC_ENV_NAMES = frozenset({PET_NODE_RANK, PET_MASTER_ADDR, PET_MASTER_PORT})
BACKENDS = ("c10d", "etcd", "etcd-v2")


def _rdzv_conf(value: str) -> object:
    for pair in value.split(","):
        key, sep, _ = pair.partition("=")
        if not sep or not key:
            raise ValueError(f"{pair!r} is not key=value (pairs separated by commas)")
    return value


PARAMETERS = (
    Parameter("min-nodes", integer(1), "fewest nodes to keep training (minReplicas)"),
    Parameter("max-nodes", integer(1), "most nodes (maxReplicas)"),
    Parameter("max-restarts", integer(0), "torchrun restarts of the worker group"),
    Parameter("rdzv-backend", choice(*BACKENDS), "rendezvous backend (default c10d)"),
    Parameter("rdzv-port", integer(1, 65535), "rendezvous port (default 29500)"),
    Parameter("rdzv-id", text, "rendezvous id"),
    Parameter("rdzv-conf", _rdzv_conf, "extra rendezvous config, k1=v1,k2=v2"),
)


def node_range(params: Parameters, count: int) -> tuple[int, int]:
    """``setElasticPolicy``: one bound given sets both; none, the node count."""
    low = params.get("min-nodes")
    high = params.get("max-nodes")
    if low is None and high is None:
        return count, count
    low = high if low is None else low
    high = low if high is None else high
    assert isinstance(low, int) and isinstance(high, int)
    return low, high


def elastic_envs(params: Parameters, host: str, count: int) -> list[JsonObject]:
    port = params.get("rdzv-port", CONTAINER_TRAINER_PORT)
    low, high = node_range(params, count)
    envs: list[JsonObject] = [
        {"name": "PET_RDZV_ENDPOINT", "value": f"{host}:{port}"},
        {"name": "PET_RDZV_BACKEND", "value": str(params.get("rdzv-backend", "c10d"))},
        {"name": "PET_NNODES", "value": f"{low}:{high}"},
    ]
    for parameter, env in (
        ("max-restarts", "PET_MAX_RESTARTS"),
        ("rdzv-id", "PET_RDZV_ID"),
        ("rdzv-conf", "PET_RDZV_CONF"),
    ):
        if parameter in params:
            envs.append({"name": env, "value": str(params[parameter])})
    return envs


class ElasticTorchExtension(ExtensionPlugin, EnforceMLPolicyPlugin, CustomValidationPlugin):
    name = f"extension {NAME}"

    def __init__(self, params: Parameters) -> None:
        self.params = dict(params)

    def enforce_ml_policy(self, info: Info, job: TrainJobContext) -> None:
        pod_set = info.pod_set_by_ancestor(ANCESTOR_TRAINER)
        container = info.container_by_ancestor(ANCESTOR_TRAINER, NODE)
        if pod_set is None or container is None or job.trainer is None:
            return
        host = next(iter(pod_set.endpoints()))
        container.env[:] = [e for e in container.env if e.get("name") not in STATIC_ENV_NAMES]
        upsert.upsert_env(container.env, elastic_envs(self.params, host, pod_set.count))

    def validate(self, info: Info, job: TrainJobContext) -> list[FieldError]:
        """numNodes within [min-nodes, max-nodes], located at the TrainJob's numNodes."""
        pod_set = info.pod_set_by_ancestor(ANCESTOR_TRAINER)
        trainer = job.trainer or {}
        if pod_set is None:
            return []
        count = trainer.get("numNodes", pod_set.count)
        low, high = node_range(self.params, count)
        if low > high:
            message = f"extension {NAME}: min-nodes {low} is above max-nodes {high}"
            return [FieldError("FieldValueInvalid", "spec.runtimeRef", message, low)]
        if not low <= count <= high:
            message = f"extension {NAME}: must be within [{low}, {high}] (min-nodes, max-nodes)"
            return [FieldError("FieldValueInvalid", "spec.trainer.numNodes", message, count)]
        return []


def _is_trainer(rjob: JsonObject) -> bool:
    labels = ((rjob.get("template") or {}).get("metadata") or {}).get("labels") or {}
    return bool(labels.get(LABEL_ANCESTOR) == ANCESTOR_TRAINER)


def _check_runtime(spec: JsonObject, params: Parameters) -> list[str]:
    problems = []
    if ((spec.get("mlPolicy") or {}).get("torch")) is None:
        problems.append(f"{NAME} needs the runtime's mlPolicy.torch")
    jobs = ((spec.get("template") or {}).get("spec") or {}).get("replicatedJobs") or []
    if not any(_is_trainer(rjob) for rjob in jobs):
        # v1's webhook: the Worker replica spec must be configured for an elastic policy
        problems.append(f"{NAME} needs a trainer job (label {LABEL_ANCESTOR}: trainer)")
    low, high = params.get("min-nodes"), params.get("max-nodes")
    if isinstance(low, int) and isinstance(high, int) and low > high:
        problems.append(f"{NAME}: min-nodes {low} is above max-nodes {high}")
    return problems


EXTENSION = Extension(
    name=NAME,
    summary="torchrun rendezvous env (PET_RDZV_*, PET_NNODES=min:max), as v1.9.4's PyTorchJob",
    plugin=ElasticTorchExtension,
    parameters=PARAMETERS,
    check_runtime=_check_runtime,
)
