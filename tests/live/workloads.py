"""The pod depth of the live oracle: the Jobs, headless Services and Pods the real JobSet
controller (sigs.k8s.io/jobset v0.12.0) and Job controller (kube-controller-manager
v1.34.4) create from a JobSet, read back and normalised for comparison with
``compiler.expand.expand(objects, "pods")``.

What the harness does while it waits (no scheduler or kubelet runs, Pods stay Pending):

- each Pod is recorded the first time it is seen, i.e. as the Job controller created it;
- a replicated job others ``dependsOn`` would never finish without a kubelet, nor
  would a Job of an ``InOrder`` startup policy become ready, so its Pods' status is set
  as a kubelet would report them (``Complete``: phase Succeeded; ``Ready``: Running with
  a Ready condition) *after* they are recorded; the JobSet controller then creates the
  next Jobs. Only ``status`` is written.

Normalisation, the same on both sides (:func:`normalise_workloads`):

- server metadata ``uid``, ``resourceVersion``, ``creationTimestamp``, ``generation``,
  ``managedFields`` and ``status`` are dropped (also a pod template's
  ``creationTimestamp``);
- an ``ownerReferences[].uid`` becomes ``<uid of KIND NAME>`` (the owner's kind and name
  are in the reference, so a Pod pointing at the wrong Job still differs);
- the UID-valued labels (``controller-uid``, ``batch.kubernetes.io/controller-uid``,
  ``jobset.sigs.k8s.io/jobset-uid``) become ``<uid>`` wherever labels or selectors are;
- a Pod's name after its ``generateName`` (the Job controller's random suffix) becomes
  ``<random>``; ``generateName`` itself is compared;
- the ServiceAccount admission plugin's projected volume ``kube-api-access-XXXXX`` (a
  random suffix) becomes ``kube-api-access-<random>`` in volumes and volumeMounts;
- for runtimes whose env order is random upstream (xgboost), env lists are sorted.
"""

from __future__ import annotations

import copy
import json
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.live.controlplane import RESOURCES, ApiError, Client, Json

WORKLOAD_KINDS = ("Job", "Service", "Pod")
RANDOM = "<random>"
UID = "<uid>"
UID_LABELS = frozenset(
    {"controller-uid", "batch.kubernetes.io/controller-uid", "jobset.sigs.k8s.io/jobset-uid"}
)
SERVER_METADATA = ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields")
JOBSET_CONTROLLER = "jobset.sigs.k8s.io/jobset-controller"
REPLICATED_JOB_LABEL = "jobset.sigs.k8s.io/replicatedjob-name"
# Warning events of the JobSet controller and the Job controller when a create fails.
FAILURE_REASONS = frozenset({"JobCreationFailed", "HeadlessServiceCreationFailed", "FailedCreate"})
# A create that lost a race with the controller's own earlier create: not a refusal.
TRANSIENT = "already exists"
# JobSet's pod webhook (vpod.kb.io) refusing an exclusive-placement follower Pod until
# its leader Pod exists and is scheduled; the harness binds the leader (bind_leaders),
# and the Job controller's next try is admitted. Its own words call it transient.
FOLLOWER_WAITING = (
    "follower pod node selector not set",
    "follower pod node selector for topology domain not found",
    "leader pod not yet scheduled",
    "this is an expected, transient error",
)
EXCLUSIVE = "alpha.jobset.sigs.k8s.io/exclusive-topology"
NODE_SELECTOR_STRATEGY = "alpha.jobset.sigs.k8s.io/node-selector-strategy"
JOBSET_NAME = "jobset.sigs.k8s.io/jobset-name"
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
# The Node the harness binds exclusive-placement leaders to (no scheduler runs), with a
# value for each topology label a case may place on.
FAKE_NODE = "trainc-fake-node"
FAKE_TOPOLOGY = {
    "kubernetes.io/hostname": FAKE_NODE,
    "cloud.google.com/gke-nodepool": "trainc-fake-pool",
    "topology.kubernetes.io/zone": "trainc-fake-zone",
    "topology.kubernetes.io/region": "trainc-fake-region",
}
# The API server keeps no event whose note passes this (events.k8s.io, the JobSet
# controller's recorder: pkg/apis/core/validation/events.go NoteLengthLimit).
NOTE_LIMIT = 1024
_KUBE_API_ACCESS = re.compile(r"^kube-api-access-[a-z0-9]{5}$")


