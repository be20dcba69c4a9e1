from __future__ import annotations

from typing import Any

from compiler.expand.apiserver import create_job, create_pod, create_service, image_pull_policy


def _job(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "demo-node-0", "namespace": "ns", "labels": {"x": "y"}},
        "spec": {
            "template": {
                "spec": {
                    "serviceAccountName": "runner",
                    "containers": [
                        {"name": "c", "image": "busybox", "ports": [{"containerPort": 80}]}
                    ],
                    "volumes": [{"name": "v"}, {"name": "s", "secret": {"secretName": "s"}}],
                }
            },
            **spec,
        },
    }


def test_job_defaults_and_selector() -> None:
    job = create_job(_job())
    spec = job["spec"]
    assert (spec["completions"], spec["parallelism"], spec["backoffLimit"]) == (1, 1, 6)
    assert spec["completionMode"] == "NonIndexed"
    assert spec["podReplacementPolicy"] == "TerminatingOrFailed"
    assert (spec["suspend"], spec["manualSelector"]) == (False, False)
    uid = job["metadata"]["uid"]
    assert uid.startswith("00000000-0000-0000-0000-")
    assert spec["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    labels = spec["template"]["metadata"]["labels"]
    assert labels == {
        "controller-uid": uid,
        "batch.kubernetes.io/controller-uid": uid,
        "job-name": "demo-node-0",
        "batch.kubernetes.io/job-name": "demo-node-0",
    }
    pod = spec["template"]["spec"]
    assert pod["serviceAccount"] == "runner"  # the deprecated alias, written back
    assert (pod["dnsPolicy"], pod["restartPolicy"], pod["schedulerName"]) == (
        "ClusterFirst",
        "Always",
        "default-scheduler",
    )
    container = pod["containers"][0]
    assert container["imagePullPolicy"] == "Always"
    assert container["ports"] == [{"containerPort": 80, "protocol": "TCP"}]
    assert pod["volumes"] == [
        {"name": "v", "emptyDir": {}},
        {"name": "s", "secret": {"secretName": "s", "defaultMode": 420}},
    ]
    assert "enableServiceLinks" not in pod  # Pod-only default


def test_backoff_limit_per_index_and_failure_policy() -> None:
    spec = create_job(
        _job(
            backoffLimitPerIndex=1,
            podFailurePolicy={"rules": [{"action": "Ignore", "onPodConditions": [{"type": "X"}]}]},
        )
    )["spec"]
    assert spec["backoffLimit"] == 2147483647
    assert spec["podReplacementPolicy"] == "Failed"
    assert spec["podFailurePolicy"]["rules"][0]["onPodConditions"] == [
        {"type": "X", "status": "True"}
    ]


def test_pod_admission_of_a_plain_cluster() -> None:
    pod = create_pod(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"generateName": "demo-node-0-0-", "namespace": "ns"},
            "spec": {
                "containers": [
                    {"name": "c", "image": "x:1", "resources": {"limits": {"cpu": "2"}}}
                ],
                "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists"}],
            },
        }
    )
    assert pod["metadata"]["name"] == "demo-node-0-0-00000"
    spec = pod["spec"]
    assert spec["containers"][0]["resources"]["requests"] == {"cpu": "2"}
    assert (spec["serviceAccountName"], spec["serviceAccount"]) == ("default", "default")
    assert spec["volumes"][0]["name"] == "kube-api-access-00000"
    assert spec["containers"][0]["volumeMounts"] == [
        {
            "name": "kube-api-access-00000",
            "readOnly": True,
            "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
        }
    ]
    assert (spec["priority"], spec["preemptionPolicy"]) == (0, "PreemptLowerPriority")
    # not-ready is tolerated already: only unreachable is added
    assert [t["key"] for t in spec["tolerations"]] == [
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
    ]
    assert spec["enableServiceLinks"] is True


def test_no_token_volume_when_automount_is_off() -> None:
    pod = create_pod(
        {
            "metadata": {"name": "p"},
            "spec": {"automountServiceAccountToken": False, "containers": [{"name": "c"}]},
        }
    )
    assert "volumes" not in pod["spec"]


def test_headless_service() -> None:
    spec = create_service(
        {"kind": "Service", "metadata": {"name": "s"}, "spec": {"clusterIP": "None"}}
    )["spec"]
    assert spec == {
        "clusterIP": "None",
        "sessionAffinity": "None",
        "type": "ClusterIP",
        "internalTrafficPolicy": "Cluster",
        "clusterIPs": ["None"],
        "ipFamilies": ["IPv4"],
        "ipFamilyPolicy": "SingleStack",
    }


def test_image_pull_policy() -> None:
    assert image_pull_policy("reg.io:5000/a/b:1.2") == "IfNotPresent"
    assert image_pull_policy("reg.io:5000/a/b") == "Always"
    assert image_pull_policy("UPPER/case") == "Always"  # UPPER is a registry host
    assert image_pull_policy("Busybox") == "IfNotPresent"  # does not parse


def test_resource_quantities_are_rounded_up_to_milli_units() -> None:
    # SetDefaults_ResourceList (pkg/apis/core/v1/defaults.go) on every created Job and Pod
    resources = {
        "requests": {"cpu": "1500u", "memory": "1.5M", "example.com/x": "1n"},
        "limits": {"cpu": "250m", "memory": 2},
    }
    spec = {"containers": [{"name": "a", "image": "i", "resources": resources}]}
    job = create_job({"metadata": {"name": "j"}, "spec": {"template": {"spec": spec}}})
    stored = job["spec"]["template"]["spec"]["containers"][0]["resources"]
    assert stored["requests"] == {"cpu": "2m", "memory": "1.5M", "example.com/x": "1m"}
    assert stored["limits"] == {"cpu": "250m", "memory": 2}
    pod = create_pod(
        {"metadata": {"name": "p"}, "spec": {"initContainers": [{**spec["containers"][0]}]}}
    )
    assert pod["spec"]["initContainers"][0]["resources"]["requests"]["cpu"] == "2m"
