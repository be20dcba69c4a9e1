"""The stage chain: a build plan in, a :class:`~compiler.model.build.Build` out.

Each stage is a small function that reads the build so far and adds to it (its
docstring says which fields it reads and which it adds); a chain is a tuple of stages,
so what the driver (:mod:`compiler.plan.driver`) runs is data a reader (and mypy) can
follow::

    RENDER_STAGES = (load, load_overlays, overlay_inputs, admit, resolve, render,
                     overlay_outputs, annotate_for_gitops, admit_outputs, check_downstream,
                     check_cluster)

``trainc check`` runs the same chain with the policy files loaded too, then its
validation stages (:data:`compiler.plan.check.CHECK_STAGES`). A stage never raises for
bad input: it records a :class:`~compiler.errors.Problem` and the chain goes on, so one
run reports everything; the verb decides what the problems mean.

Overlays apply base -> cluster -> namespace (each ``Overlay`` by the layer it declares);
an overlay listed under a project namespace must be a namespace-layer overlay of that
namespace. Cluster checks (rule ``scheduler``): a runtime whose ``podGroupPolicy`` asks
for a gang scheduler the cluster does not run is an error (the PodGroup CRD is absent);
a Kueue queue label in a cluster without Kueue is a warning (the label is inert); in a
cluster that runs Kueue, a queued TrainJob delivered resolved is an error (rule ``kueue``)
unless the cluster sends its JobSets to Kueue's JobSet integration
(:mod:`compiler.plan.queues`). A TrainJob in a namespace the cluster does not declare is a
warning (rule ``project``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compiler.apiserver.crds import admit as admit_object
from compiler.apiserver.manifest import Manifest
from compiler.errors import (
    FieldError,
    InputError,
    ObjectRef,
    Problem,
    TraincError,
    sorted_problems,
)
from compiler.errors import warning_order as warning_order  # its home before (callers)
from compiler.expand.downstream import (
    downstream_problems,
    expanded_input_problems,
    never_created_warnings,
)
from compiler.load.loader import load_collect, load_previous
from compiler.model.build import Build, Stage
from compiler.model.objects import TrainJobSummary
from compiler.model.plan import BuildPlan, ClusterTarget
from compiler.plan.build_plan import plan_for_paths
from compiler.plan.compile import (
    admit_runtimes,
    extension_refusals,
    render_trainjobs,
    resolve_trainjobs,
    trainjob_name_problems,
)
from compiler.plan.gitops import annotate_for_gitops
from compiler.plan.katib import katib_outputs, katib_relabel_problems, katib_trials
from compiler.plan.outputs import admit_output, output_crds
from compiler.plan.queues import queue_delivery_problems, queue_jobsets
from compiler.render.framework import RenderOptions

if TYPE_CHECKING:  # overlays are loaded only by plans that have some (startup time)
    from compiler.overlay.overlays import Overlay

__all__ = [
    "RENDER_STAGES",
    "compile_paths",
    "run",
    "run_each",
    "warning_order",
]

KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
_GANG_SCHEDULERS = ("coscheduling", "volcano")


def _with_rule(items: Iterable[Problem], rule: str) -> list[Problem]:
    for problem in items:
        problem.rule = problem.rule or rule
    return list(items)


# --- load -------------------------------------------------------------------------------


def _load(build: Build, paths: list[str]) -> None:
    plan = build.plan
    previous = (
        load_previous([str(p) for p in plan.previous], plan.default_namespace, plan.crds)
        if plan.previous is not None
        else None
    )
    loaded, problems = load_collect(paths, plan.default_namespace, plan.crds, previous)
    build.loaded = loaded
    build.originals = list(loaded.objects)
    build.problems += problems + expanded_input_problems(loaded.others)
    build.warnings += loaded.warnings


def load(build: Build) -> None:
    """Read the inputs: YAML, the API server's create path for Trainer kinds.

    Reads ``plan``; adds ``loaded``, ``originals``, ``problems``, ``warnings``."""
    _load(build, list(build.plan.inputs))


def load_with_policies(build: Build) -> None:
    """Read the inputs and the plan's policy files (``trainc check``); as :func:`load`."""
    _load(build, [*build.plan.inputs, *build.plan.policies])


# --- overlays ---------------------------------------------------------------------------


