"""Render one TrainJob against its runtime: validate as the webhook would, then build.

This is the pure heart of trainc: JSON data in, JSON objects out; no I/O, no clock,
no randomness.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from compiler.render.framework import (
    FieldError,
    Plugin,
    RenderOptions,
    TrainJobContext,
    run_phases,
    run_validation,
)
from compiler.render.info import JsonObject, SecretRequirement
from compiler.render.registry import default_plugins
from compiler.render.runtime_info import new_runtime_info


@dataclass
class RenderResult:
    objects: list[JsonObject] = field(default_factory=list)
    errors: list[FieldError] = field(default_factory=list)
    secret_requirements: list[SecretRequirement] = field(default_factory=list)


def validate_trainjob(
    trainjob: JsonObject, runtime_spec: JsonObject, plugins: list[Plugin] | None = None
) -> list[FieldError]:
    """The Trainer admission checks for ``trainjob`` on create (webhook path, R-12)."""
    job = TrainJobContext(copy.deepcopy(trainjob))
    info = new_runtime_info(job, copy.deepcopy(runtime_spec))
    return run_validation(plugins if plugins is not None else default_plugins(), info, job)


def render_trainjob(
    trainjob: JsonObject,
    runtime_spec: JsonObject,
    options: RenderOptions | None = None,
    plugins: list[Plugin] | None = None,
) -> RenderResult:
    """Objects the controller creates for a defaulted ``trainjob`` and runtime ``spec``.

    Nothing is rendered when the admission checks reject the TrainJob.
    """
    plugins = plugins if plugins is not None else default_plugins()
    errors = validate_trainjob(trainjob, runtime_spec, plugins)
    if errors:
        return RenderResult(errors=errors)
    job = TrainJobContext(copy.deepcopy(trainjob), options or RenderOptions())
    info = new_runtime_info(job, copy.deepcopy(runtime_spec))
    objects = run_phases(plugins, info, job)
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
        if item is None:
            continue
        if isinstance(item, list):
            if not item:
                continue
            out[key] = [apply_configuration_json(i) if isinstance(i, dict) else i for i in item]
        elif isinstance(item, dict):
            out[key] = apply_configuration_json(item)
        else:
            out[key] = item
    return out
