"""``make conformance-live``: every golden case through the real control plane, compared with trainc.

For each case in ``golden/``, on one running etcd + kube-apiserver v1.34.4 + Trainer
v2.3.0 controller manager (tests/live/controlplane.py), with the cluster cleaned
between cases:

1. create the inputs as ``kubectl create`` would (JSON bodies, ``fieldValidation=Strict``):
   PriorityClasses, then ClusterTrainingRuntimes, TrainingRuntimes, TrainJobs, in input
   order within each kind; a namespace an input names is created first;
2. for each admitted TrainJob, wait until the controller has created the objects the
   golden expects (or reported ``TrainJobResourcesCreationFailed``, or a timeout);
3. read back the JobSets, PodGroups, ConfigMaps and Secrets owned by the TrainJobs,
   each JobSet as the Trainer sent it (the API server's audit log: before JobSet's
   mutating webhook defaulted it);
4. normalise (below) and compare with what trainc renders for the same inputs with
   ``--owner-uid`` set to the TrainJob's real UID, using tests/conformance/normalise.py;
5. at the pod depth (the default), collect the Jobs, headless Services and Pods the
   JobSet and Job controllers create (tests/live/workloads.py) and, when
   ``compiler.expand`` is importable, compare them with ``expand(objects, "pods")`` of
   each TrainJob's rendered objects.

A case is *identical* when both sides create the same objects (after normalisation)
or both reject the input. Rejection texts are not part of the verdict; every error
case's real messages are written to ``conformance-out/live/errors.json``, with trainc's
problems beside them and whether each real message appears word for word in them.

Normalisation of the live objects (what the server or the run adds, not the controller):

- metadata the server populates: ``uid``, ``resourceVersion``, ``creationTimestamp``,
  ``generation``, ``managedFields``; ``status`` (no JobSet, PodGroup or other
  controller runs; trainc renders no status);
- the runtime snapshot ConfigMap ``<trainjob>-runtime-snapshot`` (a side effect of
  the first reconcile holding server metadata; README: not rendered);
- with several TrainJobs in one case, each TrainJob's real UID in ``ownerReferences``
  is replaced by the case's ``ownerUID`` and trainc renders with that UID (trainc
  takes one ``--owner-uid``).

The API server's defaults, applied to both sides where absent (SERVER_DEFAULTS;
a case identical only after these is counted separately as "with server defaults"):

- JobSet: ``protocol: TCP`` on every container and init container port (the JobSet
  CRD embeds the core Pod schema, whose ``protocol`` defaults to TCP);
- Volcano PodGroup: ``spec.queue: default`` (the generated CRD's default);
- Secret: ``type: Opaque`` (core API default).

Per-case differences go to ``conformance-out/live/<case>.txt``, every case's live objects
(normalised as above, the case's ``ownerUID`` in place of the real UIDs, generated key
material masked) to ``conformance-out/live/objects/<case>.yaml``, the Jobs, Services and Pods to
``workloads/<case>.yaml``; the closing line is ``conformance-live: X/Y cases identical``,
then, with ``compiler.expand``, ``conformance-live: X/Y cases identical (jobs, services, pods)``.
"""

from __future__ import annotations

import argparse
import copy
import importlib
import json
import os
import re
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from compiler.upstream.artifacts import cache_root
from tests.conformance import downstream, trainc_side
from tests.conformance.cases import REPO, Case, all_cases, message_key
from tests.conformance.normalise import first_difference, normalise
from tests.live import workloads
from tests.live.controlplane import (
    KCM_CONTROLLERS,
    RESOURCES,
    SERVICE_ACCOUNT_PATH,
    ApiError,
    Client,
    ControlPlane,
    Json,
    build,
    create,
    resource_for,
    start,
)
from tests.live.workloads import Workloads

Expand = Callable[[list[Json], str], list[Json]]

OUT = REPO / "conformance-out" / "live"
SNAPSHOT_SUFFIX = "-runtime-snapshot"
CREATION_FAILED = "TrainJobResourcesCreationFailed"
OWNED_KINDS = (
    "JobSet",
    "PodGroup/scheduling.x-k8s.io",
    "PodGroup/scheduling.volcano.sh",
    "ConfigMap",
    "Secret",
)
CREATE_ORDER = (
    "Namespace",
    "PriorityClass",
    "ClusterTrainingRuntime",
    "TrainingRuntime",
    "TrainJob",
)
SERVER_METADATA = ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields")


# --- the API server's defaults ------------------------------------------------------


def _default_port_protocol(obj: Json) -> None:
    spec = obj.get("spec") or {}
    for job in spec.get("replicatedJobs") or []:
        pod = (((job.get("template") or {}).get("spec") or {}).get("template") or {}).get(
            "spec"
        ) or {}
        for key in ("containers", "initContainers"):
            for container in pod.get(key) or []:
                for port in container.get("ports") or []:
                    port.setdefault("protocol", "TCP")


def _default_volcano_queue(obj: Json) -> None:
    if isinstance(obj.get("spec"), dict):
        obj["spec"].setdefault("queue", "default")


def _default_secret_type(obj: Json) -> None:
    obj.setdefault("type", "Opaque")


# (apiVersion, kind) -> the defaults the API server applies on create.
SERVER_DEFAULTS: dict[tuple[str, str], Callable[[Json], None]] = {
    ("jobset.x-k8s.io/v1alpha2", "JobSet"): _default_port_protocol,
    ("scheduling.volcano.sh/v1beta1", "PodGroup"): _default_volcano_queue,
    ("v1", "Secret"): _default_secret_type,
}


