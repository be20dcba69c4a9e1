"""Pod spec validation of kube-apiserver v1.34.4 (k8s.io/kubernetes
``pkg/apis/core/validation``: ``ValidatePodSpec`` and what it calls), on a defaulted v1
pod spec held as JSON-like data, with the API server's messages.

The checks run in Go's order, so the errors come in the order the API server lists them,
except where Go walks a map (resource lists, label maps: random order in Go, sorted here).
Feature gates are v1.34's defaults (relaxed environment variable names, zero-second sleep
actions, no container restart rules, no env files).

Emulated: containers and init containers (names, images, ports, env and envFrom, volume
mounts, pull policy, resources, security context with seccomp, probes and lifecycle
handlers, resize policy), volumes (names and the sources emptyDir, hostPath, secret,
configMap, persistentVolumeClaim, downwardAPI, projected, nfs, csi), restart and DNS
policy, DNS config, host aliases, node selector, affinity (with ``matchLabelKeys`` and
``mismatchLabelKeys``, read on the selector the Pod strategy merged them into:
compiler.expand.apiserver ``prepare_pod``), tolerations, pod security context with
sysctls, seccomp and the supplemental-groups and SELinux change policies, topology
spread constraints (``matchLabelKeys`` as v1.34 checks a new object, selector merge on),
service account, node,
hostname, subdomain, priority and runtime class, preemption policy, readiness and
scheduling gates, active deadline, pod-level resources. Not emulated (left to the API
server): resource claims, ephemeral containers, pod annotations with meaning (and
AppArmor and seccomp annotations against the fields), Windows options, the OS field, volume devices, other volume sources.
"""

from __future__ import annotations

import decimal
import functools
import ipaddress
import marshal
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from compiler.errors import FieldError
from compiler.kube.gotext import go_json
from compiler.kube.quantity import Format, Quantity, QuantityError

from . import meta, names
from .fielderrors import (
    Key,
    Path,
    Value,
    as_json,
    as_number,
    as_string,
    duplicate,
    forbidden,
    invalid,
    not_found,
    not_supported,
    relocated,
    required,
    too_long,
)

__all__ = [
    "PANIC_BODY",
    "PodOptions",
    "ServerPanic",
    "WorkloadDecodeError",
    "forget_valid_specs",
    "quantity",
    "validate_pod_spec",
]

_INT32_MAX = 2**31 - 1


class WorkloadDecodeError(ValueError):
    """The object would not decode (the API server answers 400 before validating)."""


class ServerPanic(Exception):
    """The API server's validation code panics on the object: it answers 500 with
    :data:`PANIC_BODY` instead of validation errors."""


PANIC_BODY = "This request caused apiserver to panic. Look in the logs for details."


@dataclass(frozen=True)
class PodOptions:
    """What differs between a Pod and a pod template (``PodValidationOptions``)."""

    resource_is_pod: bool = False
    allow_privileged: bool = True  # kube-apiserver --allow-privileged (kubeadm: true)


def quantity(value: Any) -> Quantity:
    """A resource quantity as the API server decodes it."""
    try:
        return Quantity.from_manifest(value)
    except (QuantityError, TypeError) as err:
        raise WorkloadDecodeError(f"quantities must match the regular expression: {err}") from err


def resource_quantity(value: Any) -> Quantity:
    """A container's request or limit: decoded, then rounded up (away from zero) to a
    milli-unit, as ``SetDefaults_ResourceList`` does (``100u`` is ``1m``)."""
    if isinstance(value, str | int | float):
        return _resource_quantity(type(value).__name__, value)  # True == 1 == 1.0
    return _rounded(quantity(value))


@functools.lru_cache(maxsize=4096)
def _resource_quantity(_kind: str, value: Any) -> Quantity:
    return _rounded(quantity(value))


def _rounded(parsed: Quantity) -> Quantity:
    with decimal.localcontext() as context:
        context.prec = 200
        scaled = parsed.as_decimal() * 1000
        if scaled == scaled.to_integral_value():
            return parsed
        milli = int(scaled.to_integral_value(rounding=decimal.ROUND_UP))
    whole, rest = divmod(abs(milli), 1000)
    if parsed.format is Format.BINARY_SI and not rest and whole >= 1024:
        return Quantity.of_int(whole if milli > 0 else -whole, Format.BINARY_SI)
    return Quantity.parse(f"{milli}m")


def _s(value: Any) -> str:
    return "" if value is None else str(value)


def _i(value: Any) -> int:
    return int(value or 0)


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [v if isinstance(v, dict) else {} for v in value or []]


def _dns_label(value: str, path: Path) -> list[FieldError]:
    return [invalid(path, as_string(value), m) for m in names.dns1123_label(value)]


def _dns_subdomain(value: str, path: Path) -> list[FieldError]:
    return [invalid(path, as_string(value), m) for m in names.dns1123_subdomain(value)]


def _qualified_name(value: str, path: Path) -> list[FieldError]:
    return [invalid(path, as_string(value), m) for m in names.qualified_name(value)]


# --- volumes


_FILE_MODE = "must be a number between 0 and 0777 (octal), both inclusive"
_HOST_PATH_TYPES = (
    "",
    "BlockDevice",
    "CharDevice",
    "Directory",
    "DirectoryOrCreate",
    "File",
    "FileOrCreate",
    "Socket",
)
_SOURCES = (
    "emptyDir",
    "hostPath",
    "gitRepo",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "secret",
    "nfs",
    "iscsi",
    "glusterfs",
    "flocker",
    "persistentVolumeClaim",
    "rbd",
    "cinder",
    "cephfs",
    "quobyte",
    "downwardAPI",
    "fc",
    "flexVolume",
    "configMap",
    "azureFile",
    "vsphereVolume",
    "photonPersistentDisk",
    "portworxVolume",
    "azureDisk",
    "storageos",
    "projected",
    "scaleIO",
    "csi",
    "ephemeral",
    "image",
)  # fmt: skip (Go's order of checks)


def _no_backsteps(target: str, path: Path) -> list[FieldError]:
    if ".." in target.split("/"):
        return [invalid(path, as_string(target), "must not contain '..'")]
    return []


def _local_descending(target: str, path: Path) -> list[FieldError]:
    errors = []
    if target.startswith("/"):
        errors.append(invalid(path, as_string(target), "must be a relative path"))
    return errors + _no_backsteps(target, path)


def _key_to_path(item: Mapping[str, Any], path: Path) -> list[FieldError]:
    errors = []
    if not _s(item.get("key")):
        errors.append(required((*path, "key")))
    target = _s(item.get("path"))
    if not target:
        errors.append(required((*path, "path")))
    errors += _local_descending(target, (*path, "path"))
    if target.startswith("..") and not target.startswith("../"):
        errors.append(invalid((*path, "path"), as_string(target), "must not start with '..'"))
    mode = item.get("mode")
    if mode is not None and not 0 <= int(mode) <= 0o777:
        errors.append(invalid((*path, "mode"), as_number(int(mode)), _FILE_MODE))
    return errors


def _projection_like(source: Mapping[str, Any], name_key: str, path: Path) -> list[FieldError]:
    errors = []
    if not _s(source.get(name_key)):
        errors.append(required((*path, name_key)))
    mode = source.get("defaultMode")
    if mode is not None and not 0 <= int(mode) <= 0o777:
        errors.append(invalid((*path, "defaultMode"), as_number(int(mode)), _FILE_MODE))
    for i, item in enumerate(_dicts(source.get("items"))):
        errors += _key_to_path(item, (*path, "items", i))
    return errors


def _nfs(source: Mapping[str, Any], path: Path) -> list[FieldError]:
    """``validateNFSVolumeSource``."""
    errors: list[FieldError] = []
    server, target = _s(source.get("server")), _s(source.get("path"))
    if not server:
        errors.append(required((*path, "server")))
    if not target:
        errors.append(required((*path, "path")))
    if not target.startswith("/"):
        errors.append(invalid((*path, "path"), as_string(target), "must be an absolute path"))
    return errors


def _csi(source: Mapping[str, Any], path: Path) -> list[FieldError]:
    """``validateCSIVolumeSource``: the driver's name (``ValidateCSIDriverName``) and the
    node-publish secret's (Go reports a bad one at ``csi.name``)."""
    errors: list[FieldError] = []
    driver = _s(source.get("driver"))
    if not driver:
        errors.append(required((*path, "driver")))
    if len(driver.encode()) > 63:
        errors.append(too_long((*path, "driver"), 63))
    errors += [
        invalid((*path, "driver"), as_string(driver), m)
        for m in names.dns1123_subdomain(driver.lower())
    ]
    secret = source.get("nodePublishSecretRef")
    if isinstance(secret, dict):
        name = _s(secret.get("name"))
        if not name:
            errors.append(required((*path, "nodePublishSecretRef", "name")))
        else:
            errors += [
                invalid((*path, "name"), as_string(name), m)
                for m in meta.name_is_dns_subdomain(name, False)
            ]
    return errors


def _source_errors(kind: str, source: Mapping[str, Any], path: Path) -> list[FieldError]:
    if kind == "emptyDir":
        limit = source.get("sizeLimit")
        if limit is not None and quantity(limit).sign() < 0:
            return [
                forbidden((*path, "sizeLimit"), "SizeLimit field must be a valid resource quantity")
            ]
        return []
    if kind == "hostPath":
        target = _s(source.get("path"))
        if not target:
            return [required((*path, "path"))]
        errors = _no_backsteps(target, (*path, "path"))
        kind_value = source.get("type")
        if kind_value is not None and _s(kind_value) not in _HOST_PATH_TYPES:
            errors.append(not_supported((*path, "type"), as_json(kind_value), _HOST_PATH_TYPES))
        return errors
    if kind == "secret":
        return _projection_like(source, "secretName", path)
    if kind == "configMap":
        return _projection_like(source, "name", path)
    if kind == "persistentVolumeClaim":
        return [] if _s(source.get("claimName")) else [required((*path, "claimName"))]
    if kind == "nfs":
        return _nfs(source, path)
    if kind == "csi":
        return _csi(source, path)
    if kind == "downwardAPI":
        errors = _mode(source.get("defaultMode"), (*path, "defaultMode"))
        for j, item in enumerate(_dicts(source.get("items"))):
            # Go names an item's errors by downwardAPI itself, without the item's index
            errors += relocated(_downward_file(item, path), path, (*path, "items", j))
        return errors
    if kind == "projected":
        return _mode(source.get("defaultMode"), (*path, "defaultMode")) + _projection(source, path)
    return []  # other sources: not emulated


