"""The fuzzer's surfaces: each a module with ``prepare()`` and ``run_case()``.

A surface module exposes::

    def prepare() -> object: ...          # once per worker, after the fork
    def run_case(state, seed, index, limit) -> tuple[Verdict, dict]: ...

``state`` is what ``prepare`` returned; the verdict uses :class:`tests.fuzz.engine.Verdict`
(traceback, hang, memory, unlocated, exit code). ``render`` is the original surface
(mutated inputs through ``render`` and ``check``); ``apply`` runs ``trainc apply``
against a fake API server whose answers each case spoils; the runner spreads the cases of a
run over the surfaces it is given, case ``i`` going to surface ``i mod k``.
"""

from __future__ import annotations

import importlib
from types import ModuleType

# name -> module; add a surface with one line here.
SURFACES: dict[str, str] = {
    "render": "tests.fuzz.engine",
    "argocd": "tests.fuzz.argocd_surface",
    "apply": "tests.fuzz.apply_surface",
    "migrate": "tests.fuzz.migrate_surface",
}


def weights(spec: str) -> dict[str, int]:
    """``"render:3,apply"`` -> ``{"render": 3, "apply": 1}``; a ValueError names what is wrong.

    >>> weights("render:3,apply")
    {'render': 3, 'apply': 1}
    """
    found: dict[str, int] = {}
    for item in filter(None, spec.split(",")):
        name, _, weight = item.partition(":")
        if name not in SURFACES:
            raise ValueError(f"unknown surface {name!r}; known: {', '.join(SURFACES)}")
        if weight and (not weight.isdigit() or int(weight) < 1):
            raise ValueError(f"the weight of {name} must be a whole number >= 1")
        found[name] = int(weight or "1")
    if not found:
        raise ValueError("no surface given")
    return found


def interleave(weights: dict[str, int]) -> list[str]:
    """One cycle of surface names, each as often as its weight and spread out (smooth
    weighted round robin), so that any stretch of cases mixes the surfaces.

    >>> interleave({"a": 2, "b": 1})
    ['a', 'b', 'a']
    """
    total = sum(weights.values())
    current = dict.fromkeys(weights, 0)
    cycle = []
    for _ in range(total):
        for name, weight in weights.items():
            current[name] += weight
        chosen = max(current, key=lambda name: current[name])
        current[chosen] -= total
        cycle.append(chosen)
    return cycle


def load(name: str) -> ModuleType:
    """The module of surface ``name``."""
    return importlib.import_module(SURFACES[name])
