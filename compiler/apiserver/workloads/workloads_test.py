"""The public API: issue 27's table rows word for word, Pods, versions, the message.

The same rows run against kube-apiserver's own code in
``tests/pods/test_validate_differential.py``.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from compiler.apiserver.workloads import (
    PLACEHOLDER_UID,
    UnsupportedKubernetesVersion,
    invalid_message,
    validate_job,
    validate_pod,
)
from compiler.errors import FieldError

C0 = "spec.template.spec.containers[0]"
LABEL_REGEX = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_'"
    " or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or"
    " 'my_value',  or '12345', regex used for validation is"
    " '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)

# issue 27's table: what the runtime's node container (or an overlay) has -> the error
TABLE: dict[str, str] = {
    "cpu-request-above-limit": (
        f'{C0}.resources.requests: Invalid value: "4": must be less than or equal to cpu limit of 2'
    ),
    "gpu-request-below-limit": (
        f'{C0}.resources.requests: Invalid value: "1": must be equal to nvidia.com/gpu limit of 2'
    ),
    "gpu-request-without-limit": (
        f"{C0}.resources.limits: Required value: Limit must be set for non overcommitable resources"
    ),
    "mount-without-volume": f'{C0}.volumeMounts[0].name: Not found: "data"',
    "env-name-with-equals": (
        f'{C0}.env[0].name: Invalid value: "1BAD=NAME": a valid environment variable name'
        " must consist only of printable ASCII characters other than '='"
    ),
    "restart-policy-always": (
        'spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"'
    ),
    "toleration-exists-with-value": (
        'spec.template.spec.tolerations[0].operator: Invalid value: "present": value must be'
        " empty when `operator` is 'Exists'"
    ),
    "node-selector-value-with-space": (
        f'spec.template.spec.nodeSelector: Invalid value: "nvidia tesla": {LABEL_REGEX}'
    ),
}


def good_job() -> dict[str, Any]:
    """A Job as the JobSet controller creates it for a torch TrainJob's node replica."""
    labels = {
        "jobset.sigs.k8s.io/jobset-name": "llm",
        "jobset.sigs.k8s.io/replicatedjob-name": "node",
    }
    return {
        "metadata": {"name": "llm-node-0", "namespace": "team", "labels": dict(labels)},
        "spec": {
            "parallelism": 2,
            "completions": 2,
            "backoffLimit": 0,
            "completionMode": "Indexed",
            "template": {
                "metadata": {"labels": dict(labels)},
                "spec": {
                    "restartPolicy": "OnFailure",
                    "subdomain": "llm",
                    "containers": [
                        {
                            "name": "node",
                            "image": "pytorch/pytorch:2.7.1",
                            "env": [{"name": "PET_NNODES", "value": "2"}],
                            "resources": {
                                "requests": {"cpu": "2", "nvidia.com/gpu": 2},
                                "limits": {"cpu": "4", "nvidia.com/gpu": 2},
                            },
                            "volumeMounts": [{"name": "data", "mountPath": "/data"}],
                        }
                    ],
                    "volumes": [{"name": "data", "emptyDir": {}}],
                },
            },
        },
    }


def table_job(row: str) -> dict[str, Any]:
    """:func:`good_job` with the one change of ``row``."""
    job = good_job()
    spec = job["spec"]["template"]["spec"]
    container = spec["containers"][0]
    resources = container["resources"]
    if row == "cpu-request-above-limit":
        resources["requests"]["cpu"], resources["limits"]["cpu"] = "4", 2
    elif row == "gpu-request-below-limit":
        resources["requests"]["nvidia.com/gpu"] = 1
    elif row == "gpu-request-without-limit":
        del resources["limits"]["nvidia.com/gpu"]
    elif row == "mount-without-volume":
        spec["volumes"] = []
    elif row == "env-name-with-equals":
        container["env"][0]["name"] = "1BAD=NAME"
    elif row == "restart-policy-always":
        spec["restartPolicy"] = "Always"
    elif row == "toleration-exists-with-value":
        spec["tolerations"] = [{"key": "nvidia.com/gpu", "operator": "Exists", "value": "present"}]
    elif row == "node-selector-value-with-space":
        spec["nodeSelector"] = {"nvidia.com/gpu.product": "nvidia tesla"}
    else:
        raise KeyError(row)
    return job


def texts(errors: list[FieldError]) -> list[str]:
    return [str(e) for e in errors]


def test_the_jobset_controllers_job_is_valid() -> None:
    assert validate_job(good_job()) == []


@pytest.mark.parametrize("row", list(TABLE))
def test_each_table_row_is_refused_with_the_api_servers_words(row: str) -> None:
    job = table_job(row)
    assert texts(validate_job(job)) == [TABLE[row]]
    message = invalid_message("Job", "llm-node-0", validate_job(job))
    assert message == f'Job.batch "llm-node-0" is invalid: {TABLE[row]}'


def test_validation_does_not_change_the_callers_object() -> None:
    job = good_job()
    before = copy.deepcopy(job)
    validate_job(job)
    assert job == before


