"""YuniKorn: the documented annotation format (yunikorn-site docs/user_guide/gang_scheduling.md,
yunikorn-k8shim constants and GetTaskGroupsFromAnnotation). Not an oracle comparison:
YuniKorn's Go module is not available here."""

from __future__ import annotations

import json
import re
from typing import Any

from compiler.kube.quantity import Quantity
from compiler.render.extensions.yunikorn import YuniKornExtension
from compiler.render.framework import TrainJobContext
from compiler.render.info import Info, PodSet
from compiler.render.plugins.podgroup import min_member, min_resources


def pod_set(name: str, count: int, cpu: str, memory: str) -> PodSet:
    requests = {"cpu": Quantity.parse(cpu), "memory": Quantity.parse(memory)}
    return PodSet(name, None, count, [], [], [], requests)


def template(spec: dict[str, object] | None = None) -> dict[str, object]:
    return {"template": {"spec": {"template": {"spec": spec or {}}}}}


def render() -> tuple[Info, Any]:
    info = Info(
        {}, {}, None, None, {}, [pod_set("init", 1, "1", "1Gi"), pod_set("node", 3, "500m", "2Gi")]
    )
    job = TrainJobContext({"metadata": {"name": "run", "namespace": "ml"}, "spec": {}})
    plugin = YuniKornExtension(
        {"queue": "root.ml", "placeholder-timeout-seconds": 60, "gang-scheduling-style": "Hard"}
    )
    plugin.enforce_pod_group_policy(info, job)
    jobset = {
        "kind": "JobSet",
        "spec": {
            "replicatedJobs": [
                {"name": "init", **template()},
                {"name": "node", **template({"nodeSelector": {"gpu": "a100"}})},
            ]
        },
    }
    plugin.amend([jobset], info, job)
    return info, jobset


def test_pod_templates_carry_the_documented_annotations_and_scheduler() -> None:
    info, jobset = render()
    assert info.pod_labels == {"applicationId": "ml-run", "queue": "root.ml"}
    for rjob in jobset["spec"]["replicatedJobs"]:
        pod = rjob["template"]["spec"]["template"]
        assert pod["spec"]["schedulerName"] == "yunikorn"
        annotations = pod["metadata"]["annotations"]
        assert annotations["yunikorn.apache.org/task-group-name"] == rjob["name"]
        # "PARAM1=VALUE1 PARAM2=VALUE2": space-separated key=value pairs
        parameters = annotations["yunikorn.apache.org/schedulingPolicyParameters"]
        assert re.fullmatch(r"(\w+=\w+)( \w+=\w+)*", parameters)
        assert parameters == "placeholderTimeoutInSeconds=60 gangSchedulingStyle=Hard"


def test_task_groups_are_a_json_list_whose_totals_are_the_coscheduling_gang() -> None:
    info, jobset = render()
    pod = jobset["spec"]["replicatedJobs"][1]["template"]["spec"]["template"]
    groups = json.loads(pod["metadata"]["annotations"]["yunikorn.apache.org/task-groups"])
    assert groups == [
        {"name": "init", "minMember": 1, "minResource": {"cpu": "1", "memory": "1Gi"}},
        {
            "name": "node",
            "minMember": 3,
            "minResource": {"cpu": "500m", "memory": "2Gi"},
            "nodeSelector": {"gpu": "a100"},
        },
    ]
    # every group has what the shim requires: a name and minMember (and a minResource map)
    assert all(g["name"] and g["minMember"] > 0 and g["minResource"] for g in groups)
    assert sum(g["minMember"] for g in groups) == min_member(info)
    total = sum(
        Quantity.parse(g["minResource"]["cpu"]).milli_value() * g["minMember"] for g in groups
    )
    assert Quantity.parse(min_resources(info)["cpu"]).milli_value() == total == 2500
