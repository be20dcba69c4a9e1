"""Reuse a runtime that fits: the pinned upstream runtimes (the Trainer module's
``manifests/base/runtimes``) and the runtimes among the inputs.

A runtime C fits a job when the dedicated runtime R the migration built and C differ
only in what a TrainJob may override: the trainer container's image, command, args,
env and resources (``trainer.*``) and ``mlPolicy.numNodes`` (``trainer.numNodes``).
Then the TrainJob references C and carries those fields; otherwise R is written, with
the differences from the closest candidate as the reason."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq

from compiler.errors import SetupError
from compiler.migrate.common import ANCESTOR, differing_paths
from compiler.migrate.report import Diagnostic, JobReport
from compiler.migrate.source import TRAINER, read_sources
from compiler.upstream.versions import DEFAULT_TRAINER_VERSION

OVERRIDABLE = ("image", "command", "args", "env", "resources")
_TRAINER_FIELD = {"resources": "resourcesPerNode"}


@dataclass(frozen=True)
class Candidate:
    kind: str
    name: str
    namespace: str
    spec: dict[str, Any]
    origin: str  # "upstream <file>" or the input file
    path: str = ""  # the file that holds it


def upstream_candidates(version: str = DEFAULT_TRAINER_VERSION) -> list[Candidate]:
    """The runtimes Trainer ``version`` ships (``manifests/base/runtimes``): reused when
    one fits."""
    try:
        from compiler.upstream.artifacts import upstream

        root = upstream(version).path("manifests/base/runtimes")
    except SetupError:
        return []
    out: list[Candidate] = []
    for path in sorted(Path(root).glob("*.yaml")):
        if path.name == "kustomization.yaml":
            continue
        for obj in read_sources([str(path)]):
            if obj.api_version == TRAINER and obj.kind in (
                "ClusterTrainingRuntime",
                "TrainingRuntime",
            ):
                out.append(
                    Candidate(
                        obj.kind,
                        obj.name,
                        "",
                        plain(obj.data.get("spec")),
                        f"upstream {path.name}",
                        str(path),
                    )
                )
    return out


def plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def _without_ports(spec: dict[str, Any], ports: list[tuple[str, int]]) -> dict[str, Any]:
    """``spec`` without the given ports on the trainer container."""
    out = copy.deepcopy(spec)
    for rjob in ((out.get("template") or {}).get("spec") or {}).get("replicatedJobs") or []:
        labels = ((rjob.get("template") or {}).get("metadata") or {}).get("labels") or {}
        if labels.get(ANCESTOR) != "trainer":
            continue
        pod = ((rjob.get("template") or {}).get("spec") or {}).get("template") or {}
        for container in (pod.get("spec") or {}).get("containers") or []:
            if container.get("name") == "node" and container.get("ports"):
                container["ports"] = [
                    p
                    for p in container["ports"]
                    if (p.get("name"), p.get("containerPort")) not in ports
                ]
    return out


def _trainer_container(spec: dict[str, Any]) -> dict[str, Any] | None:
    for rjob in ((spec.get("template") or {}).get("spec") or {}).get("replicatedJobs") or []:
        labels = ((rjob.get("template") or {}).get("metadata") or {}).get("labels") or {}
        if labels.get(ANCESTOR) == "trainer":
            pod = ((rjob.get("template") or {}).get("spec") or {}).get("template") or {}
            for container in (pod.get("spec") or {}).get("containers") or []:
                if container.get("name") == "node":
                    return dict(container)
    return None


def _normalised(spec: dict[str, Any]) -> Any:
    out = copy.deepcopy(spec)
    policy = out.get("mlPolicy") or {}
    policy.pop("numNodes", None)
    for key, value in list(policy.items()):
        if value == {}:
            policy[key] = {"(set)": True}  # an ML policy source is set even when empty
    out = _strip_empty(out)
    for rjob in ((out.get("template") or {}).get("spec") or {}).get("replicatedJobs") or []:
        rjob.setdefault("replicas", 1)
        job_spec = (rjob.get("template") or {}).get("spec") or {}
        if job_spec.get("backoffLimit") == 6:
            del job_spec["backoffLimit"]  # the Job's default
        pod = ((rjob.get("template") or {}).get("spec") or {}).get("template") or {}
        pspec = pod.get("spec") or {}
        if pspec.get("restartPolicy") == "OnFailure":
            del pspec["restartPolicy"]  # JobSet's default
        labels = ((rjob.get("template") or {}).get("metadata") or {}).get("labels") or {}
        if labels.get(ANCESTOR) == "trainer":
            for container in pspec.get("containers") or []:
                if container.get("name") == "node":
                    for key in OVERRIDABLE:
                        container.pop(key, None)
    return _strip_empty(out)


def _strip_empty(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_empty(v) for k, v in value.items() if v not in (None, {}, [])}
    if isinstance(value, list):
        return [_strip_empty(v) for v in value]
    return value


def choose(
    runtime: CommentedMap,
    trainjob: CommentedMap,
    candidates: list[Candidate],
    report: JobReport | None = None,
) -> tuple[Candidate | None, str]:
    """The candidate runtime that fits, or None and why the dedicated one is written.

    A port the v1 defaulter added (``pytorchjob-port`` ...) only documents the pod: a
    runtime without it still fits, and the report then says the port is not declared."""
    spec = plain(runtime["spec"])
    if "mpi" in (spec.get("mlPolicy") or {}):
        return None, "dedicated: the MPI launcher and worker templates live in the runtime"
    defaulted = list(report.defaulted_ports) if report is not None else []
    mine = _normalised(_without_ports(spec, defaulted))
    namespace = str(trainjob["metadata"]["namespace"])
    best: tuple[int, Candidate, list[str]] | None = None
    for candidate in candidates:
        if candidate.kind == "TrainingRuntime" and candidate.namespace != namespace:
            continue
        if _trainer_container(candidate.spec) is None:
            continue
        theirs = _normalised(_without_ports(candidate.spec, defaulted))
        paths = differing_paths(mine, theirs)
        if not paths:
            _point(trainjob, runtime, candidate)
            declared = _trainer_container(candidate.spec) or {}
            named = {(p.get("name"), p.get("containerPort")) for p in declared.get("ports") or []}
            if report is not None:
                for name, number in [p for p in defaulted if p not in named]:
                    report.diagnostics = [d for d in report.diagnostics if d.code != "V1_PORT_KEPT"]
                    report.add(
                        Diagnostic(
                            "V1_PORT_NOT_DECLARED",
                            "info",
                            "",
                            f"the reused runtime does not declare the port v1 defaulted ({name} "
                            f"{number}); a containerPort only documents the pod, the process can "
                            "still listen on it",
                            action="dropped",
                            covers=(f"port:main:{number}",),
                        )
                    )
            return (
                candidate,
                f"{candidate.kind} {candidate.name} ({candidate.origin}) is equivalent: the TrainJob overrides image, command, args, env and resources",
            )
        if best is None or len(paths) < best[0]:
            best = (len(paths), candidate, paths)
    if best is None:
        return (
            None,
            "dedicated: no runtime among the inputs or upstream has a trainer container node",
        )
    _, candidate, paths = best
    shown = ", ".join(paths[:4]) + (", ..." if len(paths) > 4 else "")
    return (
        None,
        f"dedicated: the closest runtime, {candidate.kind} {candidate.name} ({candidate.origin}), differs at {shown}",
    )


def _point(trainjob: CommentedMap, runtime: CommentedMap, candidate: Candidate) -> None:
    spec = trainjob["spec"]
    spec["runtimeRef"] = CommentedMap(
        [("apiGroup", "trainer.kubeflow.org"), ("kind", candidate.kind), ("name", candidate.name)]
    )
    container = _trainer_container_node(runtime)
    trainer = spec["trainer"]
    for key in OVERRIDABLE:
        if key not in container:
            continue
        target = _TRAINER_FIELD.get(key, key)
        if key == "env":
            merged = CommentedSeq([*container["env"], *(trainer.get("env") or [])])
            trainer["env"] = merged
        else:
            trainer[target] = container[key]
    order = ("image", "command", "args", "numNodes", "numProcPerNode", "resourcesPerNode", "env")
    spec["trainer"] = CommentedMap(
        [(k, trainer[k]) for k in order if k in trainer]
        + [(k, v) for k, v in trainer.items() if k not in order]
    )


def _trainer_container_node(runtime: CommentedMap) -> CommentedMap:
    for rjob in runtime["spec"]["template"]["spec"]["replicatedJobs"]:
        labels = ((rjob.get("template") or {}).get("metadata") or {}).get("labels") or {}
        if labels.get(ANCESTOR) == "trainer":
            for container in rjob["template"]["spec"]["template"]["spec"]["containers"]:
                if container.get("name") == "node":
                    return container  # type: ignore[no-any-return]
    return CommentedMap()