# --- what the Trainer sent --------------------------------------------------------------


def audit_offset(audit_log: Path) -> int:
    """Where the audit log ends now: a case reads only the events after it."""
    try:
        return audit_log.stat().st_size
    except FileNotFoundError:
        return 0


def sent_jobsets(audit_log: Path, offset: int) -> dict[str, Json]:
    """``ns/name`` -> the body of the last successful JobSet write after ``offset``: the
    JobSet as its writer (the Trainer's server-side apply) sent it, before admission."""
    out: dict[str, Json] = {}
    try:
        with audit_log.open("rb") as handle:
            handle.seek(offset)
            lines = handle.read().decode(errors="replace").splitlines()
    except FileNotFoundError:
        return out
    for line in lines:
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line still being written
        ref = event.get("objectRef") or {}
        body = event.get("requestObject")
        code = (event.get("responseStatus") or {}).get("code", 0)
        if (
            ref.get("resource") == "jobsets"
            and not ref.get("subresource")
            and isinstance(body, dict)
            and body.get("kind") == "JobSet"
            and 200 <= code < 300
        ):
            out[f"{ref.get('namespace')}/{ref.get('name')}"] = body
    return out


# --- the controllers' objects -----------------------------------------------------------


def service_account_names(documents: Iterable[Any]) -> set[str]:
    """Every ``serviceAccountName`` (but ``default``) anywhere in ``documents``."""
    found: set[str] = set()
    stack = list(documents)
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            name = value.get("serviceAccountName")
            if isinstance(name, str) and name and name != "default":
                found.add(name)
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return found


def ensure_service_account(client: Client, namespace: str, name: str) -> None:
    path = RESOURCES["ServiceAccount"].path(namespace)
    if client.raw("GET", f"{path}/{name}")[0] == 200:
        return
    account = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}}
    code, got = client.raw("POST", path, account)
    if code >= 300 and code != 409:
        raise ApiError(code, got, f"POST {path}")


@dataclass
class Workloads:
    """What the JobSet and Job controllers created for a case's JobSets."""

    objects: list[Json] = field(default_factory=list)  # Jobs, Services, Pods as created
    failures: list[str] = field(default_factory=list)  # "Kind ns/name: reason: message"
    finished: list[str] = field(default_factory=list)  # Jobs whose Pods the harness finished
    timed_out: list[str] = field(default_factory=list)


def _refs(obj: Json) -> list[Json]:
    return list((obj.get("metadata") or {}).get("ownerReferences") or [])


def _owned_by(obj: Json, uids: set[str]) -> bool:
    return any(ref.get("uid") in uids for ref in _refs(obj))


def _list(client: Client, kind: str, namespaces: Iterable[str]) -> list[Json]:
    resource = RESOURCES[kind]
    out = []
    for namespace in sorted(set(namespaces)):
        for item in client.get(resource.path(namespace)).get("items") or []:
            item.setdefault("apiVersion", resource.api_version)
            item.setdefault("kind", kind)
            out.append(item)
    return out


def managed_elsewhere(obj: Json) -> bool:
    """A JobSet or Job another controller manages (``spec.managedBy``): left alone."""
    managed_by = (obj.get("spec") or {}).get("managedBy")
    return managed_by not in (None, JOBSET_CONTROLLER, "kubernetes.io/job-controller")


