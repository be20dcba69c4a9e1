"""A small adapter over the CEL engine, so the rest of trainc never imports it directly.

trainc evaluates CEL (the CRDs' ``x-kubernetes-validations``, later user policies) through
three calls::

    engine = default_engine()
    program = engine.compile("self.size() <= 2", {"self": DYN})
    program.evaluate({"self": [1, 2]})          # -> True (a plain Python value)

* :meth:`Engine.compile` raises :class:`CelCompileError` with the engine's message
  (``ERROR: <input>:1:5: ...`` with a caret line, the layout cel-go prints);
* :meth:`Program.evaluate` returns the result as plain Python data, or raises
  :class:`CelEvalError` whose text is reworded to cel-go's (``no such key: name``,
  ``index out of bounds: 3``, ``division by zero``, ``no such overload``) because the API
  server prints cel-go's texts, or :class:`CelBudgetExceeded` when the engine's
  evaluation budget ran out (a runaway expression stops, it never hangs);
* :attr:`Program.variables` says which of the declared variables the expression really
  references (the API server runs a rule that uses ``oldSelf`` only on update).

Variables are declared with a :data:`VarType`: ``dyn`` (any JSON-like value: ``None``,
bool, int, float, str, bytes, list, dict), ``timestamp`` (a timezone-aware
``datetime``) or ``duration`` (a ``timedelta``).

The engine is ``cel-expr-python`` (Google's C++ CEL runtime), chosen in
``shared/research/cel-engines.md``, with the Kubernetes CEL environment built on it in
:mod:`compiler.apiserver.cel.k8s`: CRD rules and ValidatingAdmissionPolicies both run
there. This module holds what every caller needs: the protocols, the errors, the
variable types and cel-go's wording of the engine's errors.

Engine limits: at most 10,000 comprehension iterations per evaluation (fixed by the
engine; the API server's limits are cost units instead); a ``timestamp``/``duration``
can only be a variable's own value, not nested inside a list or map.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal, Protocol

__all__ = [
    "DURATION",
    "DYN",
    "TIMESTAMP",
    "CelBudgetExceeded",
    "CelCompileError",
    "CelEvalError",
    "Engine",
    "Program",
    "VarType",
    "default_engine",
]

VarType = Literal["dyn", "timestamp", "duration"]
DYN: VarType = "dyn"
TIMESTAMP: VarType = "timestamp"
DURATION: VarType = "duration"


class CelCompileError(Exception):
    """The expression does not parse or type-check; ``str()`` is the engine's report."""


class CelEvalError(Exception):
    """Evaluation produced an error value; ``str()`` is cel-go's wording of it."""


class CelBudgetExceeded(CelEvalError):
    """The engine's evaluation budget ran out (the expression iterated too much)."""


class Program(Protocol):
    """One compiled expression."""

    source: str
    variables: frozenset[str]  # the declared variables the expression references
    result_type: str  # "bool", "string", "dyn", ... as the checker sees it

    def evaluate(self, bindings: Mapping[str, Any]) -> Any:
        """The value of the expression (plain Python data), or raise :class:`CelEvalError`."""
        ...


class Engine(Protocol):
    name: str

    def compile(self, source: str, variables: Mapping[str, VarType]) -> Program:
        """Parse and check ``source`` with ``variables`` declared, or raise CelCompileError."""
        ...


# --- cel-expr-python ---------------------------------------------------------------------

_STATUS_PREFIX = re.compile(r"^[A-Z_]+: ")
_STATUS_SUFFIX = re.compile(r" \[[A-Z_]+\]$")
_REWORD: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r'^Key not found in map : "(.*)"$', re.S), r"no such key: \1"),
    (re.compile(r"^Key not found in map : (.*)$", re.S), r"no such key: \1"),
    (re.compile(r"^Index error: index=(-?\d+) size=\d+$"), r"index out of bounds: \1"),
    (re.compile(r"^divide by zero$"), "division by zero"),
    (re.compile(r"^No matching overloads found.*$", re.S), "no such overload"),
    (re.compile(r"^Applying SELECT to non-message type$"), "no such overload"),
    (re.compile(r"^No such field$"), "no such overload"),
)
_BUDGET = "Iteration budget exceeded"


def _strip_status(text: str) -> str:
    text = _STATUS_SUFFIX.sub("", text.strip())
    return _STATUS_PREFIX.sub("", text, count=1)


def go_error_text(engine_text: str) -> str:
    """An engine error message in cel-go's wording (what the API server prints)."""
    text = _strip_status(engine_text)
    for pattern, replacement in _REWORD:
        if pattern.match(text):
            return pattern.sub(replacement, text)
    return text


def import_cel() -> Any:
    """The ``cel_expr_python.cel`` module, or a SetupError saying how to get it."""
    try:
        from cel_expr_python import cel  # type: ignore[import-untyped]
    except ImportError as error:  # pragma: no cover - the dependency is pinned
        from compiler.errors import SetupError

        raise SetupError(
            f"the CEL engine is missing ({error}): reinstall trainc with its dependencies"
        ) from None
    return cel


def default_engine() -> Engine:
    """The process-wide engine: :func:`compiler.apiserver.cel.k8s.k8s_engine`, the engine
    with the Kubernetes libraries (imported here, as it builds on this module)."""
    from compiler.apiserver.cel.k8s import k8s_engine

    return k8s_engine()
