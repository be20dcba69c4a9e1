"""The API server's CEL environment: the CEL engine with the Kubernetes libraries.

The API server's CEL environment (k8s.io/apiserver v0.36.2 ``pkg/cel/environment``)
adds to plain CEL: quantity, URL, regex ``find``/``findAll``, lists (``isSorted``,
``sum``, ``min``, ``max``, ``indexOf``, ``lastIndexOf``), IP and CIDR, format and
semver, the strings extension at version 2, the sets and lists extensions, optional
types and two-variable comprehensions. :func:`k8s_engine` is an
:class:`~compiler.apiserver.cel.engine.Engine` with all of them::

    >>> engine = k8s_engine()
    >>> program = engine.compile('quantity(self).isLessThan(quantity("2Gi"))', {"self": "dyn"})
    >>> program.evaluate({"self": "1536Mi"})
    True

How it is built, since ``cel-expr-python`` cannot make opaque values nor optional values
from Python:

* every expression is **type-checked** in a declarations-only environment that declares
  the libraries with the API server's exact signatures and types (``kubernetes.Quantity``,
  ``net.IP``, ``optional_type(list(string))``...), so a misuse is a compile error with
  cel-go's wording and position, as the API server reports it;
* it is then **run** in a second environment where the same functions are Python code
  over plain values: a Quantity, URL, Semver or format is a small tagged map, an IP or
  CIDR its canonical string. A few calls are renamed in the run copy of the expression
  (``indexOf``/``lastIndexOf``, whose string overloads come from the strings extension
  and cannot be extended, ``validate`` and ``format.named``, which return optionals: the
  Python side returns a list and ``.first()`` makes the optional);
* ``variables.<name>`` (ValidatingAdmissionPolicy composition) is rewritten, keeping
  every column, to a declared variable ``variables_<name>``;
* ``optMap`` and ``optFlatMap`` are rewritten in the run copy without the lazy binding
  the engine gets wrong (:func:`~compiler.apiserver.cel.syntax.eager_optional_macros`);
  ``transformMap`` and ``transformMapEntry`` as a ``transformList`` whose entries a
  Python function makes one map (:func:`~compiler.apiserver.cel.syntax.map_building_macros`),
  as the engine cannot run the ``cel.@mapInsert`` they expand to.

Each library is a module of :mod:`compiler.apiserver.cel.library`, named for the
Kubernetes file it reproduces, with what it does not reproduce in its docstring. Beyond
those, the API server's cost limits are replaced by the engine's fixed iteration budget.
"""

from __future__ import annotations

import base64
import json
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from compiler.apiserver.cel.engine import (
    DURATION,
    TIMESTAMP,
    CelBudgetExceeded,
    CelCompileError,
    CelEvalError,
    Program,
    VarType,
    go_error_text,
    import_cel,
)
from compiler.apiserver.cel.library.registry import check_functions, run_functions
from compiler.apiserver.cel.store import ProgramStore, default_store
from compiler.apiserver.cel.syntax import (
    closing_bracket,
    eager_optional_macros,
    map_building_macros,
    significant,
    tokens,
    unsupported_macro,
)

__all__ = [
    "VARIABLE_PREFIX",
    "Activation",
    "K8sEngine",
    "K8sProgram",
    "cel_type_name",
    "k8s_engine",
    "references",
    "rewrite_variables",
    "unbound_variable",
]

VARIABLE_PREFIX: Final = "variables_"


def rewrite_variables(source: str) -> tuple[str, frozenset[str]]:
    """``variables.x`` -> ``variables_x`` (same length); also the names referenced.

    Only a root ``variables`` (not a field named so) is rewritten.
    """
    sig = significant(tokens(source))
    out = list(source)
    names: set[str] = set()
    for i, tok in enumerate(sig):
        if tok.kind != "id" or tok.text != "variables":
            continue
        if i > 0 and sig[i - 1].text == ".":
            continue
        if i + 2 >= len(sig) or sig[i + 1].text != "." or sig[i + 2].kind != "id":
            continue
        name = sig[i + 2].text
        names.add(name)
        replacement = f"{VARIABLE_PREFIX}{name}"
        span = sig[i + 2].end - tok.start
        replacement = replacement.ljust(span)
        out[tok.start : sig[i + 2].end] = list(replacement)
    return "".join(out), frozenset(names)


