"""Malformed queue setups: every mutation of a seeded queue setup (ClusterQueues, Cohorts,
flavors, LocalQueues, LimitRanges, RuntimeClasses, Kueue's Configuration) gives problems
or a verdict, never a traceback."""

from __future__ import annotations

import copy
import random
from typing import Any

from compiler.apiserver.manifest import Manifest, SourceMap
from compiler.queue.objects import queue_setup
from compiler.queue.verdict import QueuedJob, queue_problems
from compiler.queue.workload import jobset_workload
from tests.kueue.fuzz import random_podsets, random_setup

VALUES: list[Any] = [None, 1, -1, "x", "1e100", [], {}, {"a": 1}, True, 1.5, "9Ti"]
EXTRA: list[dict[str, Any]] = [
    {
        "apiVersion": "v1",
        "kind": "LimitRange",
        "metadata": {"name": "l", "namespace": "team"},
        "spec": {"limits": [{"type": "Container", "default": {"cpu": "1"}}]},
    },
    {
        "apiVersion": "node.k8s.io/v1",
        "kind": "RuntimeClass",
        "metadata": {"name": "kata"},
        "handler": "kata",
        "overhead": {"podFixed": {"cpu": "1"}},
    },
    {
        "apiVersion": "config.kueue.x-k8s.io/v1beta2",
        "kind": "Configuration",
        "resources": {
            "excludeResourcePrefixes": ["a/"],
            "transformations": [{"input": "cpu", "outputs": {"x": "1"}}],
        },
    },
    {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"name": "research", "namespace": "team"},
        "spec": {"clusterQueue": "q0"},
    },
]


def _mutate(rng: random.Random, node: Any) -> None:
    """One leaf or subtree of ``node`` replaced by a value of another type."""
    paths: list[tuple[Any, ...]] = []

    def walk(value: Any, path: tuple[Any, ...]) -> None:
        paths.append(path)
        if isinstance(value, dict):
            for key, item in value.items():
                walk(item, (*path, key))
        elif isinstance(value, list):
            for index, item in enumerate(value):
                walk(item, (*path, index))

    walk(node, ())
    if len(paths) < 2:
        return
    path = rng.choice(paths[1:])
    parent = node
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = copy.deepcopy(rng.choice(VALUES))


def test_mutated_queue_setups_never_raise() -> None:
    rng = random.Random(20261127)
    job = Manifest(
        {
            "kind": "TrainJob",
            "metadata": {
                "name": "llm",
                "namespace": "team",
                "labels": {"kueue.x-k8s.io/queue-name": "research"},
            },
        },
        SourceMap("job.yaml", {}),
    )
    refused = 0
    for _ in range(400):
        objects, _queue = random_setup(rng)
        objects += copy.deepcopy(EXTRA)
        for _ in range(rng.randint(1, 3)):
            _mutate(rng, rng.choice(objects))
        setup, problems = queue_setup([Manifest(o, SourceMap("q.yaml", {})) for o in objects])
        refused += bool(problems)
        jobs = [
            {
                "name": p["name"],
                "replicas": 1,
                "template": {"spec": {"parallelism": p["count"], "template": p["template"]}},
            }
            for p in random_podsets(rng)
        ]
        jobset = {"metadata": {"namespace": "team"}, "spec": {"replicatedJobs": jobs}}
        workload = jobset_workload(jobset, setup)
        queue_problems([QueuedJob(job, workload)], setup, {"team": {}})
    assert 0 < refused < 400
