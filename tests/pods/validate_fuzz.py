"""Differential fuzz of trainc's Job and Pod validation against kube-apiserver v1.34.4's.

Each case is a Job as the JobSet controller creates it, or a Pod as the Job controller
creates it (four in ten made from a golden case's JobSet: its real pod templates), with
up to three mutations drawn from every rule family
``compiler.apiserver.workloads`` emulates (containers, ports, env, resources, volumes and
mounts, probes and handlers, affinity, tolerations, node selector, security context,
restart and DNS policy, names, the batch Job rules). Both sides judge it: trainc, and
``tests/pods/validate/bin/validate``, which runs the API server's own create path.

A case agrees when both accept it, or both refuse it with the same message. Go lists
the errors of one map (labels, resource lists) in random order, so two messages that
hold the same errors in another order agree.

    python -m tests.pods.validate_fuzz --count 10000 [--seed 1] [--out DIR]

closes with ``conformance-pods: N cases, D verdict differences, M message differences``
and writes each difference to ``DIR`` (default ``conformance-out/pods``).
"""

from __future__ import annotations

import argparse
import copy
import functools
import json
import random
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from compiler.apiserver.workloads import ServerPanic, invalid_message, validate_job, validate_pod
from compiler.expand.apiserver import prepare_pod
from tests.go_oracle import JsonLinesOracle

HARNESS_DIR = Path(__file__).parent / "validate"
# built on demand into HARNESS_DIR/bin/validate, as `make pods-validate-oracle` does
ORACLE = JsonLinesOracle("pods validate", HARNESS_DIR, "validate")
ROOT = Path(__file__).resolve().parents[2]

Obj = dict[str, Any]
Mutation = Callable[[random.Random, Obj, str], None]

# --- the starting points: what the controllers create


def base_job(rng: random.Random) -> Obj:
    """A Job as the JobSet controller makes it for one replicated-job replica."""
    replicas = rng.choice([1, 2, 4])
    name = rng.choice(["llm-node-0", "train-trainer-node-0", "t-launcher-0"])
    labels = {
        "jobset.sigs.k8s.io/jobset-name": name.rsplit("-", 2)[0],
        "jobset.sigs.k8s.io/replicatedjob-name": "node",
        "jobset.sigs.k8s.io/job-index": "0",
        "trainer.kubeflow.org/trainjob-ancestor-step": "trainer",
    }
    return {
        "metadata": {"name": name, "namespace": "default", "labels": dict(labels)},
        "spec": {
            "parallelism": replicas,
            "completions": replicas,
            "backoffLimit": 0,
            "completionMode": "Indexed",
            "template": {
                "metadata": {
                    "labels": dict(labels),
                    "annotations": {"jobset.sigs.k8s.io/jobset-name": "llm"},
                },
                "spec": _pod_spec(rng, "OnFailure"),
            },
        },
    }


def base_pod(rng: random.Random) -> Obj:
    """A Pod as the Job controller makes it for one index of an Indexed Job."""
    job = rng.choice(["llm-node-0", "train-trainer-node-0"])
    index = rng.choice([0, 1, 3])
    spec = _pod_spec(rng, rng.choice(["OnFailure", "Never"]))
    spec["hostname"] = f"{job}-{index}"
    spec["subdomain"] = "llm"
    meta: Obj = {
        "namespace": "default",
        "labels": {
            "batch.kubernetes.io/job-name": job,
            "batch.kubernetes.io/job-completion-index": str(index),
        },
        "annotations": {"batch.kubernetes.io/job-completion-index": str(index)},
    }
    if rng.random() < 0.5:
        meta["generateName"] = f"{job}-{index}-"
    else:
        meta["name"] = f"{job}-{index}-abcde"
    return {"metadata": meta, "spec": spec}


@functools.cache
def golden_templates() -> tuple[tuple[str, str], ...]:
    """(name, Job template as JSON) of every replicated job of every golden JobSet: real
    pod templates (MPI launchers, initializers, sidecars, env from fields) to mutate."""
    found: list[tuple[str, str]] = []
    for expected in sorted((ROOT / "golden").glob("*/expected.yaml")):
        for doc in yaml.safe_load_all(expected.read_text(encoding="utf-8")):
            if not isinstance(doc, dict) or doc.get("kind") != "JobSet":
                continue
            jobset = str((doc.get("metadata") or {}).get("name") or "js")
            for rjob in (doc.get("spec") or {}).get("replicatedJobs") or []:
                name = f"{jobset}-{rjob.get('name')}-0"[:63]
                found.append((name, json.dumps(rjob.get("template") or {})))
    return tuple(found)


def golden_job(rng: random.Random) -> Obj:
    """A Job made from a golden JobSet's replicated job, roughly as its controller would."""
    name, template = rng.choice(golden_templates())
    job: Obj = {"metadata": {"name": name, "namespace": "default"}, "spec": json.loads(template)}
    pod_template = job["spec"].setdefault("template", {})
    pod_template.setdefault("metadata", {}).setdefault("labels", {})[
        "jobset.sigs.k8s.io/jobset-name"
    ] = "js"
    pod_template.setdefault("spec", {}).setdefault("restartPolicy", "OnFailure")
    pod_template["spec"].setdefault("containers", [])
    job["spec"].setdefault("completionMode", "Indexed")
    job["spec"].setdefault("completions", job["spec"].get("parallelism", 1))
    return job


def golden_pod(rng: random.Random) -> Obj:
    job = golden_job(rng)
    spec = job["spec"]["template"]["spec"]
    meta = {"name": job["metadata"]["name"] + "-0-abcde", "namespace": "default"}
    return {"metadata": meta, "spec": spec}


