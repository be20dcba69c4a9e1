"""SARIF 2.1.0: the log is well-formed by the specification and points at the right place.

No Python package ships the official SARIF JSON schema, so :func:`assert_sarif_2_1_0`
checks what that schema requires of every object trainc writes: required properties,
enumerations, minimums, and no property the schema does not define
(``additionalProperties: false`` holds for all of them).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import compiler.plan.check as check_module
from compiler.emit.report_sarif import SRCROOT, render_sarif, report_sarif
from compiler.errors import Finding, ObjectRef, Severity, SourceLocation
from compiler.load.discover import repository_root
from compiler.model.check import CheckResult
from compiler.plan.check import check_paths

REPO = Path(__file__).resolve().parents[2]
VIOLATIONS = REPO / "tests" / "fixtures" / "check" / "violations"


def _names(text: str) -> set[str]:
    return set(text.split())


# Properties the SARIF 2.1.0 schema defines, for the objects trainc writes.
_ALLOWED = {
    "log": {"$schema", "version", "runs", "inlineExternalProperties", "properties"},
    "run": _names(
        "tool invocations conversion language versionControlProvenance originalUriBaseIds "
        "artifacts logicalLocations graphs results automationDetails runAggregates "
        "baselineGuid redactionTokens defaultEncoding defaultSourceLanguage "
        "newlineSequences columnKind externalPropertyFileReferences threadFlowLocations "
        "taxonomies addresses translations policies webRequests webResponses "
        "specialLocations properties"
    ),
    "tool": {"driver", "extensions", "properties"},
    "toolComponent": _names(
        "guid name organization product productSuite shortDescription fullDescription "
        "fullName version semanticVersion dottedQuadFileVersion releaseDateUtc "
        "downloadUri informationUri globalMessageStrings notifications rules taxa "
        "locations language contents isComprehensive localizedDataSemanticVersion "
        "minimumRequiredLocalizedDataSemanticVersion associatedComponent "
        "translationMetadata supportedTaxonomies properties"
    ),
    "reportingDescriptor": _names(
        "id deprecatedIds guid deprecatedGuids name deprecatedNames shortDescription "
        "fullDescription messageStrings defaultConfiguration helpUri help relationships "
        "properties"
    ),
    "invocation": _names(
        "commandLine arguments responseFiles startTimeUtc endTimeUtc exitCode "
        "ruleConfigurationOverrides notificationConfigurationOverrides "
        "toolExecutionNotifications toolConfigurationNotifications exitCodeDescription "
        "exitSignalName exitSignalNumber processStartFailureMessage executionSuccessful "
        "machine account processId executableLocation workingDirectory "
        "environmentVariables stdin stdout stderr stdoutStderr properties"
    ),
    "notification": _names(
        "locations message level threadId timeUtc exception descriptor associatedRule properties"
    ),
    "result": _names(
        "guid correlationGuid ruleId ruleIndex rule kind level message analysisTarget "
        "locations webRequest webResponse fingerprints partialFingerprints codeFlows "
        "graphs graphTraversals stacks relatedLocations suppressions baselineState rank "
        "attachments hostedViewerUri workItemUris provenance fixes taxa properties"
    ),
    "message": {"text", "markdown", "id", "arguments", "properties"},
    "location": _names(
        "id physicalLocation logicalLocations message annotations relationships properties"
    ),
    "physicalLocation": {"address", "artifactLocation", "region", "contextRegion", "properties"},
    "artifactLocation": {"uri", "uriBaseId", "index", "description", "properties"},
    "region": _names(
        "startLine startColumn endLine endColumn charOffset charLength byteOffset "
        "byteLength snippet message sourceLanguage properties"
    ),
    "logicalLocation": _names(
        "name index fullyQualifiedName decoratedName parentIndex kind properties"
    ),
    "multiformatMessageString": {"text", "markdown", "properties"},
    "propertyBag": None,  # any property; "tags" must be unique strings
}
_LEVELS = {"none", "note", "warning", "error"}


def _object(value: Any, kind: str, required: tuple[str, ...] = ()) -> dict[str, Any]:
    assert isinstance(value, dict), (kind, value)
    allowed = _ALLOWED[kind]
    if allowed is not None:
        assert set(value) <= allowed, (kind, set(value) - allowed)
    for name in required:
        assert name in value, (kind, name)
    if "properties" in value:
        _property_bag(value["properties"])
    return value


def _property_bag(value: Any) -> None:
    assert isinstance(value, dict)
    tags = value.get("tags")
    if tags is not None:
        assert isinstance(tags, list) and all(isinstance(t, str) for t in tags)
        assert len(set(tags)) == len(tags)


def _message(value: Any, kind: str = "message") -> None:
    _object(value, kind)
    assert isinstance(value.get("text"), str) or isinstance(value.get("id"), str)


def _location(value: Any) -> None:
    _object(value, "location")
    physical = value.get("physicalLocation")
    if physical is not None:
        _object(physical, "physicalLocation")
        assert "artifactLocation" in physical or "address" in physical
        artifact = _object(physical["artifactLocation"], "artifactLocation")
        assert isinstance(artifact["uri"], str) and artifact["uri"]
        if "uriBaseId" in artifact:  # a base only for a relative reference
            assert ":" not in artifact["uri"].split("/")[0]
        region = physical.get("region")
        if region is not None:
            _object(region, "region")
            for name in ("startLine", "startColumn", "endLine", "endColumn"):
                if name in region:
                    assert isinstance(region[name], int) and region[name] >= 1
    logical = value.get("logicalLocations", [])
    assert isinstance(logical, list)
    for item in logical:
        _object(item, "logicalLocation")
        assert all(isinstance(item.get(k, ""), str) for k in ("name", "fullyQualifiedName", "kind"))


def assert_sarif_2_1_0(log: Any) -> None:
    """What the SARIF 2.1.0 schema requires of the objects trainc writes."""
    _object(log, "log", ("version", "runs"))
    assert log["version"] == "2.1.0"
    assert isinstance(log["$schema"], str) and log["$schema"].startswith("https://")
    assert isinstance(log["runs"], list)
    for run in log["runs"]:
        _object(run, "run", ("tool",))
        tool = _object(run["tool"], "tool", ("driver",))
        driver = _object(tool["driver"], "toolComponent", ("name",))
        assert isinstance(driver["name"], str)
        rules = driver.get("rules", [])
        for rule in rules:
            _object(rule, "reportingDescriptor", ("id",))
            for name in ("shortDescription", "fullDescription"):
                if name in rule:
                    _object(rule[name], "multiformatMessageString", ("text",))
        ids = [rule["id"] for rule in rules]
        assert len(set(ids)) == len(ids)
        assert run.get("columnKind", "unicodeCodePoints") in {"utf16CodeUnits", "unicodeCodePoints"}
        for invocation in run.get("invocations", []):
            _object(invocation, "invocation", ("executionSuccessful",))
            assert isinstance(invocation["executionSuccessful"], bool)
            for note in invocation.get("toolExecutionNotifications", []):
                _object(note, "notification", ("message",))
                _message(note["message"])
                assert note.get("level", "warning") in _LEVELS
        for result in run.get("results", []):
            _object(result, "result", ("message",))
            _message(result["message"])
            assert result.get("level", "warning") in _LEVELS
            if "ruleIndex" in result:
                assert isinstance(result["ruleIndex"], int) and result["ruleIndex"] >= -1
                assert ids[result["ruleIndex"]] == result["ruleId"]
            locations = result.get("locations", [])
            assert isinstance(locations, list)
            for location in locations:
                _location(location)
            assert all(isinstance(v, str) for v in result.get("partialFingerprints", {}).values())


def _finding(severity: Severity, file: str, line: int, column: int, **kw: Any) -> Finding:
    return Finding(
        kw.pop("rule", "crd-schema"),
        severity,
        kw.pop("message", "Invalid value"),
        kw.pop("object", ObjectRef("TrainJob", "llm", "default")),
        kw.pop("field_path", "spec.trainer.numNodes"),
        SourceLocation(file, line, column),
        **kw,
    )


def test_violations_fixture_gives_a_valid_log_with_known_regions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def skip_cue(files: object, objects: object, notes: list[str]) -> list[object]:
        notes.append("CUE policies skipped: the cue CLI is not installed")
        return []

    monkeypatch.setattr(check_module, "_cue_findings", skip_cue)
    monkeypatch.chdir(REPO)
    result = check_paths([VIOLATIONS.relative_to(REPO).as_posix()])
    log = json.loads(render_sarif(result))
    assert_sarif_2_1_0(log)
    run = log["runs"][0]
    by_rule = {r["ruleId"]: r for r in run["results"] if r["level"] == "error"}
    typo = by_rule["crd-schema"]["locations"][0]
    assert typo["physicalLocation"] == {
        "artifactLocation": {
            "uri": "tests/fixtures/check/violations/jobs/typo.yaml",
            "uriBaseId": SRCROOT,
        },
        "region": {"startLine": 10, "startColumn": 5},
    }
    assert typo["logicalLocations"] == [
        {"name": "typo", "fullyQualifiedName": "TrainJob team-a/typo", "kind": "resource"}
    ]
    output = by_rule["output-schema"]
    # the physical location is the input, the logical one the rendered JobSet
    assert output["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 21,
        "startColumn": 23,
    }
    assert output["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] == (
        "JobSet team-a/ghost"
    )
    assert output["properties"]["stage"] == "output"
    assert output["properties"]["renderedFrom"] == "TrainJob team-a/ghost"
    assert {r["id"] for r in run["tool"]["driver"]["rules"]} == {
        "crd-cel", "crd-schema", "output-schema", "resolve", "webhook",
    }  # fmt: skip
    assert (
        run["invocations"][0]["exitCode"] == 2
    )  # render fails on these inputs (crd-schema, resolve): an input error
    assert run["invocations"][0]["toolExecutionNotifications"][0]["message"]["text"].startswith(
        "CUE policies skipped"
    )


def test_levels_uris_and_fingerprints(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    cwd = root / "sub dir"
    cwd.mkdir()
    outside = tmp_path / "elsewhere" / "job.yaml"
    findings = [
        _finding(Severity.ERROR, "a job.yaml", 3, 1),
        _finding(Severity.WARNING, "../b.yaml", 4, 2, rule="vap/limits"),
        _finding(Severity.AUDIT, str(outside), 5, 3, rule="cue/x.cue"),
        _finding(Severity.ERROR, "gone.yaml", 0, 0, rule="input", object=None, field_path=None),
        Finding("yaml", Severity.ERROR, "not YAML", None, None, SourceLocation("<stdin>", 1, 1)),
    ]
    result = CheckResult(findings)
    log = report_sarif(result, cwd=cwd)
    assert_sarif_2_1_0(log)
    assert repository_root(cwd) == root
    results = log["runs"][0]["results"]
    assert [r["level"] for r in results] == ["error", "warning", "note", "error", "error"]
    physical = [r.get("locations", [{}])[0].get("physicalLocation") for r in results]
    assert physical[0]["artifactLocation"] == {
        "uri": "sub%20dir/a%20job.yaml",
        "uriBaseId": SRCROOT,
    }
    assert physical[1]["artifactLocation"] == {"uri": "b.yaml", "uriBaseId": SRCROOT}
    assert physical[2]["artifactLocation"] == {"uri": outside.as_uri()}
    assert physical[3] == {"artifactLocation": {"uri": "sub%20dir/gone.yaml", "uriBaseId": SRCROOT}}
    assert "locations" not in results[4]  # stdin: no artifact, no object
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == ["crd-schema", "cue/x.cue", "input", "vap/limits", "yaml"]
    assert rules[3]["shortDescription"]["text"] == "ValidatingAdmissionPolicy limits"
    # the fingerprint ignores where the finding is, so it survives lines moving
    moved = report_sarif(CheckResult([_finding(Severity.ERROR, "a job.yaml", 9, 9)]), cwd=cwd)
    assert (
        moved["runs"][0]["results"][0]["partialFingerprints"] == results[0]["partialFingerprints"]
    )
    assert log["runs"][0]["invocations"][0] == {"executionSuccessful": False, "exitCode": 2}


def test_clean_log_has_no_results() -> None:
    log = report_sarif(CheckResult([]), root=REPO, cwd=REPO)
    assert_sarif_2_1_0(log)
    assert log["runs"][0]["results"] == []
    assert log["runs"][0]["tool"]["driver"]["rules"] == []
    assert log["runs"][0]["invocations"] == [{"executionSuccessful": True, "exitCode": 0}]