def _layer_overlays(
    cluster: ClusterTarget, namespace: str | None, paths: tuple[str, ...]
) -> tuple[list[Overlay], list[Problem]]:
    from compiler.overlay.overlays import load_overlays

    try:
        loaded = load_overlays([Path(p) for p in paths], cluster.root)
    except InputError as error:
        return [], _with_rule(error.problems, "overlay")
    except TraincError as error:
        return [], [Problem(str(error), rule="overlay")]
    overlays: list[Overlay] = []
    problems: list[Problem] = []
    for overlay in loaded:
        if namespace is not None and (
            overlay.layer != "namespace" or overlay.namespace != namespace
        ):
            problems.append(
                Problem(
                    f"overlay {overlay.name} is listed for namespace {namespace!r} of "
                    f"cluster {cluster.name!r} in {cluster.project_file}, but it is not a "
                    f"namespace-layer overlay of {namespace!r} (layer: namespace and "
                    f"metadata.namespace: {namespace})",
                    overlay.location,
                    rule="overlay",
                )
            )
            continue
        overlays.append(overlay)
    return overlays, problems


def load_overlays_of_cluster(build: Build) -> None:
    """Read the cluster's overlays, layer by layer (none without a project cluster).

    Reads ``plan.cluster``; adds ``overlays``, ``problems``."""
    cluster = build.plan.cluster
    if cluster is None:
        return
    for namespace, paths in cluster.overlay_layers:
        overlays, problems = _layer_overlays(cluster, namespace, paths)
        build.overlays += overlays
        build.problems += problems


def overlay_inputs(build: Build) -> None:
    """Input-stage patches on the runtimes and TrainJobs, then the locks.

    Reads ``overlays``, ``loaded``; replaces ``loaded`` (patched objects admitted again);
    adds ``problems``, ``warnings``."""
    if not build.overlays:
        return
    from compiler.overlay.overlays import apply_input_overlays

    objects, errors, warnings = apply_input_overlays(
        build.loaded.objects, build.overlays, build.plan.strict
    )
    admitted, rejected, problems = _readmit(build, build.loaded.objects, objects)
    build.loaded = replace(
        build.loaded, objects=admitted, rejected=[*build.loaded.rejected, *rejected]
    )
    build.problems += _with_rule(errors, "overlay") + problems
    build.warnings += _with_rule(warnings, "overlay")


def _readmit(
    build: Build, before: list[Manifest], after: list[Manifest]
) -> tuple[list[Manifest], list[Manifest], list[Problem]]:
    """Objects an input overlay changed, through the API server's create path again (what
    is applied is the patched object): admitted ones, rejected ones, their problems,
    located in the overlay where a patch wrote the field (rule ``overlay``)."""
    from compiler.apiserver.crd_rules import check_rules

    admitted: list[Manifest] = []
    rejected: list[Manifest] = []
    problems: list[Problem] = []
    for original, manifest in zip(before, after, strict=True):
        if manifest is original:
            admitted.append(manifest)
            continue
        crd = build.crds.get(manifest.api_version, manifest.kind)
        if crd is None:
            errors = [
                FieldError.at(
                    ("apiVersion",),
                    "apiVersion",
                    f"an overlay made this {manifest.api_version} {manifest.kind}, "
                    "not a Trainer object",
                )
            ]
        else:
            errors = admit_object(manifest.data, crd, build.crds)
            errors += check_rules(manifest.data, crd, errors)
        for error in errors:
            problems.append(
                Problem(
                    f"after the input overlays: {error.message}",
                    manifest.locate(error.path),
                    original.ref,
                    error.field,
                    "overlay",
                )
            )
        (rejected if errors else admitted).append(manifest)
    return admitted, rejected, problems


def overlay_outputs(build: Build) -> None:
    """Output-stage patches on every rendered object; objects stay with their TrainJob.

    Reads ``overlays``, ``summaries``; replaces each summary's ``objects``; adds
    ``problems``, ``warnings``."""
    owners = [(summary, obj) for summary in build.summaries for obj in summary.objects]
    if not build.overlays or not owners:
        return
    from compiler.overlay.overlays import apply_output_overlays

    patched, errors, warnings = apply_output_overlays(
        [obj.data for _, obj in owners], build.overlays, build.plan.strict
    )
    for summary in build.summaries:
        summary.objects = []
    for (summary, obj), data in zip(owners, patched, strict=True):
        summary.objects.append(replace(obj, data=data))
        if data is not obj.data and not errors:
            build.problems += _patched_output_problems(summary, obj.data, data)
    build.problems += _with_rule(errors, "overlay")
    build.warnings += _with_rule(warnings, "overlay")


