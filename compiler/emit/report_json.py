"""The ``trainc check`` report as JSON, for programs.

Schema (``schemaVersion`` 1; fields are only ever added within a version)::

    {
      "schemaVersion": 1,
      "tool": {"name": "trainc", "version": "0.1.0"},
      "summary": {
        "errors": 1, "warnings": 0, "audit": 0,   # findings by severity
        "objects": {"input": 3, "output": 4},     # objects checked
        "policyFiles": ["policies/limits.cue"],   # CUE files found among the paths
        "exitCode": 1                             # what `trainc check` exits with
      },
      "findings": [
        {
          "rule": "crd-schema",             # built-in rule, "vap/<policy>" or "cue/<file>"
          "severity": "error",              # "error" | "warning" | "audit"
          "stage": "input",                 # "input" | "output" (found in rendered objects)
          "message": "Invalid value: ...",
          "object": {"kind": "TrainJob", "name": "smoke", "namespace": "vision"},  # or null
          "fieldPath": "spec.trainer.numNodes",                                   # or null
          "location": {"file": "jobs/smoke.yaml", "line": 11, "column": 5},       # or null
          "details": {"reason": "Invalid"}  # rule-specific strings, e.g. "renderedFrom"
        }
      ],
      "notes": ["..."]                      # checks that were skipped, and why
    }

``location`` always names an input file (for an output finding, the input that
produced the field); ``line`` and ``column`` are 1-based, both absent when the finding is
about the whole file (one that cannot be read, say).
Findings are sorted by file, line and column. The text is deterministic: the same
inputs give the same bytes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from json.encoder import encode_basestring
from typing import Any

from compiler import __version__
from compiler.errors import Finding, Severity, SourceLocation
from compiler.model.check import CheckResult

__all__ = [
    "SCHEMA_VERSION",
    "dumps_indented",
    "finding_json",
    "json_chunks",
    "render_json",
    "report_json",
]

SCHEMA_VERSION = 1


def finding_json(finding: Finding) -> dict[str, Any]:
    ref = finding.object
    location = finding.location
    return {
        "rule": finding.rule,
        "severity": finding.severity.value,
        "stage": finding.stage,
        "message": finding.message,
        "object": None
        if ref is None
        else {"kind": ref.kind, "name": ref.name, "namespace": ref.namespace},
        "fieldPath": finding.field_path,
        "location": None if location is None else _location(location),
        "details": dict(finding.details),
    }


def _location(location: SourceLocation) -> dict[str, Any]:
    """A place in a file; the whole file (a file that cannot be read) has no line."""
    if location.line <= 0:
        return {"file": location.file}
    return {"file": location.file, "line": location.line, "column": location.column}


def report_json(result: CheckResult) -> dict[str, Any]:
    return _report(result, [finding_json(f) for f in result.findings])


def _report(result: CheckResult, findings: Any) -> dict[str, Any]:
    stages = [o.stage for o in result.objects]
    counts = result.counts()
    return {
        "schemaVersion": SCHEMA_VERSION,
        "tool": {"name": "trainc", "version": __version__},
        "summary": {
            "errors": counts[Severity.ERROR],
            "warnings": counts[Severity.WARNING],
            "audit": counts[Severity.AUDIT],
            "objects": {"input": stages.count("input"), "output": stages.count("output")},
            "policyFiles": list(result.policy_files),
            "exitCode": result.exit_code,
        },
        "findings": findings,
        "notes": list(result.notes),
    }


def render_json(result: CheckResult) -> str:
    """:func:`report_json` as indented text (:func:`json_chunks` joined)."""
    return "".join(json_chunks(result))


def json_chunks(result: CheckResult) -> Iterator[str]:
    """:func:`render_json`'s text in pieces, to write one after another: a large report
    (30,000 findings, 23 MB) is then never one string, nor copied whole to be joined
    and encoded. Each finding is written straight from the :class:`Finding`
    (:func:`_finding_text`), the same bytes as encoding its dict.

    Every finding is encoded before this returns, so a value JSON has no type for
    fails the report before anything is written.
    """
    try:
        texts = [_finding_text(f, _FINDING_INDENT) for f in result.findings]
    except _NotPlain:  # a value JSON has no type for: as json.dumps writes it, or refuses
        return iter([dumps_indented(report_json(result)) + "\n"])
    if not texts:
        return iter([dumps_indented(_report(result, [])) + "\n"])
    # the report around its findings array, split where the array goes (a NUL is never
    # in encoded JSON); the array as _encode writes a list at that depth
    head, tail = dumps_indented(_report(result, _Encoded("\0"))).split("\0")
    return _joined(
        head + "[" + _FINDING_INDENT,
        texts,
        "," + _FINDING_INDENT,
        _FINDING_INDENT[:-2] + "]" + tail + "\n",
    )


def _joined(head: str, texts: list[str], between: str, tail: str) -> Iterator[str]:
    """``head + between.join(texts) + tail`` in pieces of _PIECE texts each."""
    yield head
    for start in range(0, len(texts), _PIECE):
        piece = between.join(texts[start : start + _PIECE])
        yield piece + between if start + _PIECE < len(texts) else piece
    yield tail


_PIECE = 1000  # findings per piece written (about 800 KB)

_FINDING_INDENT = "\n    "  # a finding's place in the report: report, "findings", item


class _Encoded(str):
    """Text :func:`_encode` writes as it is: a value encoded already."""


def _scalar(value: Any, newline: str) -> str:
    if isinstance(value, str):
        return encode_basestring(value)
    out: list[str] = []
    _encode(value, newline, out)
    return "".join(out)


def _finding_text(finding: Finding, newline: str) -> str:
    """``_encode(finding_json(finding), newline)`` as one string, without the dict."""
    inner = newline + "  "
    nested = inner + "  "
    ref = finding.object
    if ref is None:
        obj = "null"
    else:
        obj = (
            f'{{{nested}"kind": {_scalar(ref.kind, nested)},'
            f'{nested}"name": {_scalar(ref.name, nested)},'
            f'{nested}"namespace": {_scalar(ref.namespace, nested)}{inner}}}'
        )
    location = finding.location
    if location is None:
        place = "null"
    elif location.line <= 0:
        place = f'{{{nested}"file": {_scalar(location.file, nested)}{inner}}}'
    else:
        place = (
            f'{{{nested}"file": {_scalar(location.file, nested)},'
            f'{nested}"line": {_scalar(location.line, nested)},'
            f'{nested}"column": {_scalar(location.column, nested)}{inner}}}'
        )
    details = dict(finding.details)
    if details:
        parts = [
            f"{nested}{encode_basestring(k)}: {_scalar(v, nested)}" for k, v in details.items()
        ]
        detail_text = "{" + ",".join(parts) + inner + "}"
    else:
        detail_text = "{}"
    return (
        f'{{{inner}"rule": {_scalar(finding.rule, inner)},'
        f'{inner}"severity": {_scalar(finding.severity.value, inner)},'
        f'{inner}"stage": {_scalar(finding.stage, inner)},'
        f'{inner}"message": {_scalar(finding.message, inner)},'
        f'{inner}"object": {obj},'
        f'{inner}"fieldPath": {_scalar(finding.field_path, inner)},'
        f'{inner}"location": {place},'
        f'{inner}"details": {detail_text}{newline}}}'
    )


def dumps_indented(value: Any) -> str:
    """``json.dumps(value, indent=2, ensure_ascii=False)``, the same text, faster.

    With ``indent`` the standard library encodes in Python, one generator step per
    token (0.4 s of CPU for 30,000 findings); this writes the same text with the C
    string encoder. Anything but JSON's own types is left to ``json.dumps``.
    """
    out: list[str] = []
    try:
        _encode(value, "\n", out)
    except _NotPlain:
        return json.dumps(value, indent=2, ensure_ascii=False)
    return "".join(out)


class _NotPlain(Exception):
    """A value of a type (or a key) :func:`_encode` leaves to ``json.dumps``."""


def _encode(value: Any, newline: str, out: list[str]) -> None:
    """Append ``value`` encoded; ``newline`` is a newline and the current indentation."""
    if isinstance(value, _Encoded):
        out.append(value)
    elif isinstance(value, str):
        out.append(encode_basestring(value))
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int):
        out.append(int.__repr__(value))
    elif isinstance(value, float):
        out.append(json.dumps(value))
    elif isinstance(value, dict):
        if not value:
            out.append("{}")
            return
        inner = newline + "  "
        separator = "{" + inner
        for key, item in value.items():
            if not isinstance(key, str):
                raise _NotPlain
            out.append(separator)
            out.append(encode_basestring(key))
            out.append(": ")
            _encode(item, inner, out)
            separator = "," + inner
        out.append(newline + "}")
    elif isinstance(value, (list, tuple)):
        if not value:
            out.append("[]")
            return
        inner = newline + "  "
        separator = "[" + inner
        for item in value:
            out.append(separator)
            _encode(item, inner, out)
            separator = "," + inner
        out.append(newline + "]")
    else:
        raise _NotPlain
