"""The JobSet Pod webhook of sigs.k8s.io/jobset v0.12.0 (``pkg/webhooks/pod_webhook.go``).

It sees every Pod the API server admits (``mpod.kb.io``, after the built-in admission
plugins). For a Pod of a JobSet (``jobset.sigs.k8s.io/jobset-name`` annotation) that
does not use the node-selector placement strategy:

* the Pod's priority is copied into the ``jobset.sigs.k8s.io/priority`` label;
* with exclusive placement (``alpha.jobset.sigs.k8s.io/exclusive-topology``), the
  leader Pod (completion index 0) gets a pod affinity to its own Job and an
  anti-affinity to other Jobs of the same priority, on that topology.

A follower Pod under exclusive placement is given the leader's topology domain as a
nodeSelector once the leader is scheduled, and refused until then (``vpod.kb.io``):
that depends on the cluster's nodes, so it is left out here.
"""

from __future__ import annotations

from typing import Any

from compiler.expand import names as n

__all__ = ["mutate_pod"]


def mutate_pod(pod: dict[str, Any]) -> dict[str, Any]:
    """The webhook's ``Default`` on a created ``pod`` (in place; returned)."""
    meta, spec = pod.setdefault("metadata", {}), pod.setdefault("spec", {})
    annotations = meta.get("annotations") or {}
    if n.JOBSET_NAME not in annotations or n.NODE_SELECTOR_STRATEGY in annotations:
        return pod
    if spec.get("priority") is not None:
        meta.setdefault("labels", {})[n.PRIORITY] = str(spec["priority"])
    if n.EXCLUSIVE in annotations and annotations.get(n.COMPLETION_INDEX) == "0":
        _exclusive_affinities(pod)
    return pod


def _exclusive_affinities(pod: dict[str, Any]) -> None:
    labels = pod["metadata"].get("labels") or {}
    topology = pod["metadata"]["annotations"][n.EXCLUSIVE]
    affinity = pod["spec"].setdefault("affinity", {})
    own = {"key": n.JOB_KEY, "operator": "In", "values": [labels.get(n.JOB_KEY, "")]}
    others = [
        {"key": n.JOB_KEY, "operator": "Exists"},
        {"key": n.JOB_KEY, "operator": "NotIn", "values": [labels.get(n.JOB_KEY, "")]},
        {"key": n.PRIORITY, "operator": "In", "values": [labels.get(n.PRIORITY, "")]},
    ]
    for key, expressions in (("podAffinity", [own]), ("podAntiAffinity", others)):
        terms = affinity.setdefault(key, {}).setdefault(
            "requiredDuringSchedulingIgnoredDuringExecution", []
        )
        terms.append(
            {
                "labelSelector": {"matchExpressions": expressions},
                "topologyKey": topology,
                "namespaceSelector": {},
            }
        )
