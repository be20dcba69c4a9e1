"""The JobSet webhooks of sigs.k8s.io/jobset v0.12.0 (``pkg/webhooks/jobset_webhook.go``).

Every Trainer installation runs them: the API server sends each JobSet the Trainer
controller applies through the mutating webhook (``mjobset.kb.io``, on create), then
the validating one (``vjobset.kb.io``, on create and update). Feature gates at their
v0.12.0 defaults: ``InPlaceRestart``, ``RestartJob`` and ``ElasticJobSet`` off.

* :func:`default_jobset` is ``Default``: success policy ``All``, startup policy
  ``AnyOrder``, completion mode ``Indexed`` and pod restart policy ``OnFailure`` for
  each replicated job, DNS hostnames and ``publishNotReadyAddresses`` on, failure policy
  rules named ``failurePolicyRule<i>``, volume claim policies retained as ``Delete``;
* :func:`validate_create` is ``ValidateCreate``: the errors in the webhook's order,
  as ``field.Error`` prints them (plain Go errors become ``<nil>: Internal error: ...``,
  as controller-runtime wraps them); :func:`validate_update` is ``ValidateUpdate``;
* :func:`denial` is the text the API server returns for a refusal, which the Trainer
  controller puts in its event.

Not emulated: the check of a ``volumeClaimPolicies`` template against an existing PVC
of that name (it reads the cluster; an offline render assumes there is none).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from typing import Any

from compiler.apiserver.crds import _dns_subdomain, _label_value
from compiler.errors import FieldError, JsonPath
from compiler.kube.fielderror import error_body, field_type, go_value
from compiler.kube.gotext import aggregated
from compiler.resolve.names import dns1035_label_errors
from compiler.upstream.typeinfo import TypeRef

__all__ = [
    "default_jobset",
    "denial",
    "invalid_message",
    "patch_may_add_null",
    "validate_create",
    "validate_update",
]

_MAX_INT32 = 2147483647
_MAX_MANAGED_BY = 63
_MAX_VOLUME_CLAIM = 63
_MAX_REPLICAS_RESTART_JOB = 1024

_DNS1035_TOO_LONG = "must be no more than 63 characters"
GROUP_NAME_TOO_LONG = ".spec.replicatedJob[].groupName is too long, must be less than 63 characters"
JOB_NAME_TOO_LONG = (
    "JobSet name is too long, job names generated for this JobSet will exceed 63 characters"
)
POD_NAME_TOO_LONG = (
    "JobSet name is too long, pod names generated for this JobSet will exceed 63 characters"
)
SUBDOMAIN_TOO_LONG = ".spec.network.subdomain is too long, must be less than 63 characters"

_JOB_FAILURE_REASONS = (
    "BackoffLimitExceeded",
    "DeadlineExceeded",
    "FailedIndexes",
    "MaxFailedIndexesExceeded",
    "PodFailurePolicy",
)
_RULE_NAME = re.compile(r"[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?")
_HTTP_PATH = r"[A-Za-z0-9/\-._~%!$&'()*+,;=:]+"
_STRING = TypeRef("string")

WEBHOOK_NAME = "vjobset.kb.io"
QUALIFIED_KIND = "JobSet.jobset.x-k8s.io"


# --- Default ------------------------------------------------------------------------


def default_jobset(jobset: Mapping[str, Any]) -> dict[str, Any]:
    """``Default``: ``jobset`` with the mutating webhook's defaults, as a new object.

    Only the maps on the way to a default are copied; the rest (pod templates) is
    shared with ``jobset``: copy before changing it in place.
    """
    out = dict(jobset)
    spec = out["spec"] = dict(out.get("spec") or {})
    if spec.get("successPolicy") is None:
        spec["successPolicy"] = {"operator": "All"}
    if spec.get("startupPolicy") is None:
        spec["startupPolicy"] = {"startupPolicyOrder": "AnyOrder"}
    rjobs = spec["replicatedJobs"] = [dict(r) for r in spec.get("replicatedJobs") or []]
    for rjob in rjobs:
        template = rjob["template"] = dict(rjob.get("template") or {})
        job_spec = template["spec"] = dict(template.get("spec") or {})
        if job_spec.get("completionMode") is None:
            job_spec["completionMode"] = "Indexed"
        pod_template = job_spec["template"] = dict(job_spec.get("template") or {})
        pod_spec = pod_template["spec"] = dict(pod_template.get("spec") or {})
        if not pod_spec.get("restartPolicy"):
            pod_spec["restartPolicy"] = "OnFailure"
    network = spec["network"] = dict(spec.get("network") or {})
    if network.get("enableDNSHostnames") is None:
        network["enableDNSHostnames"] = True
    if network.get("publishNotReadyAddresses") is None:
        network["publishNotReadyAddresses"] = True
    if spec.get("failurePolicy") is not None:
        policy = spec["failurePolicy"] = dict(spec["failurePolicy"])
        if policy.get("rules") is not None:
            policy["rules"] = [dict(rule) for rule in policy["rules"]]
            for index, rule in enumerate(policy["rules"]):
                if not rule.get("name"):
                    rule["name"] = f"failurePolicyRule{index}"
    if spec.get("volumeClaimPolicies") is not None:
        policies = spec["volumeClaimPolicies"] = [dict(p) for p in spec["volumeClaimPolicies"]]
        for policy in policies:
            if policy.get("retentionPolicy") is None:
                policy["retentionPolicy"] = {"whenDeleted": "Delete"}
    return out


_MISSING: Any = object()

_POD_SPEC: JsonPath = ("spec", "replicatedJobs", "*", "template", "spec", "template", "spec")
_CLAIM = ("ephemeral", "volumeClaimTemplate", "spec")
# Where the webhook's patch writes a value the JobSet schema refuses into a JobSet the
# schema accepts as sent: a field Go encodes without omitempty, absent from the body, that
# the schema has optional and not nullable (found from the Go types and the schema:
# jobset_webhook_test.py). "*": every item of a list.
NULL_BY_PATCH: tuple[JsonPath, ...] = (
    ("spec", "replicatedJobs", "*", "template", "spec"),  # a Job template without spec
    _POD_SPEC,  # a pod template without spec: its containers become null
    (*_POD_SPEC, "volumes", "*", "projected", "sources"),
    (*_POD_SPEC, "volumes", "*", *_CLAIM, "dataSource", "apiGroup"),
    (*_POD_SPEC, "volumes", "*", *_CLAIM, "dataSourceRef", "apiGroup"),
    ("spec", "volumeClaimPolicies", "*", "templates", "*", "spec", "dataSource", "apiGroup"),
    ("spec", "volumeClaimPolicies", "*", "templates", "*", "spec", "dataSourceRef", "apiGroup"),
)


_MUST = ""  # in a trie node: the key leading to it must be there (no JSON key is "")


def _trie(patterns: Sequence[JsonPath]) -> dict[str | int, Any]:
    root: dict[str | int, Any] = {}
    for pattern in patterns:
        node = root
        for key in pattern:
            node = node.setdefault(key, {})
        node[_MUST] = True
    return root


_NULL_TRIE = _trie(NULL_BY_PATCH)


def _absent_under(value: Any, node: Mapping[str | int, Any]) -> bool:
    """Whether a path of the trie ``node`` leads through ``value`` to a map lacking its
    last key (one walk for all the patterns: this runs on every rendered JobSet)."""
    for key, below in node.items():
        if key == _MUST:
            continue
        if key == "*":
            if type(value) is list and any(_absent_under(item, below) for item in value):
                return True
        elif type(value) is dict:
            if key not in value:
                if _MUST in below:
                    return True
            elif _absent_under(value[key], below):
                return True
    return False


def patch_may_add_null(jobset: Mapping[str, Any]) -> bool:
    """Whether the mutating webhook's patch may write, into ``jobset`` as sent, a value
    its schema refuses (:data:`NULL_BY_PATCH`): only then need a JobSet the schema accepts
    be validated again after the patch."""
    return _absent_under(jobset, _NULL_TRIE)


def patched(raw: Mapping[str, Any], original: Any, defaulted: Any) -> dict[str, Any]:
    """The stored JobSet after the mutating webhook's JSON patch.

    ``original`` and ``defaulted`` are the object before and after ``Default``, each as
    Go marshals it. controller-runtime patches ``raw`` towards ``defaulted`` but drops the
    removals that the Go round trip alone causes (fields Go omits, such as an env
    ``value: ""``), and sends no patch at all when ``Default`` changed nothing.
    """
    if original == defaulted:
        return copy.deepcopy(dict(raw))
    out: dict[str, Any] = _merge(raw, original, defaulted)
    return out


def _merge(raw: Any, original: Any, new: Any) -> Any:
    if isinstance(raw, Mapping) and isinstance(new, Mapping):
        out = {}
        for key, value in raw.items():
            if key in new:
                before = original.get(key, _MISSING) if isinstance(original, Mapping) else _MISSING
                out[key] = _merge(value, before, new[key])
            elif not (isinstance(original, Mapping) and key in original):
                out[key] = copy.deepcopy(value)  # removed by the round trip: kept
        for key, value in new.items():
            if key not in raw:
                out[key] = copy.deepcopy(value)
        return out
    if isinstance(raw, list) and isinstance(new, list) and len(raw) == len(new):
        before = (
            original
            if isinstance(original, list) and len(original) == len(raw)
            else [_MISSING] * len(raw)
        )
        return [_merge(a, b, c) for a, b, c in zip(raw, before, new, strict=True)]
    return copy.deepcopy(new)


# --- ValidateCreate -----------------------------------------------------------------


def _path_text(path: JsonPath) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


def _invalid(
    path: JsonPath, value: Any, detail: str, go_type: TypeRef | None = _STRING
) -> FieldError:
    return FieldError(
        "FieldValueInvalid",
        _path_text(path),
        error_body("FieldValueInvalid", value, detail, go_type),
        value,
        path,
    )


def _plain(message: str, path: JsonPath = ()) -> FieldError:
    """A plain Go error, which the webhook turns into ``field.InternalError(nil, err)``."""
    return FieldError("InternalError", "<nil>", f"Internal error: {message}", None, path)


def gen_job_name(jobset_name: str, rjob_name: str, index: int) -> str:
    """``placement.GenJobName``."""
    return f"{jobset_name}-{rjob_name}-{index}"


def _int(value: Any, default: int = 0) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _domain_prefixed_path(path: JsonPath, value: str) -> list[FieldError]:
    """apimachinery's ``IsDomainPrefixedPath``."""
    if not value:
        return [FieldError("FieldValueRequired", _path_text(path), "Required value", "", path)]
    host, sep, rest = value.partition("/")
    if not sep or not host or not rest:
        return [_invalid(path, value, 'must be a domain-prefixed path (such as "acme.io/foo")')]
    out = [_invalid(path, host, message) for message in _dns_subdomain(host)]
    if not re.fullmatch(_HTTP_PATH, rest):
        out.append(
            _invalid(path, rest, f"Invalid path (regex used for validation is '{_HTTP_PATH}')")
        )
    return out


