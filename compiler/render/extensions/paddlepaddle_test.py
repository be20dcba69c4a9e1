"""PaddlePaddle: setPodEnv of Training Operator v1.9.4 (collective and PS modes)."""

from __future__ import annotations

from compiler.render.extensions.paddlepaddle import PaddleExtension
from compiler.render.framework import TrainJobContext
from compiler.render.info import Info, PodSet, PodSetContainer


def role(name: str, count: int) -> PodSet:
    containers = [PodSetContainer(name="node"), PodSetContainer(name="sidecar")]
    return PodSet(name, None, count, containers, [], [], {}, subdomain="p", trainjob_name="p")


def envs(info: Info, index: int, container: int = 0) -> dict[str, str]:
    return {e["name"]: e["value"] for e in info.pod_sets[index].containers[container].env}


def test_collective_mode_rendezvous_is_worker_zero_on_every_container() -> None:
    info = Info({}, {}, None, None, {}, [role("worker", 3)])
    PaddleExtension().enforce_ml_policy(info, TrainJobContext({"metadata": {"name": "p"}}))
    expected = {
        "PYTHONUNBUFFERED": "1",
        "PADDLE_JOB_ID": "p",
        "PADDLE_NNODES": "3",
        "PADDLE_MASTER": "p-worker-0-0.p:36543",
    }
    assert envs(info, 0) == expected
    assert envs(info, 0, container=1) == expected
    assert info.pod_sets[0].containers[0].ports == [{"name": "master", "containerPort": 36543}]


def test_ps_mode_counts_servers_and_trainers() -> None:
    info = Info({}, {}, None, None, {}, [role("master", 1), role("worker", 2)])
    PaddleExtension().enforce_ml_policy(info, TrainJobContext({"metadata": {"name": "p"}}))
    assert envs(info, 0)["PADDLE_SERVER_NUM"] == "1"
    assert envs(info, 1)["PADDLE_TRAINER_NUM"] == "1"
    assert envs(info, 1)["PADDLE_MASTER"] == "p-master-0-0.p:36543"
    assert envs(info, 1)["PADDLE_NNODES"] == "3"
