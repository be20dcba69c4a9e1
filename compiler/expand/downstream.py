"""What ``render`` checks below the JobSet, and the mark of an expanded tree.

:func:`downstream_problems` runs one TrainJob's stored JobSet through the JobSet
webhooks (a refusal: :mod:`compiler.expand.refusal`), then, for each registered
workload check (:data:`WORKLOAD_CHECKS`: the API server's validation of a kind, e.g.
``Job`` or ``Pod``), through the JobSet and Job controllers: an object the API server
would refuse is a render error worded as the component that creates it reports it,

    job "<job>" creation failed with error: Job.batch "<job>" is invalid: ...   (JobSet controller)
    Error creating: Pod "<pod>" is invalid: ...                                 (Job controller)

each field error located at the input that wrote the field (the pod template of the
replicated job, as the runtime, a runtime patch or an overlay wrote it; a field an
output overlay's strategic patch wrote, with the value it has, at that patch's line:
:func:`overlay_location`). The Jobs of
one replicated job differ only in their index, and so do a Job's Pods: the first of
each number of digits stands for the others (:func:`representatives`). The verdict
is taken on the objects without the controllers' Go round trips; only a refusal is
worked out again on the objects exactly as they are sent, for its words. A refused
Job is reported with every other refused replica of its replicated job: the JobSet
controller creates them all at once and joins the refusals in one event, a line per
Job in the order the creates came back (random); trainc lists them by index, and a
comparison with the cluster's event must take its lines as a set. A refused Pod is
the first one (the Job controller creates an Indexed Job's Pods from index 0).

A replicated job the JobSet controller never creates is not checked: one that waits for
Jobs whose completion meets the success policy first
(:func:`~compiler.expand.jobset_controller.never_created`); render warns about it
instead (:func:`never_created_warnings`).

The checks are found, not imported: :func:`workload_checks` takes
``validate_job``/``validate_pod`` from ``compiler.apiserver.workloads`` when that
package is there, so this layer does not depend on it.

An expanded tree is not for applying: each expanded object carries
:data:`EXPANDED_ANNOTATION`, and an input that carries it is refused
(:func:`expanded_input_problems`, rule ``expanded``) by every verb that reads inputs,
``apply`` and ``argocd generate`` among them.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import inspect
import marshal
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import cache
from typing import TYPE_CHECKING, Any, cast

from compiler.apiserver.manifest import Manifest, format_path
from compiler.errors import FieldError, JsonPath, ObjectRef, Problem, SourceLocation
from compiler.expand import JobSetRefused
from compiler.expand import names as n
from compiler.expand.apiserver import (
    ADMISSION_FORBIDDEN,
    create_job,
    create_pod,
    pod_admission_errors,
    prepare_pod,
)
from compiler.expand.job_controller import initial_pod_count, job_pods
from compiler.expand.jobset_controller import construct_job, never_created
from compiler.expand.jobset_webhook import default_jobset, invalid_message, validate_create
from compiler.expand.pod_webhook import mutate_pod
from compiler.expand.refusal import refusal_problems
from compiler.provenance.locate import locate_output
from compiler.upstream.versions import Gate

if TYPE_CHECKING:  # overlays are loaded only by plans that have some
    from compiler.overlay.overlays import Overlay

__all__ = [
    "BELOW_THE_JOBSET",
    "EXPANDED_ANNOTATION",
    "WORKLOAD_CHECKS",
    "downstream_problems",
    "expanded_input_problems",
    "mark_expanded",
    "never_created_warnings",
    "overlay_location",
    "workload_checks",
]

# The JobSet below emulated is v0.12.0, the one Trainer v2.3.0 installs; the older
# releases install JobSet 0.11.1, 0.10.1 and 0.8.2, whose webhooks differ (0.8 has no
# groupName, which v0.12.0's webhook checks): their renders are not checked below the
# JobSet.
BELOW_THE_JOBSET = Gate("v2.3.0", "render checks below the JobSet (JobSet v0.12.0)")

EXPANDED_ANNOTATION = "trainc.dev/expanded"
EXPANDED_RULE = "expanded"
DOWNSTREAM_RULE = "downstream"

WorkloadCheck = Callable[[Mapping[str, Any]], list[FieldError]]
# kind -> the API server's validation of an object of that kind, in addition to those
# workload_checks() finds (tests register theirs here)
WORKLOAD_CHECKS: dict[str, WorkloadCheck] = {}
_WORKLOADS_MODULE = "compiler.apiserver.workloads"
_FOUND = {"Job": "validate_job", "Pod": "validate_pod"}


def workload_checks() -> dict[str, WorkloadCheck]:
    """The registered checks, and the API server's Job/Pod validation where it exists."""
    return {**_found_checks(), **WORKLOAD_CHECKS}


