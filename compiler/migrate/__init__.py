"""Front ends that turn other job kinds into Trainer v2 inputs: Training Operator v1
jobs (PyTorchJob, TFJob, MPIJob, XGBoostJob, PaddleJob, JAXJob), the MPI Operator's
``kubeflow.org/v2beta1`` MPIJob and Volcano Jobs become a TrainJob each, plus a
dedicated TrainingRuntime where no existing one fits, and a report per job.

One translator module per framework (``pytorch``, ``tensorflow``, ``mpi``, ``xgboost``,
``paddle``, ``jax``), which the v1 jobs and, through ``volcano``, Volcano Jobs reach;
``common`` and ``peers`` hold what they share, ``vcjob`` and ``vcgroup`` the Volcano
task shapes;
``source`` reads the jobs (round trip, positions); ``report`` is the report model;
``runtimes`` finds a reusable runtime; ``release`` checks the output against the Trainer
release it is for (``--trainer``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ruamel.yaml.comments import CommentedMap

from compiler.errors import InputError, ObjectRef, Problem, sorted_problems
from compiler.migrate import jax, mpi, paddle, pytorch, tensorflow, volcano, xgboost
from compiler.migrate.common import Job, Options, object_id
from compiler.migrate.extensions import extension_notes
from compiler.migrate.identity import identity_problems
from compiler.migrate.nextstep import reused_runtime_note
from compiler.migrate.release import release_takes
from compiler.migrate.report import Diagnostic, JobReport, Mapping, ObjectId
from compiler.migrate.runtimes import Candidate, choose, plain, upstream_candidates
from compiler.migrate.schema import schema_problems
from compiler.migrate.source import (
    MPI_V2,
    TRAINER,
    V1,
    VOLCANO,
    SourceObject,
    read_sources_collect,
)

__all__ = ["Migration", "Options", "migrate_objects", "migrate_paths"]

Translator = Callable[[Job], list[CommentedMap]]

TRANSLATORS: dict[tuple[str, str], Translator] = {
    (V1, "PyTorchJob"): pytorch.migrate,
    (V1, "TFJob"): tensorflow.migrate,
    (V1, "MPIJob"): mpi.migrate,
    (V1, "XGBoostJob"): xgboost.migrate,
    (V1, "PaddleJob"): paddle.migrate,
    (V1, "JAXJob"): jax.migrate,
    (MPI_V2, "MPIJob"): mpi.migrate,
    (VOLCANO, "Job"): volcano.migrate,
}
UNSUPPORTED = {
    (V1, "MXJob"): "MXJob was removed from the Training Operator in v1.9.0 and has no Trainer v2 "
    "equivalent (no MXNet policy); keep it on Training Operator v1.8 or port the job to PyTorch",
}


@dataclass
class Migration:
    objects: list[CommentedMap] = field(default_factory=list)
    reports: list[JobReport] = field(default_factory=list)
    passthrough: int = 0  # Trainer objects among the inputs (runtimes offered for reuse)
    runtime_files: list[str] = field(default_factory=list)  # files of the reused runtimes

    @property
    def has_errors(self) -> bool:
        return any(r.errors for r in self.reports)


def migrate_paths(paths: list[str], options: Options | None = None) -> Migration:
    """Every job of ``paths``; an :class:`InputError` with the problems of every input
    (the files that cannot be read and the jobs the API server would refuse), so one
    bad file does not hide the others' problems."""
    sources, unread = read_sources_collect(paths)
    try:
        result = migrate_objects(sources, options)
    except InputError as error:
        raise InputError(sorted_problems([*unread, *error.problems])) from None
    if unread:
        raise InputError(unread)
    return result


def migrate_objects(sources: list[SourceObject], options: Options | None = None) -> Migration:
    options = options or Options()
    result = Migration()
    problems: list[Problem] = []
    candidates = _offered_runtimes(sources, options, result, problems)
    candidates += upstream_candidates(options.trainer_version)
    for src in sources:
        if src.api_version != TRAINER:
            _migrate_source(src, options, candidates, result, problems)
    jobs = [src for src in sources if (src.api_version, src.kind) in TRANSLATORS]
    problems += identity_problems(jobs, result.reports, options.namespace)
    if problems:
        raise InputError(problems)
    return result