def _patched_output_problems(
    summary: TrainJobSummary, rendered: dict[str, Any], data: dict[str, Any]
) -> list[Problem]:
    """An object an output overlay changed must keep the ``spec`` the controller rendered
    (a JobSet without one does nothing; its CRD does not require one): rule ``overlay``.
    Its schema is checked with every output (:func:`admit_outputs`)."""
    if summary.trainjob is None:
        return []
    if not isinstance(rendered.get("spec"), dict) or isinstance(data.get("spec"), dict):
        return []
    ref = ObjectRef(str(data.get("kind")), str(data["metadata"].get("name")), summary.namespace)
    return [
        Problem(
            f"the output overlays remove the spec trainc rendered for {ref}: the object "
            "would do nothing (patch fields of the spec instead)",
            summary.trainjob.locate(()),
            ref,
            "spec",
            "overlay",
        )
    ]


# --- admission, resolution, render ------------------------------------------------------


def admit(build: Build) -> None:
    """The runtime webhook; rejected runtimes are never created.

    Reads ``loaded``; adds ``runtimes``, ``problems``, ``warnings``."""
    admitted = admit_runtimes(build.loaded, build.plan.trainer_version)
    build.runtimes = admitted.index
    build.problems += admitted.problems
    build.warnings += admitted.warnings


def resolve(build: Build) -> None:
    """The runtime each TrainJob references.

    Reads ``loaded``, ``runtimes``; adds ``resolved``, ``problems``."""
    assert build.runtimes is not None, "admit runs before resolve"
    build.resolved = resolve_trainjobs(build.loaded, build.runtimes)
    build.problems += trainjob_name_problems(build.resolved, build.plan.trainer_version)


def render(build: Build) -> None:
    """The TrainJob webhook and the Trainer runtime framework, per TrainJob.

    Reads ``resolved``, ``loaded``; adds ``summaries``, ``problems``."""
    cluster = build.plan.cluster
    summaries, problems = render_trainjobs(
        build.resolved,
        build.loaded.others,
        build.plan.render,
        build.plan.default_namespace,
        None if cluster is None else cluster.extensions,
    )
    build.summaries = summaries
    build.problems += problems
    if cluster is not None and cluster.delivery == "trainjobs":
        build.problems += extension_refusals(build.loaded.objects)


def admit_outputs(build: Build) -> None:
    """Each rendered object through its CRD's create path: what the API server refuses,
    the controller cannot create (:mod:`compiler.plan.outputs`).

    Reads ``summaries``; adds ``outputs``, ``problems``, ``notes``."""
    crds = output_crds(build.crds, build.plan.trainer_version)
    unvalidated: set[str] = set()
    for summary in build.summaries:
        if summary.trainjob is None:
            continue
        for rendered in summary.objects:
            admitted = admit_output(summary, rendered, crds, build.plan.trainer_version)
            build.outputs.append(admitted)
            build.problems += admitted.problems
            if not admitted.validated:
                data = rendered.data
                unvalidated.add(f"{data.get('kind', '')} {data.get('apiVersion', '')}")
    build.notes += [
        f"{kind} outputs are not validated: no CRD for it is pinned (pass one with --schemas DIR)"
        for kind in sorted(unvalidated)
    ]


def check_downstream(build: Build) -> None:
    """Below each JobSet the API server stored: the JobSet webhooks, and the API server
    on the Jobs and Pods the controllers would create (:mod:`compiler.expand.downstream`).

    Reads ``outputs``; adds to ``problems``, ``warnings`` (a replicated job that never
    runs)."""
    for output in build.outputs:
        trainjob = output.summary.trainjob
        data = output.rendered.data
        if output.stored is None or trainjob is None or data.get("kind") != "JobSet":
            continue
        build.warnings += never_created_warnings(
            output.stored, data, trainjob, output.summary.runtime, build.plan.trainer_version
        )
        build.problems += downstream_problems(
            output.stored,
            data,
            trainjob,
            output.summary.runtime,
            build.plan.trainer_version,
            build.overlays,  # a bad field an output overlay wrote: at its patch line
        )


# --- cluster checks ---------------------------------------------------------------------


