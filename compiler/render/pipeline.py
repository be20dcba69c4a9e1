"""Render one TrainJob against its runtime: validate as the webhook would, then build.

This is the pure heart of trainc: JSON data in, JSON objects out; no I/O, no clock,
no randomness.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from compiler.errors import FieldError
from compiler.render.framework import (
    Phases,
    RenderOptions,
    TrainJobContext,
    run_phases,
    run_validation,
)
from compiler.render.info import JsonObject, SecretRequirement, json_copy
from compiler.render.registry import default_phases
from compiler.render.runtime_info import new_runtime_info


@dataclass
class RenderResult:
    objects: list[JsonObject] = field(default_factory=list)
    errors: list[FieldError] = field(default_factory=list)
    secret_requirements: list[SecretRequirement] = field(default_factory=list)


def render_trainjob(
    trainjob: JsonObject,
    runtime_spec: JsonObject,
    options: RenderOptions | None = None,
    phases: Phases | None = None,
    validate_only: bool = False,
) -> RenderResult:
    """Objects the controller creates for a defaulted ``trainjob`` and runtime ``spec``.

    The admission checks run first, on the same Info, as the webhook would on create;
    nothing is rendered when they reject the TrainJob, or with ``validate_only``.
    Neither input is modified.
    """
    phases = phases or default_phases()
    job = TrainJobContext(json_copy(trainjob), options or RenderOptions())
    info = new_runtime_info(job, runtime_spec)
    errors = run_validation(phases, info, job)
    if errors or validate_only:
        return RenderResult(errors=errors)
    objects = run_phases(phases, info, job)
    return RenderResult(
        objects=[apply_configuration_json(o) for o in objects],
        secret_requirements=list(info.secret_requirements),
    )


def apply_configuration_json(value: JsonObject) -> JsonObject:
    """JSON as an apply configuration serialises: nil and empty slices are omitted.

    Every apply-configuration field is a pointer, slice or map with ``omitempty``, so a
    ``null`` (e.g. a Go nil slice without omitempty on the typed side) or an empty list
    never reaches the API server; an empty object (a non-nil pointer to a struct) does::

        >>> apply_configuration_json({"env": [], "args": ["a"], "containers": None, "x": {"y": []}})
        {'args': ['a'], 'x': {}}
    """
    out: JsonObject = {}
    for key, item in value.items():
        cls = type(item)
        if cls is dict:
            out[key] = apply_configuration_json(item)
        elif cls is list:
            if item:
                out[key] = [apply_configuration_json(i) if type(i) is dict else i for i in item]
        elif item is not None:
            out[key] = item
    return out