def _replicated_job(
    errors: list[FieldError], jobset: Mapping[str, Any], index: int, rjob: Mapping[str, Any]
) -> None:
    name = str((jobset.get("metadata") or {}).get("name", ""))
    path: JsonPath = ("spec", "replicatedJobs", index)
    rname = str(rjob.get("name", ""))
    replicas = _int(rjob.get("replicas"), 1)
    job_spec = (rjob.get("template") or {}).get("spec") or {}
    parallelism = (
        _int(job_spec.get("parallelism"), 1) if job_spec.get("parallelism") is not None else 1
    )
    if parallelism * replicas > _MAX_INT32:
        errors.append(
            _plain(
                f"the product of replicas and parallelism must not exceed {_MAX_INT32} "
                f"for replicatedJob '{rname}'"
            )
        )
    group = str(rjob.get("groupName", ""))
    for message in dns1035_label_errors(group):
        detail = GROUP_NAME_TOO_LONG if _DNS1035_TOO_LONG in message else message
        errors.append(_invalid((*path, "groupName"), group, detail))
    longest_job = gen_job_name(name, rname, replicas - 1)
    for message in dns1035_label_errors(longest_job):
        detail = JOB_NAME_TOO_LONG if _DNS1035_TOO_LONG in message else message
        errors.append(_invalid((*path, "name"), longest_job, detail))
    completions = job_spec.get("completions")
    if job_spec.get("completionMode") == "Indexed" and completions is not None:
        longest_pod = f"{name}-{rname}-{replicas - 1}-{_int(completions) - 1}-abcde"
        for message in dns1035_label_errors(longest_pod):
            detail = POD_NAME_TOO_LONG if _DNS1035_TOO_LONG in message else message
            # the webhook reports the longest job name as the value, not the pod name
            errors.append(_invalid((*path, "name"), longest_job, detail))


