"""What kube-apiserver v1.34.4 does to a Job, a Service and a Pod it creates.

Applied (the defaults every cluster applies, then what a plain cluster's default
admission plugins add):

* **defaults** (``pkg/apis/core/v1/defaults.go``, ``pkg/apis/batch/v1/defaults.go`` and
  their generated walks): Job ``parallelism``/``completions``, ``backoffLimit``,
  ``completionMode``, ``suspend``, ``podReplacementPolicy``, ``manualSelector``,
  pod-failure-policy condition ``status``; PodSpec ``dnsPolicy``, ``restartPolicy``,
  ``securityContext``, ``terminationGracePeriodSeconds``, ``schedulerName``; each
  container's ``imagePullPolicy``, termination message path and policy, port
  ``protocol``, env ``fieldRef.apiVersion``, ``fileKeyRef.optional``, probe timings,
  HTTP-get ``path``/``scheme``, gRPC ``service``; volume sources (``emptyDir`` when none,
  ``defaultMode``, ``hostPath.type``, token ``expirationSeconds``, ephemeral
  ``volumeMode`` and the rest of the generated list); Pod-only: requests from limits,
  ``enableServiceLinks``, host-network ports; Service ``type``, ``sessionAffinity``,
  ``internalTrafficPolicy``;
* **the internal-version round trip**: the deprecated ``serviceAccount`` written from
  ``serviceAccountName``;
* **the Job strategy** (``pkg/registry/batch/job``): the generated selector and the
  ``controller-uid`` and ``job-name`` labels (legacy and ``batch.kubernetes.io/``);
* **the Service allocator** for a headless Service on a single-stack IPv4 cluster:
  ``clusterIPs: [None]``, ``ipFamilies: [IPv4]``, ``ipFamilyPolicy: SingleStack``;
* **admission** (the default plugins): ``ServiceAccount`` (``serviceAccountName:
  default`` and the ``kube-api-access-<suffix>`` token volume mounted in each container
  unless automounting is off), ``Priority`` (the value and preemption policy of the
  PriorityClass the Pod names, among the two ``system-`` classes every cluster has and
  the PriorityClasses given as the cluster's (:class:`PriorityClasses`, the inputs');
  a Pod that names none gets the global-default class given, else priority 0 and
  ``PreemptLowerPriority``),
  ``DefaultTolerationSeconds`` (``not-ready`` and ``unreachable`` for 300 s);
* **the Pod strategy's** ``PrepareForCreate`` (:func:`prepare_pod`, after the mutating
  webhooks): each ``matchLabelKeys`` key of a pod (anti-)affinity term and of a topology
  spread constraint the Pod has a label for merged into the term's or constraint's
  label selector as ``{key, In, [value]}``, each ``mismatchLabelKeys`` key as ``NotIn``
  (gates MatchLabelKeysInPodAffinity, MatchLabelKeysInPodTopologySpread and
  ...SelectorMerge, all on in v1.34).

Refused (:func:`pod_admission_errors`, the validating admission after validation): a
Pod with ``overhead`` and no ``runtimeClassName`` (the ``RuntimeClass`` plugin: only a
RuntimeClass may set it).

The quantities of each container's (and init and ephemeral container's) requests and
limits, the pod-level ``resources`` and ``overhead`` are rounded up to milli units
(``SetDefaults_ResourceList``: ``1500u`` is stored as ``2m``; a value already that
coarse keeps its text).

Left out, and why: the ``RuntimeClass`` plugin on a Pod that names a class (the class,
its overhead and scheduling, or its absence, live in the cluster; no input gives them:
such a Pod is taken as it is, unchecked); pod-level resource defaults
(``spec.resources``, not rendered by the Trainer); the priority of a Pod that names a
PriorityClass neither a system one nor given (its value lives in the cluster: left
unset, with no JobSet priority label); a LimitRange's defaults (objects in the
cluster, none on a plain one); server-set metadata (``creationTimestamp``,
``resourceVersion``, ``generation``, ``managedFields``) and ``status``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

from compiler.apiserver.workloads.defaults import (
    default_job_spec,
    default_pod_workload,
    image_tag,
    requests_from_limits,
)
from compiler.errors import FieldError
from compiler.expand import names as n
from compiler.kube.quantity import Quantity, QuantityError

__all__ = [
    "ADMISSION_FORBIDDEN",
    "admit_pod",
    "create_job",
    "create_pod",
    "create_service",
    "default_pod",
    "image_pull_policy",
    "pod_admission_errors",
    "prepare_pod",
]


def image_pull_policy(image: str) -> str:
    """``Always`` for a ``latest`` (or missing) tag, else ``IfNotPresent``.

    >>> [image_pull_policy(i) for i in ("busybox", "acme/x:1.0", "x:latest", "x@sha256:" + "a" * 64)]
    ['Always', 'IfNotPresent', 'Always', 'IfNotPresent']
    """
    return "Always" if image_tag(image) == "latest" else "IfNotPresent"


# --- defaults: compiler.apiserver.workloads.defaults, shared with validation ---------


def stored_pod_spec(spec: dict[str, Any]) -> None:
    """The internal-version round trip of a PodSpec: ``serviceAccount``, the deprecated
    alias, is written from ``serviceAccountName`` (and read into it when only it is set)."""
    if not spec.get("serviceAccountName") and spec.get("serviceAccount"):
        spec["serviceAccountName"] = spec["serviceAccount"]
    if spec.get("serviceAccountName"):
        spec["serviceAccount"] = spec["serviceAccountName"]
    else:
        spec.pop("serviceAccount", None)


def create_service(service: dict[str, Any]) -> dict[str, Any]:
    """A Service as the API server stores it (defaults, and the headless allocation)."""
    spec = service.setdefault("spec", {})
    if not spec.get("sessionAffinity"):
        spec["sessionAffinity"] = "None"
    if not spec.get("type"):
        spec["type"] = "ClusterIP"
    for port in spec.get("ports") or []:
        if not port.get("protocol"):
            port["protocol"] = "TCP"
        if not port.get("targetPort"):
            port["targetPort"] = port.get("port")
    if spec.get("internalTrafficPolicy") is None and spec["type"] in (
        "ClusterIP",
        "NodePort",
        "LoadBalancer",
    ):
        spec["internalTrafficPolicy"] = "Cluster"
    if spec.get("clusterIP") == "None" and not spec.get("clusterIPs"):
        spec["clusterIPs"] = ["None"]
        spec.setdefault("ipFamilies", ["IPv4"])
        spec.setdefault("ipFamilyPolicy", "SingleStack")
    _set_uid(service)
    return service


_MILLI = -3  # the scale SetDefaults_ResourceList rounds quantities up to


def _set_uid(obj: dict[str, Any]) -> None:
    meta = obj.setdefault("metadata", {})
    meta["uid"] = n.placeholder_uid(
        str(obj.get("kind", "")), meta.get("namespace", ""), meta.get("name", "")
    )


def _round_resource_lists(pod_spec: dict[str, Any]) -> None:
    """``SetDefaults_ResourceList`` on every ResourceList of a pod spec: each quantity
    rounded up to milli units (its text replaced only when that changes it)."""
    lists: list[Any] = [pod_spec.get("overhead"), *((pod_spec.get("resources") or {}).values())]
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for container in pod_spec.get(key) or []:
            if isinstance(container, dict):
                lists += list((container.get("resources") or {}).values())
    for resource_list in lists:
        if not isinstance(resource_list, dict):
            continue
        for name, value in resource_list.items():
            try:
                quantity = Quantity.from_manifest(value)
            except (QuantityError, TypeError, ValueError):
                continue  # the API server's validation reports it
            rounded = quantity.round_up(_MILLI)
            if rounded is not quantity:
                resource_list[name] = rounded.canonical()


def create_job(job: dict[str, Any]) -> dict[str, Any]:
    """A Job as the API server stores it: defaults, then the strategy's selector."""
    spec = job.setdefault("spec", {})
    meta = job.setdefault("metadata", {})
    template = spec.setdefault("template", {})
    if template.get("metadata", {}).get("labels") is not None and not meta.get("labels"):
        meta["labels"] = dict(template["metadata"]["labels"])
    default_job_spec(spec)
    _round_resource_lists(template["spec"])
    stored_pod_spec(template["spec"])
    _set_uid(job)
    if not spec["manualSelector"]:
        _generate_selector(job)
    return job