def _pod_spec(rng: random.Random, restart: str) -> Obj:
    container: Obj = {
        "name": "node",
        "image": rng.choice(
            ["pytorch/pytorch:2.7.1", "ghcr.io/kubeflow/trainer/torch:latest", "busybox"]
        ),
        "command": ["torchrun", "train.py"],
        "env": [
            {"name": "PET_NNODES", "value": "2"},
            {
                "name": "JOB_COMPLETION_INDEX",
                "valueFrom": {
                    "fieldRef": {
                        "fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"
                    }
                },
            },
        ],
        "ports": [{"containerPort": 29400}],
        "resources": {
            "requests": {"cpu": "2", "memory": "4Gi"},
            "limits": {"cpu": "4", "memory": "4Gi", "nvidia.com/gpu": 1},
        },
        "volumeMounts": [{"name": "data", "mountPath": "/data"}],
    }
    spec: Obj = {
        "restartPolicy": restart,
        "containers": [container],
        "volumes": [{"name": "data", "emptyDir": {}}],
    }
    if rng.random() < 0.3:
        spec["initContainers"] = [{"name": "init", "image": "busybox", "command": ["true"]}]
    if rng.random() < 0.3:
        spec["subdomain"] = "llm"
    return spec


# --- helpers for mutations


def _spec(obj: Obj, kind: str) -> Obj:
    spec: Obj = obj["spec"]["template"]["spec"] if kind == "Job" else obj["spec"]
    return spec


def _container(rng: random.Random, obj: Obj, kind: str) -> Obj:
    spec = _spec(obj, kind)
    pool = list(spec["containers"]) + list(spec.get("initContainers") or [])
    if not pool:  # an earlier mutation emptied the list
        spec["containers"].append({"name": "node", "image": "busybox"})
        pool = spec["containers"]
    chosen: Obj = rng.choice(pool)
    return chosen


def _pick(rng: random.Random, values: list[Any]) -> Any:
    return copy.deepcopy(rng.choice(values))


BAD_NAMES = [
    "Node",
    "node_1",
    "-node",
    "node-",
    "a.b",
    "",
    "x" * 64,
    "nödé",
    "1abc",
    "a b",
    'a"b',
    "<x>",
    "x" * 63,
]
BAD_LABEL_KEYS = ["a/b/c", "/x", "Exa mple", "-x", "example.com/", "EXAMPLE.com/x", "x" * 64, "a_"]
BAD_LABEL_VALUES = ["nvidia tesla", "-x", "x" * 64, "a/b", "tesla_", "ä"]
GOOD_LABEL_VALUES = ["", "a", "A-1_b.c", "x" * 63]
QUANTITIES = [
    "0",
    "1",
    "2",
    "4",
    "100m",
    "500m",
    "1.5",
    "2Gi",
    "4Gi",
    "1Ki",
    "-1",
    "3Mi",
    0,
    1,
    2,
    8,
    "1e3",
    "0.1",
    "100u",
    "1n",
    "2048Mi",
    "2M",
    "1.5Gi",
    "-100m",
    " 3 ",
    1.5,
    0.25,
    "1E",
    "1000000000000",
]


def m_container_name(rng: random.Random, obj: Obj, kind: str) -> None:
    spec = _spec(obj, kind)
    choice = rng.random()
    if choice < 0.05:
        spec["containers"] = []
    elif choice < 0.5:
        _container(rng, obj, kind)["name"] = rng.choice(BAD_NAMES)
    elif choice < 0.8:
        spec["containers"].append({"name": _container(rng, obj, kind)["name"], "image": "b"})
    else:
        spec.setdefault("initContainers", []).append(
            {"name": _container(rng, obj, kind)["name"], "image": "b"}
        )


def m_image(rng: random.Random, obj: Obj, kind: str) -> None:
    _container(rng, obj, kind)["image"] = rng.choice(
        ["", " busybox", "busybox ", "Busybox", "a:b:c"]
    )


def m_policies(rng: random.Random, obj: Obj, kind: str) -> None:
    container = _container(rng, obj, kind)
    key = rng.choice(["imagePullPolicy", "terminationMessagePolicy"])
    container[key] = rng.choice(["Sometimes", "always", "Never", "File", "FallbackToLogsOnError"])


def m_ports(rng: random.Random, obj: Obj, kind: str) -> None:
    container = _container(rng, obj, kind)
    ports = container.setdefault("ports", [])
    port: Obj = {"containerPort": rng.choice([0, 1, 80, 65535, 65536, -1, 29400])}
    if rng.random() < 0.5:
        port["name"] = rng.choice(
            ["http", "HTTP", "a--b", "-x", "12", "toolongportname1", "dup", "c"]
        )
    if rng.random() < 0.4:
        port["hostPort"] = rng.choice([0, 80, 70000, -5, 29400])
    if rng.random() < 0.4:
        port["protocol"] = rng.choice(["TCP", "UDP", "SCTP", "tcp", "HTTP"])
    if rng.random() < 0.2:
        port["hostIP"] = "10.0.0.1"
    ports.append(port)
    if rng.random() < 0.3:
        ports.append(copy.deepcopy(port))
    if rng.random() < 0.15:
        _spec(obj, kind)["hostNetwork"] = True
    if rng.random() < 0.2:
        other = {"name": "side", "image": "b", "ports": [copy.deepcopy(port)]}
        _spec(obj, kind)["containers"].append(other)


def m_env(rng: random.Random, obj: Obj, kind: str) -> None:
    container = _container(rng, obj, kind)
    env = container.setdefault("env", [])
    name = rng.choice(["1BAD=NAME", "", "OK_NAME", "a b", "x.y-z", "naïve", "TAB\tX", "=", "A"])
    var: Obj = {"name": name}
    choice = rng.random()
    if choice < 0.3:
        var["value"] = "v"
    elif choice < 0.9:
        sources: list[Obj] = [
            {
                "fieldRef": {
                    "fieldPath": rng.choice(
                        [
                            "metadata.name",
                            "status.podIP",
                            "spec.nodeName",
                            "metadata.labels['a']",
                            "metadata.labels['a/b/c']",
                            "metadata.annotations['X_y']",
                            "spec.restartPolicy",
                            "status.phase",
                            "metadata.foo",
                            "metadata.name['x']",
                            "spec.host",
                        ]
                    )
                }
            },
            {"fieldRef": {"apiVersion": rng.choice(["v1", "v2"]), "fieldPath": "metadata.name"}},
            {
                "resourceFieldRef": {
                    "resource": rng.choice(
                        [
                            "limits.cpu",
                            "requests.memory",
                            "limits.nvidia.com/gpu",
                            "requests.hugepages-2Mi",
                            "",
                        ]
                    ),
                    **(
                        {"divisor": rng.choice(["1", "1m", "1Mi", "2"])}
                        if rng.random() < 0.5
                        else {}
                    ),
                }
            },
            {
                "configMapKeyRef": {
                    "name": rng.choice(["cm", "Bad_Name", ""]),
                    "key": rng.choice(["k", "", "..x", "a b", "."]),
                }
            },
            {"secretKeyRef": {"name": "s", "key": rng.choice(["k", "bad key"])}},
        ]
        value_from: Obj = {}
        for source in rng.sample(sources, rng.choice([0, 1, 1, 1, 2])):
            value_from.update(copy.deepcopy(source))
        var["valueFrom"] = value_from
        if rng.random() < 0.2:
            var["value"] = "both"
    env.append(var)
    if rng.random() < 0.2:
        env_from: Obj = {}
        if rng.random() < 0.8:
            env_from[rng.choice(["configMapRef", "secretRef"])] = {
                "name": rng.choice(["cm", "", "Bad", "cm-"])
            }
        if rng.random() < 0.2:
            env_from["secretRef"] = {"name": "s"}
        if rng.random() < 0.3:
            env_from["prefix"] = rng.choice(["P_", "1=", "ok"])
        container.setdefault("envFrom", []).append(env_from)


