"""What the training process sees, on both sides, and how the two are compared.

v1 side: the pods the v1 operator builds (the Go harness, ``oracle/``), or for Volcano
Jobs the spec's model of Volcano's plugins (``volcano_model.py``).
v2 side: the JobSet trainc renders from the migrated TrainJob, expanded into pods as
the Job and JobSet controllers would: one pod per (replicated job, job index, completion
index), hostname ``<jobset>-<rjob>-<jobIndex>-<podIndex>``, subdomain the JobSet name,
annotation ``batch.kubernetes.io/job-completion-index`` and env ``JOB_COMPLETION_INDEX``.

Each pod gets a *logical id* (``rank-0``, ``launcher``, ``worker-1``): the pod of the
other side it stands for. Addresses in env values and files are rewritten to
``@<logical id>`` (every DNS form that resolves to the pod), so ``mnist-master-0`` and
``mnist-node-0-0.mnist`` compare equal. The comparison yields difference keys
(``env:main:PET_MASTER_PORT@rank-1``); each must be covered by the job's report.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

INDEX_ANNOTATION = "batch.kubernetes.io/job-completion-index"


@dataclass
class Pod:
    logical: str
    names: list[str]  # every DNS name that reaches this pod
    spec: dict[str, Any]
    annotations: dict[str, str] = field(default_factory=dict)
    main: str = ""  # the main container's name on this side
    index: int | None = None  # completion index (v2)


def v2_pods(jobset: dict[str, Any], logical_of: Any) -> list[Pod]:
    name = jobset["metadata"]["name"]
    namespace = jobset["metadata"].get("namespace") or "default"
    subdomain = ((jobset["spec"].get("network") or {}).get("subdomain")) or name
    out: list[Pod] = []
    for rjob in jobset["spec"]["replicatedJobs"]:
        job_spec = rjob["template"]["spec"]
        count = int(job_spec.get("parallelism") or 1)
        for j in range(int(rjob.get("replicas") or 1)):
            for i in range(count):
                host = f"{name}-{rjob['name']}-{j}-{i}"
                fqdn = f"{host}.{subdomain}"
                names = [fqdn, f"{fqdn}.{namespace}.svc", f"{fqdn}.{namespace}.svc.cluster.local"]
                spec = job_spec["template"].get("spec") or {}
                annotations = dict(
                    (job_spec["template"].get("metadata") or {}).get("annotations") or {}
                )
                annotations[INDEX_ANNOTATION] = str(i)
                out.append(Pod(logical_of(rjob["name"], i), names, spec, annotations, "node", i))
    return out


def v1_pods(
    pods: list[dict[str, Any]], namespace: str, job: str, logical_of: Any, main_of: Any
) -> list[Pod]:
    out: list[Pod] = []
    for pod in pods:
        meta = pod.get("metadata") or {}
        spec = pod.get("spec") or {}
        name = str(meta.get("name"))
        hostname = spec.get("hostname") or name
        names = [
            name,
            f"{name}.{namespace}.svc",
            f"{name}.{namespace}.svc.cluster.local",
            f"{name}.{namespace}",
        ]
        if spec.get("subdomain"):
            sub = spec["subdomain"]
            names += [
                f"{hostname}.{sub}",
                f"{hostname}.{sub}.{namespace}.svc",
                f"{hostname}.{sub}.{namespace}.svc.cluster.local",
            ]
        out.append(
            Pod(
                logical_of(name),
                names,
                spec,
                dict(meta.get("annotations") or {}),
                main_of(name, spec),
            )
        )
    return out


class Addresses:
    """Rewrites every name of every pod (both sides) to ``@<logical>``."""

    def __init__(self, pods: list[Pod]) -> None:
        table: dict[str, str] = {}
        for pod in pods:
            for name in pod.names:
                table[name] = f"@{pod.logical}"
        keys = sorted(table, key=len, reverse=True)
        self.table = table
        self.pattern = (
            re.compile(
                r"(?<![A-Za-z0-9.-])("
                + "|".join(re.escape(k) for k in keys)
                + r")(?![A-Za-z0-9-]|\.[A-Za-z0-9])"
            )
            if keys
            else None
        )

    def __call__(self, text: str) -> str:
        if self.pattern is None:
            return text
        return self.pattern.sub(lambda m: self.table[m.group(1)], text)


def resolved_env(container: dict[str, Any], pod: Pod, v2: bool) -> dict[str, str]:
    env: dict[str, str] = {}
    if v2:
        env["JOB_COMPLETION_INDEX"] = str(pod.index)
    for entry in container.get("env") or []:
        name = entry["name"]
        if "valueFrom" in entry:
            source = entry["valueFrom"]
            field_ref = (source.get("fieldRef") or {}).get("fieldPath")
            if field_ref and field_ref.startswith("metadata.annotations["):
                key = field_ref[len("metadata.annotations['") : -2]
                env[name] = pod.annotations.get(key, "")
            elif field_ref:
                env[name] = f"<fieldRef {field_ref}>"
            else:
                env[name] = f"<{sorted(source)[0]}>"
            continue
        value = str(entry.get("value") or "")
        value = re.sub(
            r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", lambda m: env.get(m.group(1), m.group(0)), value
        )
        env[name] = value
    return env


SHIM_EXEC = '; exec "$0" "$@"'


def unshim(container: dict[str, Any], index: int | None) -> dict[str, Any]:
    """A container whose command is the TF_CONFIG shim (``/bin/sh -c 'export
    TF_CONFIG=...; exec "$0" "$@"' CMD...``), as its process sees it: the shell is run
    (with JOB_COMPLETION_INDEX as Kubernetes sets it) up to the exec to learn TF_CONFIG,
    and the command is what it execs."""
    import subprocess

    command = [str(c) for c in container.get("command") or []]
    if len(command) < 4 or command[:2] != ["/bin/sh", "-c"] or not command[2].endswith(SHIM_EXEC):
        return container
    script = command[2][: -len(SHIM_EXEC)] + '; printf %s "$TF_CONFIG"'
    done = subprocess.run(
        ["/bin/sh", "-c", script],
        env={"JOB_COMPLETION_INDEX": str(index), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    )
    out = dict(container)
    out["command"] = command[3:]
    out["env"] = [*(container.get("env") or []), {"name": "TF_CONFIG", "value": done.stdout}]
    return out


def container_map(pod: Pod) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for container in pod.spec.get("containers") or []:
        if pod.index is not None:
            container = unshim(container, pod.index)
        key = "main" if container.get("name") == pod.main else str(container.get("name"))
        out[key] = container
    return out


def _quantity(value: Any) -> str:
    from compiler.kube.quantity import canonical_quantity

    try:
        return canonical_quantity(str(value))
    except Exception:
        return str(value)


def _resources(container: dict[str, Any]) -> dict[str, dict[str, str]]:
    resources = container.get("resources") or {}
    return {
        group: {k: _quantity(v) for k, v in (resources.get(group) or {}).items()}
        for group in ("requests", "limits")
        if resources.get(group)
    }


POD_FIELDS = (
    "serviceAccountName",
    "nodeSelector",
    "tolerations",
    "affinity",
    "hostNetwork",
    "securityContext",
    "schedulerName",
    "priorityClassName",
    "dnsConfig",
    "dnsPolicy",
    "imagePullSecrets",
    "runtimeClassName",
)


def compare_pods(v1: Pod, v2: Pod, addresses: Addresses) -> list[str]:
    """Difference keys between two pods standing for each other."""
    out: list[str] = []
    a, b = container_map(v1), container_map(v2)
    for name in sorted(set(a) | set(b)):
        if name not in a or name not in b:
            out.append(f"container:{name}")
            continue
        out += _compare_containers(name, a[name], b[name], v1, v2, addresses)
    inits_a = {c.get("name") for c in v1.spec.get("initContainers") or []}
    inits_b = {c.get("name") for c in v2.spec.get("initContainers") or []}
    out += [f"initContainer:{n}" for n in sorted(inits_a ^ inits_b)]
    if (v1.spec.get("restartPolicy") or "OnFailure") != (
        v2.spec.get("restartPolicy") or "OnFailure"
    ):
        out.append("restartPolicy")
    for key in POD_FIELDS:
        if _norm(v1.spec.get(key)) != _norm(v2.spec.get(key)):
            out.append(f"pod:{key}")
    return out


def _value(text: str | None) -> Any:
    """An env value as the process reads it: JSON documents (TF_CONFIG) compared parsed,
    so key order does not count."""
    import json

    if text and text.startswith("{"):
        try:
            return json.loads(text)
        except ValueError:
            return text
    return text


def _norm(value: Any) -> Any:
    if value in (None, {}, [], False, ""):
        return None
    return value


def _compare_containers(
    name: str, a: dict[str, Any], b: dict[str, Any], pa: Pod, pb: Pod, addresses: Addresses
) -> list[str]:
    out: list[str] = []
    for key in ("image", "workingDir"):
        if a.get(key) != b.get(key):
            out.append(f"{key}:{name}")
    for key in ("command", "args"):
        if [addresses(str(x)) for x in a.get(key) or []] != [
            addresses(str(x)) for x in b.get(key) or []
        ]:
            out.append(f"{key}:{name}")
    if _resources(a) != _resources(b):
        out.append(f"resources:{name}")
    env_a = {k: addresses(v) for k, v in resolved_env(a, pa, False).items()}
    env_b = {k: addresses(v) for k, v in resolved_env(b, pb, True).items()}
    for var in sorted(set(env_a) | set(env_b)):
        if _value(env_a.get(var)) != _value(env_b.get(var)):
            out.append(f"env:{name}:{var}")
    ports_a = {int(p.get("containerPort")) for p in a.get("ports") or []}
    ports_b = {int(p.get("containerPort")) for p in b.get("ports") or []}
    out += [f"port:{name}:{p}" for p in sorted(ports_a ^ ports_b)]
    mounts_a = _mounts(a, pa)
    mounts_b = _mounts(b, pb)
    out += [
        f"mount:{name}:{m}"
        for m in sorted(set(mounts_a) | set(mounts_b))
        if mounts_a.get(m) != mounts_b.get(m)
    ]
    return out


def _mounts(container: dict[str, Any], pod: Pod) -> dict[str, str]:
    """mountPath -> what is mounted there (the volume's source, not its name)."""
    volumes = {v.get("name"): v for v in pod.spec.get("volumes") or []}
    out: dict[str, str] = {}
    for mount in container.get("volumeMounts") or []:
        volume = volumes.get(mount.get("name")) or {}
        kinds = sorted(k for k in volume if k != "name")
        source = kinds[0] if kinds else "missing"
        detail = volume.get(source) or {}
        what = detail.get("claimName") or detail.get("path") or detail.get("medium") or ""
        out[str(mount.get("mountPath"))] = (
            f"{source}:{what}:{mount.get('subPath', '')}:{bool(mount.get('readOnly'))}"
        )
    return out


def env_of(pod: Pod, container: str, v2: bool) -> dict[str, str]:
    return resolved_env(container_map(pod)[container], pod, v2)
