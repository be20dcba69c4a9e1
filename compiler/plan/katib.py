"""The chain's Katib stages (``trainc check``): every Experiment among the inputs through
Katib's webhooks, and each planned trial's TrainJob through the rest of the chain like any
TrainJob input (admission, render, output admission, cluster checks, policies); what fails
in a trial is the Experiment's error, at the template line, naming the assignment
(:mod:`compiler.katib.inputs`)."""

from __future__ import annotations

import copy
from typing import Any

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
from compiler.upstream.names import TRAINJOB_KIND

__all__ = [
    "katib_outputs",
    "katib_pod_problems",
    "katib_relabel",
    "katib_relabel_findings",
    "katib_relabel_problems",
    "katib_trials",
    "trial_pods_injected",
]


def katib_trials(build: Build) -> None:
    """Experiments' problems; their trials' TrainJobs join the inputs."""
    samples, seed = build.plan.katib_samples
    found = experiment_inputs(build.loaded.others, build.plan.default_namespace, samples, seed)
    if not found.experiments:
        return
    build.problems += found.problems
    build.notes += found.notes
    build.loaded.objects += [t.manifest for t in found.trials]
    build.katib_trials = found.trials


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


def peak_notes(build: Build) -> list[str]:
    """Per Experiment, the peak requests of its costliest trials at parallelTrialCount."""
    rendered = {(s.namespace, s.name): s.objects for s in build.summaries}
    by_experiment: dict[int, list[TrialJob]] = {}
    for trial in build.katib_trials:
        by_experiment.setdefault(id(trial.experiment), []).append(trial)
    notes = []
    for trials in by_experiment.values():
        experiment = trials[0].experiment
        costs: list[dict[str, Quantity]] = []
        for trial in trials:
            key = (trial.manifest.namespace or "", trial.manifest.name)
            costs.append(trial_requests(o.data for o in rendered.get(key, [])))
        spec = experiment.data.get("spec") or {}
        parallel = spec.get("parallelTrialCount")
        parallel = parallel if isinstance(parallel, int) else 3  # Katib's default
        taken = min(parallel, len(costs))
        notes.append(
            f"{experiment.ref}: peak requests at parallelTrialCount {parallel} "
            f"(the {taken} costliest of {len(costs)} trials checked): "
            f"{peak_text(peak(costs, parallel))}"
        )
    return notes


def katib_relabel_problems(build: Build) -> None:
    """The render chain's relabelling: problems about a trial, told as the Experiment's
    (``check`` relabels again after its own stages, and notes the peak)."""
    from compiler.plan.stages import warning_order  # stages imports this module

    if build.katib_trials:
        build.problems = relabel(build.problems, build.katib_trials)
        build.problems += katib_pod_problems(build)
        # in the order a check by chunks merges them (plan/check_chunks.py _whole_order)
        build.warnings = sorted(relabel(build.warnings, build.katib_trials), key=warning_order)


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


def katib_pod_problems(build: Build) -> list[Problem]:
    """The trials' Pods Katib's pod webhook would refuse (:mod:`compiler.katib.injector`)."""
    out: list[Problem] = []
    for trial in build.katib_trials:
        key = (trial.manifest.namespace or "", trial.manifest.name)
        for output in build.outputs:
            if (output.summary.namespace, output.summary.name) != key:
                continue
            stored = output.stored
            if stored is not None and stored.get("kind") == "JobSet":
                out += _primary_template_problems(trial, stored)
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