def m_resources(rng: random.Random, obj: Obj, kind: str) -> None:
    container = _container(rng, obj, kind)
    resources = container.setdefault("resources", {})
    names = [
        "cpu",
        "memory",
        "nvidia.com/gpu",
        "ephemeral-storage",
        "hugepages-2Mi",
        "hugepages-1Gi",
        "example.com/foo",
        "foo",
        "example.com/Foo_",
        "kubernetes.io/x",
        "requests.cpu",
        "hugepages-x",
        "pods",
    ]
    for _ in range(rng.choice([1, 1, 2, 3])):
        which = rng.choice(["requests", "limits", "both", "both"])
        name = rng.choice(names)
        if which in ("requests", "both"):
            resources.setdefault("requests", {})[name] = rng.choice([*QUANTITIES, "0.5", "3"])
        if which in ("limits", "both"):
            resources.setdefault("limits", {})[name] = rng.choice([*QUANTITIES, "0.5", "3"])
    if rng.random() < 0.2:
        resources.pop(rng.choice(["requests", "limits"]), None)


def m_volumes(rng: random.Random, obj: Obj, kind: str) -> None:
    spec = _spec(obj, kind)
    container = _container(rng, obj, kind)
    choice = rng.random()
    if choice < 0.25:
        container.setdefault("volumeMounts", []).append(
            {
                "name": rng.choice(["missing", "data", "", "cfg"]),
                "mountPath": rng.choice(["/data", "/other", "", "rel"]),
            }
        )
    elif choice < 0.45:
        mount: Obj = {"name": "data", "mountPath": "/sub"}
        if rng.random() < 0.7:
            mount["subPath"] = rng.choice(["a/b", "/abs", "../up", "a/../b", "ok"])
        if rng.random() < 0.4:
            mount["subPathExpr"] = rng.choice(["$(POD)", "/abs", ".."])
        if rng.random() < 0.2:
            mount["mountPropagation"] = rng.choice(["None", "HostToContainer", "Sideways"])
        if rng.random() < 0.2:
            mount["recursiveReadOnly"] = rng.choice(["Enabled", "Disabled", "IfPossible", "Maybe"])
            mount["readOnly"] = rng.random() < 0.5
        container.setdefault("volumeMounts", []).append(mount)
    else:
        volume: Obj = {"name": rng.choice(["data", "cfg", "Bad_Vol", "", "x" * 64, "a.b"])}
        source = rng.choice(["none", "emptyDir", "secret", "configMap", "pvc", "hostPath", "two"])
        if source == "emptyDir":
            volume["emptyDir"] = (
                {"sizeLimit": rng.choice(["1Gi", "-1"])} if rng.random() < 0.5 else {}
            )
        elif source == "secret":
            volume["secret"] = {
                "secretName": rng.choice(["s", ""]),
                **({"defaultMode": rng.choice([0o644, 0o1000, -1])} if rng.random() < 0.5 else {}),
            }
        elif source == "configMap":
            items = [
                {
                    "key": rng.choice(["k", ""]),
                    "path": rng.choice(["p", "", "/abs", "..x", "../x", "a/../b"]),
                    **({"mode": rng.choice([0o400, 0o7777])} if rng.random() < 0.3 else {}),
                }
            ]
            volume["configMap"] = {"name": rng.choice(["cm", ""]), "items": items}
        elif source == "pvc":
            volume["persistentVolumeClaim"] = {"claimName": rng.choice(["claim", ""])}
        elif source == "hostPath":
            volume["hostPath"] = {
                "path": rng.choice(["/var/data", "", "/a/../b"]),
                **({"type": rng.choice(["Directory", "Dir", ""])} if rng.random() < 0.5 else {}),
            }
        elif source == "two":
            volume["emptyDir"] = {}
            volume["configMap"] = {"name": "cm"}
        spec.setdefault("volumes", []).append(volume)


def _handler(rng: random.Random, kinds: list[str]) -> Obj:
    handler: Obj = {}
    for kind in rng.sample(kinds, rng.choice([0, 1, 1, 1, 2])):
        if kind == "exec":
            handler["exec"] = {"command": rng.choice([["true"], []])}
        elif kind == "httpGet":
            http: Obj = {"port": rng.choice([8080, 0, 70000, "http", "HTTP", "a--b"])}
            if rng.random() < 0.3:
                http["scheme"] = rng.choice(["HTTPS", "FTP"])
            if rng.random() < 0.3:
                http["httpHeaders"] = [{"name": rng.choice(["X-Ok", "Bad Header"]), "value": "v"}]
            handler["httpGet"] = http
        elif kind == "tcpSocket":
            handler["tcpSocket"] = {"port": rng.choice([22, 0, "ssh", "-bad"])}
        elif kind == "grpc":
            handler["grpc"] = {"port": rng.choice([9000, 0, 70000])}
        elif kind == "sleep":
            handler["sleep"] = {"seconds": rng.choice([0, 5, 31, -1, 1000])}
    return handler


