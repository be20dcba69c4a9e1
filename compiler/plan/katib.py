"""The chain's Katib stages (``trainc check``): every Experiment among the inputs through
Katib's webhooks, and each planned trial's TrainJob through the rest of the chain like any
TrainJob input (admission, render, output admission, cluster checks, policies); what fails
in a trial is the Experiment's error, at the template line, naming the assignment
(:mod:`compiler.katib.inputs`)."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from compiler.apiserver.workloads import invalid_message
from compiler.apiserver.workloads.defaults import default_pod
from compiler.errors import Problem
from compiler.katib.experiment import is_experiment, set_default
from compiler.katib.injector import WEBHOOK, InjectionRefused, inject, trial_pods
from compiler.katib.inputs import TrialJob, experiment_inputs, relabel, relabel_findings
from compiler.katib.peak import peak, peak_text, trial_requests
from compiler.kube.quantity import Quantity
from compiler.kube.roundtrip import go_roundtrip
from compiler.model.build import Build
from compiler.model.objects import RenderedObject
from compiler.model.plan import BuildPlan
from compiler.plan.gitops import hint_annotations
from compiler.upstream.names import TRAINJOB_KIND

__all__ = [
    "katib_outputs",
    "katib_pod_problems",
    "katib_relabel",
    "katib_relabel_findings",
    "katib_relabel_problems",
    "katib_trials",
    "katib_trials_outside",
    "peak_changes",
    "trial_pods_injected",
]


def katib_trials(build: Build, unplanned: frozenset[str] = frozenset()) -> None:
    """Experiments' problems; their trials' TrainJobs join the inputs (none for the
    Experiments of the files ``unplanned``)."""
    samples, seed = build.plan.katib_samples
    found = experiment_inputs(
        build.loaded.others, build.plan.default_namespace, samples, seed, unplanned
    )
    if not found.experiments:
        return
    build.problems += found.problems
    build.notes += found.notes
    build.loaded.objects += [t.manifest for t in found.trials]
    build.katib_trials = found.trials


def katib_trials_outside(files: frozenset[str]) -> Callable[[Build], None]:
    """The :func:`katib_trials` stage, without planning the trials of the Experiments of
    ``files`` (they are still checked themselves)."""

    def stage(build: Build) -> None:
        katib_trials(build, files)

    return stage


def katib_relabel(build: Build) -> None:
    """Problems about a trial's TrainJob or its outputs, told as the Experiment's."""
    from compiler.plan.stages import warning_order  # stages imports this module

    if build.katib_trials:
        build.problems = relabel(build.problems, build.katib_trials)
        # in the order a check by chunks merges them (plan/check_chunks.py _whole_order)
        build.warnings = sorted(relabel(build.warnings, build.katib_trials), key=warning_order)
        build.notes += peak_notes(build)


def katib_relabel_findings(build: Build) -> None:
    """Policy findings about a trial, told as the Experiment's."""
    if build.katib_trials:
        build.findings = relabel_findings(build.findings, build.katib_trials)


@dataclass(frozen=True)
class ExperimentPeak:
    """What an Experiment's costliest trials request together at ``parallelTrialCount``."""

    parallel: int
    trials: int
    requests: dict[str, Quantity]


def experiment_peaks(build: Build) -> dict[str, ExperimentPeak]:
    """Per Experiment (``Experiment <namespace>/<name>``), the peak of its checked trials:
    from check's build, or render's (where the trials' objects are set apart)."""
    summaries = [*build.summaries, *build.trial_summaries]
    rendered = {(s.namespace, s.name): s.objects for s in summaries}
    by_experiment: dict[int, list[TrialJob]] = {}
    for trial in build.katib_trials:
        by_experiment.setdefault(id(trial.experiment), []).append(trial)
    out = {}
    for trials in by_experiment.values():
        experiment = trials[0].experiment
        costs: list[dict[str, Quantity]] = []
        for trial in trials:
            key = (trial.manifest.namespace or "", trial.manifest.name)
            costs.append(trial_requests(o.data for o in rendered.get(key, [])))
        spec = experiment.data.get("spec") or {}
        parallel = spec.get("parallelTrialCount")
        parallel = parallel if isinstance(parallel, int) else 3  # Katib's default
        out[str(experiment.ref)] = ExperimentPeak(parallel, len(costs), peak(costs, parallel))
    return out