def _mode(mode: Any, path: Path) -> list[FieldError]:
    if mode is not None and not 0 <= int(mode) <= 0o777:
        return [invalid(path, as_number(int(mode)), _FILE_MODE)]
    return []


def _local_non_reserved(target: str, path: Path) -> list[FieldError]:
    errors = _local_descending(target, path)
    if target.startswith("..") and not target.startswith("../"):
        errors.append(invalid(path, as_string(target), "must not start with '..'"))
    return errors


def _downward_file(item: Mapping[str, Any], path: Path) -> list[FieldError]:
    errors: list[FieldError] = []
    target = _s(item.get("path"))
    if not target:
        errors.append(required((*path, "path")))
    errors += _local_non_reserved(target, (*path, "path"))
    if item.get("fieldRef") is not None:
        errors += _field_ref(item["fieldRef"] or {}, (*path, "fieldRef"), _VOLUME_FIELD_PATHS)
        if item.get("resourceFieldRef") is not None:
            detail = "fieldRef and resourceFieldRef can not be specified simultaneously"
            errors.append(invalid(path, as_string("resource"), detail))
    elif item.get("resourceFieldRef") is not None:
        errors += _resource_field_ref(
            item["resourceFieldRef"] or {}, (*path, "resourceFieldRef"), volume=True
        )
    else:
        errors.append(required(path, "one of fieldRef and resourceFieldRef is required"))
    return errors + _mode(item.get("mode"), (*path, "mode"))


def _projection(projected: Mapping[str, Any], path: Path) -> list[FieldError]:
    """``validateProjectionSources`` for secret, configMap, downwardAPI and
    serviceAccountToken sources (cluster trust bundles and pod certificates: not emulated)."""
    errors: list[FieldError] = []
    paths: set[str] = set()

    def claim(target: str, value: str) -> None:
        if target in paths:
            errors.append(invalid(path, as_string(value), "conflicting duplicate paths"))
        paths.add(target)

    for i, source in enumerate(_dicts(projected.get("sources"))):
        at = (*path, "sources", i)
        count = 0
        for kind in ("secret", "configMap"):
            if source.get(kind) is None:
                continue
            count += 1
            ref = source[kind] or {}
            if not _s(ref.get("name")):
                errors.append(required((*at, kind, "name")))
            for j, item in enumerate(_dicts(ref.get("items"))):
                errors += _key_to_path(item, (*at, kind, "items", j))
                if _s(item.get("path")):
                    claim(_s(item.get("path")), _s(ref.get("name")))
        if source.get("downwardAPI") is not None:
            count += 1
            for j, item in enumerate(_dicts((source["downwardAPI"] or {}).get("items"))):
                where = (*at, "downwardAPI")
                errors += relocated(_downward_file(item, where), where, (*where, "items", j))
                if _s(item.get("path")):
                    claim(_s(item.get("path")), _s(item.get("path")))
        if source.get("serviceAccountToken") is not None:
            count += 1
            token = source["serviceAccountToken"] or {}
            seconds = _i(token.get("expirationSeconds"))
            token_at = (*at, "serviceAccountToken", "expirationSeconds")
            if seconds < 600:
                detail = "may not specify a duration less than 10 minutes"
                errors.append(invalid(token_at, as_number(seconds), detail))
            if seconds > 1 << 32:
                detail = "may not specify a duration larger than 2^32 seconds"
                errors.append(invalid(token_at, as_number(seconds), detail))
            target = _s(token.get("path"))
            if not target:
                errors.append(required((*path, "path")))
            else:
                errors += _local_non_reserved(target, (*path, "path"))
        if count > 1:
            errors.append(forbidden(at, "may not specify more than 1 volume type per source"))
    return errors


def _single_kind(
    obj: Mapping[str, Any], kinds: tuple[str, ...], path: Path, what: str
) -> tuple[str | None, list[FieldError]]:
    """The first of ``kinds`` that ``obj`` sets, and a "more than 1" error for each later one
    it sets too; the API server validates the first one before it reports these."""
    present = [kind for kind in kinds if obj.get(kind) is not None]
    extra = [forbidden((*path, k), f"may not specify more than 1 {what}") for k in present[1:]]
    return (present[0] if present else None), extra


def _volume_source(volume: Mapping[str, Any], path: Path) -> list[FieldError]:
    kind, extra = _single_kind(volume, _SOURCES, path, "volume type")
    if kind is None:
        return [required(path, "must specify a volume type")]
    source = volume[kind]
    # Go validates a GCE persistent disk under the path "persistentDisk"
    sub = "persistentDisk" if kind == "gcePersistentDisk" else kind
    return [*_source_errors(kind, source if isinstance(source, dict) else {}, (*path, sub)), *extra]


def _volumes(
    volumes: list[dict[str, Any]], path: Path
) -> tuple[dict[str, dict[str, Any]], list[FieldError]]:
    """``ValidateVolumes``: the volumes that passed, by name, and the errors."""
    valid: dict[str, dict[str, Any]] = {}
    seen: set[str] = set()
    errors: list[FieldError] = []
    for i, volume in enumerate(volumes):
        name = _s(volume.get("name"))
        found = _volume_source(volume, (*path, i))
        if not name:
            found.append(required((*path, i, "name")))
        else:
            found += _dns_label(name, (*path, i, "name"))
        if name in seen:
            found.append(duplicate((*path, i, "name"), as_string(name)))
        if found:
            errors += found
        else:
            seen.add(name)
            valid[name] = volume
    return valid, errors


# --- containers: ports, env, mounts, resources


def _ports(ports: list[dict[str, Any]], path: Path) -> list[FieldError]:
    errors: list[FieldError] = []
    seen: set[str] = set()
    for i, port in enumerate(ports):
        name = _s(port.get("name"))
        if name:
            messages = names.port_name(name)
            if messages:
                errors += [invalid((*path, i, "name"), as_string(name), m) for m in messages]
            elif name in seen:
                errors.append(duplicate((*path, i, "name"), as_string(name)))
            else:
                seen.add(name)
        number = _i(port.get("containerPort"))
        if number == 0:
            errors.append(required((*path, i, "containerPort")))
        else:
            errors += [
                invalid((*path, i, "containerPort"), as_number(number), m)
                for m in names.port_number(number)
            ]
        host = _i(port.get("hostPort"))
        if host != 0:
            errors += [
                invalid((*path, i, "hostPort"), as_number(host), m) for m in names.port_number(host)
            ]
        protocol = _s(port.get("protocol"))
        if not protocol:
            errors.append(required((*path, i, "protocol")))
        elif protocol not in ("SCTP", "TCP", "UDP"):
            errors.append(
                not_supported((*path, i, "protocol"), as_json(protocol), ("SCTP", "TCP", "UDP"))
            )
    return errors