@cache
def _found_checks() -> dict[str, WorkloadCheck]:
    """The API server's Job/Pod validation where it exists (looked for once: a module
    search per JobSet was a tenth of the remembered verdict's cost)."""
    found: dict[str, WorkloadCheck] = {}
    if importlib.util.find_spec(_WORKLOADS_MODULE) is not None:
        module = importlib.import_module(_WORKLOADS_MODULE)
        for kind, name in _FOUND.items():
            check = getattr(module, name, None)
            if callable(check):
                found[kind] = check
    return found


def mark_expanded(obj: dict[str, Any], depth: str) -> dict[str, Any]:
    """``obj`` annotated as part of an expanded tree (never to be applied)."""
    meta = obj.setdefault("metadata", {})
    meta["annotations"] = {**(meta.get("annotations") or {}), EXPANDED_ANNOTATION: depth}
    return obj


def expanded_input_problems(manifests: Iterable[Manifest]) -> list[Problem]:
    """An input that an expanded render wrote: refused, as no cluster must get it."""
    return [
        Problem(
            f"this {manifest.kind} was written by `trainc render --expand` (annotation "
            f"{EXPANDED_ANNOTATION}): it shows what the controllers would create, it is not "
            "an input and must not be applied; render or apply the TrainJobs instead",
            manifest.locate(("metadata", "annotations", EXPANDED_ANNOTATION)),
            manifest.ref,
            f"metadata.annotations[{EXPANDED_ANNOTATION}]",
            EXPANDED_RULE,
        )
        for manifest in manifests
        if EXPANDED_ANNOTATION in ((manifest.data.get("metadata") or {}).get("annotations") or {})
    ]


def _jobset_path(kind: str, rjob_index: int, path: JsonPath) -> JsonPath:
    """The JobSet field a Job's or Pod's field was copied from."""
    base: JsonPath = ("spec", "replicatedJobs", rjob_index, "template")
    if kind == "Pod":
        base = (*base, "spec", "template")
    return (*base, *path)


_NOT_WRITTEN = object()


def _patched_value(body: Any, output: Any, path: JsonPath) -> tuple[Any, JsonPath]:
    """The value a strategic patch ``body`` writes at ``output``'s ``path``, and its path in
    the body; ``_NOT_WRITTEN`` when the body does not reach it. A list item is matched by
    its ``name`` (the merge key of the lists a pod template patch names: replicated jobs,
    containers, volumes, env), else by its index (a list the patch replaces)."""
    at: JsonPath = ()
    for key in path:
        if isinstance(key, str):
            if not isinstance(body, dict) or not isinstance(output, dict) or key not in body:
                return _NOT_WRITTEN, at
            body, output, at = body[key], output.get(key), (*at, key)
            continue
        if not isinstance(body, list) or not isinstance(output, list) or key >= len(output):
            return _NOT_WRITTEN, at
        item = output[key]
        name = item.get("name") if isinstance(item, dict) else None
        if name is not None:
            found = [i for i, b in enumerate(body) if isinstance(b, dict) and b.get("name") == name]
            index = found[-1] if found else None
        else:
            index = key if key < len(body) else None
        if index is None:
            return _NOT_WRITTEN, at
        body, output, at = body[index], item, (*at, index)
    if isinstance(body, dict | list) or body == output:
        return body, at
    return _NOT_WRITTEN, at  # a later patch or layer changed the value


def overlay_location(
    overlays: Sequence[Overlay], output: Mapping[str, Any], path: JsonPath
) -> SourceLocation | None:
    """Where the last output overlay patch that wrote field ``path`` of ``output`` (as
    it is after every overlay) wrote it; None when no strategic output patch did."""
    from compiler.overlay.overlays import ordered

    found: SourceLocation | None = None
    for overlay in ordered(overlays):
        if not overlay.applies_in(output):
            continue
        for patch in overlay.patches:
            if patch.stage != "output" or patch.type != "strategic":
                continue
            if not patch.target.matches(output):
                continue
            value, at = _patched_value(patch.body, output, path)
            if value is not _NOT_WRITTEN:
                found = patch.body_location(at)
    return found


