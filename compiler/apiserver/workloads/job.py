"""batch/v1 Job validation on create, as kube-apiserver v1.34.4 runs it
(k8s.io/kubernetes ``pkg/registry/batch/job`` strategy and ``pkg/apis/batch/validation``).

The object is decoded (defaults applied), prepared for create (the selector and the
template labels the API server generates from the Job's name and UID), then validated.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from compiler.errors import FieldError
from compiler.kube.gotext import go_json

from . import meta, names
from .fielderrors import (
    OMIT,
    Key,
    Path,
    Value,
    as_json,
    as_number,
    as_string,
    duplicate,
    invalid,
    not_supported,
    required,
    too_long,
    too_many,
)
from .pod import PANIC_BODY, PodOptions, ServerPanic, validate_pod_spec

__all__ = ["job_errors", "prepare_job"]

_LEGACY_UID = "controller-uid"
_LEGACY_NAME = "job-name"
_UID = "batch.kubernetes.io/controller-uid"
_NAME = "batch.kubernetes.io/job-name"
_ACTIONS = ("Count", "FailIndex", "FailJob", "Ignore")
_STATUSES = ("False", "True", "Unknown")


def prepare_job(job: dict[str, Any]) -> None:
    """``PrepareForCreate``: without a manual selector, the template gets the job-name and
    controller-uid labels (both spellings) unless it has them, and the selector matches
    the controller-uid."""
    spec = job["spec"]
    if spec.get("manualSelector"):
        return
    template_meta = spec["template"]["metadata"]
    if template_meta.get("labels") is None:
        template_meta["labels"] = {}
    labels = template_meta["labels"]
    name = str(job["metadata"].get("name") or "")
    uid = str(job["metadata"].get("uid") or "")
    for key in (_LEGACY_NAME, _NAME):
        labels.setdefault(key, name)
    for key in (_LEGACY_UID, _UID):
        labels.setdefault(key, uid)
    if spec.get("selector") is None:
        spec["selector"] = {}
    if spec["selector"].get("matchLabels") is None:
        spec["selector"]["matchLabels"] = {}
    spec["selector"]["matchLabels"].setdefault(_UID, uid)


def _selector_value(selector: Mapping[str, Any]) -> Value:
    """A ``*metav1.LabelSelector`` as json.Marshal prints it (fields in Go order)."""
    shown: dict[str, Any] = {}
    if selector.get("matchLabels"):
        shown["matchLabels"] = dict(sorted(selector["matchLabels"].items()))
    if selector.get("matchExpressions"):
        shown["matchExpressions"] = [
            {
                "key": str(e.get("key") or ""),
                "operator": str(e.get("operator") or ""),
                **({"values": list(e["values"])} if e.get("values") else {}),
            }
            for e in selector["matchExpressions"]
        ]
    return Value(selector, go_json(shown, sort_keys=False))


def _has_label(labels: Mapping[str, Any], key: str, expected: str) -> list[FieldError]:
    """``ValidateHasLabel`` on ``spec.template.metadata``."""
    path: Path = ("spec", "template", "metadata", "labels", Key(key))
    if key not in labels:
        return [required(path, f"must be '{expected}'")]
    if str(labels[key]) != expected:
        return [invalid(path, as_json(labels), f"must be '{expected}'")]
    return []


def _generated_selector(job: Mapping[str, Any]) -> list[FieldError]:
    spec = job["spec"]
    if spec.get("manualSelector") or spec.get("selector") is None:
        return []
    errors: list[FieldError] = []
    uid = str(job["metadata"].get("uid") or "")
    name = str(job["metadata"].get("name") or "")
    if not uid:
        errors.append(required(("metadata", "uid")))
    labels = spec["template"]["metadata"].get("labels") or {}
    errors += _has_label(labels, _LEGACY_UID, uid) + _has_label(labels, _LEGACY_NAME, name)
    errors += _has_label(labels, _UID, uid) + _has_label(labels, _NAME, name)
    expected = {_UID: uid, _NAME: name, _LEGACY_UID: uid, _LEGACY_NAME: name}
    if meta.selector_matches(spec["selector"], expected) is False:
        errors.append(
            invalid(
                ("spec", "selector"),
                _selector_value(spec["selector"]),
                "`selector` not auto-generated",
            )
        )
    return errors


def _on_exit_codes(
    requirement: Mapping[str, Any], path: Path, containers: set[str]
) -> list[FieldError]:
    errors: list[FieldError] = []
    operator = str(requirement.get("operator") or "")
    if not operator:
        errors.append(required((*path, "operator"), 'valid values: ["In" "NotIn"]'))
    elif operator not in ("In", "NotIn"):
        errors.append(not_supported((*path, "operator"), as_json(operator), ("In", "NotIn")))
    container = requirement.get("containerName")
    if container is not None and str(container) not in containers:
        detail = "must be one of the container or initContainer names in the pod template"
        errors.append(invalid((*path, "containerName"), as_string(str(container)), detail))
    values = [int(v) for v in requirement.get("values") or []]
    if not values:
        shown = requirement.get("values")
        errors.append(
            invalid(
                (*path, "values"),
                as_json(None if shown is None else []),
                "at least one value is required",
            )
        )
    elif len(values) > 255:
        errors.append(too_many((*path, "values"), len(values), 255))
    seen: set[int] = set()
    ordered = True
    for j, value in enumerate(values):
        if operator == "In" and value == 0:
            errors.append(
                invalid((*path, "values", j), as_number(value), "must not be 0 for the In operator")
            )
        if value in seen:
            errors.append(duplicate((*path, "values", j), as_number(value)))
        seen.add(value)
        if j > 0 and values[j - 1] > value:
            ordered = False
    if not ordered:
        errors.append(invalid((*path, "values"), as_json(values), "must be ordered"))
    return errors


def _pod_failure_policy(spec: Mapping[str, Any], path: Path) -> list[FieldError]:
    errors: list[FieldError] = []
    policy = spec["podFailurePolicy"] if isinstance(spec["podFailurePolicy"], dict) else {}
    rules = [r if isinstance(r, dict) else {} for r in policy.get("rules") or []]
    if len(rules) > 20:
        errors.append(too_many((*path, "rules"), len(rules), 20))
    pod_spec = spec["template"]["spec"]
    containers = {
        str(c.get("name") or "")
        for key in ("containers", "initContainers")
        for c in pod_spec.get(key) or []
        if isinstance(c, dict)
    }
    for i, rule in enumerate(rules):
        at = (*path, "rules", i)
        action = str(rule.get("action") or "")
        if not action:
            errors.append(
                required((*at, "action"), 'valid values: ["Count" "FailIndex" "FailJob" "Ignore"]')
            )
        elif action == "FailIndex":
            if spec.get("backoffLimitPerIndex") is None:
                errors.append(
                    invalid(
                        (*at, "action"),
                        as_json(action),
                        "requires the backoffLimitPerIndex to be set",
                    )
                )
        elif action not in _ACTIONS:
            errors.append(not_supported((*at, "action"), as_json(action), _ACTIONS))
        on_exit = rule.get("onExitCodes")
        if on_exit is not None:
            on_exit = on_exit if isinstance(on_exit, dict) else {}
            errors += _on_exit_codes(on_exit, (*at, "onExitCodes"), containers)
        conditions = [c if isinstance(c, dict) else {} for c in rule.get("onPodConditions") or []]
        if conditions:
            cond_at = (*at, "onPodConditions")
            if len(conditions) > 20:
                errors.append(too_many(cond_at, len(conditions), 20))
            for j, pattern in enumerate(conditions):
                kind = str(pattern.get("type") or "")
                errors += [
                    invalid((*cond_at, j, "type"), as_string(kind), m)
                    for m in names.qualified_name(kind)
                ]
                status = str(pattern.get("status") or "")
                if not status:
                    errors.append(
                        required(
                            (*cond_at, j, "status"), 'valid values: ["False" "True" "Unknown"]'
                        )
                    )
                elif status not in _STATUSES:
                    errors.append(
                        not_supported((*cond_at, j, "status"), as_json(status), _STATUSES)
                    )
        if on_exit is not None and conditions:
            detail = "specifying both OnExitCodes and OnPodConditions is not supported"
            errors.append(invalid(at, OMIT, detail))
        if on_exit is None and not conditions:
            detail = "specifying one of OnExitCodes and OnPodConditions is required"
            errors.append(invalid(at, OMIT, detail))
    return errors


def _interval(text: str, completions: int) -> tuple[int, int]:
    parts = text.split("-")
    if len(parts) > 2:
        raise ValueError(
            f"the fragment {go_json(text)} violates the requirement that an index interval"
            " can have at most two parts separated by '-'"
        )
    bounds = []
    for part in parts:
        try:
            number = _atoi(part)
        except ValueError:
            raise ValueError(
                f"cannot convert string to integer for index: {go_json(part)}"
            ) from None
        if number >= completions:
            raise ValueError(f"too large index: {go_json(part)}")
        bounds.append(number)
    if len(bounds) == 2 and bounds[0] >= bounds[1]:
        raise ValueError(f"non-increasing order, previous: {bounds[0]}, current: {bounds[1]}")
    return bounds[0], bounds[-1]


def _atoi(text: str) -> int:
    """Go's ``strconv.Atoi``: an optional sign and ASCII digits, within int64."""
    body = text[1:] if text[:1] in "+-" else text
    if not body or not body.isascii() or not body.isdigit():
        raise ValueError(text)
    value = int(text)
    if not -(2**63) <= value < 2**63:
        raise ValueError(text)
    return value