def m_probes(rng: random.Random, obj: Obj, kind: str) -> None:
    container = _container(rng, obj, kind)
    probe_kind = rng.choice(["livenessProbe", "readinessProbe", "startupProbe"])
    probe = _handler(rng, ["exec", "httpGet", "tcpSocket", "grpc"])
    for key in (
        "initialDelaySeconds",
        "timeoutSeconds",
        "periodSeconds",
        "successThreshold",
        "failureThreshold",
    ):
        if rng.random() < 0.2:
            probe[key] = rng.choice([-1, 0, 1, 2, 10])
    if rng.random() < 0.2:
        probe["terminationGracePeriodSeconds"] = rng.choice([-1, 0, 10])
    container[probe_kind] = probe
    if rng.random() < 0.3:
        container["restartPolicy"] = rng.choice(["Always", "Never", "Sometimes"])


def m_lifecycle(rng: random.Random, obj: Obj, kind: str) -> None:
    container = _container(rng, obj, kind)
    lifecycle: Obj = {}
    for key in rng.sample(["postStart", "preStop"], rng.choice([1, 2])):
        lifecycle[key] = _handler(rng, ["exec", "httpGet", "tcpSocket", "sleep"])
    if rng.random() < 0.15:
        lifecycle["stopSignal"] = "SIGTERM"
    container["lifecycle"] = lifecycle
    if rng.random() < 0.3:
        _spec(obj, kind)["terminationGracePeriodSeconds"] = rng.choice([0, 10, 60])


def _node_requirement(rng: random.Random) -> Obj:
    req: Obj = {
        "key": rng.choice(["kubernetes.io/hostname", "gpu", "a/b/c", "Bad Key", ""]),
        "operator": rng.choice(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Near"]),
    }
    if rng.random() < 0.7:
        req["values"] = rng.sample(["a", "b", "1", "nvidia tesla", "-x"], rng.choice([0, 1, 2]))
    return req


def _label_selector(rng: random.Random) -> Obj:
    selector: Obj = {}
    if rng.random() < 0.6:
        selector["matchLabels"] = {
            rng.choice(["app", "Bad Key", "a/b"]): rng.choice(["x", "bad value"])
        }
    if rng.random() < 0.6:
        selector["matchExpressions"] = [
            {
                "key": rng.choice(["app", "a/b/c"]),
                "operator": rng.choice(["In", "NotIn", "Exists", "DoesNotExist", "Gt"]),
                **(
                    {"values": rng.sample(["x", "y", "bad value"], rng.choice([0, 1, 2]))}
                    if rng.random() < 0.7
                    else {}
                ),
            }
        ]
    return selector


def m_affinity(rng: random.Random, obj: Obj, kind: str) -> None:
    affinity: Obj = {}
    choice = rng.random()
    if choice < 0.5:
        node: Obj = {}
        if rng.random() < 0.7:
            terms = [
                {"matchExpressions": [_node_requirement(rng) for _ in range(rng.choice([0, 1, 2]))]}
                for _ in range(rng.choice([0, 1, 2]))
            ]
            if rng.random() < 0.3 and terms:
                terms[0]["matchFields"] = [
                    {
                        "key": rng.choice(["metadata.name", "spec.nodeName"]),
                        "operator": rng.choice(["In", "Exists"]),
                        "values": rng.sample(["n1", "Bad_Node", "n2"], rng.choice([0, 1, 2])),
                    }
                ]
            node["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": terms}
        if rng.random() < 0.5:
            node["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {
                    "weight": rng.choice([0, 1, 50, 100, 101]),
                    "preference": {"matchExpressions": [_node_requirement(rng)]},
                }
            ]
        affinity["nodeAffinity"] = node
    else:
        key = rng.choice(["podAffinity", "podAntiAffinity"])
        term: Obj = {"topologyKey": rng.choice(["kubernetes.io/hostname", "", "bad key"])}
        if rng.random() < 0.8:
            term["labelSelector"] = _label_selector(rng)
        if rng.random() < 0.2:
            term["namespaces"] = [rng.choice(["ns", "Bad_NS"])]
        if rng.random() < 0.5:
            affinity[key] = {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
        else:
            affinity[key] = {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": rng.choice([0, 10, 101]), "podAffinityTerm": term}
                ]
            }
    _spec(obj, kind)["affinity"] = affinity


def m_tolerations(rng: random.Random, obj: Obj, kind: str) -> None:
    toleration: Obj = {}
    if rng.random() < 0.8:
        toleration["key"] = rng.choice(
            ["nvidia.com/gpu", "", "bad key", "a/b/c", "node.kubernetes.io/not-ready"]
        )
    if rng.random() < 0.8:
        toleration["operator"] = rng.choice(["Exists", "Equal", "", "exists", "In"])
    if rng.random() < 0.6:
        toleration["value"] = rng.choice(["present", "", "bad value", "x" * 64])
    if rng.random() < 0.6:
        toleration["effect"] = rng.choice(
            ["NoSchedule", "NoExecute", "PreferNoSchedule", "", "NoScheduleNoAdmit", "Never"]
        )
    if rng.random() < 0.3:
        toleration["tolerationSeconds"] = rng.choice([0, 300, -1])
    _spec(obj, kind).setdefault("tolerations", []).append(toleration)


def m_node_selector(rng: random.Random, obj: Obj, kind: str) -> None:
    selector = _spec(obj, kind).setdefault("nodeSelector", {})
    for _ in range(rng.choice([1, 1, 2, 3])):
        if rng.random() < 0.5:
            selector[rng.choice(["nvidia.com/gpu.product", "zone", "a"])] = rng.choice(
                BAD_LABEL_VALUES + GOOD_LABEL_VALUES
            )
        else:
            selector[rng.choice(BAD_LABEL_KEYS)] = rng.choice(["x", "bad value"])