def _refusal(
    kind: str,
    refused: Sequence[tuple[Mapping[str, Any], list[FieldError]]],
    rjob_index: int,
    rendered: dict[str, Any],
    trainjob: Manifest,
    runtime: Manifest | None,
    overlays: Sequence[Overlay],
) -> list[Problem]:
    """The problems of the refused objects of one replicated job: each distinct field
    error once (on the first object that has it), then the event. The JobSet controller
    creates a replicated job's Jobs in parallel and joins every refusal in one
    ``JobCreationFailed`` event, a line each (``errors.Join``, in the order the creates
    came back); here in index order."""
    lines: list[str] = []
    for obj, errors in refused:
        name = str((obj.get("metadata") or {}).get("name", ""))
        invalid = invalid_message(name, errors, "Job.batch" if kind == "Job" else kind)
        if kind == "Pod" and errors and errors[0].type == ADMISSION_FORBIDDEN:
            invalid = f'pods "{name}" is forbidden: {errors[0].message}'  # NewForbidden
        lines.append(
            f'job "{name}" creation failed with error: {invalid}'
            if kind == "Job"
            else f"Error creating: {invalid}"
        )
    event = "\n".join(lines)
    details = (("renderedFrom", str(trainjob.ref)),)

    def locate(path: JsonPath) -> SourceLocation:
        if not path:
            return trainjob.locate(())
        at = _jobset_path(kind, rjob_index, path)
        return overlay_location(overlays, rendered, at) or locate_output(
            rendered, at, trainjob, runtime
        )

    problems: list[Problem] = []
    said: set[tuple[str | None, str]] = set()
    for obj, errors in refused:
        meta = obj.get("metadata") or {}
        ref = ObjectRef(kind, str(meta.get("name", "")), meta.get("namespace"))
        for error in errors:
            if (error.field, error.message) in said:
                continue  # another replica's Job: the same field of the same template
            said.add((error.field, error.message))
            problems.append(
                Problem(
                    error.message,
                    locate(error.path),
                    ref,
                    error.field,
                    DOWNSTREAM_RULE,
                    stage="output",
                    details=details,
                )
            )
    creator = "the JobSet controller" if kind == "Job" else "the Job controller"
    which = f"the {kind}s" if len(refused) > 1 else f"the {kind}"
    problems.append(
        Problem(
            f"{event} (the API server refuses {which} {creator} would create)",
            trainjob.locate(("metadata", "name")),
            trainjob.ref,
            None,
            DOWNSTREAM_RULE,
            stage="output",
            details=details,
        )
    )
    return problems


def downstream_problems(
    stored: Mapping[str, Any],
    rendered: dict[str, Any],
    trainjob: Manifest,
    runtime: Manifest | None,
    version: str,
    overlays: Sequence[Overlay] = (),
) -> list[Problem]:
    """What the cluster refuses below one JobSet (``stored``: with its CRD defaults;
    ``rendered``: as rendered, to locate fields in the inputs and in the ``overlays``
    that patched it), on Trainer ``version``.

    A JobSet below which nothing is refused is remembered by :func:`outcome_key`: the
    JobSets of many TrainJobs differ only in their name and in what no check reads."""
    if not BELOW_THE_JOBSET.on(version):
        return []
    checks = workload_checks()
    key = outcome_key(stored, checks)
    if key is not None and key in _NOTHING_REFUSED:
        return []
    problems = _problems_below(stored, rendered, trainjob, runtime, checks, overlays)
    if key is not None and not problems:
        if len(_NOTHING_REFUSED) >= _NOTHING_REFUSED_LIMIT:
            _NOTHING_REFUSED.clear()  # bounded: each key is a whole JobSet
        _NOTHING_REFUSED.add(key)
    return problems


