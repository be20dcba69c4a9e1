"""CoScheduling: the scheduler-plugins PodGroup and its pod label (spec §10).

Upstream: pkg/runtime/framework/plugins/coscheduling/coscheduling.go.
"""

from __future__ import annotations

from compiler.render.framework import (
    ComponentBuilderPlugin,
    EnforcePodGroupPolicyPlugin,
    TrainJobContext,
)
from compiler.render.info import Info, JsonObject
from compiler.render.plugins.podgroup import min_member, min_resources
from compiler.upstream.names import (
    COSCHEDULING_API_VERSION,
    COSCHEDULING_POD_GROUP_LABEL,
    POD_GROUP_KIND,
)

NAME = "CoScheduling"


def _policy(info: Info) -> JsonObject | None:
    policy: JsonObject | None = (info.pod_group_policy or {}).get("coscheduling")
    return policy


class CoSchedulingPlugin(EnforcePodGroupPolicyPlugin, ComponentBuilderPlugin):
    name = NAME

    def enforce_pod_group_policy(self, info: Info, job: TrainJobContext) -> None:
        if _policy(info) is not None:
            info.pod_labels[COSCHEDULING_POD_GROUP_LABEL] = job.name

    def sync_parallel_count(self, info: Info) -> None:
        return None

    def build(self, info: Info, job: TrainJobContext) -> list[JsonObject]:
        policy = _policy(info)
        if policy is None:
            return []
        spec: JsonObject = {"minMember": min_member(info), "minResources": min_resources(info)}
        spec["scheduleTimeoutSeconds"] = policy["scheduleTimeoutSeconds"]
        return [
            {
                "apiVersion": COSCHEDULING_API_VERSION,
                "kind": POD_GROUP_KIND,
                "metadata": job.object_metadata(),
                "spec": spec,
            }
        ]
