"""The defaults kube-apiserver v1.34 applies while decoding a batch/v1 Job or a v1 Pod
(k8s.io/kubernetes ``pkg/apis/core/v1/defaults.go``, ``pkg/apis/batch/v1/defaults.go``
and their generated ``+default`` markers), before it validates.

This is the one place these defaults live: validation (``validate_job``,
``validate_pod``) and the expansion below the JobSet (``compiler.expand.apiserver``, which
stores what it creates) both call it. Each default is idempotent, so an object that is
already defaulted (as the JobSet and Job controllers' objects are once stored) passes
unchanged. The rounding of requests and limits to a milli-unit is applied where they are
compared (``pod.resource_quantity``).
"""

from __future__ import annotations

import re
from typing import Any

from .pod import aggregate

__all__ = [
    "default_job",
    "default_job_spec",
    "default_pod",
    "default_pod_spec",
    "default_pod_workload",
    "drop_disabled_fields",
    "image_tag",
    "pod_level_resources",
    "requests_from_limits",
]

_ALNUM = "[a-z0-9]+"
_PATH_COMPONENT = f"{_ALNUM}(?:(?:[._]|__|[-]+){_ALNUM})*"
_DOMAIN_COMPONENT = "(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_HOST = f"(?:{_DOMAIN_COMPONENT}(?:\\.{_DOMAIN_COMPONENT})*|\\[[a-fA-F0-9:]+\\])"
_DOMAIN = f"{_HOST}(?::[0-9]+)?"
_REFERENCE = re.compile(
    f"(?:(?P<domain>{_DOMAIN})/)?(?P<path>{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*)"
    r"(?::(?P<tag>[\w][\w.-]{0,127}))?"
    r"(?:@(?P<digest>[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}))?\Z"
)
_PATH_RE = re.compile(f"{_PATH_COMPONENT}\\Z")
_IDENTIFIER = re.compile(r"[a-f0-9]{64}\Z")


def image_tag(image: str) -> str:
    """The tag ``parsers.ParseImageName`` finds: ``latest`` when a valid reference has
    neither tag nor digest, "" when it has a digest or does not parse."""
    if _IDENTIFIER.match(image):
        return ""
    first = image.partition("/")[0]
    # splitDockerDomain: a first component with a dot, a colon or an upper-case letter, or
    # localhost, names a registry
    domain_like = "." in first or ":" in first or first == "localhost" or first.lower() != first
    match = _REFERENCE.match(image)
    if match is None or len(image.split("@")[0].split(":")[0]) > 255:
        return ""
    # a first component that does not look like a host is a Docker Hub path: lowercase
    if match["domain"] is not None and not domain_like and not _PATH_RE.match(first):
        return ""
    if match["tag"]:
        return match["tag"]
    return "" if match["digest"] else "latest"


def _probe(probe: dict[str, Any] | None) -> None:
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
    _handler(probe)
    grpc = probe.get("grpc")
    if isinstance(grpc, dict) and grpc.get("service") is None:
        grpc["service"] = ""


def _handler(handler: dict[str, Any] | None) -> None:
    """An HTTP-get action's path and scheme (a lifecycle handler has no gRPC action)."""
    if not isinstance(handler, dict):
        return
    http = handler.get("httpGet")
    if isinstance(http, dict):
        if not http.get("path"):
            http["path"] = "/"
        if not http.get("scheme"):
            http["scheme"] = "HTTP"


def _container(container: dict[str, Any]) -> None:
    if not container.get("imagePullPolicy"):
        tag = image_tag(str(container.get("image") or ""))
        container["imagePullPolicy"] = "Always" if tag == "latest" else "IfNotPresent"
    if not container.get("terminationMessagePath"):
        container["terminationMessagePath"] = "/dev/termination-log"
    if not container.get("terminationMessagePolicy"):
        container["terminationMessagePolicy"] = "File"
    for port in container.get("ports") or []:
        if isinstance(port, dict) and not port.get("protocol"):
            port["protocol"] = "TCP"
    for env in container.get("env") or []:
        source = env.get("valueFrom") if isinstance(env, dict) else None
        if isinstance(source, dict):
            field_ref = source.get("fieldRef")
            if isinstance(field_ref, dict) and not field_ref.get("apiVersion"):
                field_ref["apiVersion"] = "v1"
            file_ref = source.get("fileKeyRef")
            if isinstance(file_ref, dict) and file_ref.get("optional") is None:
                file_ref["optional"] = False
    for key in ("livenessProbe", "readinessProbe", "startupProbe"):
        _probe(container.get(key))
    lifecycle = container.get("lifecycle")
    if isinstance(lifecycle, dict):
        _handler(lifecycle.get("postStart"))
        _handler(lifecycle.get("preStop"))