def validate_create(jobset: Mapping[str, Any]) -> list[FieldError]:
    """``ValidateCreate`` of the defaulted ``jobset``: its errors, in the webhook's order."""
    errors: list[FieldError] = []
    spec = jobset.get("spec") or {}
    rjobs: Sequence[Mapping[str, Any]] = spec.get("replicatedJobs") or []
    failure_policy = spec.get("failurePolicy")
    if failure_policy is not None and failure_policy.get("restartStrategy") == "InPlaceRestart":
        errors.append(
            _plain(
                "InPlaceRestart restart strategy cannot be set when InPlaceRestart feature "
                "gate is disabled"
            )
        )
    if rjobs and rjobs[0].get("dependsOn") is not None:
        errors.append(_plain("DependsOn can't be set for the first ReplicatedJob"))
    subdomain = str((spec.get("network") or {}).get("subdomain") or "")
    if subdomain:
        path: JsonPath = ("spec", "network", "subdomain")
        errors.extend(_invalid(path, subdomain, message) for message in _dns_subdomain(subdomain))
        for message in dns1035_label_errors(subdomain):
            detail = SUBDOMAIN_TOO_LONG if _DNS1035_TOO_LONG in message else message
            errors.append(_invalid(path, subdomain, detail))
    managed_by = spec.get("managedBy")
    if managed_by is not None:
        path = ("spec", "managedBy")
        errors.extend(_domain_prefixed_path(path, str(managed_by)))
        if len(str(managed_by).encode()) > _MAX_MANAGED_BY:
            errors.append(
                FieldError(
                    "FieldValueTooLong",
                    _path_text(path),
                    f"Too long: may not be more than {_MAX_MANAGED_BY} bytes",
                    managed_by,
                    path,
                )
            )
    seen: set[str] = set()
    for index, rjob in enumerate(rjobs):
        seen.add(str(rjob.get("name", "")))
        _replicated_job(errors, jobset, index, rjob)
        for dependency in rjob.get("dependsOn") or []:
            if str(dependency.get("name", "")) not in seen:
                errors.append(
                    _plain(
                        f"replicatedJob: {rjob.get('name', '')} cannot depend on "
                        f"replicatedJob: {dependency.get('name', '')}",
                        ("spec", "replicatedJobs", index, "dependsOn"),
                    )
                )
    for target in (spec.get("successPolicy") or {}).get("targetReplicatedJobs") or []:
        if target not in seen:
            errors.append(
                _plain(
                    f"invalid replicatedJob name '{target}' does not appear in .spec.ReplicatedJobs",
                    ("spec", "successPolicy", "targetReplicatedJobs"),
                )
            )
    if failure_policy is not None:
        errors.extend(_failure_policy(failure_policy, rjobs, seen))
    coordinator = spec.get("coordinator")
    if coordinator is not None:
        for error in (_coordinator(jobset, coordinator), _coordinator_label(jobset, coordinator)):
            if error is not None:
                errors.append(error)
    if spec.get("volumeClaimPolicies"):
        errors.extend(_volume_claim_policies(jobset, spec["volumeClaimPolicies"]))
    return errors


