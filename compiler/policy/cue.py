"""CUE policies: ``.cue`` constraint files checked with the real ``cue`` CLI.

The convention (``policies/README.md`` shows examples): a policy file is a CUE file whose
top-level *regular* fields named after a Kubernetes kind hold constraints for every object
of that kind; helpers are definitions (``#x``) or hidden fields (``_x``), and
``#objects`` is the list of every object of the run, for checks across objects::

    package gang

    #objects: [...]
    TrainJob: spec: trainer: numNodes?: <=16
    JobSet: {
        metadata: name: string
        ...
    }

Each object is unified with the value of its kind, and the result must be concrete: a
conflict (``invalid value 20 (out of bound <=16)``), a missing required field (``team!:
string``), a value left incomplete, or an explicit ``error("...")`` is a violation.

:func:`run_cue` checks all objects against all policy files in one ``cue vet`` process,
whatever the number of objects. It writes a throwaway CUE module: each policy in a
package of its own, the objects as one JSON file, and a driver that unifies each policy
with each object of its kind under ``results."<policy>"."<object>"``, so every error's
path says which policy and object it is about, and which field. CUE reports a missing or
incomplete value only when no conflict was found anywhere in the run, so when the first
run finds violations a second one checks the (policy, object) pairs that passed, to
report the missing values too: at most two processes per run.

A policy is code, and Argo CD runs trainc on repositories it does not trust: the ``cue``
processes of a run share one deadline and each has a memory limit (:class:`CueLimits`,
set with ``$TRAINC_CUE_TIMEOUT`` and ``$TRAINC_CUE_MEMORY``, see
:mod:`compiler.policy.bounded` for how they are enforced). A policy that runs out of
either is an input error located at the policy file; nothing of the run is kept.

The ``cue`` binary is pinned (:data:`CUE_VERSION`): ``$TRAINC_CUE``, else the one ``make
setup`` installs into the trainc cache (``scripts/install-cue.sh``), else ``cue`` on PATH.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

from compiler.apiserver.manifest import format_path
from compiler.apiserver.yaml_source import read_source
from compiler.errors import (
    Finding,
    InputError,
    JsonPath,
    Problem,
    SetupError,
    Severity,
    SourceLocation,
    UsageError,
)
from compiler.kube.quantity import Quantity, QuantityError
from compiler.policy.bounded import LimitExceeded, run_bounded
from compiler.policy.objects import PolicyObject
from compiler.upstream.artifacts import cache_root

__all__ = [
    "CUE_VERSION",
    "LIMIT_DETAIL",
    "CueLimits",
    "CueUnavailable",
    "cue_binary",
    "run_cue",
]

T = TypeVar("T")

CUE_VERSION = "v0.17.1"
_MODULE = "trainc.local/run"
_DEFAULT_PACKAGE = "policy"


class CueUnavailable(SetupError):
    """The pinned ``cue`` CLI is not installed; says how to install it."""


# --- limits -----------------------------------------------------------------------------

TIMEOUT_ENV = "TRAINC_CUE_TIMEOUT"
MEMORY_ENV = "TRAINC_CUE_MEMORY"
# Argo CD gives a plugin's generate command 90 s (ARGOCD_EXEC_TIMEOUT) within a
# repo-server call of 60 s (controller.repo.server.timeout.seconds): half of the smaller
# leaves the render and the rest of the check their time.
DEFAULT_TIMEOUT = 30.0
# A check of 5,000 TrainJobs with violations peaks at 200 MiB in cue; a policy that
# builds ever larger values stops at 2 GiB, not at the machine's memory.
DEFAULT_MEMORY = 2 * 1024**3
# Under about 100 MiB of RLIMIT_DATA the Go runtime of cue cannot start.
MIN_MEMORY = 128 * 1024**2
# The detail of a problem that is a limit reached, not something the policy says: a
# check cache keeps no such result (the next run, less loaded or with more time, may pass).
LIMIT_DETAIL = "cue-limit"

_DURATION = re.compile(r"^(\d+(?:\.\d+)?)(ms|s|m|h)?$")
_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def _duration(text: str) -> float:
    """``"90"``, ``"90s"``, ``"1.5m"``, ``"500ms"`` -> seconds (> 0).

    >>> _duration("1.5m"), _duration("45")
    (90.0, 45.0)
    """
    match = _DURATION.match(text.strip())
    seconds = float(match.group(1)) * _SECONDS[match.group(2) or "s"] if match else 0.0
    if seconds <= 0:
        raise ValueError(f"{text!r} is not a duration above zero (e.g. 30s, 2m, 500ms)")
    return seconds


def _memory(text: str) -> int:
    """A Kubernetes quantity (``512Mi``, ``2Gi``, ``1G``) -> bytes, at least MIN_MEMORY."""
    try:
        value = Quantity.parse(text.strip()).value()
    except QuantityError:
        raise ValueError(f"{text!r} is not a quantity of bytes (e.g. 512Mi, 2Gi)") from None
    if value < MIN_MEMORY:
        raise ValueError(f"{text!r} is below {_bytes(MIN_MEMORY)}, what cue needs to start")
    return value


def _bytes(value: int) -> str:
    """``2Gi``, ``640Mi``, or the bytes."""
    for unit, size in (("Gi", 1024**3), ("Mi", 1024**2), ("Ki", 1024)):
        if value % size == 0:
            return f"{value // size}{unit}"
    return str(value)


def _setting(environ: Mapping[str, str], name: str, parse: Callable[[str], T], default: T) -> T:
    text = environ.get(name)
    if not text:
        return default
    try:
        return parse(text)
    except ValueError as error:
        raise UsageError(f"${name}: {error}") from None


@dataclass(frozen=True)
class CueLimits:
    """What the ``cue`` processes of one :func:`run_cue` may use: ``timeout`` seconds in
    all (both passes share it) and ``memory`` bytes each (``RLIMIT_DATA``)."""

    timeout: float = DEFAULT_TIMEOUT
    memory: int = DEFAULT_MEMORY

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> CueLimits:
        """The defaults, or ``$TRAINC_CUE_TIMEOUT`` and ``$TRAINC_CUE_MEMORY`` when set.

        Set by whoever runs trainc (an Argo CD sidecar's environment), never by the
        repository checked: a ``trainc.yaml`` setting could raise the limits a
        repository's own policy is held to.
        """
        environ = os.environ if environ is None else environ
        return cls(
            _setting(environ, TIMEOUT_ENV, _duration, DEFAULT_TIMEOUT),
            _setting(environ, MEMORY_ENV, _memory, DEFAULT_MEMORY),
        )

    def describe(self, limit: str) -> str:
        """``time limit of 30s ($TRAINC_CUE_TIMEOUT)``, for a message."""
        if limit == "time":
            return f"time limit of {self.timeout:g}s (${TIMEOUT_ENV})"
        return f"memory limit of {_bytes(self.memory)} (${MEMORY_ENV})"


def installed_path() -> Path:
    """Where ``make setup`` installs the pinned cue: ``$CACHE/cue/<version>/cue``."""
    return cache_root() / "cue" / CUE_VERSION / "cue"


@cache
def _path_version(binary: str) -> str | None:
    try:
        out = subprocess.run(
            [binary, "version"],
            capture_output=True,
            encoding="utf-8",
            errors="replace",
            check=False,
            timeout=60,
        ).stdout
    except OSError:
        return None
    match = re.match(r"cue version (\S+)", out)
    return match.group(1) if match else None


def cue_binary(needed_for: Iterable[Path] = ()) -> Path:
    """The pinned cue: ``$TRAINC_CUE`` when set, else the one setup installed, else
    ``cue`` on PATH; each must report :data:`CUE_VERSION`."""
    files = ", ".join(str(p) for p in needed_for)
    configured = os.environ.get("TRAINC_CUE")
    installed = installed_path()
    candidate: str | None
    if configured:
        candidate, where = configured, "$TRAINC_CUE"
    elif installed.is_file() and os.access(installed, os.X_OK):
        return installed
    else:
        candidate, where = shutil.which("cue"), "the cue on PATH"
    found = ""
    if candidate is not None:
        version = _path_version(candidate)
        if version == CUE_VERSION:
            return Path(candidate)
        found = f" ({where}, {candidate}, is {version or 'not a cue CLI of a known version'})"
    raise CueUnavailable(
        f"the cue CLI {CUE_VERSION} is needed to check the CUE policies"
        f"{f' ({files})' if files else ''} and is not installed{found}: put cue {CUE_VERSION} "
        f"on PATH or set TRAINC_CUE to it (`go install cuelang.org/go/cmd/cue@{CUE_VERSION}` "
        f"builds it); in a trainc checkout `make setup` installs it into {installed.parent}"
    )


# --- the throwaway module --------------------------------------------------------------

_PACKAGE = re.compile(r"package\s+([A-Za-z_$][A-Za-z0-9_$]*)\s*$")


@dataclass(frozen=True)
class _Policy:
    path: Path  # as given
    package: str
    text: str  # as written to the module
    line_offset: int  # lines added in front (a package clause)

    @property
    def rule(self) -> str:
        return f"cue/{self.path.name}"


def _read_policy(path: Path) -> _Policy:
    try:
        text = read_source(path).decode("utf-8")
    except InputError as error:
        raise InputError.single(
            f"cannot read the CUE policy: {error.problems[0].message}",
            SourceLocation(str(path)),
        ) from None
    except UnicodeDecodeError as error:
        raise InputError.single(
            f"cannot read the CUE policy: {getattr(error, 'strerror', None) or error}",
            SourceLocation(str(path)),
        ) from None
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith(("//", "@")):
            continue
        match = _PACKAGE.match(stripped)
        if match:
            return _Policy(path, match.group(1), text, 0)
        break
    # A file without a package clause cannot be imported: give it one, and shift lines.
    return _Policy(path, _DEFAULT_PACKAGE, f"package {_DEFAULT_PACKAGE}\n{text}", 1)


def _driver(policies: list[_Policy]) -> str:
    imports = "".join(
        f'\tp{i} "{_MODULE}/p/{i}:{policy.package}"\n' for i, policy in enumerate(policies)
    )
    bound = "".join(f"let P{i} = p{i} & {{#objects: _objects}}\n" for i in range(len(policies)))
    checks = "".join(
        f'\t"{i}": {{for i, o in _objects if _skip["{i}/\\(i)"] == _|_ '
        f'{{"\\(i)": {{for k, v in P{i} if k == o.kind {{v & o}}}}}}}}\n'
        for i in range(len(policies))
    )
    return (
        "@extern(embed)\n\npackage driver\n\n"
        f"import (\n{imports})\n\n"
        "_objects: _ @embed(file=objects.json)\n"
        "_skip: _ @embed(file=skip.json)\n\n"
        f"{bound}\n"
        f"results: {{\n{checks}}}\n"
    )


def _write_module(root: Path, policies: list[_Policy], objects: list[PolicyObject]) -> None:
    (root / "cue.mod").mkdir()
    (root / "cue.mod" / "module.cue").write_text(
        f'module: "{_MODULE}"\nlanguage: version: "{CUE_VERSION}"\n', encoding="utf-8"
    )
    for i, policy in enumerate(policies):
        directory = root / "p" / str(i)
        directory.mkdir(parents=True)
        (directory / policy.path.name).write_text(policy.text, encoding="utf-8")
    with (root / "objects.json").open("w", encoding="utf-8") as out:
        # One object a line keeps the positions CUE prints short.
        out.write("[\n")
        for n, obj in enumerate(objects):
            out.write(json.dumps(obj.data, ensure_ascii=False, sort_keys=True, default=str))
            out.write(",\n" if n + 1 < len(objects) else "\n")
        out.write("]\n")
    (root / "driver.cue").write_text(_driver(policies), encoding="utf-8")


# --- cue's error report ------------------------------------------------------------------

_LABEL = re.compile(r'"(?:[^"\\]|\\.)*"|[A-Za-z_$#][A-Za-z0-9_$#]*|\d+')
_POSITION = re.compile(r"^\s+(.+?):(\d+):(\d+)$")
_GO_CRASH = re.compile(r"^(?:fatal error|panic): .*$", re.MULTILINE)


@dataclass
class _Error:
    path: list[str | int]  # [] when cue printed none
    message: str
    positions: list[tuple[str, int, int]]


def _parse_label(token: str) -> str | int:
    if token.startswith('"'):
        try:
            return str(json.loads(token))
        except json.JSONDecodeError:
            return token[1:-1]
    if token.isdigit():
        return int(token)
    return token


def _split_header(line: str) -> tuple[list[str | int], str] | None:
    """``results."0"."3".spec.x: msg`` -> (path, msg); None when the line has no path."""
    labels: list[str | int] = []
    position = 0
    while True:
        match = _LABEL.match(line, position)
        if match is None:
            return None
        labels.append(_parse_label(match.group(0)))
        position = match.end()
        if line.startswith(": ", position):
            return labels, line[position + 2 :]
        if not line.startswith(".", position):
            return None
        position += 1


def _parse_errors(text: str) -> list[_Error]:
    errors: list[_Error] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        position = _POSITION.match(line)
        if position and errors:
            errors[-1].positions.append(
                (position.group(1), int(position.group(2)), int(position.group(3)))
            )
            continue
        header = None if line[0].isspace() else _split_header(line)
        if header is None and errors and not errors[-1].positions:
            errors[-1].message += "\n" + line  # a message of several lines
            continue
        path, message = header if header is not None else ([], line)
        errors.append(_Error(path, message, []))
    for error in errors:
        if error.positions and error.message.endswith(":"):
            error.message = error.message[:-1]
    return errors


# --- running it -----------------------------------------------------------------------


def _vet(
    binary: Path, root: Path, skip: set[tuple[int, int]], deadline: float, limits: CueLimits
) -> list[_Error]:
    """One ``cue vet`` of the module at ``root``, ended by ``deadline`` (monotonic clock);
    raises :class:`LimitExceeded` when it runs out of time or memory."""
    (root / "skip.json").write_text(
        json.dumps({f"{p}/{i}": True for p, i in sorted(skip)}), encoding="utf-8"
    )
    env = {**os.environ, "CUE_REGISTRY": "none"}  # policies import nothing from outside
    try:
        done = run_bounded(
            [str(binary), "vet", "-c", "."],
            cwd=root,
            env=env,
            timeout=deadline - time.monotonic(),
            memory=limits.memory,
        )
    except OSError as error:
        raise CueUnavailable(f"cannot run {binary}: {error.strerror or error}") from None
    if done.returncode == 0:
        return []
    crash = _GO_CRASH.search(done.stderr)
    if crash is not None:  # a dump of goroutines is no report of CUE errors
        return [_Error([], f"cue vet crashed: {crash.group(0)}", [])]
    errors = _parse_errors(done.stderr)
    if not errors:
        raise SetupError(f"cue vet failed without a report (exit {done.returncode})")
    return errors


def _pair(error: _Error) -> tuple[int, int] | None:
    path = error.path
    if len(path) >= 3 and path[0] == "results":
        policy, obj = path[1], path[2]
        if isinstance(policy, str) and policy.isdigit() and isinstance(obj, str) and obj.isdigit():
            return int(policy), int(obj)
    return None


def _policy_position(
    error: _Error, policies: list[_Policy], only: int | None = None
) -> SourceLocation | None:
    """The first place in a policy file (policy ``only``, if given) that the error names."""
    for file, line, column in error.positions:
        parts = Path(file).parts
        if len(parts) >= 3 and parts[-3] == "p" and parts[-2].isdigit():
            index = int(parts[-2])
            if index < len(policies) and only in (None, index):
                policy = policies[index]
                return SourceLocation(str(policy.path), max(line - policy.line_offset, 1), column)
    return None


def _field_path(labels: list[str | int]) -> JsonPath:
    """The object's field: the labels up to the first hidden field or definition."""
    out: list[str | int] = []
    for label in labels:
        if isinstance(label, str) and label.startswith(("_", "#")):
            break
        out.append(label)
    return tuple(out)


def _finding(error: _Error, policies: list[_Policy], objects: list[PolicyObject]) -> Finding:
    pair = _pair(error)
    assert pair is not None
    policy_index, object_index = pair
    obj = objects[object_index]
    path = _field_path(error.path[3:])
    where = _policy_position(error, policies, policy_index)
    return Finding(
        policies[policy_index].rule,
        Severity.ERROR,
        error.message,
        obj.ref,
        format_path(path) or None,
        obj.origin.locate(path if obj.stage == "input" else ()),
        obj.stage,
        (("policy", str(where)),) if where is not None else (),
    )


def _policy_problem(error: _Error, policies: list[_Policy]) -> Problem:
    where = _policy_position(error, policies)
    label = ".".join(str(p) for p in error.path)
    message = f"{label}: {error.message}" if label else error.message
    message = re.sub(rf"^{re.escape(_MODULE)}\S*: ", "", message)  # the throwaway package
    if where is None:
        files = ", ".join(str(p.path) for p in policies)
        return Problem(f"CUE policies ({files}): {message}", rule="policy")
    return Problem(f"CUE policy: {message}", where, rule="policy")


def _limit_problem(limit: str, limits: CueLimits, policies: list[_Policy]) -> Problem:
    """A run stopped at a limit, at the policy file (all of them share one process)."""
    files = ", ".join(str(p.path) for p in policies)
    what = "CUE policy" if len(policies) == 1 else f"CUE policies ({files})"
    return Problem(
        f"{what}: cue vet ran past its {limits.describe(limit)} and was stopped; "
        + (
            "does a policy loop, or compute more than it needs?"
            if limit == "time"
            else "does a policy build ever larger values?"
        ),
        SourceLocation(str(policies[0].path)) if len(policies) == 1 else None,
        rule="policy",
        details=((LIMIT_DETAIL, limit),),
    )


def run_cue(
    policy_files: list[Path], objects: list[PolicyObject], limits: CueLimits | None = None
) -> list[Finding]:
    """Check every object against every policy file with one (at most two) ``cue vet``.

    ``limits``: default from the environment (:meth:`CueLimits.from_environ`). Raises
    :class:`CueUnavailable` when there are policies and no pinned cue, and
    :class:`InputError` when a policy cannot be read or does not compile, or cue runs out
    of its time or memory.
    """
    if not policy_files:
        return []
    limits = limits or CueLimits.from_environ()
    policies = [_read_policy(Path(p)) for p in policy_files]
    binary = cue_binary(p.path for p in policies)
    with tempfile.TemporaryDirectory(prefix="trainc-cue-") as tmp:
        root = Path(tmp)
        _write_module(root, policies, objects)
        deadline = time.monotonic() + limits.timeout
        try:
            errors = _vet(binary, root, set(), deadline, limits)
            failed = {pair for pair in map(_pair, errors) if pair is not None}
            if failed:
                # CUE leaves out missing and incomplete values when it found a conflict:
                # check the pairs that passed once more, without the ones that failed.
                errors += _vet(binary, root, failed, deadline, limits)
        except LimitExceeded as reached:
            raise InputError([_limit_problem(reached.limit, limits, policies)]) from None
    problems = [_policy_problem(e, policies) for e in errors if _pair(e) is None]
    if problems:
        raise InputError(problems)
    findings: dict[tuple[Any, ...], Finding] = {}
    for error in errors:
        finding = _finding(error, policies, objects)
        findings.setdefault((_pair(error), finding.field_path or "", finding.message), finding)
    return [findings[key] for key in sorted(findings)]
