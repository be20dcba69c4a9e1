"""The JSON report follows its documented schema."""

from __future__ import annotations

import json

from compiler.apiserver.manifest import Manifest, SourceMap
from compiler.emit.report_json import (
    SCHEMA_VERSION,
    dumps_indented,
    json_chunks,
    render_json,
    report_json,
)
from compiler.errors import Finding, ObjectRef, Severity, SourceLocation
from compiler.model.check import CheckResult
from compiler.policy.objects import PolicyObject


def test_schema() -> None:
    manifest = Manifest({"kind": "TrainJob"}, SourceMap("job.yaml"))
    result = CheckResult(
        [
            Finding(
                "crd-schema",
                Severity.ERROR,
                "Invalid value",
                ObjectRef("TrainJob", "smoke", "vision"),
                "spec.trainer.numNodes",
                SourceLocation("jobs/smoke.yaml", 11, 5),
                details=(("reason", "Invalid"),),
            ),
            Finding("vap/p", Severity.AUDIT, "audited", None, None, None, stage="output"),
        ],
        [PolicyObject({}, manifest), PolicyObject({}, manifest, stage="output")],
        policy_files=["policies/limits.cue"],
        notes=["n"],
    )
    report = json.loads(render_json(result))
    assert report == {
        "schemaVersion": SCHEMA_VERSION,
        "tool": {"name": "trainc", "version": report["tool"]["version"]},
        "summary": {
            "errors": 1,
            "warnings": 0,
            "audit": 1,
            "objects": {"input": 1, "output": 1},
            "policyFiles": ["policies/limits.cue"],
            "exitCode": 1,
        },
        "findings": [
            {
                "rule": "crd-schema",
                "severity": "error",
                "stage": "input",
                "message": "Invalid value",
                "object": {"kind": "TrainJob", "name": "smoke", "namespace": "vision"},
                "fieldPath": "spec.trainer.numNodes",
                "location": {"file": "jobs/smoke.yaml", "line": 11, "column": 5},
                "details": {"reason": "Invalid"},
            },
            {
                "rule": "vap/p",
                "severity": "audit",
                "stage": "output",
                "message": "audited",
                "object": None,
                "fieldPath": None,
                "location": None,
                "details": {},
            },
        ],
        "notes": ["n"],
    }
    assert render_json(result) == render_json(result)


def test_dumps_indented_is_json_dumps_text() -> None:
    """The fast encoder writes byte for byte what ``json.dumps(indent=2)`` writes."""
    values: list[object] = [
        {},
        [],
        "",
        None,
        {"a": {}, "b": [], "c": [{}], "d": [[], [1, [2, {"e": None}]]]},
        {"unicode": "héllo ✓ \U0001d518", "control": 'tab\tnl\nquote"back\\slash\x00\x1f\u2028'},
        {"numbers": [0, -1, 10**30, 1.5, -0.0, 1e300, float("inf"), float("nan")]},
        {"booleans": [True, False], "tuple": (1, "x", (None,))},
        {"findings": [{"rule": "vap/p", "object": None, "details": {"reason": "Invalid"}}] * 3},
    ]
    for value in values:
        assert dumps_indented(value) == json.dumps(value, indent=2, ensure_ascii=False)


def test_dumps_indented_leaves_other_types_to_json() -> None:
    # keys json.dumps turns into strings, and a type it refuses, as json.dumps does
    assert dumps_indented({1: "a", None: [True]}) == json.dumps(
        {1: "a", None: [True]}, indent=2, ensure_ascii=False
    )
    try:
        dumps_indented({"a": {1, 2}})
    except TypeError as error:
        assert "not JSON serializable" in str(error)
    else:
        raise AssertionError("a set is not JSON")


def test_findings_written_straight_are_the_dict_encoded() -> None:
    """Each finding is written without its dict: the same text as encoding
    :func:`finding_json`, whatever it holds."""
    located = SourceLocation("jobs/a.yaml", 3, 7)
    findings = [
        Finding("crd-schema", Severity.ERROR, "m", ObjectRef("TrainJob", "a", "ns"), "spec.x"),
        Finding("vap/p", Severity.WARNING, 'quote " tab\t é', ObjectRef("JobSet", "a"), None),
        Finding("input", Severity.ERROR, "unreadable", None, None, SourceLocation("x:1:2")),
        Finding(
            "vap/p",
            Severity.AUDIT,
            "\u2028line\x00",
            ObjectRef("Pod", "p\n", 7),  # type: ignore[arg-type]  # what a manifest may hold
            None,
            located,
            "output",
            (("reason", "Invalid"), ("binding", "b"), ("reason", "Forbidden"), ("k", "")),
        ),
    ]
    manifest = Manifest({"kind": "TrainJob"}, SourceMap("job.yaml"))
    result = CheckResult(findings, [PolicyObject({}, manifest)], notes=["n"])
    expected = dumps_indented(report_json(result)) + "\n"
    assert render_json(result) == expected
    assert json.loads(expected)["findings"][3]["details"] == {
        "reason": "Forbidden",
        "binding": "b",
        "k": "",
    }
    # a value JSON has no type for is refused as before
    odd = Finding("x", Severity.ERROR, "m", ObjectRef("Pod", "p", {1, 2}))  # type: ignore[arg-type]
    try:
        render_json(CheckResult([odd]))
    except TypeError as error:
        assert "not JSON serializable" in str(error)
    else:
        raise AssertionError("a set is not JSON")


def test_a_large_report_is_written_in_pieces_that_join_to_the_whole() -> None:
    """2,500 findings: three pieces of the findings array between the report's head and
    tail, which together are json.dumps(report_json(...)) byte for byte."""
    findings = [
        Finding(
            "vap/p",
            Severity.ERROR,
            f"denied {i}",
            ObjectRef("JobSet", f"job-{i}", "team"),
            None,
            SourceLocation("jobs/a.yaml", i + 1, 1),
            "output",
            (("reason", "Invalid"), ("renderedFrom", f"TrainJob team/job-{i}")),
        )
        for i in range(2500)
    ]
    result = CheckResult(findings, notes=["n"])
    pieces = list(json_chunks(result))
    assert len(pieces) == 5  # head, 1,000 + 1,000 + 500 findings, tail
    whole = "".join(pieces)
    assert whole == json.dumps(report_json(result), indent=2, ensure_ascii=False) + "\n"
    assert whole == render_json(result)
    empty = CheckResult([])
    assert "".join(json_chunks(empty)) == dumps_indented(report_json(empty)) + "\n"


def test_a_value_json_cannot_write_fails_before_the_first_piece() -> None:
    odd = Finding("x", Severity.ERROR, "m", ObjectRef("Pod", "p", {1, 2}))  # type: ignore[arg-type]
    fine = Finding("x", Severity.ERROR, "m")
    try:
        json_chunks(CheckResult([fine] * 1500 + [odd]))  # refused when called, not iterated
    except TypeError as error:
        assert "not JSON serializable" in str(error)
    else:
        raise AssertionError("a set is not JSON")
