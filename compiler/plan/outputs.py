"""The API server's create path for what the controller would create.

The Trainer controller creates each object it builds through the API server. An object
the server refuses (its CRD's schema or CEL rules) is never created: the reconcile
fails, the TrainJob gets a ``TrainJobResourcesCreationFailed`` event, and none of its
objects exist. So a rendered object the server would refuse is a problem of the
render (rule ``output-schema``), located at the input field that produced the bad
field, never in the output.

The steps, in the API server's order:

1. the server-side apply's typed patch (:mod:`compiler.apiserver.typed_patch`): two
   items of a keyed list with the same key are refused here, before anything else;
2. on a Trainer release whose installation runs the JobSet webhooks
   (``BELOW_THE_JOBSET``), a JobSet goes through the mutating webhook before it is
   validated: its JSON patch adds what Go's encoding of the JobSet has and the body had
   not, ``containers: null`` for a pod template without containers among them, and the
   schema then refuses the ``null`` (``must be of type array``), not a missing field;
   it is worked out when the JobSet as sent is refused, or has a place where the patch
   writes a ``null`` into a JobSet that is otherwise valid (``patch_may_add_null``: a
   ``projected`` volume without ``sources``, a ``dataSource`` without ``apiGroup``);
3. the schema and the CEL rules.

The stage also keeps each object as the server would store it (its CRD defaults
applied): ``check``'s policies see that form, and ``render --server-defaults`` writes
it. Objects of core kinds (ConfigMap, Secret) have no CRD and are kept as rendered.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from compiler.apiserver.crd_rules import NOT_CHECKED, check_rules
from compiler.apiserver.crds import CrdInfo, CrdSet, admit, load_crd
from compiler.apiserver.manifest import format_path
from compiler.apiserver.typed_patch import TypedPatchError, typed_patch_errors, typed_patch_message
from compiler.errors import FieldError, ObjectRef, Problem
from compiler.expand import webhook_defaults
from compiler.expand.downstream import BELOW_THE_JOBSET
from compiler.expand.jobset_webhook import patch_may_add_null
from compiler.expand.refusal import NOT_CREATED, event_message
from compiler.kube.gotext import aggregated
from compiler.kube.roundtrip import RoundTripError
from compiler.model.objects import AdmittedOutput, RenderedObject, TrainJobSummary
from compiler.provenance.locate import locate_output
from compiler.render.info import json_copy
from compiler.upstream.artifacts import DEFAULT_TRAINER_VERSION, upstream

__all__ = ["AdmittedOutput", "admit_output", "output_crds"]


@cache
def _pinned_output_crds(version: str) -> dict[tuple[str, str], CrdInfo]:
    out: dict[tuple[str, str], CrdInfo] = {}
    for path in upstream(version).output_crd_paths():
        for info in load_crd(path):
            out.setdefault((info.group, info.kind), info)
    return out


def output_crds(crds: CrdSet, version: str = DEFAULT_TRAINER_VERSION) -> CrdSet:
    """The pinned CRDs of the rendered kinds, replaced kind by kind by those in ``crds``.

    ``crds`` holds the Trainer CRDs plus whatever ``--schemas DIR`` gave (a JobSet CRD
    exported from the cluster wins over the pinned one).
    """
    return CrdSet({**_pinned_output_crds(version), **crds.crds}, crds.object_meta, crds.kubernetes)


def crd_name(crd: CrdInfo) -> str:
    return f"{crd.plural}.{crd.group}/{crd.version}"


def _ref(data: dict[str, Any]) -> ObjectRef:
    metadata = data.get("metadata") or {}
    return ObjectRef(
        str(data.get("kind", "")), str(metadata.get("name", "")), metadata.get("namespace")
    )


def admit_output(
    summary: TrainJobSummary,
    rendered: RenderedObject,
    crds: CrdSet,
    version: str = DEFAULT_TRAINER_VERSION,
) -> AdmittedOutput:
    """Run ``rendered`` through the create path of its CRD (the apply's typed patch,
    the JobSet mutating webhook on Trainer ``version``, schema, defaults, CEL rules)."""
    data = rendered.data
    api_version, kind = str(data.get("apiVersion", "")), str(data.get("kind", ""))
    crd = crds.get(api_version, kind) if "/" in api_version else None
    if crd is None:  # a core kind, or a kind whose CRD is not pinned
        return AdmittedOutput(summary, rendered, data, [], "/" not in api_version)
    stored = json_copy(data)
    schema_errors = admit(stored, crd, crds)
    if any(e.message.startswith(_DUPLICATE) for e in schema_errors):
        # the schema's list-type uniqueness covers the typed patch's duplicates: only an
        # object it refuses can be one the apply refuses first
        typed = typed_patch_errors(data, crd.schema)
        if typed:
            problems = _apply_refusal(summary, data, crd, typed)
            return AdmittedOutput(summary, rendered, None, problems, True)
    all_cel_errors = check_rules(stored, crd, schema_errors, kubernetes=crds.kubernetes)
    refused = bool(schema_errors or all_cel_errors)
    if kind == "JobSet" and BELOW_THE_JOBSET.on(version) and (refused or patch_may_add_null(data)):
        # the JobSet's mutating webhook patches it before it is validated: its verdict
        # can differ only where the patch changes a refused field or writes a null
        mutated = _after_mutating_webhook(data)
        if mutated is not None:
            patched_errors = admit(mutated, crd, crds, keep_nulls=True)
            patched_cel = check_rules(mutated, crd, patched_errors, kubernetes=crds.kubernetes)
            if refused or patched_errors or patched_cel:
                stored, schema_errors, all_cel_errors = mutated, patched_errors, patched_cel
    # The "some validation rules were not checked" error repeats the schema errors.
    cel_errors = [e for e in all_cel_errors if not e.message.endswith(NOT_CHECKED)]
    problems = [
        _problem(summary, data, crd, check, error)
        for check, errors in (("schema", schema_errors), ("cel", cel_errors))
        for error in errors
    ]
    if problems:
        problems.append(_creation_failure(summary, data, crd, [*schema_errors, *all_cel_errors]))
    return AdmittedOutput(summary, rendered, None if problems else stored, problems, True)


_DUPLICATE = "Duplicate value: "


def _after_mutating_webhook(data: dict[str, Any]) -> dict[str, Any] | None:
    """The JobSet after the JobSet mutating webhook's patch; None when the webhook could
    not decode it into its Go type (not modelled: the schema's verdict stands)."""
    try:
        return webhook_defaults(data)
    except RoundTripError:
        return None


def _apply_refusal(
    summary: TrainJobSummary, data: dict[str, Any], crd: CrdInfo, errors: list[TypedPatchError]
) -> list[Problem]:
    """The problems of an object whose server-side apply the API server refuses: each
    error at the input that wrote the repeated item, then the controller's event."""
    trainjob = summary.trainjob
    assert trainjob is not None
    details: tuple[tuple[str, str], ...] = (
        ("check", "server-side apply"),
        ("crd", crd_name(crd)),
        ("renderedFrom", str(trainjob.ref)),
    )
    problems = [
        Problem(
            error.message,
            locate_output(data, error.path, trainjob, summary.runtime),
            _ref(data),
            format_path(error.path),
            "output-schema",
            stage="output",
            details=details,
        )
        for error in errors
    ]
    problems.append(
        Problem(
            event_message(typed_patch_message(data, errors))
            + f" (the API server refuses the server-side apply of the {crd.kind} the "
            f"controller would create: {NOT_CREATED})",
            trainjob.locate(("metadata", "name")),
            trainjob.ref,
            None,
            "output-schema",
            stage="output",
            details=details[1:],
        )
    )
    return problems


def _problem(
    summary: TrainJobSummary,
    data: dict[str, Any],
    crd: CrdInfo,
    check: str,
    error: FieldError,
) -> Problem:
    trainjob = summary.trainjob
    assert trainjob is not None
    return Problem(
        error.message,
        locate_output(data, error.path, trainjob, summary.runtime),
        _ref(data),
        error.field,
        "output-schema",
        stage="output",
        details=(("check", check), ("crd", crd_name(crd)), ("renderedFrom", str(trainjob.ref))),
    )


def _creation_failure(
    summary: TrainJobSummary, data: dict[str, Any], crd: CrdInfo, errors: list[FieldError]
) -> Problem:
    """What the controller reports when the server refuses one of its objects.

    Its event reads ``TrainJob resources reconciliation failed: JobSet.jobset.x-k8s.io
    "name" is invalid: [field: message, ...]`` (the API server's StatusError text; one
    error bare).
    """
    trainjob = summary.trainjob
    assert trainjob is not None
    name = str((data.get("metadata") or {}).get("name", ""))
    causes = aggregated(
        e.message if e.field is None else f"{e.field or '<nil>'}: {e.message}" for e in errors
    )
    return Problem(
        f'TrainJob resources reconciliation failed: {crd.kind}.{crd.group} "{name}" is '
        f"invalid: {causes} (the API server refuses the {crd.kind} the controller would "
        f"create: {NOT_CREATED})",
        trainjob.locate(("metadata", "name")),
        trainjob.ref,
        None,
        "output-schema",
        stage="output",
        details=(("crd", crd_name(crd)), ("renderedFrom", str(trainjob.ref))),
    )
