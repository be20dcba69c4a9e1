"""The Job controller of Kubernetes v1.34.4 (``pkg/controller/job``): the Pods of a Job.

For a Job that is not suspended the controller creates ``min(parallelism,
completions)`` Pods at once (``manageJob``; more follow as these finish), each from
the pod template (``controller.GetPodFromTemplate``): its labels, annotations and
finalizers plus ``batch.kubernetes.io/job-tracking``, a controller owner reference to
the Job, and a generated name. For an Indexed Job, Pod ``i`` (``i`` from 0) also gets:

* the ``batch.kubernetes.io/job-completion-index`` annotation and label (the
  ``PodIndexLabel`` gate is on in v1.34);
* ``JOB_COMPLETION_INDEX`` in every container and init container that lacks it, from
  that label;
* with ``backoffLimitPerIndex``, the ``batch.kubernetes.io/job-index-failure-count``
  annotation (0 for a first Pod);
* hostname ``<job>-<i>`` and the name ``<job>-<i>-<suffix>``
  (``podGenerateNameWithIndex``: the prefix is cut to 58 characters keeping ``-<i>-``).

A NonIndexed Job's Pods are named ``<job>-<suffix>``. The suffix is random in a
cluster; here a placeholder (:func:`compiler.expand.names.placeholder_suffix`: the
API server's create path numbers the Pods that share a prefix).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from compiler.expand import names as n
from compiler.kube.roundtrip import go_roundtrip
from compiler.render.info import json_copy  # deepcopy was a tenth of a render

__all__ = ["initial_pod_count", "job_pods"]

_MAX_GENERATED_NAME = 63 - 5  # names.MaxGeneratedNameLength


def initial_pod_count(job: Mapping[str, Any]) -> int:
    """How many Pods the controller creates for a new ``job`` (its ``wantActive``)."""
    spec = job.get("spec") or {}
    if spec.get("suspend"):
        return 0
    want = int(spec.get("parallelism", 1))
    completions = spec.get("completions")
    return want if completions is None else min(want, int(completions))


def _generate_name_with_index(job_name: str, index: int) -> str:
    suffix = f"-{index}-"
    prefix = job_name + suffix
    if len(prefix) > _MAX_GENERATED_NAME:
        prefix = prefix[: _MAX_GENERATED_NAME - len(suffix)] + suffix
    return prefix


def _add_index_env(container: dict[str, Any]) -> None:
    env = container.get("env") or []
    if any(e.get("name") == n.COMPLETION_INDEX_ENV for e in env):
        return
    field_path = f"metadata.labels['{n.COMPLETION_INDEX}']"
    container["env"] = [
        *env,
        {"name": n.COMPLETION_INDEX_ENV, "valueFrom": {"fieldRef": {"fieldPath": field_path}}},
    ]


def job_pods(
    job: Mapping[str, Any], *, only: int | None = None, typed: bool = True, share: bool = False
) -> list[dict[str, Any]]:
    """The Pods the controller sends for a new ``job`` (the stored Job), by index.

    ``only``: the Pod of that index alone, if the controller creates it (each Pod is
    made from its index alone; a render's check reads a few, and making them all cost a
    fifth of a render). ``typed=False``: without the Go round trip of the Pod (what the
    API server decodes is the same; a check that only needs a verdict skips it).
    ``share``: the Pods take ``job``'s pod template instead of a copy (``job`` is changed:
    for a caller done with it)."""
    meta, spec = job.get("metadata") or {}, job.get("spec") or {}
    name = str(meta.get("name", ""))
    indexed = spec.get("completionMode") == "Indexed"
    template = spec.get("template") if share else None
    if not isinstance(template, dict):
        template = json_copy(spec.get("template") or {})
    pod_spec = template.setdefault("spec", {})
    if indexed:
        for key in ("initContainers", "containers"):
            for container in pod_spec.get(key) or []:
                _add_index_env(container)
    template_meta = template.setdefault("metadata", {})
    finalizers = list(template_meta.get("finalizers") or [])
    if n.JOB_TRACKING_FINALIZER not in finalizers:
        finalizers.append(n.JOB_TRACKING_FINALIZER)
    owner = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "name": name,
        "uid": meta.get("uid", ""),
        "controller": True,
        "blockOwnerDeletion": True,
    }
    pods = []
    indexes = range(initial_pod_count(job))
    if only is not None:
        indexes = indexes[only : only + 1] if only >= 0 else range(0)
    for index in indexes:
        labels = dict(template_meta.get("labels") or {})
        annotations = dict(template_meta.get("annotations") or {})
        # the template is this call's own copy: the one Pod made may take it
        this_spec = pod_spec if len(indexes) == 1 else json_copy(pod_spec)
        if indexed:
            annotations[n.COMPLETION_INDEX] = str(index)
            labels[n.COMPLETION_INDEX] = str(index)
            this_spec["hostname"] = f"{name}-{index}"
            generate_name = _generate_name_with_index(name, index)
            if spec.get("backoffLimitPerIndex") is not None:
                annotations[n.INDEX_FAILURE_COUNT] = "0"  # a first Pod has no failures
        else:
            generate_name = f"{name}-"
        pod_meta: dict[str, Any] = {"generateName": generate_name}
        if meta.get("namespace"):
            pod_meta["namespace"] = meta["namespace"]
        pod_meta.update(
            labels=labels,
            annotations=annotations,
            finalizers=list(finalizers),
            ownerReferences=[owner],
        )
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta, "spec": this_spec}
        if typed:
            pod = go_roundtrip(pod, "io.k8s.api.core.v1.Pod")
            pod.pop("status", None)
        pods.append(pod)
    return pods