def with_server_defaults(objects: list[Json]) -> list[Json]:
    out = []
    for obj in objects:
        obj = copy.deepcopy(obj)
        apply = SERVER_DEFAULTS.get((str(obj.get("apiVersion")), str(obj.get("kind"))))
        if apply is not None:
            apply(obj)
        out.append(obj)
    return out


# --- one case on the cluster --------------------------------------------------------


@dataclass
class LiveAnswer:
    """What the real control plane did with a case's inputs."""

    objects: list[Json] = field(default_factory=list)
    # One entry per rejected create: the object, the HTTP code, the Status.
    rejections: list[Json] = field(default_factory=list)
    # Per TrainJob: the controller's creation-failure event messages.
    creation_failures: list[Json] = field(default_factory=list)
    trainjob_uids: dict[str, str] = field(default_factory=dict)  # "ns/name" -> uid
    timed_out: list[str] = field(default_factory=list)
    # The JobSets as stored (after JobSet's mutating webhook); ``objects`` holds them as
    # the Trainer sent them (the audit log's request bodies) when the log has them.
    stored_jobsets: list[Json] = field(default_factory=list)
    jobsets_as_sent: bool = False
    # The JobSet and Job controllers' Jobs, Services and Pods (with the pod controllers).
    workloads: Workloads | None = None
    # Creation-failure events of a TrainJob whose objects were all created as trainc
    # renders them: a later reconcile's apply failed (see compare()).
    later_failures: list[Json] = field(default_factory=list)


def _documents(case: Case) -> list[Json]:
    docs: list[Json] = []
    for path in case.inputs:
        for doc in yaml.safe_load_all(path.read_text()):
            if isinstance(doc, dict):
                docs.append(doc)
    ordered = [d for kind in CREATE_ORDER for d in docs if d.get("kind") == kind]
    return ordered + [d for d in docs if d.get("kind") not in CREATE_ORDER]


def _name(obj: Json) -> str:
    metadata = obj.get("metadata") or {}
    namespace = metadata.get("namespace")
    return f"{namespace}/{metadata.get('name')}" if namespace else str(metadata.get("name"))


def _expected_counts(case: Case) -> dict[str, int]:
    """Objects the golden expects per owning TrainJob (``ns/name``), when it has objects."""
    if not case.expected_objects_path.exists():
        return {}
    counts: dict[str, int] = {}
    for doc in yaml.safe_load_all(case.expected_objects_path.read_text()):
        if not doc:
            continue
        namespace = (doc.get("metadata") or {}).get("namespace", "default")
        for ref in (doc.get("metadata") or {}).get("ownerReferences") or []:
            if ref.get("kind") == "TrainJob":
                key = f"{namespace}/{ref['name']}"
                counts[key] = counts.get(key, 0) + 1
    return counts


def _ensure_namespace(client: Client, namespace: str, service_account: bool = False) -> None:
    """Create ``namespace`` if missing; with ``service_account`` wait (10 s at most) for
    the ServiceAccount controller's ``default`` account, which Pods need to be admitted."""
    code, _ = client.raw("GET", f"/api/v1/namespaces/{namespace}")
    if code == 404:
        client.request(
            "POST",
            "/api/v1/namespaces",
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}},
        )
    deadline = time.monotonic() + 10.0
    path = SERVICE_ACCOUNT_PATH.format(namespace=namespace)
    while service_account and client.raw("GET", path)[0] != 200:
        if time.monotonic() > deadline:
            raise RuntimeError(f"no default ServiceAccount in namespace {namespace} after 10s")
        time.sleep(0.1)


def _owned(client: Client, namespaces: set[str], uids: set[str]) -> list[Json]:
    out = []
    for kind in OWNED_KINDS:
        resource = RESOURCES[kind]
        for namespace in sorted(namespaces):
            listing = client.get(resource.path(namespace))
            for item in listing.get("items") or []:
                refs = (item.get("metadata") or {}).get("ownerReferences") or []
                if not any(ref.get("uid") in uids for ref in refs):
                    continue
                if kind == "ConfigMap" and item["metadata"]["name"].endswith(SNAPSHOT_SUFFIX):
                    continue
                item.setdefault("apiVersion", resource.api_version)
                item.setdefault("kind", kind.split("/")[0])
                out.append(item)
    return out


def _failure_events(client: Client, namespace: str, uid: str) -> list[str]:
    messages = []
    for path in (
        f"/api/v1/namespaces/{namespace}/events",
        f"/apis/events.k8s.io/v1/namespaces/{namespace}/events",
    ):
        for event in client.get(path).get("items") or []:
            regarding = event.get("involvedObject") or event.get("regarding") or {}
            if regarding.get("uid") == uid and event.get("reason") == CREATION_FAILED:
                messages.append(str(event.get("message") or event.get("note") or ""))
    return sorted(set(messages))