def _generate_selector(job: dict[str, Any]) -> None:
    """``generateSelector``: job-name and controller-uid labels, the controller-uid selector."""
    meta, spec = job["metadata"], job["spec"]
    labels = spec["template"].setdefault("metadata", {}).setdefault("labels", {})
    for key in (n.LEGACY_JOB_NAME, n.JOB_NAME):
        labels.setdefault(key, meta.get("name", ""))
    for key in (n.LEGACY_CONTROLLER_UID, n.CONTROLLER_UID):
        labels.setdefault(key, meta["uid"])
    selector = spec.get("selector") or {}
    match = selector.get("matchLabels") or {}
    match.setdefault(n.CONTROLLER_UID, meta["uid"])
    selector["matchLabels"] = match
    spec["selector"] = selector


# --- Pods ---------------------------------------------------------------------------

_TOKEN_MOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"
_TOLERATED_TAINTS = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")


def _default_pod(pod: dict[str, Any]) -> None:
    spec = pod.setdefault("spec", {})
    requests_from_limits(spec)
    default_pod_workload(spec)
    _round_resource_lists(spec)


def _service_account(pod: dict[str, Any]) -> None:
    """The ServiceAccount admission plugin (the ``default`` account, token automounted)."""
    spec = pod["spec"]
    if not spec.get("serviceAccountName"):
        spec["serviceAccountName"] = "default"
    if spec.get("automountServiceAccountToken") is False:
        return
    existing = next(
        (
            v["name"]
            for v in spec.get("volumes") or []
            if str(v.get("name", "")).startswith("kube-api-access-")
        ),
        None,
    )
    volume_name = existing or f"kube-api-access-{n.NAME_SUFFIX}"
    mount = {"name": volume_name, "readOnly": True, "mountPath": _TOKEN_MOUNT}
    needed = False
    for key in ("initContainers", "containers"):
        for container in spec.get(key) or []:
            if not any(
                m.get("mountPath") == _TOKEN_MOUNT for m in container.get("volumeMounts") or []
            ):
                container.setdefault("volumeMounts", []).append(dict(mount))
                needed = True
    if existing is None and needed:
        spec.setdefault("volumes", []).append(
            {
                "name": volume_name,
                "projected": {
                    "sources": [
                        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                        {
                            "configMap": {
                                "name": "kube-root-ca.crt",
                                "items": [{"key": "ca.crt", "path": "ca.crt"}],
                            }
                        },
                        {
                            "downwardAPI": {
                                "items": [
                                    {
                                        "path": "namespace",
                                        "fieldRef": {
                                            "apiVersion": "v1",
                                            "fieldPath": "metadata.namespace",
                                        },
                                    }
                                ]
                            }
                        },
                    ],
                    "defaultMode": 420,
                },
            }
        )


