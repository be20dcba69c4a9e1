"""Kinds whose replica types are one group of peers (PyTorch Master+Worker, XGBoost,
JAX, Paddle collective, TF workers): merged into the one replicated job ``node``, the
master (rank 0) first, so v1 pod ``<type>-<i>`` becomes completion index ``rank``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq

from compiler.migrate.common import (
    Job,
    Kind,
    ReplicatedJob,
    Runtime,
    check_metadata,
    cmap,
    common_notes,
    dedicated_runtime_ref,
    differing_paths,
    hardcoded_addresses,
    name_length,
    normalise_types,
    pod_template,
    port_of,
    refuse,
    replicas_of,
    restart_policy,
    run_policy,
    runtime_object,
    strip_for_compare,
    trainjob_object,
    trainjob_run_fields,
    webhook_checks,
)


@dataclass
class Peers:
    """What a kind's hooks see: the merged group."""

    job: Job
    kind: Kind
    specs: dict[str, dict[str, Any]]
    total: int
    pod: CommentedMap
    main_index: int
    runtime: Runtime
    trainer: CommentedMap = field(default_factory=CommentedMap)
    env: CommentedSeq = field(default_factory=CommentedSeq)

    def host(self, index: int) -> str:
        """The v2 address of the pod with completion index ``index``."""
        return f"{self.job.name}-node-0-{index}.{self.job.name}"

    def port(self, rtype: str) -> int:
        return port_of(self.specs.get(rtype), self.kind.main, self.kind.port_name, self.kind.port)

    @property
    def sidecars(self) -> list[str]:
        containers = (self.pod.get("spec") or {}).get("containers") or []
        return [str(c.get("name")) for i, c in enumerate(containers) if i != self.main_index]

    def compat(self, *variables: CommentedMap) -> None:
        if not self.job.options.compat_env:
            names = ", ".join(str(v["name"]) for v in variables)
            self.job.diag(
                "COMPAT_ENV_OFF",
                "warning",
                "",
                f"--no-compat-env: v1 variables {names} are not set",
                action="dropped",
                covers=tuple(f"env:main:{v['name']}" for v in variables),
            )
            return
        for variable in variables:
            self.env.append(variable)
        names = ", ".join(str(v["name"]) for v in variables)
        self.job.diag(
            "COMPAT_ENV_ADDED",
            "info",
            "",
            f"v1 variables kept for code that reads them: {names} (values use v2 addresses; correct with one process per pod, as in v1)",
            target="TrainJob.spec.trainer.env",
            action="shimmed",
        )


def migrate_peers(
    job: Job,
    kind: Kind,
    policy: str | None,
    hook: Callable[[Peers], None],
    *,
    framework: str | None = None,
    v1_env_everywhere: bool = True,
    pre: Callable[[Job, dict[str, dict[str, Any]]], None] | None = None,
) -> list[CommentedMap]:
    webhook_checks(job, kind)
    job.raise_problems()
    check_metadata(job)
    specs = normalise_types(job, kind)
    if pre is not None:
        pre(job, specs)
    base = f"spec.{kind.replica_field}"
    if not specs:
        # the webhook refuses only a missing map; an empty one was accepted and ran nothing
        refuse(
            job,
            "NO_REPLICAS",
            base,
            "no replica types: v1 accepted the job and created no pods; a TrainJob runs at least one node",
            workaround="add the replica types the job runs, or drop the job",
        )
        return []
    total = sum(replicas_of(s) for s in specs.values())
    primary = _merge_templates(job, kind, specs)
    for rtype, rspec in specs.items():
        path = f"{base}[{rtype}]"
        if "replicas" in rspec:
            job.mapped(f"{path}.replicas", "TrainJob.spec.trainer.numNodes (summed)")
        hardcoded_addresses(
            job,
            rspec.get("template") or {},
            f"{path}.template",
            "|".join(t.lower() for t in kind.types),
        )
    policies, chosen = _restart_policies(job, kind, specs, primary)
    pod, main_index = pod_template(
        job,
        specs[primary].get("template"),
        f"{base}[{primary}].template",
        kind.main,
        defaulted_port=(
            kind.port_name,
            port_of(specs[primary], kind.main, kind.port_name, kind.port),
        ),
    )
    pod["spec"]["restartPolicy"] = chosen[0]
    ml_policy = cmap(("numNodes", total))
    if policy is not None:
        ml_policy[policy] = CommentedMap()
    runtime = Runtime(
        ml_policy,
        [ReplicatedJob("node", pod, ancestor=True)],
        total_pods=total,
        exit_code=chosen[1],
    )
    peers = Peers(job, kind, specs, total, pod, main_index, runtime)
    peers.trainer["numNodes"] = total
    run_policy(job, policies, runtime)  # fills runtime; TrainJob spec below
    if not job.report.errors:
        hook(peers)
    common_notes(job, peers.sidecars, v1_env_everywhere)
    name_length(job, [("node", total)])
    spec = cmap(
        (
            "runtimeRef",
            dedicated_runtime_ref(job),
        )
    )
    if peers.env:
        peers.trainer["env"] = peers.env
    spec["trainer"] = peers.trainer
    trainjob_run_fields(job, spec)
    if job.report.errors:
        return []
    return [runtime_object(job, runtime, framework or kind.framework), trainjob_object(job, spec)]


