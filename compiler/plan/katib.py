"""The chain's Katib stages (``trainc check``): every Experiment among the inputs through
Katib's webhooks, and each planned trial's TrainJob through the rest of the chain like any
TrainJob input (admission, render, output admission, cluster checks, policies); what fails
in a trial is the Experiment's error, at the template line, naming the assignment
(:mod:`compiler.katib.inputs`)."""

from __future__ import annotations

from compiler.katib.inputs import TrialJob, experiment_inputs, relabel, relabel_findings
from compiler.katib.peak import peak, peak_text, trial_requests
from compiler.kube.quantity import Quantity
from compiler.model.build import Build

__all__ = ["katib_relabel", "katib_relabel_findings", "katib_trials"]


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
    if build.katib_trials:
        build.problems = relabel(build.problems, build.katib_trials)
        build.warnings = relabel(build.warnings, build.katib_trials)
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
