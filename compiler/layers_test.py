"""Imports point down the layers of ``compiler.LAYERS``, never up (nor sideways).

Every import counts, including those inside functions: a lazy import that points up
is still a cycle between packages, only a hidden one.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

from compiler import LAYERS

PACKAGE = Path(__file__).resolve().parent


def layer_of(module: str) -> int | None:
    """``compiler.kube.quantity`` -> the index of ``kube``; None outside the layers.

    >>> LAYERS[layer_of("compiler.kube.quantity") or 0]
    'kube'
    """
    parts = module.split(".")
    if parts[0] != "compiler" or len(parts) < 2:
        return None  # the package root (its version) is free to import
    name = "cli" if parts[1] == "__main__" else parts[1]
    return LAYERS.index(name) if name in LAYERS else None


def imported_modules(source: str, submodules: bool = False) -> list[tuple[int, str]]:
    """The ``compiler`` modules a source imports, with their line numbers; with
    ``submodules``, ``from compiler.cli import render`` names ``compiler.cli.render``
    too (when that is a module of the package).

    >>> imported_modules("from compiler.cli import render", submodules=True)
    [(1, 'compiler.cli'), (1, 'compiler.cli.render')]
    """
    out: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append((node.lineno, node.module))
            if submodules:
                out += [
                    (node.lineno, f"{node.module}.{alias.name}")
                    for alias in node.names
                    if _is_module(f"{node.module}.{alias.name}")
                ]
        elif isinstance(node, ast.Import):
            out += [(node.lineno, alias.name) for alias in node.names]
    return [(line, name) for line, name in out if name.split(".")[0] == "compiler"]


def _is_module(name: str) -> bool:
    path = PACKAGE.parent.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def upward_imports(module: str, source: str) -> list[str]:
    """Each import of ``source`` (module ``module``) that points to a higher layer."""
    own = layer_of(module)
    if own is None:
        return []
    found = []
    for line, target in imported_modules(source):
        layer = layer_of(target)
        if layer is not None and layer > own:
            found.append(f"{module}:{line} imports {target} ({LAYERS[own]} -> {LAYERS[layer]})")
    return found


def _modules() -> list[tuple[str, Path]]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE.parent).with_suffix("")
        out.append((".".join(relative.parts).removesuffix(".__init__"), path))
    return out


def test_every_module_is_in_a_layer() -> None:
    strays = [
        module
        for module, _ in _modules()
        if module != "compiler" and layer_of(module) is None and module != "compiler.layers_test"
    ]
    assert strays == [], "add the package to compiler.LAYERS, at its place"


def _found(check: Callable[[str, str], list[str]]) -> list[str]:
    """What ``check`` finds in every module of the package but tests (a test may use
    anything to set up a case)."""
    return [
        problem
        for module, path in _modules()
        if not module.endswith("_test")
        for problem in check(module, path.read_text(encoding="utf-8"))
    ]


def test_no_import_points_up() -> None:
    assert _found(upward_imports) == []


def test_an_upward_import_is_caught_even_inside_a_function() -> None:
    source = "def f():\n    from compiler.plan.stages import run\n    return run\n"
    assert upward_imports("compiler.render.framework", source) == [
        "compiler.render.framework:2 imports compiler.plan.stages (render -> plan)"
    ]
    assert upward_imports("compiler.plan.check", source) == []


def _imports_of(module: str, source: str, wanted: Callable[[str], bool]) -> list[str]:
    """``module:line imports target`` for each other module ``source`` imports that is
    ``wanted``."""
    return [
        f"{module}:{line} imports {target}"
        for line, target in imported_modules(source, submodules=True)
        if wanted(target) and target != module
    ]


def sideways_verb_imports(module: str, source: str) -> list[str]:
    """Each import by a verb module (``compiler.cli.<verb>``) of another verb: what two
    verbs share belongs in ``compiler.cli.common`` or a layer below.

    >>> sideways_verb_imports("compiler.cli.diff", "from compiler.cli.apply import x")
    ['compiler.cli.diff:1 imports compiler.cli.apply']
    >>> sideways_verb_imports("compiler.cli.diff", "from compiler.cli.common import x")
    []
    >>> sideways_verb_imports("compiler.cli.diff", "from compiler.cli import apply")
    ['compiler.cli.diff:1 imports compiler.cli.apply']
    """
    if not module.startswith("compiler.cli.") or module == "compiler.cli.common":
        return []
    shared = ("compiler.cli", "compiler.cli.common")
    return _imports_of(
        module,
        source,
        lambda target: target.startswith("compiler.cli") and target not in shared,
    )


def test_no_verb_imports_another_verb() -> None:
    assert _found(sideways_verb_imports) == []


# The packages that only hold or write what the driver made: they import nothing of plan/
# (the driver, the stage chains, the chunks: everything there runs a chain or feeds one).
WRITERS = ("compiler.model", "compiler.emit")


def chain_imports(module: str, source: str) -> list[str]:
    """Each import by a writer (``compiler.emit``) or a record (``compiler.model``) of
    ``compiler.plan``: what runs a chain is the driver's, and the driver hands writers
    what it made. Whatever the order of :data:`compiler.LAYERS` says.

    >>> chain_imports("compiler.emit.output", "from compiler.plan.driver import render")
    ['compiler.emit.output:1 imports compiler.plan.driver']
    >>> chain_imports("compiler.emit.output", "from compiler.plan import driver")
    ['compiler.emit.output:1 imports compiler.plan', 'compiler.emit.output:1 imports compiler.plan.driver']
    >>> chain_imports("compiler.emit.output", "from compiler.model.build import Build")
    []
    """
    if not module.startswith(tuple(f"{w}." for w in WRITERS)) and module not in WRITERS:
        return []
    return _imports_of(
        module,
        source,
        lambda target: target == "compiler.plan" or target.startswith("compiler.plan."),
    )


def test_no_writer_imports_the_driver() -> None:
    found = _found(chain_imports)
    assert found == [], "emit/ writes what the driver hands it: pass it in, do not run a chain"
