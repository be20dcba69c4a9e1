"""The chain's Katib stages (``trainc check``): every Experiment among the inputs through
Katib's webhooks, and each planned trial's TrainJob through the rest of the chain like any
TrainJob input (admission, render, output admission, cluster checks, policies); what fails
in a trial is the Experiment's error, at the template line, naming the assignment
(:mod:`compiler.katib.inputs`)."""

from __future__ import annotations

from compiler.katib.inputs import experiment_inputs, relabel
from compiler.plan.stages import Build

__all__ = ["katib_relabel", "katib_trials"]


def katib_trials(build: Build) -> None:
    """Experiments' problems; their trials' TrainJobs join the inputs."""
    found = experiment_inputs(build.loaded.others, build.plan.default_namespace)
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
