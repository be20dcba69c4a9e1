"""The API server's decode defaults: what validation sees, and idempotence."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from compiler.apiserver.workloads.defaults import (
    default_job,
    default_pod,
    drop_disabled_fields,
    image_tag,
)


@pytest.mark.parametrize(
    ("image", "tag"),
    [
        ("busybox", "latest"),
        ("busybox:latest", "latest"),
        ("busybox:1.36", "1.36"),
        ("ghcr.io/kubeflow/trainer/torch", "latest"),
        ("localhost:5000/x:dev", "dev"),
        ("busybox@sha256:" + "a" * 64, ""),
        ("Busybox", ""),  # not a reference: IfNotPresent
        ("UPPER/case", "latest"),  # an upper-case first component is a registry host
        ("", ""),
        ("a" * 64, ""),  # an image ID
    ],
)
def test_image_tag(image: str, tag: str) -> None:
    assert image_tag(image) == tag


def test_job_defaults_and_their_idempotence() -> None:
    job: dict[str, Any] = {
        "metadata": {"name": "j"},
        "spec": {
            "template": {
                "metadata": {"labels": {"a": "b"}},
                "spec": {
                    "containers": [
                        {"name": "c", "image": "busybox", "ports": [{"containerPort": 80}]}
                    ]
                },
            }
        },
    }
    default_job(job)
    spec = job["spec"]
    assert (spec["completions"], spec["parallelism"], spec["backoffLimit"]) == (1, 1, 6)
    assert spec["completionMode"] == "NonIndexed"
    assert spec["podReplacementPolicy"] == "TerminatingOrFailed"
    # one map, as in Go: labels the server adds to the template show on the Job too
    assert job["metadata"]["labels"] is spec["template"]["metadata"]["labels"]
    pod_spec = spec["template"]["spec"]
    assert pod_spec["restartPolicy"] == "Always"
    container = pod_spec["containers"][0]
    assert container["imagePullPolicy"] == "Always"
    assert container["ports"][0]["protocol"] == "TCP"
    again = copy.deepcopy(job)
    default_job(again)
    assert again == job


def test_backoff_limit_with_per_index_limit() -> None:
    job = {"spec": {"backoffLimitPerIndex": 1, "template": {"spec": {}}}}
    default_job(job)
    assert job["spec"]["backoffLimit"] == 2147483647


def test_a_pods_limits_are_its_missing_requests() -> None:
    pod = {
        "spec": {
            "containers": [{"resources": {"limits": {"cpu": "1"}, "requests": {"memory": "1Gi"}}}]
        }
    }
    default_pod(pod)
    assert pod["spec"]["containers"][0]["resources"]["requests"] == {"memory": "1Gi", "cpu": "1"}


def test_disabled_gates_fields_are_dropped() -> None:
    spec = {
        "securityContext": {"hostUsers": False},
        "hostnameOverride": "x",
        "containers": [{"restartPolicy": "Always", "lifecycle": {"stopSignal": "SIGTERM"}}],
        "initContainers": [{"restartPolicy": "Always"}, {"restartPolicy": "Never"}],
    }
    drop_disabled_fields(spec)
    assert spec == {
        "securityContext": {},
        "containers": [{"lifecycle": {}}],
        "initContainers": [{"restartPolicy": "Always"}, {}],
    }