def m_security(rng: random.Random, obj: Obj, kind: str) -> None:
    spec = _spec(obj, kind)
    if rng.random() < 0.5:
        context = spec.setdefault("securityContext", {})
        key = rng.choice(
            [
                "runAsUser",
                "runAsGroup",
                "fsGroup",
                "supplementalGroups",
                "share",
                "fsGroupChangePolicy",
                "runAsNonRoot",
            ]
        )
        if key == "supplementalGroups":
            context[key] = [1000, rng.choice([-1, 2147483648, 5])]
        elif key == "share":
            spec["shareProcessNamespace"] = True
            spec["hostPID"] = rng.random() < 0.7
        elif key == "fsGroupChangePolicy":
            context[key] = rng.choice(["Always", "OnRootMismatch", "Sometimes"])
        elif key == "runAsNonRoot":
            context[key] = True
        else:
            context[key] = rng.choice([-1, 0, 1000, 2147483647, 2147483648])
    else:
        context = _container(rng, obj, kind).setdefault("securityContext", {})
        key = rng.choice(
            ["runAsUser", "runAsGroup", "privileged", "readOnlyRootFilesystem", "procMount"]
        )
        if key in ("privileged", "readOnlyRootFilesystem"):
            context[key] = rng.random() < 0.5
        elif key == "procMount":
            context[key] = rng.choice(["Default", "Unmasked", "Masked"])
        else:
            context[key] = rng.choice([-1, 0, 1000, 2147483648])
    if rng.random() < 0.15:
        spec.setdefault("securityContext", {})["hostUsers"] = False
        spec[rng.choice(["hostNetwork", "hostPID", "hostIPC"])] = True


def m_restart(rng: random.Random, obj: Obj, kind: str) -> None:
    spec = _spec(obj, kind)
    value = rng.choice(["Always", "", "OnFailure", "Never", "Sometimes", None])
    if value is None:
        spec.pop("restartPolicy", None)
    else:
        spec["restartPolicy"] = value


def m_dns(rng: random.Random, obj: Obj, kind: str) -> None:
    spec = _spec(obj, kind)
    spec["dnsPolicy"] = rng.choice(
        ["ClusterFirst", "None", "Default", "ClusterFirstWithHostNet", "Bogus"]
    )
    if rng.random() < 0.6:
        config: Obj = {}
        if rng.random() < 0.6:
            second = rng.choice(["10.0.0.11", "bad", "fd00::a", "010.0.0.1"])
            servers = ["10.0.0.10", second, "10.0.0.12", "10.0.0.13"]
            config["nameservers"] = servers[: rng.choice([0, 1, 2, 4])]
        if rng.random() < 0.5:
            config["searches"] = rng.sample(
                ["svc.cluster.local", "Bad_Domain", "a.", ".", "_srv.example.com", "-x"], 2
            )
        if rng.random() < 0.3:
            config["options"] = [{"name": rng.choice(["ndots", ""]), "value": "2"}]
        spec["dnsConfig"] = config


def m_pod_names(rng: random.Random, obj: Obj, kind: str) -> None:
    spec = _spec(obj, kind)
    key = rng.choice(
        [
            "serviceAccountName",
            "hostname",
            "subdomain",
            "priorityClassName",
            "nodeName",
            "activeDeadlineSeconds",
            "schedulerName",
            "preemptionPolicy",
            "runtimeClassName",
            "readinessGates",
            "schedulingGates",
        ]
    )
    if key == "activeDeadlineSeconds":
        spec[key] = rng.choice([0, 1, -5, 3600, 2147483648])
    elif key == "preemptionPolicy":
        spec[key] = rng.choice(["Never", "PreemptLowerPriority", "Sometimes"])
    elif key == "readinessGates":
        spec[key] = [{"conditionType": rng.choice(["example.com/ready", "bad type"])}]
    elif key == "schedulingGates":
        gate = rng.choice(["example.com/gate", "bad gate"])
        spec[key] = [{"name": gate}] * rng.choice([1, 2])
    else:
        spec[key] = rng.choice([*BAD_NAMES[:-2], "ok-name", "my.sa", "a" * 254])


def m_metadata(rng: random.Random, obj: Obj, kind: str) -> None:
    meta = obj["metadata"]
    choice = rng.random()
    if choice < 0.3:
        meta.pop("generateName", None)
        meta["name"] = rng.choice(["Bad_Name", "a" * 254, "ok.name", "x" * 60, "-a", "llm-node-0"])
    elif choice < 0.6:
        meta.setdefault("labels", {})[rng.choice([*BAD_LABEL_KEYS, "ok"])] = rng.choice(
            [*BAD_LABEL_VALUES, "ok"]
        )
    elif choice < 0.8:
        meta.setdefault("annotations", {})[
            rng.choice(["ok/x", "a/b/c", "Bad Key", "UPPER.case/X"])
        ] = "v"
    elif kind == "Job":
        template = obj["spec"]["template"]["metadata"]
        template.setdefault("labels", {})[rng.choice([*BAD_LABEL_KEYS, "ok"])] = rng.choice(
            [*BAD_LABEL_VALUES, "ok"]
        )
    else:
        meta.pop("name", None)
        if rng.random() < 0.8:
            meta["generateName"] = rng.choice(["llm-", "Bad-", "a" * 70 + "-", "x" * 58, "-"])
        else:
            meta.pop("generateName", None)


def m_job_counts(rng: random.Random, obj: Obj, kind: str) -> None:
    spec = obj["spec"]
    key = rng.choice(
        [
            "parallelism",
            "completions",
            "backoffLimit",
            "activeDeadlineSeconds",
            "ttlSecondsAfterFinished",
            "completionMode",
            "unset",
            "podReplacementPolicy",
            "managedBy",
            "suspend",
        ]
    )
    if key == "completionMode":
        spec[key] = rng.choice(["Indexed", "NonIndexed", "Sideways"])
    elif key == "unset":
        spec.pop(rng.choice(["parallelism", "completions", "completionMode"]), None)
    elif key == "podReplacementPolicy":
        spec[key] = rng.choice(["Failed", "TerminatingOrFailed", "Never"])
    elif key == "managedBy":
        spec[key] = rng.choice(
            [
                "kueue.x-k8s.io/multikueue",
                "kubernetes.io/job-controller",
                "nope",
                "a/",
                "Bad_Host/x",
                "example.com/" + "x" * 60,
            ]
        )
    elif key == "suspend":
        spec[key] = True
    else:
        spec[key] = rng.choice([-1, 0, 1, 3, 10001, 100001])
    if rng.random() < 0.1:
        obj["metadata"]["name"] = "x" * rng.choice([60, 61, 62, 63])
    elif rng.random() < 0.1:
        obj["metadata"]["name"] = rng.choice(["a.b", "llm.node-0", "x" * 64])