def expected_jobs(jobset: Json) -> int:
    """The Jobs the JobSet controller creates: every replica, but none while another
    controller manages the JobSet, and none of a replicated job that ``dependsOn``
    another while the JobSet is suspended (a suspended Job never completes) or when the
    JobSet completes first (compiler.expand.jobset_controller ``created``: the wait
    stops there; the comparison still sees any Job the cluster makes)."""
    from compiler.expand.jobset_controller import created

    if managed_elsewhere(jobset):
        return 0
    spec = jobset.get("spec") or {}
    return sum(
        int(job.get("replicas", 1))
        for job in spec.get("replicatedJobs") or []
        if created(jobset, job)
    )


def expected_services(jobset: Json) -> int:
    """The stored (defaulted) JobSet's headless Service: one with DNS hostnames."""
    if managed_elsewhere(jobset):
        return 0
    network = (jobset.get("spec") or {}).get("network") or {}
    return 1 if network.get("enableDNSHostnames") else 0


def expected_pods(job: Json) -> int:
    spec = job.get("spec") or {}
    if spec.get("suspend") or managed_elsewhere(job):
        return 0
    parallelism = int(spec.get("parallelism", 1))
    completions = spec.get("completions")
    return parallelism if completions is None else min(parallelism, int(completions))


def _dependencies(jobset: Json) -> dict[str, str]:
    """Replicated job name -> the status the JobSet controller waits for before it
    creates more: ``Ready`` for every replicated job of an ``InOrder`` startup policy,
    the ``dependsOn`` status (``Complete`` or ``Ready``) of a dependency."""
    spec = jobset.get("spec") or {}
    out: dict[str, str] = {}
    if (spec.get("startupPolicy") or {}).get("startupPolicyOrder") == "InOrder":
        out = {str(job.get("name")): "Ready" for job in spec.get("replicatedJobs") or []}
    for job in spec.get("replicatedJobs") or []:
        for dependency in job.get("dependsOn") or []:
            out[str(dependency.get("name"))] = str(dependency.get("status", "Complete"))
    return out


def waiting_dependents(jobsets: list[Json], jobs: list[Json], failures: Iterable[str] = ()) -> bool:
    """Whether a replicated job that ``dependsOn`` others lacks Jobs, none of them
    refused yet (``failures``), while every Job of its dependencies exists: the harness
    finishes their Pods, and the JobSet controller then creates it, even after it
    refused a later replicated job (it skips one whose dependencies are not there yet,
    ``reconcileReplicatedJobs``), so its refusal is still to come."""
    said = "\n".join(failures)
    for jobset in jobsets:
        spec = jobset.get("spec") or {}
        if spec.get("suspend") or managed_elsewhere(jobset):
            continue
        uid, jobset_name = jobset["metadata"]["uid"], jobset["metadata"]["name"]
        counts: dict[str, int] = {}
        for job in jobs:
            if _owned_by(job, {uid}):
                name = (job["metadata"].get("labels") or {}).get(REPLICATED_JOB_LABEL, "")
                counts[name] = counts.get(name, 0) + 1
        rjobs = spec.get("replicatedJobs") or []
        replicas = {str(r.get("name")): int(r.get("replicas", 1)) for r in rjobs}
        for rjob in rjobs:
            name, dependencies = str(rjob.get("name")), rjob.get("dependsOn") or []
            if not dependencies or counts.get(name, 0) >= replicas[name]:
                continue
            if f'job "{jobset_name}-{name}-' in said:
                continue  # refused: comes no more
            if all(
                counts.get(str(d.get("name")), 0) >= replicas.get(str(d.get("name")), 1)
                for d in dependencies
            ):
                return True
    return False


def _finish_pod(client: Client, pod: Json, status: str) -> None:
    """Report the Pod as a kubelet would: Succeeded (``Complete``) or Running and Ready."""
    metadata = pod["metadata"]
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    if status == "Ready":
        body: Json = {
            "status": {
                "phase": "Running",
                "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": now}],
            }
        }
    else:
        body = {"status": {"phase": "Succeeded"}}
    path = RESOURCES["Pod"].path(metadata["namespace"], metadata["name"]) + "/status"
    code, got = client.raw("PATCH", path, body, content_type="application/merge-patch+json")
    if code >= 300:
        raise ApiError(code, got, f"PATCH {path}")