def _problems_below(
    stored: Mapping[str, Any],
    rendered: dict[str, Any],
    trainjob: Manifest,
    runtime: Manifest | None,
    checks: Mapping[str, WorkloadCheck],
    overlays: Sequence[Overlay],
) -> list[Problem]:
    """:func:`downstream_problems` worked out (every input it reads of ``stored`` must be
    kept by :func:`outcome_key`)."""
    # webhook_errors(stored), keeping the defaulted JobSet: the Jobs are made from it (they
    # come out of the controller's Go round trip; the webhook's own needs none)
    admitted = default_jobset(stored)
    errors = validate_create(admitted)
    if errors:
        name = str((stored.get("metadata") or {}).get("name", ""))
        return refusal_problems(JobSetRefused(name, errors), rendered, trainjob, runtime)
    if not checks:
        return []
    problems: list[Problem] = []
    never = never_created(admitted)  # finished before they are created: never refused
    for index, rjob in enumerate((admitted.get("spec") or {}).get("replicatedJobs") or []):
        replicas = rjob.get("replicas", 1)
        if not isinstance(replicas, int) or replicas < 1 or str(rjob.get("name")) in never:
            continue
        try:
            refused = _first_refused(admitted, rjob, replicas, checks, typed=False)
        except Exception:  # any failure: the exact path below raises or answers it
            refused = ("?", {}, [])
        if refused is None:
            continue
        # the verdict without the Go round trips is "refused" (or did not come): the
        # objects exactly as the controllers send them give the words
        refused = _first_refused(admitted, rjob, replicas, checks, typed=True)
        if refused is not None:
            kind, obj, errors = refused
            every: list[tuple[Mapping[str, Any], list[FieldError]]] = [(obj, errors)]
            if kind == "Job":  # every replica's Job is created, and refused, alike
                every = _refused_jobs(admitted, rjob, replicas, checks["Job"], obj, errors)
            problems += _refusal(kind, every, index, rendered, trainjob, runtime, overlays)
    return problems


def _refused_jobs(
    admitted: Mapping[str, Any],
    rjob: Mapping[str, Any],
    replicas: int,
    check: WorkloadCheck,
    first: dict[str, Any],
    errors: list[FieldError],
) -> list[tuple[Mapping[str, Any], list[FieldError]]]:
    """Every Job of ``rjob`` the API server refuses, in index order, from ``first`` (the
    first refused, with its ``errors``; the Jobs before it are created)."""
    start = int(str(first["metadata"]["name"]).rsplit("-", 1)[1])
    out: list[tuple[Mapping[str, Any], list[FieldError]]] = [(first, errors)]
    for job_index in range(start + 1, replicas):
        job = create_job(construct_job(admitted, rjob, job_index, typed=True))
        if found := check(job):
            out.append((job, found))
    return out


def never_created_warnings(
    stored: Mapping[str, Any],
    rendered: dict[str, Any],
    trainjob: Manifest,
    runtime: Manifest | None,
    version: str,
) -> list[Problem]:
    """A replicated job the JobSet controller never creates (its dependency's completion
    meets the success policy first: :func:`~compiler.expand.jobset_controller.never_created`):
    a warning at its ``dependsOn``, as nothing refuses it and it never runs."""
    rjobs = (stored.get("spec") or {}).get("replicatedJobs") or []
    if not BELOW_THE_JOBSET.on(version) or not any(r.get("dependsOn") for r in rjobs):
        return []
    admitted = default_jobset(stored)
    spec = admitted.get("spec") or {}
    policy = spec.get("successPolicy") or {}
    operator = policy.get("operator", "All")
    targets = policy.get("targetReplicatedJobs")
    meets = f"successPolicy (operator {operator}" + (
        f", targetReplicatedJobs {', '.join(map(str, targets))})" if targets else ")"
    )
    warnings = []
    never = never_created(admitted)
    for index, rjob in enumerate(spec.get("replicatedJobs") or []):
        name = str(rjob.get("name"))
        if name not in never:
            continue
        at = ("spec", "replicatedJobs", index, "dependsOn")
        warnings.append(
            Problem(
                f'replicated job "{name}" never runs: it waits for "{never[name]}" to '
                f"complete, and that completes the JobSet by its {meets}; the JobSet "
                f"controller marks the JobSet Completed before it creates {name}'s Jobs",
                locate_output(rendered, at, trainjob, runtime),
                ObjectRef(
                    "JobSet", str(stored["metadata"].get("name", "")), trainjob.ref.namespace
                ),
                format_path(at),
                DOWNSTREAM_RULE,
                stage="output",
                details=(("renderedFrom", str(trainjob.ref)),),
            )
        )
    return warnings


