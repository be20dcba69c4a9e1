from __future__ import annotations

from typing import Any

from compiler.expand.jobset_controller import construct_jobs, headless_service
from compiler.expand.jobset_webhook import default_jobset


def _jobset(**extra: Any) -> dict[str, Any]:
    def rjob(name: str, replicas: int, group: str = "default") -> dict[str, Any]:
        return {
            "name": name,
            "groupName": group,
            "replicas": replicas,
            "template": {
                "spec": {
                    "completions": 1,
                    "parallelism": 1,
                    "template": {"spec": {"containers": [{"name": "c", "image": "x:1"}]}},
                }
            },
        }

    return default_jobset(
        {
            "apiVersion": "jobset.x-k8s.io/v1alpha2",
            "kind": "JobSet",
            "metadata": {"name": "demo", "namespace": "ns", **extra},
            "spec": {"replicatedJobs": [rjob("init", 1, "prep"), rjob("node", 2)]},
        }
    )


def test_one_job_per_replica_with_the_jobset_labels() -> None:
    jobs = construct_jobs(_jobset())
    assert [j["metadata"]["name"] for j in jobs] == ["demo-init-0", "demo-node-0", "demo-node-1"]
    labels = jobs[2]["metadata"]["labels"]
    assert labels["jobset.sigs.k8s.io/job-global-index"] == "2"
    assert labels["jobset.sigs.k8s.io/job-group-index"] == "1"
    assert labels["jobset.sigs.k8s.io/group-replicas"] == "2"
    assert labels["jobset.sigs.k8s.io/global-replicas"] == "3"
    assert (
        labels["jobset.sigs.k8s.io/job-key"] == "59c6cdfe5973cef286b315e28fd88313422368a9"
    )  # sha1("ns/demo-node-1")
    pod_meta = jobs[2]["spec"]["template"]["metadata"]
    assert pod_meta["annotations"] == pod_meta["labels"] == labels
    assert jobs[2]["spec"]["template"]["spec"]["subdomain"] == "demo"
    assert jobs[2]["spec"]["suspend"] is False
    assert jobs[2]["metadata"]["ownerReferences"][0]["kind"] == "JobSet"


def test_node_selector_strategy_adds_selector_and_toleration() -> None:
    jobset = _jobset(
        annotations={
            "alpha.jobset.sigs.k8s.io/exclusive-topology": "rack",
            "alpha.jobset.sigs.k8s.io/node-selector": "true",
        }
    )
    pod = construct_jobs(jobset)[0]["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"alpha.jobset.sigs.k8s.io/namespaced-job": "ns_demo-init-0"}
    assert pod["tolerations"][-1]["key"] == "alpha.jobset.sigs.k8s.io/no-schedule"


def test_headless_service() -> None:
    service = headless_service(_jobset())
    assert service is not None
    assert service["metadata"]["name"] == "demo"
    assert service["spec"] == {
        "clusterIP": "None",
        "selector": {"jobset.sigs.k8s.io/jobset-name": "demo"},
        "publishNotReadyAddresses": True,
    }
    off = _jobset()
    off["spec"]["network"]["enableDNSHostnames"] = False
    assert headless_service(off) is None
    assert "subdomain" not in construct_jobs(off)[0]["spec"]["template"]["spec"]


def test_a_suspended_jobset_waits_with_the_jobs_that_depend_on_others() -> None:
    jobset = _jobset()
    jobset["spec"]["replicatedJobs"][1]["dependsOn"] = [{"name": "init", "status": "Complete"}]
    assert [j["metadata"]["name"] for j in construct_jobs(jobset)] == [
        "demo-init-0",
        "demo-node-0",
        "demo-node-1",
    ]
    jobset["spec"]["suspend"] = True
    jobs = construct_jobs(jobset)
    assert [j["metadata"]["name"] for j in jobs] == ["demo-init-0"]
    assert jobs[0]["spec"]["suspend"] is True