def _offered_runtimes(
    sources: list[SourceObject], options: Options, result: Migration, problems: list[Problem]
) -> list[Candidate]:
    """The runtimes among the inputs, offered for reuse (render would refuse the ones
    with schema problems: those are input errors)."""
    candidates: list[Candidate] = []
    for src in sources:
        if src.api_version == TRAINER and src.kind in ("ClusterTrainingRuntime", "TrainingRuntime"):
            refused = schema_problems(src, options.namespace)
            if refused:  # render would refuse it too: not a runtime to reuse
                problems.extend(refused)
                continue
            namespace = (
                (src.namespace or options.namespace) if src.kind == "TrainingRuntime" else ""
            )
            candidates.append(
                Candidate(
                    src.kind,
                    src.name,
                    namespace,
                    plain(src.data.get("spec") or {}),
                    src.file,
                    src.file,
                )
            )
            result.passthrough += 1
    return candidates


def _migrate_source(
    src: SourceObject,
    options: Options,
    candidates: list[Candidate],
    result: Migration,
    problems: list[Problem],
) -> None:
    """One input object: its report (and outputs) to ``result``, or its input errors to
    ``problems``."""
    namespace = src.namespace or options.namespace
    report = JobReport(ObjectId(src.api_version, src.kind, namespace, src.name), src.file)
    translator = _translator(src, report)
    if translator is None:
        result.reports.append(report)
        return
    schema = schema_problems(src, namespace)
    if schema:  # the API server would have refused the job: nothing to translate
        problems.extend(schema)
        return
    job = Job(src, options, report)
    if not src.name:
        problems.append(
            Problem(
                "Required value: name or generateName is required",
                src.location(("metadata",)),
                ObjectRef(src.kind, "", namespace),
                "metadata.name",
                rule="yaml",
            )
        )
        return
    try:
        objects = translator(job)
    except InputError as error:
        problems.extend(error.problems)
        return
    finally:
        report.accounted = set(job.consumed)
    for note in extension_notes(report, src.data):
        report.add(note)
    if len(objects) == 2:
        objects = _reuse(objects, candidates, report, result, options.trainer_version)
    if objects and not release_takes(objects, options, report, src.data):
        objects = []
    report.outputs = [object_id(o) for o in objects]
    result.objects.extend(objects)
    result.reports.append(report)


def _translator(src: SourceObject, report: JobReport) -> Translator | None:
    """The translator of the object's kind; None (with the report saying why) for a
    kind trainc does not migrate."""
    key = (src.api_version, src.kind)
    if key in UNSUPPORTED:
        report.add(
            Diagnostic(
                "UNSUPPORTED_KIND",
                "error",
                "kind",
                UNSUPPORTED[key],
                action="rejected",
                covers=("*",),
            )
        )
        return None
    translator = TRANSLATORS.get(key)
    if translator is not None:
        return translator
    if src.api_version.split("/")[0] not in ("kubeflow.org", "batch.volcano.sh"):
        report.add(
            Diagnostic(
                "NOT_A_JOB",
                "info",
                "kind",
                f"{src.api_version} {src.kind} is not a job kind; left as it is (not copied to the output)",
                action="dropped",
            )
        )
        return None
    report.add(
        Diagnostic(
            "UNSUPPORTED_KIND",
            "error",
            "kind",
            f"{src.api_version} {src.kind} is not a job kind trainc migrates",
            action="rejected",
            covers=("*",),
        )
    )
    return None


def _reuse(
    objects: list[CommentedMap],
    candidates: list[Candidate],
    report: JobReport,
    result: Migration,
    trainer_version: str,
) -> list[CommentedMap]:
    """A runtime among the candidates equivalent to the dedicated one replaces it: only
    the TrainJob is written, pointing at it."""
    runtime, trainjob = objects
    chosen, reason = choose(runtime, trainjob, candidates, report)
    report.runtime_reason = reason
    if chosen is None:
        return objects
    over = f"TrainJob.spec.trainer over {chosen.kind} {chosen.name}"
    report.mappings = [
        Mapping(m.source_path, over) if m.target_path == "TrainingRuntime pod template" else m
        for m in report.mappings
    ]
    if chosen.path and chosen.path not in result.runtime_files:
        result.runtime_files.append(chosen.path)
    report.add(reused_runtime_note(chosen, trainer_version))
    return [trainjob]