_VOLUME_SOURCES = (
    "hostPath", "emptyDir", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo", "secret",
    "nfs", "iscsi", "glusterfs", "persistentVolumeClaim", "rbd", "flexVolume", "cinder",
    "cephfs", "flocker", "downwardAPI", "fc", "azureFile", "configMap", "vsphereVolume",
    "quobyte", "azureDisk", "photonPersistentDisk", "projected", "portworxVolume", "scaleIO",
    "storageos", "csi", "ephemeral", "image",
)  # fmt: skip


def _downward_items(source: Any) -> None:
    for item in (source or {}).get("items") or [] if isinstance(source, dict) else []:
        field_ref = item.get("fieldRef") if isinstance(item, dict) else None
        if isinstance(field_ref, dict) and not field_ref.get("apiVersion"):
            field_ref["apiVersion"] = "v1"


def _volume(volume: dict[str, Any]) -> None:
    if all(volume.get(key) is None for key in _VOLUME_SOURCES):
        volume["emptyDir"] = {}
    for key, mode in (("secret", 0o644), ("configMap", 0o644), ("downwardAPI", 0o644)):
        source = volume.get(key)
        if isinstance(source, dict) and source.get("defaultMode") is None:
            source["defaultMode"] = mode
    projected = volume.get("projected")
    if isinstance(projected, dict):
        if projected.get("defaultMode") is None:
            projected["defaultMode"] = 0o644
        for source in projected.get("sources") or []:
            if not isinstance(source, dict):
                continue
            _downward_items(source.get("downwardAPI"))
            token = source.get("serviceAccountToken")
            if isinstance(token, dict) and token.get("expirationSeconds") is None:
                token["expirationSeconds"] = 3600
    _downward_items(volume.get("downwardAPI"))
    host_path = volume.get("hostPath")
    if isinstance(host_path, dict) and host_path.get("type") is None:
        host_path["type"] = ""
    _other_volume_sources(volume)


# the generated defaults of the less common sources: (source, field, value)
_SOURCE_DEFAULTS: tuple[tuple[str, str, Any], ...] = (
    ("iscsi", "iscsiInterface", "default"),
    ("rbd", "pool", "rbd"),
    ("rbd", "user", "admin"),
    ("rbd", "keyring", "/etc/ceph/keyring"),
    ("scaleIO", "storageMode", "ThinProvisioned"),
    ("scaleIO", "fsType", "xfs"),
)
_AZURE_DISK_DEFAULTS: tuple[tuple[str, Any], ...] = (
    ("cachingMode", "ReadWrite"),
    ("fsType", "ext4"),
    ("readOnly", False),
    ("kind", "Shared"),
)


def _other_volume_sources(volume: dict[str, Any]) -> None:
    """iSCSI, RBD, ScaleIO and Azure disk defaults; an ephemeral claim's volume mode."""
    for key, field, value in _SOURCE_DEFAULTS:
        source = volume.get(key)
        if isinstance(source, dict) and not source.get(field):
            source[field] = value
    disk = volume.get("azureDisk")
    if isinstance(disk, dict):
        for key, default in _AZURE_DISK_DEFAULTS:
            if disk.get(key) is None:
                disk[key] = default
    ephemeral = volume.get("ephemeral")
    template = ephemeral.get("volumeClaimTemplate") if isinstance(ephemeral, dict) else None
    claim = template.get("spec") if isinstance(template, dict) else None
    if isinstance(claim, dict) and claim.get("volumeMode") is None:
        claim["volumeMode"] = "Filesystem"


def default_pod_spec(spec: dict[str, Any]) -> None:
    """``SetDefaults_PodSpec`` and the defaults of what a pod spec holds."""
    if not spec.get("dnsPolicy"):
        spec["dnsPolicy"] = "ClusterFirst"
    if not spec.get("restartPolicy"):
        spec["restartPolicy"] = "Always"
    if spec.get("securityContext") is None:
        spec["securityContext"] = {}
    if spec.get("terminationGracePeriodSeconds") is None:
        spec["terminationGracePeriodSeconds"] = 30
    if not spec.get("schedulerName"):
        spec["schedulerName"] = "default-scheduler"
    for volume in spec.get("volumes") or []:
        if isinstance(volume, dict):
            _volume(volume)
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for container in spec.get(key) or []:
            if isinstance(container, dict):
                _container(container)


def pod_level_resources(spec: dict[str, Any]) -> None:
    """``defaultHugePagePodLimits`` and ``defaultPodRequests`` (PodLevelResources is GA in
    v1.34): pod-level hugepage limits from the containers', pod-level requests from the
    containers' (cpu, memory) or the pod's own limits."""
    resources = spec.get("resources")
    if not isinstance(resources, dict):
        return
    limits = resources.get("limits")
    requests = resources.get("requests")
    if limits or requests:
        pod_limits = dict(limits or {})
        for name, total in aggregate(spec, "limits", rounded=False).items():
            if not name.startswith("hugepages-") or name in (requests or {}):
                continue
            pod_limits.setdefault(name, str(total))
        if pod_limits:
            resources["limits"] = pod_limits
    limits = resources.get("limits")
    if not limits:
        return
    pod_requests = dict(resources.get("requests") or {})
    for name, total in aggregate(spec, "requests", rounded=False).items():
        supported = name in ("cpu", "memory")  # pod-level and overcommitable
        if supported and name not in pod_requests:
            pod_requests[name] = str(total)
    for name, value in limits.items():
        if (
            name in ("cpu", "memory") or name.startswith("hugepages-")
        ) and name not in pod_requests:
            pod_requests[name] = value
    if pod_requests:
        resources["requests"] = pod_requests