def run_case(
    client: Client,
    case: Case,
    timeout: float,
    audit_log: Path | None = None,
    pods: bool = False,
    expected: dict[str, int] | None = None,
    jobset_log: Path | None = None,
) -> LiveAnswer:
    """Create the case's inputs and read back what the controllers made. With
    ``audit_log`` the JobSets are taken as the Trainer sent them; with ``pods`` the
    JobSet and Job controllers' Jobs, Services and Pods are collected too (with
    ``jobset_log``, the JobSet controller's, also the refusals whose event was too long
    to store). ``expected``: the objects to wait for per TrainJob (default: the
    golden's, see _expected_counts)."""
    answer = LiveAnswer()
    offset = workloads.audit_offset(audit_log) if audit_log else 0
    log_offset = jobset_log.stat().st_size if jobset_log and jobset_log.exists() else 0
    expected = _expected_counts(case) if expected is None else expected
    trainjobs: list[Json] = []
    documents = _documents(case)
    # The ServiceAccounts the inputs name exist, as on the cluster the runtimes were
    # written for (the ServiceAccount admission plugin refuses Pods naming a missing one).
    accounts = sorted(workloads.service_account_names(documents)) if pods else []
    for doc in documents:
        doc = copy.deepcopy(doc)
        try:
            resource = resource_for(doc)
        except KeyError as error:
            answer.rejections.append({"object": _name(doc), "code": 0, "message": str(error)})
            continue
        if resource.namespaced:
            doc.setdefault("metadata", {}).setdefault("namespace", "default")
            _ensure_namespace(client, doc["metadata"]["namespace"], service_account=pods)
            for account in accounts:
                workloads.ensure_service_account(client, doc["metadata"]["namespace"], account)
        namespace = doc["metadata"].get("namespace") if resource.namespaced else None
        code, got = create(
            client,
            resource.path(namespace),
            doc,
            {"fieldValidation": "Strict", "fieldManager": "kubectl-create"},
        )
        if code >= 300:
            status: Json = got if isinstance(got, dict) else {"message": str(got)}
            answer.rejections.append(
                {
                    "object": f"{doc.get('kind')} {_name(doc)}",
                    "code": code,
                    "reason": status.get("reason"),
                    "message": status.get("message"),
                    "causes": (status.get("details") or {}).get("causes") or [],
                }
            )
        elif doc.get("kind") == "TrainJob":
            trainjobs.append(got)
            answer.trainjob_uids[_name(got)] = got["metadata"]["uid"]
    if not trainjobs:
        return answer
    namespaces = {t["metadata"]["namespace"] for t in trainjobs}
    uids = set(answer.trainjob_uids.values())
    deadline = time.monotonic() + timeout
    want = sum(expected.get(_name(t), 0) for t in trainjobs)
    settle_until = time.monotonic() + (1.5 if want == 0 else 0.0)
    while True:
        objects = _owned(client, namespaces, uids)
        failures = {
            _name(t): _failure_events(client, t["metadata"]["namespace"], t["metadata"]["uid"])
            for t in trainjobs
        }
        failed = {k for k, v in failures.items() if v}
        done_jobs = {
            _name(t)
            for t in trainjobs
            if _name(t) in failed
            or sum(1 for o in objects if _owner_name(o) == _name(t)) >= expected.get(_name(t), 0)
        }
        if len(done_jobs) == len(trainjobs) and time.monotonic() >= settle_until:
            # one more read: objects of one reconcile arrive one by one
            time.sleep(0.3)
            objects = _owned(client, namespaces, uids)
            break
        if time.monotonic() > deadline:
            answer.timed_out = sorted(_name(t) for t in trainjobs if _name(t) not in done_jobs)
            break
        time.sleep(0.1)
    answer.stored_jobsets = [o for o in objects if o.get("kind") == "JobSet"]
    if audit_log is not None:
        objects, answer.jobsets_as_sent = _as_sent(objects, audit_log, offset)
    answer.objects = objects
    answer.creation_failures = [
        {"trainJob": k, "events": v} for k, v in sorted(failures.items()) if v
    ]
    if pods:
        logged = (jobset_log, log_offset) if jobset_log is not None else None
        answer.workloads = workloads.collect(client, answer.stored_jobsets, timeout, logged)
    return answer


def _as_sent(objects: list[Json], audit_log: Path, offset: int) -> tuple[list[Json], bool]:
    """``objects`` with each JobSet replaced by the body the Trainer sent for it (the
    audit log's last successful write, waited for up to 2 s: the log is written as the
    request completes); False, and the objects unchanged, when one is missing."""
    wanted = {_name(o) for o in objects if o.get("kind") == "JobSet"}
    deadline = time.monotonic() + 2.0
    sent = workloads.sent_jobsets(audit_log, offset)
    while not wanted <= set(sent) and time.monotonic() < deadline:
        time.sleep(0.1)
        sent = workloads.sent_jobsets(audit_log, offset)
    if not wanted <= set(sent):
        return objects, False
    out = []
    for obj in objects:
        if obj.get("kind") == "JobSet":
            body = copy.deepcopy(sent[_name(obj)])
            body.setdefault("apiVersion", obj.get("apiVersion"))
            out.append(body)
        else:
            out.append(obj)
    return out, True


def _owner_name(obj: Json) -> str:
    namespace = (obj.get("metadata") or {}).get("namespace", "")
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("kind") == "TrainJob":
            return f"{namespace}/{ref.get('name')}"
    return ""


# Owned objects cleaned only when their owner is of these kinds (a namespace's
# kube-root-ca.crt ConfigMap, the default/kubernetes Service stay).
CLEAN_OWNERS = {
    "ConfigMap": {"TrainJob"},
    "Secret": {"TrainJob"},
    "Service": {"JobSet"},
    "Pod": {"Job"},
}


def clean(client: Client) -> None:
    """Delete what a case created (no garbage collector runs) until nothing is left:
    owners first, so that no controller recreates what was just deleted."""
    for _ in range(8):
        leftovers = 0
        for kind in (
            "TrainJob",
            *OWNED_KINDS,
            "Job",
            "Service",
            "Pod",
            "TrainingRuntime",
            "ClusterTrainingRuntime",
            "PriorityClass",
            "ServiceAccount",
            "Event",
        ):
            resource = RESOURCES[kind]
            for item in client.get(resource.path()).get("items") or []:
                metadata = item["metadata"]
                if kind == "PriorityClass" and metadata["name"].startswith("system-"):
                    continue
                if kind == "ServiceAccount" and metadata["name"] == "default":
                    continue
                if kind in CLEAN_OWNERS and not any(
                    r.get("kind") in CLEAN_OWNERS[kind]
                    for r in metadata.get("ownerReferences") or []
                ):
                    continue
                leftovers += 1
                path = resource.path(metadata.get("namespace"), metadata["name"])
                if metadata.get("finalizers"):
                    client.raw(
                        "PATCH",
                        path,
                        {"metadata": {"finalizers": None}},
                        content_type="application/merge-patch+json",
                    )
                # a Pod bound to a Node waits for its kubelet unless deleted at once
                # (exclusive-placement leaders, workloads.bind_leader)
                grace = {"gracePeriodSeconds": "0"} if kind == "Pod" else None
                client.raw("DELETE", path, params=grace)
            if kind in ("TrainJob", "JobSet") and leftovers:
                time.sleep(0.3)  # let an in-flight reconcile finish before deleting its objects
        if leftovers == 0:
            return
    raise RuntimeError("the cluster does not come clean between cases")