def _failure_policy(
    policy: Mapping[str, Any], rjobs: Sequence[Mapping[str, Any]], names: set[str]
) -> list[FieldError]:
    errors: list[FieldError] = []
    rules = policy.get("rules") or []
    if any(r.get("action") in ("RestartJob", "RestartJobAndIgnoreMaxRestarts") for r in rules):
        # the RestartJob feature gate is off in v0.12.0: nothing else is checked
        return [
            _plain(
                "RestartJob and RestartJobAndIgnoreMaxRestarts failure policy actions are not "
                "allowed when RestartJob feature gate is disabled"
            )
        ]
    by_name: dict[str, list[int]] = {}
    path: JsonPath = ("spec", "failurePolicy", "rules")
    for index, rule in enumerate(rules):
        name = str(rule.get("name", ""))
        length = len(name.encode())
        if not 1 <= length <= 128:
            errors.append(
                _plain(
                    f"invalid failure policy rule name of length {length}, the rule name must "
                    "be at least 1 characters long and at most 128 characters long",
                    (*path, index, "name"),
                )
            )
        by_name.setdefault(name, []).append(index)
        if not _RULE_NAME.fullmatch(name):
            errors.append(
                _plain(
                    f"invalid failure policy rule name '{name}', a failure policy rule name "
                    "must start with an alphabetic character, optionally followed by a string "
                    "of alphanumeric characters or '_,:', and must end with an alphanumeric "
                    "character or '_'",
                    (*path, index, "name"),
                )
            )
        for target in rule.get("targetReplicatedJobs") or []:
            if target not in names:
                errors.append(
                    _plain(
                        f"invalid replicatedJob name '{target}' in failure policy does not "
                        "appear in .spec.ReplicatedJobs",
                        (*path, index, "targetReplicatedJobs"),
                    )
                )
        for reason in rule.get("onJobFailureReasons") or []:
            if reason not in _JOB_FAILURE_REASONS:
                errors.append(
                    _plain(
                        f"invalid job failure reason '{reason}' in failure policy is not a "
                        "recognized job failure reason",
                        (*path, index, "onJobFailureReasons"),
                    )
                )
    # Go walks a map here: with two or more repeated names the order is random
    for name, indexes in by_name.items():
        if len(indexes) > 1:
            shown = "[" + " ".join(str(i) for i in indexes) + "]"
            errors.append(
                _plain(
                    f"rule names are not unique, rules with indices {shown} all have the same "
                    f"name '{name}'",
                    (*path, indexes[-1], "name"),
                )
            )
    return errors