def representatives(count: int, *, leader: bool = False) -> list[int]:
    """The indexes ``0 .. count-1`` that stand for all: the first of each number of digits.

    The Jobs of one replicated job, and the Pods of one Indexed Job, differ only by their
    index: in names (``<jobset>-<rjob>-<i>``, ``<job>-<i>``, the Pod's generated name),
    in label and annotation values (the index, the job key, a UID made from the name)
    and in nothing else the API server validates. Those values, for indexes with as many
    digits, have the same length and differ only in digits, where every check of them
    (DNS labels and subdomains, label values) takes any digit: they get the same verdict.
    With more digits a name only gets longer, so the first failing index is the first of
    its number of digits. ``leader``: index 0 is checked apart from 1..9 (the JobSet Pod
    webhook's exclusive placement gives the leader Pod affinities of its own).

    >>> representatives(1), representatives(9), representatives(250, leader=True)
    ([0], [0], [0, 1, 10, 100])
    """
    out = [0] if count > 0 else []
    first = 1 if leader else 10
    while first < count:
        out.append(first)
        first = 10 if first == 1 else first * 10
    return out


def _first_refused(
    admitted: Mapping[str, Any],
    rjob: Mapping[str, Any],
    replicas: int,
    checks: Mapping[str, WorkloadCheck],
    *,
    typed: bool,
) -> tuple[str, dict[str, Any], list[FieldError]] | None:
    """The first Job of ``rjob`` the API server refuses, else the first Pod of a Job it
    creates that it refuses (in creation order: the JobSet controller creates the Jobs
    from index 0, and the Job controller an Indexed Job's Pods from index 0, the first
    alone): the kind, the object and the errors; None when every one is created.
    ``typed``: the objects exactly as the controllers send them (Go round trips)."""
    for job_index in representatives(replicas):
        # untyped, the Job is validated in place (as the API server stores it: its
        # disabled fields dropped), then its Pods are made from it, the last one taking
        # its template rather than a copy
        job = create_job(construct_job(admitted, rjob, job_index, typed=typed))
        if "Job" in checks and (errors := _check(checks["Job"], typed)(job)):
            return "Job", job, errors  # the Job is never created: no Pods
        if "Pod" not in checks:
            continue
        for pod in _pods(job, typed):
            # validation, then the validating admission plugins
            if errors := _check(checks["Pod"], typed)(pod) or pod_admission_errors(pod):
                return "Pod", pod, errors
    return None


def _pods(job: dict[str, Any], typed: bool) -> Iterator[dict[str, Any]]:
    """The Pods that stand for all the controller creates for ``job``, as created
    (untyped, the last takes ``job``'s pod template: ``job`` is not used after)."""
    spec = job.get("spec") or {}
    count = initial_pod_count(job)
    if spec.get("completionMode") != "Indexed":
        count = min(count, 1)  # the Pods of a NonIndexed Job are alike
    annotations = ((spec.get("template") or {}).get("metadata") or {}).get("annotations")
    exclusive = n.EXCLUSIVE in (annotations or {})  # the leader Pod's own affinities
    indexes = representatives(count, leader=exclusive)
    for at, index in enumerate(indexes):
        share = not typed and at == len(indexes) - 1
        for made in job_pods(job, only=index, typed=typed, share=share):
            yield prepare_pod(mutate_pod(create_pod(made)))


def _check(check: WorkloadCheck, typed: bool) -> WorkloadCheck:
    """``check``, on an object the caller drops afterwards when not ``typed``."""
    return check if typed else _as_created(check)


@cache
def _as_created(check: WorkloadCheck) -> WorkloadCheck:
    """``check`` told that its object is as the create path made it (its own, defaulted),
    when it can be (the API server's validation,
    :func:`compiler.apiserver.workloads.validate_job`): no copy, no defaults again."""
    try:
        parameters = inspect.signature(check).parameters
    except (TypeError, ValueError):  # pragma: no cover - a builtin
        return check
    if "created" not in parameters:
        return check
    return functools.partial(cast(Callable[..., list[FieldError]], check), created=True)


# --- the memory of JobSets below which nothing is refused -----------------------------

