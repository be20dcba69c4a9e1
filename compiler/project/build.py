"""Render or check one cluster of a project: load -> overlay(inputs) -> render -> overlay(outputs).

Overlays: the files of ``inputs.overlays`` (every cluster), the cluster's ``overlays``
and its namespaces' ``overlays`` are loaded together and applied by
:mod:`compiler.overlay.overlays` (imported when needed; a build without it skips them
with a note) in layer order **base -> cluster -> namespace**, each ``Overlay`` by the
``layer`` it declares; a namespace-layer overlay changes only objects in its
``metadata.namespace``. An overlay listed under a project namespace must be a
namespace-layer overlay of that namespace (else an ``overlay`` error). Input patches
run before render, output patches on the rendered objects; a target matching nothing
is a warning.

Schedulers: when a cluster declares ``schedulers``, every TrainJob rendered for it is
checked against them (rule ``scheduler``):

* a runtime whose ``podGroupPolicy`` asks for ``coscheduling`` or ``volcano`` in a
  cluster without that scheduler is an **error**: the PodGroup CRD is absent, so the
  apply fails, and without it the pods never schedule as a gang;
* a TrainJob with a ``kueue.x-k8s.io/queue-name`` label in a cluster without Kueue is a
  **warning**: the label is then inert and the job runs unqueued, which is valid.

A cluster that lists namespaces gets a warning (rule ``project``) for every TrainJob in
a namespace it does not list. A cluster without ``schedulers`` is not checked.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from compiler.driver import CompileResult, TrainJobSummary, compile_loaded
from compiler.emit.output import (
    MARKER,
    RenderedObject,
    check_replaceable,
    staged_directory,
    write_directory,
)
from compiler.errors import InputError, Problem, TraincError
from compiler.load.crds import trainer_crds
from compiler.load.loader import LoadResult, load_collect
from compiler.project.loader import Project
from compiler.project.model import Cluster
from compiler.render.framework import RenderOptions

if TYPE_CHECKING:
    from compiler.validate.check import CheckResult

__all__ = [
    "ClusterResult",
    "CompileFn",
    "check_cluster",
    "check_project",
    "cluster_compiler",
    "cluster_overlays",
    "render_cluster",
    "render_project",
    "write_project",
]

OVERLAYS_MODULE = "compiler.overlay.overlays"
KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
_GANG_SCHEDULERS = ("coscheduling", "volcano")

CompileFn = Callable[
    [LoadResult, list[Problem], RenderOptions | None, str], tuple[CompileResult, list[Problem]]
]


@dataclass
class ClusterResult:
    """A cluster's render: the CompileResult, the problems (errors) and notes."""

    cluster: str
    result: CompileResult
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def objects(self) -> list[RenderedObject]:
        return self.result.objects

    @property
    def summaries(self) -> list[TrainJobSummary]:
        return self.result.summaries

    @property
    def warnings(self) -> list[Problem]:
        return self.result.warnings

    @property
    def secret_requirements(self) -> list[Any]:
        return self.result.secret_requirements


# --- overlays ---------------------------------------------------------------------------


def _overlays_module(notes: list[str]) -> ModuleType | None:
    try:
        return importlib.import_module(OVERLAYS_MODULE)
    except ModuleNotFoundError as error:
        if error.name != OVERLAYS_MODULE:
            raise
        notes.append(f"overlays skipped: {OVERLAYS_MODULE} is not available in this build")
        return None


def _problems(items: Iterable[Any], rule: str) -> list[Problem]:
    out = []
    for item in items:
        problem = item if isinstance(item, Problem) else Problem(str(item))
        problem.rule = problem.rule or rule
        out.append(problem)
    return out


def _load_overlays(
    project: Project, cluster: Cluster, notes: list[str]
) -> tuple[ModuleType | None, list[Any], list[Problem]]:
    """The cluster's overlays (base, cluster, then namespace entries), loaded in one go.

    An overlay listed under a project namespace must be a ``layer: namespace`` overlay
    of that namespace: the project and the overlay file must agree on where it applies.
    """
    layers = project.overlay_layers(cluster)
    if not layers:
        return None, [], []
    module = _overlays_module(notes)
    if module is None:
        return None, [], []
    overlays: list[Any] = []
    problems: list[Problem] = []
    for namespace, paths in layers:
        try:
            loaded = list(module.load_overlays([Path(p) for p in paths]))
        except InputError as error:
            problems += _problems(error.problems, "overlay")
            continue
        except TraincError as error:
            problems.append(Problem(str(error), rule="overlay"))
            continue
        for overlay in loaded:
            if namespace is not None and (
                overlay.layer != "namespace" or overlay.namespace != namespace
            ):
                problems.append(
                    Problem(
                        f"overlay {overlay.name} is listed for namespace {namespace!r} of "
                        f"cluster {cluster.name!r} in {project.path}, but it is not a "
                        f"namespace-layer overlay of {namespace!r} (layer: namespace and "
                        f"metadata.namespace: {namespace})",
                        overlay.location,
                        rule="overlay",
                    )
                )
                continue
            overlays.append(overlay)
    return module, overlays, problems


