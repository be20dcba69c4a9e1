"""One apply: the plan's objects to the cluster, in order, with a result per object.

    live index   one LIST per (kind, namespace) the plan touches (Secrets as metadata
                 only), so an unchanged object costs no request of its own
    per object   compare with the live object (:mod:`.live`): no change, no write;
                 a JobSet change its rules forbid is refused (:mod:`.immutable`) or, with
                 ``recreate``, the JobSet is deleted and created again; else a
                 server-side apply (:mod:`.ssa`)
    secrets      required Secrets after the JobSets, created only if absent (:mod:`.secrets`)
    prune        with an ApplySet (:mod:`.applyset`) that prunes, members no longer
                 rendered are deleted; with none, each object keeps the membership its
                 live version has (:func:`.applyset.kept_membership`)

A server dry run cannot check an object in a namespace that this apply would create
(the API server refuses any write into a namespace that does not exist, and a dry run
creates nothing): such an object is ``unchecked``, not sent, and not a failure. So is a
TrainJob the Trainer's webhook denies only because its runtime does not exist, when
this dry run would create that runtime (:func:`runtime_missing`).

A refused object (conflict, immutable field, invalid, denied by admission, or a 2xx
that is not the object applied) is reported and the rest goes on; the run then exits 2.
Anything that stops the run (an API server that stops answering within the timeout,
401, the authorizer's 403, an answer that cannot be used: a malformed LIST, ApplySet
parent or discovery) raises :class:`Interrupted`, which names what was applied and
what was not: a second run completes the rest (everything already applied is
``unchanged``).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from compiler.deliver.apply.answers import (
    list_items,
    mapping,
    object_problem,
    preferred_version,
)
from compiler.deliver.apply.applyset import (
    PART_OF_LABEL,
    ApplySet,
    kept_membership,
    members_to_prune,
    split_group_kind,
)
from compiler.deliver.apply.client import (
    RESOURCES,
    ApiAnswer,
    BadAnswer,
    ClusterError,
    Connection,
    NotServed,
    Resource,
    Unreachable,
    denied_by_admission,
)
from compiler.deliver.apply.immutable import forbidden_fields, refusal
from compiler.deliver.apply.kueue import left_to_kueue
from compiler.deliver.apply.live import changes, owned_fields
from compiler.deliver.apply.plan import ApplyPlan, Desired, Required
from compiler.deliver.apply.secrets import secret_object
from compiler.deliver.apply.ssa import ApplyFailure, server_side_apply
from compiler.upstream.names import (
    CLUSTER_TRAINING_RUNTIME_KIND,
    TRAINING_RUNTIME_KIND,
    TRAINJOB_KIND,
)

__all__ = [
    "STATUSES",
    "ApplyOptions",
    "ApplyReport",
    "Interrupted",
    "Outcome",
    "apply",
    "some_names",
]

Json = dict[str, Any]
STATUSES = (
    "created",
    "configured",
    "recreated",
    "unchanged",
    "pruned",
    "skipped",
    "unchecked",
    "failed",
)
CHANGED = frozenset({"created", "configured", "recreated", "pruned"})


@dataclass(frozen=True)
class ApplyOptions:
    field_manager: str = "trainc"
    force_conflicts: bool = False
    dry_run: bool = False
    recreate: bool = False
    applyset: str | None = None  # the ApplySet parent Secret's name: a member of it
    applyset_namespace: str = "default"
    prune: bool = True  # with an ApplySet: delete its members no longer rendered


@dataclass
class Outcome:
    title: str
    status: str
    detail: str = ""

    def line(self, dry_run: bool = False) -> str:
        suffix = " (server dry run)" if dry_run and self.status in CHANGED else ""
        detail = f": {self.detail}" if self.detail else ""
        return f"{self.title} {self.status}{suffix}{detail}"


@dataclass
class ApplyReport:
    outcomes: list[Outcome] = field(default_factory=list)
    applied_jobsets: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # said once, after the objects

    def counts(self) -> dict[str, int]:
        return {s: sum(1 for o in self.outcomes if o.status == s) for s in STATUSES}

    @property
    def changed(self) -> int:
        return sum(1 for o in self.outcomes if o.status in CHANGED)

    @property
    def failed(self) -> bool:
        return any(o.status == "failed" for o in self.outcomes)


# the Trainer's TrainJob webhook (v2.3.0, TrainingRuntime/ClusterTrainingRuntime
# ValidateObjects) when the runtime a TrainJob names does not exist
_RUNTIME_NOT_FOUND = re.compile(
    r'"(?P<name>[^"]+)" not found: specified \w+ must be created before the TrainJob is created'
)


def runtime_missing(answer: ApiAnswer | None, runtime: str) -> bool:
    """Whether ``answer`` is the Trainer webhook's denial of a TrainJob because its
    runtime ``runtime`` does not exist (and for nothing else: it stops at that).

    >>> from compiler.deliver.apply.client import ApiAnswer
    >>> runtime_missing(ApiAnswer(403, {"message": 'admission webhook "v" denied the '
    ...     'request: spec.runtimeRef: Invalid value: x: trainingruntimes.trainer.kubeflow.org '
    ...     '"rt" not found: specified trainingRuntime must be created before the TrainJob is '
    ...     'created'}), "rt")
    True
    """
    if answer is None or answer.code != 403 or not denied_by_admission(answer):
        return False
    found = _RUNTIME_NOT_FOUND.search(str(answer.body.get("message")))
    return found is not None and found["name"] == runtime


def runtime_of(trainjob: Json) -> tuple[str, str]:
    """The (kind, name) of the runtime a TrainJob names (kind: ClusterTrainingRuntime
    unless it says TrainingRuntime, as the CRD defaults it)."""
    ref = mapping(mapping(trainjob.get("spec")).get("runtimeRef"))
    kind = ref.get("kind") or CLUSTER_TRAINING_RUNTIME_KIND
    return str(kind), str(ref.get("name") or "")


NAMES_SHOWN = 10  # of a list in a message: a run of thousands of objects stays readable


def some_names(names: list[str], shown: int = NAMES_SHOWN) -> str:
    """The first ``shown`` names and how many more (the count is the message's point).

    >>> some_names(["a", "b", "c"], 2), some_names([])
    ('a, b, ... and 1 more', 'nothing')
    """
    rest = len(names) - shown
    return ", ".join(names[:shown]) + (f", ... and {rest} more" if rest > 0 else "") or "nothing"


class Interrupted(ClusterError):
    """The run stopped part way; says what was and was not applied."""

    def __init__(self, cause: ClusterError, done: list[Outcome], pending: list[str]) -> None:
        applied = [o.title for o in done if o.status in CHANGED or o.status == "unchanged"]
        lines = [
            str(cause),
            f"applied ({len(applied)}): {some_names(applied)}",
            f"not applied ({len(pending)}): {some_names(pending)}",
            "run the same command again to apply the rest",
        ]
        super().__init__("\n".join(lines))
        self.done = done
        self.pending = pending


# --- the live index ---------------------------------------------------------------------


class LiveIndex:
    """Live objects by (apiVersion, kind, namespace, name), one LIST per kind and namespace."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self._objects: dict[tuple[str, str, str, str], Json] = {}
        self._listed: set[tuple[str, str, str]] = set()

    def load(self, api_version: str, kind: str, namespace: str) -> None:
        key = (api_version, kind, namespace)
        if key in self._listed:
            return
        resource = self.connection.resource(api_version, kind)
        path = resource.path(namespace if resource.namespaced else None)
        if kind == "Secret":
            answer = self.connection.list_metadata(path)
        else:
            answer = self.connection.get(path)
        if answer.code == 404:
            items: list[Json] = []  # a namespace that does not exist yet
        elif answer.code != 200:
            raise ClusterError(
                f"cannot list {kind} in {namespace or 'the cluster'} (GET {path}, "
                f"{answer.code}): {answer.message}"
            )
        else:
            items = list_items(answer, f"GET {path}")
        for item in items:
            item.setdefault("apiVersion", api_version)  # core lists leave them out
            item.setdefault("kind", kind)
            metadata = item["metadata"]
            ns = str(metadata.get("namespace") or "") if resource.namespaced else ""
            self._objects[(api_version, kind, ns, metadata["name"])] = item
        self._listed.add(key)

    def get(self, api_version: str, kind: str, namespace: str, name: str) -> Json | None:
        self.load(api_version, kind, namespace)
        return self._objects.get((api_version, kind, namespace, name))

    def put(self, api_version: str, kind: str, namespace: str, name: str, obj: Json) -> None:
        self._objects[(api_version, kind, namespace, name)] = obj


# --- one apply --------------------------------------------------------------------------


class _Run:
    def __init__(
        self,
        connection: Connection,
        plan: ApplyPlan,
        options: ApplyOptions,
        progress: Callable[[Outcome], None],
    ) -> None:
        self.connection = connection
        self.plan = plan
        self.options = options
        self.progress = progress
        self.report = ApplyReport()
        self.live = LiveIndex(connection)
        self.jobset_uids: dict[tuple[str, str], str] = {}
        self.applyset: ApplySet | None = None
        self.applied_keys: set[tuple[str, str, str, str]] = set()
        # dry run: the namespaces and runtimes (kind, namespace, name) this apply would
        # create (they do not exist meanwhile)
        self.new_namespaces: set[str] = set()
        self.new_runtimes: set[tuple[str, str, str]] = set()
        # a member of no ApplySet: objects whose membership was kept, objects created
        self.kept: dict[str, int] = {}
        self.created_outside: list[str] = []

    def record(self, title: str, status: str, detail: str = "") -> None:
        outcome = Outcome(title, status, detail)
        self.report.outcomes.append(outcome)
        self.progress(outcome)

    # objects -----------------------------------------------------------------------

    def unchecked(self, title: str, namespace: str) -> bool:
        """In a dry run, record ``title`` as unchecked if its namespace is one this apply
        would create: the API server refuses a write into a namespace that does not
        exist, so nothing in it can be checked before a real apply creates it."""
        if not (self.options.dry_run and namespace in self.new_namespaces):
            return False
        self.record(
            title,
            "unchecked",
            f"namespace {namespace} does not exist yet: this apply creates it, and the API "
            "server cannot check an object in it before it exists",
        )
        return True

    def apply_object(self, desired: Desired) -> None:
        options = self.options
        resource = self.connection.resource(desired.api_version, desired.kind)
        namespace = desired.namespace if resource.namespaced else ""
        live = self.live.get(desired.api_version, desired.kind, namespace, desired.name)
        group = desired.api_version.rpartition("/")[0]
        self.applied_keys.add((group, desired.kind, namespace, desired.name))
        if self.unchecked(desired.title, namespace):
            return
        status_prefix = ""
        obj: Json = desired.obj  # what is sent: all of it when the apply creates the object
        if live is not None:
            owned = owned_fields(live, options.field_manager)
            kept = None if self.applyset is not None else kept_membership(desired.obj, live, owned)
            if kept is not None:
                metadata = desired.obj.setdefault("metadata", {})
                metadata.setdefault("labels", {})[PART_OF_LABEL] = kept
                self.kept[kept] = self.kept.get(kept, 0) + 1
            # what Kueue set on admission (spec.suspend: false, ...) stays Kueue's
            obj = dict(left_to_kueue(desired.obj, live, options.field_manager))
            found = changes(obj, live, owned)
            # an object this manager never applied is applied once, to own its fields
            if not found and owned:
                self._remember(desired, live)
                self.record(desired.title, "unchanged")
                return
            if desired.kind == "JobSet":
                fields = forbidden_fields(obj, live, found)
                if fields:
                    if not options.recreate:
                        self.record(desired.title, "failed", refusal(fields))
                        return
                    if options.dry_run:
                        self._remember(desired, live)
                        self.record(desired.title, "recreated", f"would delete it: {fields}")
                        return
                    self._delete(resource, namespace, desired.name, wait=True)
                    live = None
                    obj = desired.obj
                    status_prefix = "re"
        try:
            applied = server_side_apply(
                self.connection,
                resource,
                obj,
                field_manager=options.field_manager,
                force=options.force_conflicts,
                dry_run=options.dry_run,
                live_version=None if live is None else live["metadata"].get("resourceVersion"),
            )
        except ApplyFailure as failure:
            if not self._runtime_unchecked(desired, failure):
                self.record(desired.title, "failed", str(failure))
            return
        self._remember(desired, applied.obj)
        status = "recreated" if status_prefix else applied.status
        if desired.kind == "Namespace" and options.dry_run and status == "created":
            self.new_namespaces.add(desired.name)
        runtimes = (CLUSTER_TRAINING_RUNTIME_KIND, TRAINING_RUNTIME_KIND)
        if desired.kind in runtimes and options.dry_run and status == "created":
            self.new_runtimes.add((desired.kind, namespace, desired.name))
        if status == "created" and self.applyset is None and desired.kind != "Namespace":
            self.created_outside.append(desired.title)
        self.record(desired.title, status)

    def _runtime_unchecked(self, desired: Desired, failure: ApplyFailure) -> bool:
        """In a dry run, a TrainJob the Trainer's webhook denies only because its runtime
        does not exist, when this apply would create that runtime, is unchecked."""
        if not self.options.dry_run or desired.kind != TRAINJOB_KIND:
            return False
        kind, name = runtime_of(desired.obj)
        namespace = desired.namespace if kind == TRAINING_RUNTIME_KIND else ""
        if (kind, namespace, name) not in self.new_runtimes:
            return False
        if not runtime_missing(failure.answer, name):
            return False
        self.record(
            desired.title,
            "unchecked",
            f"its runtime {kind} {name} does not exist yet: this apply creates it, and the "
            "Trainer's webhook cannot check a TrainJob before its runtime exists (the API "
            "server's own validation passed)",
        )
        return True

    def _remember(self, desired: Desired, obj: Json) -> None:
        if desired.kind == "JobSet":
            uid = mapping(obj.get("metadata")).get("uid")
            if uid:
                self.jobset_uids[(desired.namespace, desired.name)] = str(uid)
            self.report.applied_jobsets.append((desired.namespace, desired.name))

    def _delete(self, resource: Resource, namespace: str, name: str, wait: bool) -> None:
        params = {"propagationPolicy": "Background"}
        if self.options.dry_run:
            params["dryRun"] = "All"
        path = resource.path(namespace or None, name)
        answer = self.connection.request("DELETE", path, params=params)
        if (answer.code >= 300 or answer.code < 200) and answer.code != 404:
            raise ClusterError(f"cannot delete {path} ({answer.code}): {answer.message}")
        while wait and not self.options.dry_run:
            if self.connection.get(path).code == 404:
                return
            if time.monotonic() > self.connection.deadline:
                raise Unreachable(f"{path} was not deleted before the timeout")
            time.sleep(0.2)

    # required secrets --------------------------------------------------------------

    def ensure_secret(self, required: Required) -> None:
        requirement = required.requirement
        self.applied_keys.add(("", "Secret", requirement.namespace, requirement.name))
        if self.unchecked(required.title, requirement.namespace):
            return
        if self.live.get("v1", "Secret", requirement.namespace, requirement.name) is not None:
            self.record(required.title, "unchanged", "exists: left alone")
            return
        owner = None
        if not requirement.owner_references and required.jobset is not None:
            uid = self.jobset_uids.get((requirement.namespace, required.jobset))
            if uid is None:
                self.record(
                    required.title, "skipped", f"its JobSet {required.jobset} was not applied"
                )
                return
            owner = {
                "apiVersion": "jobset.x-k8s.io/v1alpha2",
                "kind": "JobSet",
                "name": required.jobset,
                "uid": uid,
            }
        labels = {PART_OF_LABEL: self.applyset.id} if self.applyset is not None else None
        body = secret_object(requirement, labels, owner)
        params = {"fieldManager": self.options.field_manager}
        if self.options.dry_run:
            params["dryRun"] = "All"
        path = RESOURCES[("v1", "Secret")].path(requirement.namespace)
        answer = self.connection.request("POST", path, body, params)
        del body  # the key material: nowhere but in that request
        if answer.code == 409:
            self.record(required.title, "unchanged", "exists: left alone")
        elif answer.code >= 300 or answer.code < 200:
            self.record(required.title, "failed", f"not created ({answer.code}): {answer.message}")
        elif problem := object_problem(
            answer, "v1", "Secret", requirement.name, requirement.namespace
        ):
            self.record(
                required.title,
                "failed",
                f"the API server answered {answer.code} but not with the Secret: {problem}",
            )
        else:
            self.record(required.title, "created", "keys generated")

    # prune -------------------------------------------------------------------------

    def _apply_parent(self, widened: bool) -> None:
        assert self.applyset is not None
        if self.options.dry_run and self.applyset.namespace in self.new_namespaces:
            return  # nothing to check: the namespace of the parent does not exist yet
        parent = self.applyset.parent(widened=widened)
        try:
            server_side_apply(
                self.connection,
                RESOURCES[("v1", "Secret")],
                parent,
                field_manager=self.options.field_manager,
                force=True,
                dry_run=self.options.dry_run,
                live_version=None,
            )
        except ApplyFailure as failure:
            raise ClusterError(
                f"cannot update the ApplySet parent Secret "
                f"{self.applyset.namespace}/{self.applyset.name}: {failure}"
            ) from None

    def start_applyset(self) -> None:
        name = self.options.applyset
        if name is None:
            return
        applyset = ApplySet(name, self.options.applyset_namespace)
        path = RESOURCES[("v1", "Secret")].path(applyset.namespace, name)
        answer = self.connection.request(
            "GET", path, accept="application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
        )
        if answer.code == 200:
            bad = object_problem(answer, None, None, name, applyset.namespace)
            if bad is not None:
                raise BadAnswer(
                    f"the API server's answer to GET {path} is not an ApplySet parent Secret: {bad}"
                )
        elif answer.code != 404:
            raise ClusterError(
                f"cannot read the ApplySet parent (GET {path}, {answer.code}): {answer.message}"
            )
        problem = applyset.read_live(answer.body if answer.code == 200 else None)
        if problem is not None:
            raise ClusterError(problem)
        for desired in self.plan.objects:
            if desired.kind != "Namespace":
                applyset.add(desired.obj)
        for required in self.plan.secrets:
            applyset.group_kinds.add("Secret")
            applyset.namespaces.add(required.requirement.namespace)
        self.applyset = applyset
        self._apply_parent(widened=True)

    def prune(self) -> None:
        applyset = self.applyset
        if applyset is None or not self.options.prune:
            return  # the parent stays widened: the members not applied now are still there
        kinds, namespaces = applyset.prune_scope()
        for group_kind in sorted(kinds):
            kind, group = split_group_kind(group_kind)
            resource = self._resource_of_group_kind(group, kind)
            if resource is None:
                continue
            scopes = sorted(namespaces) if resource.namespaced else [""]
            for namespace in scopes:
                path = resource.path(namespace or None)
                answer = self.connection.get(
                    path, {"labelSelector": f"{PART_OF_LABEL}={applyset.id}"}
                )
                if answer.code == 404:
                    continue  # not served there
                if answer.code != 200:
                    raise ClusterError(
                        f"cannot list {kind} in {namespace or 'the cluster'} (GET {path}, "
                        f"{answer.code}): {answer.message}"
                    )
                for obj in members_to_prune(
                    list_items(answer, f"GET {path}"),
                    group,
                    kind,
                    self.applied_keys,
                    self.options.field_manager,
                    applyset.id,
                ):
                    metadata = obj["metadata"]
                    self._delete(resource, namespace, metadata["name"], wait=False)
                    where = f"{namespace}/{metadata['name']}" if namespace else metadata["name"]
                    self.record(f"{kind} {where}", "pruned")
        self._apply_parent(widened=False)

    def _resource_of_group_kind(self, group: str, kind: str) -> Resource | None:
        for (_, known_kind), resource in RESOURCES.items():
            if known_kind == kind and resource.group == group:
                return resource
        if not group:
            return None  # a core kind trainc does not apply: nothing of it to prune
        path = f"/apis/{group}"
        answer = self.connection.get(path)
        if answer.code == 404:
            return None  # the group is not served (its CRD is gone): nothing to prune
        if answer.code != 200:
            raise ClusterError(f"cannot read GET {path} ({answer.code}): {answer.message}")
        try:
            return self.connection.resource(preferred_version(answer, group, f"GET {path}"), kind)
        except NotServed:
            return None

    # the whole run -------------------------------------------------------------------

    def run(self) -> ApplyReport:
        pending = [d.title for d in self.plan.objects] + [r.title for r in self.plan.secrets]
        # the project's Namespaces first (they are never members): the ApplySet parent
        # may live in one of them
        namespaces = [d for d in self.plan.objects if d.kind == "Namespace"]
        others = [d for d in self.plan.objects if d.kind != "Namespace"]
        try:
            for desired in namespaces:
                self.apply_object(desired)
                pending.remove(desired.title)
            self.start_applyset()
            for desired in others:
                self.apply_object(desired)
                pending.remove(desired.title)
            for required in self.plan.secrets:
                self.ensure_secret(required)
                pending.remove(required.title)
            for title, why in self.plan.skipped:
                self.record(title, "skipped", why)
            self.prune()
        except ClusterError as error:
            raise Interrupted(error, self.report.outcomes, pending) from None
        if self.kept:
            self.report.notes.append(self._kept_note())
        return self.report

    def _kept_note(self) -> str:
        sets = ", ".join(f"{count} of {set_id}" for set_id, count in sorted(self.kept.items()))
        note = (
            f"kept the ApplySet membership ({PART_OF_LABEL}) of the objects applied again "
            f"({sets}): without it this apply would have taken them out of their set"
        )
        if self.created_outside:
            note += (
                f"; {len(self.created_outside)} new objects are members of no ApplySet "
                f"({some_names(self.created_outside)}): apply with --prune --applyset NAME, "
                "or set the cluster's applyset in trainc.yaml, so that every apply carries it"
            )
        return note


def apply(
    connection: Connection,
    plan: ApplyPlan,
    options: ApplyOptions,
    progress: Callable[[Outcome], None] = lambda _: None,
) -> ApplyReport:
    """Apply ``plan`` (see the module docstring); ``progress`` sees each outcome."""
    return _Run(connection, plan, options, progress).run()