def test_several_errors_are_listed_in_brackets_once_each() -> None:
    job = table_job("restart-policy-always")
    job["spec"]["template"]["spec"]["nodeSelector"] = {"a": "nvidia tesla", "b": "nvidia tesla"}
    errors = validate_job(job)
    assert len(errors) == 3  # the two nodeSelector errors print the same
    message = invalid_message("Job", "llm-node-0", errors)
    assert message == (
        f'Job.batch "llm-node-0" is invalid: [{TABLE["node-selector-value-with-space"]},'
        f" {TABLE['restart-policy-always']}]"
    )


def test_a_gpu_limit_alone_is_its_request_in_a_pod_not_in_a_job_template() -> None:
    job = good_job()
    del job["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["nvidia.com/gpu"]
    assert validate_job(job) == []  # no request: nothing to compare
    pod = {"metadata": {"name": "p"}, "spec": copy.deepcopy(job["spec"]["template"]["spec"])}
    pod["spec"]["containers"][0]["resources"] = {"requests": {"nvidia.com/gpu": 1}}
    assert texts(validate_pod(pod)) == [
        "spec.containers[0].resources.limits: Required value: Limit must be set for non"
        " overcommitable resources"
    ]
    pod["spec"]["containers"][0]["resources"] = {"limits": {"nvidia.com/gpu": 1}}
    assert validate_pod(pod) == []  # SetDefaults_Pod copies the limit into the requests


def test_a_pods_restart_policy_always_is_fine_but_a_jobs_is_not() -> None:
    spec = copy.deepcopy(good_job()["spec"]["template"]["spec"])
    spec["restartPolicy"] = "Always"
    assert validate_pod({"metadata": {"name": "llm-node-0-0-xxxxx"}, "spec": spec}) == []


def test_a_generated_pod_name_gets_the_placeholder_suffix() -> None:
    spec = copy.deepcopy(good_job()["spec"]["template"]["spec"])
    pod = {"metadata": {"generateName": "Bad-"}, "spec": spec}
    generated, name = validate_pod(pod)
    assert str(generated).startswith('metadata.generateName: Invalid value: "Bad-": a lowercase')
    assert str(name).startswith('metadata.name: Invalid value: "Bad-xxxxx": a lowercase')
    pod["metadata"] = {}
    assert texts(validate_pod(pod)) == [
        "metadata.name: Required value: name or generateName is required"
    ]


def test_the_generated_selector_quotes_the_placeholder_uid() -> None:
    job = good_job()
    job["spec"]["template"]["metadata"]["labels"]["batch.kubernetes.io/controller-uid"] = "other"
    assert texts(validate_job(job))[0].startswith(
        "spec.template.metadata.labels[batch.kubernetes.io/controller-uid]: Invalid value:"
    )
    assert f"must be '{PLACEHOLDER_UID}'" in texts(validate_job(job))[0]


def test_an_indexed_job_name_must_leave_room_for_the_index() -> None:
    job = good_job()
    job["metadata"]["name"] = "x" * 62
    assert (
        f"will not able to create pod with invalid DNS label: {'x' * 62}-1"
        in texts(validate_job(job))[-1]
    )
    job["metadata"]["name"] = "x" * 61
    assert validate_job(job) == []


def test_only_v1_34_is_emulated() -> None:
    assert validate_job(good_job(), kubernetes="v1.34.4") == []
    assert validate_job(good_job(), kubernetes="1.34") == []
    with pytest.raises(UnsupportedKubernetesVersion, match=r"v1\.34 only, not v1\.31"):
        validate_job(good_job(), kubernetes="v1.31")


def test_the_message_quotes_the_name_as_go_does() -> None:
    error = FieldError("FieldValueRequired", "spec", "Required value")
    assert invalid_message("Pod", 'a"b', [error]) == 'Pod "a\\"b" is invalid: spec: Required value'
    assert invalid_message("Job", "a", []) == 'Job.batch "a" is invalid'


def _wrong_types(value: Any, rng: Any, depth: int = 0) -> Any:
    """``value`` with some leaves or containers replaced by values of another JSON type."""
    if rng.random() < 0.08 and depth > 1:
        return rng.choice(["x", 7, -1, 1.5, True, None, [], {}, ["a"], {"a": 1}])
    if isinstance(value, dict):
        return {k: _wrong_types(v, rng, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_wrong_types(v, rng, depth + 1) for v in value]
    return value


def test_wrongly_typed_objects_are_decode_errors_never_tracebacks() -> None:
    import random

    from compiler.apiserver.workloads import ServerPanic, WorkloadDecodeError

    rng = random.Random(27)
    decode_errors = 0
    for _ in range(400):  # bounded: a few hundred mangled objects
        job = _wrong_types(good_job(), rng)
        pod = {"metadata": job.get("metadata"), "spec": (job.get("spec") or {}).get("template")}
        for validate, obj in ((validate_job, job), (validate_pod, pod)):
            try:
                validate(obj)
            except WorkloadDecodeError:
                decode_errors += 1
            except ServerPanic:
                pass
    assert decode_errors > 50  # the test reaches the decoding failures


def test_the_server_copy_is_deep_whatever_the_data_holds() -> None:
    from collections import OrderedDict

    from compiler.apiserver.workloads import _copy

    shared = {"a": [1]}
    for data in ({"x": shared, "y": shared}, {"x": OrderedDict(a=[1]), "y": shared}):
        copied = _copy(data)
        assert copied == data
        copied["x"]["a"].append(2)
        assert shared == {"a": [1]} and data["x"]["a"] == [1]
