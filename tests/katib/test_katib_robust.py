"""Hostile Experiments never raise: seeded mutations of the conformance cases (values of
every JSON type put anywhere) through decoding, the webhooks, the trial plan and Katib's
substitution, and through ``trainc check``'s Katib stage. Before decode_problem checked the
shapes Katib's Go types decode, 43 of 3,000 such cases raised."""

from __future__ import annotations

import contextlib
import copy
import random
from collections.abc import Iterator
from typing import Any

from compiler.apiserver.manifest import Manifest, SourceMap
from compiler.katib.experiment import decode_problem, katib_config, set_default, validate
from compiler.katib.inputs import experiment_inputs
from compiler.katib.trials import SubstitutionError, plan_trials, substitute
from tests.katib.cases import cases

JUNK: list[Any] = [None, 1, -3, "x", [], {}, ["a"], {"a": 1}, True, 2.5, "${trialParameters.lr}"]


def _paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*path, index))


def _mutants(count: int, seed: int) -> Iterator[dict[str, Any]]:
    rng = random.Random(seed)
    base = [e for _, e in cases()]
    for _ in range(count):
        e = copy.deepcopy(rng.choice(base))
        paths = list(_paths(e))[1:]
        for _ in range(rng.randint(1, 3)):
            path = rng.choice(paths)
            node: Any = e
            try:
                for key in path[:-1]:
                    node = node[key]
                node[path[-1]] = copy.deepcopy(rng.choice(JUNK))
            except (KeyError, IndexError, TypeError):
                pass
        yield e


def test_pure_functions_never_raise() -> None:
    for e in _mutants(1500, 20261128):
        if decode_problem(e) is not None:
            continue
        defaulted = set_default(e)
        if validate(set_default(e), katib_config(), {}):
            continue
        for trial in plan_trials(defaulted, 2, 1).trials:
            with contextlib.suppress(SubstitutionError):
                substitute(defaulted, trial.name, "ns", trial.assignments, {})


def test_check_stage_never_raises() -> None:
    for e in _mutants(150, 7):
        found = experiment_inputs([Manifest(e, SourceMap("<fuzz>", {}))])
        for problem in found.problems:
            assert problem.message and problem.object is not None
