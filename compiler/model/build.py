"""The build: what a chain has found so far about one plan.

:class:`Build` is the record the stages of :mod:`compiler.plan.stages` hand on, each
reading some fields and adding to others (each stage's docstring says which), and what
the driver (:mod:`compiler.plan.driver`) hands to writers and delivery steps. A
:data:`Stage` is a function of a build that adds to it.

Fields, in the order the render chain fills them::

    plan              given (:class:`~compiler.model.plan.BuildPlan`)
    loaded, originals load (inputs after the input overlays, and as read)
    overlays          the cluster's overlays
    runtimes          the runtimes admission lets through
    resolved          each TrainJob with its runtime, or why not
    summaries         the render: each TrainJob's objects (output overlays and GitOps
                      hints replace them)
    outputs           each object after the API server's create path
    problems, warnings, notes   added to by any stage
    findings, checked the check chain's validation stages
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from compiler.apiserver.crds import CrdSet
from compiler.apiserver.manifest import Manifest
from compiler.errors import Finding, InputError, Problem, sorted_problems
from compiler.load.loader import LoadResult
from compiler.model.objects import AdmittedOutput, RenderedObject, TrainJobSummary
from compiler.model.plan import BuildPlan
from compiler.policy.objects import PolicyObject
from compiler.render.info import SecretRequirement
from compiler.resolve.runtimes import Resolved, RuntimeIndex

if TYPE_CHECKING:  # overlays are loaded only by plans that have some (startup time)
    from compiler.overlay.overlays import Overlay

__all__ = ["Build", "Stage"]


@dataclass
class Build:
    """Everything a chain has found so far about one plan."""

    plan: BuildPlan
    loaded: LoadResult = field(default_factory=LoadResult)  # after input overlays
    originals: list[Manifest] = field(default_factory=list)  # inputs as loaded, before overlays
    overlays: list[Overlay] = field(default_factory=list)
    runtimes: RuntimeIndex | None = None
    resolved: list[tuple[Manifest, Resolved | Problem]] = field(default_factory=list)
    summaries: list[TrainJobSummary] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)  # errors: the verb's exit 2 (or 1)
    warnings: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # every rendered object after the API server's create path (admit_outputs)
    outputs: list[AdmittedOutput] = field(default_factory=list)
    # filled by trainc check's validation stages
    findings: list[Finding] = field(default_factory=list)
    checked: list[PolicyObject] = field(default_factory=list)  # inputs, then outputs
    # Katib trials whose TrainJobs joined the inputs (compiler.plan.katib)
    katib_trials: list[Any] = field(default_factory=list)
    # the render chain's end (compiler.plan.katib.katib_outputs): inputs written out as
    # they are (Experiments: what GitOps applies), each with its stored form; and the
    # trials' renders, kept apart (only ``render --expand trials`` writes them)
    passed: list[tuple[RenderedObject, dict[str, Any]]] = field(default_factory=list)
    trial_summaries: list[TrainJobSummary] = field(default_factory=list)
    trial_outputs: list[AdmittedOutput] = field(default_factory=list)

    @property
    def objects(self) -> list[RenderedObject]:
        return [o for s in self.summaries for o in s.objects] + [o for o, _ in self.passed]

    @property
    def secret_requirements(self) -> list[SecretRequirement]:
        return [r for s in self.summaries for r in s.secret_requirements]

    def stored_objects(self) -> list[RenderedObject]:
        """The rendered objects as the API server stores them: their CRD's defaults applied
        (kinds without a known CRD as rendered)."""
        return [
            replace(o.rendered, data=o.stored) if o.stored is not None else o.rendered
            for o in self.outputs
        ] + [replace(o, data=stored) for o, stored in self.passed]

    @property
    def crds(self) -> CrdSet:
        return self.plan.crds

    def raise_problems(self) -> None:
        """An InputError with every problem, sorted, if there is any."""
        if self.problems:
            raise InputError(sorted_problems(self.problems))


Stage = Callable[[Build], None]
