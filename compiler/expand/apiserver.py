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
  unless automounting is off), ``Priority`` (priority 0 and ``PreemptLowerPriority``
  when the Pod names no PriorityClass and the cluster has no global default; the
  values of the two ``system-`` classes every cluster has),
  ``DefaultTolerationSeconds`` (``not-ready`` and ``unreachable`` for 300 s).

Left out, and why: quantity rounding to milli units (``SetDefaults_ResourceList``
changes only values finer than 1m, which nobody writes); pod-level resource defaults
(``spec.resources``, not rendered by the Trainer); the priority of a Pod that names a
PriorityClass other than the system ones (its value lives in the cluster: left unset,
with no JobSet priority label); a LimitRange's defaults and a cluster's global-default PriorityClass (objects
in the cluster, none on a plain one); server-set metadata (``creationTimestamp``,
``resourceVersion``, ``generation``, ``managedFields``) and ``status``.
"""

from __future__ import annotations

import re
from typing import Any

from compiler.expand import names as n

__all__ = [
    "admit_pod",
    "create_job",
    "create_pod",
    "create_service",
    "default_pod",
    "image_pull_policy",
]

# --- image names (k8s.io/kubernetes/pkg/util/parsers.ParseImageName) ----------------

_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*"
_DOMAIN = r"(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)(?:\.(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?))*(?::[0-9]+)?"
_NAME = re.compile(rf"(?:{_DOMAIN}/)?{_COMPONENT}(?:/{_COMPONENT})*")
_TAG = re.compile(r"[\w][\w.-]{0,127}")
_DIGEST = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}")


def _image_tag(image: str) -> str:
    """The tag ``ParseImageName`` finds: ``latest`` when neither tag nor digest is given,
    empty when the reference does not parse."""
    name, _, digest = image.partition("@")
    tag = ""
    head, sep, last = name.rpartition("/")
    if ":" in last:
        last, tag = last.rsplit(":", 1)
        name = f"{head}{sep}{last}"
        if not _TAG.fullmatch(tag):
            return ""
    if not _NAME.fullmatch(name) or len(name) > 255 or (digest and not _DIGEST.fullmatch(digest)):
        return ""
    return tag or ("" if digest else "latest")


def image_pull_policy(image: str) -> str:
    """``Always`` for a ``latest`` (or missing) tag, else ``IfNotPresent``.

    >>> [image_pull_policy(i) for i in ("busybox", "acme/x:1.0", "x:latest", "x@sha256:" + "a" * 64)]
    ['Always', 'IfNotPresent', 'Always', 'IfNotPresent']
    """
    return "Always" if _image_tag(image) == "latest" else "IfNotPresent"


# --- defaults -----------------------------------------------------------------------


def _http_get(action: dict[str, Any] | None) -> None:
    if isinstance(action, dict):
        if not action.get("path"):
            action["path"] = "/"
        if not action.get("scheme"):
            action["scheme"] = "HTTP"


def _probe(probe: Any) -> None:
    if not isinstance(probe, dict):
        return
    for key, value in (
        ("timeoutSeconds", 1),
        ("periodSeconds", 10),
        ("successThreshold", 1),
        ("failureThreshold", 3),
    ):
        if not probe.get(key):
            probe[key] = value
    _http_get(probe.get("httpGet"))
    grpc = probe.get("grpc")
    if isinstance(grpc, dict) and grpc.get("service") is None:
        grpc["service"] = ""


def _container(container: dict[str, Any]) -> None:
    if not container.get("imagePullPolicy"):
        container["imagePullPolicy"] = image_pull_policy(str(container.get("image", "")))
    if not container.get("terminationMessagePath"):
        container["terminationMessagePath"] = "/dev/termination-log"
    if not container.get("terminationMessagePolicy"):
        container["terminationMessagePolicy"] = "File"
    for port in container.get("ports") or []:
        if not port.get("protocol"):
            port["protocol"] = "TCP"
    for env in container.get("env") or []:
        source = env.get("valueFrom") or {}
        if isinstance(source.get("fieldRef"), dict) and not source["fieldRef"].get("apiVersion"):
            source["fieldRef"]["apiVersion"] = "v1"
        if (
            isinstance(source.get("fileKeyRef"), dict)
            and source["fileKeyRef"].get("optional") is None
        ):
            source["fileKeyRef"]["optional"] = False
    for key in ("livenessProbe", "readinessProbe", "startupProbe"):
        _probe(container.get(key))
    lifecycle = container.get("lifecycle") or {}
    for key in ("postStart", "preStop"):
        if isinstance(lifecycle.get(key), dict):
            _http_get(lifecycle[key].get("httpGet"))


_VOLUME_SOURCES = (
    "hostPath", "emptyDir", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo",
    "secret", "nfs", "iscsi", "glusterfs", "persistentVolumeClaim", "rbd", "flexVolume",
    "cinder", "cephfs", "flocker", "downwardAPI", "fc", "azureFile", "configMap",
    "vsphereVolume", "quobyte", "azureDisk", "photonPersistentDisk", "projected",
    "portworxVolume", "scaleIO", "storageos", "csi", "ephemeral", "image",
)  # fmt: skip


def _field_refs(items: Any) -> None:
    for item in items or []:
        if isinstance(item.get("fieldRef"), dict) and not item["fieldRef"].get("apiVersion"):
            item["fieldRef"]["apiVersion"] = "v1"


def _volume(volume: dict[str, Any]) -> None:
    if not any(volume.get(key) is not None for key in _VOLUME_SOURCES):
        volume["emptyDir"] = {}
    if isinstance(volume.get("hostPath"), dict) and volume["hostPath"].get("type") is None:
        volume["hostPath"]["type"] = ""
    for key in ("secret", "configMap", "downwardAPI", "projected"):
        source = volume.get(key)
        if isinstance(source, dict) and source.get("defaultMode") is None:
            source["defaultMode"] = 420
    if isinstance(volume.get("downwardAPI"), dict):
        _field_refs(volume["downwardAPI"].get("items"))
    for projection in (volume.get("projected") or {}).get("sources") or []:
        if isinstance(projection.get("downwardAPI"), dict):
            _field_refs(projection["downwardAPI"].get("items"))
        token = projection.get("serviceAccountToken")
        if isinstance(token, dict) and token.get("expirationSeconds") is None:
            token["expirationSeconds"] = 3600
    for key, field, value in (
        ("iscsi", "iscsiInterface", "default"),
        ("rbd", "pool", "rbd"),
        ("rbd", "user", "admin"),
        ("rbd", "keyring", "/etc/ceph/keyring"),
        ("scaleIO", "storageMode", "ThinProvisioned"),
        ("scaleIO", "fsType", "xfs"),
    ):
        source = volume.get(key)
        if isinstance(source, dict) and not source.get(field):
            source[field] = value
    disk = volume.get("azureDisk")
    if isinstance(disk, dict):
        disk_defaults: tuple[tuple[str, Any], ...] = (
            ("cachingMode", "ReadWrite"),
            ("fsType", "ext4"),
            ("readOnly", False),
            ("kind", "Shared"),
        )
        for key, default in disk_defaults:
            if disk.get(key) is None:
                disk[key] = default
    claim = ((volume.get("ephemeral") or {}).get("volumeClaimTemplate") or {}).get("spec")
    if isinstance(claim, dict) and claim.get("volumeMode") is None:
        claim["volumeMode"] = "Filesystem"


def stored_pod_spec(spec: dict[str, Any]) -> None:
    """The internal-version round trip of a PodSpec: ``serviceAccount``, the deprecated
    alias, is written from ``serviceAccountName`` (and read into it when only it is set)."""
    if not spec.get("serviceAccountName") and spec.get("serviceAccount"):
        spec["serviceAccountName"] = spec["serviceAccount"]
    if spec.get("serviceAccountName"):
        spec["serviceAccount"] = spec["serviceAccountName"]
    else:
        spec.pop("serviceAccount", None)


def default_pod_spec(spec: dict[str, Any]) -> None:
    """``SetDefaults_PodSpec`` and the generated walk over volumes and containers."""
    for key, value in (
        ("dnsPolicy", "ClusterFirst"),
        ("restartPolicy", "Always"),
        ("schedulerName", "default-scheduler"),
    ):
        if not spec.get(key):
            spec[key] = value
    if spec.get("securityContext") is None:
        spec["securityContext"] = {}
    if spec.get("terminationGracePeriodSeconds") is None:
        spec["terminationGracePeriodSeconds"] = 30
    for volume in spec.get("volumes") or []:
        _volume(volume)
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for container in spec.get(key) or []:
            _container(container)


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


def _set_uid(obj: dict[str, Any]) -> None:
    meta = obj.setdefault("metadata", {})
    meta["uid"] = n.placeholder_uid(
        str(obj.get("kind", "")), meta.get("namespace", ""), meta.get("name", "")
    )


def create_job(job: dict[str, Any]) -> dict[str, Any]:
    """A Job as the API server stores it: defaults, then the strategy's selector."""
    spec = job.setdefault("spec", {})
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
    if spec.get("parallelism") is None:
        spec["parallelism"] = 1
    if spec.get("backoffLimit") is None:
        spec["backoffLimit"] = 2147483647 if spec.get("backoffLimitPerIndex") is not None else 6
    meta = job.setdefault("metadata", {})
    template = spec.setdefault("template", {})
    if template.get("metadata", {}).get("labels") is not None and not meta.get("labels"):
        meta["labels"] = dict(template["metadata"]["labels"])
    if spec.get("completionMode") is None:
        spec["completionMode"] = "NonIndexed"
    if spec.get("suspend") is None:
        spec["suspend"] = False
    if spec.get("podReplacementPolicy") is None:
        spec["podReplacementPolicy"] = (
            "Failed" if spec.get("podFailurePolicy") is not None else "TerminatingOrFailed"
        )
    if spec.get("manualSelector") is None:
        spec["manualSelector"] = False
    for rule in (spec.get("podFailurePolicy") or {}).get("rules") or []:
        for pattern in rule.get("onPodConditions") or []:
            if not pattern.get("status"):
                pattern["status"] = "True"
    default_pod_spec(template.setdefault("spec", {}))
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
    for key in ("containers", "initContainers"):
        for container in spec.get(key) or []:
            resources = container.get("resources") or {}
            limits = resources.get("limits")
            if limits is not None:
                requests = resources.setdefault("requests", {})
                for name, value in limits.items():
                    requests.setdefault(name, value)
                container["resources"] = resources
    if spec.get("enableServiceLinks") is None:
        spec["enableServiceLinks"] = True
    if spec.get("hostNetwork"):
        for key in ("containers", "initContainers"):
            for container in spec.get(key) or []:
                for port in container.get("ports") or []:
                    if not port.get("hostPort"):
                        port["hostPort"] = port.get("containerPort")
    default_pod_spec(spec)


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


def _priority(pod: dict[str, Any]) -> None:
    """The Priority plugin on a cluster without a global-default PriorityClass."""
    spec = pod["spec"]
    name = spec.get("priorityClassName")
    if name and name not in SYSTEM_PRIORITY_CLASSES:
        return  # the class's value is in the cluster (left out, see the module doc)
    spec.setdefault("priority", SYSTEM_PRIORITY_CLASSES.get(name or "", 0))
    spec.setdefault("preemptionPolicy", "PreemptLowerPriority")


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


def admit_pod(pod: dict[str, Any]) -> dict[str, Any]:
    """What a plain cluster's built-in admission plugins add to a defaulted Pod."""
    _service_account(pod)
    _priority(pod)
    _default_toleration_seconds(pod)
    stored_pod_spec(pod["spec"])
    return pod


def create_pod(pod: dict[str, Any], ordinal: int = 0) -> dict[str, Any]:
    """A Pod as the API server stores it, before any webhook: defaults, then admission."""
    return admit_pod(default_pod(pod, ordinal))