def peak_notes(build: Build) -> list[str]:
    """Per Experiment, the peak requests of its costliest trials at parallelTrialCount."""
    return [
        f"{ref}: peak requests at parallelTrialCount {p.parallel} "
        f"(the {min(p.parallel, p.trials)} costliest of {p.trials} trials checked): "
        f"{peak_text(p.requests)}"
        for ref, p in experiment_peaks(build).items()
    ]


def plan_peaks(plan: BuildPlan) -> dict[str, ExperimentPeak]:
    """The Experiments' peaks of ``plan`` (``trainc diff``); none when its inputs hold no
    Experiment (only loaded, then) or do not render."""
    from compiler.plan.chunks import read_inputs
    from compiler.plan.stages import RENDER_STAGES, load, run  # stages imports this module

    files = read_inputs(plan.inputs)
    if files is not None and not any(b"Experiment" in f.data for f in files):
        return {}  # the bytes say so, without parsing them
    if not any(is_experiment(m.data) for m in run(plan, (load,)).loaded.others):
        return {}
    build = run(plan, RENDER_STAGES)
    return {} if build.problems else experiment_peaks(build)


def _peak_line(ref: str, before: ExperimentPeak | None, after: ExperimentPeak | None) -> str:
    if before is None or after is None:
        side = after or before
        assert side is not None
        verb = "added" if before is None else "removed"
        return (
            f"{ref} ({verb}): peak at parallelTrialCount {side.parallel}: "
            f"{peak_text(side.requests)}"
        )
    parallel = (
        str(after.parallel)
        if before.parallel == after.parallel
        else f"{before.parallel} -> {after.parallel}"
    )
    names = sorted({*before.requests, *after.requests})
    zero = Quantity.zero()
    changed = [
        f"{name} {before.requests.get(name, zero)} -> {after.requests.get(name, zero)}"
        for name in names
        if before.requests.get(name, zero).as_decimal()
        != after.requests.get(name, zero).as_decimal()
    ]
    return f"{ref}: peak at parallelTrialCount {parallel}: {', '.join(changed) or 'unchanged'}"


def _same_peak(a: ExperimentPeak | None, b: ExperimentPeak | None) -> bool:
    if a is None or b is None:
        return a is b
    values = [{k: v.as_decimal() for k, v in p.requests.items() if not v.is_zero()} for p in (a, b)]
    return a.parallel == b.parallel and values[0] == values[1]


def peak_changes(base: list[BuildPlan], head: list[BuildPlan]) -> list[tuple[str, str]]:
    """``trainc diff``'s Katib lines: per cluster (``""`` for PATHs), each Experiment whose
    peak at parallelTrialCount (or that count) differs between ``base`` and ``head``."""
    sides: dict[str, list[dict[str, ExperimentPeak]]] = {}
    for index, plans in enumerate((base, head)):
        for plan in plans:
            sides.setdefault(plan.cluster_name or "", [{}, {}])[index] = plan_peaks(plan)
    rows = []
    for cluster, (before, after) in sorted(sides.items()):
        for ref in sorted({*before, *after}):
            if not _same_peak(before.get(ref), after.get(ref)):
                rows.append((cluster, _peak_line(ref, before.get(ref), after.get(ref))))
    return rows


def katib_relabel_problems(build: Build) -> None:
    """The render chain's relabelling: problems about a trial, told as the Experiment's
    (``check`` relabels again after its own stages, and notes the peak)."""
    from compiler.plan.stages import warning_order  # stages imports this module

    flux = flux_substitution_warnings(build)
    if flux:
        build.warnings = sorted([*build.warnings, *flux], key=warning_order)
    if build.katib_trials:
        build.problems = relabel(build.problems, build.katib_trials)
        build.problems += katib_pod_problems(build)
        # in the order a check by chunks merges them (plan/check_chunks.py _whole_order)
        build.warnings = sorted(relabel(build.warnings, build.katib_trials), key=warning_order)


def _with_gitops_hints(build: Build, data: dict[str, Any]) -> dict[str, Any]:
    """The Experiment with the cluster's GitOps annotations, as every delivered object
    gets them (:mod:`compiler.plan.gitops`; sync wave 0, a workload's)."""
    cluster = build.plan.cluster
    if cluster is None or cluster.gitops is None:
        return data
    extra = hint_annotations(cluster.gitops, "Experiment")
    if extra:
        meta = data.setdefault("metadata", {})
        meta["annotations"] = {**(meta.get("annotations") or {}), **extra}
    return data


