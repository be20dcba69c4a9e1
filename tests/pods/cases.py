"""The JobSets of the pods oracle comparison: every golden case's, and mutated ones.

Each golden case that the newest Trainer accepts has its rendered JobSet in
``golden/<case>/expected.yaml``. The mutations start from ``torch-defaults`` (and
``custom-extra-jobs-subdomain`` for several replicated jobs) and reach every rule
family of the JobSet webhooks, the JobSet controller, the Job controller and the API
server's defaults that the goldens do not: names of 48, 49 and 63 characters, bad
subdomains, group names, dangling ``dependsOn``/``successPolicy``/``failurePolicy``
references, rule names, coordinators, exclusive placement, suspension, NonIndexed
Jobs, more completions than parallelism, managedBy, volume sources, probes, limits
without requests, an image without a tag.
"""

from __future__ import annotations

import copy
import functools
import json
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import yaml

GOLDEN = Path(__file__).resolve().parents[2] / "golden"

Mutation = Callable[[dict[str, Any]], None]


def golden_jobsets() -> Iterator[tuple[str, dict[str, Any]]]:
    """(case, JobSet) for every golden case with a JobSet in its newest expectation (each
    a fresh copy: callers change them)."""
    for case, text in _golden_documents():
        yield case, json.loads(text)


@functools.cache
def _golden_documents() -> tuple[tuple[str, str], ...]:
    """The golden JobSets as JSON, read once: the YAML parser is most of these tests' time."""
    found: list[tuple[str, str]] = []
    for expected in sorted(GOLDEN.glob("*/expected.yaml")):
        for document in yaml.safe_load_all(expected.read_text()):
            if isinstance(document, dict) and document.get("kind") == "JobSet":
                found.append((expected.parent.name, json.dumps(document)))
    return tuple(found)


def _golden(case: str) -> dict[str, Any]:
    return next(js for name, js in golden_jobsets() if name == case)


def _rjob(js: dict[str, Any], name: str = "node") -> dict[str, Any]:
    return next(r for r in js["spec"]["replicatedJobs"] if r["name"] == name)


def _pod(js: dict[str, Any], name: str = "node") -> dict[str, Any]:
    spec: dict[str, Any] = _rjob(js, name)["template"]["spec"]["template"]["spec"]
    return spec


def _container(js: dict[str, Any]) -> dict[str, Any]:
    container: dict[str, Any] = _pod(js)["containers"][0]
    return container


def _name(length: int) -> Mutation:
    def mutate(js: dict[str, Any]) -> None:
        js["metadata"]["name"] = ("t" + "x" * 80)[:length]

    return mutate


def _set(path: tuple[Any, ...], value: Any) -> Mutation:
    def mutate(js: dict[str, Any]) -> None:
        node = js
        for part in path[:-1]:
            node = node.setdefault(part, {}) if isinstance(part, str) else node[part]
        node[path[-1]] = copy.deepcopy(value)

    return mutate


def _apply(fn: Callable[[dict[str, Any]], Any]) -> Mutation:
    def mutate(js: dict[str, Any]) -> None:
        fn(js)

    return mutate