def _scheduler_problems(
    cluster: ClusterTarget, summaries: list[TrainJobSummary]
) -> tuple[list[Problem], list[Problem]]:
    errors: list[Problem] = []
    warnings: list[Problem] = []
    present = ", ".join(cluster.schedulers or ()) or "none"
    reported: set[tuple[str, str]] = set()
    for summary in summaries:
        runtime, trainjob = summary.runtime, summary.trainjob
        if runtime is not None and trainjob is not None and not summary.skipped:
            policy = (runtime.data.get("spec") or {}).get("podGroupPolicy") or {}
            for scheduler in _GANG_SCHEDULERS:
                key = (str(runtime.ref), scheduler)
                if (
                    scheduler in policy
                    and cluster.has_scheduler(scheduler) is False
                    and key not in reported
                ):
                    reported.add(key)
                    errors.append(
                        Problem(
                            f"gang scheduling with {scheduler} (used by {trainjob.ref}), but "
                            f"cluster {cluster.name!r} does not run it (schedulers: {present})",
                            runtime.locate(("spec", "podGroupPolicy", scheduler)),
                            runtime.ref,
                            f"spec.podGroupPolicy.{scheduler}",
                            "scheduler",
                        )
                    )
        if trainjob is None:
            continue
        labels = (trainjob.data.get("metadata") or {}).get("labels") or {}
        if KUEUE_QUEUE_LABEL in labels and cluster.has_scheduler("kueue") is False:
            warnings.append(
                Problem(
                    f"cluster {cluster.name!r} does not run Kueue (schedulers: {present}): "
                    "the queue label has no effect and the job is not queued",
                    trainjob.locate(("metadata", "labels", KUEUE_QUEUE_LABEL)),
                    trainjob.ref,
                    f"metadata.labels[{KUEUE_QUEUE_LABEL}]",
                    "scheduler",
                )
            )
    return errors, warnings


def _namespace_warnings(cluster: ClusterTarget, summaries: list[TrainJobSummary]) -> list[Problem]:
    if not cluster.namespaces:
        return []
    declared = sorted(cluster.namespaces)
    return [
        Problem(
            f"namespace {summary.namespace!r} is not one of cluster "
            f"{cluster.name!r}'s namespaces ({', '.join(declared)})",
            summary.trainjob.locate(("metadata", "namespace")),
            summary.trainjob.ref,
            "metadata.namespace",
            "project",
        )
        for summary in summaries
        if summary.trainjob is not None and summary.namespace not in cluster.namespaces
    ]


def check_cluster(build: Build) -> None:
    """What the target cluster must run for these jobs (project clusters only).

    Reads ``plan.cluster``, ``summaries``; adds ``problems``, ``warnings``."""
    cluster = build.plan.cluster
    if cluster is None:
        return
    errors, warnings = _scheduler_problems(cluster, build.summaries)
    build.problems += errors + queue_delivery_problems(cluster, build.summaries)
    build.warnings += warnings + _namespace_warnings(cluster, build.summaries)


# --- chains -----------------------------------------------------------------------------

RENDER_STAGES: tuple[Stage, ...] = (
    load,
    katib_trials,
    load_overlays_of_cluster,
    overlay_inputs,
    admit,
    resolve,
    render,
    overlay_outputs,
    queue_jobsets,
    annotate_for_gitops,
    admit_outputs,
    check_downstream,
    check_cluster,
    katib_relabel_problems,
    katib_outputs,  # the last: check's chain runs the others, not this (plan/check.py)
)


def run(plan: BuildPlan, stages: tuple[Stage, ...] = RENDER_STAGES) -> Build:
    """Run ``stages`` in order on a fresh build of ``plan``; problems come back sorted,
    warnings too (:func:`warning_order`)."""
    build = Build(plan)
    for stage in stages:
        stage(build)
    build.problems = sorted_problems(build.problems)
    build.warnings = sorted(build.warnings, key=warning_order)
    return build


def run_each(plans: Iterable[BuildPlan]) -> dict[str, Build]:
    """Each plan's build, by cluster name (a plan of PATHs has the name ``""``)."""
    return {plan.cluster_name or "": run(plan) for plan in plans}


def compile_paths(
    paths: list[str],
    options: RenderOptions | None = None,
    default_namespace: str = "default",
    schemas: Path | None = None,
) -> Build:
    """Render every TrainJob found under ``paths``; one InputError with every problem."""
    options = options or RenderOptions()
    plan = plan_for_paths(
        paths,
        default_namespace=default_namespace,
        schemas=schemas,
        owner_uid=options.owner_uid,
        trainer_version=options.trainer_version,
    )
    build = run(plan)
    build.raise_problems()
    return build