# --- comparison ---------------------------------------------------------------------


def strip_server_fields(objects: list[Json], uid_map: dict[str, str]) -> list[Json]:
    out = []
    for obj in objects:
        obj = copy.deepcopy(obj)
        obj.pop("status", None)
        metadata = obj.get("metadata") or {}
        for key in SERVER_METADATA:
            metadata.pop(key, None)
        for ref in metadata.get("ownerReferences") or []:
            if ref.get("uid") in uid_map:
                ref["uid"] = uid_map[ref["uid"]]
        out.append(obj)
    return out


@dataclass
class Verdict:
    name: str
    kind: str  # "objects", "errors", "trainc-error"
    identical: bool
    byte_identical: bool
    difference: str | None
    seconds: float
    live: LiveAnswer
    trainc_problems: list[str] | None
    golden_difference: str | None
    env_order_random: bool = False
    owner_uid: str = ""
    golden_messages: list[str] = field(default_factory=list)  # expected-errors.json
    # At the pod depth: None when not compared (no pod controllers, or no compiler.expand).
    pods_identical: bool | None = None
    pods_difference: str | None = None

    def live_objects(self) -> list[Json]:
        """The live objects as goldens hold them: server fields stripped, the TrainJobs'
        UIDs replaced by the case's ``ownerUID``, generated key material masked."""
        uid_map = {uid: self.owner_uid for uid in self.live.trainjob_uids.values()}
        return normalise(strip_server_fields(self.live.objects, uid_map), self.env_order_random)


def compare(
    client: Client,
    case: Case,
    timeout: float,
    audit_log: Path | None = None,
    pods: bool = False,
    expand: Expand | None = None,
    jobset_log: Path | None = None,
) -> Verdict:
    """The case on the cluster against trainc; at the pod depth with ``pods`` (the live
    Jobs, Services and Pods) and ``expand`` (trainc's); ``jobset_log``: see run_case."""
    began = time.monotonic()
    if case.expect_trainc_error is not None:
        # Input no upstream component can read (YAML syntax): nothing reaches the server.
        actual = trainc_side.render(list(case.inputs), case.owner_uid)
        readable = True
        try:
            _documents(case)
        except yaml.YAMLError:
            readable = False
        ok = actual.objects is None and not readable
        return Verdict(
            case.name,
            "trainc-error",
            ok,
            ok,
            None if ok else "trainc renders, or the input parses",
            time.monotonic() - began,
            LiveAnswer(),
            [str(p) for p in actual.problems or []],
            None,
        )
    counts = None if has_expectation(case) else rendered_counts(case)
    live = run_case(client, case, timeout, audit_log, pods, counts, jobset_log)
    uids = list(live.trainjob_uids.values())
    owner_uid = uids[0] if len(uids) == 1 else case.owner_uid
    uid_map = {uid: owner_uid for uid in uids}
    actual = trainc_side.render(list(case.inputs), owner_uid)
    trainc_problems = None if actual.problems is None else [str(p) for p in actual.problems]
    env_random = case.env_order_random
    live_objects = normalise(strip_server_fields(live.objects, uid_map), env_random)
    # The API server's defaults on both sides: the stored PodGroups and Secrets have
    # them, a JobSet as the Trainer sent it has not (setdefault: no change where present).
    live_defaulted = normalise(
        with_server_defaults(strip_server_fields(live.objects, uid_map)), env_random
    )
    golden_difference = (
        _golden_difference(case, live, env_random) if has_expectation(case) else None
    )
    failures = "; ".join(m for f in live.creation_failures for m in f["events"])
    if live.rejections:
        kind = "errors"
        if actual.objects is None:
            difference = None
        else:
            difference = "the API server rejects ({}), trainc renders".format(
                "; ".join(str(r.get("message")) for r in live.rejections)
            )
        byte_identical = difference is None
    elif live.creation_failures and (
        not live.objects
        or _jobset_refused(live)
        or (actual.objects is None and _trainc_says_every_failure(live, trainc_problems))
    ):
        # Admitted, but the controller cannot create its objects: trainc must refuse too.
        # (The JobSet's refusal, by its webhook or the API server, may come after the
        # Trainer created the objects it applies before the JobSet, e.g. a PodGroup or the
        # Flux and MPI ConfigMaps: render refuses them all.)
        kind = "creation-failure"
        # trainc's JobSet webhook refusal: the Trainer's objects rendered, the JobSet denied
        if actual.objects is None or any(p.rule == "jobset-webhook" for p in actual.downstream):
            difference = None
        else:
            difference = (
                f"the controller reports {CREATION_FAILED} ({failures}) and creates nothing, "
                f"trainc renders {len(actual.objects)} objects"
            )
        byte_identical = difference is None
    else:
        kind = "objects"
        if live.timed_out:
            difference = f"timed out waiting for the controller: {', '.join(live.timed_out)}"
            byte_identical = False
        elif actual.objects is None:
            difference = "the cluster admits it, trainc rejects: " + "; ".join(
                trainc_problems or []
            )
            byte_identical = False
        else:
            trainc_objects = normalise(actual.objects, env_random)
            byte_identical = first_difference(live_objects, trainc_objects) is None
            difference = first_difference(
                live_defaulted, normalise(with_server_defaults(actual.objects), env_random)
            )
        if live.creation_failures and difference is None and live.objects:
            # Every object was created as trainc renders it; a later reconcile's apply
            # failed (JobSet's mutating webhook defaults volumeClaimPolicies' retention
            # policy on create only, so the Trainer's next apply changes an immutable
            # list). Not a difference in what is created; reported on its own.
            live.later_failures, live.creation_failures = live.creation_failures, []
        elif live.creation_failures:
            # Some objects were created, then one failed.
            difference = f"the controller reports {CREATION_FAILED} ({failures}); {difference}"
            byte_identical = False
    verdict = Verdict(
        case.name,
        kind,
        difference is None,
        byte_identical,
        difference,
        time.monotonic() - began,
        live,
        trainc_problems,
        golden_difference,
        env_random,
        case.owner_uid,
        _golden_messages(case),
    )
    if live.workloads is not None and expand is not None:
        refused = downstream_refusals(live)
        if actual.objects is not None and (actual.downstream or refused):
            # a refusal below the JobSet on either side: the refusals compared, as the
            # goldens' downstream.yaml is (none recorded: trainc must refuse nothing)
            verdict.pods_difference = downstream.downstream_difference(
                refused or None, actual.downstream, actual.objects, env_random
            )
        else:
            classes = [d for d in _documents(case) if d.get("kind") == "PriorityClass"]
            verdict.pods_difference = pods_difference(
                live, actual.objects, expand, env_random, classes
            )
        verdict.pods_identical = verdict.pods_difference is None
    return verdict