def m_job_index_policy(rng: random.Random, obj: Obj, kind: str) -> None:
    spec = obj["spec"]
    if rng.random() < 0.5:
        spec["backoffLimitPerIndex"] = rng.choice([0, 1, -1])
    if rng.random() < 0.5:
        spec["maxFailedIndexes"] = rng.choice([0, 1, 5, -1, 10001, 100001])
    if rng.random() < 0.2:
        spec["completions"] = rng.choice([100001, 200000])
        spec["parallelism"] = rng.choice([4, 10001, 100001])
    if rng.random() < 0.3:
        spec["completionMode"] = rng.choice(["Indexed", "NonIndexed"])


def m_pod_failure_policy(rng: random.Random, obj: Obj, kind: str) -> None:
    spec = obj["spec"]
    rules = []
    for _ in range(rng.choice([0, 1, 2])):
        rule: Obj = {"action": rng.choice(["FailJob", "Ignore", "Count", "FailIndex", "", "Retry"])}
        if rng.random() < 0.6:
            rule["onExitCodes"] = {
                "operator": rng.choice(["In", "NotIn", "", "Has"]),
                "values": rng.choice([[1, 2], [0], [3, 1], [2, 2], []]),
                **(
                    {"containerName": rng.choice(["node", "init", "ghost"])}
                    if rng.random() < 0.3
                    else {}
                ),
            }
        if rng.random() < 0.5:
            rule["onPodConditions"] = [
                {
                    "type": rng.choice(["DisruptionTarget", "bad type"]),
                    **({"status": rng.choice(["True", "Maybe"])} if rng.random() < 0.8 else {}),
                }
            ]
        rules.append(rule)
    spec["podFailurePolicy"] = {"rules": rules}
    if rng.random() < 0.5:
        spec["template"]["spec"]["restartPolicy"] = "Never"


def m_success_policy(rng: random.Random, obj: Obj, kind: str) -> None:
    spec = obj["spec"]
    rules = []
    for _ in range(rng.choice([0, 1, 1, 2])):
        rule: Obj = {}
        if rng.random() < 0.6:
            rule["succeededIndexes"] = rng.choice(
                ["0", "0-1", "1,0", "0-5", "x", "1-1", "0-1-2", "0,2-3", ""]
            )
        if rng.random() < 0.6:
            rule["succeededCount"] = rng.choice([0, 1, 2, 10, -1])
        rules.append(rule)
    spec["successPolicy"] = {"rules": rules}
    if rng.random() < 0.2:
        spec["completionMode"] = "NonIndexed"


def m_selector(rng: random.Random, obj: Obj, kind: str) -> None:
    spec = obj["spec"]
    choice = rng.random()
    if choice < 0.3:
        spec["manualSelector"] = True
        if rng.random() < 0.6:
            spec["selector"] = {"matchLabels": {"app": "x"}}
            if rng.random() < 0.6:
                spec["template"]["metadata"]["labels"]["app"] = "x"
    elif choice < 0.6:
        spec["selector"] = _label_selector(rng)
    else:
        labels = spec["template"]["metadata"]["labels"]
        labels[rng.choice(["batch.kubernetes.io/job-name", "job-name", "controller-uid"])] = (
            rng.choice(["other", "llm-node-0"])
        )


def m_topology_spread(rng: random.Random, obj: Obj, kind: str) -> None:
    constraints = _spec(obj, kind).setdefault("topologySpreadConstraints", [])
    for _ in range(rng.choice([1, 1, 2])):
        constraint: Obj = {
            "maxSkew": rng.choice([1, 0, -1, 2]),
            "topologyKey": rng.choice(
                ["topology.kubernetes.io/zone", "", "kubernetes.io/hostname"]
            ),
            "whenUnsatisfiable": rng.choice(["DoNotSchedule", "ScheduleAnyway", "Never", ""]),
        }
        if rng.random() < 0.3:
            constraint["minDomains"] = rng.choice([0, 1, 3, -1])
        if rng.random() < 0.2:
            constraint[rng.choice(["nodeAffinityPolicy", "nodeTaintsPolicy"])] = rng.choice(
                ["Honor", "Ignore", "Maybe"]
            )
        if rng.random() < 0.5:
            constraint["labelSelector"] = _label_selector(rng)
        constraints.append(constraint)
        if rng.random() < 0.2:
            constraints.append(copy.deepcopy(constraint))


def _downward_items(rng: random.Random) -> list[Obj]:
    items = []
    for _ in range(rng.choice([1, 1, 2])):
        item: Obj = {"path": rng.choice(["labels", "", "/abs", "..x", "a/../b", "cpu"])}
        choice = rng.random()
        if choice < 0.5:
            item["fieldRef"] = {
                "fieldPath": rng.choice(
                    [
                        "metadata.labels",
                        "metadata.name",
                        "status.podIP",
                        "metadata.annotations['x']",
                        "spec.nodeName",
                    ]
                )
            }
        elif choice < 0.85:
            item["resourceFieldRef"] = {
                "resource": rng.choice(["limits.cpu", "requests.memory", "limits.foo"]),
                **({"containerName": "node"} if rng.random() < 0.7 else {}),
            }
        if rng.random() < 0.1:
            item["fieldRef"] = {"fieldPath": "metadata.name"}
            item["resourceFieldRef"] = {"resource": "limits.cpu", "containerName": "node"}
        if rng.random() < 0.2:
            item["mode"] = rng.choice([0o400, 0o1000])
        items.append(item)
    return items