def _subdomain(jobset: Mapping[str, Any]) -> str:
    """``GetSubdomain``: the network subdomain, else the JobSet's name."""
    subdomain = ((jobset.get("spec") or {}).get("network") or {}).get("subdomain")
    return str(subdomain) if subdomain else str((jobset.get("metadata") or {}).get("name", ""))


def coordinator_endpoint(jobset: Mapping[str, Any]) -> str:
    """``CoordinatorEndpoint``: ``<jobset>-<rjob>-<job>-<pod>.<subdomain>``."""
    c = (jobset.get("spec") or {}).get("coordinator") or {}
    name = (jobset.get("metadata") or {}).get("name", "")
    return (
        f"{name}-{c.get('replicatedJob', '')}-{_int(c.get('jobIndex'))}-"
        f"{_int(c.get('podIndex'))}.{_subdomain(jobset)}"
    )


def _coordinator(jobset: Mapping[str, Any], c: Mapping[str, Any]) -> FieldError | None:
    target = str(c.get("replicatedJob", ""))
    rjobs = (jobset.get("spec") or {}).get("replicatedJobs") or []
    rjob = next((r for r in rjobs if r.get("name") == target), None)
    if rjob is None:
        return _plain(f"coordinator replicatedJob {target} does not exist")
    job_index, pod_index = _int(c.get("jobIndex")), _int(c.get("podIndex"))
    if not 0 <= job_index < _int(rjob.get("replicas"), 1):
        return _plain(f"coordinator job index {job_index} is invalid for replicatedJob {target}")
    job_spec = (rjob.get("template") or {}).get("spec") or {}
    completions = job_spec.get("completions")
    if job_spec.get("completionMode") != "Indexed" or completions is None:
        return _plain(
            "job for coordinator pod must be indexed completion mode, and completions number "
            "must be set"
        )
    if not 0 <= pod_index < _int(completions):
        return _plain(
            f"coordinator pod index {pod_index} is invalid for replicatedJob {target} job "
            f"index {job_index}"
        )
    return None