_ENV_FIELD_PATHS = (
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "spec.nodeName",
    "spec.serviceAccountName",
    "status.hostIP",
    "status.hostIPs",
    "status.podIP",
    "status.podIPs",
)
_DOWNWARD_LABELS = frozenset(
    {
        "metadata.annotations",
        "metadata.labels",
        "metadata.name",
        "metadata.namespace",
        "metadata.uid",
        "spec.nodeName",
        "spec.restartPolicy",
        "spec.serviceAccountName",
        "spec.schedulerName",
        "status.phase",
        "status.hostIP",
        "status.hostIPs",
        "status.podIP",
        "status.podIPs",
    }
)
_ENV_RESOURCES = (
    "limits.cpu",
    "limits.ephemeral-storage",
    "limits.memory",
    "requests.cpu",
    "requests.ephemeral-storage",
    "requests.memory",
)
_MEMORY_DIVISORS = frozenset(
    {"1", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei"}
)


def _subscripted(field_path: str) -> tuple[str, str] | None:
    """``fieldpath.SplitMaybeSubscriptedPath``: ``metadata.labels['x']`` -> path and key."""
    if not field_path.endswith("']"):
        return None
    head, sep, key = field_path[:-2].partition("['")
    if not sep or not head:
        return None
    return head, key


_VOLUME_FIELD_PATHS = (
    "metadata.annotations",
    "metadata.labels",
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
)


def _field_ref(
    ref: Mapping[str, Any], path: Path, expressions: tuple[str, ...] = _ENV_FIELD_PATHS
) -> list[FieldError]:
    version = _s(ref.get("apiVersion"))
    field_path = _s(ref.get("fieldPath"))
    if not version:
        return [required((*path, "apiVersion"))]
    if not field_path:
        return [required((*path, "fieldPath"))]
    split = _subscripted(field_path)
    problem = None
    if version != "v1":
        problem = f"unsupported pod version: {version}"
    elif split is not None:
        if split[0] not in ("metadata.annotations", "metadata.labels"):
            problem = f"field label does not support subscript: {field_path}"
    elif field_path not in _DOWNWARD_LABELS and field_path != "spec.host":
        problem = f"field label not supported: {field_path}"
    if problem is not None:
        detail = f"error converting fieldPath: {problem}"
        return [invalid((*path, "fieldPath"), as_string(field_path), detail)]
    internal = "spec.nodeName" if field_path == "spec.host" else field_path
    if split is not None:
        head, key = split
        if head == "metadata.annotations":
            return _qualified_name(key.lower(), path)
        return _qualified_name(key, path)
    if internal not in expressions:
        return [not_supported((*path, "fieldPath"), as_string(internal), expressions)]
    return []


def _resource_field_ref(
    ref: Mapping[str, Any], path: Path, volume: bool = False
) -> list[FieldError]:
    errors: list[FieldError] = []
    resource = _s(ref.get("resource"))
    if volume and not _s(ref.get("containerName")):
        errors.append(required((*path, "containerName")))
    elif not resource:
        errors.append(required((*path, "resource")))
    elif resource not in _ENV_RESOURCES and not resource.startswith(
        ("limits.hugepages-", "requests.hugepages-")
    ):
        errors.append(not_supported((*path, "resource"), as_string(resource), _ENV_RESOURCES))
    divisor = ref.get("divisor")
    if divisor is None:
        return errors
    parsed = quantity(divisor)
    if parsed.is_zero():
        return errors
    text = str(parsed)
    wrong = None
    if resource in ("limits.cpu", "requests.cpu") and text not in ("1m", "1"):
        wrong = "only divisor's values 1m and 1 are supported with the cpu resource"
    elif resource in ("limits.memory", "requests.memory") and text not in _MEMORY_DIVISORS:
        wrong = "memory resource"
    elif (
        resource in ("limits.ephemeral-storage", "requests.ephemeral-storage")
        and text not in _MEMORY_DIVISORS
    ):
        wrong = "local ephemeral storage resource"
    if wrong is not None:
        if not wrong.startswith("only"):
            wrong = (
                "only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei"
                f" are supported with the {wrong}"
            )
        errors.append(invalid((*path, "divisor"), as_string(resource), wrong))
    hugepages = resource.startswith(("requests.hugepages-", "limits.hugepages-"))
    if hugepages and text not in _MEMORY_DIVISORS:
        detail = (
            "only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei"
            " are supported with the hugepages resource"
        )
        errors.append(invalid((*path, "divisor"), as_string(resource), detail))
    return errors


def _config_key(key: str, path: Path) -> list[FieldError]:
    messages = []
    if len(key.encode()) > 253:
        messages.append(names.max_len(253))
    if not all(c.isascii() and (c.isalnum() or c in "-._") for c in key):
        messages.append(
            names.regex_error(
                "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
                "[-._a-zA-Z0-9]+",
                "key.name",
                "KEY_NAME",
                "key-name",
            )
        )
    if key == ".":
        messages.append("must not be '.'")
    elif key == "..":
        messages.append("must not be '..'")
    elif key.startswith(".."):
        messages.append("must not start with '..'")
    return [invalid(path, as_string(key), m) for m in messages]


def _key_selector(ref: Mapping[str, Any], path: Path) -> list[FieldError]:
    name = _s(ref.get("name"))
    errors = _dns_subdomain(name, (*path, "name"))
    key = _s(ref.get("key"))
    if not key:
        errors.append(required((*path, "key")))
    else:
        errors += _config_key(key, (*path, "key"))
    return errors


def _value_from(env: Mapping[str, Any], path: Path) -> list[FieldError]:
    source = env.get("valueFrom")
    if source is None:
        return []
    source = source if isinstance(source, dict) else {}
    errors: list[FieldError] = []
    count = 0
    if source.get("fieldRef") is not None:
        count += 1
        errors += _field_ref(source["fieldRef"], (*path, "fieldRef"))
    if source.get("resourceFieldRef") is not None:
        count += 1
        errors += _resource_field_ref(source["resourceFieldRef"], (*path, "resourceFieldRef"))
    for key in ("configMapKeyRef", "secretKeyRef"):
        if source.get(key) is not None:
            count += 1
            errors += _key_selector(source[key], (*path, key))
    if source.get("fileKeyRef") is not None:
        count += 1  # EnvFiles is alpha in v1.34: dropped before validation (not emulated)
    if count == 0:
        detail = (
            "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or"
            " `secretKeyRef`"
        )
        errors.append(invalid(path, as_string(""), detail))
    elif _s(env.get("value")):
        errors.append(
            invalid(path, as_string(""), "may not be specified when `value` is not empty")
        )
    elif count > 1:
        detail = "may not have more than one field specified at a time"
        errors.append(invalid(path, as_string(""), detail))
    return errors


def _env(env: list[dict[str, Any]], path: Path) -> list[FieldError]:
    errors: list[FieldError] = []
    for i, var in enumerate(env):
        name = _s(var.get("name"))
        if not name:
            errors.append(required((*path, i, "name")))
        else:
            errors += [
                invalid((*path, i, "name"), as_string(name), m)
                for m in names.env_var_name_relaxed(name)
            ]
        errors += _value_from(var, (*path, i, "valueFrom"))
    return errors


def _env_from(sources: list[dict[str, Any]], path: Path) -> list[FieldError]:
    errors: list[FieldError] = []
    for i, source in enumerate(sources):
        prefix = _s(source.get("prefix"))
        if prefix:
            errors += [
                invalid((*path, i, "prefix"), as_string(prefix), m)
                for m in names.env_var_name_relaxed(prefix)
            ]
        count = 0
        for key in ("configMapRef", "secretRef"):
            ref = source.get(key)
            if ref is None:
                continue
            count += 1
            name = _s(ref.get("name"))
            if not name:
                errors.append(required((*path, i, key, "name")))
            else:
                errors += [
                    invalid((*path, i, key, "name"), as_string(name), m)
                    for m in meta.name_is_dns_subdomain(name, True)
                ]
        if count == 0:
            detail = "must specify one of: `configMapRef` or `secretRef`"
            errors.append(invalid(path, as_string(""), detail))
        elif count > 1:
            detail = "may not have more than one field specified at a time"
            errors.append(invalid(path, as_string(""), detail))
    return errors


def _mounts(
    mounts: list[dict[str, Any]], volumes: Mapping[str, Any], path: Path, privileged: bool
) -> list[FieldError]:
    """``ValidateVolumeMounts`` of a container (``privileged``: its security context's)."""
    errors: list[FieldError] = []
    paths: set[str] = set()
    for i, mount in enumerate(mounts):
        name = _s(mount.get("name"))
        target = _s(mount.get("mountPath"))
        if not name:
            errors.append(required((*path, i, "name")))
        if name not in volumes:
            errors.append(not_found((*path, i, "name"), as_string(name)))
        if not target:
            errors.append(required((*path, i, "mountPath")))
        if target in paths:
            errors.append(invalid((*path, i, "mountPath"), as_string(target), "must be unique"))
        paths.add(target)
        sub_path = _s(mount.get("subPath"))
        # Go names these volumeMounts.subPath (...), without the index: found at the mount's
        found: list[FieldError] = []
        if sub_path:
            found += _local_descending(sub_path, (*path, "subPath"))
        expr = _s(mount.get("subPathExpr"))
        if expr:
            if sub_path:
                detail = "subPathExpr and subPath are mutually exclusive"
                found.append(invalid((*path, i, "subPathExpr"), as_string(expr), detail))
            found += _local_descending(expr, (*path, "subPathExpr"))
        found += _propagation(mount, (*path, "mountPropagation"), privileged)
        found += _recursive_read_only(mount, (*path, "recursiveReadOnly"))
        for key in ("subPath", "subPathExpr", "mountPropagation", "recursiveReadOnly"):
            found = relocated(found, (*path, key), (*path, i, key))
        errors += found
    return errors


def _propagation(mount: Mapping[str, Any], path: Path, privileged: bool) -> list[FieldError]:
    mode = mount.get("mountPropagation")
    if mode is None:
        return []
    supported = ("Bidirectional", "HostToContainer", "None")
    if _s(mode) not in supported:
        return [not_supported(path, as_json(mode), supported)]
    if _s(mode) == "Bidirectional" and not privileged:
        detail = "Bidirectional mount propagation is available only to privileged containers"
        return [forbidden(path, detail)]
    return []


def _recursive_read_only(mount: Mapping[str, Any], path: Path) -> list[FieldError]:
    mode = mount.get("recursiveReadOnly")
    if mode is None:
        return []
    mode = _s(mode)
    if mode == "Disabled":
        return []
    if mode in ("Enabled", "IfPossible"):
        errors = []
        if not mount.get("readOnly"):
            errors.append(forbidden(path, "may only be specified when readOnly is true"))
        propagation = mount.get("mountPropagation")
        if propagation is not None and _s(propagation) != "None":
            detail = "may only be specified when mountPropagation is None or not specified"
            errors.append(forbidden(path, detail))
        return errors
    return [not_supported(path, as_json(mode), ("Disabled", "Enabled", "IfPossible"))]


def _is_native(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


def _is_extended(name: str) -> bool:
    if _is_native(name) or name.startswith("requests."):
        return False
    return not names.qualified_name("requests." + name)


def _overcommit_allowed(name: str) -> bool:
    return _is_native(name) and not name.startswith("hugepages-")


_STANDARD = frozenset(
    {
        "cpu",
        "memory",
        "ephemeral-storage",
        "requests.cpu",
        "requests.memory",
        "requests.ephemeral-storage",
        "limits.cpu",
        "limits.memory",
        "limits.ephemeral-storage",
        "pods",
        "resourcequotas",
        "services",
        "replicationcontrollers",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "storage",
        "requests.storage",
        "services.nodeports",
        "services.loadbalancers",
    }
)
_INTEGER = frozenset(
    {
        "pods",
        "resourcequotas",
        "services",
        "replicationcontrollers",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "services.nodeports",
        "services.loadbalancers",
    }
)


def _resource_name(name: str, path: Path) -> list[FieldError]:
    """``validateContainerResourceName``."""
    errors = [invalid(path, as_json(name), m) for m in names.qualified_name(name)]
    if not errors and "/" not in name:
        standard = name in _STANDARD or name.startswith(("hugepages-", "requests.hugepages-"))
        if not standard:
            errors.append(
                invalid(path, as_json(name), "must be a standard resource type or fully qualified")
            )
    if "/" not in name:
        if name not in ("cpu", "memory", "ephemeral-storage") and not name.startswith("hugepages-"):
            errors.append(
                invalid(path, as_json(name), "must be a standard resource for containers")
            )
    elif not _is_native(name) and not _is_extended(name):
        errors.append(
            invalid(path, as_json(name), "doesn't follow extended resource name standard")
        )
    return errors


def _quantity_value(name: str, value: Quantity, path: Path) -> list[FieldError]:
    errors = []
    if value.sign() < 0:
        errors.append(invalid(path, as_string(str(value)), "must be greater than or equal to 0"))
    if (name in _INTEGER or _is_extended(name)) and value.milli_value() % 1000 != 0:
        errors.append(invalid(path, as_json(str(value)), "must be an integer"))
    return errors


def _hugepages(name: str, value: Quantity, path: Path) -> list[FieldError]:
    if not name.startswith("hugepages-"):
        return []
    try:
        page = Quantity.parse(name[len("hugepages-") :])
    except QuantityError:
        page = None
    divisible = (
        page is not None
        and page.sign() > 0
        and page.milli_value() % 1000 == 0
        and value.value() % page.value() == 0
    )
    if divisible:
        return []
    detail = f"{value} is not positive integer multiple of {name}"
    return [invalid(path, as_string(str(value)), detail)]


def _pod_resource_name(name: str, path: Path) -> list[FieldError]:
    """``validatePodResourceName``: pod-level resources are cpu, memory and hugepages."""
    errors = [invalid(path, as_json(name), m) for m in names.qualified_name(name)]
    if not errors and "/" not in name:
        standard = name in _STANDARD or name.startswith(("hugepages-", "requests.hugepages-"))
        if not standard:
            errors.append(
                invalid(path, as_json(name), "must be a standard resource type or fully qualified")
            )
    if errors:
        return errors
    if name not in ("cpu", "memory") and not name.startswith("hugepages-"):
        return [not_supported(path, as_json(name), ("cpu", "hugepages-", "memory"))]
    return []


def _resources(
    resources: Mapping[str, Any], path: Path, name_check: Any = None
) -> list[FieldError]:
    """``validateResourceRequirements`` of a container (or, with ``name_check``
    :func:`_pod_resource_name`, of the pod)."""
    check = name_check or _resource_name
    errors: list[FieldError] = []
    limits = {str(k): resource_quantity(v) for k, v in (resources.get("limits") or {}).items()}
    requests = {str(k): resource_quantity(v) for k, v in (resources.get("requests") or {}).items()}
    compute = False
    hugepages = False
    for name in sorted(limits):
        at = (*path, "limits", Key(name))
        errors += check(name, at) + _quantity_value(name, limits[name], at)
        if name.startswith("hugepages-"):
            hugepages = True
            errors += _hugepages(name, limits[name], at)
        compute = compute or name in ("cpu", "memory")
    for name in sorted(requests):
        value = requests[name]
        at = (*path, "requests", Key(name))
        errors += check(name, at) + _quantity_value(name, value, at)
        limit = limits.get(name)
        if limit is not None:
            if value.cmp(limit) != 0 and not _overcommit_allowed(name):
                detail = f"must be equal to {name} limit of {limit}"
                errors.append(invalid((*path, "requests"), as_string(str(value)), detail))
            elif value.cmp(limit) > 0:
                detail = f"must be less than or equal to {name} limit of {limit}"
                errors.append(invalid((*path, "requests"), as_string(str(value)), detail))
        elif not _overcommit_allowed(name):
            detail = "Limit must be set for non overcommitable resources"
            errors.append(required((*path, "limits"), detail))
        if name.startswith("hugepages-"):
            hugepages = True
            errors += _hugepages(name, value, at)
        compute = compute or name in ("cpu", "memory")
    if hugepages and not compute:
        errors.append(forbidden(path, "HugePages require cpu or memory"))
    return errors


def _security_context(
    context: Any, path: Path, host_users: bool, opts: PodOptions
) -> list[FieldError]:
    """``ValidateSecurityContext`` of a container (not its seccomp, AppArmor and Windows
    options)."""
    if not isinstance(context, dict):
        return []
    errors: list[FieldError] = []
    privileged = context.get("privileged")
    if privileged and not opts.allow_privileged:
        errors.append(forbidden((*path, "privileged"), "disallowed by cluster policy"))
    for key in ("runAsUser", "runAsGroup"):
        value = context.get(key)
        if value is not None and not 0 <= int(value) <= _INT32_MAX:
            errors.append(
                invalid((*path, key), as_number(int(value)), names.inclusive_range(0, _INT32_MAX))
            )
    proc_mount = context.get("procMount")
    if proc_mount is not None:
        if _s(proc_mount) not in ("Default", "Unmasked"):
            errors.append(
                not_supported((*path, "procMount"), as_json(proc_mount), ("Default", "Unmasked"))
            )
        if host_users and _s(proc_mount) == "Unmasked":
            errors.append(
                invalid(
                    (*path, "procMount"),
                    as_json(proc_mount),
                    "`hostUsers` must be false to use `Unmasked`",
                )
            )
    errors += _seccomp(context.get("seccompProfile"), (*path, "seccompProfile"))
    if context.get("allowPrivilegeEscalation") is False:
        shown = Value(context, go_json(_internal_security_context(context), sort_keys=False))
        if privileged:
            detail = "cannot set `allowPrivilegeEscalation` to false and `privileged` to true"
            errors.append(invalid(path, shown, detail))
        capabilities = context.get("capabilities")
        added = capabilities.get("add") if isinstance(capabilities, dict) else None
        for capability in added if isinstance(added, list) else []:
            if capability == "CAP_SYS_ADMIN":  # spelt so: "SYS_ADMIN" passes
                detail = (
                    "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` "
                    "CAP_SYS_ADMIN"
                )
                errors.append(invalid(path, shown, detail))
    return errors + _app_armor(context.get("appArmorProfile"), (*path, "appArmorProfile"))


def _internal_security_context(context: Mapping[str, Any]) -> dict[str, Any]:
    """A container's security context as the internal ``core.SecurityContext`` (no JSON
    tags: Go field names, in field order), which an error shows as its value."""

    def fields(value: Any, names: tuple[tuple[str, str, Any], ...]) -> dict[str, Any] | None:
        if not isinstance(value, dict):
            return None
        return {go: value.get(key, empty) for go, key, empty in names}

    profile = (("Type", "type", ""), ("LocalhostProfile", "localhostProfile", None))
    return {
        "Capabilities": fields(
            context.get("capabilities"), (("Add", "add", None), ("Drop", "drop", None))
        ),
        "Privileged": context.get("privileged"),
        "SELinuxOptions": fields(
            context.get("seLinuxOptions"),
            (
                ("User", "user", ""),
                ("Role", "role", ""),
                ("Type", "type", ""),
                ("Level", "level", ""),
            ),
        ),
        "WindowsOptions": fields(
            context.get("windowsOptions"),
            (
                ("GMSACredentialSpecName", "gmsaCredentialSpecName", None),
                ("GMSACredentialSpec", "gmsaCredentialSpec", None),
                ("RunAsUserName", "runAsUserName", None),
                ("HostProcess", "hostProcess", None),
            ),
        ),
        "RunAsUser": context.get("runAsUser"),
        "RunAsGroup": context.get("runAsGroup"),
        "RunAsNonRoot": context.get("runAsNonRoot"),
        "ReadOnlyRootFilesystem": context.get("readOnlyRootFilesystem"),
        "AllowPrivilegeEscalation": context.get("allowPrivilegeEscalation"),
        "ProcMount": context.get("procMount"),
        "SeccompProfile": fields(context.get("seccompProfile"), profile),
        "AppArmorProfile": fields(context.get("appArmorProfile"), profile),
    }


def _seccomp(profile: Any, path: Path) -> list[FieldError]:
    """``validateSeccompProfileField``."""
    if not isinstance(profile, dict):
        return []
    errors: list[FieldError] = []
    kind = _s(profile.get("type"))
    supported = ("Localhost", "RuntimeDefault", "Unconfined")
    if not kind:
        errors.append(required((*path, "type"), "type is required when seccompProfile is set"))
    elif kind not in supported:
        errors.append(not_supported((*path, "type"), as_json(kind), supported))
    local = profile.get("localhostProfile")
    if kind == "Localhost":
        if local is None:
            detail = "must be set when seccomp type is Localhost"
            errors.append(required((*path, "localhostProfile"), detail))
        else:
            errors += _local_descending(_s(local), (*path, "localhostProfile"))
    elif local is not None:
        # the internal struct, which has no JSON tags
        shown = Value(
            profile, go_json({"Type": kind, "LocalhostProfile": _s(local)}, sort_keys=False)
        )
        detail = "can only be set when seccomp type is Localhost"
        errors.append(invalid((*path, "localhostProfile"), shown, detail))
    return errors


def _app_armor(profile: Any, path: Path) -> list[FieldError]:
    """``ValidateAppArmorProfileField``."""
    if not isinstance(profile, dict):
        return []
    kind = _s(profile.get("type"))
    local = profile.get("localhostProfile")
    if kind == "Localhost":
        if local is None:
            detail = "must be set when AppArmor type is Localhost"
            return [required((*path, "localhostProfile"), detail)]
        errors: list[FieldError] = []
        local = _s(local)
        if local.strip(" \t\n\v\f\r\x85\xa0") != local:
            detail = "must not be padded with whitespace"
            errors.append(invalid((*path, "localhostProfile"), as_string(local), detail))
        elif not local:
            detail = "must be set when AppArmor type is Localhost"
            errors.append(required((*path, "localhostProfile"), detail))
        if len(local.encode()) > 4095:
            errors.append(too_long((*path, "localhostProfile"), 4095))
        return errors
    if kind in ("RuntimeDefault", "Unconfined"):
        if local is not None:
            detail = "can only be set when AppArmor type is Localhost"
            return [invalid((*path, "localhostProfile"), as_json(_s(local)), detail)]
        return []
    if not kind:
        return [required((*path, "type"), "type is required when appArmorProfile is set")]
    supported = ("Localhost", "RuntimeDefault", "Unconfined")
    return [not_supported((*path, "type"), as_json(kind), supported)]


_SYSCTL_SEGMENT = "[a-z0-9]([-_a-z0-9]*[a-z0-9])?"
_SYSCTL = "(" + _SYSCTL_SEGMENT + "[\\./])*" + _SYSCTL_SEGMENT
_SYSCTL_RE = re.compile(_SYSCTL + "\\Z")
_IPC_SYSCTLS = frozenset(
    {
        "kernel.sem",
        "kernel.shmall",
        "kernel.shmmax",
        "kernel.shmmni",
        "kernel.shm_rmid_forced",
        "kernel.shm",
        "kernel.msgmax",
        "kernel.msgmnb",
        "kernel.msgmni",
        "kernel.msg",
    }
)


def _sysctl_namespace(name: str) -> str:
    """``sysctl.GetNamespace``: "Net", "IPC" or ""."""
    separator = next((c for c in name if c in "./"), None)
    if separator == "/":  # slashes are the separators: swap them with dots
        name = name.translate(str.maketrans("./", "/."))
    name = name.split("*", 1)[0]
    if name in _IPC_SYSCTLS or name.startswith("fs.mqueue."):
        return "IPC"
    return "Net" if name.startswith("net.") else ""


def _sysctls(context: Mapping[str, Any], spec: Mapping[str, Any], path: Path) -> list[FieldError]:
    errors: list[FieldError] = []
    seen: set[str] = set()
    for i, sysctl in enumerate(_dicts(context.get("sysctls"))):
        name = _s(sysctl.get("name"))
        at = (*path, i, "name")
        if not name:
            errors.append(required(at))
        elif len(name.encode()) > 253 or not _SYSCTL_RE.match(name):
            detail = f"must have at most 253 characters and match regex ^{_SYSCTL}$"
            errors.append(invalid(at, as_string(name), detail))
        elif name in seen:
            errors.append(duplicate(at, as_string(name)))
        namespace = _sysctl_namespace(name)
        if spec.get("hostNetwork") and namespace == "Net":
            errors.append(
                invalid(at, as_string(name), "may not be specified when 'hostNetwork' is true")
            )
        elif spec.get("hostIPC") and namespace == "IPC":
            errors.append(
                invalid(at, as_string(name), "may not be specified when 'hostIPC' is true")
            )
        seen.add(name)
    return errors


# --- topology spread


def _topology_spread(constraints: list[dict[str, Any]], path: Path) -> list[FieldError]:
    """``validateTopologySpreadConstraints``, on a new object (the selector-merge rules
    for ``matchLabelKeys``)."""
    errors: list[FieldError] = []
    for i, constraint in enumerate(constraints):
        at = (*path, i)
        skew = _i(constraint.get("maxSkew"))
        if skew <= 0:
            errors.append(invalid((*at, "maxSkew"), as_number(skew), "must be greater than zero"))
        key = _s(constraint.get("topologyKey"))
        if not key:
            errors.append(required((*at, "topologyKey"), "can not be empty"))
        action = _s(constraint.get("whenUnsatisfiable"))
        if action not in ("DoNotSchedule", "ScheduleAnyway"):
            errors.append(
                not_supported(
                    (*at, "whenUnsatisfiable"), as_json(action), ("DoNotSchedule", "ScheduleAnyway")
                )
            )
        for later in constraints[i + 1 :]:
            same_key = _s(later.get("topologyKey")) == key
            if same_key and _s(later.get("whenUnsatisfiable")) == action:
                errors.append(
                    duplicate(
                        (*at, "{topologyKey, whenUnsatisfiable}"), as_string(f"{{{key}, {action}}}")
                    )
                )
                break
        domains = constraint.get("minDomains")
        if domains is not None:
            domains = int(domains)
            if domains <= 0:
                detail = "must be greater than zero"
                errors.append(invalid((*at, "minDomains"), as_number(domains), detail))
            if action != "DoNotSchedule":
                detail = f"can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {action}"
                errors.append(invalid((*at, "minDomains"), as_number(domains), detail))
        for key_name in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            policy = constraint.get(key_name)
            if policy is not None and _s(policy) not in ("Honor", "Ignore"):
                errors.append(not_supported((*at, key_name), as_json(policy), ("Honor", "Ignore")))
        errors += _label_keys(at, constraint.get("matchLabelKeys"), None, constraint)
        errors += meta.selector_errors(constraint.get("labelSelector"), (*at, "labelSelector"))
    return errors


# --- probes and handlers


def _port_or_name(port: Any, path: Path) -> list[FieldError]:
    if isinstance(port, str):
        return [invalid(path, as_string(port), m) for m in names.port_name(port)]
    number = _i(port)
    return [invalid(path, as_number(number), m) for m in names.port_number(number)]


def _handler(
    handler: Mapping[str, Any], kinds: tuple[str, ...], grace: int | None, path: Path
) -> list[FieldError]:
    kind, extra = _single_kind(handler, kinds, path, "handler type")
    if kind is None:
        return [required(path, "must specify a handler type")]
    action = handler[kind]
    action = action if isinstance(action, dict) else {}
    return [*_handler_action(kind, action, grace, (*path, kind)), *extra]


def _handler_action(
    kind: str, action: Mapping[str, Any], grace: int | None, at: Path
) -> list[FieldError]:
    """One handler's fields (``exec``, ``httpGet``, ``tcpSocket``, ``grpc`` or ``sleep``)."""
    errors: list[FieldError] = []
    if kind == "exec":
        if not action.get("command"):
            errors.append(required((*at, "command")))
    elif kind == "httpGet":
        if not _s(action.get("path")):
            errors.append(required((*at, "path")))
        errors += _port_or_name(action.get("port"), (*at, "port"))
        scheme = _s(action.get("scheme"))
        if scheme not in ("HTTP", "HTTPS"):
            errors.append(not_supported((*at, "scheme"), as_json(scheme), ("HTTP", "HTTPS")))
        for j, header in enumerate(_dicts(action.get("httpHeaders"))):
            header_name = _s(header.get("name"))
            found = [
                invalid((*at, "httpHeaders"), as_string(header_name), m)
                for m in names.http_header_name(header_name)
            ]
            headers = (*at, "httpHeaders")
            errors += relocated(found, headers, (*headers, j, "name"))
    elif kind == "tcpSocket":
        errors += _port_or_name(action.get("port"), (*at, "port"))
    elif kind == "grpc":
        errors += _port_or_name(_i(action.get("port")), (*at, "port"))
    elif kind == "sleep":
        seconds = _i(action.get("seconds"))
        if grace is not None and not 0 <= seconds <= grace:
            detail = f"must be non-negative and less than terminationGracePeriodSeconds ({grace})"
            errors.append(invalid(at, as_number(seconds), detail))
    return errors


_PROBE_HANDLERS = ("exec", "httpGet", "tcpSocket", "grpc")
_LIFECYCLE_HANDLERS = ("exec", "httpGet", "tcpSocket", "sleep")


def _probe(probe: Any, kind: str, grace: int | None, path: Path) -> list[FieldError]:
    if probe is None:
        return []
    probe = probe if isinstance(probe, dict) else {}
    errors = _handler(probe, _PROBE_HANDLERS, grace, path)
    for key in (
        "initialDelaySeconds",
        "timeoutSeconds",
        "periodSeconds",
        "successThreshold",
        "failureThreshold",
    ):
        errors += meta.nonnegative(_i(probe.get(key)), (*path, key))
    probe_grace = probe.get("terminationGracePeriodSeconds")
    if probe_grace is not None and int(probe_grace) <= 0:
        errors.append(
            invalid(
                (*path, "terminationGracePeriodSeconds"),
                as_number(int(probe_grace)),
                "must be greater than 0",
            )
        )
    success = _i(probe.get("successThreshold"))
    if kind in ("livenessProbe", "startupProbe") and success != 1:
        errors.append(invalid((*path, "successThreshold"), as_number(success), "must be 1"))
    if kind == "readinessProbe" and probe_grace is not None:
        errors.append(
            invalid(
                (*path, "terminationGracePeriodSeconds"),
                as_json(int(probe_grace)),
                "must not be set for readinessProbes",
            )
        )
    return errors


def _lifecycle(lifecycle: Any, grace: int | None, path: Path) -> list[FieldError]:
    lifecycle = lifecycle if isinstance(lifecycle, dict) else {}
    errors: list[FieldError] = []
    for key in ("postStart", "preStop"):
        handler = lifecycle.get(key)
        if handler is not None:
            handler = handler if isinstance(handler, dict) else {}
            errors += _handler(handler, _LIFECYCLE_HANDLERS, grace, (*path, key))
    return errors


# --- containers


_RESIZE_RESOURCES = ("cpu", "memory")
_RESIZE_RESTARTS = ("NotRequired", "RestartContainer")


def _resize_policy(policies: list[dict[str, Any]], path: Path, restart: str) -> list[FieldError]:
    """``validateResizePolicy`` (``restart``: the pod's restartPolicy)."""
    errors: list[FieldError] = []
    seen: set[str] = set()
    for i, policy in enumerate(policies):
        name = _s(policy.get("resourceName"))
        if name in seen:
            errors.append(duplicate((*path, i), as_json(name)))
        seen.add(name)
        if not name:
            errors.append(required(path))
        elif name not in _RESIZE_RESOURCES:
            errors.append(not_supported(path, as_json(name), _RESIZE_RESOURCES))
        policy_restart = _s(policy.get("restartPolicy"))
        if not policy_restart:
            errors.append(required(path))
        elif policy_restart not in _RESIZE_RESTARTS:
            errors.append(not_supported(path, as_json(policy_restart), _RESIZE_RESTARTS))
        if restart == "Never" and policy_restart != "NotRequired":
            detail = "must be 'NotRequired' when `restartPolicy` is 'Never'"
            errors.append(invalid(path, as_json(policy_restart), detail))
    return errors


def _container_common(
    container: Mapping[str, Any],
    volumes: Mapping[str, Any],
    path: Path,
    host_users: bool,
    opts: PodOptions,
    restart: str,
) -> list[FieldError]:
    """``validateContainerCommon`` (``restart``: the pod's restartPolicy)."""
    errors: list[FieldError] = []
    name = _s(container.get("name"))
    if not name:
        errors.append(required((*path, "name")))
    else:
        errors += _dns_label(name, (*path, "name"))
    if not _s(container.get("image")):
        errors.append(required((*path, "image")))
    policy = _s(container.get("terminationMessagePolicy"))
    if not policy:
        errors.append(required((*path, "terminationMessagePolicy")))
    elif policy not in ("File", "FallbackToLogsOnError"):
        errors.append(
            not_supported(
                (*path, "terminationMessagePolicy"),
                as_json(policy),
                ("File", "FallbackToLogsOnError"),
            )
        )
    errors += _ports(_dicts(container.get("ports")), (*path, "ports"))
    errors += _env(_dicts(container.get("env")), (*path, "env"))
    errors += _env_from(_dicts(container.get("envFrom")), (*path, "envFrom"))
    security = container.get("securityContext")
    privileged = isinstance(security, dict) and security.get("privileged") is True
    mounts = _dicts(container.get("volumeMounts"))
    errors += _mounts(mounts, volumes, (*path, "volumeMounts"), privileged)
    pull = _s(container.get("imagePullPolicy"))
    if not pull:
        errors.append(required((*path, "imagePullPolicy")))
    elif pull not in ("Always", "IfNotPresent", "Never"):
        errors.append(
            not_supported(
                (*path, "imagePullPolicy"), as_json(pull), ("Always", "IfNotPresent", "Never")
            )
        )
    resources = container.get("resources")
    errors += _resources(resources if isinstance(resources, dict) else {}, (*path, "resources"))
    errors += _resize_policy(
        _dicts(container.get("resizePolicy")), (*path, "resizePolicy"), restart
    )
    errors += _security_context(
        container.get("securityContext"), (*path, "securityContext"), host_users, opts
    )
    return errors


def _host_ports(containers: list[dict[str, Any]], path: Path) -> list[FieldError]:
    errors: list[FieldError] = []
    seen: set[str] = set()
    for c, container in enumerate(containers):
        for p, port in enumerate(_dicts(container.get("ports"))):
            host = _i(port.get("hostPort"))
            if host == 0:
                continue
            text = f"{_s(port.get('protocol'))}/{_s(port.get('hostIP'))}/{host}"
            if text in seen:
                errors.append(duplicate((*path, c, "ports", p, "hostPort"), as_string(text)))
            seen.add(text)
    return errors


def _containers(
    containers: list[dict[str, Any]],
    volumes: Mapping[str, Any],
    grace: int | None,
    path: Path,
    host_users: bool,
    opts: PodOptions,
    restart: str,
) -> list[FieldError]:
    if not containers:
        return [required(path)]
    errors: list[FieldError] = []
    seen: set[str] = set()
    for i, container in enumerate(containers):
        at = (*path, i)
        errors += _container_common(container, volumes, at, host_users, opts, restart)
        name = _s(container.get("name"))
        if name in seen:
            errors.append(duplicate((*at, "name"), as_string(name)))
        seen.add(name)
        if container.get("lifecycle") is not None:
            errors += _lifecycle(container["lifecycle"], grace, (*at, "lifecycle"))
        for kind in ("livenessProbe", "readinessProbe", "startupProbe"):
            errors += _probe(container.get(kind), kind, grace, (*at, kind))
        if container.get("restartPolicy") is not None:
            errors.append(
                forbidden((*at, "restartPolicy"), "may not be set for non-init containers")
            )
    return errors + _host_ports(containers, path)


def _init_containers(
    containers: list[dict[str, Any]],
    regular: list[dict[str, Any]],
    volumes: Mapping[str, Any],
    grace: int | None,
    path: Path,
    host_users: bool,
    opts: PodOptions,
    restart: str,
) -> list[FieldError]:
    errors: list[FieldError] = []
    seen = {_s(c.get("name")) for c in regular}
    for i, container in enumerate(containers):
        at = (*path, i)
        errors += _container_common(container, volumes, at, host_users, opts, restart)
        policy = container.get("restartPolicy")
        always = False
        if policy is not None:
            if _s(policy) != "Always":
                errors.append(not_supported((*at, "restartPolicy"), as_json(policy), ("Always",)))
            always = _s(policy) == "Always"
        name = _s(container.get("name"))
        if name in seen:
            errors.append(duplicate((*at, "name"), as_string(name)))
        elif name:
            seen.add(name)
        errors += _host_ports([container], path)
        if always:
            if container.get("lifecycle") is not None:
                errors += _lifecycle(container["lifecycle"], grace, (*at, "lifecycle"))
            for kind in ("livenessProbe", "readinessProbe", "startupProbe"):
                errors += _probe(container.get(kind), kind, grace, (*at, kind))
        else:
            for kind in ("lifecycle", "livenessProbe", "readinessProbe", "startupProbe"):
                if container.get(kind) is not None:
                    detail = "may not be set for init containers without restartPolicy=Always"
                    errors.append(forbidden((*at, kind), detail))
    return errors


# --- pod-level resources


def resource_lists(container: Mapping[str, Any], key: str, rounded: bool) -> dict[str, Quantity]:
    """A container's ``requests`` or ``limits`` decoded (and rounded as after defaulting)."""
    decode = resource_quantity if rounded else quantity
    raw = (container.get("resources") or {}).get(key) or {}
    return {str(k): decode(v) for k, v in raw.items()}


def _add_into(total: dict[str, Quantity], more: Mapping[str, Quantity]) -> None:
    for name, value in more.items():
        total[name] = total[name].add(value) if name in total else value


def _max_into(total: dict[str, Quantity], more: Mapping[str, Quantity]) -> None:
    for name, value in more.items():
        if name not in total or value.cmp(total[name]) > 0:
            total[name] = value


def aggregate(spec: Mapping[str, Any], key: str, rounded: bool = True) -> dict[str, Quantity]:
    """``resourcehelper.AggregateContainerRequests`` (``key`` "requests") or
    ``AggregateContainerLimits`` ("limits"): the containers' sum, sidecars included, or
    the largest init container step if higher."""
    total: dict[str, Quantity] = {}
    for container in _dicts(spec.get("containers")):
        _add_into(total, resource_lists(container, key, rounded))
    sidecars: dict[str, Quantity] = {}
    init_steps: dict[str, Quantity] = {}
    for container in _dicts(spec.get("initContainers")):
        own = resource_lists(container, key, rounded)
        if container.get("restartPolicy") == "Always":
            _add_into(total, own)
            _add_into(sidecars, own)
            step = dict(sidecars)
        else:
            step = {}
            _add_into(step, own)
            _add_into(step, sidecars)
        _max_into(init_steps, step)
    _max_into(total, init_steps)
    return total


def _pod_resources(spec: Mapping[str, Any], path: Path) -> list[FieldError]:
    """``validatePodResources`` (resource claims: not emulated)."""
    resources = spec.get("resources")
    if resources is None:
        return []
    resources = resources if isinstance(resources, dict) else {}
    at = (*path, "resources")
    os_value = spec.get("os")
    if isinstance(os_value, dict) and os_value.get("name") == "windows":
        return [forbidden(at, "may not be set for a windows pod")]
    errors: list[FieldError] = []
    if resources.get("claims") is not None:
        errors.append(
            forbidden((*at, "claims"), "claims may not be set for Resources at pod-level")
        )
    errors += _resources(resources, at, _pod_resource_name)
    requests = {str(k): resource_quantity(v) for k, v in (resources.get("requests") or {}).items()}
    limits = {str(k): resource_quantity(v) for k, v in (resources.get("limits") or {}).items()}
    containers_requests = aggregate(spec, "requests")
    for name in sorted(containers_requests):
        total = containers_requests[name]
        if name in requests and total.cmp(requests[name]) > 0:
            detail = f"must be greater than or equal to aggregate container requests of {total}"
            errors.append(
                invalid((*at, "requests", Key(name)), as_string(str(requests[name])), detail)
            )
    containers_limits = aggregate(spec, "limits")
    for name in sorted(containers_limits):
        total = containers_limits[name]
        if name.startswith("hugepages-") and name in limits and total.cmp(limits[name]) > 0:
            detail = f"must be greater than or equal to aggregate container limits of {total}"
            errors.append(invalid((*at, "limits", Key(name)), as_string(str(limits[name])), detail))
    for i, container in enumerate(_dicts(spec.get("containers"))):
        own = resource_lists(container, "limits", True)
        for name in sorted(own):
            if name in limits and own[name].cmp(limits[name]) > 0:
                # Go's path: resources.containers[i][name].limits
                where = (*at, "containers", i, Key(name), "limits")
                detail = f"must be less than or equal to pod limits of {limits[name]}"
                errors.append(invalid(where, as_string(str(own[name])), detail))
    return errors


# --- scheduling


def _node_requirement(req: Mapping[str, Any], path: Path, allow_invalid: bool) -> list[FieldError]:
    errors: list[FieldError] = []
    operator = _s(req.get("operator"))
    values = [_s(v) for v in req.get("values") or []]
    if operator in ("In", "NotIn"):
        if not values:
            detail = "must be specified when `operator` is 'In' or 'NotIn'"
            errors.append(required((*path, "values"), detail))
    elif operator in ("Exists", "DoesNotExist"):
        if values:
            detail = "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
            errors.append(forbidden((*path, "values"), detail))
    elif operator in ("Gt", "Lt"):
        if len(values) != 1:
            detail = "must be specified single value when `operator` is 'Lt' or 'Gt'"
            errors.append(required((*path, "values"), detail))
    else:
        errors.append(
            invalid((*path, "operator"), as_json(operator), "not a valid selector operator")
        )
    errors += meta.label_name(_s(req.get("key")), (*path, "key"))
    if not allow_invalid:
        for i, value in enumerate(values):
            errors += [
                invalid((*path, "values", i), as_string(value), m) for m in names.label_value(value)
            ]
    return errors


def _node_field_requirement(req: Mapping[str, Any], path: Path) -> list[FieldError]:
    errors: list[FieldError] = []
    operator = _s(req.get("operator"))
    values = [_s(v) for v in req.get("values") or []]
    if operator in ("In", "NotIn"):
        if len(values) != 1:
            detail = (
                "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"
            )
            errors.append(required((*path, "values"), detail))
    else:
        errors.append(
            invalid((*path, "operator"), as_json(operator), "not a valid selector operator")
        )
    key = _s(req.get("key"))
    if key != "metadata.name":
        errors.append(invalid((*path, "key"), as_string(key), "not a valid field selector key"))
    else:
        for i, value in enumerate(values):
            errors += _dns_subdomain(value, (*path, "values", i))
    return errors


def _node_term(term: Mapping[str, Any], path: Path, allow_invalid: bool) -> list[FieldError]:
    errors: list[FieldError] = []
    for j, req in enumerate(_dicts(term.get("matchExpressions"))):
        errors += _node_requirement(req, (*path, "matchExpressions", j), allow_invalid)
    for j, req in enumerate(_dicts(term.get("matchFields"))):
        errors += _node_field_requirement(req, (*path, "matchFields", j))
    return errors


def _key_list(value: Any, path: Path, selector: Any) -> list[FieldError]:
    """``validateLabelKeys``: each key a label name; none without a selector."""
    keys = [_s(k) for k in value] if isinstance(value, list) else []
    if not keys:
        return []
    if not isinstance(selector, dict):
        return [forbidden(path, "must not be specified when labelSelector is not set")]
    return [e for i, key in enumerate(keys) for e in meta.label_name(key, (*path, i))]


def _label_keys(
    path: Path, matching: Any, mismatching: Any, owner: Mapping[str, Any]
) -> list[FieldError]:
    """``ValidateMatchLabelKeysAndMismatchLabelKeys`` on a term or constraint at ``path``
    whose selector has the keys merged in: a ``matchLabelKeys`` key found in the selector
    a second time (the merged requirement after one written) is at ``path[i]``, the
    index of the key (Go's path, without ``matchLabelKeys``)."""
    selector = owner.get("labelSelector")
    errors = _key_list(matching, (*path, "matchLabelKeys"), selector)
    errors += _key_list(mismatching, (*path, "mismatchLabelKeys"), selector)
    match_keys = [_s(k) for k in matching] if isinstance(matching, list) else []
    if isinstance(selector, dict):
        index = {key: i for i, key in enumerate(match_keys)}  # the last index of each
        labels = selector.get("matchLabels")
        seen = {str(k) for k in labels} if isinstance(labels, dict) else set()
        for requirement in _dicts(selector.get("matchExpressions")):
            key = _s(requirement.get("key"))
            if key in index and key in seen:
                detail = "exists in both matchLabelKeys and labelSelector"
                errors.append(invalid((*path, index[key]), as_string(key), detail))
            seen.add(key)
    mismatch = {_s(k) for k in mismatching} if isinstance(mismatching, list) else set()
    for i, key in enumerate(match_keys):
        if key in mismatch:
            detail = "exists in both matchLabelKeys and mismatchLabelKeys"
            errors.append(invalid((*path, "matchLabelKeys", i), as_string(key), detail))
    return errors


def _pod_affinity_term(term: Mapping[str, Any], path: Path) -> list[FieldError]:
    errors = meta.selector_errors(term.get("labelSelector"), (*path, "labelSelector"))
    errors += meta.selector_errors(term.get("namespaceSelector"), (*path, "namespaceSelector"))
    for namespace in term.get("namespaces") or []:
        errors += [
            invalid((*path, "namespace"), as_string(_s(namespace)), m)
            for m in meta.name_is_dns_label(_s(namespace), False)
        ]
    matching, mismatching = term.get("matchLabelKeys"), term.get("mismatchLabelKeys")
    errors += _label_keys(path, matching, mismatching, term)
    topology = _s(term.get("topologyKey"))
    if not topology:
        errors.append(required((*path, "topologyKey"), "can not be empty"))
    return errors + meta.label_name(topology, (*path, "topologyKey"))


def _weight(value: Any, path: Path) -> list[FieldError]:
    weight = _i(value)
    if weight <= 0 or weight > 100:
        return [invalid(path, as_number(weight), "must be in the range 1-100")]
    return []


def _pod_affinity(affinity: Mapping[str, Any], path: Path) -> list[FieldError]:
    errors: list[FieldError] = []
    required_terms = affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    for i, term in enumerate(_dicts(required_terms)):
        errors += _pod_affinity_term(
            term, (*path, "requiredDuringSchedulingIgnoredDuringExecution", i)
        )
    preferred = affinity.get("preferredDuringSchedulingIgnoredDuringExecution")
    for i, weighted in enumerate(_dicts(preferred)):
        at = (*path, "preferredDuringSchedulingIgnoredDuringExecution", i)
        errors += _weight(weighted.get("weight"), (*at, "weight"))
        weighted_term = weighted.get("podAffinityTerm")
        errors += _pod_affinity_term(
            weighted_term if isinstance(weighted_term, dict) else {}, (*at, "podAffinityTerm")
        )
    return errors


def _affinity(affinity: Any, path: Path) -> list[FieldError]:
    if not isinstance(affinity, dict):
        return []
    errors: list[FieldError] = []
    node = affinity.get("nodeAffinity")
    if isinstance(node, dict):
        at = (*path, "nodeAffinity")
        selector = node.get("requiredDuringSchedulingIgnoredDuringExecution")
        if selector is not None:
            selector = selector if isinstance(selector, dict) else {}
            terms_at = (*at, "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
            terms = _dicts(selector.get("nodeSelectorTerms"))
            if not terms:
                errors.append(required(terms_at, "must have at least one node selector term"))
            for i, term in enumerate(terms):
                errors += _node_term(term, (*terms_at, i), False)
        preferred = _dicts(node.get("preferredDuringSchedulingIgnoredDuringExecution"))
        for i, term in enumerate(preferred):
            term_at = (*at, "preferredDuringSchedulingIgnoredDuringExecution", i)
            errors += _weight(term.get("weight"), (*term_at, "weight"))
            preference = term.get("preference")
            preference = preference if isinstance(preference, dict) else {}
            errors += _node_term(preference, (*term_at, "preference"), True)
    for key in ("podAffinity", "podAntiAffinity"):
        if isinstance(affinity.get(key), dict):
            errors += _pod_affinity(affinity[key], (*path, key))
    return errors


_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def _tolerations(tolerations: list[dict[str, Any]], path: Path) -> list[FieldError]:
    errors: list[FieldError] = []
    for i, toleration in enumerate(tolerations):
        at = (*path, i)
        key = _s(toleration.get("key"))
        operator = _s(toleration.get("operator"))
        effect = _s(toleration.get("effect"))
        value = _s(toleration.get("value"))
        if key:
            errors += meta.label_name(key, (*at, "key"))
        if not key and operator != "Exists":
            detail = (
                'operator must be Exists when `key` is empty, which means "match all values'
                ' and all keys"'
            )
            errors.append(invalid((*at, "operator"), as_json(operator), detail))
        if toleration.get("tolerationSeconds") is not None and effect != "NoExecute":
            detail = "effect must be 'NoExecute' when `tolerationSeconds` is set"
            errors.append(invalid((*at, "effect"), as_json(effect), detail))
        if operator in ("Equal", ""):
            messages = names.label_value(value)
            if messages:
                errors.append(invalid((*at, "operator"), as_string(value), ";".join(messages)))
        elif operator == "Exists":
            if value:
                detail = "value must be empty when `operator` is 'Exists'"
                errors.append(invalid((*at, "operator"), as_string(value), detail))
        else:
            errors.append(not_supported((*at, "operator"), as_json(operator), ("Equal", "Exists")))
        if effect and effect not in _EFFECTS:
            errors.append(not_supported((*at, "effect"), as_json(effect), _EFFECTS))
    return errors


def _sloppy_ipv4(value: str) -> bool:
    """Go 1.16's IPv4 parser (``netutils.ParseIPSloppy``): leading zeros allowed."""
    parts = value.split(".")
    return len(parts) == 4 and all(p.isascii() and p.isdigit() and int(p) <= 255 for p in parts)


def _ip(value: str, path: Path) -> list[FieldError]:
    """``IsValidIPForLegacyField`` (StrictIPCIDRValidation is off in v1.34)."""
    valid = _sloppy_ipv4(value)
    if not valid and ":" in value and "%" not in value:
        try:
            ipaddress.IPv6Address(value)
            valid = True
        except ValueError:
            valid = False
    if valid:
        return []
    return [
        invalid(
            path, as_string(value), "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
        )
    ]


def _host_aliases(aliases: list[dict[str, Any]], path: Path) -> list[FieldError]:
    errors: list[FieldError] = []
    for i, alias in enumerate(aliases):
        errors += _ip(_s(alias.get("ip")), (*path, i, "ip"))
        for j, hostname in enumerate(alias.get("hostnames") or []):
            errors += _dns_subdomain(_s(hostname), (*path, i, "hostnames", j))
    return errors


def _dns_config(config: Any, policy: str, path: Path) -> list[FieldError]:
    if policy == "None":
        if config is None:
            return [required(path, "must provide `dnsConfig` when `dnsPolicy` is None")]
        if not (config or {}).get("nameservers"):
            detail = "must provide at least one DNS nameserver when `dnsPolicy` is None"
            return [required((*path, "nameservers"), detail)]
    if not isinstance(config, dict):
        return []
    errors: list[FieldError] = []
    servers = [_s(s) for s in config.get("nameservers") or []]
    if len(servers) > 3:
        detail = "must not have more than 3 nameservers"
        errors.append(invalid((*path, "nameservers"), as_json(servers), detail))
    for i, server in enumerate(servers):
        errors += _ip(server, (*path, "nameservers", i))
    searches = [_s(s) for s in config.get("searches") or []]
    if len(searches) > 32:
        detail = "must not have more than 32 search paths"
        errors.append(invalid((*path, "searches"), as_json(searches), detail))
    if len(" ".join(searches).encode()) > 2048:
        detail = "must not have more than 2048 characters (including spaces) in the search list"
        errors.append(invalid((*path, "searches"), as_json(searches), detail))
    for i, search in enumerate(searches):
        if search != ".":
            trimmed = search.removesuffix(".")
            errors += [
                invalid((*path, "searches", i), as_string(trimmed), m)
                for m in _subdomain_underscore(trimmed)
            ]
    for i, option in enumerate(_dicts(config.get("options"))):
        if not _s(option.get("name")):
            errors.append(required((*path, "options", i), "must not be empty"))
    return errors


def _subdomain_underscore(value: str) -> list[str]:
    import re

    label = "_?[a-z0-9]([-_a-z0-9]*[a-z0-9])?"
    fmt = label + "(\\." + label + ")*"
    messages = []
    if len(value.encode()) > 253:
        messages.append(names.max_len(253))
    if not re.fullmatch(fmt, value):
        msg = (
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters,"
            " '_', '-' or '.', and must start and end with an alphanumeric character"
        )
        messages.append(names.regex_error(msg, fmt, "example.com"))
    return messages


def _pod_security_context(context: Any, spec: Mapping[str, Any], path: Path) -> list[FieldError]:
    """``validatePodSpecSecurityContext``; ``shareProcessNamespace``, ``hostPID``,
    ``hostIPC`` and ``hostNetwork`` are the spec's own fields in v1."""
    if not isinstance(context, dict):
        return []
    errors: list[FieldError] = []
    for key in ("fsGroup", "runAsUser", "runAsGroup"):
        value = context.get(key)
        if value is not None and not 0 <= int(value) <= _INT32_MAX:
            errors.append(
                invalid((*path, key), as_number(int(value)), names.inclusive_range(0, _INT32_MAX))
            )
    for g, gid in enumerate(context.get("supplementalGroups") or []):
        if not 0 <= int(gid) <= _INT32_MAX:
            errors.append(
                invalid(
                    (*path, "supplementalGroups", g),
                    as_number(int(gid)),
                    names.inclusive_range(0, _INT32_MAX),
                )
            )
    if spec.get("shareProcessNamespace") and spec.get("hostPID"):
        detail = "ShareProcessNamespace and HostPID cannot both be enabled"
        errors.append(invalid((*path, "shareProcessNamespace"), as_number(True), detail))
    errors += _sysctls(context, spec, (*path, "sysctls"))
    policy = context.get("fsGroupChangePolicy")
    if policy is not None and _s(policy) not in ("Always", "OnRootMismatch"):
        errors.append(
            not_supported(
                (*path, "fsGroupChangePolicy"), as_json(policy), ("Always", "OnRootMismatch")
            )
        )
    errors += _seccomp(context.get("seccompProfile"), (*path, "seccompProfile"))
    errors += _app_armor(context.get("appArmorProfile"), (*path, "appArmorProfile"))
    groups = context.get("supplementalGroupsPolicy")
    if groups is not None and _s(groups) not in ("Merge", "Strict"):
        at = (*path, "supplementalGroupsPolicy")
        errors.append(not_supported(at, as_json(groups), ("Merge", "Strict")))
    change = context.get("seLinuxChangePolicy")
    if change is not None and _s(change) != "Recursive":
        # a new Pod with v1.34's default gates (SELinuxMount off): Recursive only
        at = (*path, "seLinuxChangePolicy")
        errors.append(not_supported(at, as_json(change), ("Recursive",)))
    return errors


def validate_pod_spec(
    spec: Mapping[str, Any], pod_name: str | None, path: Path, opts: PodOptions
) -> list[FieldError]:
    """``ValidatePodSpec`` of a defaulted v1 pod spec (``pod_name``: the Pod's, None in a
    template). The steps run in the API server's order, which is the order of the errors.

    A spec found valid is remembered by :func:`verdict_key`: the pod templates of many
    TrainJobs differ only where the checks read no more than that key keeps."""
    data = verdict_key(spec)
    key = None if data is None else (data, path, opts.resource_is_pod, opts.allow_privileged)
    if key is not None and key in _VALID_SPECS:
        return []
    errors = _validate_pod_spec(spec, path, opts)
    if key is not None and not errors:
        if len(_VALID_SPECS) >= _VALID_SPECS_LIMIT:
            _VALID_SPECS.clear()  # bounded; a render has few distinct templates
        _VALID_SPECS.add(key)
    return errors


def forget_valid_specs() -> None:
    """Forget the specs :func:`validate_pod_spec` found valid (a new process's memory)."""
    _VALID_SPECS.clear()


# the specs found valid, by (verdict_key, path, options); the keys are whole (a few KiB
# each: compared, not digested, so no two specs can share one), so they are bounded
_VALID_SPECS: set[tuple[bytes, Path, bool, bool]] = set()
_VALID_SPECS_LIMIT = 8192
_ANY_LABEL = "x"  # a valid DNS label
_ANY_VALUE = "x"  # a non-empty env value


def verdict_key(spec: Mapping[str, Any]) -> bytes | None:
    """``spec`` in bytes, keeping all :func:`validate_pod_spec` reads of it, and
    no more than it reads of the values that name one Pod or TrainJob:

    - a non-empty env ``value`` is only tested for being empty (``_value_from``);
    - the object a ``secret``, ``configMap`` or ``persistentVolumeClaim`` volume names
      too (``_source_errors``: the volume's own ``name`` is kept);
    - ``hostname`` and ``subdomain`` are only checked as DNS labels (``_pod_spec_names``),
      so a valid one is keyed as any other valid one.

    None when ``spec`` is not plain JSON-like data."""
    view = dict(spec)
    for key in ("hostname", "subdomain"):
        value = view.get(key)
        if isinstance(value, str) and value and not names.dns1123_label(value):
            view[key] = _ANY_LABEL
    for key in ("containers", "initContainers", "ephemeralContainers"):
        containers = view.get(key)
        if isinstance(containers, list):
            view[key] = [_container_view(c) for c in containers]
    if isinstance(view.get("volumes"), list):
        view["volumes"] = [_volume_view(v) for v in view["volumes"]]
    try:
        return marshal.dumps(view, 2)
    except ValueError:
        return None


def _container_view(container: Any) -> Any:
    env = container.get("env") if isinstance(container, dict) else None
    if not isinstance(env, list):
        return container
    view, changed = [], False
    for var in env:
        if type(var) is dict and type(var.get("value")) is str and var["value"] != "":
            view.append({**var, "value": _ANY_VALUE})
            changed = True
        else:
            view.append(var)
    return {**container, "env": view} if changed else container


# volume source -> the field naming its object, read only for being empty
_NAMED_SOURCES = (
    ("secret", "secretName"),
    ("configMap", "name"),
    ("persistentVolumeClaim", "claimName"),
)


def _volume_view(volume: Any) -> Any:
    if not isinstance(volume, dict):
        return volume
    for kind, key in _NAMED_SOURCES:
        source = volume.get(kind)
        if isinstance(source, dict) and isinstance(source.get(key), str) and source[key] != "":
            return {**volume, kind: {**source, key: _ANY_VALUE}}
    return volume


def _validate_pod_spec(spec: Mapping[str, Any], path: Path, opts: PodOptions) -> list[FieldError]:
    errors = _pod_spec_containers(spec, path, opts)
    errors += _pod_resources(spec, path)
    errors += _host_network(spec, path, opts)
    dns_policy = _s(spec.get("dnsPolicy"))
    errors += _pod_spec_policies(spec, dns_policy, path)
    errors += meta.labels(spec.get("nodeSelector"), (*path, "nodeSelector"))
    errors += _pod_security_context(spec.get("securityContext"), spec, (*path, "securityContext"))
    errors += _affinity(spec.get("affinity"), (*path, "affinity"))
    errors += _dns_config(spec.get("dnsConfig"), dns_policy, (*path, "dnsConfig"))
    errors += _pod_spec_gates(spec, path)
    errors += _topology_spread(
        _dicts(spec.get("topologySpreadConstraints")), (*path, "topologySpreadConstraints")
    )
    errors += _hostname_override(spec, path)
    errors += _pod_spec_names(spec, path)
    errors += _tolerations(_dicts(spec.get("tolerations")), (*path, "tolerations"))
    errors += _host_aliases(_dicts(spec.get("hostAliases")), (*path, "hostAliases"))
    errors += _pod_spec_priority(spec, path)
    return errors


def _pod_spec_containers(spec: Mapping[str, Any], path: Path, opts: PodOptions) -> list[FieldError]:
    """The grace period, the volumes, then the containers and init containers that mount them."""
    errors: list[FieldError] = []
    grace_value = spec.get("terminationGracePeriodSeconds")
    if grace_value is None:
        errors.append(required((*path, "terminationGracePeriodSeconds")))
    grace = None if grace_value is None else int(grace_value)
    security = spec.get("securityContext")
    security = security if isinstance(security, dict) else {}
    host_users = security.get("hostUsers") is None or bool(security.get("hostUsers"))
    volumes, volume_errors = _volumes(_dicts(spec.get("volumes")), (*path, "volumes"))
    errors += volume_errors
    containers = _dicts(spec.get("containers"))
    restart = _s(spec.get("restartPolicy"))
    errors += _containers(
        containers, volumes, grace, (*path, "containers"), host_users, opts, restart
    )
    errors += _init_containers(
        _dicts(spec.get("initContainers")),
        containers,
        volumes,
        grace,
        (*path, "initContainers"),
        host_users,
        opts,
        restart,
    )
    return errors


def _pod_spec_policies(spec: Mapping[str, Any], dns_policy: str, path: Path) -> list[FieldError]:
    """The restart policy and the DNS policy: required, one of the known values."""
    errors: list[FieldError] = []
    restart = _s(spec.get("restartPolicy"))
    if not restart:
        errors.append(required((*path, "restartPolicy")))
    elif restart not in ("Always", "OnFailure", "Never"):
        errors.append(
            not_supported(
                (*path, "restartPolicy"), as_json(restart), ("Always", "OnFailure", "Never")
            )
        )
    dns_policies = ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")
    if not dns_policy:
        errors.append(required((*path, "dnsPolicy")))
    elif dns_policy not in dns_policies:
        errors.append(not_supported((*path, "dnsPolicy"), as_json(dns_policy), dns_policies))
    return errors


def _pod_spec_gates(spec: Mapping[str, Any], path: Path) -> list[FieldError]:
    """Readiness gates' condition types; scheduling gates' names, each once."""
    errors: list[FieldError] = []
    for i, gate in enumerate(_dicts(spec.get("readinessGates"))):
        errors += _qualified_name(
            _s(gate.get("conditionType")), (*path, "readinessGates", i, "conditionType")
        )
    gates: set[str] = set()
    for i, gate in enumerate(_dicts(spec.get("schedulingGates"))):
        gate_name = _s(gate.get("name"))
        errors += _qualified_name(gate_name, (*path, "schedulingGates", i))
        if gate_name in gates:
            errors.append(duplicate((*path, "schedulingGates", i), as_string(gate_name)))
        gates.add(gate_name)
    return errors


def _pod_spec_names(spec: Mapping[str, Any], path: Path) -> list[FieldError]:
    """The service account and node names, the active deadline, the hostname and subdomain."""
    errors: list[FieldError] = []
    for key in ("serviceAccountName", "nodeName"):
        value = _s(spec.get(key))
        if value:
            errors += _dns_subdomain(value, (*path, key))
    deadline = spec.get("activeDeadlineSeconds")
    if deadline is not None and not 1 <= int(deadline) <= _INT32_MAX:
        detail = names.inclusive_range(1, _INT32_MAX)
        errors.append(invalid((*path, "activeDeadlineSeconds"), as_number(int(deadline)), detail))
    for key in ("hostname", "subdomain"):
        value = _s(spec.get(key))
        if value:
            errors += _dns_label(value, (*path, key))
    return errors


def _pod_spec_priority(spec: Mapping[str, Any], path: Path) -> list[FieldError]:
    """The priority and runtime class names and the preemption policy."""
    errors: list[FieldError] = []
    priority_class = _s(spec.get("priorityClassName"))
    if priority_class:
        errors += _dns_subdomain(priority_class, (*path, "priorityClassName"))
    runtime_class = spec.get("runtimeClassName")
    if runtime_class is not None:
        errors += _dns_subdomain(_s(runtime_class), (*path, "runtimeClassName"))
    preemption = spec.get("preemptionPolicy")
    if preemption is not None:
        supported = ("PreemptLowerPriority", "Never")
        if not _s(preemption):
            errors.append(required((*path, "preemptionPolicy")))
        elif _s(preemption) not in supported:
            errors.append(
                not_supported((*path, "preemptionPolicy"), as_json(preemption), supported)
            )
    return errors


def _host_network(spec: Mapping[str, Any], path: Path, opts: PodOptions) -> list[FieldError]:
    if not spec.get("hostNetwork"):
        return []
    errors: list[FieldError] = []
    for c, container in enumerate(_dicts(spec.get("containers"))):
        for p, port in enumerate(_dicts(container.get("ports"))):
            host, target = _i(port.get("hostPort")), _i(port.get("containerPort"))
            if (opts.resource_is_pod or host != 0) and host != target:
                errors.append(
                    invalid(
                        (*path, "containers", c, "ports", p, "hostPort"),
                        as_number(host),
                        "must match `containerPort` when `hostNetwork` is true",
                    )
                )
    return errors


def _hostname_override(spec: Mapping[str, Any], path: Path) -> list[FieldError]:
    override = spec.get("hostnameOverride")
    if override is None:
        return []
    errors = []
    at = (*path, "hostnameOverride")
    if spec.get("setHostnameAsFQDN"):
        errors.append(forbidden(at, "may not be specified when setHostnameAsFQDN is true"))
    if spec.get("hostNetwork"):
        errors.append(forbidden(at, "may not be specified when hostNetwork is true"))
    if len(_s(override).encode()) > 64:
        errors.append(too_long(at, 64))
    return errors + _dns_subdomain(_s(override), at)
