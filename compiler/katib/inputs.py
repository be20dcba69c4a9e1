"""Experiments among the inputs, and the TrainJob of each trial trainc checks.

Found by kind among the objects the loader keeps as they are (``LoadResult.others``). Each
Experiment goes through the API server's create path with the pinned Experiment CRD, Katib's
decoding into its Go type, its defaulting and validating webhooks (problems located at the
field they name, rule ``katib``). An accepted Experiment whose trials are TrainJobs gives
one TrainJob per planned trial (:func:`compiler.katib.trials.plan_trials`), admitted like
any TrainJob input; its positions are the Experiment's template positions, so what fails
later in the chain (render, output admission, policies) is located at the Experiment line
that produced it, and :func:`relabel` names the trial's assignment in the message.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any

from compiler.apiserver.crds import CrdSet, admit, load_crd, make_crd_set, trainer_crds
from compiler.apiserver.manifest import Manifest, SourceMap, parse_field_path
from compiler.errors import Finding, ObjectRef, Problem
from compiler.katib.experiment import (
    decode_problem,
    is_experiment,
    katib_config,
    set_default,
    validate,
)
from compiler.katib.trials import SubstitutionError, Trial, plan_trials, substitute
from compiler.kube.gotext import go_json
from compiler.load.loader import load_texts_collect
from compiler.upstream.artifacts import katib_upstream, upstream
from compiler.upstream.versions import DEFAULT_TRAINER_VERSION

__all__ = ["ExperimentInputs", "TrialJob", "experiment_inputs", "relabel", "relabel_findings"]

RULE = "katib"
DOWNSTREAM = "downstream"  # what the API server refuses below the input (expand/downstream)
TEMPLATE = ("spec", "trialTemplate", "trialSpec")


@dataclass(frozen=True)
class TrialJob:
    """One planned trial's TrainJob, as Katib's controller would create it."""

    experiment: Manifest
    trial: Trial
    manifest: Manifest  # admitted; positions are the Experiment's

    @property
    def prefix(self) -> str:
        return f"trial {self.trial.label}: "


@dataclass
class ExperimentInputs:
    experiments: list[Manifest] = field(default_factory=list)
    trials: list[TrialJob] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@cache
def katib_crds() -> CrdSet:
    """The pinned Experiment CRD; ObjectMeta's shape from the Trainer's OpenAPI document."""
    paths = katib_upstream().input_crd_paths()
    base = make_crd_set(paths, upstream(DEFAULT_TRAINER_VERSION).openapi_path)
    served = {(f"{i.group}/{i.version}", i.kind): i for p in paths for i in load_crd(p)}
    return replace(base, crds=served)


def _config_maps(others: list[Manifest]) -> dict[tuple[str, str], dict[str, Any]]:
    return {
        (m.namespace or "default", m.name): m.data
        for m in others
        if m.api_version == "v1" and m.kind == "ConfigMap"
    }


def _admit(manifest: Manifest, default_namespace: str) -> list[Problem]:
    crds = katib_crds()
    crd = crds.crds.get((manifest.api_version, manifest.kind))
    assert crd is not None, "is_experiment checked the kind"
    meta = manifest.data.setdefault("metadata", {})
    if isinstance(meta, dict) and not meta.get("namespace"):
        meta["namespace"] = default_namespace
    return [
        Problem(e.message, manifest.locate(e.path), manifest.ref, e.field or "<nil>", "crd-schema")
        for e in admit(manifest.data, crd, crds)
    ]


def _rebased(manifest: Manifest, prefix: tuple[str | int, ...]) -> SourceMap:
    """The Experiment's positions under ``prefix``, rooted there: a trial's TrainJob field
    is located at the template line it came from (else at the nearest ancestor)."""
    depth = len(prefix)
    anchor = manifest.locate(prefix)
    source = manifest.source

    def positions() -> dict[tuple[str | int, ...], tuple[int, int]]:
        out = {p[depth:]: pos for p, pos in source.positions.items() if p[:depth] == prefix}
        out.setdefault((), (anchor.line, anchor.column))
        return out

    return SourceMap(source.file, compute=positions)


def _data_path(data: Any, parts: tuple[str | int, ...]) -> tuple[str | int, ...]:
    """``parts`` of a field text split at every dot, joined back where the object has a
    key with dots (``limits.nvidia.com/gpu`` -> ``limits``, ``nvidia.com/gpu``)."""
    out: list[str | int] = []
    i = 0
    while i < len(parts):
        part = parts[i]
        if isinstance(data, list) and isinstance(part, int) and 0 <= part < len(data):
            out.append(part)
            data = data[part]
            i += 1
            continue
        if not isinstance(data, dict):
            break
        for j in range(len(parts), i, -1):
            chunk = parts[i:j]
            if all(isinstance(c, str) for c in chunk) and ".".join(map(str, chunk)) in data:
                key = ".".join(map(str, chunk))
                out.append(key)
                data = data[key]
                i = j
                break
        else:
            break
    return (*out, *parts[i:])


def _trial_job(
    experiment: Manifest,
    defaulted: dict[str, Any],
    trial: Trial,
    config_maps: dict[tuple[str, str], dict[str, Any]],
    out: ExperimentInputs,
) -> None:
    inline = isinstance((defaulted["spec"].get("trialTemplate") or {}).get("trialSpec"), dict)
    prefix = TEMPLATE if inline else ("spec", "trialTemplate", "configMap")
    label = f"trial {trial.label}: "
    namespace = experiment.namespace or "default"
    try:
        obj = substitute(defaulted, trial.name, namespace, trial.assignments, config_maps)
    except SubstitutionError as error:
        out.problems.append(
            Problem(label + str(error), experiment.locate(prefix), experiment.ref, None, RULE)
        )
        return
    if obj.get("apiVersion") == "batch/v1" and obj.get("kind") == "Job":
        out.problems += _batch_job_problems(experiment, obj, prefix if inline else None, label)
        return
    if obj.get("kind") != "TrainJob":
        return  # only TrainJob trials go through trainc's chain
    loaded, problems = load_texts_collect(
        [(f"<{trial.name}>", go_json(obj))], namespace, trainer_crds()
    )
    for problem in problems:
        field = problem.field_path if problem.field_path not in (None, "<nil>") else None
        path = _data_path(obj, parse_field_path(field)) if field else ()
        location = experiment.locate((*prefix, *path)) if inline else experiment.locate(prefix)
        out.problems.append(
            Problem(_message(label, problem), location, experiment.ref, None, problem.rule or RULE)
        )
    source = (
        _rebased(experiment, prefix)
        if inline
        else SourceMap(
            experiment.source.file,
            {(): tuple(experiment.locate(prefix))[1:]},  # type: ignore[dict-item]
        )
    )
    for manifest in loaded.objects:
        out.trials.append(TrialJob(experiment, trial, Manifest(manifest.data, source)))


def _batch_job_problems(
    experiment: Manifest, job: dict[str, Any], prefix: tuple[str, ...] | None, label: str
) -> list[Problem]:
    """A batch Job trial as the API server takes it when Katib's trial controller creates
    it: its create validation (``validate_job``), each error at the template line that
    wrote the field (``prefix`` None: at the ConfigMap reference)."""
    from compiler.apiserver.workloads import ServerPanic, WorkloadDecodeError, validate_job

    where = prefix if prefix is not None else ("spec", "trialTemplate", "configMap")
    try:
        errors = validate_job(job)
    except (WorkloadDecodeError, ServerPanic) as refused:
        return [
            Problem(
                label + str(refused), experiment.locate(where), experiment.ref, None, DOWNSTREAM
            )
        ]
    name = (job.get("metadata") or {}).get("name", "")
    out = []
    for error in errors:
        path = _data_path(job, error.path or parse_field_path(error.field or ""))
        location = (
            experiment.locate((*where, *path)) if prefix is not None else experiment.locate(where)
        )
        message = f'{label}Job.batch "{name}" is invalid: {error}'
        out.append(Problem(message, location, experiment.ref, None, DOWNSTREAM))
    return out


INJECTION_LABEL = "katib.kubeflow.org/metrics-collector-injection"


def _namespace_problem(
    experiment: Manifest, namespaces: dict[str, dict[str, Any]]
) -> Problem | None:
    """Katib's validating webhook refuses an Experiment whose namespace lacks the label
    that turns on its pod webhook (before it validates anything else). Only a Namespace
    among the inputs is known; any other is taken as labelled."""
    namespace = experiment.namespace or "default"
    found = namespaces.get(namespace)
    if found is None:
        return None
    labels = (found.get("metadata") or {}).get("labels") or {}
    if isinstance(labels, dict) and labels.get(INJECTION_LABEL) == "enabled":
        return None
    return Problem(
        'admission webhook "validator.experiment.katib.kubeflow.org" denied the request: '
        f'Cannot create the Experiment "{experiment.name}" in namespace "{namespace}": '
        f'the namespace lacks label "{INJECTION_LABEL}: enabled"',
        experiment.locate(("metadata", "namespace")),
        experiment.ref,
        None,
        RULE,
    )


def experiment_inputs(
    others: list[Manifest],
    default_namespace: str = "default",
    samples: int = 0,
    seed: int = 0,
    unplanned: frozenset[str] = frozenset(),
) -> ExperimentInputs:
    """Every Experiment among ``others``: its problems, and the TrainJobs of its trials
    (none for an Experiment of the files ``unplanned``: ``check -j`` plans a context
    file's Experiment in one chunk)."""
    out = ExperimentInputs()
    config_maps = _config_maps(others)
    namespaces = {m.name: m.data for m in others if m.api_version == "v1" and m.kind == "Namespace"}
    for experiment in others:
        if not is_experiment(experiment.data):
            continue
        out.experiments.append(experiment)
        problems = _admit(experiment, default_namespace)
        if problems:
            out.problems += problems
            continue
        decode = decode_problem(experiment.data)
        if decode is not None:
            out.problems.append(
                Problem(decode.text, experiment.locate(decode.path), experiment.ref, None, RULE)
            )
            continue
        unlabelled = _namespace_problem(experiment, namespaces)
        if unlabelled is not None:
            out.problems.append(unlabelled)
            continue
        defaulted = set_default(experiment.data)
        errors = validate(set_default(experiment.data), katib_config(), config_maps)
        for error in errors:
            out.problems.append(
                Problem(error.text, experiment.locate(error.path), experiment.ref, None, RULE)
            )
        if errors or experiment.source.file in unplanned:
            continue
        if defaulted["spec"].get("nasConfig") is not None:
            out.notes.append(
                f"{experiment.ref}: nasConfig: Katib's {_algorithm(defaulted)} suggestion "
                "makes each trial's architecture in the cluster; trainc checks the "
                "Experiment, not its trials"
            )
            continue
        plan = plan_trials(defaulted, samples, seed)
        if plan.bounded:
            out.notes.append(
                f"{experiment.ref}: trainc checks the first {len(plan.trials)} trials of "
                f"{'more than 100000' if plan.total > 100_000 else plan.total}"
            )
        elif plan.capped:
            out.notes.append(
                f"{experiment.ref}: the grid holds {plan.total} trials, maxTrialCount "
                f"{defaulted['spec'].get('maxTrialCount')} caps it at {len(plan.trials)}"
            )
        for trial in plan.trials:
            _trial_job(experiment, defaulted, trial, config_maps, out)
    return out


def _algorithm(defaulted: dict[str, Any]) -> str:
    return str((defaulted["spec"].get("algorithm") or {}).get("algorithmName") or "")


def _message(label: str, problem: Problem) -> str:
    """``trial lr=0.05, gpus=two: spec.trainer...: message``: the assignment first."""
    field = problem.field_path if problem.field_path not in (None, "<nil>") else None
    return label + (f"{field}: {problem.message}" if field else problem.message)


def relabel(problems: list[Problem], trials: list[TrialJob]) -> list[Problem]:
    """Problems found later in the chain about a trial's TrainJob (or what it rendered),
    told as the Experiment's: its object, the trial's assignment first in the message."""
    by_name = {(t.manifest.namespace, t.manifest.name): t for t in trials}
    out = []
    for problem in problems:
        ref = problem.object
        trial = None
        if isinstance(ref, ObjectRef):
            trial = by_name.get((ref.namespace, ref.name))
        if trial is None:
            out.append(problem)
            continue
        message = _message(trial.prefix, problem)
        out.append(replace(problem, message=message, object=trial.experiment.ref, field_path=None))
    return out


def relabel_findings(findings: list[Finding], trials: list[TrialJob]) -> list[Finding]:
    """Policy findings about a trial's TrainJob or what it rendered, told as the
    Experiment's, like :func:`relabel` (problems were relabelled before they became
    findings)."""
    by_name = {(t.manifest.namespace, t.manifest.name): t for t in trials}
    out = []
    for finding in findings:
        ref = finding.object
        trial = by_name.get((ref.namespace, ref.name)) if isinstance(ref, ObjectRef) else None
        if trial is None or finding.message.startswith(trial.prefix):
            out.append(finding)
            continue
        field = finding.field_path if finding.field_path not in (None, "<nil>") else None
        message = trial.prefix + (f"{field}: {finding.message}" if field else finding.message)
        out.append(finding._replace(message=message, object=trial.experiment.ref, field_path=None))
    return out