def _indexes_total(text: str, completions: int) -> int:
    """``validateIndexesFormat``: the number of indexes, or ValueError with Go's reason."""
    if not text:
        return 0
    last: int | None = None
    total = 0
    for fragment in text.split(","):
        low, high = _interval(fragment, completions)
        if last is not None and last >= low:
            raise ValueError(f"non-increasing order, previous: {last}, current: {low}")
        total += high - low + 1
        last = high
    return total


def _success_policy_value(policy: Mapping[str, Any]) -> Value:
    """The internal ``batch.SuccessPolicy`` as json.Marshal prints it (no JSON tags)."""
    rules = policy.get("rules")
    shown: Any = None
    if rules is not None:
        shown = [
            {
                "SucceededIndexes": (r or {}).get("succeededIndexes"),
                "SucceededCount": (r or {}).get("succeededCount"),
            }
            for r in rules
        ]
    return Value(policy, go_json({"Rules": shown}, sort_keys=False))


def _success_policy(spec: Mapping[str, Any], path: Path) -> list[FieldError]:
    policy = spec["successPolicy"] if isinstance(spec["successPolicy"], dict) else {}
    if spec.get("completionMode") != "Indexed":
        return [invalid(path, _success_policy_value(policy), "requires indexed completion mode")]
    errors: list[FieldError] = []
    rules = [r if isinstance(r, dict) else {} for r in policy.get("rules") or []]
    if not rules:
        detail = "at least one rules must be specified when the successPolicy is specified"
        errors.append(required((*path, "rules"), detail))
    if len(rules) > 20:
        errors.append(too_many((*path, "rules"), len(rules), 20))
    completions_value = spec.get("completions")
    completions = int(completions_value or 0)
    for i, rule in enumerate(rules):
        at = (*path, "rules", i)
        indexes = rule.get("succeededIndexes")
        count = rule.get("succeededCount")
        if completions_value is None and (indexes is not None or count is not None):
            # Go dereferences the missing completions (an Indexed Job without them)
            raise ServerPanic(PANIC_BODY)
        if indexes is None and count is None:
            detail = "at least one of succeededCount or succeededIndexes must be specified"
            errors.append(required(at, detail))
        total = 0
        if indexes is not None:
            if len(str(indexes).encode()) > 64 * 1024:
                errors.append(too_long((*at, "succeededIndexes"), 64 * 1024))
            try:
                total = _indexes_total(str(indexes), completions)
            except ValueError as err:
                detail = f"error parsing succeededIndexes: {err}"
                errors.append(invalid((*at, "succeededIndexes"), as_string(str(indexes)), detail))
        if count is not None:
            count = int(count)
            count_at = (*at, "succeededCount")
            errors += meta.nonnegative(count, count_at)
            if count > completions:
                detail = f"must be less than or equal to {completions} (the number of specified completions)"
                errors.append(invalid(count_at, as_number(count), detail))
            if indexes is not None and count > total:
                detail = (
                    f"must be less than or equal to {total} (the number of indexes in the"
                    " specified succeededIndexes field)"
                )
                errors.append(invalid(count_at, as_number(count), detail))
    return errors


