"""Run trainc on a case in-process, in the same shape as the oracle's answer."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compiler.errors import InputError, Problem
from compiler.plan.stages import compile_paths
from compiler.render.framework import RenderOptions
from compiler.upstream.versions import DEFAULT_TRAINER_VERSION


@dataclass
class TraincAnswer:
    objects: list[dict[str, Any]] | None
    problems: list[Problem] | None


def render(
    inputs: list[Path], owner_uid: str, version: str = DEFAULT_TRAINER_VERSION
) -> TraincAnswer:
    try:
        options = RenderOptions(owner_uid=owner_uid, trainer_version=version)
        result = compile_paths([str(p) for p in inputs], options)
    except InputError as error:
        return TraincAnswer(objects=None, problems=error.problems)
    objects = [o.data for o in result.objects]
    # Secrets with generated data are requirements in trainc; compare their shape.
    objects += [r.as_object() for r in result.secret_requirements]
    return TraincAnswer(objects=objects, problems=None)