def _failure_events(client: Client, namespaces: set[str], uids: set[str]) -> list[str]:
    """The refusals reported on the objects ``uids`` (an event recorder may still write
    about a previous case's objects after they are gone)."""
    messages = set()
    for namespace in sorted(namespaces):
        for path in (
            f"/api/v1/namespaces/{namespace}/events",
            f"/apis/events.k8s.io/v1/namespaces/{namespace}/events",
        ):
            for event in client.get(path).get("items") or []:
                if event.get("reason") not in FAILURE_REASONS:
                    continue
                regarding = event.get("involvedObject") or event.get("regarding") or {}
                if regarding.get("uid") not in uids:
                    continue
                text = str(event.get("message") or event.get("note") or "")
                if TRANSIENT in text:
                    continue  # its informer lagged its own create; it retries
                if any(f in text for f in FOLLOWER_WAITING):
                    continue  # the leader is bound next (bind_leaders); it retries
                messages.add(
                    f"{regarding.get('kind')} {namespace}/{regarding.get('name')}: "
                    f"{event.get('reason')}: {text}"
                )
    return sorted(messages)


def _finished_jobsets(client: Client, jobsets: list[Json]) -> list[str]:
    """``JobSet ns/name: Completed`` (or ``Failed``) for each of ``jobsets`` the JobSet
    controller has finished: it creates no more Jobs (e.g. a success policy met before a
    dependent replicated job was created)."""
    out = []
    for jobset in jobsets:
        meta = jobset["metadata"]
        code, got = client.raw("GET", RESOURCES["JobSet"].path(meta["namespace"], meta["name"]))
        conditions = ((got or {}).get("status") or {}).get("conditions") if code == 200 else []
        for condition in conditions or []:
            if (
                condition.get("type") in ("Completed", "Failed")
                and condition.get("status") == "True"
            ):
                out.append(f"JobSet {meta['namespace']}/{meta['name']}: {condition['type']}")
    return out


def is_follower(pod: Json) -> bool:
    """A Pod JobSet's pod webhook places after its leader: exclusive placement without
    the node-selector strategy, completion index not 0."""
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    return (
        JOBSET_NAME in annotations
        and EXCLUSIVE in annotations
        and NODE_SELECTOR_STRATEGY not in annotations
        and annotations.get(COMPLETION_INDEX) != "0"
    )


def _is_leader(pod: Json) -> bool:
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    return (
        JOBSET_NAME in annotations
        and EXCLUSIVE in annotations
        and NODE_SELECTOR_STRATEGY not in annotations
        and annotations.get(COMPLETION_INDEX) == "0"
    )


def ensure_fake_node(client: Client) -> None:
    """The Node exclusive-placement leaders are bound to (no kubelet: it stays NotReady)."""
    path = "/api/v1/nodes"
    if client.raw("GET", f"{path}/{FAKE_NODE}")[0] == 200:
        return
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": FAKE_NODE, "labels": dict(FAKE_TOPOLOGY)},
    }
    code, got = client.raw("POST", path, node)
    if code >= 300 and code != 409:
        raise ApiError(code, got, f"POST {path}")


def bind_leader(client: Client, pod: Json) -> None:
    """Bind an exclusive-placement leader Pod to :data:`FAKE_NODE`, as a scheduler would:
    JobSet's pod webhook then admits its followers with the node's topology value as a
    nodeSelector (``setNodeSelector``), which :func:`follow_the_leader` gives trainc's."""
    ensure_fake_node(client)
    metadata = pod["metadata"]
    path = RESOURCES["Pod"].path(metadata["namespace"], metadata["name"]) + "/binding"
    binding = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": metadata["name"], "namespace": metadata["namespace"]},
        "target": {"apiVersion": "v1", "kind": "Node", "name": FAKE_NODE},
    }
    code, got = client.raw("POST", path, binding)
    if code >= 300 and code != 409:
        raise ApiError(code, got, f"POST {path}")


