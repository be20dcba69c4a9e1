"""A JobSet the JobSet webhook refuses, as ``render`` reports it.

The Trainer controller applies the JobSet; the API server calls the validating
webhook, which refuses it; the controller's reconcile fails and the TrainJob gets a
``TrainJobResourcesCreationFailed`` event reading (``trainjob_controller.go``, the
error cut at 950 characters)::

    TrainJob resources reconciliation failed: admission webhook "vjobset.kb.io" denied
    the request: JobSet.jobset.x-k8s.io "<name>" is invalid: <errors>

No JobSet, Job or Pod is created. :func:`refusal_problems` gives one problem per
webhook error, located at the input that caused it (a generated Job or Pod name that
is too long: the TrainJob's ``metadata.name``; a field of the JobSet: where the
runtime, a runtime patch or the TrainJob wrote it), then the event itself at the
TrainJob's name. Rule ``jobset-webhook``; exit 2 like every render error.
"""

from __future__ import annotations

from typing import Any

from compiler.apiserver.manifest import Manifest
from compiler.errors import FieldError, ObjectRef, Problem, SourceLocation
from compiler.expand import JobSetRefused
from compiler.expand.jobset_webhook import JOB_NAME_TOO_LONG, POD_NAME_TOO_LONG
from compiler.provenance.locate import locate_output

__all__ = ["NOT_CREATED", "RULE", "event_message", "refusal_problems"]

RULE = "jobset-webhook"
_EVENT_LIMIT = 950
_NAME_ERRORS = (JOB_NAME_TOO_LONG, POD_NAME_TOO_LONG)
# What follows a refused object of the Trainer's. It applies a TrainJob's objects in its
# plugins' order, which comes from a Go map: another order after each controller start.
# Said briefly: the CLI shortens a line past its limit in the middle.
NOT_CREATED = (
    "the TrainJob gets a TrainJobResourcesCreationFailed event, and the objects applied "
    "after it are not created"
)


def event_message(error_text: str) -> str:
    """The Trainer controller's event for a failed reconcile (``%.950v``, then `` ...``)."""
    message = f"TrainJob resources reconciliation failed: {error_text[:_EVENT_LIMIT]}"
    return f"{message} ..." if len(error_text) > _EVENT_LIMIT else message


def _location(
    error: FieldError, jobset: dict[str, Any], trainjob: Manifest, runtime: Manifest | None
) -> SourceLocation:
    if any(error.message.endswith(text) for text in _NAME_ERRORS):
        return trainjob.locate(("metadata", "name"))
    if error.path:
        return locate_output(jobset, error.path, trainjob, runtime)
    return trainjob.locate(())


def refusal_problems(
    refused: JobSetRefused, jobset: dict[str, Any], trainjob: Manifest, runtime: Manifest | None
) -> list[Problem]:
    """The problems of a JobSet (rendered from ``trainjob``) the webhook refuses."""
    meta = jobset.get("metadata") or {}
    ref = ObjectRef("JobSet", str(meta.get("name", "")), meta.get("namespace"))
    details = (("webhook", "vjobset.kb.io"), ("renderedFrom", str(trainjob.ref)))
    problems = [
        Problem(
            error.message,
            _location(error, jobset, trainjob, runtime),
            ref,
            error.field if error.field != "<nil>" else None,
            RULE,
            stage="output",
            details=details,
        )
        for error in refused.errors
    ]
    problems.append(
        Problem(
            event_message(refused.message)
            + f" (the JobSet webhook refuses the JobSet the controller would create: {NOT_CREATED})",
            trainjob.locate(("metadata", "name")),
            trainjob.ref,
            None,
            RULE,
            stage="output",
            details=details,
        )
    )
    return problems
