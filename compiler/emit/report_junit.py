"""The ``trainc check`` report as JUnit XML, for CI systems that show test results.

::

    <testsuites name="trainc check" tests="4" failures="1" errors="0" skipped="0">
      <testsuite name="example/jobs/smoke.yaml" tests="2" failures="1" ...>
        <testcase classname="example/jobs/smoke.yaml" name="TrainJob vision/smoke [crd-schema]">
          <failure type="crd-schema" message="spec.trainer.numNodes: Invalid value: ...">
            example/jobs/smoke.yaml:11:5: TrainJob vision/smoke: spec.trainer.numNodes: ...
          </failure>
        </testcase>
        <testcase classname="example/jobs/smoke.yaml" name="JobSet vision/smoke (output)"/>
      </testsuite>
    </testsuites>

One ``testsuite`` per input file (findings without a file: suite ``trainc``). In it,
one ``testcase`` per object and rule that reported, named ``<object> [<rule>]``, and
one passing ``testcase`` per object with no finding at all (an object rendered from a
TrainJob is listed under the TrainJob's file, marked ``(output)``). A testcase with an
``error`` finding has one ``failure`` (every error of that object and rule in its
text); warnings and audit findings are written to the testcase's ``system-out``, so
the test passes.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

from compiler.errors import Finding, Severity
from compiler.model.check import CheckResult
from compiler.policy.objects import PolicyObject

__all__ = ["render_junit"]

_NO_FILE = "trainc"
# characters XML 1.0 cannot hold, even escaped
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)


@dataclass
class _Case:
    name: str
    findings: list[Finding] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return any(f.severity is Severity.ERROR for f in self.findings)


def _object_name(obj: PolicyObject) -> str:
    return f"{obj.ref} (output)" if obj.stage == "output" else str(obj.ref)


def _finding_name(finding: Finding) -> str:
    subject = str(finding.object) if finding.object is not None else "(file)"
    if finding.stage == "output":
        subject += " (output)"
    return f"{subject} [{finding.rule}]"


def _line(finding: Finding) -> str:
    parts = [str(p) for p in (finding.location, finding.object, finding.field_path) if p]
    parts.append(finding.message)
    return f"{finding.severity.value}: " + ": ".join(parts)


def _suites(result: CheckResult) -> dict[str, dict[str, _Case]]:
    suites: dict[str, dict[str, _Case]] = {}
    reported: set[str] = set()
    for finding in result.findings:
        file = finding.location.file if finding.location is not None else _NO_FILE
        name = _finding_name(finding)
        cases = suites.setdefault(file, {})
        cases.setdefault(name, _Case(name)).findings.append(finding)
        if finding.object is not None:
            reported.add(f"{finding.object}\0{finding.stage}")
    for obj in result.objects:
        file = obj.origin.source.file
        if f"{obj.ref}\0{obj.stage}" in reported:
            continue
        name = _object_name(obj)
        suites.setdefault(file, {}).setdefault(name, _Case(name))
    return suites


def render_junit(result: CheckResult) -> str:
    """The JUnit XML document, deterministic: suites by file name, cases by name."""
    suites = _suites(result)
    root = ET.Element("testsuites", {"name": "trainc check"})
    total = failures = 0
    for file in sorted(suites, key=lambda name: (name == _NO_FILE, name)):
        cases = [suites[file][name] for name in sorted(suites[file])]
        failed = sum(1 for case in cases if case.failed)
        suite = ET.SubElement(
            root,
            "testsuite",
            {
                "name": _xml(file),
                "tests": str(len(cases)),
                "failures": str(failed),
                "errors": "0",
                "skipped": "0",
            },
        )
        total += len(cases)
        failures += failed
        for case in cases:
            element = ET.SubElement(
                suite, "testcase", {"classname": _xml(file), "name": _xml(case.name)}
            )
            errors = [f for f in case.findings if f.severity is Severity.ERROR]
            others = [f for f in case.findings if f.severity is not Severity.ERROR]
            if errors:
                first = errors[0]
                message = ": ".join(p for p in (first.field_path, first.message) if p)
                failure = ET.SubElement(
                    element, "failure", {"type": _xml(first.rule), "message": _xml(message)}
                )
                failure.text = _xml("\n".join(_line(f) for f in errors))
            if others:
                out = ET.SubElement(element, "system-out")
                out.text = _xml("\n".join(_line(f) for f in others))
    root.attrib.update(
        {"tests": str(total), "failures": str(failures), "errors": "0", "skipped": "0"}
    )
    ET.indent(root)
    body = ET.tostring(root, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"