def m_projected_volumes(rng: random.Random, obj: Obj, kind: str) -> None:
    spec = _spec(obj, kind)
    volume: Obj = {"name": rng.choice(["token", "info"])}
    if rng.random() < 0.4:
        volume["downwardAPI"] = {"items": _downward_items(rng)}
        if rng.random() < 0.2:
            volume["downwardAPI"]["defaultMode"] = rng.choice([0o644, -1])
    else:
        sources: list[Obj] = []
        for _ in range(rng.choice([1, 2, 3])):
            source: Obj = {}
            for what in rng.sample(
                ["secret", "configMap", "downwardAPI", "serviceAccountToken"],
                rng.choice([1, 1, 1, 2]),
            ):
                if what in ("secret", "configMap"):
                    source[what] = {
                        "name": rng.choice(["s", ""]),
                        "items": [{"key": "k", "path": rng.choice(["a", "b", "/abs"])}],
                    }
                elif what == "downwardAPI":
                    source[what] = {"items": _downward_items(rng)}
                else:
                    token: Obj = {"path": rng.choice(["token", "", "/abs", "../x"])}
                    if rng.random() < 0.5:
                        token["expirationSeconds"] = rng.choice([3600, 60, 1 << 33])
                    source[what] = token
            sources.append(source)
        volume["projected"] = {"sources": sources}
        if rng.random() < 0.5:
            spec["serviceAccountName"] = "trainer"
    spec.setdefault("volumes", []).append(volume)


def m_seccomp_sysctls(rng: random.Random, obj: Obj, kind: str) -> None:
    spec = _spec(obj, kind)
    if rng.random() < 0.3:
        armor: Obj = {}
        if rng.random() < 0.9:
            armor["type"] = rng.choice(["RuntimeDefault", "Localhost", "Unconfined", "Custom"])
        if rng.random() < 0.6:
            armor["localhostProfile"] = rng.choice(["k8s-apparmor", "", " padded", "x" * 4100])
        if rng.random() < 0.5:
            spec.setdefault("securityContext", {})["appArmorProfile"] = armor
        else:
            _container(rng, obj, kind).setdefault("securityContext", {})["appArmorProfile"] = armor
    elif rng.random() < 0.5:
        profile: Obj = {}
        if rng.random() < 0.9:
            profile["type"] = rng.choice(["RuntimeDefault", "Localhost", "Unconfined", "Custom"])
        if rng.random() < 0.5:
            profile["localhostProfile"] = rng.choice(["profiles/a.json", "/abs.json", "../x"])
        if rng.random() < 0.5:
            spec.setdefault("securityContext", {})["seccompProfile"] = profile
        else:
            _container(rng, obj, kind).setdefault("securityContext", {})["seccompProfile"] = profile
    else:
        sysctls = [
            {
                "name": rng.choice(
                    [
                        "net.core.somaxconn",
                        "kernel.shm_rmid_forced",
                        "Bad_Name",
                        "",
                        "net/ipv4/ip_local_port_range",
                        "kernel.msgmax",
                        "fs.mqueue.msg_max",
                    ]
                ),
                "value": "1",
            }
            for _ in range(rng.choice([1, 2]))
        ]
        spec.setdefault("securityContext", {})["sysctls"] = sysctls
        if rng.random() < 0.4:
            spec[rng.choice(["hostNetwork", "hostIPC"])] = True


def m_host_aliases(rng: random.Random, obj: Obj, kind: str) -> None:
    aliases = _spec(obj, kind).setdefault("hostAliases", [])
    for _ in range(rng.choice([1, 2])):
        aliases.append(
            {
                "ip": rng.choice(
                    [
                        "10.0.0.1",
                        "010.0.0.1",
                        "256.0.0.1",
                        "fe80::1",
                        "::ffff:1.2.3.4",
                        "",
                        "host",
                        "1.2.3",
                        "fe80::1%eth0",
                    ]
                ),
                "hostnames": rng.sample(
                    ["node-0", "Node_0", "a.b.c", "", "x" * 64], rng.choice([0, 1, 2])
                ),
            }
        )


def m_owners(rng: random.Random, obj: Obj, kind: str) -> None:
    meta = obj["metadata"]
    if rng.random() < 0.7:
        refs = meta.setdefault("ownerReferences", [])
        for _ in range(rng.choice([1, 1, 2])):
            ref: Obj = {
                "apiVersion": rng.choice(
                    ["jobset.x-k8s.io/v1alpha2", "batch/v1", "", "v1", "a/b/c", "/"]
                ),
                "kind": rng.choice(["JobSet", "Job", "", "Event"]),
                "name": rng.choice(["llm", ""]),
                "uid": rng.choice(["6a1e0d3c-0000-4000-8000-000000000001", ""]),
            }
            if rng.random() < 0.7:
                ref["controller"] = rng.random() < 0.8
            if rng.random() < 0.5:
                ref["blockOwnerDeletion"] = True
            refs.append(ref)
    else:
        meta["finalizers"] = rng.sample(
            ["orphan", "foregroundDeletion", "example.com/cleanup", "bad finalizer", "a/b/c"],
            rng.choice([1, 2, 3]),
        )


def m_pod_resources(rng: random.Random, obj: Obj, kind: str) -> None:
    spec = _spec(obj, kind)
    resources = spec.setdefault("resources", {})
    names = ["cpu", "memory", "hugepages-2Mi", "nvidia.com/gpu", "ephemeral-storage", "foo"]
    for _ in range(rng.choice([1, 2, 3])):
        which = rng.choice(["requests", "limits", "both"])
        name = rng.choice(names)
        value = rng.choice(["1", "2", "8", "500m", "1Gi", "16Gi", "4Mi", "100u", 3])
        if which in ("requests", "both"):
            resources.setdefault("requests", {})[name] = value
        if which in ("limits", "both"):
            resources.setdefault("limits", {})[name] = rng.choice([value, "4", "2Gi", "2Mi"])
    if rng.random() < 0.3:
        sidecar = {"name": "sidecar", "image": "b", "restartPolicy": "Always"}
        sidecar["resources"] = {
            "requests": {"cpu": "1"},
            "limits": {"cpu": "2", "hugepages-2Mi": "2Mi", "memory": "1Gi"},
        }
        spec.setdefault("initContainers", []).append(sidecar)
    if rng.random() < 0.1:
        resources["claims"] = []


