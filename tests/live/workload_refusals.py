"""The API server's refusals of bad Jobs and Pods (issue 27's table), asked of the real
kube-apiserver v1.34.4 with ``dryRun=All``; the answers are kept, word for word, in
``tests/live/fixtures/workload-refusals.yaml`` for trainc's Job/Pod validation to match.

Each row changes the node container (``container``, merged key by key into
``containers[0]``; lists are appended) or the pod spec (``pod``, merged key by key) of
:func:`base_job` (the Job the JobSet controller makes for golden ``torch-defaults``'s
JobSet: Indexed, restartPolicy OnFailure, the JobSet labels), then creates it as a Job
and its pod template as a Pod (in a namespace with a ``default`` ServiceAccount, as the
ServiceAccount admission plugin needs). The fixture records the HTTP code, the Status
message and causes of each.

``python -m tests.live.workload_refusals`` starts a control plane and rewrites the
fixture; ``test_workload_refusals.py`` checks that the server still says exactly that.
"""

from __future__ import annotations

import copy
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from tests.conformance.cases import GOLDEN, load_case
from tests.live.controlplane import RESOURCES, ApiError, Client, Json, create, running

FIXTURE = Path(__file__).parent / "fixtures" / "workload-refusals.yaml"
NAMESPACE = "live-workload-refusals"
JOBSET = "bare-torch"
JOB = f"{JOBSET}-node-0"

# (name, the wording, container changes, pod spec changes)
ROWS: tuple[tuple[str, str, Json, Json], ...] = (
    (
        "cpu-request-above-limit",
        "requests cpu 4, limits cpu 2",
        {"resources": {"requests": {"cpu": "4"}, "limits": {"cpu": "2"}}},
        {},
    ),
    (
        "gpu-request-not-limit",
        "nvidia.com/gpu requests 1, limits 2",
        {"resources": {"requests": {"nvidia.com/gpu": "1"}, "limits": {"nvidia.com/gpu": "2"}}},
        {},
    ),
    (
        "gpu-requests-only",
        "nvidia.com/gpu requests only",
        {"resources": {"requests": {"nvidia.com/gpu": "1"}}},
        {},
    ),
    (
        "volume-mount-without-volume",
        "a volumeMount data and no volume",
        {"volumeMounts": [{"name": "data", "mountPath": "/data"}]},
        {},
    ),
    (
        "env-name-invalid",
        "env name 1BAD=NAME",
        {"env": [{"name": "1BAD=NAME", "value": "x"}]},
        {},
    ),
    ("restart-policy-always", "restartPolicy Always", {}, {"restartPolicy": "Always"}),
    (
        "toleration-exists-with-value",
        "a toleration operator: Exists with a value",
        {},
        {
            "tolerations": [
                {"key": "nvidia.com/gpu", "operator": "Exists", "value": "present"},
            ]
        },
    ),
    (
        "node-selector-value-space",
        "nodeSelector value nvidia tesla",
        {},
        {"nodeSelector": {"accelerator": "nvidia tesla"}},
    ),
    # Controls: the same fields, valid; both must be accepted.
    (
        "control-gpu-requests-equal-limits",
        "nvidia.com/gpu requests 2, limits 2 (valid)",
        {"resources": {"requests": {"nvidia.com/gpu": "2"}, "limits": {"nvidia.com/gpu": "2"}}},
        {},
    ),
    (
        "control-cpu-request-below-limit",
        "requests cpu 2, limits cpu 4 (valid)",
        {"resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "4"}}},
        {},
    ),
)


def base_job() -> Json:
    """The Job the JobSet controller creates for ``golden/torch-defaults`` (replicated job
    ``node``, index 0), as it sends it: no selector, no server defaults."""
    labels = {
        "jobset.sigs.k8s.io/jobset-name": JOBSET,
        "jobset.sigs.k8s.io/replicatedjob-name": "node",
        "jobset.sigs.k8s.io/replicatedjob-replicas": "1",
        "jobset.sigs.k8s.io/group-name": "default",
        "jobset.sigs.k8s.io/group-replicas": "1",
        "jobset.sigs.k8s.io/job-index": "0",
        "jobset.sigs.k8s.io/job-group-index": "0",
        "jobset.sigs.k8s.io/job-global-index": "0",
        "trainer.kubeflow.org/trainjob-ancestor-step": "trainer",
    }
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": JOB, "namespace": NAMESPACE, "labels": dict(labels)},
        "spec": {
            "completionMode": "Indexed",
            "completions": 1,
            "parallelism": 1,
            "backoffLimit": 0,
            "template": {
                "metadata": {"labels": dict(labels)},
                "spec": {
                    "restartPolicy": "OnFailure",
                    "subdomain": JOBSET,
                    "containers": [
                        {
                            "name": "node",
                            "image": "pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime",
                            "resources": {},
                        }
                    ],
                },
            },
        },
    }


def _merge(target: Json, changes: Json) -> None:
    """Key by key: dicts merge, lists are appended, anything else replaces."""
    for key, value in changes.items():
        if isinstance(value, dict) and isinstance(target.get(key), dict):
            _merge(target[key], value)
        elif isinstance(value, list) and isinstance(target.get(key), list):
            target[key] = target[key] + copy.deepcopy(value)
        else:
            target[key] = copy.deepcopy(value)


def job_for(container: Json, pod: Json) -> Json:
    job = base_job()
    pod_spec = job["spec"]["template"]["spec"]
    _merge(pod_spec["containers"][0], container)
    _merge(pod_spec, pod)
    return job


