"""Volcano: the Volcano PodGroup, its pod annotation and its admission checks (spec §10, R-12.3).

Upstream: pkg/runtime/framework/plugins/volcano/volcano.go.
"""

from __future__ import annotations

from compiler.errors import FieldError
from compiler.render.framework import (
    ComponentBuilderPlugin,
    CustomValidationPlugin,
    EnforcePodGroupPolicyPlugin,
    TrainJobContext,
)
from compiler.render.info import Info, JsonObject
from compiler.render.plugins.podgroup import min_member, min_resources
from compiler.upstream.names import (
    POD_GROUP_KIND,
    VOLCANO_API_VERSION,
    VOLCANO_GROUP_NAME_ANNOTATION,
    VOLCANO_QUEUE_ANNOTATION,
)

NAME = "Volcano"

# PriorityClasses every cluster has; finding one ends upstream's existence scan.
SYSTEM_PRIORITY_CLASSES = ("system-cluster-critical", "system-node-critical")


def _policy(info: Info) -> JsonObject | None:
    policy: JsonObject | None = (info.pod_group_policy or {}).get("volcano")
    return policy


def _priority_class_names(info: Info) -> list[str]:
    names = []
    for rjob in info.jobset_spec.get("replicatedJobs") or ():
        pod_spec = (
            (((rjob.get("template") or {}).get("spec") or {}).get("template") or {}).get("spec")
        ) or {}
        if pod_spec.get("priorityClassName") is not None:
            names.append(str(pod_spec["priorityClassName"]))
    return names


class VolcanoPlugin(EnforcePodGroupPolicyPlugin, ComponentBuilderPlugin, CustomValidationPlugin):
    name = NAME

    def __init__(self, priority_classes: frozenset[str] = frozenset()) -> None:
        # The PriorityClasses the target cluster has: upstream asks the cluster; trainc
        # knows those declared among its inputs (PriorityClass objects).
        self.priority_classes = priority_classes

    def enforce_pod_group_policy(self, info: Info, job: TrainJobContext) -> None:
        if _policy(info) is None:
            return
        if info.pod_annotations is None:
            info.pod_annotations = {}
        info.pod_annotations[VOLCANO_GROUP_NAME_ANNOTATION] = job.name

    def sync_parallel_count(self, info: Info) -> None:
        return None

    def build(self, info: Info, job: TrainJobContext) -> list[JsonObject]:
        policy = _policy(info)
        if policy is None:
            return []
        spec: JsonObject = {"minMember": min_member(info), "minResources": min_resources(info)}
        if VOLCANO_QUEUE_ANNOTATION in info.annotations:
            spec["queue"] = info.annotations[VOLCANO_QUEUE_ANNOTATION]
        names = _priority_class_names(info)
        if names:
            spec["priorityClassName"] = names[-1]  # the last replicated job that sets one wins
        topology = policy.get("networkTopology")
        if topology is not None:
            spec["networkTopology"] = {
                "mode": topology.get("mode", ""),
                "highestTierAllowed": topology["highestTierAllowed"],
            }
        return [
            {
                "apiVersion": VOLCANO_API_VERSION,
                "kind": POD_GROUP_KIND,
                "metadata": job.object_metadata(),
                "spec": spec,
            }
        ]

    def validate(self, info: Info, job: TrainJobContext) -> list[FieldError]:
        if _policy(info) is None:
            return []
        errors: list[FieldError] = []
        queue = info.annotations.get(VOLCANO_QUEUE_ANNOTATION)
        if queue == "":
            errors.append(
                FieldError(
                    "FieldValueInvalid",
                    f"spec.annotations[{VOLCANO_QUEUE_ANNOTATION}]",
                    "Volcano queue name must not be empty",
                    queue,
                )
            )
        for name in _priority_class_names(info):
            if name in SYSTEM_PRIORITY_CLASSES:
                return errors
            if name not in self.priority_classes:
                errors.append(
                    FieldError(
                        "FieldValueInvalid",
                        "spec.templateSpec.priorityClassName",
                        f'PriorityClass "{name}" doesn\'t exist: '
                        f'PriorityClass.scheduling.k8s.io "{name}" not found '
                        "(declare the PriorityClass among the inputs if the cluster has it)",
                        name,
                    )
                )
        return errors
