"""The JobSet controller of sigs.k8s.io/jobset v0.12.0 (``pkg/controllers``): what it creates.

For a new JobSet the controller creates, through the API server:

* one Job per replica of each replicated job (``constructJob``), named
  ``<jobset>-<replicatedJob>-<index>``: the replicated job's template with the JobSet
  labels and annotations (``labelAndAnnotateObject``) on the Job and on its pod
  template, the pod ``subdomain`` when DNS hostnames are on, the exclusive-placement
  annotations, and for the node-selector strategy a ``namespaced-job`` nodeSelector and
  a ``no-schedule`` toleration, ``suspend`` as the JobSet's, the volumes of its volume
  claim policies; and a controller owner reference to the JobSet;
* the headless Service named after the subdomain (``createHeadlessSvcIfNecessary``)
  when DNS hostnames are on.

Both come out as the controller's Go types marshal them (``go_roundtrip``). The JobSet
is the defaulted one (:func:`compiler.expand.jobset_webhook.default_jobset`), with
its :func:`~compiler.expand.names.placeholder_uid` and ``status.restarts`` 0 (a new
JobSet). ``dependsOn`` and an ``InOrder`` startup policy only delay when later Jobs
are created; every Job is listed, except

* in a suspended JobSet, a replicated job that ``dependsOn`` another: it is not created
  (``reconcileReplicatedJobs`` waits for its dependencies to be Ready or Complete, and a
  suspended Job's Pods never start) until the JobSet is resumed;
* a replicated job that is never created at all (:func:`never_created`): it waits for
  Jobs to complete whose completion meets the success policy, and the controller
  evaluates the success policy (``executeSuccessPolicy``, the JobSet is Completed) before
  it creates Jobs (``reconcileReplicatedJobs``) in the same reconcile.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from compiler.expand import names as n
from compiler.expand.jobset_webhook import coordinator_endpoint, gen_job_name, pvc_name
from compiler.kube.roundtrip import go_roundtrip
from compiler.render.info import json_copy  # deepcopy was a tenth of a render

__all__ = ["construct_jobs", "headless_service", "never_created", "subdomain"]


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def subdomain(jobset: Mapping[str, Any]) -> str:
    """``GetSubdomain``: the network subdomain, else the JobSet's name."""
    value = ((jobset.get("spec") or {}).get("network") or {}).get("subdomain")
    return str(value) if value else str(_meta(jobset).get("name", ""))


def dns_hostnames(jobset: Mapping[str, Any]) -> bool:
    return ((jobset.get("spec") or {}).get("network") or {}).get("enableDNSHostnames") is True


def jobset_uid(jobset: Mapping[str, Any]) -> str:
    meta = _meta(jobset)
    return str(
        meta.get("uid")
        or n.placeholder_uid("JobSet", meta.get("namespace", ""), meta.get("name", ""))
    )


def owner_reference(jobset: Mapping[str, Any]) -> dict[str, Any]:
    """``SetControllerReference`` to the JobSet."""
    return {
        "apiVersion": n.JOBSET_API_VERSION,
        "kind": "JobSet",
        "name": _meta(jobset).get("name", ""),
        "uid": jobset_uid(jobset),
        "controller": True,
        "blockOwnerDeletion": True,
    }


def _replicas(rjob: Mapping[str, Any]) -> int:
    value = rjob.get("replicas", 1)
    return value if isinstance(value, int) else 1


def _job_key(namespace: str, job_name: str) -> str:
    return hashlib.sha1(f"{namespace}/{job_name}".encode()).hexdigest()


def _jobset_labels(
    jobset: Mapping[str, Any], rjob: Mapping[str, Any], index: int
) -> dict[str, str]:
    """The labels (also written as annotations) ``labelAndAnnotateObject`` sets."""
    meta = _meta(jobset)
    namespace, name = str(meta.get("namespace", "")), str(meta.get("name", ""))
    rjobs = (jobset.get("spec") or {}).get("replicatedJobs") or []
    rname, group = str(rjob.get("name", "")), str(rjob.get("groupName", ""))
    global_index = group_index = 0
    for other in rjobs:  # globalJobIndex, groupJobIndex: replicas before this one
        if other.get("name") == rname:
            break
        global_index += _replicas(other)
    for other in rjobs:
        if other.get("groupName", "") == group:
            if other.get("name") == rname:
                break
            group_index += _replicas(other)
    group_replicas = sum(_replicas(r) for r in rjobs if r.get("groupName", "") == group)
    out = {
        n.JOBSET_NAME: name,
        n.JOBSET_UID: jobset_uid(jobset),
        n.REPLICATED_JOB_NAME: rname,
        n.RESTARTS: str((jobset.get("status") or {}).get("restarts", 0)),
        n.REPLICATED_JOB_REPLICAS: str(_replicas(rjob)),
        n.GLOBAL_REPLICAS: str(sum(_replicas(r) for r in rjobs)),
        n.JOB_INDEX: str(index),
        n.JOB_KEY: _job_key(namespace, gen_job_name(name, rname, index)),
        n.JOB_GLOBAL_INDEX: str(global_index + index),
        n.GROUP_NAME: group,
        n.GROUP_REPLICAS: str(group_replicas),
        n.JOB_GROUP_INDEX: str(group_index + index),
    }
    if (jobset.get("spec") or {}).get("coordinator") is not None:
        out[n.COORDINATOR] = coordinator_endpoint(jobset)
    return out