# the PriorityClasses the API server creates in every cluster
SYSTEM_PRIORITY_CLASSES = {
    "system-node-critical": 2000001000,
    "system-cluster-critical": 2000000000,
}


class PriorityClass(NamedTuple):
    """What the Priority plugin reads of a ``scheduling.k8s.io`` PriorityClass."""

    value: int
    preemption_policy: str = "PreemptLowerPriority"  # the PriorityClass default
    global_default: bool = False


PriorityClasses = Mapping[str, PriorityClass]
NO_CLASSES: PriorityClasses = MappingProxyType({})  # a cluster with only the system ones


def priority_classes(objects: Iterable[Mapping[str, Any]]) -> dict[str, PriorityClass]:
    """The PriorityClasses among ``objects`` (a cluster's), by name."""
    out: dict[str, PriorityClass] = {}
    for obj in objects:
        if obj.get("kind") != "PriorityClass" or not str(obj.get("apiVersion", "")).startswith(
            "scheduling.k8s.io/"
        ):
            continue
        value = obj.get("value")
        name = (obj.get("metadata") or {}).get("name")
        if isinstance(value, int) and name:
            out[str(name)] = PriorityClass(
                value,
                str(obj.get("preemptionPolicy") or "PreemptLowerPriority"),
                obj.get("globalDefault") is True,
            )
    return out


def _priority(pod: dict[str, Any], classes: PriorityClasses) -> None:
    """The Priority plugin, on a cluster with the system classes and ``classes``."""
    spec = pod["spec"]
    known = {name: PriorityClass(v) for name, v in SYSTEM_PRIORITY_CLASSES.items()}
    known.update(classes)
    name = spec.get("priorityClassName")
    if not name:
        default = next((c for c, pc in sorted(classes.items()) if pc.global_default), None)
        if default is None:
            spec.setdefault("priority", 0)
            spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
            return
        spec["priorityClassName"] = name = default
    found = known.get(str(name))
    if found is None:
        return  # the class's value is in the cluster (left out, see the module doc)
    spec.setdefault("priority", found.value)
    spec.setdefault("preemptionPolicy", found.preemption_policy)


def _tolerates(tolerations: list[dict[str, Any]], key: str) -> bool:
    """The plugin's test: a toleration with that key (or none) and effect NoExecute (or none)."""
    return any(
        t.get("key") in (None, "", key) and t.get("effect") in (None, "", "NoExecute")
        for t in tolerations
    )