def _int(spec: Mapping[str, Any], key: str) -> int | None:
    value = spec.get(key)
    return None if value is None else int(value)


def _job_spec(spec: Mapping[str, Any], path: Path, opts: PodOptions) -> list[FieldError]:
    """``validateJobSpec``."""
    errors: list[FieldError] = []
    for key in (
        "parallelism",
        "completions",
        "activeDeadlineSeconds",
        "backoffLimit",
        "ttlSecondsAfterFinished",
        "backoffLimitPerIndex",
    ):
        value = _int(spec, key)
        if value is not None:
            errors += meta.nonnegative(value, (*path, key))
    parallelism = _int(spec, "parallelism")
    completions = _int(spec, "completions")
    per_index = _int(spec, "backoffLimitPerIndex")
    max_failed = _int(spec, "maxFailedIndexes")
    if max_failed is not None:
        errors += meta.nonnegative(max_failed, (*path, "maxFailedIndexes"))
        if per_index is None:
            errors.append(
                required((*path, "backoffLimitPerIndex"), "when maxFailedIndexes is specified")
            )
    managed_by = spec.get("managedBy")
    if managed_by is not None:
        errors += _domain_prefixed_path(str(managed_by), (*path, "managedBy"))
        if len(str(managed_by).encode()) > 63:
            errors.append(too_long((*path, "managedBy"), 63))
    mode = spec.get("completionMode")
    if mode is not None:
        mode = str(mode)
        if mode not in ("NonIndexed", "Indexed"):
            errors.append(
                not_supported((*path, "completionMode"), as_json(mode), ("NonIndexed", "Indexed"))
            )
        if mode == "Indexed":
            if completions is None:
                errors.append(required((*path, "completions"), "when completion mode is Indexed"))
            if parallelism is not None and parallelism > 100000:
                detail = "must be less than or equal to 100000 when completion mode is Indexed"
                errors.append(invalid((*path, "parallelism"), as_number(parallelism), detail))
            if completions is not None and max_failed is not None and max_failed > completions:
                detail = "must be less than or equal to completions"
                errors.append(invalid((*path, "maxFailedIndexes"), as_number(max_failed), detail))
            if max_failed is not None and max_failed > 100000:
                detail = "must be less than or equal to 100000"
                errors.append(invalid((*path, "maxFailedIndexes"), as_number(max_failed), detail))
            if completions is not None and completions > 100000 and per_index is not None:
                high = "when completions are above 100000 and used with backoff limit per index"
                if max_failed is None:
                    errors.append(
                        required(
                            (*path, "maxFailedIndexes"),
                            "must be specified when completions is above 100000",
                        )
                    )
                if parallelism is not None and parallelism > 10000:
                    detail = f"must be less than or equal to 10000 {high}"
                    errors.append(invalid((*path, "parallelism"), as_number(parallelism), detail))
                if max_failed is not None and max_failed > 10000:
                    detail = f"must be less than or equal to 10000 {high}"
                    errors.append(
                        invalid((*path, "maxFailedIndexes"), as_number(max_failed), detail)
                    )
    if mode is None or mode == "NonIndexed":
        if per_index is not None:
            detail = "requires indexed completion mode"
            errors.append(invalid((*path, "backoffLimitPerIndex"), as_number(per_index), detail))
        if max_failed is not None:
            detail = "requires indexed completion mode"
            errors.append(invalid((*path, "maxFailedIndexes"), as_number(max_failed), detail))
    if spec.get("podFailurePolicy") is not None:
        errors += _pod_failure_policy(spec, (*path, "podFailurePolicy"))
    if spec.get("successPolicy") is not None:
        errors += _success_policy(spec, (*path, "successPolicy"))
    replacement = spec.get("podReplacementPolicy")
    if replacement is not None:
        replacement = str(replacement)
        at = (*path, "podReplacementPolicy")
        if spec.get("podFailurePolicy") is not None:
            if replacement != "Failed":
                errors.append(not_supported(at, as_json(replacement), ("Failed",)))
        elif replacement not in ("Failed", "TerminatingOrFailed"):
            errors.append(
                not_supported(at, as_json(replacement), ("Failed", "TerminatingOrFailed"))
            )
    errors += _template(spec["template"], (*path, "template"), opts)
    restart = str(spec["template"]["spec"].get("restartPolicy") or "")
    restart_at = (*path, "template", "spec", "restartPolicy")
    if restart in ("Always", ""):
        errors.append(required(restart_at, 'valid values: "OnFailure", "Never"'))
    elif restart not in ("OnFailure", "Never"):
        errors.append(not_supported(restart_at, as_json(restart), ("OnFailure", "Never")))
    elif spec.get("podFailurePolicy") is not None and restart != "Never":
        detail = 'only "Never" is supported when podFailurePolicy is specified'
        errors.append(invalid(restart_at, as_json(restart), detail))
    return errors