def has_expectation(case: Case) -> bool:
    """Whether the case has a golden expectation (a generated case, tests/live/fuzz_pods.py,
    has none: it is compared with trainc only)."""
    return (
        case.expect_trainc_error is not None
        or case.expected_objects_path.exists()
        or case.expected_errors_path.exists()
    )


def rendered_counts(case: Case) -> dict[str, int]:
    """The objects trainc renders per owning TrainJob (``ns/name``): what to wait for in a
    case without a golden (the comparison then finds any count that differs)."""
    answer = trainc_side.render(list(case.inputs), case.owner_uid)
    counts: dict[str, int] = {}
    for obj in answer.objects or []:
        owner = _owner_name(obj)
        if owner:
            counts[owner] = counts.get(owner, 0) + 1
    return counts


def by_trainjob(objects: list[Json]) -> list[list[Json]]:
    """trainc's objects grouped by the TrainJob that owns them, in first-seen order."""
    groups: dict[str, list[Json]] = {}
    for obj in objects:
        groups.setdefault(_owner_name(obj), []).append(obj)
    return list(groups.values())


def pods_difference(
    live: LiveAnswer,
    rendered: list[Json] | None,
    expand: Expand,
    env_random: bool,
    classes: list[Json] | None = None,
) -> str | None:
    """The controllers' Jobs, Services and Pods against ``expand(objects, "pods")`` of
    each TrainJob's rendered objects, with the case's PriorityClasses (``classes``, the
    cluster's); None when identical (or both refuse)."""
    assert live.workloads is not None
    created = live.workloads
    failures = "; ".join(created.failures)
    if created.timed_out:
        return f"timed out waiting for the JobSet and Job controllers: {created.timed_out[0]}"
    if rendered is None:
        # trainc refuses every input when the cluster refuses one (a case of several
        # TrainJobs whose first is refused by the API server or fails to create its
        # objects): the others' workloads have no counterpart
        if created.objects and not live.rejections and not live.creation_failures:
            return f"trainc refuses, the controllers create {workloads.summary(created.objects)}"
        return None  # nothing to expand on either side (compared at the JobSet depth)
    expanded: list[Json] = []
    try:
        for group in by_trainjob(rendered):
            expanded += expand([*(classes or []), *group], "pods")
        # the harness binds exclusive-placement leaders to a fake Node: their followers
        # carry its topology value (JobSet's pod webhook), which trainc leaves out
        expanded = workloads.follow_the_leader(expanded)
    except Exception as error:  # expand's refusal (or a bug): compared with the cluster's
        if failures:
            return None
        return f"expand fails ({type(error).__name__}: {error}), the controllers create " + (
            workloads.summary(created.objects)
        )
    if failures:
        return f"the controllers report {failures}; expand makes {workloads.summary(expanded)}"
    return workloads.workload_difference(
        workloads.normalise_workloads(created.objects, env_random),
        workloads.normalise_workloads(expanded, env_random),
    )


def load_expand() -> Expand | None:
    """``compiler.expand.expand`` when that package is there."""
    try:
        module = importlib.import_module("compiler.expand")
    except ImportError:
        return None
    function = getattr(module, "expand", None)
    return function if callable(function) else None


def _golden_messages(case: Case) -> list[str]:
    """The messages the golden records: the live ones where it has them."""
    if not case.expected_errors_path.exists():
        return []
    if case.live_messages:
        return case.live_messages
    errors = json.loads(case.expected_errors_path.read_text()).get("errors") or []
    return [message_key(str(e.get("message", ""))) for e in errors]


def live_messages(verdict: Verdict) -> list[str]:
    """Every message the control plane gave for a case: each finding of each rejection,
    then each creation-failure event, as :func:`message_key` masks them."""
    texts = [t for rejection in verdict.live.rejections for t in real_findings(rejection)]
    texts += [
        event.removeprefix(_RECONCILE_FAILED)
        for failure in verdict.live.creation_failures
        for event in failure["events"]
    ]
    return [message_key(t) for t in texts]


