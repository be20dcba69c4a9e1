"""The ``trainc check`` report for people: findings grouped by file, with the source line.

::

    example/jobs/smoke.yaml
    error[crd-schema]: TrainJob vision/smoke: spec.trainer.numNodes: Invalid value: ...
      --> example/jobs/smoke.yaml:11:5
       |
    10 |   trainer:
    11 |     numNodes: two
       |     ^
       = rendered JobSet vision/smoke (stage output)      (only for findings on outputs)

    checked 3 input objects and 2 rendered objects
    1 error, 0 warnings, 0 audit

Files come in path order, findings in line order; findings without a file come last
under ``(no file)``. Every finding is listed (a report, like the JSON one), each line
cut to :data:`compiler.errors.MAX_LINE` characters (:func:`compiler.errors.clip`). The
caret is under the column the finding names (a tab in the line before it is kept, so the
caret lines up in a terminal).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from compiler.errors import (
    Finding,
    SourceLocation,
    clip,
    escape_text,
)
from compiler.model.check import CheckResult

__all__ = ["render_text", "snippet", "snippet_of_lines", "text_chunks"]

_NO_FILE = "(no file)"


def snippet(text: str, line: int, column: int, context: int = 1) -> list[str]:
    """The lines around ``line`` (1-based), numbered, and a caret under ``column``.

    >>> print("\\n".join(snippet("a: 1\\nb:\\n  c: x\\n", 3, 3)))
      |
    2 | b:
    3 |   c: x
      |   ^
    """
    return snippet_of_lines(text.splitlines(), line, column, context)


def snippet_of_lines(lines: Sequence[str], line: int, column: int, context: int = 1) -> list[str]:
    """:func:`snippet` over a file already split into lines (split once per file, not
    once per finding: a file with thousands of findings stays linear)."""
    if not 1 <= line <= len(lines):
        return []
    first = max(1, line - context)
    width = len(str(line))
    gutter = " " * width
    out = [f"{gutter} |"]
    for number in range(first, line + 1):
        source = lines[number - 1]
        out.append(f"{number:>{width}} | {source}".rstrip())
    if column >= 1:
        before = lines[line - 1][: column - 1]
        pad = "".join("\t" if char == "\t" else " " for char in before)
        out.append(f"{gutter} | {pad}^")
    return out


def _heading(finding: Finding) -> str:
    # escaped once as a whole: escaping goes character by character and leaves no
    # character it escapes, so the object's own escaping (ObjectRef.__str__) adds nothing
    parts = [f"{finding.severity.value}[{finding.rule}]"]
    ref = finding.object
    if ref is not None:
        parts.append(
            f"{ref.kind} {ref.namespace}/{ref.name}" if ref.namespace else f"{ref.kind} {ref.name}"
        )
    if finding.field_path:
        parts.append(finding.field_path)
    parts.append(finding.message)
    return escape_text(": ".join(parts))


class _SourceLines:
    """Each source file's lines, split on first use and kept for the next finding, and
    the lines that show a place (several findings often share one)."""

    def __init__(self, texts: Mapping[str, str]) -> None:
        self.texts = texts
        self.split: dict[str, list[str] | None] = {}
        self.places: dict[SourceLocation, list[str]] = {}

    def of(self, file: str) -> list[str] | None:
        if file not in self.split:
            text = self.texts.get(file)
            self.split[file] = text.splitlines() if text is not None else None
        return self.split[file]

    def place(self, location: SourceLocation) -> list[str]:
        """The ``-->`` line and the snippet of ``location``."""
        found = self.places.get(location)
        if found is None:
            found = [f"  --> {location}"]
            lines = self.of(location.file)
            if lines is not None and location.line > 0:
                found.extend(snippet_of_lines(lines, location.line, location.column))
            self.places[location] = found
        return found


def _finding(finding: Finding, sources: _SourceLines) -> list[str]:
    out = [_heading(finding)]
    location = finding.location
    width = 1
    if location is not None:
        out.extend(sources.place(location))
        if location.line > 0 and sources.of(location.file) is not None:
            width = len(str(location.line))
    gutter = " " * width
    if finding.stage == "output":
        out.append(f"{gutter} = in the rendered {finding.object}: this input produced the field")
    out += [f"{gutter} = {key}: {value}" for key, value in finding.details if key != "renderedFrom"]
    return out


def render_text(result: CheckResult) -> str:
    """The whole report, ending with the summary line and a newline."""
    return "".join(text_chunks(result))


def text_chunks(result: CheckResult) -> Iterator[str]:
    """:func:`render_text`'s text in pieces, to write one after another (a large report
    is then never one string; every line is made before this returns)."""
    groups: dict[str, list[Finding]] = {}
    for finding in result.findings:
        key = finding.location.file if finding.location is not None else _NO_FILE
        groups.setdefault(key, []).append(finding)
    order = sorted(groups, key=lambda name: (name == _NO_FILE, name))
    out: list[str] = []
    sources = _SourceLines(result.texts)
    for name in order:
        out.append(name)
        for finding in groups[name]:
            out.extend(clip(line) for line in _finding(finding, sources))
            out.append("")
    out.extend(f"note: {note}" for note in result.notes)
    stages = [o.stage for o in result.objects]
    out.append(
        f"checked {stages.count('input')} input objects and "
        f"{stages.count('output')} rendered objects"
    )
    out.append(result.summary())
    return _pieces(out)


def _pieces(lines: list[str]) -> Iterator[str]:
    """``"\\n".join(lines) + "\\n"`` in pieces of _PIECE lines each."""
    for start in range(0, len(lines), _PIECE):
        yield "\n".join(lines[start : start + _PIECE]) + "\n"


_PIECE = 10_000  # lines per piece written