def _placeholders(value: Any, path: tuple[str | int, ...] = ()) -> Iterator[tuple[Any, str]]:
    """Every string holding ``${`` in ``value``, with its path, in document order."""
    if isinstance(value, str) and "${" in value:
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _placeholders(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _placeholders(item, (*path, index))


def flux_substitution_warnings(build: Build) -> list[Problem]:
    """A warning per Experiment holding a Katib placeholder when Flux's substitution is
    not off for its cluster: Flux's postBuild parser reads ``${trialParameters.lr}`` as a
    variable ``trialParameters`` followed by a ``.`` where it wants ``}``, and the whole
    Kustomization fails to build (``missing closing brace``)."""
    cluster = build.plan.cluster
    gitops = cluster.gitops if cluster is not None else None
    if cluster is None or (gitops is not None and gitops.flux_substitute == "disabled"):
        return []
    out = []
    for manifest in build.loaded.others:
        if not is_experiment(manifest.data):
            continue
        spec = manifest.data.get("spec") or {}
        found = next(_placeholders(spec, ("spec",)), None)
        if found is None:
            continue
        path, text = found
        out.append(
            Problem(
                f"{_field_text(path)} holds {text!r}: Flux's postBuild substitution cannot "
                "parse a Katib placeholder (missing closing brace), so a Flux Kustomization "
                "with postBuild that holds this Experiment fails to build; set `gitops: "
                f"{{fluxSubstitute: disabled}}` for cluster {cluster.name!r} in "
                f"{cluster.project_file} if Flux deploys it",
                manifest.locate(path),
                manifest.ref,
                None,
                "gitops",
            )
        )
    return out


def _field_text(path: tuple[str | int, ...]) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def katib_outputs(build: Build) -> None:
    """The render's output (render chain only; ``check`` keeps the trials' objects to
    check them): each Experiment passed through, as written with its namespace filled
    in, and as the API server stores it (Katib's defaulting webhook applied); the
    trials' summaries and outputs moved apart, for ``render --expand trials``.

    Reads ``loaded``, ``katib_trials``, ``summaries``, ``outputs``; sets ``passed``,
    ``trial_summaries``, ``trial_outputs``; takes the trials' TrainJobs out of ``loaded``."""
    for manifest in build.loaded.others:
        if not is_experiment(manifest.data):
            continue
        data = copy.deepcopy(manifest.data)
        namespace = manifest.namespace or build.plan.default_namespace
        data.setdefault("metadata", {})["namespace"] = namespace
        data = _with_gitops_hints(build, data)
        rendered = RenderedObject(namespace, manifest.name, data)
        build.passed.append((rendered, set_default(copy.deepcopy(data))))
    trials = {(t.manifest.namespace or "", t.manifest.name) for t in build.katib_trials}
    if not trials:
        return
    build.trial_summaries = [s for s in build.summaries if (s.namespace, s.name) in trials]
    build.summaries = [s for s in build.summaries if (s.namespace, s.name) not in trials]
    kept = [o for o in build.outputs if (o.summary.namespace, o.summary.name) not in trials]
    build.trial_outputs = [o for o in build.outputs if o not in kept]
    build.outputs = kept
    # nor are the trials' TrainJobs inputs to deliver (--emit trainjobs): Katib makes them
    build.loaded.objects = [
        m
        for m in build.loaded.objects
        if m.kind != TRAINJOB_KIND or (m.namespace or "", m.name) not in trials
    ]


def _primary_template_problems(trial: TrialJob, jobset: dict[str, Any]) -> list[Problem]:
    """Katib's pod webhook refuses every Pod of the trial without the primary container
    (it adds ``KATIB_TRIAL_NAME`` to that container on every Pod of a trial): one error
    per replicated job whose Pods lack it, at ``trialTemplate.primaryContainerName``."""
    defaulted = (trial.experiment.data.get("spec") or {}).get("trialTemplate") or {}
    name = str(defaulted.get("primaryContainerName") or "")
    out = []
    for rjob in (jobset.get("spec") or {}).get("replicatedJobs") or []:
        template = ((rjob.get("template") or {}).get("spec") or {}).get("template") or {}
        containers = (template.get("spec") or {}).get("containers") or []
        names = [str(c.get("name", "")) for c in containers if isinstance(c, dict)]
        if name in names:
            continue
        listed = "[" + " ".join("{" + n + " ...}" for n in names) + "]"
        message = (
            f"{trial.prefix}the Pods of replicated job {rjob.get('name')}: admission webhook "
            f'"{WEBHOOK}" denied the request: Unable to find primary container {name} '
            f"in mutated pod containers {listed}"
        )
        location = trial.experiment.locate(("spec", "trialTemplate", "primaryContainerName"))
        out.append(Problem(message, location, trial.experiment.ref, None, "katib"))
    return out


def _primary_pod_problems(trial: TrialJob, jobset: dict[str, Any]) -> list[Problem]:
    """What the API server refuses in a trial's primary Pod once Katib's webhook has added
    its sidecar, volume and mounts (a mount of the user's at the metrics folder, a volume
    named ``metrics-volume``, an invalid custom collector), beyond what it refuses in the
    Pod without them (the checks below the JobSet report that)."""
    from compiler.apiserver.workloads import ServerPanic, WorkloadDecodeError, validate_pod

    experiment = copy.deepcopy(trial.experiment.data)
    meta = experiment.setdefault("metadata", {})
    meta["namespace"] = meta.get("namespace") or trial.manifest.namespace or "default"
    context = trial_pods(set_default(experiment), trial.manifest.name)
    name = str((jobset.get("metadata") or {}).get("name", ""))
    out = []
    for rjob in (jobset.get("spec") or {}).get("replicatedJobs") or []:
        template = ((rjob.get("template") or {}).get("spec") or {}).get("template") or {}
        labels = {
            **((template.get("metadata") or {}).get("labels") or {}),
            "jobset.sigs.k8s.io/replicatedjob-name": str(rjob.get("name", "")),
            "batch.kubernetes.io/job-completion-index": "0",
        }
        primary = context.primary_pod_labels
        if primary is not None and any(labels.get(k) != v for k, v in primary.items()):
            continue
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": f"{name}-{rjob.get('name')}-0-0-00000",
                "namespace": context.namespace,
                "labels": labels,
            },
            "spec": copy.deepcopy(template.get("spec") or {}),
        }
        try:
            injected = inject(pod, context).pod
            errors = validate_pod(injected)
            before = {str(e) for e in validate_pod(pod)} if errors else set()
        except (InjectionRefused, WorkloadDecodeError, ServerPanic):
            continue  # refused before (a missing primary container) or not decodable
        added = [e for e in errors if str(e) not in before]
        if not added:
            continue
        where: tuple[str, ...] = ("spec", "metricsCollectorSpec")
        if where[-1] not in (trial.experiment.data.get("spec") or {}):
            where = ("spec", "trialTemplate", "primaryContainerName")
        invalid = invalid_message("Pod", f"{name}-{rjob.get('name')}-0-0-00000", added)
        out.append(
            Problem(
                f"{trial.prefix}the primary Pod of replicated job {rjob.get('name')}, with "
                f"Katib's metrics collector: {invalid}",
                trial.experiment.locate(where),
                trial.experiment.ref,
                None,
                "katib",
            )
        )
    return out