# the keys of JobSets below which nothing was refused, with the checks and the shapes
# they were judged with; whole keys (compared, not digested), so bounded
_NOTHING_REFUSED: set[tuple[Any, ...]] = set()
_NOTHING_REFUSED_LIMIT = 2048  # ~2 KiB a key: at most ~5 MiB
_NAME = "\x00"  # the JobSet's name in a key (never in a value it is put in: checked)
_NAMESPACE = "\x01"  # and its namespace
_ANY_VALUE = "x"  # a non-empty env value
# label and annotation keys whose values the controllers, the Pod webhook or the API
# server read for more than a label value's or an annotation's text (a topology, an
# index, a name to match): a value under one of them is kept as it is
_READ_PREFIXES = ("jobset.sigs.k8s.io/", "alpha.jobset.sigs.k8s.io/", "batch.kubernetes.io/")
_READ_KEYS = frozenset({n.LEGACY_CONTROLLER_UID, n.LEGACY_JOB_NAME})
_TOKEN_VOLUME = "kube-api-access-"  # the ServiceAccount plugin's test of a volume name
# a name's characters as the checks tell them apart (DNS labels and subdomains, label
# values: a lowercase letter, an uppercase one, a digit; any other character as it is)
_SHAPE = str.maketrans(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
    "a" * 26 + "A" * 26 + "0" * 10,
)


class _Unkeyable(Exception):
    """A value that holds a mark already: it could not be told from a replaced one."""


def forget_outcomes() -> None:
    """Forget the JobSets below which nothing was refused (a new process's memory)."""
    _NOTHING_REFUSED.clear()


def outcome_key(
    stored: Mapping[str, Any], checks: Mapping[str, WorkloadCheck]
) -> tuple[Any, ...] | None:
    """``stored`` as :func:`downstream_problems`' verdict depends on it: two JobSets with
    one key get one verdict. None when it cannot be keyed (then it is worked out).

    The JobSet's name (the TrainJob's) is written in the JobSet and, by the controllers,
    in every Job and Pod name, hostname, subdomain, label and UID; its namespace in
    every object's namespace, UID and job key. Every check reads of those no more than
    the length and the kind of each character (DNS labels and subdomains, label
    values, the webhook's name lengths), whether two are equal (a selector and its
    labels, a mount and its volume) and, of a volume's name, whether it starts with
    ``kube-api-access-`` (the ServiceAccount plugin). So the key holds the shapes of
    the name and the namespace (:data:`_SHAPE`) and the JobSet with the name replaced
    by :data:`_NAME`, then the namespace by :data:`_NAMESPACE`, where they may be found:

    - ``metadata.name`` and ``metadata.namespace``, and the name of the JobSet's owners
      (the TrainJob's, which no check below reads);
    - label and annotation values of the JobSet, of each Job template and pod template,
      but those under keys read for more (:data:`_READ_PREFIXES`, :data:`_READ_KEYS`):
      labels are checked as label values, annotations for their total size;
    - a container's (and init container's) ``command`` and ``args`` (no check reads
      them); the names of volumes and volume mounts (with whether each starts with
      ``kube-api-access-``); the object a ``secret``, ``configMap`` or
      ``persistentVolumeClaim`` volume names (only tested for being empty).

    The name found anywhere else: None; the namespace: it is kept as it is. Replacing
    keeps which values are equal (a value is the key's text with the marks replaced
    back, in the other order). Besides, what is read of a value only for being empty or
    as a label value is keyed as any other such value: a non-empty env ``value`` (as
    :func:`~compiler.apiserver.workloads.pod.verdict_key` keys them), and a pod
    template's ``nodeSelector`` values by their shape (nothing else reads them).
    """
    meta = stored.get("metadata")
    if not isinstance(meta, dict):
        return None
    name, namespace = meta.get("name"), meta.get("namespace")
    if not isinstance(name, str) or not name:
        return None
    marked = [(name, _NAME)]
    if isinstance(namespace, str) and namespace:
        marked.append((namespace, _NAMESPACE))
    while marked:
        try:
            data = marshal.dumps(_jobset_view(stored, meta, marked), 2)
        except (_Unkeyable, ValueError):
            return None
        found = [text for text, _ in marked if text.encode() in data]
        if not found:
            shapes = tuple(text.translate(_SHAPE) for text, _ in marked)
            return (data, shapes, tuple(sorted(checks.items())))
        if found[0] == name:
            return None  # the name is somewhere a check may read more of it
        marked = marked[:1]  # the namespace is: keep it as it is
    return None  # pragma: no cover - the name is always marked


Marks = Sequence[tuple[str, str]]  # (text, its mark), replaced in turn


def _replaced(value: Any, marked: Marks) -> Any:
    if not isinstance(value, str):
        return value
    for _, mark in marked:
        if mark in value:
            raise _Unkeyable(value)
    for text, mark in marked:
        value = value.replace(text, mark)
    return value


