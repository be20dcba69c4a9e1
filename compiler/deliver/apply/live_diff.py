"""``trainc apply --diff``: the live objects against the desired ones, as ``trainc diff``.

Each desired object is compared with its live version projected on what an apply can
change (:mod:`.live`: server-populated fields, status, defaults and other managers'
fields are left out), and the result is a :class:`~compiler.deliver.diff.RenderDiff`
with the base ``live``, printed by the same formatter as ``trainc diff``. An object
that does not exist is ``added``; a required Secret that does not exist is ``added``
with its keys only (its values do not exist yet and are never shown). Objects carry
the ApplySet membership an apply would give them (the project cluster's ``applyset``,
else the one their live version has: :func:`~.applyset.kept_membership`). Nothing is
written to the cluster.
"""

from __future__ import annotations

import copy
from typing import Any

from compiler.deliver.apply.applyset import PART_OF_LABEL, applyset_id, kept_membership
from compiler.deliver.apply.client import Connection
from compiler.deliver.apply.immutable import forbidden_fields, refusal
from compiler.deliver.apply.kueue import left_to_kueue
from compiler.deliver.apply.live import changes, owned_fields
from compiler.deliver.apply.plan import ApplyPlan
from compiler.deliver.apply.run import LiveIndex
from compiler.deliver.diff import ObjectChange, RenderDiff, TrainJobDiff

__all__ = ["live_diff"]


def live_diff(connection: Connection, plan: ApplyPlan, field_manager: str) -> RenderDiff:
    live_index = LiveIndex(connection)
    by_trainjob: dict[tuple[str, str], list[ObjectChange]] = {}
    setting = plan.applyset
    set_id = None
    if setting is not None and setting.name is not None and setting.namespace is not None:
        set_id = applyset_id(setting.name, setting.namespace)
    for desired in plan.objects:
        resource = connection.resource(desired.api_version, desired.kind)
        namespace = desired.namespace if resource.namespaced else ""
        live = live_index.get(desired.api_version, desired.kind, namespace, desired.name)
        obj = desired.obj
        member = set_id if desired.kind != "Namespace" else None
        if member is None and live is not None:
            member = kept_membership(obj, live, owned_fields(live, field_manager))
        if member is not None:
            obj = _with_label(obj, PART_OF_LABEL, member)
        key = (desired.trainjob_namespace, desired.trainjob_name)
        if live is None:
            change = ObjectChange(
                desired.api_version, desired.kind, namespace, desired.name, "added"
            )
        else:
            # what Kueue set on admission is not a change an apply would make
            obj = dict(left_to_kueue(obj, live, field_manager))
            found = changes(obj, live, owned_fields(live, field_manager))
            if not found:
                continue
            # an apply would refuse it: said here, before anyone runs that apply
            fields = forbidden_fields(obj, live, found) if desired.kind == "JobSet" else ""
            refused = refusal(fields) if fields else ""
            change = ObjectChange(
                desired.api_version,
                desired.kind,
                namespace,
                desired.name,
                "changed",
                found,
                refused,
            )
        by_trainjob.setdefault(key, []).append(change)
    for required in plan.secrets:
        requirement = required.requirement
        if live_index.get("v1", "Secret", requirement.namespace, requirement.name) is None:
            by_trainjob.setdefault((requirement.namespace, required.trainjob_name), []).append(
                ObjectChange("v1", "Secret", requirement.namespace, requirement.name, "added")
            )
    trainjobs = [
        TrainJobDiff(
            "",
            namespace or "(project)",
            name or "namespaces",
            "added" if all(o.status == "added" for o in objects) else "changed",
            objects,
        )
        for (namespace, name), objects in sorted(by_trainjob.items())
    ]
    return RenderDiff("live", trainjobs)


def _with_label(obj: dict[str, Any], key: str, value: str) -> dict[str, Any]:
    """A copy of ``obj`` with one more label (the plan's objects are left as they are)."""
    out = copy.copy(obj)
    metadata = out["metadata"] = dict(obj.get("metadata") or {})
    metadata["labels"] = {**(metadata.get("labels") or {}), key: value}
    return out
