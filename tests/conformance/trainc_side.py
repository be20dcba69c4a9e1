"""Run trainc on a case in-process, in the same shape as the oracle's answer.

The oracle answers at the Trainer's depth; what trainc finds below the JobSet (the
problems of the downstream rules, tests.conformance.downstream) is kept apart in
``downstream``, beside the Trainer's objects, so that both are compared: the objects
with expected.yaml, the downstream problems with downstream.yaml.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compiler.errors import InputError, Problem, sorted_problems
from compiler.model.build import Build
from compiler.plan.build_plan import plan_for_paths
from compiler.plan.stages import run
from compiler.upstream.versions import DEFAULT_TRAINER_VERSION
from tests.conformance.downstream import is_downstream


@dataclass
class TraincAnswer:
    objects: list[dict[str, Any]] | None
    problems: list[Problem] | None
    # With objects: trainc's refusals below the JobSet (rules jobset-webhook, downstream).
    downstream: list[Problem] = field(default_factory=list)


def build(inputs: list[Path], owner_uid: str, version: str = DEFAULT_TRAINER_VERSION) -> Build:
    """The whole render chain on ``inputs``, as ``trainc render`` runs it."""
    plan = plan_for_paths([str(p) for p in inputs], owner_uid=owner_uid, trainer_version=version)
    return run(plan)


def render(
    inputs: list[Path], owner_uid: str, version: str = DEFAULT_TRAINER_VERSION
) -> TraincAnswer:
    """The Trainer's objects and the refusals below them; or, when trainc rejects the
    inputs at the Trainer's depth, every problem (the downstream ones among them)."""
    try:
        result = build(inputs, owner_uid, version)
    except InputError as error:
        return TraincAnswer(objects=None, problems=error.problems)
    if any(not is_downstream(p) for p in result.problems):
        return TraincAnswer(objects=None, problems=sorted_problems(result.problems))
    objects = [o.data for o in result.objects]
    # Secrets with generated data are requirements in trainc; compare their shape.
    objects += [r.as_object() for r in result.secret_requirements]
    return TraincAnswer(objects=objects, problems=None, downstream=result.problems)