def follow_the_leader(objects: Iterable[Json]) -> list[Json]:
    """``objects`` with each follower Pod (:func:`is_follower`) given the nodeSelector
    JobSet's pod webhook gives it once its leader runs on :data:`FAKE_NODE` (the
    topology label's value there; none for a label the node lacks)."""
    out = []
    for obj in objects:
        if obj.get("kind") == "Pod" and is_follower(obj):
            topology = obj["metadata"]["annotations"][EXCLUSIVE]
            if topology in FAKE_TOPOLOGY:
                obj = copy.deepcopy(obj)
                selector = obj.setdefault("spec", {}).get("nodeSelector") or {}
                obj["spec"]["nodeSelector"] = {**selector, topology: FAKE_TOPOLOGY[topology]}
        out.append(obj)
    return out


_LOGGED = "\tERROR\tcreating jobs\t"
_JOB_REFUSED = re.compile(r'^job "[^"]+" creation failed with error: ')


def logged_creation_failures(log: Path | None, offset: int, jobsets: list[Json]) -> list[str]:
    """The JobSet controller's refused creates of ``jobsets``' Jobs, from its log since
    ``offset`` (``log.Error(err, "creating jobs")`` just before it records the error as
    a ``JobCreationFailed`` event; zap's console line: time, level, message, then the
    fields as JSON), as :func:`_failure_events` words an event.

    The events alone miss some: the API server stores no note over :data:`NOTE_LIMIT`
    bytes, and the events.k8s.io recorder (client-go ``tools/events``) keys an event
    without its note, so a later refusal of another replicated job of the same JobSet
    only counts up the first event's series (its note stays the first refusal's)."""
    if log is None or not log.exists():
        return []
    with log.open("rb") as handle:
        handle.seek(offset)
        text = handle.read().decode(errors="replace")
    names = {
        j["metadata"]["uid"]: f"{j['metadata']['namespace']}/{j['metadata']['name']}"
        for j in jobsets
    }
    found = set()
    for line in text.splitlines():
        if _LOGGED not in line:
            continue
        try:
            fields = json.loads(line.split(_LOGGED, 1)[1])
        except ValueError:
            continue
        error, uid = str(fields.get("error", "")), fields.get("jobSetUID")
        if uid in names and _JOB_REFUSED.match(error) and TRANSIENT not in error:
            found.add(f"JobSet {names[uid]}: JobCreationFailed: {error}")
    return sorted(found)