def requests_from_limits(spec: dict[str, Any]) -> None:
    """A container's limits are its requests where it has none."""
    for key in ("containers", "initContainers"):
        for container in spec.get(key) or []:
            resources = container.get("resources") if isinstance(container, dict) else None
            if not isinstance(resources, dict) or resources.get("limits") is None:
                continue
            requests = resources.get("requests")
            if requests is None:
                requests = resources["requests"] = {}
            for name, value in resources["limits"].items():
                requests.setdefault(name, value)


def default_pod(pod: dict[str, Any]) -> None:
    """``SetObjectDefaults_Pod``: requests from limits, pod-level resources, the rest."""
    spec = pod.setdefault("spec", {})
    requests_from_limits(spec)
    pod_level_resources(spec)
    default_pod_workload(spec)


def default_pod_workload(spec: dict[str, Any]) -> None:
    """A Pod's spec defaults after its resources: service links, host-network ports, then
    ``default_pod_spec``."""
    if spec.get("enableServiceLinks") is None:
        spec["enableServiceLinks"] = True
    if spec.get("hostNetwork"):
        for key in ("containers", "initContainers"):
            for container in spec.get(key) or []:
                for port in (container or {}).get("ports") or []:
                    if isinstance(port, dict) and not port.get("hostPort"):
                        port["hostPort"] = port.get("containerPort", 0)
    default_pod_spec(spec)


def default_job(job: dict[str, Any]) -> None:
    """``SetObjectDefaults_Job``. As in Go, a Job without labels takes its template's
    labels map itself (one map: labels the API server adds to the template later show
    in both)."""
    spec = job.setdefault("spec", {})
    template = spec.setdefault("template", {})
    template_meta = template.setdefault("metadata", {})
    meta = job.setdefault("metadata", {})
    if template_meta.get("labels") is not None and not meta.get("labels"):
        meta["labels"] = template_meta["labels"]
    default_job_spec(spec)


def default_job_spec(spec: dict[str, Any]) -> None:
    """A Job spec's defaults, its pod template's included (not the Job's labels)."""
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
        spec["parallelism"] = 1
    if spec.get("parallelism") is None:
        spec["parallelism"] = 1
    if spec.get("backoffLimit") is None:
        spec["backoffLimit"] = 2147483647 if spec.get("backoffLimitPerIndex") is not None else 6
    if spec.get("completionMode") is None:
        spec["completionMode"] = "NonIndexed"
    if spec.get("suspend") is None:
        spec["suspend"] = False
    if spec.get("podReplacementPolicy") is None:
        failed = spec.get("podFailurePolicy") is not None
        spec["podReplacementPolicy"] = "Failed" if failed else "TerminatingOrFailed"
    if spec.get("manualSelector") is None:
        spec["manualSelector"] = False
    policy = spec.get("podFailurePolicy")
    for rule in (policy.get("rules") or []) if isinstance(policy, dict) else []:
        for pattern in (rule or {}).get("onPodConditions") or []:
            if isinstance(pattern, dict) and not pattern.get("status"):
                pattern["status"] = "True"
    default_pod_spec(spec.setdefault("template", {}).setdefault("spec", {}))


def drop_disabled_fields(spec: dict[str, Any]) -> None:
    """What ``PrepareForCreate`` clears for feature gates off in v1.34 (Go's
    ``dropDisabledFields``): user namespaces (``hostUsers``), container restart rules (a
    regular container's ``restartPolicy``, an init container's other than Always),
    container stop signals, env files and ``hostnameOverride``."""
    security = spec.get("securityContext")
    if isinstance(security, dict):
        security.pop("hostUsers", None)
    spec.pop("hostnameOverride", None)
    for key in ("initContainers", "containers"):
        for container in spec.get(key) or []:
            if not isinstance(container, dict):
                continue
            policy = container.get("restartPolicy")
            if key == "containers" or (policy is not None and policy != "Always"):
                container.pop("restartPolicy", None)
            container.pop("restartPolicyRules", None)
            lifecycle = container.get("lifecycle")
            if isinstance(lifecycle, dict):
                lifecycle.pop("stopSignal", None)
            for env in container.get("env") or []:
                source = env.get("valueFrom") if isinstance(env, dict) else None
                if isinstance(source, dict):
                    source.pop("fileKeyRef", None)