def _default_toleration_seconds(pod: dict[str, Any]) -> None:
    """The DefaultTolerationSeconds plugin: 300 s on not-ready and unreachable nodes."""
    spec = pod["spec"]
    tolerations = list(spec.get("tolerations") or [])
    added = [
        {"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
        for key in _TOLERATED_TAINTS
        if not _tolerates(tolerations, key)
    ]
    if added:
        spec["tolerations"] = tolerations + added


def default_pod(pod: dict[str, Any], ordinal: int = 0) -> dict[str, Any]:
    """A Pod as the API server decodes it: its generated name, UID and defaults.

    ``ordinal`` tells apart Pods of one generated-name prefix (a NonIndexed Job's):
    their placeholder suffixes are ``00000``, ``00001``, ...
    """
    meta = pod.setdefault("metadata", {})
    if not meta.get("name") and meta.get("generateName"):
        meta["name"] = f"{meta['generateName']}{n.placeholder_suffix(ordinal)}"
    _default_pod(pod)
    _set_uid(pod)
    return pod


def admit_pod(pod: dict[str, Any], classes: PriorityClasses = NO_CLASSES) -> dict[str, Any]:
    """What a plain cluster's built-in admission plugins add to a defaulted Pod, with
    ``classes`` the cluster's PriorityClasses besides the system ones."""
    _service_account(pod)
    _priority(pod, classes)
    _default_toleration_seconds(pod)
    stored_pod_spec(pod["spec"])
    return pod


def create_pod(
    pod: dict[str, Any],
    ordinal: int = 0,
    classes: PriorityClasses = NO_CLASSES,
) -> dict[str, Any]:
    """A Pod as the API server stores it, before any webhook: defaults, then admission
    (``classes``: the cluster's PriorityClasses besides the system ones)."""
    return admit_pod(default_pod(pod, ordinal), classes)


def _merge_label_keys(selector: Any, keys: Any, operator: str, labels: Mapping[str, Any]) -> None:
    """``applyLabelKeysToLabelSelector``: a requirement appended to ``selector`` for each
    of ``keys`` the Pod has a label for (an empty value too), in the keys' order."""
    for key in keys if isinstance(keys, list) else []:
        if isinstance(key, str) and key in labels:
            requirement = {"key": key, "operator": operator, "values": [labels[key]]}
            selector.setdefault("matchExpressions", []).append(requirement)


def _merge_term(term: Any, labels: Mapping[str, Any]) -> None:
    """``applyMatchLabelKeysAndMismatchLabelKeys``: every ``matchLabelKeys`` key (``In``),
    then every ``mismatchLabelKeys`` key (``NotIn``); a term with no selector matches
    nothing and is left as it is."""
    if not isinstance(term, dict) or not isinstance(term.get("labelSelector"), dict):
        return
    _merge_label_keys(term["labelSelector"], term.get("matchLabelKeys"), "In", labels)
    _merge_label_keys(term["labelSelector"], term.get("mismatchLabelKeys"), "NotIn", labels)


def prepare_pod(pod: dict[str, Any]) -> dict[str, Any]:
    """The Pod strategy's ``PrepareForCreate`` on an admitted Pod (in place; returned):
    ``mutatePodAffinity`` then ``mutateTopologySpreadConstraints``. It runs after the
    mutating admission plugins and webhooks, so it sees the labels they add."""
    spec = pod.get("spec") or {}
    labels = (pod.get("metadata") or {}).get("labels") or {}
    affinity = spec.get("affinity")
    for key in ("podAffinity", "podAntiAffinity"):
        kind = affinity.get(key) if isinstance(affinity, dict) else None
        if not isinstance(kind, dict):
            continue
        for weighted in kind.get("preferredDuringSchedulingIgnoredDuringExecution") or []:
            if isinstance(weighted, dict):
                _merge_term(weighted.get("podAffinityTerm"), labels)
        for term in kind.get("requiredDuringSchedulingIgnoredDuringExecution") or []:
            _merge_term(term, labels)
    for constraint in spec.get("topologySpreadConstraints") or []:
        if isinstance(constraint, dict) and isinstance(constraint.get("labelSelector"), dict):
            _merge_label_keys(
                constraint["labelSelector"], constraint.get("matchLabelKeys"), "In", labels
            )
    return pod


# the type of an admission plugin's refusal, told apart from validation's field errors:
# the API server says it as ``pods "<name>" is forbidden: <message>``
ADMISSION_FORBIDDEN = "AdmissionForbidden"


def pod_admission_errors(pod: Mapping[str, Any]) -> list[FieldError]:
    """The validating admission plugins' refusal of a Pod validation took, on a cluster
    whose RuntimeClasses are unknown: the ``RuntimeClass`` plugin's ``validateOverhead``
    with no class named (``overhead`` is for a class to set). A Pod that names a class
    is not checked (see the module doc). The error names no field; its ``path`` is
    where the overhead is written."""
    spec = pod.get("spec") or {}
    if spec.get("runtimeClassName") or not spec.get("overhead"):
        return []  # an empty overhead is not sent: omitted as empty in the Go clients
    message = "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead"
    return [FieldError(ADMISSION_FORBIDDEN, None, message, path=("spec", "overhead"))]