def cluster_overlays(project: Project, cluster: Cluster) -> tuple[list[Any], list[Any]]:
    """The cluster's loaded overlays and the project's input manifests as loaded, before
    any overlay (field provenance layers the overlays itself). Problems are left to the
    render."""
    _, overlays, _ = _load_overlays(project, cluster, [])
    loaded, _ = load_collect(
        project.input_files(), cluster.default_namespace, trainer_crds(cluster.trainer)
    )
    return overlays, list(loaded.objects)


def _apply_outputs(
    compiled: CompileResult, module: ModuleType, overlays: list[Any], strict: bool
) -> tuple[list[Problem], list[Problem]]:
    """Output overlays on every rendered object at once; objects stay with their TrainJob."""
    owners = [(summary, obj) for summary in compiled.summaries for obj in summary.objects]
    if not owners:
        return [], []
    patched, errors, warnings = module.apply_output_overlays(
        [obj.data for _, obj in owners], overlays, strict
    )
    for summary in compiled.summaries:
        summary.objects = []
    for (summary, obj), data in zip(owners, patched, strict=True):
        summary.objects.append(replace(obj, data=data))
    return _problems(errors, "overlay"), _problems(warnings, "overlay")


# --- cluster checks ---------------------------------------------------------------------


def _scheduler_problems(
    cluster: Cluster, summaries: list[TrainJobSummary]
) -> tuple[list[Problem], list[Problem]]:
    errors: list[Problem] = []
    warnings: list[Problem] = []
    present = ", ".join(cluster.schedulers or []) or "none"
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


def _namespace_warnings(cluster: Cluster, summaries: list[TrainJobSummary]) -> list[Problem]:
    if not cluster.namespaces:
        return []
    declared = {n.name for n in cluster.namespaces}
    warnings = []
    for summary in summaries:
        if summary.trainjob is not None and summary.namespace not in declared:
            warnings.append(
                Problem(
                    f"namespace {summary.namespace!r} is not one of cluster "
                    f"{cluster.name!r}'s namespaces ({', '.join(sorted(declared))})",
                    summary.trainjob.locate(("metadata", "namespace")),
                    summary.trainjob.ref,
                    "metadata.namespace",
                    "project",
                )
            )
    return warnings


# --- the pipeline -----------------------------------------------------------------------


def cluster_compiler(
    project: Project, cluster: Cluster, notes: list[str], strict: bool = False
) -> CompileFn:
    """A drop-in for :func:`compiler.driver.compile_loaded` that adds the cluster's
    overlays and checks (``trainc check`` takes it through ``CheckOptions.compile``).

    ``strict``: an overlay patch whose target matches nothing is an error, not a warning.
    """
    module, overlays, overlay_problems = _load_overlays(project, cluster, notes)

    def compile_for_cluster(
        loaded: LoadResult,
        load_problems: list[Problem],
        options: RenderOptions | None = None,
        default_namespace: str = "default",
    ) -> tuple[CompileResult, list[Problem]]:
        problems = [*load_problems, *overlay_problems]
        warnings: list[Problem] = []
        if module is not None and overlays:
            objects, found, warned = module.apply_input_overlays(loaded.objects, overlays, strict)
            loaded = replace(loaded, objects=list(objects))
            problems += _problems(found, "overlay")
            warnings += _problems(warned, "overlay")
        compiled, compile_problems = compile_loaded(loaded, [], options, default_namespace)
        problems += compile_problems
        if module is not None and overlays:
            found, warned = _apply_outputs(compiled, module, overlays, strict)
            problems += found
            warnings += warned
        errors, warned = _scheduler_problems(cluster, compiled.summaries)
        problems += errors
        warnings += warned + _namespace_warnings(cluster, compiled.summaries)
        compiled.warnings = [*compiled.warnings, *warnings]
        return compiled, _sorted(problems)

    return compile_for_cluster


def _sorted(problems: list[Problem]) -> list[Problem]:
    def key(problem: Problem) -> tuple[str, int, int, str]:
        location = problem.location
        if location is None:
            return ("", 0, 0, problem.message)
        return (location.file, location.line, location.column, problem.message)

    return sorted(problems, key=key)