def katib_pod_problems(build: Build) -> list[Problem]:
    """The trials' Pods Katib's pod webhook would refuse, or make invalid
    (:mod:`compiler.katib.injector`)."""
    out: list[Problem] = []
    for trial in build.katib_trials:
        key = (trial.manifest.namespace or "", trial.manifest.name)
        for output in build.outputs:
            if (output.summary.namespace, output.summary.name) != key:
                continue
            stored = output.stored
            if stored is not None and stored.get("kind") == "JobSet":
                refused = _primary_template_problems(trial, stored)
                out += refused or _primary_pod_problems(trial, stored)
    return out


def trial_pods_injected(
    trial: TrialJob, default_namespace: str, objects: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[str]]:
    """``objects`` (a trial's expanded Jobs, Services and Pods) with Katib's pod webhook
    applied to each Pod, then the API server's defaults again (it re-defaults a Pod after
    each webhook's patch), in Go's field order; and what trainc could not emulate."""
    experiment = copy.deepcopy(trial.experiment.data)
    meta = experiment.setdefault("metadata", {})
    meta["namespace"] = meta.get("namespace") or default_namespace
    context = trial_pods(set_default(experiment), trial.manifest.name)
    out, notes = [], []
    for obj in objects:
        if obj.get("kind") != "Pod":
            out.append(obj)
            continue
        try:
            injected = inject(obj, context)
        except InjectionRefused:
            continue  # not created: katib_pod_problems reports it, and the render fails
        default_pod(injected.pod)
        pod = go_roundtrip(injected.pod, "io.k8s.api.core.v1.Pod")
        pod.pop("status", None)  # as compiler.expand writes Pods
        out.append(pod)
        notes += [f"{trial.experiment.ref}: trial {trial.trial.label}: {n}" for n in injected.notes]
    return out, notes