def collect(
    client: Client,
    jobsets: list[Json],
    timeout: float,
    jobset_log: tuple[Path, int] | None = None,
) -> Workloads:
    """Wait until the controllers have made every Job, Service and Pod the stored JobSets
    call for (or reported a failure, or ``timeout``); the objects as created.
    ``jobset_log``: the JobSet controller's log and its size when the case began, for
    the refusals whose event was too long to store (:func:`logged_creation_failures`).
    Exclusive-placement leader Pods are bound to a fake Node once recorded."""
    answer = Workloads()
    log, log_offset = jobset_log if jobset_log is not None else (None, 0)

    def failures(uids: set[str]) -> list[str]:
        events = _failure_events(client, namespaces, uids)
        if log is None:
            return events
        # the JobSet controller's refused Jobs from its log (logged_creation_failures)
        events = [e for e in events if ": JobCreationFailed: " not in e]
        return sorted({*events, *logged_creation_failures(log, log_offset, jobsets)})

    if not jobsets:
        return answer
    namespaces = {j["metadata"]["namespace"] for j in jobsets}
    jobset_uids = {j["metadata"]["uid"] for j in jobsets}
    dependencies = {j["metadata"]["uid"]: _dependencies(j) for j in jobsets}
    want_jobs = sum(expected_jobs(j) for j in jobsets)
    want_services = sum(expected_services(j) for j in jobsets)
    pods: dict[str, Json] = {}  # uid -> as first seen
    finished: set[str] = set()
    deadline = time.monotonic() + timeout
    while True:
        jobs = [j for j in _list(client, "Job", namespaces) if _owned_by(j, jobset_uids)]
        services = [s for s in _list(client, "Service", namespaces) if _owned_by(s, jobset_uids)]
        job_uids = {j["metadata"]["uid"] for j in jobs}
        for pod in _list(client, "Pod", namespaces):
            if _owned_by(pod, job_uids):
                pods.setdefault(pod["metadata"]["uid"], pod)
                if _is_leader(pod) and not (pod.get("spec") or {}).get("nodeName"):
                    bind_leader(client, pod)  # recorded first: as created, unbound
        for job in jobs:
            owner = next((r["uid"] for r in _refs(job) if r.get("uid") in jobset_uids), "")
            replicated = (job["metadata"].get("labels") or {}).get(REPLICATED_JOB_LABEL, "")
            status = dependencies.get(owner, {}).get(replicated)
            if status is None:
                continue
            own = [p for p in pods.values() if _owned_by(p, {job["metadata"]["uid"]})]
            if len(own) < expected_pods(job):
                continue
            for pod in own:
                if pod["metadata"]["uid"] not in finished:
                    _finish_pod(client, pod, status)
                    finished.add(pod["metadata"]["uid"])
                    name = f"{job['metadata']['namespace']}/{job['metadata']['name']} ({status})"
                    if name not in answer.finished:
                        answer.finished.append(name)
        answer.failures = failures(jobset_uids | job_uids)
        want_pods = sum(expected_pods(j) for j in jobs)
        complete = len(jobs) >= want_jobs and len(services) >= want_services
        complete = complete and len(pods) >= want_pods
        waiting = waiting_dependents(jobsets, jobs, answer.failures)
        if complete or (answer.failures and not waiting):
            time.sleep(0.3)  # a last read: one reconcile's objects arrive one by one
            jobs = [j for j in _list(client, "Job", namespaces) if _owned_by(j, jobset_uids)]
            services = [
                s for s in _list(client, "Service", namespaces) if _owned_by(s, jobset_uids)
            ]
            job_uids = {j["metadata"]["uid"] for j in jobs}
            for pod in _list(client, "Pod", namespaces):
                if _owned_by(pod, job_uids):
                    pods.setdefault(pod["metadata"]["uid"], pod)
            answer.failures = failures(jobset_uids | job_uids)
            break
        if time.monotonic() > deadline and answer.failures:
            break  # a dependency never finished (its Pods refused): the refusals stand
        if time.monotonic() > deadline:
            answer.timed_out = [
                f"{len(jobs)}/{want_jobs} Jobs, {len(services)}/{want_services} Services, "
                f"{len(pods)}/{want_pods} Pods"
                + "".join(f"; {s}" for s in _finished_jobsets(client, jobsets))
            ]
            break
        time.sleep(0.1)
    answer.objects = jobs + services + list(pods.values())
    return answer


# --- normalisation and comparison ---------------------------------------------------------


def _mask_uid_labels(labels: Any) -> None:
    if isinstance(labels, dict):
        for key in labels:
            if key in UID_LABELS:
                labels[key] = UID


def _sort_envs(pod_spec: Json) -> None:
    for key in ("initContainers", "containers"):
        for container in pod_spec.get(key) or []:
            if isinstance(container.get("env"), list):
                container["env"].sort(key=lambda e: str(e.get("name", "")))


def _normalise_pod_spec(pod_spec: Json, env_order_random: bool) -> None:
    for volume in pod_spec.get("volumes") or []:
        if _KUBE_API_ACCESS.match(str(volume.get("name", ""))):
            volume["name"] = f"kube-api-access-{RANDOM}"
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for container in pod_spec.get(key) or []:
            for mount in container.get("volumeMounts") or []:
                if _KUBE_API_ACCESS.match(str(mount.get("name", ""))):
                    mount["name"] = f"kube-api-access-{RANDOM}"
    if env_order_random:
        _sort_envs(pod_spec)


