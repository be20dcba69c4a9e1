"""The error model: every user-facing failure names a place in a source file.

A user mistake is raised as an :class:`InputError` (exit code 2) and printed as

    example/job.yaml:12:7: TrainJob default/llm: spec.trainer.numNodes: expected integer, got string

never as a traceback. Policy violations (exit code 1) are reported by ``validate``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

EXIT_OK = 0
EXIT_VIOLATIONS = 1
EXIT_INPUT_ERROR = 2


@dataclass(frozen=True, order=True)
class SourceLocation:
    """A 1-based line and column in a file; ``line == 0`` means the whole file."""

    file: str
    line: int = 0
    column: int = 0

    def __str__(self) -> str:
        if self.line <= 0:
            return self.file
        return f"{self.file}:{self.line}:{self.column}"


@dataclass(frozen=True)
class ObjectRef:
    """Which object a message is about: ``TrainJob default/llm``."""

    kind: str
    name: str
    namespace: str | None = None

    def __str__(self) -> str:
        if self.namespace:
            return f"{self.kind} {self.namespace}/{self.name}"
        return f"{self.kind} {self.name}"


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

    def __str__(self) -> str:
        parts = []
        if self.location is not None:
            parts.append(str(self.location))
        if self.object is not None:
            parts.append(str(self.object))
        if self.field_path:
            parts.append(self.field_path)
        parts.append(self.message)
        return ": ".join(parts)


class TraincError(Exception):
    """Base class of the errors trainc reports to a user without a traceback."""

    exit_code = EXIT_INPUT_ERROR


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

    def __str__(self) -> str:
        return "\n".join(str(p) for p in self.problems)


class SetupError(TraincError):
    """The machine lacks something trainc needs (upstream artifacts, a CLI); says how to fix it."""