def _merge_templates(job: Job, kind: Kind, specs: dict[str, dict[str, Any]]) -> str:
    """The replica type whose template all pods run (Worker, else the first): the
    others must be equal to it, or ``--merge-template`` says which one wins."""
    base = f"spec.{kind.replica_field}"
    primary = "Worker" if "Worker" in specs else next(iter(specs))
    reference = strip_for_compare(_renamed(specs[primary].get("template") or {}, kind.main))
    for rtype, rspec in specs.items():
        if rtype == primary:
            continue
        other = strip_for_compare(_renamed(rspec.get("template") or {}, kind.main))
        paths = differing_paths(reference, other)
        if paths:
            choice = job.options.merge_template
            job.diag(
                "MASTER_WORKER_TEMPLATE_MISMATCH",
                "warning" if choice else "error",
                f"{base}[{rtype}].template",
                f"the {rtype} and {primary} templates differ at {', '.join(paths)}; v2 runs one template for all pods",
                action="approximated" if choice else "rejected",
                workaround="make the templates equal, or pass --merge-template worker|master",
                decide=True,
                covers=("*",) if not choice else _covers(paths),
            )
            if choice == "master" and rtype == "Master":
                primary = rtype
        job.mapped(
            f"{base}[{rtype}].template", f"merged into the {primary} template (replicated job node)"
        )
    return primary


def _restart_policies(
    job: Job, kind: Kind, specs: dict[str, dict[str, Any]], primary: str
) -> tuple[list[str], tuple[str, bool]]:
    """v1's restart policy of each replica type, and the primary's as a pod policy
    (with whether it is ExitCode): all pods use the primary's."""
    base = f"spec.{kind.replica_field}"
    policies: list[str] = []
    chosen: tuple[str, bool] | None = None
    for rtype, rspec in specs.items():
        result = restart_policy(
            job, f"{base}[{rtype}].restartPolicy", rspec.get("restartPolicy"), kind.restart
        )
        policies.append(rspec.get("restartPolicy") or kind.restart)
        if rtype == primary:
            chosen = result
    assert chosen is not None
    if len(set(policies)) > 1:
        job.diag(
            "RESTART_POLICY_MERGED",
            "warning",
            f"{base}",
            f"the replica types restart differently ({', '.join(policies)}); all pods use the {primary}'s",
            action="approximated",
        )
    return policies, chosen


def _covers(paths: list[str]) -> tuple[str, ...]:
    """Difference keys of the template paths that differ (``spec.containers[0].image``
    -> ``image:*``)."""
    out: list[str] = []
    for path in paths:
        parts = path.replace("[", ".[").split(".")
        if parts[:2] == ["spec", "containers"] and len(parts) > 3:
            out.append(f"{parts[3]}:*")
        elif parts[0] == "spec" and len(parts) > 1:
            out.append("initContainer:*" if parts[1] == "initContainers" else f"pod:{parts[1]}")
        else:
            out.append("label:*")
    return tuple(sorted(set(out)))


def _renamed(template: dict[str, Any], main: str) -> dict[str, Any]:
    import copy

    out = copy.deepcopy(template)
    for container in (out.get("spec") or {}).get("containers") or []:
        if container.get("name") == main:
            container["name"] = "node"
    return out