def write_goldens(verdicts: list[Verdict], versions: dict[str, str]) -> int:
    """Record the live messages in each error case's expected-errors.json; the count."""
    by_name = {case.name: case for case in all_cases()}
    written = 0
    for verdict in verdicts:
        case = by_name[verdict.name]
        messages = live_messages(verdict)
        if not messages or not case.expected_errors_path.exists():
            continue
        document = json.loads(case.expected_errors_path.read_text())
        document["live"] = {"producedBy": versions, "messages": messages}
        case.expected_errors_path.write_text(json.dumps(document, indent=2, sort_keys=True) + "\n")
        written += 1
    return written


_JOBSET_WEBHOOK = 'admission webhook "vjobset.kb.io"'


def _trainc_says_every_failure(live: LiveAnswer, problems: list[str] | None) -> bool:
    """Whether trainc refuses with every creation failure the controller reported, word
    for word. Trainer v2.3.0 applies a TrainJob's objects in its component plugins'
    order, which comes from a Go map and so changes with each controller start: the
    objects applied before the refused one exist after some starts and not after others
    (a PodGroup refused after its JobSet was created). The refusal is the same."""
    said = problems or []
    messages = [str(m) for f in live.creation_failures for m in f["events"]]
    return bool(messages) and all(any(m in p for p in said) for m in messages)


def _jobset_refused(live: LiveAnswer) -> bool:
    """Whether the JobSets of the TrainJobs whose creation failed were refused: none of
    them exists (a refused later update of a created JobSet is a later reconcile's
    failure, see compare()). Another TrainJob of the case may have its JobSet."""
    failed = {str(f["trainJob"]) for f in live.creation_failures}
    return bool(failed) and not any(
        o.get("kind") == "JobSet" and _owner_name(o) in failed for o in live.objects
    )


def downstream_refusals(live: LiveAnswer) -> list[downstream.Refusal]:
    """What the real controllers reported below the Trainer's objects: the JobSet
    webhook's denial (the Trainer's event on the TrainJob) and the JobSet and Job
    controllers' refused creates (their events), in a stable order."""
    refusals = [
        downstream.Refusal(f"TrainJob {failure['trainJob']}", CREATION_FAILED, event)
        for failure in live.creation_failures
        for event in failure["events"]
        if _JOBSET_WEBHOOK in event
    ]
    for failure in live.workloads.failures if live.workloads is not None else []:
        # "<Kind> <namespace>/<name>: <reason>: <message>" (tests/live/workloads.py)
        subject, reason, message = failure.split(": ", 2)
        refusals.append(downstream.Refusal(subject, reason, message))
    return sorted(refusals, key=lambda r: (r.object, r.reason, r.message))


def record_downstream(verdicts: list[Verdict], versions: dict[str, str]) -> tuple[int, int]:
    """Write each object case's downstream.yaml from what the cluster reported (remove it
    where the controllers created everything); (written, removed). A case whose wait
    timed out, or whose Trainer objects the cluster did not create, is left as it is."""
    by_name = {case.name: case for case in all_cases()}
    written = removed = 0
    for verdict in verdicts:
        case = by_name[verdict.name]
        live = verdict.live
        created = live.workloads
        if case.expectation()[0] != "objects" or created is None or created.timed_out:
            continue
        if live.timed_out or live.rejections:
            continue
        refusals = downstream_refusals(live)
        if refusals:
            downstream.write(case.downstream_path, refusals, versions)
            written += 1
        elif case.downstream_path.exists():
            case.downstream_path.unlink()
            removed += 1
    return written, removed


def _golden_difference(case: Case, live: LiveAnswer, env_random: bool) -> str | None:
    """The live answer against the committed golden (the fast oracle's expectation)."""
    kind, expected = case.expectation()
    if kind == "errors":
        if live.rejections:
            return None
        origins = {e.get("origin") for e in expected.get("errors", [])}
        if origins == {"controller"} and live.creation_failures and not live.objects:
            return None  # the oracle's controller error is the cluster's creation failure
        return "the golden says rejected, the cluster admits it"
    if live.creation_failures and not live.objects:
        return "the golden has objects, the controller creates nothing: " + "; ".join(
            m for f in live.creation_failures for m in f["events"]
        )
    if live.rejections:
        return "the golden has objects, the cluster rejects"
    uid_map = {uid: case.owner_uid for uid in live.trainjob_uids.values()}
    objects = normalise(
        with_server_defaults(strip_server_fields(live.objects, uid_map)), env_random
    )
    return first_difference(objects, normalise(with_server_defaults(expected), env_random))


_WEBHOOK_DENIED = re.compile(r'^admission webhook "[^"]+" denied the request: ')
# Between two field errors of an aggregate: ", " before the next field path.
_AGGREGATE_SPLIT = re.compile(r", (?=(?:spec|metadata|status)[\w.\[\]/-]*: |<nil>: )")
_RECONCILE_FAILED = "TrainJob resources reconciliation failed: "


def real_findings(rejection: Json) -> list[str]:
    """The findings of one rejection, each as ``field: message`` the way trainc prints them.

    A 422 Status lists them as causes; a webhook denial is one message (``[a, b]`` when
    several) after the ``admission webhook "..." denied the request:`` prefix.
    """
    causes = rejection.get("causes") or []
    if causes:
        return [
            f"{c['field']}: {c.get('message', '')}" if c.get("field") else str(c.get("message", ""))
            for c in causes
        ]
    message = str(rejection.get("message") or "")
    body = _WEBHOOK_DENIED.sub("", message)
    if body != message and body.startswith("[") and body.endswith("]"):
        return _AGGREGATE_SPLIT.split(body[1:-1])
    return [body]


