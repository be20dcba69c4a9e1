"""Admission, resolution and render of loaded inputs.

Three steps, each a function the stage chain (:mod:`compiler.plan.stages`) calls; what
they make (:class:`~compiler.model.objects.TrainJobSummary`, its rendered objects) is in
:mod:`compiler.model.objects`:

    admit_runtimes    the runtime webhook: rejected runtimes are never created
    resolve_trainjobs the runtime each TrainJob references (or why there is none)
    render_trainjobs  the TrainJob webhook and the Trainer runtime framework

An object the API server or a webhook rejects is never created, so what depends on it
fails the way it would in the cluster; every TrainJob that can be rendered is.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from compiler.apiserver.manifest import Manifest, format_path, parse_field_path
from compiler.errors import InputError, JsonPath, Problem
from compiler.kube.roundtrip import RoundTripError
from compiler.load.loader import LoadResult
from compiler.model.objects import RenderedObject, TrainJobSummary
from compiler.render.extensions.base import (
    DECLARATION,
    declared_names,
    declares_extensions,
    runtime_annotations,
)
from compiler.render.extensions.catalog import plugins_for
from compiler.render.framework import Phases, Plugin, RenderOptions
from compiler.render.pipeline import render_trainjob
from compiler.render.registry import default_phases, default_plugins
from compiler.render.runtime_info import POD_TEMPLATE_OVERRIDES, RUNTIME_PATCHES, typed_template
from compiler.render.webhooks import (
    as_defaulted,
    defaulting_errors,
    deprecation_warning,
    validate_runtime,
    webhook_text,
)
from compiler.resolve.names import name_problems
from compiler.resolve.runtimes import (
    Resolved,
    RuntimeIndex,
    is_managed_by_trainer,
    resolve,
    runtime_ref_supported,
)
from compiler.upstream.names import (
    CLUSTER_TRAINING_RUNTIME_KIND,
    TRAINING_RUNTIME_KIND,
    TRAINJOB_KIND,
)
from compiler.upstream.versions import DEFAULT_TRAINER_VERSION

RUNTIME_KINDS = (TRAINING_RUNTIME_KIND, CLUSTER_TRAINING_RUNTIME_KIND)
# the Go type of each input kind the webhooks validate (typeinfo names)
TYPE_ROOTS = {
    TRAINJOB_KIND: "trainer.v1alpha1.TrainJob",
    TRAINING_RUNTIME_KIND: "trainer.v1alpha1.TrainingRuntime",
    CLUSTER_TRAINING_RUNTIME_KIND: "trainer.v1alpha1.ClusterTrainingRuntime",
}


@dataclass
class Admitted:
    """The runtimes admission lets through (and those it rejects), indexed for lookup."""

    index: RuntimeIndex
    problems: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)


def _undecodable(runtime: Manifest, version: str) -> Problem | None:
    """The runtime's JobSet template as the controller's Go client decodes it: a value
    the CRD schema lets through but the Go type cannot hold (an int-or-string port of
    2^63-1 in an int32) makes the runtime unusable, located at that value."""
    template = (runtime.data.get("spec") or {}).get("template") or {}
    spec = template.get("spec") if isinstance(template, dict) else None
    if not isinstance(spec, dict):
        return None
    try:
        typed_template(spec, version)
    except RoundTripError as error:
        path: JsonPath = ("spec", "template", "spec", *error.path)
        return Problem(
            f"the Trainer controller cannot decode this runtime: {error.message}",
            runtime.locate(path),
            runtime.ref,
            format_path(path),
            "crd-schema",
        )
    return None


def admit_runtimes(loaded: LoadResult, version: str = DEFAULT_TRAINER_VERSION) -> Admitted:
    """The runtime webhook on every runtime among the inputs, and the TrainJob defaulting
    webhook's decoding of every TrainJob (rule ``webhook``).

    Deprecated runtimes are admitted with a warning. A TrainJob the defaulting webhook
    cannot decode is denied before the schema is checked; trainc reports that denial
    beside the schema's errors.
    """
    problems: list[Problem] = []
    warnings: list[Problem] = []
    admitted: list[Manifest] = []
    rejected: list[Manifest] = [m for m in loaded.rejected if m.kind in RUNTIME_KINDS]
    for runtime in (m for m in loaded.objects if m.kind in RUNTIME_KINDS):
        errors = validate_runtime(runtime.data, version)
        root = TYPE_ROOTS[runtime.kind]
        for error in errors:
            location = runtime.locate(parse_field_path(error.field or ""))
            message = webhook_text(error, runtime.data, root)
            problems.append(Problem(message, location, runtime.ref, error.field, "webhook"))
        undecodable = None if errors else _undecodable(runtime, version)
        if undecodable is not None:
            problems.append(undecodable)
        if (warning := deprecation_warning(runtime.data, version)) is not None:
            location = runtime.locate(("metadata", "labels"))
            warnings.append(Problem(warning, location, runtime.ref, rule="webhook"))
        (rejected if errors or undecodable else admitted).append(runtime)
    # The schema and the Go types are generated from one another, so a TrainJob the schema
    # admits decodes; only those it rejects can meet the defaulting webhook's decode error
    # (which the cluster reports first).
    for trainjob in (m for m in loaded.rejected if m.kind == TRAINJOB_KIND):
        if (denied := defaulting_errors(trainjob.data)) is not None:
            message, path = denied
            location = trainjob.locate(path)
            problems.append(Problem(message, location, trainjob.ref, None, "webhook"))
    return Admitted(RuntimeIndex.of(admitted, rejected), problems, warnings)


def resolve_trainjobs(
    loaded: LoadResult, index: RuntimeIndex
) -> list[tuple[Manifest, Resolved | Problem]]:
    """Each TrainJob among the inputs with its runtime, or the problem (rule ``resolve``)."""
    out: list[tuple[Manifest, Resolved | Problem]] = []
    for trainjob in (m for m in loaded.objects if m.kind == TRAINJOB_KIND):
        resolved = resolve(trainjob, index)
        if isinstance(resolved, Problem):
            resolved.rule = resolved.rule or "resolve"
        out.append((trainjob, resolved))
    return out


def trainjob_name_problems(
    resolved: list[tuple[Manifest, Resolved | Problem]], version: str
) -> list[Problem]:
    """v2.0.0's TrainJob webhook checks each name first; an unsupported runtime kind ends
    its check with that error alone (compiler.resolve.names)."""
    problems: list[Problem] = []
    for trainjob, _ in resolved:
        if runtime_ref_supported(trainjob):
            problems += name_problems(trainjob, version)
    return problems


def priority_classes(others: Iterable[Manifest]) -> frozenset[str]:
    """Names of the PriorityClasses among the inputs (the TrainJob webhook looks them up)."""
    return frozenset(
        m.name
        for m in others
        if m.kind == "PriorityClass" and m.api_version.startswith("scheduling.k8s.io/")
    )


def _located(problem: Problem, trainjob: Manifest) -> Problem:
    """A plugin's problem, placed in the TrainJob at its field (or the nearest place)."""
    location = problem.location or trainjob.locate(parse_field_path(problem.field_path or ""))
    return Problem(
        problem.message,
        location,
        problem.object or trainjob.ref,
        problem.field_path,
        problem.rule or "render",
    )


