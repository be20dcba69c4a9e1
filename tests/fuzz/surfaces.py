"""The fuzzer's surfaces: each a module with ``prepare()`` and ``run_case()``.

A surface module exposes::

    def prepare() -> object: ...          # once per worker, after the fork
    def run_case(state, seed, index, limit) -> tuple[Verdict, dict]: ...

``state`` is what ``prepare`` returned; the verdict uses :class:`tests.fuzz.engine.Verdict`
(traceback, hang, memory, unlocated, exit code). ``render`` is the original surface
(mutated inputs through ``render`` and ``check``); the runner spreads the cases of a
run over the surfaces it is given, case ``i`` going to surface ``i mod k``.
"""

from __future__ import annotations

import importlib
from types import ModuleType

# name -> module; add a surface with one line here.
SURFACES: dict[str, str] = {
    "render": "tests.fuzz.engine",
    "migrate": "tests.fuzz.migrate_surface",
}


def load(name: str) -> ModuleType:
    """The module of surface ``name``."""
    return importlib.import_module(SURFACES[name])
