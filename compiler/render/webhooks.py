"""The Trainer's admission webhooks (upstream pkg/webhooks), beside the plugins they call.

The TrainJob webhook runs each plugin's ``validate`` (the plugins live in
``render/plugins``); the checks several plugins share are here. The
(Cluster)TrainingRuntime webhook (``*trainingruntime_webhook.go``) is below it.

Every replicated job labelled with one of the three ancestors must run once and hold
its ancestor's container::

    spec.template.spec.replicatedJobs[0].replicas: Invalid value: 2: always must be 1

The webhook configuration skips runtimes labelled
``trainer.kubeflow.org/webhook-validation: disabled`` (an objectSelector), and so does trainc.
"""

from __future__ import annotations

from collections.abc import Set
from typing import Any

from compiler.apiserver.manifest import parse_field_path
from compiler.errors import FieldError
from compiler.kube.fielderror import error_body, field_type, go_value
from compiler.kube.godecode import unmarshal_error
from compiler.upstream.names import (
    ANCESTOR_TRAINER,
    DATASET_INITIALIZER,
    DEPRECATION_POLICY_URL,
    DEPRECATION_POLICY_URL_V2_1,
    LABEL_ANCESTOR,
    LAUNCHER,
    MODEL_INITIALIZER,
    NODE,
    SUPPORT_LABEL,
    WEBHOOK_VALIDATION_LABEL,
)
from compiler.upstream.versions import DEFAULT_TRAINER_VERSION, Gate, PerVersion

# --- what a webhook's denial says

# The defaulting webhook stamps every runtimePatches entry with the admission time,
# which the validating webhook's messages then show; trainc cannot know that time.
ADMISSION_TIME = "<admission time>"
TRAINJOB_TYPE = "trainer.v1alpha1.TrainJob"
_TIME_SENTINEL = "1970-01-01T00:00:00Z"


def as_defaulted(trainjob: dict[str, Any]) -> dict[str, Any]:
    """The TrainJob as the validating webhook sees it, after the defaulting webhook: each
    ``spec.runtimePatches[]`` without ``time`` gets one (a sentinel, see
    :data:`ADMISSION_TIME`). Only the changed path is copied; the rest is shared.

        >>> job = {"spec": {"runtimePatches": [{"manager": "a"}], "x": {}}}
        >>> done = as_defaulted(job)
        >>> done["spec"]["runtimePatches"][0]["time"], "time" in job["spec"]["runtimePatches"][0]
        ('1970-01-01T00:00:00Z', False)
    """
    spec = trainjob.get("spec")
    if not isinstance(spec, dict):
        return trainjob
    patches = spec.get("runtimePatches")
    if not isinstance(patches, list) or not any(
        isinstance(p, dict) and p.get("time") is None for p in patches
    ):
        return trainjob
    stamped = [
        {**p, "time": _TIME_SENTINEL} if isinstance(p, dict) and p.get("time") is None else p
        for p in patches
    ]
    return {**trainjob, "spec": {**spec, "runtimePatches": stamped}}


def webhook_text(error: FieldError, obj: dict[str, Any], root: str) -> str:
    """The body of a webhook's field error about ``obj`` (Go type ``root``), word for word
    as the denial prints it: ``Invalid value: <the field's value as Go marshals it>: ...``.

    An error made with a preformatted message (no ``type``) is returned as it is.
    """
    if not error.type:
        return error.message
    value = error.value
    go_type = field_type(root, error.path or parse_field_path(error.field or ""))
    if go_type is not None:
        value = go_value(value, go_type)
    text = error_body(error.type, value, error.message, go_type)
    return text.replace(f'"{_TIME_SENTINEL}"', f'"{ADMISSION_TIME}"')


def defaulting_errors(trainjob: dict[str, Any]) -> tuple[str, tuple[str | int, ...]] | None:
    """The TrainJob defaulting webhook's denial, if it cannot decode the TrainJob.

    It runs before the API server checks the schema, and decodes the object into Go
    first: a value of the wrong JSON type is denied with ``encoding/json``'s error
    (``json: cannot unmarshal string into Go struct field Trainer.spec.trainer.numNodes
    of type int32``), whatever else is wrong. Returns the message and where it is.
    """
    return unmarshal_error(trainjob, TRAINJOB_TYPE)


# --- checks the TrainJob webhook's plugins share