def _jobset_view(
    stored: Mapping[str, Any], meta: Mapping[str, Any], marked: Marks
) -> dict[str, Any]:
    view = dict(stored)
    view["metadata"] = _meta_view(meta, marked)
    for key in ("name", "namespace"):
        if key in meta:
            view["metadata"][key] = _replaced(meta[key], marked)
    owners = meta.get("ownerReferences")
    if isinstance(owners, list):  # the TrainJob's: read by no check below the JobSet
        view["metadata"]["ownerReferences"] = [
            {**o, "name": _replaced(o.get("name"), marked)} if isinstance(o, dict) else o
            for o in owners
        ]
    spec = view.get("spec")
    if isinstance(spec, dict) and isinstance(spec.get("replicatedJobs"), list):
        rjobs = [_rjob_view(r, marked) for r in spec["replicatedJobs"]]
        view["spec"] = {**spec, "replicatedJobs": rjobs}
    return view


def _meta_view(meta: Any, marked: Marks) -> Any:
    if not isinstance(meta, dict):
        return meta
    view = dict(meta)
    for key in ("labels", "annotations"):
        values = view.get(key)
        if isinstance(values, dict):
            view[key] = {
                k: v
                if k in _READ_KEYS or str(k).startswith(_READ_PREFIXES)
                else _replaced(v, marked)
                for k, v in values.items()
            }
    return view


def _rjob_view(rjob: Any, marked: Marks) -> Any:
    template = rjob.get("template") if isinstance(rjob, dict) else None
    if not isinstance(template, dict):
        return rjob
    template = {**template, "metadata": _meta_view(template.get("metadata"), marked)}
    job_spec = template.get("spec")
    pod_template = job_spec.get("template") if isinstance(job_spec, dict) else None
    if isinstance(job_spec, dict) and isinstance(pod_template, dict):
        pod_template = {
            **pod_template,
            "metadata": _meta_view(pod_template.get("metadata"), marked),
            "spec": _pod_spec_view(pod_template.get("spec"), marked),
        }
        template["spec"] = {**job_spec, "template": pod_template}
    return {**rjob, "template": template}


def _pod_spec_view(spec: Any, marked: Marks) -> Any:
    if not isinstance(spec, dict):
        return spec
    view = dict(spec)
    for key in ("containers", "initContainers"):
        if isinstance(view.get(key), list):
            view[key] = [_container_view(c, marked) for c in view[key]]
    if isinstance(view.get("volumes"), list):
        view["volumes"] = [_volume_view(v, marked) for v in view["volumes"]]
    selector = view.get("nodeSelector")
    if isinstance(selector, dict):  # read only as label values
        view["nodeSelector"] = {
            k: v.translate(_SHAPE) if isinstance(v, str) else v for k, v in selector.items()
        }
    return view


def _named(item: Any, marked: Marks) -> Any:
    """A volume or volume mount with its name replaced in, and whether the name starts
    with ``kube-api-access-``."""
    if not isinstance(item, dict) or not isinstance(item.get("name"), str):
        return item
    value = item["name"]
    return {**item, "name": (_replaced(value, marked), value.startswith(_TOKEN_VOLUME))}


def _container_view(container: Any, marked: Marks) -> Any:
    if not isinstance(container, dict):
        return container
    view = dict(container)
    for key in ("command", "args"):
        if isinstance(view.get(key), list):
            view[key] = [_replaced(item, marked) for item in view[key]]
    if isinstance(view.get("env"), list):
        view["env"] = [
            {**var, "value": _ANY_VALUE}
            if type(var) is dict and type(var.get("value")) is str and var["value"] != ""
            else var
            for var in view["env"]
        ]
    if isinstance(view.get("volumeMounts"), list):
        view["volumeMounts"] = [_named(m, marked) for m in view["volumeMounts"]]
    return view


# volume source -> the field naming its object, read only for being empty
_NAMED_SOURCES = (
    ("secret", "secretName"),
    ("configMap", "name"),
    ("persistentVolumeClaim", "claimName"),
)


def _volume_view(volume: Any, marked: Marks) -> Any:
    if not isinstance(volume, dict):
        return volume
    view = dict(_named(volume, marked))
    for kind, key in _NAMED_SOURCES:
        source = view.get(kind)
        if isinstance(source, dict) and key in source:
            view[kind] = {**source, key: _replaced(source[key], marked)}
    return view