def _label_and_annotate(
    meta: dict[str, Any], jobset: Mapping[str, Any], rjob: Mapping[str, Any], added: dict[str, str]
) -> None:
    """``labelAndAnnotateObject`` with ``added``, the labels of :func:`_jobset_labels`."""
    meta["labels"] = {**(meta.get("labels") or {}), **added}
    annotations = {**(meta.get("annotations") or {}), **added}
    for source in (
        _meta(jobset).get("annotations") or {},
        ((rjob.get("template") or {}).get("metadata") or {}).get("annotations") or {},
    ):
        if n.EXCLUSIVE in source:
            annotations[n.EXCLUSIVE] = source[n.EXCLUSIVE]
            if n.NODE_SELECTOR_STRATEGY in source:
                annotations[n.NODE_SELECTOR_STRATEGY] = source[n.NODE_SELECTOR_STRATEGY]
    meta["annotations"] = annotations


def construct_job(
    jobset: Mapping[str, Any], rjob: Mapping[str, Any], index: int, *, typed: bool = True
) -> dict[str, Any]:
    """``constructJob``: the Job for replica ``index`` of ``rjob``, as the controller sends it
    (``typed=False``: without the Go round trip, which changes nothing the API server
    decodes; a check that only needs a verdict skips it)."""
    meta = _meta(jobset)
    name, namespace = str(meta.get("name", "")), meta.get("namespace")
    template = json_copy(dict(rjob.get("template") or {}))
    template_meta = template.get("metadata") or {}
    job_meta: dict[str, Any] = {"name": gen_job_name(name, str(rjob.get("name", "")), index)}
    if namespace:
        job_meta["namespace"] = namespace
    for key in ("labels", "annotations"):
        if template_meta.get(key):
            job_meta[key] = dict(template_meta[key])
    spec = template.get("spec") or {}
    added = _jobset_labels(jobset, rjob, index)  # the same on the Job and its pod template
    _label_and_annotate(job_meta, jobset, rjob, added)
    pod_template = spec.setdefault("template", {})
    _label_and_annotate(pod_template.setdefault("metadata", {}), jobset, rjob, added)
    pod_spec = pod_template.setdefault("spec", {})
    if dns_hostnames(jobset):
        pod_spec["subdomain"] = subdomain(jobset)
    annotations = job_meta["annotations"]
    if n.EXCLUSIVE in annotations and n.NODE_SELECTOR_STRATEGY in annotations:
        selector = pod_spec.get("nodeSelector") or {}
        selector[n.NAMESPACED_JOB] = f"{namespace or ''}_{job_meta['name']}"
        pod_spec["nodeSelector"] = selector
        pod_spec["tolerations"] = [
            *(pod_spec.get("tolerations") or []),
            {"key": n.NO_SCHEDULE_TAINT, "operator": "Exists", "effect": "NoSchedule"},
        ]
    spec["suspend"] = bool((jobset.get("spec") or {}).get("suspend"))
    _add_claim_volumes(jobset, pod_spec)
    job_meta["ownerReferences"] = [owner_reference(jobset)]
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": job_meta, "spec": spec}
    if not typed:
        return job
    out: dict[str, Any] = go_roundtrip(job, "io.k8s.api.batch.v1.Job")
    out.pop("status", None)  # an empty status: the API server resets it anyway
    return out


def _add_claim_volumes(jobset: Mapping[str, Any], pod_spec: dict[str, Any]) -> None:
    """``addVolumes``: a PVC volume for each volume claim template a container mounts."""
    name = str(_meta(jobset).get("name", ""))
    containers = [*(pod_spec.get("containers") or []), *(pod_spec.get("initContainers") or [])]
    mounted = {m.get("name") for c in containers for m in c.get("volumeMounts") or []}
    for policy in (jobset.get("spec") or {}).get("volumeClaimPolicies") or []:
        for template in policy.get("templates") or []:
            claim = str((template.get("metadata") or {}).get("name", ""))
            if claim in mounted:
                pod_spec.setdefault("volumes", []).append(
                    {"name": claim, "persistentVolumeClaim": {"claimName": pvc_name(name, claim)}}
                )


