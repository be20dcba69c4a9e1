"""The live control plane starts, serves the pinned versions and the CRDs, and admits a golden JobSet."""

from __future__ import annotations

import time
from typing import Any

import yaml

from tests.conformance.cases import GOLDEN, load_case
from tests.live.controlplane import RESOURCES, ControlPlane, resource_for

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
    case = load_case(GOLDEN / "torch-defaults")
    client = trainer_controller.client()
    created: list[tuple[str, str | None, str]] = []
    try:
        trainjob_uid = ""
        for path in case.inputs:
            for doc in yaml.safe_load_all(path.read_text()):
                resource = resource_for(doc)
                namespace = (
                    doc["metadata"].get("namespace", "default") if resource.namespaced else None
                )
                got = client.request("POST", resource.path(namespace), doc)
                created.append((doc["kind"], namespace, doc["metadata"]["name"]))
                if doc["kind"] == "TrainJob":
                    trainjob_uid = got["metadata"]["uid"]
        deadline = time.monotonic() + 30
        jobsets: list[dict[str, Any]] = []
        while time.monotonic() < deadline and not jobsets:
            jobsets = client.get(RESOURCES["JobSet"].path("default"))["items"]
            time.sleep(0.1)
        assert [j["metadata"]["name"] for j in jobsets] == ["bare-torch"]
        assert jobsets[0]["metadata"]["ownerReferences"][0]["uid"] == trainjob_uid
        created.append(("JobSet", "default", "bare-torch"))
    finally:
        for kind, namespace, name in reversed(created):
            client.raw("DELETE", RESOURCES[kind].path(namespace, name))
        client.close()
