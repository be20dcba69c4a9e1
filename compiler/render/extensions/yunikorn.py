"""YuniKorn gang scheduling (``yunikorn``): task groups on the pod templates, no PodGroup.

Trainer v2.3.0 gang-schedules through coscheduling and Volcano PodGroups only. Apache
YuniKorn needs no PodGroup object: a gang is described on the pods themselves. The
formats, from YuniKorn's documentation and source:

- ``docs/user_guide/gang_scheduling.md`` (apache/yunikorn-site): the pod annotations
  ``yunikorn.apache.org/task-group-name`` (the pod's group),
  ``yunikorn.apache.org/task-groups`` (a JSON list of every group of the application:
  ``name``, ``minMember``, ``minResource`` and the placement fields ``nodeSelector``,
  ``tolerations``, ``affinity``, ``topologySpreadConstraints``, copies of the real
  pod's) and ``yunikorn.apache.org/schedulingPolicyParameters``
  (``"placeholderTimeoutInSeconds=N gangSchedulingStyle=Soft|Hard"``); the label
  ``applicationId`` and ``queue``; ``schedulerName: yunikorn``.
- ``pkg/common/constants/constants.go`` (apache/yunikorn-k8shim): ``LabelApplicationID =
  "applicationId"``, ``LabelQueueName = "queue"``, ``SchedulerName = "yunikorn"``; and the
  shim's ``GetTaskGroupsFromAnnotation``, which decodes the task-groups annotation as a
  JSON list and refuses a group without a name or minMember.

One task group per replicated job, named after it; ``minMember`` is its pod count and
``minResource`` one pod's requests, so the gang totals are trainc's coscheduling
``minMember``/``minResources`` (``compiler.render.plugins.podgroup``). Every pod carries the
whole list (YuniKorn reads the application's metadata from whichever pod comes first).
The application id is ``<namespace>-<trainjob>``: unique in the cluster, as YuniKorn
needs. Not checked against YuniKorn's code (its Go module is not available here):
tests check the documented format.
"""

from __future__ import annotations

import json

from compiler.kube.podrequests import sum_requests
from compiler.render.extensions.base import (
    Extension,
    ExtensionPlugin,
    Parameter,
    Parameters,
    choice,
    integer,
    text,
)
from compiler.render.framework import (
    AmendObjectsPlugin,
    EnforcePodGroupPolicyPlugin,
    TrainJobContext,
)
from compiler.render.info import Info, JsonObject, PodSet

NAME = "yunikorn"
SCHEDULER_NAME = "yunikorn"
TASK_GROUP_NAME = "yunikorn.apache.org/task-group-name"
TASK_GROUPS = "yunikorn.apache.org/task-groups"
POLICY_PARAMETERS = "yunikorn.apache.org/schedulingPolicyParameters"
APPLICATION_ID = "applicationId"
QUEUE = "queue"
PLACEMENT_FIELDS = ("nodeSelector", "tolerations", "affinity", "topologySpreadConstraints")

PARAMETERS = (
    Parameter("queue", text, "the YuniKorn queue (label queue), e.g. root.ml"),
    Parameter(
        "placeholder-timeout-seconds",
        integer(1),
        "placeholderTimeoutInSeconds: how long to wait for every placeholder",
    ),
    Parameter("gang-scheduling-style", choice("Soft", "Hard"), "gangSchedulingStyle"),
)


def _single_pod_resources(pod_set: PodSet) -> dict[str, str]:
    totals = sum_requests([(pod_set.single_pod_requests, 1)])
    return {name: totals[name].canonical() for name in sorted(totals)}


def task_groups(info: Info, pod_specs: dict[str, JsonObject]) -> list[JsonObject]:
    """One group per replicated job with pods, in template order."""
    groups: list[JsonObject] = []
    for pod_set in info.pod_sets:
        if pod_set.count == 0:
            continue
        group: JsonObject = {
            "name": pod_set.name,
            "minMember": pod_set.count,
            "minResource": _single_pod_resources(pod_set),
        }
        pod_spec = pod_specs.get(pod_set.name) or {}
        for key in PLACEMENT_FIELDS:
            if pod_spec.get(key):
                group[key] = pod_spec[key]
        groups.append(group)
    return groups


def policy_parameters(params: Parameters) -> str:
    parts = []
    if "placeholder-timeout-seconds" in params:
        parts.append(f"placeholderTimeoutInSeconds={params['placeholder-timeout-seconds']}")
    if "gang-scheduling-style" in params:
        parts.append(f"gangSchedulingStyle={params['gang-scheduling-style']}")
    return " ".join(parts)


class YuniKornExtension(ExtensionPlugin, EnforcePodGroupPolicyPlugin, AmendObjectsPlugin):
    name = f"extension {NAME}"

    def __init__(self, params: Parameters) -> None:
        self.params = dict(params)

    def enforce_pod_group_policy(self, info: Info, job: TrainJobContext) -> None:
        info.pod_labels[APPLICATION_ID] = f"{job.namespace}-{job.name}"
        if "queue" in self.params:
            info.pod_labels[QUEUE] = str(self.params["queue"])

    def amend(self, objects: list[JsonObject], info: Info, job: TrainJobContext) -> None:
        for jobset in (o for o in objects if o.get("kind") == "JobSet"):
            rjobs = jobset["spec"].get("replicatedJobs") or []
            templates = {r["name"]: r["template"]["spec"]["template"] for r in rjobs}
            groups = task_groups(info, {n: t.get("spec") or {} for n, t in templates.items()})
            encoded = json.dumps(groups, separators=(",", ":"), sort_keys=True)
            parameters = policy_parameters(self.params)
            for name, template in templates.items():
                template.setdefault("spec", {})["schedulerName"] = SCHEDULER_NAME
                annotations = template.setdefault("metadata", {}).setdefault("annotations", {})
                annotations[TASK_GROUP_NAME] = name
                annotations[TASK_GROUPS] = encoded
                if parameters:
                    annotations[POLICY_PARAMETERS] = parameters


def _check_runtime(spec: JsonObject, params: Parameters) -> list[str]:
    if spec.get("podGroupPolicy"):
        return [f"{NAME} replaces podGroupPolicy: remove it (it would create a PodGroup too)"]
    return []


EXTENSION = Extension(
    name=NAME,
    summary="YuniKorn gang scheduling with task-group annotations (no PodGroup object)",
    plugin=YuniKornExtension,
    parameters=PARAMETERS,
    check_runtime=_check_runtime,
)
