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

from compiler.errors import FieldError
from compiler.upstream.names import (
    ANCESTOR_TRAINER,
    DATASET_INITIALIZER,
    DEPRECATION_POLICY_URL,
    LABEL_ANCESTOR,
    MODEL_INITIALIZER,
    NODE,
    SUPPORT_LABEL,
    WEBHOOK_VALIDATION_LABEL,
)

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


def validate_runtime(runtime: dict[str, Any]) -> list[FieldError]:
    """Errors for one defaulted runtime object, as the webhook reports them on create."""
    if not webhook_applies(runtime):
        return []
    errors: list[FieldError] = []
    jobs = (
        (((runtime.get("spec") or {}).get("template") or {}).get("spec") or {}).get(
            "replicatedJobs"
        )
    ) or []
    for index, job in enumerate(jobs):
        labels = ((job.get("template") or {}).get("metadata") or {}).get("labels")
        ancestor = (labels or {}).get(LABEL_ANCESTOR)
        if ancestor not in _EXPECTED_CONTAINER:
            continue
        path = f"spec.template.spec.replicatedJobs[{index}]"
        replicas = job.get("replicas", 0)
        if replicas != 1:
            errors.append(
                FieldError("FieldValueInvalid", f"{path}.replicas", "always must be 1", replicas)
            )
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


def deprecation_warning(runtime: dict[str, Any]) -> str | None:
    """The warning a ClusterTrainingRuntime labelled ``support: deprecated`` gets on create."""
    metadata = runtime.get("metadata") or {}
    if runtime.get("kind") != "ClusterTrainingRuntime" or not webhook_applies(runtime):
        return None
    if (metadata.get("labels") or {}).get(SUPPORT_LABEL) != "deprecated":
        return None
    return (
        f'ClusterTrainingRuntime "{metadata.get("name", "")}" is deprecated and will be removed in a '
        f"future release of Kubeflow Trainer. See runtime deprecation policy: {DEPRECATION_POLICY_URL}"
    )
