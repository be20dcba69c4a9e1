"""The pods Volcano's job controller would create for a Volcano Job, modelled from the
spec's reading of volcano-sh/volcano (``pkg/controllers/job/plugins/{env,svc,pytorch}``):
Volcano's controller is not a module the Go harness can build (only its ``apis`` module
is served by the module proxy). Facts modelled, each from spec §6.2-6.3:

* pod ``<job>-<task>-<i>``, hostname = pod name and subdomain = job name (svc plugin);
* env plugin: ``VK_TASK_INDEX`` and ``VC_TASK_INDEX`` = index within the task;
* svc plugin: ``VC_<TASK>_HOSTS`` (comma-joined ``<pod>.<job>``) and ``VC_<TASK>_NUM`` for
  every task in every container, and the ConfigMap mounted at ``/etc/volcano``;
* pytorch plugin: containerPort ``pytorchjob-port`` unless the port exists, and
  ``MASTER_ADDR=<job>-<master>-0.<job>``, ``MASTER_PORT``, ``WORLD_SIZE`` = master +
  worker replicas, ``RANK`` = 0 for the master, index + 1 for workers;
* mpi plugin (``--master``, ``--worker``, ``--port`` 22; the webhook adds ``ssh`` and
  ``svc``): ``MPI_HOST`` on the master task's containers (the worker hosts
  ``<job>-<worker>-<i>.<job>``, comma-joined), containerPort ``mpijob-port`` on every
  container; ssh plugin: the keys Secret mounted at ``--ssh-key-file-path`` (default
  ``/root/.ssh``, subPath ``.ssh``) in every container;
* tensorflow plugin (``--ps``, ``--worker``, ``--chief``, ``--evaluator``, ``--port`` 2222):
  ``TF_CONFIG`` in every container unless the job is one pod: cluster keys ``ps``,
  ``worker``, ``chief``, ``evaluator`` (omitted when empty) with ``<pod>.<job>:<port>``,
  ``task`` ``{type, index}``, no ``environment`` key;
* pod ``schedulerName`` from the job (default ``volcano``), ``priorityClassName`` from
  the job when the pod has none; a ``volumeClaimName`` volume mounted in every container.
"""

from __future__ import annotations

import copy
import json
from typing import Any


def _args(values: Any) -> dict[str, str]:
    out: dict[str, str] = {}
    for value in values or []:
        text = str(value)
        if text.startswith("--"):
            key, _, rest = text[2:].partition("=")
            out[key] = rest
    return out


