"""One identity, one job: ``migrate`` refuses two jobs that would become one TrainJob.

Every migrated job becomes a TrainJob (and its dedicated runtime) with the job's
namespace and name, so two jobs of one namespace/name would be merged into one output
file holding two TrainJobs of one identity, which ``check`` and the API server refuse.
The jobs are not kept apart by renaming one: the name is the JobSet's, so it is in every
pod's hostname and in what the training code reads (``MASTER_ADDR``, ``TF_CONFIG``, the
MPI hostfile), and a kubeflow.org MPIJob written as ``v1`` and as ``v2beta1`` is one
object in a cluster (one resource, two versions): which of the two the cluster held is
the user's to say. Both places are named, as ``render`` names a duplicate object.
"""

from __future__ import annotations

from collections.abc import Iterable

from compiler.errors import ObjectRef, Problem, SourceLocation
from compiler.migrate.report import JobReport, ObjectId
from compiler.migrate.source import SourceObject

__all__ = ["duplicate_jobs", "identity_problems", "output_clashes"]


def identity_problems(
    jobs: list[SourceObject], reports: Iterable[JobReport], namespace: str
) -> list[Problem]:
    """Jobs of one identity, then outputs of one identity from different jobs."""
    problems = duplicate_jobs(jobs, namespace)
    clashing = {(p.location.file if p.location else "", p.object) for p in problems}
    return problems + [
        p
        for p in output_clashes(jobs, reports, namespace)
        if (p.location.file if p.location else "", p.object) not in clashing
    ]


def duplicate_jobs(jobs: list[SourceObject], namespace: str) -> list[Problem]:
    """A problem at each job whose namespace/name an earlier job has, naming it."""
    first: dict[tuple[str, str], SourceObject] = {}
    problems: list[Problem] = []
    for job in jobs:
        if not job.name:
            continue  # no name is a problem of its own
        key = (job.namespace or namespace, job.name)
        earlier = first.setdefault(key, job)
        if earlier is not job:
            problems.append(_duplicate(job, earlier, *key))
    return problems


def _duplicate(job: SourceObject, earlier: SourceObject, namespace: str, name: str) -> Problem:
    here, there = _where(job), _where(earlier)
    target = f"TrainJob {namespace}/{name}"
    if here == there:
        message = (
            f"read twice ({here.file} is among the paths twice, or inside a folder given too); "
            "give each file once"
        )
    elif _resource(job) == _resource(earlier):
        versions = (
            f" (there {earlier.api_version}, here {job.api_version})"
            if earlier.api_version != job.api_version
            else ""
        )
        message = (
            f"{earlier.kind} {namespace}/{name} is also defined at {there}{versions}: one object "
            f"in a cluster, and both would be migrated to {target}; keep the one the cluster "
            "runs and remove the other"
        )
    else:
        message = (
            f"{earlier.kind} {namespace}/{name} ({there}) would be migrated to the same "
            f"{target} (and TrainingRuntime) as this {job.kind}: rename one of the two jobs, "
            "or give it another namespace (its pods' addresses follow the new name), "
            "then migrate again"
        )
    return Problem(
        message, here, ObjectRef(job.kind, name, namespace), "metadata.name", rule="input"
    )


def output_clashes(
    jobs: list[SourceObject], reports: Iterable[JobReport], namespace: str
) -> list[Problem]:
    """A problem at each job with an output object another job's outputs have too
    (any kind: a ConfigMap a translation writes beside the TrainJob as well)."""
    owner: dict[tuple[str, str, str, str], JobReport] = {}
    problems: list[Problem] = []
    for report in reports:
        for output in report.outputs:
            key = (output.api_version.split("/")[0], output.kind, output.namespace, output.name)
            earlier = owner.setdefault(key, report)
            if earlier is report:
                continue
            job, other = _job_of(report, jobs, namespace), _job_of(earlier, jobs, namespace)
            here = _where(job) if job else SourceLocation(report.file)
            there = _where(other) if other else SourceLocation(earlier.file)
            source = report.source
            problems.append(
                Problem(
                    f"its output {output} is also the output of {earlier.source} ({there}): "
                    "rename one of the two jobs, then migrate again",
                    here,
                    ObjectRef(source.kind, source.name, source.namespace),
                    "metadata.name",
                    rule="input",
                )
            )
    return problems


def _job_of(report: JobReport, jobs: list[SourceObject], namespace: str) -> SourceObject | None:
    for job in jobs:
        if job.file == report.file and _id(job, namespace) == report.source:
            return job
    return None


def _id(job: SourceObject, namespace: str) -> ObjectId:
    return ObjectId(job.api_version, job.kind, job.namespace or namespace, job.name)


def _resource(job: SourceObject) -> tuple[str, str]:
    """The API group and kind: the versions of one resource are one object."""
    return job.api_version.split("/")[0], job.kind


def _where(job: SourceObject) -> SourceLocation:
    return job.location(("metadata", "name"))