_RENAMED: Final = {"indexOf": "k8s_indexOf", "lastIndexOf": "k8s_lastIndexOf"}


def _rewrite_run(source: str) -> str:
    """The expression the run environment evaluates (see the module docstring).

    The names it calls instead are declared by :mod:`~compiler.apiserver.cel.library.lists`
    (``k8s_indexOf``, ``k8s_lastIndexOf``) and :mod:`~compiler.apiserver.cel.library.format`
    (``k8s_validate``, ``k8s_format_named``).
    """
    sig = significant(tokens(source))
    edits: list[tuple[int, int, str]] = []  # (start, end, replacement)
    for i, tok in enumerate(sig):
        if tok.kind != "id":
            continue
        before = sig[i - 1].text if i > 0 else ""
        after = sig[i + 1].text if i + 1 < len(sig) else ""
        if before == "." and after == "(" and tok.text in _RENAMED:
            edits.append((tok.start, tok.end, _RENAMED[tok.text]))
        elif before == "." and after == "(" and tok.text == "validate":
            close = closing_bracket(sig, i + 1)
            if close is not None:
                edits.append((tok.start, tok.end, "k8s_validate"))
                edits.append((sig[close].end, sig[close].end, ".first()"))
        elif (
            tok.text == "format"
            and before != "."
            and after == "."
            and i + 3 < len(sig)
            and sig[i + 2].text == "named"
            and sig[i + 3].text == "("
        ):
            close = closing_bracket(sig, i + 3)
            if close is not None:
                edits.append((tok.start, sig[i + 2].end, "k8s_format_named"))
                edits.append((sig[close].end, sig[close].end, ".first()"))
    if not edits:
        return source
    out = []
    position = 0
    for start, end, text in sorted(edits, key=lambda e: (e[0], e[1])):
        out.append(source[position:start])
        out.append(text)
        position = end
    out.append(source[position:])
    return "".join(out)


# ==========================================================================================
# The two environments' configs (the functions come from the libraries)
# ==========================================================================================


def _check_config_yaml() -> str:
    # JSON is YAML; the engine reads its config from YAML text. The standard string() and
    # the strings extension are left out: compiler.apiserver.cel.library.strings declares
    # them, with the overloads the libraries add.
    config = {
        "name": "trainc-k8s-check",
        "stdlib": {"exclude_functions": [{"name": "string"}]},
        "extensions": [
            {"name": "optional"},
            {"name": "sets"},
            {"name": "lists"},
            {"name": "two-var-comprehensions"},
        ],
        "functions": check_functions(),
    }
    return json.dumps(config)


# ``bindings`` (``cel.bind``) is for :meth:`K8sEngine.compile_let` only: user expressions
# are checked in the check environment, which does not have it.
_RUN_CONFIG_YAML: Final = """\
name: trainc-k8s-run
extensions:
  - name: bindings
  - name: optional
  - name: sets
  - name: lists
  - name: two-var-comprehensions
  - name: strings
    version: latest
"""


# ==========================================================================================
# The engine
# ==========================================================================================

_CROSS_NUMERIC: Final = re.compile(
    r"found no matching overload for '_(<|<=|>|>=)_' applied to"
    r" '\((int|uint|double), (int|uint|double)\)'"
)
_STATUS_PREFIX: Final = re.compile(r"^[A-Z_]+: ")
_STATUS_SUFFIX: Final = re.compile(r" \[[A-Z_]+\]$")
_BUDGET: Final = "Iteration budget exceeded"
_UNBOUND: Final = re.compile(r'No value with name "([^"]+)" found in Activation')


def _strip_status(text: str) -> str:
    text = _STATUS_SUFFIX.sub("", text.strip())
    return _STATUS_PREFIX.sub("", text, count=1)