FAMILIES: dict[str, tuple[Mutation, tuple[str, ...]]] = {
    "container-name": (m_container_name, ("Job", "Pod")),
    "image": (m_image, ("Job", "Pod")),
    "pull-and-message-policy": (m_policies, ("Job", "Pod")),
    "ports": (m_ports, ("Job", "Pod")),
    "env": (m_env, ("Job", "Pod")),
    "resources": (m_resources, ("Job", "Pod")),
    "volumes": (m_volumes, ("Job", "Pod")),
    "probes": (m_probes, ("Job", "Pod")),
    "lifecycle": (m_lifecycle, ("Job", "Pod")),
    "affinity": (m_affinity, ("Job", "Pod")),
    "tolerations": (m_tolerations, ("Job", "Pod")),
    "node-selector": (m_node_selector, ("Job", "Pod")),
    "security-context": (m_security, ("Job", "Pod")),
    "restart-policy": (m_restart, ("Job", "Pod")),
    "dns": (m_dns, ("Job", "Pod")),
    "pod-names": (m_pod_names, ("Job", "Pod")),
    "metadata": (m_metadata, ("Job", "Pod")),
    "topology-spread": (m_topology_spread, ("Job", "Pod")),
    "host-aliases": (m_host_aliases, ("Job", "Pod")),
    "pod-level-resources": (m_pod_resources, ("Job", "Pod")),
    "owner-references-and-finalizers": (m_owners, ("Job", "Pod")),
    "projected-and-downward-api-volumes": (m_projected_volumes, ("Job", "Pod")),
    "seccomp-and-sysctls": (m_seccomp_sysctls, ("Job", "Pod")),
    "job-counts": (m_job_counts, ("Job",)),
    "job-backoff-per-index": (m_job_index_policy, ("Job",)),
    "job-pod-failure-policy": (m_pod_failure_policy, ("Job",)),
    "job-success-policy": (m_success_policy, ("Job",)),
    "job-selector": (m_selector, ("Job",)),
}


@dataclass
class Case:
    number: int
    kind: str
    families: list[str]
    obj: Obj


def cases(count: int, seed: int) -> Iterator[Case]:
    """``count`` cases, the same for the same seed."""
    rng = random.Random(seed)
    for number in range(count):
        kind = "Job" if rng.random() < 0.6 else "Pod"
        if rng.random() < 0.4 and golden_templates():
            obj = golden_job(rng) if kind == "Job" else golden_pod(rng)
        else:
            obj = base_job(rng) if kind == "Job" else base_pod(rng)
        families = [name for name, (_, kinds) in FAMILIES.items() if kind in kinds]
        chosen = rng.sample(families, rng.choice([0, 1, 1, 1, 2, 2, 3])) if number else []
        for name in chosen:
            FAMILIES[name][0](rng, obj, kind)
        yield Case(number, kind, chosen, obj)


# --- the two sides


def go_verdicts(batch: list[Case]) -> list[dict[str, Any]]:
    """The oracle's answers, one per case (one process for the whole batch; the oracle
    built first if needed)."""
    return ORACLE.ask([{"kind": c.kind, "object": c.obj} for c in batch])


def trainc_verdict(case: Case) -> tuple[str, list[str]]:
    """trainc's message ("" when accepted) and its error texts."""
    validate = validate_job if case.kind == "Job" else validate_pod
    obj = case.obj
    if case.kind == "Pod":  # the create path the oracle runs: PrepareForCreate first
        obj = prepare_pod(copy.deepcopy(obj))
    try:
        errors = validate(obj)
    except ServerPanic as panic:
        return f"500: {panic}", []
    if not errors:
        return "", []
    name = str(case.obj["metadata"].get("name") or "")
    if not name and case.obj["metadata"].get("generateName"):
        name = str(case.obj["metadata"]["generateName"])[:58] + "xxxxx"
    return invalid_message(case.kind, name, errors), [str(e) for e in errors]


def same_message(kind: str, ours: list[str], go_message: str, go_texts: list[str]) -> bool:
    """The messages agree, or hold the same errors in another order (Go's map order)."""
    mine = list(dict.fromkeys(ours))
    theirs = list(dict.fromkeys(go_texts))
    if sorted(mine) != sorted(theirs):
        return False
    head = go_message.split(" is invalid", 1)[0]
    body = theirs[0] if len(theirs) == 1 else "[" + ", ".join(theirs) + "]"
    return go_message == f"{head} is invalid: {body}"


@dataclass
class Outcome:
    verdict_differences: int = 0
    message_differences: int = 0
    decode_errors: int = 0


def compare(batch: list[Case], out: Path | None) -> Outcome:
    outcome = Outcome()
    for case, answer in zip(batch, go_verdicts(batch), strict=True):
        if answer.get("decodeError"):
            outcome.decode_errors += 1
            _write(out, case, "decode", answer, "", [])
            continue
        message, texts = trainc_verdict(case)
        go_message = (
            f"500: {answer['serverError']}" if answer.get("serverError") else answer["message"]
        )
        go_texts = [e["text"] for e in answer["errors"]]
        if bool(message) != bool(go_message):
            outcome.verdict_differences += 1
            _write(out, case, "verdict", answer, message, texts)
        elif message != go_message and not same_message(case.kind, texts, go_message, go_texts):
            outcome.message_differences += 1
            _write(out, case, "message", answer, message, texts)
    return outcome


def _write(
    out: Path | None, case: Case, what: str, answer: dict[str, Any], message: str, texts: list[str]
) -> None:
    if out is None:
        return
    out.mkdir(parents=True, exist_ok=True)
    record = {
        "difference": what,
        "kind": case.kind,
        "families": case.families,
        "object": case.obj,
        "apiserver": answer.get("message") or answer.get("decodeError"),
        "trainc": message,
        "apiserverErrors": [e["text"] for e in answer.get("errors") or []],
        "traincErrors": texts,
    }
    (out / f"case-{case.number:06d}.json").write_text(json.dumps(record, indent=2) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=ROOT / "conformance-out" / "pods")
    args = parser.parse_args(argv)
    batch = list(cases(args.count, args.seed))
    outcome = compare(batch, args.out)
    if outcome.decode_errors:
        print(
            f"conformance-pods: {outcome.decode_errors} cases the oracle could not decode (generator bug)"
        )
    print(
        f"conformance-pods: {len(batch)} cases, {outcome.verdict_differences} verdict differences,"
        f" {outcome.message_differences} message differences"
    )
    failed = outcome.verdict_differences or outcome.message_differences or outcome.decode_errors
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