def pod_for(job: Json) -> Json:
    """The Job's pod template as a Pod (the shape the Job controller gives it: the
    template's metadata and spec, a name)."""
    template = copy.deepcopy(job["spec"]["template"])
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {**template.get("metadata", {}), "name": f"{JOB}-0", "namespace": NAMESPACE},
        "spec": template["spec"],
    }


def prepare(client: Client) -> None:
    """The namespace and its ``default`` ServiceAccount (no ServiceAccount controller may run)."""
    if client.raw("GET", RESOURCES["Namespace"].path(name=NAMESPACE))[0] == 404:
        client.request(
            "POST",
            RESOURCES["Namespace"].path(),
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
        )
    path = RESOURCES["ServiceAccount"].path(NAMESPACE)
    if client.raw("GET", f"{path}/default")[0] == 404:
        account = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default"}}
        code, got = client.raw("POST", path, account)
        if code >= 300 and code != 409:  # 409: the ServiceAccount controller was first
            raise ApiError(code, got, f"POST {path}")


def answer(client: Client, obj: Json) -> Json:
    """The server's verdict on creating ``obj`` (dryRun=All, strict fields)."""
    resource = RESOURCES[str(obj["kind"])]
    code, got = client.raw(
        "POST",
        resource.path(NAMESPACE),
        obj,
        {"dryRun": "All", "fieldValidation": "Strict"},
    )
    if code < 300:
        return {"code": code}
    status: dict[str, Any] = got if isinstance(got, dict) else {"message": str(got)}
    return {
        "code": code,
        "reason": status.get("reason"),
        "message": status.get("message"),
        "causes": (status.get("details") or {}).get("causes") or [],
    }


def table(client: Client) -> list[Json]:
    """Every row with the server's answers for the Job and for the Pod."""
    prepare(client)
    rows = []
    for name, wording, container, pod in ROWS:
        job = job_for(container, pod)
        rows.append(
            {
                "name": name,
                "row": wording,
                "container": container,
                "pod": pod,
                "job": answer(client, job),
                "podAnswer": answer(client, pod_for(job)),
            }
        )
    return rows


# TrainJob name lengths on golden torch-defaults' runtime: 48 is the longest whose pod
# names (``<name>-node-0-0-xxxxx``) fit 63 characters; from 49 JobSet's validating
# webhook refuses the Trainer's JobSet, and at 63 the job names too.
NAME_LENGTHS = (48, 49, 63)
CREATION_FAILED = "TrainJobResourcesCreationFailed"


def trainjob_name_rows(client: Client, timeout: float = 30.0) -> list[Json]:
    """For each of NAME_LENGTHS, a TrainJob of that name through the Trainer and JobSet's
    webhooks (needs a control plane with both): the Trainer's creation-failure events, or
    none when the JobSet is created."""
    case = load_case(GOLDEN / "torch-defaults")
    assert case is not None
    prepare(client)
    rows = []
    for length in NAME_LENGTHS:
        name = ("t" * length)[:length]
        uid = ""
        for path in case.inputs:
            for doc in yaml.safe_load_all(path.read_text()):
                resource = RESOURCES[str(doc["kind"])]
                if doc["kind"] == "TrainJob":
                    doc["metadata"] = {"name": name, "namespace": NAMESPACE}
                namespace = NAMESPACE if resource.namespaced else None
                code, got = create(client, resource.path(namespace), doc)
                if doc["kind"] == "TrainJob":
                    assert code == 201, got
                    uid = got["metadata"]["uid"]
        deadline = time.monotonic() + timeout
        events: list[str] = []
        created = False
        while time.monotonic() < deadline and not events and not created:
            time.sleep(0.2)
            events = sorted(
                {
                    str(e.get("message"))
                    for e in client.get(RESOURCES["Event"].path(NAMESPACE)).get("items") or []
                    if e.get("reason") == CREATION_FAILED
                    and (e.get("involvedObject") or {}).get("uid") == uid
                }
            )
            created = client.raw("GET", RESOURCES["JobSet"].path(NAMESPACE, name))[0] == 200
        for kind in ("TrainJob", "JobSet"):
            client.raw("DELETE", RESOURCES[kind].path(NAMESPACE, name))
        rows.append({"nameLength": length, "jobSetCreated": created, "events": events})
    return rows


HEADER = """\
# The real kube-apiserver's answers to issue 27's table of bad Jobs and Pods, written by
# `python -m tests.live.workload_refusals` (tests/live/workload_refusals.py says how each
# object is made) and checked by tests/live/test_workload_refusals.py. `container` is
# merged into the node container, `pod` into the pod spec (lists appended); `job` is the
# answer to the Job the JobSet controller would create, `podAnswer` to its pod template
# as a Pod. The messages are what trainc's Job/Pod validation must print.
# `trainJobNames`: TrainJobs named with 48, 49 and 63 characters on torch-defaults'
# runtime, through the Trainer v2.3.0 controller and JobSet v0.12.0's webhooks: the
# Trainer's TrainJobResourcesCreationFailed events (the webhook's denial as it reports it).
"""


def document(rows: list[Json], names: list[Json], version: str) -> str:
    body = {
        "kubeApiserver": version,
        "namespace": NAMESPACE,
        "job": JOB,
        "rows": rows,
        "trainJobNames": names,
    }
    return HEADER + yaml.safe_dump(body, sort_keys=False, width=1_000_000)


def main() -> int:
    with running(trainer=True, pods=True) as plane:
        client = plane.client()
        try:
            rows = table(client)
            names = trainjob_name_rows(client)
            version = str(client.get("/version")["gitVersion"])
        finally:
            client.close()
    FIXTURE.parent.mkdir(exist_ok=True)
    FIXTURE.write_text(document(rows, names, version))
    print(f"{FIXTURE}: {len(rows)} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