def _message_report(verdict: Verdict) -> Json:
    """The real server's findings for an error case, and whether trainc says each word for word."""
    problems = verdict.trainc_problems or []
    rejections: list[Json] = []
    for rejection in verdict.live.rejections:
        texts = real_findings(rejection)
        rejections.append(
            {
                **rejection,
                "findings": [
                    {
                        "text": t,
                        "inTrainc": any(message_key(t) in message_key(p) for p in problems),
                        "inGolden": message_key(t) in verdict.golden_messages,
                    }
                    for t in texts
                ],
            }
        )
    failures: list[Json] = []
    for failure in verdict.live.creation_failures:
        for event in failure["events"]:
            text = event.removeprefix(_RECONCILE_FAILED)
            failures.append(
                {
                    "trainJob": failure["trainJob"],
                    "event": event,
                    "finding": {
                        "text": text,
                        "inTrainc": any(message_key(text) in message_key(p) for p in problems),
                        "inGolden": message_key(text) in verdict.golden_messages,
                    },
                }
            )
    findings: list[Json] = [f for r in rejections for f in r["findings"]] + [
        f["finding"] for f in failures
    ]
    return {
        "case": verdict.name,
        "verdict": "identical" if verdict.identical else "different",
        "rejections": rejections,
        "creationFailures": failures,
        "traincProblems": problems,
        "goldenMessages": verdict.golden_messages,
        "allFindingsInTrainc": all(f["inTrainc"] for f in findings),
        "allFindingsInGolden": all(f["inGolden"] for f in findings),
    }


