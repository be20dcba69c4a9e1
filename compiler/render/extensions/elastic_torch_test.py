"""Elastic PyTorch: Training Operator v1.9.4's elastic.go order and setElasticPolicy defaults."""

from __future__ import annotations

from compiler.render.extensions.elastic_torch import ElasticTorchExtension, elastic_envs, node_range
from compiler.render.framework import TrainJobContext
from compiler.render.info import Info, PodSet
from compiler.upstream.names import ANCESTOR_TRAINER


def test_one_bound_sets_both_none_takes_the_node_count() -> None:
    assert node_range({}, 3) == (3, 3)
    assert node_range({"min-nodes": 2}, 5) == (2, 2)
    assert node_range({"max-nodes": 4}, 1) == (4, 4)
    assert node_range({"min-nodes": 1, "max-nodes": 4}, 2) == (1, 4)


def test_env_in_the_operators_order() -> None:
    params = {"min-nodes": 1, "max-nodes": 3, "max-restarts": 2, "rdzv-id": "r", "rdzv-conf": "a=1"}
    assert elastic_envs(params, "j-node-0-0.j", 2) == [
        {"name": "PET_RDZV_ENDPOINT", "value": "j-node-0-0.j:29500"},
        {"name": "PET_RDZV_BACKEND", "value": "c10d"},
        {"name": "PET_NNODES", "value": "1:3"},
        {"name": "PET_MAX_RESTARTS", "value": "2"},
        {"name": "PET_RDZV_ID", "value": "r"},
        {"name": "PET_RDZV_CONF", "value": "a=1"},
    ]


def _validate(params: dict[str, object], num_nodes: int) -> list[str]:
    trainer = PodSet("node", ANCESTOR_TRAINER, num_nodes, [], [], [], {})
    info = Info({}, {}, {"torch": {}}, None, {}, [trainer])
    job = TrainJobContext({"metadata": {"name": "j"}, "spec": {"trainer": {"numNodes": num_nodes}}})
    return [f"{e.field}: {e.message}" for e in ElasticTorchExtension(params).validate(info, job)]


def test_num_nodes_must_lie_in_the_range() -> None:
    assert _validate({"min-nodes": 2, "max-nodes": 4}, 3) == []
    assert _validate({"min-nodes": 2, "max-nodes": 4}, 5) == [
        "spec.trainer.numNodes: extension elastic-torch: must be within [2, 4] "
        "(min-nodes, max-nodes)"
    ]
