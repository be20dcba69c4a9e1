"""The control plane at the pod depth: JobSet's webhooks and controller and the Job
controller (kube-controller-manager) make a TrainJob's Jobs, headless Service and
Pending Pods; the JobSet as the Trainer sent it is read from the audit log."""

from __future__ import annotations

from typing import Any

import yaml

from tests.conformance.cases import GOLDEN, load_case
from tests.live import workloads
from tests.live.conformance_live import clean, run_case
from tests.live.controlplane import RESOURCES, ControlPlane
from tests.live.workload_refusals import FIXTURE, trainjob_name_rows


def _case(name: str) -> Any:
    case = load_case(GOLDEN / name)
    assert case is not None
    return case


def test_four_nodes_become_one_job_one_service_four_pending_pods(
    pods_plane: ControlPlane,
) -> None:
    client = pods_plane.client()
    try:
        clean(client)
        live = run_case(client, _case("torch-numnodes-override"), 60, pods_plane.audit_log, True)
        assert live.workloads is not None
        assert live.workloads.failures == [] and live.workloads.timed_out == []
        objects = workloads.normalise_workloads(live.workloads.objects)
        names = [(o["kind"], o["metadata"]["name"]) for o in objects]
        assert names == [
            ("Job", "four-nodes-node-0"),
            *[("Pod", f"four-nodes-node-0-{i}-<random>") for i in range(4)],
            ("Service", "four-nodes"),
        ]
        pods = [o for o in live.workloads.objects if o["kind"] == "Pod"]
        assert all(p["status"]["phase"] == "Pending" for p in pods)  # no scheduler, no kubelet
        hostnames = sorted(p["spec"]["hostname"] for p in pods)
        assert hostnames == [f"four-nodes-node-0-{i}" for i in range(4)]
        assert {p["spec"]["subdomain"] for p in pods} == {"four-nodes"}
        assert {p["spec"]["serviceAccountName"] for p in pods} == {"default"}
        job = next(o for o in objects if o["kind"] == "Job")
        assert job["metadata"]["ownerReferences"][0]["uid"] == "<uid of JobSet four-nodes>"
        assert job["spec"]["completionMode"] == "Indexed"  # JobSet's mutating webhook
        # The JobSet as the Trainer sent it has none of JobSet's defaults; the stored one has.
        assert live.jobsets_as_sent
        (sent,) = [o for o in live.objects if o["kind"] == "JobSet"]
        (stored,) = live.stored_jobsets
        sent_job = sent["spec"]["replicatedJobs"][0]["template"]["spec"]
        stored_job = stored["spec"]["replicatedJobs"][0]["template"]["spec"]
        assert "completionMode" not in sent_job
        assert stored_job["completionMode"] == "Indexed"
        assert "uid" not in sent["metadata"]
    finally:
        clean(client)
        client.close()


def test_dependent_jobs_are_created_once_the_harness_finishes_their_dependencies(
    pods_plane: ControlPlane,
) -> None:
    """torchtune's node Job waits (dependsOn Complete) for the initializers; the harness
    reports their Pods Succeeded, after recording them, as a kubelet would."""
    client = pods_plane.client()
    try:
        clean(client)
        live = run_case(
            client, _case("torchtune-llama3.2-1b-defaults"), 90, pods_plane.audit_log, True
        )
        assert live.workloads is not None
        assert live.workloads.timed_out == [], live.workloads.timed_out
        jobs = sorted(o["metadata"]["name"] for o in live.workloads.objects if o["kind"] == "Job")
        assert len(jobs) == 3 and any(j.endswith("-node-0") for j in jobs), jobs
        assert len(live.workloads.finished) == 2, live.workloads.finished
        pods = [o for o in live.workloads.objects if o["kind"] == "Pod"]
        # recorded as created: Pending, the Job controller's tracking finalizer still on
        assert all(p["status"]["phase"] == "Pending" for p in pods)
        assert all("batch.kubernetes.io/job-tracking" in p["metadata"]["finalizers"] for p in pods)
    finally:
        clean(client)
        client.close()


def test_in_order_startup_creates_every_job_once_the_harness_reports_ready(
    pods_plane: ControlPlane,
) -> None:
    """startupPolicy InOrder: the JobSet controller creates a replicated job's Jobs only
    when the previous ones are ready; the harness reports their Pods Running and Ready."""
    client = pods_plane.client()
    try:
        clean(client)
        live = run_case(
            client, _case("custom-extra-jobs-subdomain"), 90, pods_plane.audit_log, True
        )
        assert live.workloads is not None
        assert live.workloads.timed_out == [], live.workloads.timed_out
        jobs = sorted(o["metadata"]["name"] for o in live.workloads.objects if o["kind"] == "Job")
        assert jobs == [
            "extra-jobs-evaluator-0",
            "extra-jobs-node-0",
            *[f"extra-jobs-param-server-{i}" for i in range(3)],
        ]
    finally:
        clean(client)
        client.close()


def test_trainjob_names_of_49_and_63_characters_as_recorded(pods_plane: ControlPlane) -> None:
    """Issue 27's names through the Trainer and JobSet's validating webhook: the Trainer's
    creation-failure events say exactly what the fixture records; 48 characters pass."""
    recorded = yaml.safe_load(FIXTURE.read_text())["trainJobNames"]
    client = pods_plane.client()
    try:
        clean(client)
        rows = trainjob_name_rows(client)
    finally:
        clean(client)
        client.close()
    assert rows == recorded
    by_length = {row["nameLength"]: row for row in rows}
    assert by_length[48] == {"nameLength": 48, "jobSetCreated": True, "events": []}
    assert "pod names generated for this JobSet will exceed 63" in by_length[49]["events"][0]
    assert "job names generated for this JobSet will exceed 63" in by_length[63]["events"][0]


def _jobset(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicatedJobs": [
                {
                    "name": "node",
                    "replicas": 1,
                    "template": {
                        "spec": {
                            "completions": 1,  # the pod-name check needs it
                            "parallelism": 1,
                            "template": {
                                "spec": {"containers": [{"name": "node", "image": "busybox"}]}
                            },
                        }
                    },
                }
            ]
        },
    }


def test_jobset_webhooks_default_and_refuse(pods_plane: ControlPlane) -> None:
    """Straight to the API server: 49 characters refused by vjobset.kb.io (an Invalid
    status, 422), 48 admitted and defaulted by mjobset.kb.io."""
    client = pods_plane.client()
    path = RESOURCES["JobSet"].path("default")
    try:
        name = "a" * 49
        code, answer = client.raw("POST", path, _jobset(name), {"dryRun": "All"})
        assert code == 422, answer
        assert answer["message"] == (
            f'admission webhook "vjobset.kb.io" denied the request: JobSet.jobset.x-k8s.io '
            f'"{name}" is invalid: spec.replicatedJobs[0].name: Invalid value: "{name}-node-0": '
            "JobSet name is too long, pod names generated for this JobSet will exceed 63 characters"
        )
        code, answer = client.raw("POST", path, _jobset("a" * 48), {"dryRun": "All"})
        assert code == 201, answer
        template = answer["spec"]["replicatedJobs"][0]["template"]["spec"]
        assert template["completionMode"] == "Indexed"
        assert template["template"]["spec"]["restartPolicy"] == "OnFailure"
        assert answer["spec"]["network"]["enableDNSHostnames"] is True
    finally:
        client.close()
