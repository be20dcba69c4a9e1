"""The text report: source lines with a caret, grouped by file, and the summary line."""

from __future__ import annotations

import doctest

import pytest

from compiler.apiserver.manifest import Manifest, SourceMap
from compiler.emit import report_text
from compiler.emit.report_text import render_text, snippet, text_chunks
from compiler.errors import Finding, ObjectRef, Severity, SourceLocation
from compiler.model.check import CheckResult
from compiler.policy.objects import PolicyObject

JOB = (
    "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nspec:\n\ttrainer: {numNodes: two}\n"
)


def test_doctests() -> None:
    assert doctest.testmod(report_text).failed == 0


def test_caret_keeps_tabs_so_it_lines_up() -> None:
    assert snippet(JOB, 4, 21) == [
        "  |",
        "3 | spec:",
        "4 | \ttrainer: {numNodes: two}",
        "  | \t                   ^",
    ]
    assert snippet(JOB, 1, 1)[1:] == ["1 | apiVersion: trainer.kubeflow.org/v1alpha1", "  | ^"]
    assert snippet(JOB, 9, 1) == []  # past the end: no snippet, no crash
    assert snippet(JOB, 2, 0)[-1] == "2 | kind: TrainJob"  # no column: no caret


def test_grouped_by_file_with_summary() -> None:
    job = ObjectRef("TrainJob", "llm", "default")
    findings = [
        Finding(
            "crd-schema", Severity.ERROR, "bad", job, "spec.x", SourceLocation("b.yaml", 4, 21)
        ),
        Finding("vap/p", Severity.WARNING, "meh", job, None, SourceLocation("b.yaml", 1, 1)),
        Finding("cue/c.cue", Severity.AUDIT, "noted", None, None, SourceLocation("a.yaml", 2, 1)),
        Finding(
            "output-schema",
            Severity.ERROR,
            "Required value",
            ObjectRef("JobSet", "llm", "default"),
            "spec.replicatedJobs",
            SourceLocation("b.yaml", 3, 1),
            stage="output",
            details=(("check", "schema"), ("renderedFrom", "TrainJob default/llm")),
        ),
        Finding("input", Severity.ERROR, "no such file or directory", None, None, None),
    ]
    manifest = Manifest({"kind": "TrainJob"}, SourceMap("b.yaml"))
    result = CheckResult(
        findings,
        [PolicyObject({}, manifest), PolicyObject({}, manifest, stage="output")],
        {"b.yaml": JOB, "a.yaml": "a: 1\nb: 2\n"},
        notes=["CUE policies skipped"],
    )
    text = render_text(result)
    lines = text.splitlines()
    assert lines[0] == "a.yaml"
    assert lines.index("b.yaml") < lines.index("(no file)")
    assert "error[crd-schema]: TrainJob default/llm: spec.x: bad" in lines
    assert "  | \t                   ^" in lines
    assert "error[output-schema]: JobSet default/llm: spec.replicatedJobs: Required value" in lines
    assert "  = in the rendered JobSet default/llm: this input produced the field" in lines
    assert "  = check: schema" in lines
    assert "error[input]: no such file or directory" in lines
    assert lines[-3:] == [
        "note: CUE policies skipped",
        "checked 1 input objects and 1 rendered objects",
        "3 errors, 1 warning, 1 audit",
    ]
    assert text.endswith("\n")


def test_clean_report_is_just_the_summary() -> None:
    assert render_text(CheckResult([])).splitlines()[-1] == "0 errors, 0 warnings, 0 audit"


class _CountingText(str):
    """A source text that counts how often it is split into lines."""

    splits = 0

    def splitlines(self, keepends: bool = False) -> list[str]:
        type(self).splits += 1
        return super().splitlines(keepends)


def test_each_source_file_is_split_once_however_many_findings() -> None:
    # one split per finding made `check` quadratic in the size of a file with findings
    text = _CountingText("".join(f"line {n}\n" for n in range(1, 501)))
    findings = [
        Finding("vap/p", Severity.ERROR, f"bad {n}", None, None, SourceLocation("big.yaml", n, 1))
        for n in range(1, 501)
    ]
    lines = render_text(CheckResult(findings, [], {"big.yaml": text})).splitlines()
    assert _CountingText.splits == 1
    assert "250 | line 250" in lines and "500 | line 500" in lines


def test_a_large_report_is_written_in_pieces_that_join_to_the_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """2,500 findings with a snippet each (17,502 lines): pieces of 10,000 lines,
    each ending in a newline, that join to the report written as one piece."""
    text = "".join(f"line {n}\n" for n in range(1, 2501))
    findings = [
        Finding("vap/p", Severity.ERROR, f"bad {n}", None, None, SourceLocation("big.yaml", n, 1))
        for n in range(1, 2501)
    ]
    result = CheckResult(findings, [], {"big.yaml": text})
    pieces = list(text_chunks(result))
    whole = "".join(pieces)
    lines = whole.split("\n")
    assert len(pieces) == 2 and len(lines) == 17_503  # 17,502 lines and the last newline
    assert all(piece.endswith("\n") for piece in pieces)
    monkeypatch.setattr(report_text, "_PIECE", 10**9)
    assert list(text_chunks(result)) == [whole]
    assert lines[0] == "big.yaml" and lines[-2] == "2500 errors, 0 warnings, 0 audit"
    assert "2500 | line 2500" in lines