def _coordinator_label(jobset: Mapping[str, Any], c: Mapping[str, Any]) -> FieldError | None:
    value = coordinator_endpoint(jobset)
    problems = _label_value(value)
    if not problems:
        return None
    return _plain(
        f'spec will lead to invalid label value "{value}" for coordinator label '
        f'"jobset.sigs.k8s.io/coordinator" (long JobSet / ReplicatedJob / SubDomain name?): '
        + ", ".join(problems)
    )


def pvc_name(jobset_name: str, template_name: str) -> str:
    """``GeneratePVCName``: ``<template>-<jobset>``."""
    return f"{template_name}-{jobset_name}"


def _volume_claim_policies(
    jobset: Mapping[str, Any], policies: Sequence[Mapping[str, Any]]
) -> list[FieldError]:
    errors: list[FieldError] = []
    name = str((jobset.get("metadata") or {}).get("name", ""))
    rjobs = (jobset.get("spec") or {}).get("replicatedJobs") or []
    claims: set[str] = set()
    for p_index, policy in enumerate(policies):
        for t_index, template in enumerate(policy.get("templates") or []):
            path: JsonPath = ("spec", "volumeClaimPolicies", p_index, "template", t_index, "name")
            claim = str((template.get("metadata") or {}).get("name", template.get("name", "")))
            if claim in claims:
                errors.append(
                    _invalid(path, claim, "names must be unique for VolumeClaimPolicies template")
                )
            errors.extend(_invalid(path, claim, m) for m in _dns_subdomain(claim))
            if len(pvc_name(name, claim).encode()) > _MAX_VOLUME_CLAIM:
                errors.append(
                    _invalid(path, claim, "VolumeClaimPolicies template name is too long")
                )
            errors.extend(_claim_mounts(rjobs, claim))
            claims.add(claim)
    return errors


def _claim_mounts(rjobs: Sequence[Mapping[str, Any]], claim: str) -> list[FieldError]:
    errors: list[FieldError] = []
    mounted = False
    for r_index, rjob in enumerate(rjobs):
        pod = ((rjob.get("template") or {}).get("spec") or {}).get("template") or {}
        pod_spec = pod.get("spec") or {}
        for v_index, volume in enumerate(pod_spec.get("volumes") or []):
            if volume.get("name") == claim:
                path: JsonPath = (
                    "spec", "replicatedJobs", r_index, "template", "spec", "template", "spec",
                    "volumes", v_index, "name",
                )  # fmt: skip
                errors.append(
                    _invalid(
                        path,
                        claim,
                        f"volume name conflicts with VolumeClaimPolicy template name: {claim}",
                    )
                )
        containers = [*(pod_spec.get("initContainers") or []), *(pod_spec.get("containers") or [])]
        if any(m.get("name") == claim for c in containers for m in c.get("volumeMounts") or []):
            mounted = True
    if not mounted:
        # the []ReplicatedJob as json.Marshal prints it: Go's field order, omitempty
        at: JsonPath = ("spec", "replicatedJobs")
        go_type = field_type("jobset.v1alpha2.JobSet", at)
        shown = go_value(list(rjobs), go_type) if go_type is not None else list(rjobs)
        errors.append(
            _invalid(
                at,
                shown,
                "replicatedJob containers don't have a matching volumeMount: "
                f"{claim} from VolumeClaimPolicies",
                go_type,
            )
        )
    return errors


