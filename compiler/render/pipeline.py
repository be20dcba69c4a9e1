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
        objects=[drop_empty_lists(o) for o in objects],
        secret_requirements=list(info.secret_requirements),
    )


def drop_empty_lists(value: JsonObject) -> JsonObject:
    """Apply configurations omit empty slices (every field is ``omitempty``).

    >>> drop_empty_lists({"env": [], "args": ["a"], "x": {"y": []}})
    {'args': ['a'], 'x': {}}
    """
    out: JsonObject = {}
    for key, item in value.items():
        if isinstance(item, list):
            if not item:
                continue
            out[key] = [drop_empty_lists(i) if isinstance(i, dict) else i for i in item]
        elif isinstance(item, dict):
            out[key] = drop_empty_lists(item)
        else:
            out[key] = item
    return out