def reserved_env_errors(trainer: dict[str, Any], reserved: Set[str]) -> list[FieldError]:
    """The TrainJob's ``spec.trainer.env`` must not set the names a plugin computes.

    >>> [str(e) for e in reserved_env_errors({"env": [{"name": "B"}, {"name": "A"}]}, {"A", "B"})]
    ['spec.trainer.env: must not have reserved envs, invalid envs configured: [A B]']
    """
    envs = trainer.get("env") or []
    names = sorted({e.get("name") for e in envs if e.get("name") in reserved})
    if not names:
        return []
    message = f"must not have reserved envs, invalid envs configured: [{' '.join(names)}]"
    return [FieldError("FieldValueInvalid", "spec.trainer.env", message, envs)]


# --- the runtime webhook

_EXPECTED_CONTAINER = {
    ANCESTOR_TRAINER: NODE,
    DATASET_INITIALIZER: DATASET_INITIALIZER,
    MODEL_INITIALIZER: MODEL_INITIALIZER,
}


def webhook_applies(runtime: dict[str, Any]) -> bool:
    labels = (runtime.get("metadata") or {}).get("labels") or {}
    return labels.get(WEBHOOK_VALIDATION_LABEL) != "disabled"


# v2.1.0 requires each ancestor job's expected container and drops v2.0.0's rule that a
# job named ``launcher`` has one replica (measured in both releases' pkg/webhooks).
ANCESTOR_CONTAINER_CHECK = Gate(
    "v2.1.0", "runtime webhook: ancestor containers required; no launcher replicas rule"
)
# v2.1.0 added the warning on ClusterTrainingRuntimes labelled support: deprecated.
DEPRECATION_WARNING = Gate("v2.1.0", "runtime webhook: deprecated-runtime warning")


def validate_runtime(
    runtime: dict[str, Any], version: str = DEFAULT_TRAINER_VERSION
) -> list[FieldError]:
    """Errors for one defaulted runtime object, as the webhook reports them on create."""
    if not webhook_applies(runtime):
        return []
    errors: list[FieldError] = []
    jobs = (
        (((runtime.get("spec") or {}).get("template") or {}).get("spec") or {}).get(
            "replicatedJobs"
        )
    ) or []
    containers_checked = ANCESTOR_CONTAINER_CHECK.on(version)
    for index, job in enumerate(jobs):
        labels = ((job.get("template") or {}).get("metadata") or {}).get("labels")
        ancestor = (labels or {}).get(LABEL_ANCESTOR)
        path = f"spec.template.spec.replicatedJobs[{index}]"
        replicas = job.get("replicas", 0)
        one_replica = ancestor in _EXPECTED_CONTAINER or (
            not containers_checked and job.get("name") == LAUNCHER
        )
        if one_replica and replicas != 1:
            # Once, as upstream's error aggregate drops a repeated message (v2.0.0 checks
            # a launcher that is also an ancestor twice).
            errors.append(
                FieldError("FieldValueInvalid", f"{path}.replicas", "always must be 1", replicas)
            )
        if ancestor not in _EXPECTED_CONTAINER or not containers_checked:
            continue
        pod_spec = (
            (((job.get("template") or {}).get("spec") or {}).get("template") or {}).get("spec")
        ) or {}
        containers = pod_spec.get("containers") or []
        if not any(c.get("name") == _EXPECTED_CONTAINER[ancestor] for c in containers):
            errors.append(
                FieldError(
                    "FieldValueInvalid",
                    f"{path}.template.spec.template.spec.containers",
                    f"must contain the required container for the ancestor: {ancestor}",
                    containers,
                )
            )
    return errors


# Version differences of the runtime webhook (docs/trainer-versions.md).
DEPRECATION_URL = PerVersion(
    (("v2.1.0", DEPRECATION_POLICY_URL_V2_1), ("v2.3.0", DEPRECATION_POLICY_URL))
)


def deprecation_warning(
    runtime: dict[str, Any], version: str = DEFAULT_TRAINER_VERSION
) -> str | None:
    """The warning a ClusterTrainingRuntime labelled ``support: deprecated`` gets on create."""
    metadata = runtime.get("metadata") or {}
    if runtime.get("kind") != "ClusterTrainingRuntime" or not webhook_applies(runtime):
        return None
    if not DEPRECATION_WARNING.on(version):
        return None
    if (metadata.get("labels") or {}).get(SUPPORT_LABEL) != "deprecated":
        return None
    return (
        f'ClusterTrainingRuntime "{metadata.get("name", "")}" is deprecated and will be removed in a '
        f"future release of Kubeflow Trainer. See runtime deprecation policy: {DEPRECATION_URL.at(version)}"
    )
