"""The Kueue stages (compiler.queue): delivery never bypasses a queue, and ``check`` says
what the cluster's Kueue will say about each queued TrainJob.

* :func:`queue_delivery_problems` (part of the cluster checks): a TrainJob that names a
  Kueue queue, delivered ``resolved`` to a cluster that runs Kueue without the JobSet
  opt-in, is an error (rule ``kueue``) at its queue label;
* :func:`queue_jobsets` (after the output overlays): with ``kueue: {jobSets: true}`` the
  JobSets of queued TrainJobs go out queue-labelled and suspended, for Kueue's JobSet
  integration;
* :func:`check_queues` (``trainc check``): the queue setup among the inputs (Kueue objects
  the API server refuses are input errors), each queued TrainJob's Workload as the
  cluster's Kueue computes it, the admissibility verdict (findings of rule ``kueue``), and
  a warning when the Trainer release Kueue embeds computes other requests than the
  cluster's Trainer.
"""

from __future__ import annotations

from dataclasses import replace

from compiler.errors import Finding, Problem
from compiler.model.build import Build
from compiler.model.objects import TrainJobSummary
from compiler.model.plan import BuildPlan, ClusterTarget
from compiler.queue.assign import format_amount
from compiler.queue.delivery import bypass_problem, for_jobset_integration
from compiler.queue.impact import ImpactRow, Usage, queue_usage, quota_impact
from compiler.queue.objects import QueueSetup, queue_setup
from compiler.queue.verdict import (
    QUEUE_LABEL,
    RULE,
    QueuedJob,
    missing_flavors,
    queue_name,
    queue_problems,
)
from compiler.queue.workload import PodSetRequests, jobset_workload, trainjob_workload
from compiler.upstream.versions import KUEUE_TRAINER_VERSIONS, KUEUE_VERSION

__all__ = [
    "check_queues",
    "queue_delivery_problems",
    "queue_jobsets",
    "quota_changes",
    "with_delivery",
]


def with_delivery(plan: BuildPlan, delivery: str | None) -> BuildPlan:
    """``plan`` with its cluster's delivery the one a command line chose (``apply --emit``,
    the Argo CD plugin's ``delivery``), so the queue checks judge what really goes out."""
    if delivery is None or plan.cluster is None or plan.cluster.delivery == delivery:
        return plan
    return replace(plan, cluster=replace(plan.cluster, delivery=delivery))


def _jobsets_to_kueue(cluster: ClusterTarget | None) -> bool:
    return (
        cluster is not None
        and cluster.delivery == "resolved"
        and cluster.kueue_jobsets
        and cluster.has_scheduler("kueue") is not False
    )


def queue_delivery_problems(
    cluster: ClusterTarget, summaries: list[TrainJobSummary]
) -> list[Problem]:
    """Queued TrainJobs whose resolved JobSets would bypass the cluster's Kueue: delivered
    resolved, or written into a rendered folder whose ``kustomization.yaml`` a Flux
    Kustomization applies (``gitops: {kustomization: true}``), whatever ``delivery`` says."""
    if cluster.has_scheduler("kueue") is not True or cluster.kueue_jobsets:
        return []
    by_flux = cluster.delivery != "resolved"
    if by_flux and not (cluster.gitops is not None and cluster.gitops.kustomization):
        return []
    problems = []
    for summary in summaries:
        job = summary.trainjob
        queue = queue_name(job) if job is not None and not summary.skipped else None
        if job is not None and queue is not None:
            problems.append(bypass_problem(job, cluster.name, queue, by_flux=by_flux))
    return problems


def queue_jobsets(build: Build) -> None:
    """With the JobSet opt-in, every queued TrainJob's JobSet as Kueue's JobSet
    integration manages it (queue label, ``suspend: true``)."""
    if not _jobsets_to_kueue(build.plan.cluster):
        return
    for summary in build.summaries:
        job = summary.trainjob
        if job is None or queue_name(job) is None:
            continue
        labels = job.metadata.get("labels") or {}
        summary.objects = [
            replace(o, data=for_jobset_integration(o.data, labels))
            if o.data.get("kind") == "JobSet"
            else o
            for o in summary.objects
        ]


def _requests_text(workload: list[PodSetRequests]) -> str:
    """``node x4: cpu 8, memory 32Gi, nvidia.com/gpu 8`` (totals of each PodSet)."""
    return "; ".join(
        f"{p.name} x{p.count}: "
        + (", ".join(f"{k} {format_amount(k, v)}" for k, v in p.requests.items()) or "nothing")
        for p in workload
    )