def render_cluster(
    project: Project,
    cluster: Cluster | str,
    options: RenderOptions | None = None,
    strict: bool = False,
) -> ClusterResult:
    """Render the project's inputs for one cluster; problems are returned, not raised.

    ``strict``: an overlay patch whose target matches nothing is an error, not a warning.
    """
    if isinstance(cluster, str):
        cluster = project.cluster(cluster)
    notes: list[str] = []
    compile_fn = cluster_compiler(project, cluster, notes, strict)
    loaded, load_problems = load_collect(
        project.input_files(), cluster.default_namespace, trainer_crds(cluster.trainer)
    )
    compiled, problems = compile_fn(loaded, load_problems, options, cluster.default_namespace)
    return ClusterResult(cluster.name, compiled, problems, notes)


def render_project(
    project: Project,
    clusters: Iterable[str] | None = None,
    options: RenderOptions | None = None,
    strict: bool = False,
) -> dict[str, ClusterResult]:
    """Every cluster (or those named, in project order), by name.

    An unknown name is an InputError pointing at the project's ``clusters`` list.
    """
    wanted = list(clusters) if clusters is not None else None
    if wanted is not None:
        for name in wanted:
            project.cluster(name)  # raises for an unknown name
    return {
        c.name: render_cluster(project, c, options, strict)
        for c in project.clusters
        if wanted is None or c.name in wanted
    }


# --- writing ----------------------------------------------------------------------------


def write_project(results: dict[str, ClusterResult], directory: Path, *, whole: bool) -> int:
    """Write ``<directory>/<cluster>/...``; returns the number of objects written.

    ``whole``: the tree holds every cluster and is swapped in at once (clusters no
    longer in the project disappear). Otherwise only the given clusters' folders are
    replaced, each atomically, and the others stay as they are.
    """
    directory = directory.resolve()
    check_replaceable(directory)
    count = 0
    if not whole:
        directory.mkdir(parents=True, exist_ok=True)
        (directory / MARKER).write_text("rendered by trainc; replaced whole on each run\n")
        for name, result in results.items():
            count += write_directory(result.objects, directory / name, result.secret_requirements)
        return count
    with staged_directory(directory) as staging:
        for name, result in results.items():
            count += write_directory(result.objects, staging / name, result.secret_requirements)
    return count


# --- checking ---------------------------------------------------------------------------


def check_cluster(
    project: Project, cluster: Cluster, schemas: Path | None = None, strict: bool = False
) -> CheckResult:
    """``trainc check`` of the project's inputs and policies for one cluster (a CheckResult).

    The cluster's namespaces and their labels feed policies' ``namespaceSelector``; its
    overlays and scheduler checks run inside the compile step.
    """
    from compiler.validate.check import CheckOptions, check_paths

    notes: list[str] = []
    options = CheckOptions(
        default_namespace=cluster.default_namespace,
        schemas=schemas,
        trainer_version=cluster.trainer,
        namespaces=project.namespace_labels(cluster),
        compile=cluster_compiler(project, cluster, notes, strict),
    )
    result = check_paths([*project.input_files(), *project.policy_files(cluster)], options)
    result.notes = sorted({*result.notes, *notes})
    return result


def check_project(
    project: Project,
    clusters: Iterable[str] | None = None,
    schemas: Path | None = None,
    strict: bool = False,
) -> CheckResult:
    """Every cluster's check merged into one CheckResult.

    A finding found the same way in several clusters is reported once; its ``cluster``
    detail names them all (``production, staging``).
    """
    from compiler.validate.check import CheckResult, _order
    from compiler.validate.findings import Finding

    wanted = list(clusters) if clusters is not None else None
    if wanted is not None:
        for name in wanted:
            project.cluster(name)
    merged: dict[Finding, list[str]] = {}
    combined = CheckResult([])
    notes: set[str] = set()
    policy_files: dict[str, None] = {}
    for cluster in project.clusters:
        if wanted is not None and cluster.name not in wanted:
            continue
        result = check_cluster(project, cluster, schemas, strict)
        for finding in result.findings:
            merged.setdefault(finding, []).append(cluster.name)
        combined.objects.extend(result.objects)
        combined.texts.update(result.texts)
        notes.update(result.notes)
        policy_files.update(dict.fromkeys(result.policy_files))
    combined.findings = sorted(
        (
            replace(finding, details=(*finding.details, ("cluster", ", ".join(names))))
            for finding, names in merged.items()
        ),
        key=_order,
    )
    combined.notes = sorted(notes)
    combined.policy_files = list(policy_files)
    return combined