def extension_plugins(
    runtime: Manifest, enabled: Iterable[str] | None
) -> tuple[list[Plugin], list[Problem]]:
    """The opt-in extension plugins ``runtime`` declares (``compiler.render.extensions``),
    or its problems (rule ``extension``) at the annotations that cause them."""
    annotations = runtime_annotations(runtime.data)
    if not declares_extensions(annotations):
        return [], []
    plugins, found = plugins_for(annotations, runtime.data.get("spec") or {}, enabled)
    problems = [
        Problem(
            message,
            runtime.locate(("metadata", "annotations", key or DECLARATION)),
            runtime.ref,
            f"metadata.annotations[{key or DECLARATION}]",
            "extension",
        )
        for key, message in found
    ]
    return plugins, problems


def extension_refusals(manifests: Iterable[Manifest]) -> list[Problem]:
    """Runtimes that declare extensions, refused for TrainJob delivery: the Trainer
    controller ignores the annotations and would run them without the extension."""
    problems = []
    for runtime in manifests:
        annotations = runtime_annotations(runtime.data)
        if runtime.kind not in RUNTIME_KINDS or not declares_extensions(annotations):
            continue
        names = ", ".join(declared_names(annotations)) or "an extension"
        problems.append(
            Problem(
                f"declares trainc extension(s) {names}: only trainc renders them (resolved "
                "delivery); the Trainer controller ignores the annotations and would run the "
                "runtime without them, so it cannot be delivered as a runtime (use --emit "
                "resolved / delivery: resolved)",
                runtime.locate(("metadata", "annotations", DECLARATION)),
                runtime.ref,
                f"metadata.annotations[{DECLARATION}]",
                "extension",
            )
        )
    return problems


