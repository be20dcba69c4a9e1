"""The whole pipeline for a set of input paths: load -> resolve -> render.

Pure apart from reading the input files; the CLI decides where results go.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from compiler.emit.output import RenderedObject, sorted_objects
from compiler.errors import InputError, Problem
from compiler.load.crds import CrdSet
from compiler.load.loader import LoadResult, load_collect
from compiler.load.manifest import JsonPath, Manifest
from compiler.render.constants import (
    CLUSTER_TRAINING_RUNTIME_KIND,
    TRAINING_RUNTIME_KIND,
    TRAINJOB_KIND,
)
from compiler.render.framework import RenderOptions
from compiler.render.info import SecretRequirement
from compiler.render.pipeline import render_trainjob
from compiler.render.registry import default_phases
from compiler.resolve.runtimes import RuntimeIndex, is_managed_by_trainer, resolve
from compiler.validate.runtime_webhook import deprecation_warning, validate_runtime

RUNTIME_KINDS = (TRAINING_RUNTIME_KIND, CLUSTER_TRAINING_RUNTIME_KIND)


@dataclass
class TrainJobSummary:
    namespace: str
    name: str
    objects: list[RenderedObject] = field(default_factory=list)
    secret_requirements: list[SecretRequirement] = field(default_factory=list)
    skipped: str | None = None
    # the inputs it came from (for reports that point an output field back to its input)
    trainjob: Manifest | None = field(default=None, repr=False, compare=False)
    runtime: Manifest | None = field(default=None, repr=False, compare=False)

    def line(self) -> str:
        head = f"{self.namespace}/{self.name}"
        if self.skipped:
            return f"{head}: skipped ({self.skipped})"
        parts = []
        for obj in sorted_objects(self.objects):
            kind = obj.data["kind"]
            spec = obj.data.get("spec", {})
            if kind == "JobSet":
                jobs = spec.get("replicatedJobs") or []
                pods = sum(
                    (j.get("replicas", 1)) * (j["template"]["spec"].get("parallelism", 1))
                    for j in jobs
                )
                parts.append(f"JobSet ({len(jobs)} replicated jobs, {pods} pods)")
            elif kind == "PodGroup":
                group = obj.data["apiVersion"].split("/")[0]
                parts.append(f"PodGroup {group} (minMember {spec.get('minMember')})")
            else:
                parts.append(f"{kind} {obj.data['metadata']['name']}")
        for requirement in self.secret_requirements:
            parts.append(f"needs Secret {requirement.name} (generated on apply)")
        return f"{head}: " + ", ".join(parts)


@dataclass
class CompileResult:
    summaries: list[TrainJobSummary]
    warnings: list[Problem] = field(default_factory=list)
    loaded: LoadResult | None = field(default=None, repr=False, compare=False)

    @property
    def objects(self) -> list[RenderedObject]:
        return [o for s in self.summaries for o in s.objects]

    @property
    def secret_requirements(self) -> list[SecretRequirement]:
        return [r for s in self.summaries for r in s.secret_requirements]


_INDEX = re.compile(r"\[([^\]]*)\]")


def field_path_to_json_path(path: str) -> JsonPath:
    """``spec.trainer.env[2].name`` -> ``("spec", "trainer", "env", 2, "name")``.

    >>> field_path_to_json_path("spec.annotations[a.b/c]")
    ('spec', 'annotations', 'a.b/c')
    """
    parts: list[str | int] = []
    for segment in re.split(r"\.(?![^\[]*\])", path):
        head = segment.split("[", 1)[0]
        if head:
            parts.append(head)
        for index in _INDEX.findall(segment):
            parts.append(int(index) if index.isdigit() else index)
    return tuple(parts)


def _problem_order(problem: Problem) -> tuple[str, int, int, str]:
    location = problem.location
    if location is None:
        return ("", 0, 0, problem.message)
    return (location.file, location.line, location.column, problem.message)


def compile_paths(
    paths: list[str],
    options: RenderOptions | None = None,
    default_namespace: str = "default",
    crds: CrdSet | None = None,
) -> CompileResult:
    """Render every TrainJob found under ``paths``; raise one InputError with all problems."""
    loaded, load_problems = load_collect(paths, default_namespace=default_namespace, crds=crds)
    result, problems = compile_loaded(loaded, load_problems, options, default_namespace)
    if problems:
        raise InputError(problems)
    return result


def compile_loaded(
    loaded: LoadResult,
    load_problems: list[Problem],
    options: RenderOptions | None = None,
    default_namespace: str = "default",
) -> tuple[CompileResult, list[Problem]]:
    """Admit the runtimes and render every TrainJob that can be; the problems, sorted.

    Each problem's ``rule`` says which check found it (``webhook``, ``resolve``, or the
    loader's). Every TrainJob that can be rendered is, whatever the other problems.
    """
    # Keep going past rejected objects: an object the API server rejects is never
    # created, and what depends on it fails the way it would in the cluster.
    manifests: list[Manifest] = loaded.objects
    problems: list[Problem] = list(load_problems)
    warnings: list[Problem] = []
    admitted: list[Manifest] = []
    rejected: list[Manifest] = [m for m in loaded.rejected if m.kind in RUNTIME_KINDS]
    for runtime in (m for m in manifests if m.kind in RUNTIME_KINDS):
        errors = validate_runtime(runtime.data)
        for error in errors:
            location = runtime.locate(field_path_to_json_path(error.field))
            problems.append(Problem(error.message, location, runtime.ref, error.field, "webhook"))
        if (warning := deprecation_warning(runtime.data)) is not None:
            location = runtime.locate(("metadata", "labels"))
            warnings.append(Problem(warning, location, runtime.ref, rule="webhook"))
        # A runtime the webhook rejects is never created.
        (rejected if errors else admitted).append(runtime)
    index = RuntimeIndex.of(admitted, rejected)
    priority_classes = frozenset(
        m.name
        for m in loaded.others
        if m.kind == "PriorityClass" and m.api_version.startswith("scheduling.k8s.io/")
    )
    phases = default_phases(priority_classes)
    summaries: list[TrainJobSummary] = []
    for trainjob in (m for m in manifests if m.kind == TRAINJOB_KIND):
        summary = TrainJobSummary(
            trainjob.namespace or default_namespace, trainjob.name, trainjob=trainjob
        )
        summaries.append(summary)
        # The webhook validates every TrainJob; only the controller ignores one that
        # another controller manages (e.g. MultiKueue).
        managed = is_managed_by_trainer(trainjob)
        resolved = resolve(trainjob, index)
        if isinstance(resolved, Problem):
            resolved.rule = resolved.rule or "resolve"
            problems.append(resolved)
            continue
        summary.runtime = resolved.runtime
        result = render_trainjob(
            trainjob.data,
            resolved.runtime.data.get("spec") or {},
            options,
            phases,
            validate_only=not managed,
        )
        for error in result.errors:
            location = trainjob.locate(field_path_to_json_path(error.field))
            problems.append(Problem(error.message, location, trainjob.ref, error.field, "webhook"))
        if not managed:
            summary.skipped = f"managed by {trainjob.data['spec']['managedBy']}"
            continue
        summary.objects = [
            RenderedObject(summary.namespace, summary.name, obj) for obj in result.objects
        ]
        summary.secret_requirements = result.secret_requirements
    summaries.sort(key=lambda s: (s.namespace, s.name))
    return CompileResult(summaries, warnings, loaded), sorted(problems, key=_problem_order)
