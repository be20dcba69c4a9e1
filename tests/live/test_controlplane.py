"""The live control plane starts, serves the pinned versions and the CRDs, and admits a golden JobSet."""

from __future__ import annotations

import time
from typing import Any

import yaml

from tests.conformance.cases import GOLDEN, load_case
from tests.live.controlplane import RESOURCES, ControlPlane, create, resource_for

CRDS = {
    "clustertrainingruntimes.trainer.kubeflow.org",
    "trainingruntimes.trainer.kubeflow.org",
    "trainjobs.trainer.kubeflow.org",
    "jobsets.jobset.x-k8s.io",
    "podgroups.scheduling.x-k8s.io",
    "podgroups.scheduling.volcano.sh",
}


def _golden_objects(case: str) -> list[dict[str, Any]]:
    text = (GOLDEN / case / "expected.yaml").read_text()
    return [d for d in yaml.safe_load_all(text) if d]


def test_version_and_crds(control_plane: ControlPlane) -> None:
    client = control_plane.client()
    try:
        assert client.get("/version")["gitVersion"] == "v1.34.4"
        crds = client.get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions")["items"]
        assert {c["metadata"]["name"] for c in crds} >= CRDS
    finally:
        client.close()


def test_golden_jobset_accepted_with_dry_run(control_plane: ControlPlane) -> None:
    (jobset,) = [o for o in _golden_objects("torch-defaults") if o["kind"] == "JobSet"]
    jobset["metadata"].pop("ownerReferences")  # its owner does not exist here
    resource = resource_for(jobset)
    client = control_plane.client()
    try:
        code, answer = client.raw(
            "POST", resource.path("default"), jobset, {"dryRun": "All", "fieldValidation": "Strict"}
        )
        assert code == 201, answer
        # server defaults were applied, and nothing was stored
        ports_or_spec = answer["spec"]["replicatedJobs"][0]
        assert ports_or_spec["name"] == "node"
        code, _ = client.raw("GET", resource.path("default", jobset["metadata"]["name"]))
        assert code == 404
    finally:
        client.close()


def test_limited_token_is_forbidden(control_plane: ControlPlane) -> None:
    client = control_plane.client(control_plane.limited_token)
    try:
        code, answer = client.raw("GET", RESOURCES["JobSet"].path("default"))
        assert code == 403, answer
        assert "trainc-limited" in answer["message"]
    finally:
        client.close()


def test_trainer_controller_creates_the_jobset(trainer_controller: ControlPlane) -> None:
    """A golden's runtime and TrainJob, in a namespace of its own: the controller makes the JobSet."""
    case = load_case(GOLDEN / "torch-defaults")
    assert case is not None
    namespace = "live-trainer-test"
    client = trainer_controller.client()
    created: list[tuple[str, str | None, str]] = []
    try:
        client.request(
            "POST",
            "/api/v1/namespaces",
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}},
        )
        trainjob_uid = ""
        for path in case.inputs:
            for doc in yaml.safe_load_all(path.read_text()):
                resource = resource_for(doc)
                if resource.namespaced:
                    doc["metadata"]["namespace"] = namespace
                code, got = create(client, resource.path(doc["metadata"].get("namespace")), doc)
                assert code < 300, got
                created.append(
                    (doc["kind"], doc["metadata"].get("namespace"), doc["metadata"]["name"])
                )
                if doc["kind"] == "TrainJob":
                    trainjob_uid = got["metadata"]["uid"]
        deadline = time.monotonic() + 30
        jobsets: list[dict[str, Any]] = []
        while time.monotonic() < deadline and not jobsets:
            jobsets = client.get(RESOURCES["JobSet"].path(namespace))["items"]
            time.sleep(0.1)
        assert [j["metadata"]["name"] for j in jobsets] == ["bare-torch"]
        assert jobsets[0]["metadata"]["ownerReferences"][0]["uid"] == trainjob_uid
    finally:
        # The TrainJob first (no garbage collector runs), then what the controller made.
        for kind, ns, name in reversed(created):
            client.raw("DELETE", RESOURCES[kind].path(ns, name))
        time.sleep(0.5)
        for jobset in client.get(RESOURCES["JobSet"].path(namespace))["items"]:
            client.raw("DELETE", RESOURCES["JobSet"].path(namespace, jobset["metadata"]["name"]))
        client.close()


def test_every_golden_object_accepted_with_dry_run(control_plane: ControlPlane) -> None:
    """Each object of each golden expectation passes the real API server's create path."""
    client = control_plane.client()
    refused: dict[str, str] = {}
    try:
        for expected in sorted(GOLDEN.glob("*/expected.yaml")):
            for obj in yaml.safe_load_all(expected.read_text()):
                if not obj or (obj["kind"] == "Secret" and obj.get("data")):
                    continue  # generated key material is masked in goldens
                namespace = obj["metadata"].get("namespace")
                if namespace and client.raw("GET", f"/api/v1/namespaces/{namespace}")[0] == 404:
                    client.request(
                        "POST",
                        "/api/v1/namespaces",
                        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}},
                    )
                code, answer = client.raw(
                    "POST",
                    resource_for(obj).path(namespace),
                    obj,
                    {"dryRun": "All", "fieldValidation": "Strict"},
                )
                if code != 201:
                    refused[expected.parent.name] = str(answer.get("message", answer))
    finally:
        client.close()
    # a case whose objects the server refuses has no expected.yaml: it is a rejection
    assert not refused, refused