_SIMPLE_TYPES: Final = {
    "BOOL": "bool",
    "INT": "int",
    "UINT": "uint",
    "DOUBLE": "double",
    "STRING": "string",
    "BYTES": "bytes",
    "DYN": "dyn",
    "NULL": "null_type",
    "NULL_TYPE": "null_type",
    "TIMESTAMP": "google.protobuf.Timestamp",
    "DURATION": "google.protobuf.Duration",
    "TYPE": "type",
    "ERROR": "*error*",
}


def cel_type_name(engine_name: str) -> str:
    """The engine's name of a type in cel-go's spelling: ``LIST<DYN>`` -> ``list(dyn)``."""
    text = engine_name.strip()
    head, sep, rest = text.partition("<")
    if not sep:
        return _SIMPLE_TYPES.get(text, text)
    inner = rest[:-1] if rest.endswith(">") else rest
    args: list[str] = []
    depth = 0
    current = ""
    for ch in inner:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        if ch == "," and depth == 0:
            args.append(current.strip())
            current = ""
            continue
        current += ch
    if current.strip():
        args.append(current.strip())
    name = _SIMPLE_TYPES.get(head, head).lower() if head.isupper() else head
    return f"{name}({', '.join(cel_type_name(a) for a in args)})"


_OPTIONAL_RESULT: Final = (
    "an optional value cannot leave the expression it is made in"
    " (trainc engine limitation: wrap it in .orValue() or .hasValue())"
)


@dataclass(frozen=True, slots=True)
class Activation:
    """Variable values bound once, for evaluating several programs on the same values.

    Passing a mapping to each evaluation makes the engine read the values again each
    time (~16 µs for a JobSet); an activation is made once (~2 µs) and each evaluation
    over it then costs ~2 µs. The library functions are the same in every run
    environment, so an activation of one serves programs compiled in any of them.
    """

    native: Any


@dataclass
class K8sProgram:
    """One expression: type-checked as the API server does, run with the Python library."""

    source: str
    variables: frozenset[str]
    result_type: str  # cel-go's spelling: "bool", "string", "list(dyn)", ...
    checked: bool  # False when only the cross-type numeric fallback compiled it
    expression: Any
    error_type: Any
    run_source: str = ""  # the text the run environment compiled (see the module docstring)

    def evaluate(self, bindings: Mapping[str, Any] | Activation) -> Any:
        """The result for ``bindings``: a mapping, or an :class:`Activation` made once for
        many expressions (values passed as a mapping are read again on every call)."""
        try:
            if isinstance(bindings, Activation):
                result = self.expression.eval(activation=bindings.native)
            else:
                result = self.expression.eval(data=bindings)
        except RuntimeError as error:
            text = str(error)
            if _BUDGET in text:
                raise CelBudgetExceeded(_strip_status(text)) from None
            raise CelEvalError(go_error_text(text)) from None
        if result.type() == self.error_type:
            try:
                text = str(result.value())
            except TypeError:  # the engine reports an optional as an unreadable error
                raise CelEvalError(_OPTIONAL_RESULT) from None
            raise CelEvalError(go_error_text(text))
        try:
            return result.plain_value()
        except TypeError:
            raise CelEvalError(_OPTIONAL_RESULT) from None