def normalise_workload(obj: Json, env_order_random: bool = False) -> Json:
    """One Job, Service or Pod made comparable (module docstring)."""
    obj = copy.deepcopy(obj)
    obj.pop("status", None)
    metadata = obj.setdefault("metadata", {})
    for key in SERVER_METADATA:
        metadata.pop(key, None)
    for ref in metadata.get("ownerReferences") or []:
        ref["uid"] = f"<uid of {ref.get('kind')} {ref.get('name')}>"
    _mask_uid_labels(metadata.get("labels"))
    _mask_uid_labels(metadata.get("annotations"))
    generate = metadata.get("generateName")
    if obj.get("kind") == "Pod" and generate and str(metadata.get("name", "")).startswith(generate):
        metadata["name"] = f"{generate}{RANDOM}"
    spec = obj.get("spec") or {}
    if obj.get("kind") == "Job":
        _mask_uid_labels((spec.get("selector") or {}).get("matchLabels"))
        template = spec.get("template") or {}
        template_metadata = template.get("metadata") or {}
        template_metadata.pop("creationTimestamp", None)
        _mask_uid_labels(template_metadata.get("labels"))
        _mask_uid_labels(template_metadata.get("annotations"))
        _normalise_pod_spec(template.get("spec") or {}, env_order_random)
    elif obj.get("kind") == "Pod":
        _normalise_pod_spec(spec, env_order_random)
    elif obj.get("kind") == "Service":
        _mask_uid_labels(spec.get("selector"))
    return obj


def _key(obj: Json) -> tuple[str, str, str, str]:
    metadata = obj.get("metadata") or {}
    return (
        str(obj.get("kind", "")),
        str(metadata.get("namespace", "")),
        str(metadata.get("name", "")),
        json.dumps(obj, sort_keys=True),
    )


def normalise_workloads(objects: Iterable[Json], env_order_random: bool = False) -> list[Json]:
    """The Jobs, Services and Pods of ``objects``, normalised and sorted."""
    kept = [
        normalise_workload(o, env_order_random)
        for o in objects
        if o.get("kind") in WORKLOAD_KINDS and str(o.get("apiVersion")) in ("v1", "batch/v1")
    ]
    return sorted(kept, key=_key)


def _label(obj: Json) -> str:
    metadata = obj.get("metadata") or {}
    return f"{obj.get('kind')} {metadata.get('namespace', '')}/{metadata.get('name', '')}"


def workload_difference(live: list[Json], emulated: list[Json]) -> str | None:
    """The first difference between two normalised lists: objects on one side only
    (by kind, namespace and name), then the first field that differs."""
    from tests.conformance.normalise import first_difference

    live_names = [_label(o) for o in live]
    emulated_names = [_label(o) for o in emulated]
    only_live = sorted(set(live_names) - set(emulated_names))
    only_emulated = sorted(set(emulated_names) - set(live_names))
    if only_live or only_emulated:
        parts = []
        if only_live:
            parts.append(f"only the controllers create {', '.join(only_live[:5])}")
        if only_emulated:
            parts.append(f"only expand makes {', '.join(only_emulated[:5])}")
        extra = len(only_live) + len(only_emulated) - 10
        return "; ".join(parts) + (f" (and {extra} more)" if extra > 0 else "")
    if len(live) != len(emulated):
        return f"{len(live)} objects created, {len(emulated)} expanded"
    for a, b in zip(live, emulated, strict=True):
        found = first_difference(a, b)
        if found:
            return f"{_label(a)}: {found}"
    return None


def summary(objects: Iterable[Json]) -> str:
    """``2 Jobs, 1 Service, 4 Pods``."""
    counts = {kind: 0 for kind in WORKLOAD_KINDS}
    for obj in objects:
        if obj.get("kind") in counts:
            counts[str(obj["kind"])] += 1
    return ", ".join(f"{n} {kind}{'' if n == 1 else 's'}" for kind, n in counts.items())
