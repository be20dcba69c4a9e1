"""kube-apiserver's validation of the Jobs and Pods a TrainJob ends up as.

The JobSet controller creates a batch/v1 Job per replicated-job replica and the Job
controller a Pod per index; the API server refuses either with a ``StatusError``
(``Job.batch "<name>" is invalid: [...]``). This package answers, without a cluster,
what kube-apiserver v1.34.4 answers to that create request:

- :func:`validate_job` and :func:`validate_pod` take the object as the controller sends it
  (JSON-like data) and return the API server's field errors, in its order and words;
- :func:`invalid_message` words them as the API server's ``StatusError`` message.

**Defaults.** Both functions apply, on a copy, the defaults the API server applies while
decoding (``defaults.py``: v1 Pod and PodSpec defaults, batch/v1 Job defaults) and what
its create strategy adds (the Job's generated selector and template labels), so callers
may pass objects defaulted or not: the defaults are idempotent. Mutating admission
plugins (ServiceAccount, DefaultTolerationSeconds, LimitRanger, ...) are not applied;
their effect on a Pod is the caller's (compiler/expand) to model.

**What the server fills in.** A missing ``metadata.uid`` is :data:`PLACEHOLDER_UID`, a
name made from ``generateName`` ends in :data:`PLACEHOLDER_SUFFIX`, and a missing
namespace is ``default``: the server draws the first two at random, so messages that
quote them (a Job's generated selector) show these placeholders instead.

**Versions.** The rules and messages are those of v1.34.4 (:data:`KUBERNETES_VERSIONS`);
``kubernetes=`` names the cluster's version and any other minor raises
:class:`UnsupportedKubernetesVersion`, rather than answering with another version's words.

**Panics.** Where v1.34.4's validation code itself panics (a success policy on an Indexed
Job without ``completions``), the API server answers 500 with :data:`PANIC_BODY`;
:func:`validate_job` raises :class:`ServerPanic` then. A Job or Pod that would not even decode
(an unparsable quantity, a string where Go has a number) raises
:class:`WorkloadDecodeError`.

**Order.** Go walks maps (label maps, resource lists) in random order, so when several
errors come from one map the API server lists them in any order; here they come sorted
by key. Compare such messages as sets of errors.
"""

from __future__ import annotations

import marshal
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from compiler.errors import FieldError
from compiler.kube.gotext import aggregated, go_quote

from . import meta
from .defaults import default_job, default_pod, drop_disabled_fields, pod_level_resources
from .fielderrors import as_string, forbidden, invalid
from .job import job_errors, prepare_job
from .pod import PANIC_BODY, PodOptions, ServerPanic, WorkloadDecodeError, validate_pod_spec

__all__ = [
    "KUBERNETES_VERSIONS",
    "PANIC_BODY",
    "PLACEHOLDER_SUFFIX",
    "PLACEHOLDER_UID",
    "ServerPanic",
    "UnsupportedKubernetesVersion",
    "WorkloadDecodeError",
    "invalid_message",
    "validate_job",
    "validate_pod",
]

KUBERNETES_VERSIONS = ("v1.34",)
PLACEHOLDER_UID = "00000000-0000-4000-8000-000000000000"
PLACEHOLDER_SUFFIX = "xxxxx"
_QUALIFIED_KINDS = {"Job": "Job.batch", "Pod": "Pod"}
_VERSION = re.compile(r"^v?1\.(\d+)(\.\d+)?$")


class UnsupportedKubernetesVersion(ValueError):
    """The cluster runs a Kubernetes minor whose validation is not emulated."""


def _check_version(kubernetes: str | None) -> None:
    if kubernetes is None:
        return
    match = _VERSION.match(kubernetes)
    if match is None or f"v1.{match[1]}" not in KUBERNETES_VERSIONS:
        raise UnsupportedKubernetesVersion(
            f"Job and Pod validation is emulated for Kubernetes {', '.join(KUBERNETES_VERSIONS)}"
            f" only, not {kubernetes}"
        )


def _copy(value: Any) -> Any:
    """A copy of JSON-like data (dicts, lists, scalars): ``copy.deepcopy`` costs a third of
    a validation. marshal's C round trip first (format 2: no shared references), by hand
    when the data holds anything else (a dict subclass, an object)."""
    try:
        return marshal.loads(marshal.dumps(value, 2))
    except ValueError:
        return _copy_by_hand(value)