def _domain_prefixed_path(value: str, path: Path) -> list[FieldError]:
    """``IsDomainPrefixedPath``."""
    import re

    if not value:
        return [required(path)]
    host, sep, rest = value.partition("/")
    if not sep or not host or not rest:
        return [
            invalid(
                path, as_string(value), 'must be a domain-prefixed path (such as "acme.io/foo")'
            )
        ]
    errors = [invalid(path, as_string(host), m) for m in names.dns1123_subdomain(host)]
    pattern = r"[A-Za-z0-9/\-._~%!$&'()*+,;=:]+"
    if not re.fullmatch(pattern, rest):
        detail = names.regex_error("Invalid path", pattern)
        return [*errors, invalid(path, as_string(rest), detail)]
    return errors


def _template(template: Mapping[str, Any], path: Path, opts: PodOptions) -> list[FieldError]:
    """``ValidatePodTemplateSpec``."""
    template_meta = template.get("metadata") or {}
    errors = meta.labels(template_meta.get("labels"), (*path, "labels"))
    errors += meta.annotation_errors(template_meta.get("annotations"), (*path, "annotations"))
    errors += validate_pod_spec(template["spec"], None, (*path, "spec"), opts)
    return errors


def job_errors(job: dict[str, Any], opts: PodOptions) -> list[FieldError]:
    """``ValidateJob`` of a decoded, prepared Job."""
    errors = meta.object_meta(job["metadata"], meta.name_is_dns_subdomain, ("metadata",))
    errors += _generated_selector(job)
    spec = job["spec"]
    errors += _job_spec(spec, ("spec",), opts)
    selector = spec.get("selector")
    if selector is None:
        errors.append(required(("spec", "selector")))
    else:
        errors += meta.selector_errors(selector, ("spec", "selector"))
    labels = spec["template"]["metadata"].get("labels")
    if meta.selector_matches(selector, labels or {}) is False:
        errors.append(
            invalid(
                ("spec", "template", "metadata", "labels"),
                as_json(labels),
                "`selector` does not match template `labels`",
            )
        )
    completions = _int(spec, "completions")
    if spec.get("completionMode") == "Indexed" and completions is not None and completions > 0:
        name = str(job["metadata"].get("name") or "")
        hostname = f"{name}-{completions - 1}"
        if names.dns1123_label(hostname):
            detail = f"will not able to create pod with invalid DNS label: {hostname}"
            errors.append(invalid(("metadata", "name"), as_string(name), detail))
    return errors