def never_created(jobset: Mapping[str, Any]) -> dict[str, str]:
    """The replicated jobs of the (defaulted) ``jobset`` whose Jobs the controller never
    creates, each with the replicated job whose completion finishes the JobSet first.

    A replicated job is created once its ``dependsOn`` are reached (``Complete``: every
    replica succeeded). By then the replicated jobs it waits to be Complete, and those
    they waited for in turn, have all completed; when that alone meets the success policy
    (``Any``: one of them is a target, no targets meaning all; ``All``: the targets are
    all among them), the reconcile that would create it marks the JobSet Completed first.
    A replicated job that depends on one never created is never created either. Only
    what holds whatever the timing: Jobs that happen to finish early are not assumed.

    >>> rjobs = [{"name": "init"}, {"name": "node", "dependsOn": [{"name": "init",
    ...          "status": "Complete"}]}]
    >>> never_created({"spec": {"replicatedJobs": rjobs, "successPolicy": {"operator": "Any"}}})
    {'node': 'init'}
    >>> never_created({"spec": {"replicatedJobs": rjobs, "successPolicy": {"operator": "All"}}})
    {}
    """
    spec = jobset.get("spec") or {}
    rjobs = [r for r in spec.get("replicatedJobs") or [] if isinstance(r, Mapping)]
    if not any(r.get("dependsOn") for r in rjobs):
        return {}
    policy = spec.get("successPolicy") or {}
    targets = set(policy.get("targetReplicatedJobs") or [str(r.get("name")) for r in rjobs])
    done_before: dict[str, set[str]] = {}  # rjob -> the replicated jobs complete by then
    never: dict[str, str] = {}
    for rjob in rjobs:
        name = str(rjob.get("name"))
        done: set[str] = set()
        first = ""
        for dependency in rjob.get("dependsOn") or []:
            needed = str(dependency.get("name"))
            if needed in never:
                first = first or never[needed]
            done |= done_before.get(needed, set())
            if dependency.get("status", "Complete") == "Complete":
                done.add(needed)
        done_before[name] = done
        if not first and done:
            if policy.get("operator") == "Any":
                met = [r for r in (str(r.get("name")) for r in rjobs) if r in done & targets]
                first = met[0] if met else ""
            elif policy.get("operator") == "All" and targets <= done:
                first = next(r for r in (str(r.get("name")) for r in rjobs) if r in done)
        if first:
            never[name] = first
    return never


def created(jobset: Mapping[str, Any], rjob: Mapping[str, Any]) -> bool:
    """Whether the controller creates the Jobs of ``rjob`` for a new ``jobset``: not
    those that wait on a dependency while the JobSet is suspended, nor those it never
    creates (:func:`never_created`)."""
    if (jobset.get("spec") or {}).get("suspend") is True and rjob.get("dependsOn"):
        return False
    return not rjob.get("dependsOn") or str(rjob.get("name")) not in never_created(jobset)


def construct_jobs(jobset: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every Job the controller creates for ``jobset``, in replicated-job order then by
    index (:func:`created`)."""
    return [
        construct_job(jobset, rjob, index)
        for rjob in (jobset.get("spec") or {}).get("replicatedJobs") or []
        if created(jobset, rjob)
        for index in range(_replicas(rjob))
    ]


def headless_service(jobset: Mapping[str, Any]) -> dict[str, Any] | None:
    """The headless Service for the pods' DNS hostnames, or None when they are off."""
    if not dns_hostnames(jobset):
        return None
    meta = _meta(jobset)
    service_meta: dict[str, Any] = {"name": subdomain(jobset)}
    if meta.get("namespace"):
        service_meta["namespace"] = meta["namespace"]
    service_meta["ownerReferences"] = [owner_reference(jobset)]
    spec: dict[str, Any] = {
        "clusterIP": "None",
        "selector": {n.JOBSET_NAME: str(meta.get("name", ""))},
    }
    publish = ((jobset.get("spec") or {}).get("network") or {}).get("publishNotReadyAddresses")
    if publish is not False:  # ptr.Deref(..., true); false is omitted when marshalled
        spec["publishNotReadyAddresses"] = True
    return {"apiVersion": "v1", "kind": "Service", "metadata": service_meta, "spec": spec}