def _copy_by_hand(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy_by_hand(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy_by_hand(v) for v in value]
    return value


def _server_meta(obj: Mapping[str, Any], created: bool = False) -> dict[str, Any]:
    """A copy of ``obj`` (``obj`` itself when ``created``) with the metadata the API
    server fills in before validating."""
    data: dict[str, Any] = obj if created and isinstance(obj, dict) else _copy(dict(obj))
    for key in ("metadata", "spec"):
        if data.get(key) is None:
            data[key] = {}
        elif not isinstance(data[key], dict):
            raise WorkloadDecodeError(f"{key} is not an object")
    metadata = data["metadata"]
    if not metadata.get("name") and metadata.get("generateName"):
        metadata["name"] = str(metadata["generateName"])[: 63 - len(PLACEHOLDER_SUFFIX)] + (
            PLACEHOLDER_SUFFIX
        )
    if not metadata.get("uid"):
        metadata["uid"] = PLACEHOLDER_UID
    if not metadata.get("namespace"):
        metadata["namespace"] = "default"
    return data


def validate_job(
    obj: Mapping[str, Any],
    *,
    kubernetes: str | None = None,
    allow_privileged: bool = True,
    created: bool = False,
) -> list[FieldError]:
    """The errors kube-apiserver returns when a controller creates the batch/v1 Job ``obj``
    (empty: it is created). ``allow_privileged``: the server's ``--allow-privileged``.
    Raises :class:`ServerPanic` where the server's validation panics.

    ``created``: ``obj`` is the caller's to change (it drops it) and has the workload
    defaults applied already (``defaults.default_job`` for a Job,
    ``defaults.default_pod_workload`` and ``requests_from_limits`` for a Pod, as
    ``compiler.expand.apiserver``'s create path applies them): they are not applied
    again, and ``obj`` is validated in place rather than copied.

    >>> job = {"metadata": {"name": "a"}, "spec": {"template": {"spec": {
    ...     "restartPolicy": "Always", "containers": [{"name": "c", "image": "i"}]}}}}
    >>> [str(e) for e in validate_job(job)]
    ['spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"']
    """
    _check_version(kubernetes)
    opts = PodOptions(resource_is_pod=False, allow_privileged=allow_privileged)
    return _decoding("Job", obj, lambda: _job_errors(obj, opts, created))


def _job_errors(obj: Mapping[str, Any], opts: PodOptions, created: bool) -> list[FieldError]:
    job = _server_meta(obj, created)
    if not created:
        default_job(job)
    prepare_job(job)
    drop_disabled_fields(job["spec"]["template"]["spec"])
    return job_errors(job, opts)


def _decoding(
    kind: str, obj: Mapping[str, Any], run: Callable[[], list[FieldError]]
) -> list[FieldError]:
    """``run()``; a value of a type the API server would not decode (a string where Go
    has an int, a list where it has a map) is :class:`WorkloadDecodeError`, as the
    server's 400, not a traceback."""
    try:
        return run()
    except (WorkloadDecodeError, ServerPanic):
        raise
    except (TypeError, ValueError, AttributeError, KeyError, IndexError) as err:
        name = (
            (obj.get("metadata") or {}).get("name")
            if isinstance(obj.get("metadata"), dict)
            else None
        )
        raise WorkloadDecodeError(
            f"{kind} {name or ''} cannot be decoded: {err}".replace("  ", " ")
        ) from err


def validate_pod(
    obj: Mapping[str, Any],
    *,
    kubernetes: str | None = None,
    allow_privileged: bool = True,
    created: bool = False,
) -> list[FieldError]:
    """The errors kube-apiserver returns when a controller creates the v1 Pod ``obj``
    (``created``: as :func:`validate_job`)."""
    _check_version(kubernetes)
    opts = PodOptions(resource_is_pod=True, allow_privileged=allow_privileged)
    return _decoding("Pod", obj, lambda: _pod_errors(obj, opts, created))


def _pod_errors(obj: Mapping[str, Any], opts: PodOptions, created: bool) -> list[FieldError]:
    pod = _server_meta(obj, created)
    if created:
        pod_level_resources(pod["spec"])  # not among the defaults a create path applies
    else:
        default_pod(pod)
    spec = pod["spec"]
    drop_disabled_fields(spec)
    errors = meta.object_meta(pod["metadata"], meta.name_is_dns_subdomain, ("metadata",))
    errors += validate_pod_spec(spec, str(pod["metadata"].get("name") or ""), ("spec",), opts)
    if not spec.get("serviceAccountName"):
        for v, volume in enumerate(spec.get("volumes") or []):
            projected = (volume or {}).get("projected") or {}
            for s, source in enumerate(projected.get("sources") or []):
                if (source or {}).get("serviceAccountToken") is not None:
                    at = ("spec", "volumes", v, "projected", "sources", s, "serviceAccountToken")
                    detail = "must not be specified when serviceAccountName is not set"
                    errors.append(forbidden(at, detail))
    for key in ("containers", "initContainers"):
        for i, container in enumerate(spec.get(key) or []):
            image = str((container or {}).get("image") or "")
            if image != image.strip(" \t\n\v\f\r\x85\xa0"):
                detail = "must not have leading or trailing whitespace"
                errors.append(invalid(("spec", key, i, "image"), as_string(image), detail))
    if spec.get("ephemeralContainers"):
        errors.append(forbidden(("spec", "ephemeralContainers"), "cannot be set on create"))
    if spec.get("nodeName") and spec.get("schedulingGates"):
        detail = "cannot be set until all schedulingGates have been cleared"
        errors.append(forbidden(("spec", "nodeName"), detail))
    return errors


def invalid_message(kind: str, name: str, errors: Iterable[FieldError]) -> str:
    """The API server's ``StatusError`` message for ``errors`` about the ``kind`` (``Job``
    or ``Pod``) ``name``: repeated errors once, several in brackets.

    >>> from compiler.errors import FieldError
    >>> invalid_message("Job", "a", [FieldError("FieldValueRequired", "spec", "Required value")])
    'Job.batch "a" is invalid: spec: Required value'
    """
    texts = [str(error) for error in errors]
    qualified = _QUALIFIED_KINDS.get(kind, kind)
    head = f"{qualified} {go_quote(name)} is invalid"
    return f"{head}: {aggregated(texts)}" if texts else head
