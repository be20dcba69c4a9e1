"""Seeded random queue setups and Workloads for the admissibility verdict's differential
test: flavors (node labels, taints), Cohort trees, ClusterQueues (resource groups,
nominal quotas, borrowing and lending limits, fungibility), PodSets (requests, node
selectors, tolerations)."""

from __future__ import annotations

import random
from typing import Any

RESOURCES = ("cpu", "memory", "nvidia.com/gpu", "pods")
ZONES = ("a", "b")


def _amount(rng: random.Random, resource: str, low: int, high: int) -> Any:
    value = rng.randint(low, high)
    if resource == "cpu":
        return rng.choice([str(value), f"{value * 500}m"])
    if resource == "memory":
        return f"{value}Gi"
    return value


def _flavor(rng: random.Random, index: int) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if rng.random() < 0.5:
        spec["nodeLabels"] = {"zone": rng.choice(ZONES)}
    if rng.random() < 0.3:
        spec["nodeTaints"] = [{"key": "dedicated", "value": "ml", "effect": "NoSchedule"}]
    if rng.random() < 0.15:
        spec["tolerations"] = [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}]
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ResourceFlavor",
        "metadata": {"name": f"f{index}"},
        "spec": spec,
    }


def _resource_groups(
    rng: random.Random, flavors: list[str], in_cohort: bool, high: int
) -> list[dict[str, Any]]:
    resources = [r for r in RESOURCES if rng.random() < 0.75] or ["nvidia.com/gpu"]
    rng.shuffle(resources)
    split = rng.randint(1, len(resources))
    groups = [resources[:split], resources[split:]]
    pool = list(flavors)
    rng.shuffle(pool)
    out = []
    for covered in (g for g in groups if g):
        count = rng.randint(1, min(2, len(pool))) if pool else 0
        chosen, pool = pool[:count], pool[count:]
        if not chosen:
            break
        group_flavors = []
        for name in chosen:
            quotas = []
            for resource in covered:
                quota: dict[str, Any] = {
                    "name": resource,
                    "nominalQuota": _amount(rng, resource, 0, high),
                }
                if in_cohort and rng.random() < 0.3:
                    quota["borrowingLimit"] = _amount(rng, resource, 0, high)
                if in_cohort and rng.random() < 0.3:
                    quota["lendingLimit"] = _amount(rng, resource, 0, high)
                quotas.append(quota)
            group_flavors.append({"name": name, "resources": quotas})
        out.append({"coveredResources": covered, "flavors": group_flavors})
    return out


def random_setup(rng: random.Random) -> tuple[list[dict[str, Any]], str]:
    """Queue objects and the ClusterQueue to admit into."""
    flavors = [_flavor(rng, i) for i in range(rng.randint(1, 3))]
    names = [f["metadata"]["name"] for f in flavors]
    cohorts = []
    for index in range(rng.randint(0, 3)):
        spec: dict[str, Any] = {}
        if index and rng.random() < 0.5:
            spec["parentName"] = f"c{rng.randrange(index)}"
        if rng.random() < 0.5:
            spec["resourceGroups"] = _resource_groups(rng, names, True, 8)
        cohorts.append(
            {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "Cohort",
                "metadata": {"name": f"c{index}"},
                "spec": spec,
            }
        )
    queues = []
    for index in range(rng.randint(1, 3)):
        spec = {"namespaceSelector": {}}
        cohort = f"c{rng.randrange(len(cohorts))}" if cohorts and rng.random() < 0.7 else ""
        if cohort:
            spec["cohortName"] = cohort
        spec["resourceGroups"] = _resource_groups(rng, names, bool(cohort), 8)
        if rng.random() < 0.4:
            spec["flavorFungibility"] = {
                "whenCanBorrow": rng.choice(["MayStopSearch", "TryNextFlavor"])
            }
        queues.append(
            {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "ClusterQueue",
                "metadata": {"name": f"q{index}"},
                "spec": spec,
            }
        )
    return [*flavors, *cohorts, *queues], "q0"


def random_podsets(rng: random.Random) -> list[dict[str, Any]]:
    """Kueue PodSets (name, count, template) with random requests."""
    podsets = []
    for index in range(rng.randint(1, 3)):
        requests = {
            r: _amount(rng, r, 0, 4) for r in RESOURCES if r != "pods" and rng.random() < 0.6
        }
        container: dict[str, Any] = {"name": "main", "image": "busybox"}
        if requests:
            key = rng.choice(["requests", "limits"])
            container["resources"] = {key: requests}
        spec: dict[str, Any] = {"containers": [container]}
        if rng.random() < 0.3:
            spec["nodeSelector"] = {"zone": rng.choice(ZONES)}
        if rng.random() < 0.1:  # a key no flavor labels: ignored
            spec.setdefault("nodeSelector", {})["disk"] = "ssd"
        if rng.random() < 0.2:
            terms = [
                {
                    "matchExpressions": [
                        {
                            "key": rng.choice(["zone", "disk"]),
                            "operator": rng.choice(["In", "NotIn", "Exists", "DoesNotExist"]),
                            "values": [rng.choice(ZONES)],
                        }
                    ]
                }
                for _ in range(rng.randint(1, 2))
            ]
            for term in terms:
                expression = term["matchExpressions"][0]
                if expression["operator"] in ("Exists", "DoesNotExist"):
                    del expression["values"]
            spec["affinity"] = {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}
                }
            }
        if rng.random() < 0.3:
            spec["tolerations"] = [
                rng.choice(
                    [
                        {"key": "dedicated", "operator": "Equal", "value": "ml"},
                        {"key": "dedicated", "operator": "Equal", "value": "other"},
                        {"operator": "Exists"},
                        {"key": "dedicated", "operator": "Exists", "effect": "NoExecute"},
                    ]
                )
            ]
        podsets.append(
            {"name": f"ps{index}", "count": rng.randint(1, 4), "template": {"spec": spec}}
        )
    return podsets
