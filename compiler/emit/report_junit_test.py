"""The JUnit report: one suite per file, a case per object and rule, failures for errors."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from compiler.apiserver.manifest import Manifest, SourceMap
from compiler.emit.report_junit import render_junit
from compiler.errors import Finding, ObjectRef, Severity, SourceLocation
from compiler.model.check import CheckResult
from compiler.policy.objects import PolicyObject


def _object(kind: str, name: str, file: str, stage: str = "input") -> PolicyObject:
    data = {"kind": kind, "metadata": {"name": name, "namespace": "ns"}}
    return PolicyObject(data, Manifest(data, SourceMap(file)), stage=stage)


def test_suites_cases_and_failures() -> None:
    job = ObjectRef("TrainJob", "llm", "ns")
    at = SourceLocation("jobs.yaml", 3, 5)
    findings = [
        Finding("crd-schema", Severity.ERROR, "bad \x00 value", job, "spec.a", at),
        Finding("crd-schema", Severity.ERROR, "worse", job, "spec.b", at),
        Finding("vap/p", Severity.WARNING, "careful", job, None, at),
        Finding(
            "output-schema",
            Severity.ERROR,
            "Required value",
            ObjectRef("JobSet", "llm", "ns"),
            "spec.x",
            SourceLocation("runtime.yaml", 9, 1),
            stage="output",
        ),
        Finding("input", Severity.ERROR, "no such file", None, None, None),
    ]
    objects = [
        _object("TrainJob", "llm", "jobs.yaml"),
        _object("TrainJob", "ok", "jobs.yaml"),
        _object("JobSet", "llm", "jobs.yaml", "output"),
        _object("PodGroup", "llm", "jobs.yaml", "output"),
    ]
    text = render_junit(CheckResult(findings, objects))
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>\n')
    root = ET.fromstring(text.split("\n", 1)[1])
    assert (root.get("tests"), root.get("failures")) == ("6", "3")
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert list(suites) == ["jobs.yaml", "runtime.yaml", "trainc"]
    cases = {c.get("name"): c for c in suites["jobs.yaml"].findall("testcase")}
    assert list(cases) == [
        "PodGroup ns/llm (output)",
        "TrainJob ns/llm [crd-schema]",
        "TrainJob ns/llm [vap/p]",
        "TrainJob ns/ok",
    ]
    assert suites["jobs.yaml"].get("failures") == "1"
    failure = cases["TrainJob ns/llm [crd-schema]"].find("failure")
    assert failure is not None
    assert failure.get("type") == "crd-schema"
    assert failure.get("message") == "spec.a: bad \ufffd value"  # XML cannot hold NUL
    assert failure.text is not None and len(failure.text.splitlines()) == 2
    warned = cases["TrainJob ns/llm [vap/p]"]
    assert warned.find("failure") is None
    out = warned.find("system-out")
    assert out is not None and out.text == "warning: jobs.yaml:3:5: TrainJob ns/llm: careful"
    [output_case] = suites["runtime.yaml"].findall("testcase")
    assert output_case.get("name") == "JobSet ns/llm (output) [output-schema]"
    [missing] = suites["trainc"].findall("testcase")
    assert missing.get("name") == "(file) [input]"


def test_clean_run_passes_every_object() -> None:
    text = render_junit(CheckResult([], [_object("TrainJob", "a", "a.yaml")]))
    root = ET.fromstring(text.split("\n", 1)[1])
    assert (root.get("tests"), root.get("failures")) == ("1", "0")