def write_outputs(verdicts: list[Verdict], plane: ControlPlane) -> None:
    shutil.rmtree(OUT, ignore_errors=True)
    OUT.mkdir(parents=True)
    errors = [_message_report(v) for v in verdicts if v.live.rejections or v.live.creation_failures]
    (OUT / "errors.json").write_text(json.dumps(errors, indent=2, sort_keys=True) + "\n")
    (OUT / "objects").mkdir()
    (OUT / "workloads").mkdir()
    for verdict in verdicts:
        if verdict.live.trainjob_uids:
            (OUT / "objects" / f"{verdict.name}.yaml").write_text(
                yaml.safe_dump_all(verdict.live_objects(), sort_keys=False)
            )
        created = verdict.live.workloads
        if created is not None and (created.objects or created.failures):
            header = "".join(f"# {f}\n" for f in created.failures)
            header += "".join(f"# harness finished the Pods of Job {j}\n" for j in created.finished)
            (OUT / "workloads" / f"{verdict.name}.yaml").write_text(
                header
                + yaml.safe_dump_all(
                    workloads.normalise_workloads(created.objects, verdict.env_order_random),
                    sort_keys=False,
                )
            )
        if (
            verdict.identical
            and verdict.golden_difference is None
            and verdict.pods_identical is not False
        ):
            continue
        lines = [f"case: {verdict.name}", f"kind: {verdict.kind}"]
        if verdict.difference:
            lines.append(f"trainc vs live: {verdict.difference}")
        if verdict.pods_difference:
            lines.append(f"expand vs live Jobs, Services, Pods: {verdict.pods_difference}")
        if verdict.golden_difference:
            lines.append(f"golden vs live: {verdict.golden_difference}")
        if verdict.live.objects:
            lines.append("live objects (normalised; also in objects/):")
            lines.append(yaml.safe_dump_all(verdict.live_objects(), sort_keys=False))
        (OUT / f"{verdict.name}.txt").write_text("\n".join(lines) + "\n")
    summary = {
        "versions": plane.artifacts.versions,
        "coldBuildSeconds": plane.artifacts.cold_build_seconds,
        "startSeconds": round(plane.started_seconds, 2),
        "trainerStartSeconds": round(plane.controller_started_seconds or 0.0, 2),
        "podControllersStartSeconds": round(plane.pod_controllers_started_seconds or 0.0, 2),
        "cases": {
            v.name: {
                "kind": v.kind,
                "identical": v.identical,
                "byteIdentical": v.byte_identical,
                "difference": v.difference,
                "goldenDifference": v.golden_difference,
                "seconds": round(v.seconds, 2),
                "jobsetsAsSent": v.live.jobsets_as_sent,
                "laterReconcileFailures": v.live.later_failures,
                "workloads": None
                if v.live.workloads is None
                else {
                    "created": workloads.summary(v.live.workloads.objects),
                    "failures": v.live.workloads.failures,
                    "finishedByHarness": v.live.workloads.finished,
                    "timedOut": v.live.workloads.timed_out,
                },
                "podsIdentical": v.pods_identical,
                "podsDifference": v.pods_difference,
            }
            for v in verdicts
        },
    }
    (OUT / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="conformance-live", description=__doc__.split("\n")[0])
    parser.add_argument("cases", nargs="*", help="case names (default: every golden case)")
    parser.add_argument(
        "--timeout", type=float, default=20.0, help="seconds to wait for the controller per case"
    )
    parser.add_argument(
        "--depth",
        choices=("jobset", "pods"),
        default="pods",
        help="pods (default): also run the JobSet and Job controllers and compare their "
        "Jobs, Services and Pods with compiler.expand; jobset: the Trainer's objects only",
    )
    parser.add_argument(
        "--write-goldens",
        action="store_true",
        help="record what the control plane said in each error case's expected-errors.json",
    )
    parser.add_argument(
        "--record-downstream",
        action="store_true",
        help="record what the JobSet webhook and the JobSet and Job controllers refused "
        "below each object case's Trainer objects in its downstream.yaml (pod depth)",
    )
    args = parser.parse_args(argv)
    # the checkout's upstream cache first, as the test suite reads it (conftest.py): the
    # trainc-upstream package ships no examples/, and the cases reading them would vanish
    if (cache_root() / "upstream").is_dir():
        os.environ.setdefault("TRAINC_CACHE", str(cache_root()))
    if args.record_downstream and args.depth != "pods":
        parser.error("--record-downstream needs the pod depth (the JobSet and Job controllers)")
    cases = all_cases()
    if args.cases:
        wanted = set(args.cases)
        cases = [c for c in cases if c.name in wanted]
    began = time.monotonic()
    pods = args.depth == "pods"
    expand = load_expand() if pods else None
    artifacts = build()
    plane = start(artifacts, trainer=True, pods=pods)
    print(
        f"control plane up in {plane.started_seconds:.1f}s (Trainer controller "
        f"{plane.controller_started_seconds or 0:.1f}s): kube-apiserver {artifacts.versions['kube-apiserver']}, "
        f"etcd {artifacts.versions['etcd']}, Trainer {artifacts.versions['trainer']}"
    )
    if pods:
        print(
            f"pod controllers up in {plane.pod_controllers_started_seconds or 0:.1f}s: JobSet "
            f"{artifacts.versions.get('jobset')}, kube-controller-manager "
            f"{artifacts.versions.get('kube-controller-manager')} ({', '.join(KCM_CONTROLLERS)})"
        )
        if expand is None:
            print("compiler.expand is not importable: the pods are dumped, not compared")
    verdicts: list[Verdict] = []
    try:
        client = plane.client()
        for case in cases:
            try:
                clean(client)
                verdict = compare(
                    client, case, args.timeout, plane.audit_log, pods, expand, plane.jobset_log
                )
            except (ApiError, OSError, RuntimeError) as error:
                verdict = Verdict(
                    case.name,
                    "crash",
                    False,
                    False,
                    f"error: {error}",
                    0.0,
                    LiveAnswer(),
                    None,
                    None,
                )
            verdicts.append(verdict)
            depth = ""
            if verdict.live.workloads is not None:
                created = verdict.live.workloads
                depth = f" [{workloads.summary(created.objects)}"
                depth += f"; {len(created.failures)} refused" if created.failures else ""
                depth += f"; timed out: {created.timed_out[0]}]" if created.timed_out else "]"
            if verdict.live.later_failures:
                depth += f" (a later reconcile failed: {CREATION_FAILED})"
            if not verdict.identical:
                print(f"DIFF  {case.name}: {verdict.difference}")
            elif verdict.pods_identical is False:
                print(f"PODS  {case.name}{depth}: {verdict.pods_difference}")
            else:
                tag = "ok   " if verdict.byte_identical else "ok*  "
                print(f"{tag} {case.name}{depth}")
            sys.stdout.flush()
        clean(client)
        client.close()
        write_outputs(verdicts, plane)
    finally:
        plane.stop()
    if args.write_goldens:
        versions = {
            "kube-apiserver": artifacts.versions["kube-apiserver"],
            "etcd": artifacts.versions["etcd"],
            "github.com/kubeflow/trainer/v2": artifacts.versions["trainer"],
            "harness": "tests/live",
        }
        print(f"live messages recorded in {write_goldens(verdicts, versions)} error goldens")
    if args.record_downstream:
        below = {
            "kube-apiserver": artifacts.versions["kube-apiserver"],
            "kube-controller-manager": artifacts.versions["kube-controller-manager"],
            "sigs.k8s.io/jobset": artifacts.versions["jobset"],
            "github.com/kubeflow/trainer/v2": artifacts.versions["trainer"],
            "harness": "tests/live",
        }
        written, removed = record_downstream(verdicts, below)
        print(f"downstream.yaml: {written} written, {removed} removed")
    identical = sum(v.identical for v in verdicts)
    byte_identical = sum(v.byte_identical for v in verdicts)
    errors = [v for v in verdicts if v.live.rejections or v.live.creation_failures]
    reports = [_message_report(v) for v in errors]
    message_matches = sum(r["allFindingsInTrainc"] for r in reports)
    golden_matches = sum(r["allFindingsInGolden"] for r in reports)
    golden_agree = sum(v.golden_difference is None for v in verdicts)
    later = [v.name for v in verdicts if v.live.later_failures]
    if later:
        print(
            f"cases whose objects were created as rendered and a later Trainer reconcile "
            f"failed ({CREATION_FAILED}): {len(later)}: {', '.join(later)}"
        )
    refused = [v for v in verdicts if v.live.workloads is not None and v.live.workloads.failures]
    if refused:
        print(
            f"cases where the JobSet or Job controller's create was refused: {len(refused)}: "
            + ", ".join(v.name for v in refused)
        )
    print(
        f"{byte_identical} identical as created, {identical - byte_identical} with server defaults "
        f"(ok*); goldens agreeing with the cluster: {golden_agree}/{len(verdicts)}"
    )
    print(
        f"error cases whose every real message trainc says word for word: "
        f"{message_matches}/{len(errors)}; that the golden records word for word: "
        f"{golden_matches}/{len(errors)}"
    )
    print(f"{time.monotonic() - began:.0f}s; details in {OUT.relative_to(REPO)}/")
    print(f"conformance-live: {identical}/{len(verdicts)} cases identical")
    if expand is None:
        return 0 if identical == len(verdicts) else 1
    deep = sum(v.identical and v.pods_identical is not False for v in verdicts)
    print(f"conformance-live: {deep}/{len(verdicts)} cases identical (jobs, services, pods)")
    return 0 if deep == len(verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())