class K8sEngine:
    """An :class:`~compiler.apiserver.cel.engine.Engine` with the Kubernetes libraries."""

    name = "cel-expr-python+kubernetes"

    def __init__(self, store: ProgramStore | None = None) -> None:
        cel = import_cel()
        self._cel = cel
        self._store = store  # compiled programs kept between runs (None: none)
        self._types = {
            "dyn": cel.Type.DYN,
            TIMESTAMP: cel.Type.TIMESTAMP,
            DURATION: cel.Type.DURATION,
        }
        self._check_config = cel.NewEnvConfigFromYaml(_check_config_yaml())
        self._run_config = cel.NewEnvConfigFromYaml(_RUN_CONFIG_YAML)
        self._run_functions = run_functions(cel)
        self._envs: dict[tuple[bool, tuple[tuple[str, VarType], ...]], Any] = {}
        self._lock = threading.Lock()
        self._activations: Any = None  # the run environment that makes activations
        # Compiled programs by (source, variables): check -j compiles the same policies
        # once per chunk, and a program is immutable, so one compilation serves them all.
        self._programs: dict[tuple[Any, ...], Any] = {}

    def _env(self, run: bool, variables: Mapping[str, VarType]) -> Any:
        key = (run, tuple(sorted(variables.items())))
        with self._lock:
            env = self._envs.get(key)
            if env is None:
                declared = {name: self._types[kind] for name, kind in key[1]}
                if run:
                    env = self._cel.NewEnv(
                        config=self._run_config,
                        variables=declared,
                        functions=self._run_functions,
                    )
                    # cel-expr-python 0.1.3 sets an environment's variable types up on its
                    # first compile: a program deserialized before that cannot take a
                    # datetime for a timestamp variable ("Non-CEL value type")
                    env.compile("true")
                else:
                    env = self._cel.NewEnv(config=self._check_config, variables=declared)
                self._envs[key] = env
            return env

    def _compile_in(self, env: Any, source: str) -> tuple[Any, bool]:
        try:
            return env.compile(source), True
        except RuntimeError as error:
            text = _strip_status(str(error))
        if _CROSS_NUMERIC.search(text):
            try:
                return env.compile(source, disable_check=True), False
            except RuntimeError:
                pass
        raise CelCompileError(text)

    def activation(self, values: Mapping[str, Any]) -> Activation:
        """``values`` bound once for several :meth:`K8sProgram.evaluate` calls."""
        if self._activations is None:
            self._activations = self._env(True, {})
        return Activation(self._activations.Activation(data=values))

    def compile(self, source: str, variables: Mapping[str, VarType]) -> Program:
        key = ("compile", source, tuple(sorted(variables.items())))
        program = self._programs.get(key)
        if program is None:
            program = self._programs[key] = self._compile(source, variables)
        return program

    def _compile(self, source: str, variables: Mapping[str, VarType]) -> K8sProgram:
        store = self._store
        if store is None:
            return self._compile_now(source, variables)
        key = store.key("compile", source, sorted(variables.items()))
        entry = store.get(key)
        if entry is not None:
            try:
                return K8sProgram(
                    source,
                    frozenset(str(name) for name in entry["variables"]),
                    str(entry["result_type"]),
                    bool(entry["checked"]),
                    self._deserialize(entry["expression"], variables),
                    self._cel.Type.ERROR,
                    str(entry["run_source"]),
                )
            except (KeyError, TypeError, ValueError, RuntimeError):
                pass  # not an entry this code wrote: compiled again below
        program = self._compile_now(source, variables)
        entry = {
            "variables": sorted(program.variables),
            "result_type": program.result_type,
            "checked": program.checked,
            "run_source": program.run_source,
            "expression": base64.b64encode(program.expression.serialize()).decode(),
        }
        store.put(key, entry)
        return program

    def _deserialize(self, text: Any, variables: Mapping[str, VarType]) -> Any:
        """A stored run program (base64 of ``Expression.serialize``) in the run environment."""
        if not isinstance(text, str):
            raise TypeError("not a stored program")
        return self._env(True, variables).deserialize(base64.b64decode(text, validate=True))

    def _compile_now(self, source: str, variables: Mapping[str, VarType]) -> K8sProgram:
        renamed, names = rewrite_variables(source)
        try:
            checked, is_checked = self._compile_in(self._env(False, variables), renamed)
        except CelCompileError as error:
            raise CelCompileError(_reword_compile(str(error), names, variables)) from None
        unsupported = unsupported_macro(renamed)
        if unsupported is not None:
            raise CelCompileError(unsupported)
        run_source = map_building_macros(eager_optional_macros(_rewrite_run(renamed)))
        try:
            expression, _ = self._compile_in(self._env(True, variables), run_source)
        except CelCompileError:
            try:
                expression = self._env(True, variables).compile(run_source, disable_check=True)
            except RuntimeError as error:
                raise CelCompileError(_strip_status(str(error))) from None
        used = _referenced(renamed, variables)
        result_type = cel_type_name(checked.return_type().name()) if is_checked else "dyn"
        return K8sProgram(
            source, used, result_type, is_checked, expression, self._cel.Type.ERROR, run_source
        )

    def compile_let(
        self,
        lets: Sequence[tuple[str, str]],
        body: K8sProgram | str,
        variables: Mapping[str, VarType],
    ) -> K8sProgram | None:
        """``body`` with each ``(name, run source)`` of ``lets`` bound first, in order, as
        one run program (``cel.bind``), or None when the engine cannot compile it.

        The sources, and a ``body`` given as text, are made of the
        :attr:`K8sProgram.run_source` of programs :meth:`compile` made (checked already)
        and plain variable reads. The result reads only ``variables``:
        evaluated on one :class:`Activation`, the values in it are converted once for
        all the programs, where binding each let's value into a new activation would
        convert them again.
        """
        if isinstance(body, str):
            body = K8sProgram(body, frozenset(), "dyn", False, None, None, body)
        key = (
            "let",
            tuple(lets),
            body.source,
            body.variables,
            body.result_type,
            body.checked,
            body.run_source,
            tuple(sorted(variables.items())),
        )
        if key not in self._programs:
            self._programs[key] = self._compile_let(lets, body, variables)
        return self._programs[key]  # type: ignore[no-any-return]

    def _compile_let(
        self,
        lets: Sequence[tuple[str, str]],
        body: K8sProgram,
        variables: Mapping[str, VarType],
    ) -> K8sProgram | None:
        text = f"(\n{body.run_source}\n)"
        for name, source in reversed(lets):
            text = f"cel.bind({name}, (\n{source}\n), {text})"
        expression = self._let_expression(text, variables)
        if expression is None:
            return None
        return K8sProgram(
            body.source,
            body.variables,
            body.result_type,
            body.checked,
            expression,
            self._cel.Type.ERROR,
            text,
        )

    def _let_expression(self, text: str, variables: Mapping[str, VarType]) -> Any:
        """``text`` compiled in the run environment (from the store when it holds it),
        or None when the engine cannot compile it."""
        store = self._store
        key = store.key("let", text, sorted(variables.items())) if store is not None else ""
        entry = store.get(key) if store is not None else None
        if entry is not None:
            try:
                stored = entry["expression"]
                return None if stored is None else self._deserialize(stored, variables)
            except (KeyError, TypeError, ValueError, RuntimeError):
                pass
        env = self._env(True, variables)
        try:
            expression = env.compile(text)
        except RuntimeError:
            try:  # the cross-type numeric comparisons only pass unchecked (see compile)
                expression = env.compile(text, disable_check=True)
            except RuntimeError:
                expression = None
        if store is not None:
            serialized = None if expression is None else expression.serialize()
            stored = None if serialized is None else base64.b64encode(serialized).decode()
            store.put(key, {"expression": stored})
        return expression


