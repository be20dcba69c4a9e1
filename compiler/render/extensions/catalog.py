"""The extensions trainc knows, and a runtime's declaration turned into plugins."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from compiler.render.extensions import elastic_torch, mpi_hydra, paddlepaddle, tensorflow, yunikorn
from compiler.render.extensions.base import (
    DECLARATION,
    PARAMETER_DOMAIN,
    AnnotationProblem,
    Extension,
    declared_names,
    parameter_key,
)
from compiler.render.framework import Plugin
from compiler.render.info import JsonObject

EXTENSIONS: dict[str, Extension] = {
    extension.name: extension
    for extension in (
        mpi_hydra.INTEL_EXTENSION,
        mpi_hydra.MPICH_EXTENSION,
        tensorflow.EXTENSION,
        paddlepaddle.EXTENSION,
        elastic_torch.EXTENSION,
        yunikorn.EXTENSION,
    )
}
NAMES = tuple(EXTENSIONS)


def _parameters(
    annotations: Mapping[str, str], declared: Iterable[str]
) -> tuple[dict[str, dict[str, object]], list[AnnotationProblem]]:
    """Each declared extension's parsed parameters; problems at the annotation keys."""
    wanted = set(declared)
    parsed: dict[str, dict[str, object]] = {name: {} for name in wanted}
    problems: list[AnnotationProblem] = []
    for key, value in annotations.items():
        prefix, _, parameter = key.partition("/")
        if not prefix.endswith(PARAMETER_DOMAIN.rstrip("/")) or key == DECLARATION:
            continue
        name = prefix.removesuffix(PARAMETER_DOMAIN.rstrip("/"))
        if name not in wanted:
            problems.append(
                (key, f"a parameter of extension {name!r}, which {DECLARATION} does not declare")
            )
            continue
        known = {p.name: p for p in EXTENSIONS[name].parameters}
        if parameter not in known:
            accepted = ", ".join(known) or "none"
            problems.append(
                (
                    key,
                    f"unknown parameter of extension {name}: {parameter!r} (accepted: {accepted})",
                )
            )
            continue
        try:
            parsed[name][parameter] = known[parameter].parse(value)
        except ValueError as bad:
            problems.append((key, f"extension {name} parameter {parameter}: {bad}"))
    return parsed, problems


def plugins_for(
    annotations: Mapping[str, str],
    runtime_spec: JsonObject,
    enabled: Iterable[str] | None,
) -> tuple[list[Plugin], list[AnnotationProblem]]:
    """The extension plugins a runtime declares, or the problems that prevent them.

    ``enabled`` is what the target cluster enables (``None``: no cluster, as with PATHs).
    """
    declared = declared_names(annotations)
    problems: list[AnnotationProblem] = []
    allowed = set(enabled or ())
    for name in declared:
        if name not in EXTENSIONS:
            problems.append(
                (DECLARATION, f"unknown extension {name!r} (known: {', '.join(NAMES)})")
            )
        elif name not in allowed:
            where = (
                "the cluster does not enable it (add it to the cluster's extensions: in trainc.yaml)"
                if enabled is not None
                else "extensions are enabled per cluster in trainc.yaml; with PATHs none is"
            )
            problems.append((DECLARATION, f"extension {name} is not enabled: {where}"))
    if len(set(declared)) != len(declared):
        problems.append((DECLARATION, "an extension is declared twice"))
    known = [name for name in dict.fromkeys(declared) if name in EXTENSIONS]
    for name in known:
        clash = [other for other in EXTENSIONS[name].conflicts if other in known]
        if clash and name < clash[0]:
            problems.append((DECLARATION, f"extensions {name} and {clash[0]} exclude each other"))
    parsed, parameter_problems = _parameters(annotations, known)
    problems += parameter_problems
    if problems:
        return [], problems
    for name in known:
        problems += [
            (DECLARATION, message)
            for message in EXTENSIONS[name].check_runtime(runtime_spec, parsed[name])
        ]
    if problems:
        return [], problems
    plugins: list[Plugin] = []
    for name in known:
        plugin = EXTENSIONS[name].plugin(parsed[name])
        own = [parameter_key(name, p.name) for p in EXTENSIONS[name].parameters]
        plugin.runtime_inputs = (DECLARATION, *(key for key in own if key in annotations))
        plugins.append(plugin)
    return plugins, []