MUTATIONS: dict[str, tuple[str, Mutation]] = {
    "name-48": ("torch-defaults", _name(48)),
    "name-49": ("torch-defaults", _name(49)),
    "name-63": ("torch-defaults", _name(63)),
    "name-56-many-replicas": (
        "custom-extra-jobs-subdomain",
        _name(50),
    ),
    "subdomain-invalid": ("torch-defaults", _set(("spec", "network", "subdomain"), "Bad_Sub")),
    "subdomain-dots": ("torch-defaults", _set(("spec", "network", "subdomain"), "a.b")),
    "subdomain-too-long": ("torch-defaults", _set(("spec", "network", "subdomain"), "s" * 70)),
    "dns-off": ("torch-defaults", _set(("spec", "network", "enableDNSHostnames"), False)),
    "publish-not-ready-off": (
        "torch-defaults",
        _set(("spec", "network", "publishNotReadyAddresses"), False),
    ),
    "group-name-bad": ("torch-defaults", _apply(lambda js: _rjob(js).update(groupName="G_1"))),
    "group-name-long": ("torch-defaults", _apply(lambda js: _rjob(js).update(groupName="g" * 64))),
    "group-two": (
        "custom-extra-jobs-subdomain",
        _apply(lambda js: _rjob(js, "evaluator").update(groupName="eval")),
    ),
    "depends-on-first": (
        "custom-extra-jobs-subdomain",
        _apply(
            lambda js: js["spec"]["replicatedJobs"][0].update(
                dependsOn=[{"name": "node", "status": "Ready"}]
            )
        ),
    ),
    "depends-on-dangling": (
        "custom-extra-jobs-subdomain",
        _apply(lambda js: _rjob(js).update(dependsOn=[{"name": "nope", "status": "Complete"}])),
    ),
    "depends-on-later": (
        "custom-extra-jobs-subdomain",
        _apply(lambda js: _rjob(js).update(dependsOn=[{"name": "evaluator", "status": "Ready"}])),
    ),
    "depends-on-ok": (
        "custom-extra-jobs-subdomain",
        _apply(
            lambda js: _rjob(js).update(dependsOn=[{"name": "param-server", "status": "Ready"}])
        ),
    ),
    "success-policy-dangling": (
        "torch-defaults",
        _set(("spec", "successPolicy"), {"operator": "Any", "targetReplicatedJobs": ["ghost"]}),
    ),
    "failure-policy-rules": (
        "torch-defaults",
        _set(
            ("spec", "failurePolicy"),
            {
                "maxRestarts": 2,
                "rules": [
                    {"action": "FailJobSet", "targetReplicatedJobs": ["ghost"]},
                    {"name": "9bad", "action": "RestartJobSet", "onJobFailureReasons": ["Nope"]},
                    {"name": "dup", "action": "FailJobSet"},
                    {"name": "dup", "action": "RestartJobSetAndIgnoreMaxRestarts"},
                ],
            },
        ),
    ),
    "failure-policy-named": (
        "torch-defaults",
        _set(
            ("spec", "failurePolicy"),
            {"rules": [{"action": "FailJobSet", "onJobFailureReasons": ["PodFailurePolicy"]}]},
        ),
    ),
    "failure-policy-restart-job": (
        "torch-defaults",
        _set(("spec", "failurePolicy"), {"rules": [{"name": "r", "action": "RestartJob"}]}),
    ),
    "in-place-restart": (
        "torch-defaults",
        _set(("spec", "failurePolicy"), {"restartStrategy": "InPlaceRestart"}),
    ),
    "coordinator-ok": (
        "torch-defaults",
        _set(("spec", "coordinator"), {"replicatedJob": "node", "jobIndex": 0, "podIndex": 0}),
    ),
    "coordinator-missing-job": (
        "torch-defaults",
        _set(("spec", "coordinator"), {"replicatedJob": "ghost"}),
    ),
    "coordinator-bad-pod": (
        "torch-defaults",
        _set(("spec", "coordinator"), {"replicatedJob": "node", "podIndex": 7}),
    ),
    "managed-by-bad": ("torch-defaults", _set(("spec", "managedBy"), "not-a-path")),
    "suspended": ("torch-defaults", _set(("spec", "suspend"), True)),
    "non-indexed": (
        "torch-defaults",
        _apply(
            lambda js: _rjob(js)["template"]["spec"].update(
                completionMode="NonIndexed", completions=3, parallelism=2
            )
        ),
    ),
    "completions-over-parallelism": (
        "torch-defaults",
        _apply(lambda js: _rjob(js)["template"]["spec"].update(completions=5, parallelism=2)),
    ),
    "restart-policy-never": (
        "torch-defaults",
        _apply(lambda js: _pod(js).update(restartPolicy="Never")),
    ),
    "exclusive-placement": (
        "custom-extra-jobs-subdomain",
        _set(
            ("metadata", "annotations"),
            {"alpha.jobset.sigs.k8s.io/exclusive-topology": "cloud.google.com/gke-nodepool"},
        ),
    ),
    "exclusive-node-selector": (
        "torch-defaults",
        _apply(
            lambda js: (
                _rjob(js)["template"]
                .setdefault("metadata", {})
                .update(
                    annotations={
                        "alpha.jobset.sigs.k8s.io/exclusive-topology": "rack",
                        "alpha.jobset.sigs.k8s.io/node-selector": "true",
                    }
                )
            )
        ),
    ),
    "template-labels-annotations": (
        "torch-defaults",
        _apply(
            lambda js: (
                _rjob(js)["template"]
                .setdefault("metadata", {})
                .update(labels={"team": "a"}, annotations={"note": "x"})
            )
        ),
    ),
    "pod-finalizers-labels": (
        "torch-defaults",
        _apply(
            lambda js: (
                _rjob(js)["template"]["spec"]["template"]
                .setdefault("metadata", {})
                .update(labels={"app": "train"}, finalizers=["example.com/keep"])
            )
        ),
    ),
    "limits-only": (
        "torch-defaults",
        _apply(
            lambda js: _container(js).update(resources={"limits": {"cpu": "2", "memory": "1Gi"}})
        ),
    ),
    "image-untagged": ("torch-defaults", _apply(lambda js: _container(js).update(image="busybox"))),
    "image-latest-digest": (
        "torch-defaults",
        _apply(lambda js: _container(js).update(image="reg.io:5000/a/b@sha256:" + "ab" * 32)),
    ),
    "probes-lifecycle": (
        "torch-defaults",
        _apply(
            lambda js: _container(js).update(
                livenessProbe={"httpGet": {"port": 8080}},
                readinessProbe={"grpc": {"port": 9000}, "periodSeconds": 5},
                startupProbe={"exec": {"command": ["true"]}},
                lifecycle={"preStop": {"httpGet": {"port": 80, "path": "/stop"}}},
                ports=[{"containerPort": 8080, "name": "http"}],
                env=[{"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
            )
        ),
    ),
    "volumes": (
        "torch-defaults",
        _apply(
            lambda js: _pod(js).update(
                volumes=[
                    {"name": "scratch"},
                    {"name": "cfg", "configMap": {"name": "c"}},
                    {"name": "sec", "secret": {"secretName": "s"}},
                    {"name": "host", "hostPath": {"path": "/data"}},
                    {
                        "name": "info",
                        "downwardAPI": {
                            "items": [{"path": "l", "fieldRef": {"fieldPath": "metadata.labels"}}]
                        },
                    },
                    {
                        "name": "proj",
                        "projected": {"sources": [{"serviceAccountToken": {"path": "t"}}]},
                    },
                    {
                        "name": "eph",
                        "ephemeral": {
                            "volumeClaimTemplate": {
                                "spec": {
                                    "accessModes": ["ReadWriteOnce"],
                                    "resources": {"requests": {"storage": "1Gi"}},
                                }
                            }
                        },
                    },
                ]
            )
        ),
    ),
    "pod-failure-policy": (
        "torch-defaults",
        _apply(
            lambda js: _rjob(js)["template"]["spec"].update(
                podFailurePolicy={
                    "rules": [
                        {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}
                    ]
                }
            )
        ),
    ),
    "backoff-per-index": (
        "torch-defaults",
        _apply(lambda js: _rjob(js)["template"]["spec"].update(backoffLimitPerIndex=1)),
    ),
    "init-container-env": (
        "torch-defaults",
        _apply(
            lambda js: _pod(js).update(
                initContainers=[
                    {
                        "name": "init",
                        "image": "busybox:1",
                        "env": [{"name": "JOB_COMPLETION_INDEX", "value": "kept"}],
                    }
                ]
            )
        ),
    ),
    "host-network": ("torch-defaults", _apply(lambda js: _pod(js).update(hostNetwork=True))),
}


def mutated_jobsets() -> Iterator[tuple[str, dict[str, Any]]]:
    """(mutation, JobSet) for each of :data:`MUTATIONS`."""
    for name, (base, mutate) in MUTATIONS.items():
        jobset = copy.deepcopy(_golden(base))
        mutate(jobset)
        yield f"mutated:{name}", jobset


_IMAGES = ("busybox", "acme/x:1.0", "reg.io:5000/a/b:latest", "x@sha256:" + "c" * 64, "Bad/Image")
_RULE_NAMES = ("", "ok", "ok", "9bad", "a:b", "x" * 130)
_REASONS = ("PodFailurePolicy", "BackoffLimitExceeded", "Nope")


def _random_container(rng: random.Random, index: int) -> dict[str, Any]:
    container: dict[str, Any] = {"name": f"c{index}", "image": rng.choice(_IMAGES)}
    if rng.random() < 0.5:
        container["ports"] = [
            {"containerPort": 1000 + i, **({"name": f"p{i}"} if rng.random() < 0.5 else {})}
            for i in range(rng.randint(1, 3))
        ]
    if rng.random() < 0.5:
        limits = {"cpu": rng.choice(["1", "500m", "2"]), "memory": "1Gi"}
        container["resources"] = (
            {"limits": limits}
            if rng.random() < 0.5
            else {"requests": {"cpu": "1"}, "limits": limits}
        )
    if rng.random() < 0.4:
        container["env"] = [
            {"name": "A", "value": rng.choice(["", "x"])},
            {"name": "B", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
        ]
    if rng.random() < 0.3:
        container["readinessProbe"] = rng.choice(
            [{"httpGet": {"port": 80}}, {"tcpSocket": {"port": 80}}, {"grpc": {"port": 90}}]
        )
    if rng.random() < 0.3:
        container["volumeMounts"] = [{"name": "data", "mountPath": "/data"}]
    return container


def _random_rjob(rng: random.Random, name: str) -> dict[str, Any]:
    completions = rng.randint(1, 4)
    job_spec: dict[str, Any] = {
        "completions": completions,
        "parallelism": rng.choice([completions, 1, completions + 1]),
        "template": {
            "spec": {"containers": [_random_container(rng, i) for i in range(rng.randint(1, 2))]}
        },
    }
    pod_spec = job_spec["template"]["spec"]
    if rng.random() < 0.3:
        job_spec["completionMode"] = rng.choice(["Indexed", "NonIndexed"])
    if rng.random() < 0.3:
        pod_spec["restartPolicy"] = rng.choice(["Never", "OnFailure"])
    if rng.random() < 0.3:
        pod_spec["volumes"] = [
            rng.choice([{"name": "data"}, {"name": "data", "configMap": {"name": "c"}}])
        ]
    if rng.random() < 0.2:
        pod_spec["tolerations"] = [{"key": "", "operator": "Exists", "effect": "NoExecute"}]
    if rng.random() < 0.2:
        pod_spec["priorityClassName"] = rng.choice(
            ["system-node-critical", "system-cluster-critical"]
        )
    if rng.random() < 0.2:
        pod_spec["automountServiceAccountToken"] = False
    if rng.random() < 0.2:
        pod_spec["serviceAccountName"] = "runner"
    rjob: dict[str, Any] = {
        "name": name,
        "groupName": rng.choice(["default"] * 6 + ["g2", "G_bad"]),
        "replicas": rng.randint(1, 3),
        "template": {"spec": job_spec},
    }
    if rng.random() < 0.3:
        rjob["template"]["metadata"] = {"labels": {"team": "a"}, "annotations": {"n": "1"}}
    return rjob


def random_jobsets(seed: int, count: int) -> Iterator[tuple[str, dict[str, Any]]]:
    """``count`` random JobSets (a fixed ``seed``): names of 1 to 63 characters, one to
    three replicated jobs, random pod templates, network, policies and references."""
    rng = random.Random(seed)
    for number in range(count):
        names = rng.sample(
            ["node", "launcher", "dataset-initializer", "ps", "w"], rng.randint(1, 3)
        )
        spec: dict[str, Any] = {"replicatedJobs": [_random_rjob(rng, n) for n in names]}
        if rng.random() < 0.3:
            spec["network"] = {
                "subdomain": rng.choice(["net", "net", "net", "a.b", "Bad", "s" * 64]),
                **({"enableDNSHostnames": False} if rng.random() < 0.3 else {}),
            }
        if rng.random() < 0.3:
            spec["successPolicy"] = {
                "operator": "All",
                "targetReplicatedJobs": [rng.choice([*names, *names, "ghost"])],
            }
        if rng.random() < 0.3:
            spec["failurePolicy"] = {
                "rules": [
                    {
                        "name": rng.choice(_RULE_NAMES) if rng.random() < 0.4 else "",
                        "action": "FailJobSet",
                        "onJobFailureReasons": [rng.choice(_REASONS[:2] * 3 + _REASONS[2:])],
                        "targetReplicatedJobs": [rng.choice([*names, *names, "ghost"])],
                    }
                    for _ in range(rng.randint(1, 2))
                ]
            }
        if rng.random() < 0.2 and len(names) > 1:
            spec["replicatedJobs"][-1]["dependsOn"] = [
                {"name": rng.choice([*names[:-1], *names[:-1], "ghost"]), "status": "Ready"}
            ]
        if rng.random() < 0.2:
            spec["suspend"] = True
        annotations = {}
        if rng.random() < 0.15:
            annotations["alpha.jobset.sigs.k8s.io/exclusive-topology"] = "rack"
        jobset = {
            "apiVersion": "jobset.x-k8s.io/v1alpha2",
            "kind": "JobSet",
            "metadata": {
                "name": ("j" + "x" * 70)[: rng.choice([1, 5, 20, 30, 40, 45, 48, 49, 63])],
                "namespace": rng.choice(["default", "research"]),
                **({"annotations": annotations} if annotations else {}),
            },
            "spec": spec,
        }
        yield f"random:{seed}:{number}", jobset