def render_trainjobs(
    resolved: list[tuple[Manifest, Resolved | Problem]],
    others: Iterable[Manifest],
    options: RenderOptions | None = None,
    default_namespace: str = "default",
    extensions: Iterable[str] | None = None,
) -> tuple[list[TrainJobSummary], list[Problem]]:
    """The TrainJob webhook and the render of every TrainJob whose runtime resolved.

    The webhook validates every TrainJob; only the controller ignores one that another
    controller manages (e.g. MultiKueue): that one is summarised as skipped. A runtime
    that declares extensions renders with them when ``extensions`` (the cluster's) enables
    them; its problems are reported once per runtime and its TrainJobs not rendered.
    """
    options = options or RenderOptions()
    classes = priority_classes(others)
    phases = default_phases(classes)
    enabled = None if extensions is None else tuple(extensions)
    runtime_phases: dict[int, Phases | None] = {}
    problems: list[Problem] = []
    summaries: list[TrainJobSummary] = []
    for trainjob, outcome in resolved:
        summary = TrainJobSummary(
            trainjob.namespace or default_namespace, trainjob.name, trainjob=trainjob
        )
        summaries.append(summary)
        if isinstance(outcome, Problem):
            problems.append(outcome)
            continue
        managed = is_managed_by_trainer(trainjob, options.trainer_version)
        summary.runtime = outcome.runtime
        key = id(outcome.runtime)
        if key not in runtime_phases:
            plugins, extension_problems = extension_plugins(outcome.runtime, enabled)
            problems += extension_problems
            runtime_phases[key] = (
                None
                if extension_problems
                else (Phases.of(default_plugins(classes, plugins)) if plugins else phases)
            )
        chosen = runtime_phases[key]
        if chosen is None:
            continue
        # what the validating webhook and the controller see: the defaulted TrainJob
        defaulted = as_defaulted(trainjob.data)
        try:
            result = render_trainjob(
                defaulted,
                outcome.runtime.data.get("spec") or {},
                options,
                chosen,
                validate_only=not managed,
            )
        except InputError as failure:  # a plugin cannot build the objects (Flux numNodes)
            problems += [_located(problem, trainjob) for problem in failure.problems]
            continue
        except RoundTripError as undecodable:  # a patch the controller cannot decode
            # v2.0.0 patches with podSpecOverrides, v2.1.0 with podTemplateOverrides,
            # later releases with runtimePatches.
            patches = (
                "runtimePatches"
                if RUNTIME_PATCHES.on(options.trainer_version)
                else "podTemplateOverrides"
                if POD_TEMPLATE_OVERRIDES.on(options.trainer_version)
                else "podSpecOverrides"
            )
            problems.append(
                Problem(
                    f"the Trainer controller cannot decode the patched JobSet: {undecodable}",
                    trainjob.locate(("spec", patches)),
                    trainjob.ref,
                    f"spec.{patches}",
                    "webhook",
                )
            )
            continue
        for error in result.errors:
            location = trainjob.locate(parse_field_path(error.field or ""))
            message = webhook_text(error, defaulted, TYPE_ROOTS[TRAINJOB_KIND])
            problems.append(Problem(message, location, trainjob.ref, error.field, "webhook"))
        if not managed:
            summary.skipped = f"managed by {trainjob.data['spec']['managedBy']}"
            continue
        summary.objects = [
            RenderedObject(summary.namespace, summary.name, obj) for obj in result.objects
        ]
        summary.secret_requirements = result.secret_requirements
    summaries.sort(key=lambda s: (s.namespace, s.name))
    return summaries, problems
