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
``shared/research/cel-engines.md``. :class:`CppEngine` is it with what the Kubernetes
base CEL environment has and the engine ships: the strings extension, optional types,
``sets``, ``lists`` and two-variable comprehensions; it has no Kubernetes library
(quantity, url, regex ``find``, lists ``isSorted``/``sum``, ip/cidr, semver, format,
authz), so a rule that uses one fails to compile there. CRD rules and
ValidatingAdmissionPolicies run on :class:`compiler.apiserver.cel.k8s.K8sEngine`, the
same calls with those libraries added.

Engine limits: at most 10,000 comprehension iterations per evaluation (fixed by the
engine; the API server's limits are cost units instead); a ``timestamp``/``duration``
can only be a variable's own value, not nested inside a list or map.
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from compiler.apiserver.cel.library import maps
from compiler.apiserver.cel.library.registry import run_functions
from compiler.apiserver.cel.syntax import (
    eager_optional_macros,
    map_building_macros,
    unsupported_macro,
)

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

_EXTENSIONS_YAML = """\
name: trainc
extensions:
  - name: optional
  - name: sets
  - name: lists
  - name: two-var-comprehensions
  - name: strings
    version: latest
"""

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


@dataclass
class _CppProgram:
    source: str
    variables: frozenset[str]
    result_type: str
    expression: Any
    error_type: Any

    def evaluate(self, bindings: Mapping[str, Any]) -> Any:
        try:
            result = self.expression.eval(data=bindings)
        except RuntimeError as error:  # budget exhaustion and internal failures are raised
            text = str(error)
            if _BUDGET in text:
                raise CelBudgetExceeded(_strip_status(text)) from None
            raise CelEvalError(go_error_text(text)) from None
        if result.type() == self.error_type:  # ordinary runtime errors are values
            raise CelEvalError(go_error_text(str(result.value())))
        return result.plain_value()


_CROSS_NUMERIC = re.compile(
    r"found no matching overload for '_(<|<=|>|>=)_' applied to"
    r" '\((int|uint|double), (int|uint|double)\)'"
)
_WORD = r"(?<![A-Za-z0-9_]){}(?![A-Za-z0-9_])"


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


class CppEngine:
    """``cel-expr-python`` (module ``cel_expr_python``)."""

    name = "cel-expr-python"

    def __init__(self) -> None:
        cel = import_cel()
        self._cel = cel
        self._types = {
            DYN: cel.Type.DYN,
            TIMESTAMP: cel.Type.TIMESTAMP,
            DURATION: cel.Type.DURATION,
        }
        self._config = cel.NewEnvConfigFromYaml(_EXTENSIONS_YAML)
        # the run copy's own function (see compiler.apiserver.cel.library.maps)
        self._run_functions = run_functions(cel, (maps.implementations,))
        self._envs: dict[tuple[bool, tuple[tuple[str, VarType], ...]], Any] = {}
        self._lock = threading.Lock()

    def _env(self, variables: Mapping[str, VarType], run: bool = False) -> Any:
        key = (run, tuple(sorted(variables.items())))
        with self._lock:
            env = self._envs.get(key)
            if env is None:
                declared = {name: self._types[kind] for name, kind in key[1]}
                functions = self._run_functions if run else None
                env = self._cel.NewEnv(config=self._config, variables=declared, functions=functions)
                self._envs[key] = env
            return env

    def _compile(self, source: str, variables: Mapping[str, VarType], run: bool = False) -> Any:
        env = self._env(variables, run)
        try:
            return env.compile(source)
        except RuntimeError as error:
            text = _strip_status(str(error))
        if _CROSS_NUMERIC.search(text):
            # Kubernetes allows comparing int, uint and double; the engine's checker only
            # on dynamic values, so such literals compile unchecked (evaluation handles them)
            try:
                return env.compile(source, disable_check=True)
            except RuntimeError:
                pass
        raise CelCompileError(text)

    def compile(self, source: str, variables: Mapping[str, VarType]) -> Program:
        expression = self._compile(source, variables)
        unsupported = unsupported_macro(source)
        if unsupported is not None:
            raise CelCompileError(unsupported)
        result_type = expression.return_type().name().lower()
        run_source = map_building_macros(eager_optional_macros(source))
        if run_source != source:  # checked as written, run without the engine's faults
            with contextlib.suppress(CelCompileError):
                expression = self._compile(run_source, variables, run=True)
        used = set()
        for name in variables:
            if not re.search(_WORD.format(re.escape(name)), source):
                continue
            # referenced when the expression no longer compiles without the declaration
            others = {k: v for k, v in variables.items() if k != name}
            try:
                self._compile(source, others)
            except CelCompileError:
                used.add(name)
        return _CppProgram(source, frozenset(used), result_type, expression, self._cel.Type.ERROR)


_DEFAULT: Engine | None = None


def default_engine() -> Engine:
    """The process-wide engine (created on first use)."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = CppEngine()
    return _DEFAULT