def _referenced(source: str, variables: Mapping[str, VarType]) -> frozenset[str]:
    sig = significant(tokens(source))
    used = set()
    for i, tok in enumerate(sig):
        if tok.kind == "id" and tok.text in variables and (i == 0 or sig[i - 1].text != "."):
            used.add(tok.text)
    return frozenset(used)


def _reword_compile(text: str, names: frozenset[str], variables: Mapping[str, VarType]) -> str:
    for name in names:
        declared = f"{VARIABLE_PREFIX}{name}"
        if declared not in variables:
            text = text.replace(
                f"undeclared reference to '{declared}' (in container '')",
                f"undefined field '{name}'",
            ).replace(f"undeclared reference to '{declared}'", f"undefined field '{name}'")
        text = text.replace(declared, f"variables.{name}")
    return text


def references(source: str, name: str) -> bool:
    """Whether ``source`` names the root variable ``name`` (not a field called so)."""
    return name in _referenced(source, {name: "dyn"})


def unbound_variable(error_text: str) -> str | None:
    """The declared variable an evaluation error says had no value, if that is the error."""
    match = _UNBOUND.search(error_text)
    return match.group(1) if match else None


_ENGINE: K8sEngine | None = None
_ENGINE_LOCK = threading.Lock()


def k8s_engine() -> K8sEngine:
    """The process-wide engine with the Kubernetes libraries (created on first use)."""
    global _ENGINE
    with _ENGINE_LOCK:
        if _ENGINE is None:
            _ENGINE = K8sEngine(default_store())
        return _ENGINE
