"""The error model: every user-facing failure names a place in a source file.

A user mistake is raised as an :class:`InputError` (exit code 2) and printed as

    example/job.yaml:12:7: TrainJob default/llm: spec.trainer.numNodes: expected integer, got string

never as a traceback. Policy violations (exit code 1) are reported by ``validate``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, NamedTuple

EXIT_OK = 0
EXIT_VIOLATIONS = 1
EXIT_INPUT_ERROR = 2


# C0 and C1 control characters, DEL, and the Unicode line and paragraph separators: none
# of them may reach a terminal or a one-line-per-problem report as written.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def _escape_char(match: re.Match[str]) -> str:
    char = match.group()
    named = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
    if char in named:
        return named[char]
    return f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}"


def escape_text(text: str) -> str:
    """``text`` with control characters escaped, so a name keeps a message on one line.

    >>> escape_text("a\\nb\\x1b[31m")
    'a\\\\nb\\\\x1b[31m'
    """
    return _CONTROL.sub(_escape_char, text) if _CONTROL.search(text) else text


# What a person is shown of a list of problems and of one message: every verb prints
# its errors through :func:`listing` and :func:`clip`, so a file of 100,000 broken
# documents or a 60 MB name makes a screen of text, not megabytes. The reports of
# ``trainc check`` (text, JSON, SARIF, JUnit; on stdout or --output) list every finding,
# their lines cut likewise.
MAX_LISTED = 100  # problems printed on standard error
MAX_LINE = 1000  # characters of one printed line


def clip(text: str, limit: int = MAX_LINE) -> str:
    """``text`` cut to about ``limit`` characters, saying how many more there were: its
    start and its end are kept (a message often ends with what is wrong about a long
    value in its middle).

    >>> clip("a" * 10 + "b" * 10 + " is wrong", 16)
    'aaaaaaaaaabb[... 13 more characters ...]rong'
    """
    if len(text) <= limit:
        return text
    tail = limit // 4
    head = limit - tail
    return f"{text[:head]}[... {len(text) - limit} more characters ...]{text[len(text) - tail :]}"


def listing(
    lines: Iterable[str], limit: int = MAX_LISTED, what: str = "", line_limit: int = MAX_LINE
) -> list[str]:
    """The first ``limit`` lines, each :func:`clip`-ped, then how many more there were.

    >>> listing(["a", "b", "c"], limit=2, what=" errors")
    ['a', 'b', '... and 1 more errors']
    """
    shown: list[str] = []
    more = 0
    for line in lines:
        if len(shown) < limit:
            shown.append(clip(line, line_limit))
        else:
            more += 1
    if more:
        shown.append(f"... and {more} more{what}")
    return shown


# A file name that could be read as a place (``a.yaml:1:2: ...``) or that holds a control
# character or a quote is shown quoted, so a message's location cannot be spoofed.
_AMBIGUOUS_FILE = re.compile('(:[0-9])|["\\x00-\\x1f\\x7f-\\x9f\\u2028\\u2029]|^\\s|\\s$')


def display_file(file: str) -> str:
    """A file name as messages show it: as is, or quoted when it could mislead.

    >>> display_file("jobs/a.yaml"), display_file("x.yaml:1:2: fake")
    ('jobs/a.yaml', '"x.yaml:1:2: fake"')
    """
    if not _AMBIGUOUS_FILE.search(file):
        return file
    quoted = escape_text(file.replace("\\", "\\\\").replace('"', '\\"'))
    return f'"{quoted}"'


class SourceLocation(NamedTuple):
    """A 1-based line and column in a file; ``line == 0`` means the whole file.

    The file is shown quoted when its name could be mistaken for a place
    (:func:`display_file`). Ordered by file, line and column. A named tuple, like
    :class:`ObjectRef` and :class:`Finding`: a large check makes, pickles and sends
    between processes one or more per finding.
    """

    file: str
    line: int = 0
    column: int = 0

    def __str__(self) -> str:
        file = display_file(self.file)
        if self.line <= 0:
            return file
        return f"{file}:{self.line}:{self.column}"


# A place inside an object as keys and indices: ("spec", "trainer", "env", 2, "name").
JsonPath = tuple[str | int, ...]


@dataclass(frozen=True, slots=True)
class FieldError:
    """An error about one field of an object, in the API server's shape (``field.Error``).

    ``field`` is the path as the API server writes it (``spec.trainer.numNodes``), or
    None when it names no field (a body that does not decode); ``type`` is the Go error
    type (``FieldValueInvalid``) where one is known; ``path`` is the same place as keys,
    to find it in the source file (empty when only ``field`` is known).

        >>> str(FieldError.at(("spec",), "spec", "Required value"))
        'spec: Required value'
    """

    type: str
    field: str | None
    message: str
    value: Any = None
    path: JsonPath = ()

    @classmethod
    def at(cls, path: JsonPath, field: str | None, message: str) -> FieldError:
        """An error whose message already says what is wrong (the schema checks' form)."""
        return cls("", field, message, path=path)

    @property
    def unknown(self) -> bool:
        """An unknown field (strict field validation), not a schema violation."""
        return self.message.startswith('unknown field "')

    def __str__(self) -> str:
        return f"{self.field}: {self.message}" if self.field is not None else self.message


class ObjectRef(NamedTuple):
    """Which object a message is about: ``TrainJob default/llm``."""

    kind: str
    name: str
    namespace: str | None = None

    def __str__(self) -> str:
        if self.namespace:
            return escape_text(f"{self.kind} {self.namespace}/{self.name}")
        return escape_text(f"{self.kind} {self.name}")


@dataclass
class Problem:
    """One finding: where, about what, which field, and what is wrong.

    ``rule`` names the check that found it, for ``trainc check`` reports: ``input``
    (a path or file that cannot be read, a duplicate object), ``yaml`` (not YAML, or
    not a Kubernetes object), ``crd-schema``, ``crd-cel``, ``webhook``, ``resolve``.
    """

    message: str
    location: SourceLocation | None = None
    object: ObjectRef | None = None
    field_path: str | None = None
    rule: str | None = None
    # "output" when the problem is in an object trainc rendered (located at its input)
    stage: str = "input"
    details: tuple[tuple[str, str], ...] = ()  # for reports, e.g. (("crd", ...),)

    def __str__(self) -> str:
        parts = []
        if self.location is not None:
            parts.append(str(self.location))
        if self.object is not None:
            parts.append(str(self.object))
        if self.field_path:
            parts.append(self.field_path)
        parts.append(self.message)
        return escape_text(": ".join(parts))  # one problem, one line


def location_order(location: SourceLocation | None) -> tuple[str, int, int]:
    """The one order of every report: by file, line and column, messages about no place
    first. Sorts using it are stable, so what one place yields stays in the order it was
    found (the API server's own order of its errors, for instance)."""
    if location is None:
        return ("", 0, 0)
    return (location.file, location.line, location.column)


def warning_order(warning: Problem) -> tuple[tuple[str, int, int], str, str]:
    """Warnings by place, then object, then message: one order whatever found them first,
    so that a build put together from parts says them in the order a whole build does
    (:mod:`compiler.plan.chunks`; here, not in the render chain, so that a merge of
    cached chunks does not import the chain)."""
    return (location_order(warning.location), str(warning.object or ""), warning.message)


def sorted_problems(problems: Iterable[Problem]) -> list[Problem]:
    """Problems in report order (:func:`location_order`).

    >>> [p.message for p in sorted_problems([Problem("b", SourceLocation("f", 2, 1)),
    ...                                      Problem("a", SourceLocation("f", 2, 1)),
    ...                                      Problem("c")])]
    ['c', 'b', 'a']
    """
    return sorted(problems, key=lambda p: location_order(p.location))


# --- findings: what a check reports -----------------------------------------------------
#
# A finding names the rule or policy, the object, the field path and the source location.
# For an object trainc rendered, the location is the input that produced it (the TrainJob,
# or the runtime where the field came from), never the output file. Severities follow
# ValidatingAdmissionPolicy's validationActions: ``error`` (Deny, the built-in checks),
# ``warning`` (Warn) and ``audit`` (Audit).


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    AUDIT = "audit"


class Finding(NamedTuple):
    """One result of one check on one object.

    A named tuple rather than a frozen dataclass: a large check makes and sends between
    processes hundreds of thousands of them; a tuple is made in a third of the time, and
    pickled and read back in about a third.
    """

    rule: str  # e.g. "crd-schema", "crd-cel", "webhook", "vap/<policy name>", "cue/<file>"
    severity: Severity
    message: str
    object: ObjectRef | None = None
    field_path: str | None = None
    location: SourceLocation | None = None
    stage: str = "input"  # "input" or "output" (found in what trainc rendered)
    details: tuple[tuple[str, str], ...] = ()  # e.g. (("reason", "Invalid"),) or audit annotations

    @classmethod
    def of_problem(
        cls, problem: Problem, rule: str, severity: Severity = Severity.ERROR
    ) -> Finding:
        return cls(
            rule,
            severity,
            problem.message,
            problem.object,
            problem.field_path,
            problem.location,
            problem.stage,
            problem.details,
        )


def finding_order(finding: Finding) -> tuple[str, int, int]:
    """Findings in report order, as problems (:func:`location_order`)."""
    return location_order(finding.location)


class TraincError(Exception):
    """Base class of the errors trainc reports to a user without a traceback."""

    exit_code = EXIT_INPUT_ERROR

    def lines(self) -> list[str]:
        """What a person is shown: bounded (:func:`listing`), control characters escaped."""
        return listing(escape_text(line) for line in str(self).splitlines())


@dataclass
class InputError(TraincError):
    """Bad input: one or more problems, each with its source location."""

    problems: list[Problem] = field(default_factory=list)

    def __post_init__(self) -> None:
        super().__init__(self.__str__())

    @classmethod
    def single(
        cls,
        message: str,
        location: SourceLocation | None = None,
        object: ObjectRef | None = None,
        field_path: str | None = None,
    ) -> InputError:
        return cls([Problem(message, location, object, field_path)])

    def lines(self) -> list[str]:
        """One line per problem, at most :data:`MAX_LISTED` of them (:func:`listing`)."""
        return listing(str(p) for p in self.problems)

    def __str__(self) -> str:
        return "\n".join(self.lines())


class UsageError(TraincError):
    """A command line that cannot work as given (exit code 2)."""


class SetupError(TraincError):
    """The machine lacks something trainc needs (upstream artifacts, a CLI); says how to fix it."""