def volcano_pods(job: dict[str, Any]) -> list[dict[str, Any]]:
    name = job["metadata"]["name"]
    namespace = job["metadata"].get("namespace") or "default"
    spec = job["spec"]
    plugins = spec.get("plugins") or {}
    if "svc" not in plugins and any(p in plugins for p in ("pytorch", "tensorflow", "mpi")):
        plugins = {**plugins, "svc": []}
    tasks = spec.get("tasks") or []
    if "mpi" in plugins and "ssh" not in plugins:
        plugins = {**plugins, "ssh": []}
    torch = _args(plugins.get("pytorch")) if "pytorch" in plugins else None
    mpi = _args(plugins.get("mpi")) if "mpi" in plugins else None
    tf = _args(plugins.get("tensorflow")) if "tensorflow" in plugins else None
    tf_roles = {((tf or {}).get(r) or r): r for r in ("ps", "worker", "chief", "evaluator")}
    tf_port = int((tf or {}).get("port") or 2222)
    mpi_master = (mpi or {}).get("master") or "master"
    mpi_worker = (mpi or {}).get("worker") or "worker"
    mpi_port = int((mpi or {}).get("port") or 22)
    ssh_path = _args(plugins.get("ssh")).get("ssh-key-file-path") or "/root/.ssh"
    master = (torch or {}).get("master") or "master"
    worker = (torch or {}).get("worker") or "worker"
    port = int((torch or {}).get("port") or 23456)
    counts = {t["name"]: int(t.get("replicas") or 0) for t in tasks}
    out: list[dict[str, Any]] = []
    for task in tasks:
        tname = task["name"]
        for index in range(int(task.get("replicas") or 0)):
            pod_name = f"{name}-{tname}-{index}"
            template = copy.deepcopy(task.get("template") or {})
            pspec = template.setdefault("spec", {})
            pspec.setdefault("restartPolicy", "Always")  # the pod default
            pspec.setdefault("schedulerName", spec.get("schedulerName") or "volcano")
            if spec.get("priorityClassName") and not pspec.get("priorityClassName"):
                pspec["priorityClassName"] = spec["priorityClassName"]
            if "svc" in plugins:
                pspec.setdefault("hostname", pod_name)
                pspec.setdefault("subdomain", name)
            for vindex, volume in enumerate(spec.get("volumes") or []):
                pspec.setdefault("volumes", []).append(
                    {
                        "name": f"v{vindex}",
                        "persistentVolumeClaim": {"claimName": volume.get("volumeClaimName")},
                    }
                )
                for c in pspec["containers"]:
                    c.setdefault("volumeMounts", []).append(
                        {"name": f"v{vindex}", "mountPath": volume.get("mountPath")}
                    )
            for container in pspec.get("containers") or []:
                env = container.setdefault("env", [])
                if "env" in plugins:
                    env += [
                        {"name": "VK_TASK_INDEX", "value": str(index)},
                        {"name": "VC_TASK_INDEX", "value": str(index)},
                    ]
                if "svc" in plugins:
                    for other in tasks:
                        upper = other["name"].upper().replace("-", "_")
                        hosts = ",".join(
                            f"{name}-{other['name']}-{i}.{name}"
                            for i in range(counts[other["name"]])
                        )
                        env += [
                            {"name": f"VC_{upper}_HOSTS", "value": hosts},
                            {"name": f"VC_{upper}_NUM", "value": str(counts[other["name"]])},
                        ]
                    container.setdefault("volumeMounts", []).append(
                        {"name": f"{name}-svc", "mountPath": "/etc/volcano"}
                    )
                if torch is not None and master in counts:
                    if not any(
                        int(p.get("containerPort") or 0) == port
                        for p in container.get("ports") or []
                    ):
                        container.setdefault("ports", []).append(
                            {"name": "pytorchjob-port", "containerPort": port}
                        )
                    env += [
                        {"name": "MASTER_ADDR", "value": f"{name}-{master}-0.{name}"},
                        {"name": "MASTER_PORT", "value": str(port)},
                        {
                            "name": "WORLD_SIZE",
                            "value": str(counts.get(master, 0) + counts.get(worker, 0)),
                        },
                    ]
                    if tname == master:
                        env.append({"name": "RANK", "value": "0"})
                    elif tname == worker:
                        env.append({"name": "RANK", "value": str(index + 1)})
            if "svc" in plugins:
                pspec.setdefault("volumes", []).append(
                    {"name": f"{name}-svc", "configMap": {"name": f"{name}-svc"}}
                )
            if "ssh" in plugins:
                pspec.setdefault("volumes", []).append(
                    {"name": f"{name}-ssh", "secret": {"secretName": f"{name}-ssh"}}
                )
                for c in [*pspec.get("containers", []), *pspec.get("initContainers", [])]:
                    c.setdefault("volumeMounts", []).append(
                        {"name": f"{name}-ssh", "mountPath": ssh_path, "subPath": ".ssh"}
                    )
            single = len(tasks) == 1 and sum(counts.values()) == 1
            if tf is not None and not single and tname in tf_roles:
                cluster = {
                    tf_roles[t["name"]]: [
                        f"{name}-{t['name']}-{i}.{name}:{tf_port}" for i in range(counts[t["name"]])
                    ]
                    for t in tasks
                    if t["name"] in tf_roles and counts[t["name"]] > 0
                }
                config = {"cluster": cluster, "task": {"type": tf_roles[tname], "index": index}}
                for c in pspec.get("containers") or []:
                    c.setdefault("env", []).append(
                        {"name": "TF_CONFIG", "value": json.dumps(config, separators=(",", ":"))}
                    )
            if mpi is not None:
                for c in pspec.get("containers") or []:
                    ports = c.get("ports") or []
                    if not any(int(p.get("containerPort") or 0) == mpi_port for p in ports):
                        c.setdefault("ports", []).append(
                            {"name": "mpijob-port", "containerPort": mpi_port}
                        )
                    if tname == mpi_master:
                        workers = counts.get(mpi_worker, 0)
                        hosts = ",".join(f"{name}-{mpi_worker}-{i}.{name}" for i in range(workers))
                        c.setdefault("env", []).append({"name": "MPI_HOST", "value": hosts})
            annotations = {"scheduling.k8s.io/group-name": f"{name}-<uid>"}
            out.append(
                {
                    "metadata": {
                        "name": pod_name,
                        "namespace": namespace,
                        "annotations": annotations,
                    },
                    "spec": pspec,
                }
            )
    return out