# --- ValidateUpdate -----------------------------------------------------------------


_KUEUE_MUTABLE = ("annotations", "labels")
_KUEUE_MUTABLE_SPEC = ("nodeSelector", "tolerations", "schedulingGates")


def validate_update(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[FieldError]:
    """``ValidateUpdate``: ``replicatedJobs`` and ``managedBy`` are immutable (``old``
    as stored, ``new`` after the API server's CRD defaults; the mutating webhook runs on
    create only). The error shows the new value as Go marshals it.

    A suspended JobSet (before or after the update) may change each pod template's
    labels, annotations, nodeSelector, tolerations and scheduling gates (for Kueue).
    """
    old_spec, new_spec = old.get("spec") or {}, new.get("spec") or {}
    munged = copy.deepcopy(new_spec.get("replicatedJobs") or [])
    if old_spec.get("suspend") or new_spec.get("suspend"):
        by_name = {r.get("name"): r for r in old_spec.get("replicatedJobs") or []}
        for rjob in munged:
            previous = by_name.get(rjob.get("name"))
            if previous is None:
                continue
            template = (
                rjob.setdefault("template", {}).setdefault("spec", {}).setdefault("template", {})
            )
            old_template = ((previous.get("template") or {}).get("spec") or {}).get(
                "template"
            ) or {}
            for key in _KUEUE_MUTABLE:
                _copy_key(
                    template.setdefault("metadata", {}), old_template.get("metadata") or {}, key
                )
            for key in _KUEUE_MUTABLE_SPEC:
                _copy_key(template.setdefault("spec", {}), old_template.get("spec") or {}, key)
    errors: list[FieldError] = []
    for key, value, before in (
        ("replicatedJobs", munged, old_spec.get("replicatedJobs") or []),
        ("managedBy", new_spec.get("managedBy"), old_spec.get("managedBy")),
    ):
        if _semantic(value) != _semantic(before):
            path: JsonPath = ("spec", key)
            go_type = field_type("jobset.v1alpha2.JobSet", path)
            shown = go_value(value, go_type) if go_type is not None else value
            errors.append(
                FieldError(
                    "FieldValueInvalid",
                    f"spec.{key}",
                    error_body("FieldValueInvalid", shown, "field is immutable", go_type),
                    value,
                    path,
                )
            )
    return errors


def _copy_key(target: dict[str, Any], source: Mapping[str, Any], key: str) -> None:
    if key in source:
        target[key] = copy.deepcopy(source[key])
    else:
        target.pop(key, None)


def _semantic(value: Any) -> Any:
    """``apiequality.Semantic.DeepEqual`` on JSON data: empty maps and lists are nil."""
    if isinstance(value, Mapping):
        return {k: _semantic(v) for k, v in value.items() if v not in ({}, [], None)}
    if isinstance(value, list):
        return [_semantic(v) for v in value] or None
    return value


# --- the refusal, as the API server words it ----------------------------------------


def invalid_message(
    name: str, errors: Sequence[FieldError], qualified_kind: str = QUALIFIED_KIND
) -> str:
    """``apierrors.NewInvalid``: ``JobSet.jobset.x-k8s.io "name" is invalid: ...``.

    The errors are aggregated as apimachinery does: repeated texts once, one error
    bare, several in ``[a, b]``.
    """
    return f'{qualified_kind} "{name}" is invalid: {aggregated(str(e) for e in errors)}'


def denial(name: str, errors: Sequence[FieldError]) -> str:
    """The API server's error for a JobSet the validating webhook refuses."""
    return f'admission webhook "{WEBHOOK_NAME}" denied the request: {invalid_message(name, errors)}'
