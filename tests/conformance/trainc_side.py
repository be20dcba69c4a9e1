"""Run trainc on a case in-process, in the same shape as the oracle's answer."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compiler.errors import InputError, Problem
from compiler.plan.stages import compile_paths
from compiler.render.framework import RenderOptions


@dataclass
class TraincAnswer:
    objects: list[dict[str, Any]] | None
    problems: list[Problem] | None


def render(inputs: list[Path], owner_uid: str) -> TraincAnswer:
    try:
        result = compile_paths([str(p) for p in inputs], RenderOptions(owner_uid=owner_uid))
    except InputError as error:
        return TraincAnswer(objects=None, problems=error.problems)
    objects = [o.data for o in result.objects]
    # Secrets with generated data are requirements in trainc; compare their shape.
    objects += [r.as_object() for r in result.secret_requirements]
    return TraincAnswer(objects=objects, problems=None)
