"""The JobSet changes its admission webhook and CRD rules forbid, found before sending.

From sigs.k8s.io/jobset v0.12.0:

- ``pkg/webhooks/jobset_webhook.go`` ``ValidateUpdate``: ``spec.replicatedJobs`` is
  immutable (``ValidateImmutableField`` on the whole list, so adding or removing a
  replicated job is a change too), except, when the old or the new JobSet is suspended,
  each existing replicated job's pod template ``metadata.annotations``,
  ``metadata.labels``, ``spec.nodeSelector``, ``spec.tolerations`` and
  ``spec.schedulingGates`` (what Kueue changes); ``spec.managedBy`` is immutable.
  (Parallelism and completions of Indexed jobs are mutable only with the alpha
  ElasticJobSet feature gate, off by default: not exempted here.)
- ``api/jobset/v1alpha2/jobset_types.go`` CEL ``self == oldSelf``: ``spec.network``,
  ``spec.successPolicy``, ``spec.failurePolicy``, ``spec.startupPolicy``,
  ``spec.volumeClaimPolicies`` and each replicated job's ``dependsOn`` (inside
  ``replicatedJobs`` already).

trainc checks this itself: the webhook may not be installed, and then the server
would take a change the JobSet controller never acts on.

    >>> from compiler.deliver.diff import FieldChange, Key
    >>> change = FieldChange(("spec", "replicatedJobs", Key("name", "node"), "template",
    ...     "spec", "template", "metadata", "labels", "team"), "a", "b")
    >>> [format_path(c.path) for c in forbidden_changes([change], suspended=False)]
    ['spec.replicatedJobs[name=node].template.spec.template.metadata.labels.team']
    >>> forbidden_changes([change], suspended=True)
    []
"""

from __future__ import annotations

from collections.abc import Iterable

from compiler.deliver.diff import MISSING, FieldChange, Key, format_path

__all__ = [
    "IMMUTABLE_SPEC_FIELDS",
    "forbidden_changes",
    "forbidden_fields",
    "format_path",
    "refusal",
]

IMMUTABLE_SPEC_FIELDS = frozenset(
    {
        "replicatedJobs",
        "managedBy",
        "network",
        "successPolicy",
        "failurePolicy",
        "startupPolicy",
        "volumeClaimPolicies",
    }
)
# Under replicatedJobs[name=x].template.spec.template: mutable while suspended.
_SUSPENDED_MUTABLE = (
    ("metadata", "annotations"),
    ("metadata", "labels"),
    ("spec", "nodeSelector"),
    ("spec", "tolerations"),
    ("spec", "schedulingGates"),
)


def _mutable_while_suspended(change: FieldChange) -> bool:
    path = change.path
    if len(path) < 3 or not isinstance(path[2], Key):
        return False  # a whole replicated job added or removed
    if change.old is MISSING and len(path) == 3:
        return False
    rest = path[3:]
    if tuple(rest[:3]) != ("template", "spec", "template"):
        return False
    return tuple(rest[3:5]) in _SUSPENDED_MUTABLE


def forbidden_changes(changes: Iterable[FieldChange], suspended: bool) -> list[FieldChange]:
    """The changes to a live JobSet the webhook or the CRD rules refuse.

    ``suspended``: the live or the desired JobSet has ``spec.suspend: true``.
    """
    out = []
    for change in changes:
        path = change.path
        if len(path) < 2 or path[0] != "spec" or path[1] not in IMMUTABLE_SPEC_FIELDS:
            continue
        if path[1] == "replicatedJobs" and suspended and _mutable_while_suspended(change):
            continue
        out.append(change)
    return out


def forbidden_fields(
    desired: dict[str, object], live: dict[str, object], found: list[FieldChange]
) -> str:
    """The fields of ``found`` (changes of a live JobSet) an apply may not change,
    comma-separated; ``""`` when it may change them all."""
    specs = [obj.get("spec") for obj in (live, desired)]
    suspended = any(isinstance(spec, dict) and bool(spec.get("suspend")) for spec in specs)
    return ", ".join(format_path(c.path) for c in forbidden_changes(found, suspended))


def refusal(fields: str) -> str:
    """Why an apply refuses a JobSet, as apply reports it and ``--diff`` warns of it."""
    return f"immutable fields changed: {fields} (--recreate deletes and recreates the JobSet)"