def _queued_jobs(
    build: Build, setup: QueueSetup, skew: list[Problem] | None = None
) -> list[QueuedJob]:
    """Each queued TrainJob of ``build`` with the Workload the cluster's Kueue computes
    (skew warnings appended to ``skew`` when given)."""
    cluster = build.plan.cluster
    kueue_version = (cluster.kueue_version if cluster else None) or KUEUE_VERSION
    kueue_trainer = KUEUE_TRAINER_VERSIONS[kueue_version]
    queued: list[QueuedJob] = []
    for summary in build.summaries:
        job, runtime = summary.trainjob, summary.runtime
        if job is None or runtime is None or summary.skipped or queue_name(job) is None:
            continue
        if not summary.objects:
            continue  # refused by the webhook or the controller: never reaches Kueue
        if _jobsets_to_kueue(cluster):
            jobsets = [o.data for o in summary.objects if o.data.get("kind") == "JobSet"]
            workload = jobset_workload(jobsets[0], setup) if jobsets else []
        else:
            spec = runtime.data.get("spec") or {}
            workload, _ = trainjob_workload(job.data, spec, setup, kueue_trainer)
            if skew is not None:
                own, _ = trainjob_workload(job.data, spec, setup, build.plan.trainer_version)
                if own and workload and own != workload:
                    skew.append(_skew_warning(summary, kueue_version, workload, own))
        queued.append(QueuedJob(job, workload))
    return queued


def check_queues(build: Build) -> None:
    """The queue setup, each queued TrainJob's Workload, the verdict and the skew warning."""
    setup, problems = queue_setup(build.loaded.others)
    build.problems += problems
    cluster = build.plan.cluster
    if cluster is not None and cluster.has_scheduler("kueue") is False:
        return  # the queue label is inert there (a warning of the cluster checks)
    build.warnings += missing_flavors(setup)
    queued = _queued_jobs(build, setup, build.warnings)
    labels = dict(cluster.namespaces) if cluster is not None and cluster.namespaces else None
    build.findings += [Finding.of_problem(p, RULE) for p in queue_problems(queued, setup, labels)]


def _plan_usage(plan: BuildPlan) -> tuple[QueueSetup, Usage] | None:
    """What the queued TrainJobs of ``plan`` request per (ClusterQueue, resource), with the
    queue setup; None when its inputs hold no queue setup (only loaded, then)."""
    from compiler.plan.stages import RENDER_STAGES, load, run  # stages imports this module

    if queue_setup(run(plan, (load,)).loaded.others)[0].empty:
        return None
    build = run(plan, RENDER_STAGES)
    if build.problems:
        return None  # what does not render has no Workloads (diff says why elsewhere)
    setup, _ = queue_setup(build.loaded.others)
    return setup, queue_usage(_queued_jobs(build, setup), setup)


def quota_changes(base: list[BuildPlan], head: list[BuildPlan]) -> list[tuple[str, ImpactRow]]:
    """``trainc diff``'s quota impact: per cluster (``""`` for PATHs), ClusterQueue and
    resource, the queued requests before and after, beside the nominal quota (the head's
    setup, else the base's)."""
    sides: dict[str, list[tuple[QueueSetup, Usage] | None]] = {}
    for index, plans in enumerate((base, head)):
        for plan in plans:
            sides.setdefault(plan.cluster_name or "", [None, None])[index] = _plan_usage(plan)
    rows = []
    for cluster, (before, after) in sorted(sides.items()):
        setup = (after or before or (QueueSetup(), {}))[0]
        old = before[1] if before else {}
        new = after[1] if after else {}
        rows += [(cluster, row) for row in quota_impact(old, new, setup)]
    return rows


def _skew_warning(
    summary: TrainJobSummary,
    kueue_version: str,
    kueue_workload: list[PodSetRequests],
    own: list[PodSetRequests],
) -> Problem:
    job = summary.trainjob
    assert job is not None
    kueue_trainer = KUEUE_TRAINER_VERSIONS[kueue_version]
    return Problem(
        f"Kueue {kueue_version} computes this TrainJob's Workload with the Trainer it embeds "
        f"({kueue_trainer}), which requests {_requests_text(kueue_workload)}; the pods the "
        f"cluster's Trainer creates request {_requests_text(own)}: Kueue reserves other "
        "quota than the pods use",
        job.locate(("metadata", "labels", QUEUE_LABEL)),
        job.ref,
        f"metadata.labels[{QUEUE_LABEL}]",
        RULE,
    )
