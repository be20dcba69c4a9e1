"""``trainc policy test DIR...``: run the test cases of a policy library.

A test file is a YAML file (any name, usually ``policies/<name>/tests/<case>.yaml``) of
this kind::

    apiVersion: trainc/v1
    kind: PolicyTest
    metadata:
      name: required-labels
    policies: [../policy.yaml]     # optional; default: every .yaml/.yml/.cue file of the
                                   # folder above tests/ (the policy, its binding, params)
    resources: [resources.yaml]    # Kubernetes objects: TrainJobs, runtimes, Namespaces, ...
    results:
      - policy: trainc-required-labels        # a ValidatingAdmissionPolicy's name, or a
        resource: TrainJob/team-a/labelled    # .cue file's name; Kind/namespace/name or Kind/name
        result: allow                         # allow | deny | warn | audit
      - policy: trainc-required-labels
        resources: [TrainJob/team-a/bare, TrainJob/team-a/no-cost-center]
        result: deny
        message: missing                      # optional: part of the policy's message

Paths are relative to the test file. The policies and resources go through exactly what
``trainc check`` does (:func:`compiler.plan.check.check_paths`): load, render every
TrainJob whose runtime is among the resources, then the ValidatingAdmissionPolicies
(:mod:`compiler.policy.vap`) and CUE policies (:mod:`compiler.policy.cue`) on the
inputs and the rendered JobSets, PodGroups, ... A resource of a result is either.

Each listed (policy, resource) is a case. Its outcome is ``deny`` when the policy
reported an error on the object, else ``warn`` for a warning, ``audit`` for an audit
finding, and ``allow`` when it reported nothing (also when it does not apply). A case
passes when that is the expected result and, if ``message`` is given, one finding's
message contains it. Any other error about the resources (they must load and render
cleanly) fails every case of the file.

Exit code: 1 when a case failed, else 2 when a file was skipped because a policy engine
is missing (``vap`` not built, ``cue`` not installed: run ``make setup``), else 0.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compiler.apiserver.yaml_source import YamlDocument, parse_yaml, read_source
from compiler.errors import (
    EXIT_INPUT_ERROR,
    EXIT_OK,
    EXIT_VIOLATIONS,
    Finding,
    InputError,
    ObjectRef,
    Problem,
    Severity,
    SourceLocation,
)
from compiler.load.discover import CUE_SUFFIX, YAML_SUFFIXES

__all__ = [
    "RESULTS",
    "CaseResult",
    "Expectation",
    "TestFileResult",
    "exit_code",
    "find_test_files",
    "format_report",
    "load_test",
    "main",
    "run_test_file",
]

TEST_API_VERSION = "trainc/v1"
TEST_KIND = "PolicyTest"
RESULTS = ("allow", "deny", "warn", "audit")
_VAP_GROUP = "admissionregistration.k8s.io/"
_POLICY_RULES = ("vap/", "cue/")
_OUTCOME = {Severity.ERROR: "deny", Severity.WARNING: "warn", Severity.AUDIT: "audit"}


@dataclass(frozen=True)
class Expectation:
    policy: str
    resource: str  # Kind/namespace/name or Kind/name
    result: str
    message: str | None
    location: SourceLocation

    @property
    def ref(self) -> ObjectRef:
        parts = self.resource.split("/")
        if len(parts) == 3:
            return ObjectRef(parts[0], parts[2], parts[1])
        return ObjectRef(parts[0], parts[-1])


@dataclass(frozen=True)
class PolicyTest:
    path: Path
    name: str
    policies: list[Path]
    resources: list[Path]
    expectations: list[Expectation]


@dataclass(frozen=True)
class CaseResult:
    expectation: Expectation
    actual: str | None  # None: the case could not be evaluated (see detail)
    passed: bool
    detail: str = ""


@dataclass
class TestFileResult:
    path: Path
    name: str
    cases: list[CaseResult] = field(default_factory=list)
    skipped: str | None = None  # why the file was not run
    errors: list[str] = field(default_factory=list)  # the resources did not check cleanly

    @property
    def failed(self) -> list[CaseResult]:
        return [c for c in self.cases if not c.passed]


# --- reading test files -----------------------------------------------------------------


def _is_test(document: YamlDocument) -> bool:
    data = document.data
    return isinstance(data, dict) and data.get("kind") == TEST_KIND


def find_test_files(paths: Iterable[str | Path]) -> list[Path]:
    """The PolicyTest files among ``paths`` (files, or folders searched recursively)."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_file():
            found.append(path)
            continue
        if not path.is_dir():
            raise InputError.single("no such file or directory", SourceLocation(str(path)))
        for candidate in sorted(path.rglob("*")):
            if candidate.suffix not in YAML_SUFFIXES or not candidate.is_file():
                continue
            if any(part.startswith(".") for part in candidate.relative_to(path).parts):
                continue
            try:
                documents = parse_yaml(read_source(candidate), str(candidate))
            except (InputError, OSError):
                continue  # not a test file; resources are read (and reported) by check
            if any(_is_test(d) for d in documents):
                found.append(candidate)
    return found


def _problem(message: str, document: YamlDocument, path: tuple[str | int, ...]) -> Problem:
    return Problem(message, document.source.locate(path), field_path=_dotted(path) or None)


def _dotted(path: Sequence[str | int]) -> str:
    return ".".join(str(p) for p in path)


def _string_list(
    data: dict[str, Any], key: str, document: YamlDocument, problems: list[Problem]
) -> list[str] | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) and v for v in value):
        return list(value)
    problems.append(_problem("expected a list of strings", document, (key,)))
    return []


def _default_policies(test_path: Path) -> list[Path]:
    """The policy files of the folder above ``tests/``."""
    folder = test_path.parent.parent if test_path.parent.name == "tests" else test_path.parent
    return sorted(
        p
        for p in folder.iterdir()
        if p.is_file() and p.suffix in (*YAML_SUFFIXES, CUE_SUFFIX) and p != test_path
    )


def load_test(path: Path) -> PolicyTest:
    """Read one PolicyTest file; an :class:`InputError` naming every mistake in it."""
    try:
        documents = [d for d in parse_yaml(read_source(path), str(path)) if _is_test(d)]
    except OSError as error:  # pragma: no cover (read_source reports OS errors itself)
        raise InputError.single(
            f"cannot read: {error.strerror or error}", SourceLocation(str(path))
        ) from None
    if len(documents) != 1:
        raise InputError.single(f"expected one {TEST_KIND} document", SourceLocation(str(path)))
    document = documents[0]
    data: dict[str, Any] = document.data
    problems: list[Problem] = []
    if data.get("apiVersion") != TEST_API_VERSION:
        problems.append(_problem(f"apiVersion must be {TEST_API_VERSION}", document, ()))
    metadata = data.get("metadata")
    name = metadata.get("name") if isinstance(metadata, dict) else None
    base = path.parent
    policies = _string_list(data, "policies", document, problems)
    resources = _string_list(data, "resources", document, problems) or []
    policy_paths = [base / p for p in policies] if policies is not None else _default_policies(path)
    for key, paths in (("policies", policy_paths), ("resources", [base / r for r in resources])):
        for index, file in enumerate(paths):
            if not file.is_file():
                problems.append(_problem(f"no such file: {file}", document, (key, index)))
    expectations: list[Expectation] = []
    results = data.get("results")
    if not isinstance(results, list) or not results:
        problems.append(_problem("results: expected a non-empty list", document, ("results",)))
        results = []
    for index, item in enumerate(results):
        where: tuple[str | int, ...] = ("results", index)
        if not isinstance(item, dict):
            problems.append(_problem("expected a mapping", document, where))
            continue
        unknown = sorted(set(item) - {"policy", "resource", "resources", "result", "message"})
        if unknown:
            problems.append(_problem(f"unknown field {unknown[0]!r}", document, where))
        policy, result, message = item.get("policy"), item.get("result"), item.get("message")
        if not isinstance(policy, str) or not policy:
            problems.append(_problem("policy: expected a name", document, (*where, "policy")))
        if result not in RESULTS:
            problems.append(
                _problem(f"result: expected one of {', '.join(RESULTS)}", document, where)
            )
        if message is not None and not isinstance(message, str):
            problems.append(_problem("message: expected a string", document, where))
        refs = _string_list(item, "resources", document, problems) or []
        if isinstance(item.get("resource"), str):
            refs.insert(0, item["resource"])
        if not refs:
            problems.append(_problem("expected resource or resources", document, where))
        for ref in refs:
            if len(ref.split("/")) not in (2, 3) or not all(ref.split("/")):
                problems.append(
                    _problem(
                        f"resource {ref!r}: expected Kind/namespace/name or Kind/name",
                        document,
                        where,
                    )
                )
                continue
            expectations.append(
                Expectation(
                    str(policy),
                    ref,
                    str(result),
                    message,
                    document.source.locate(where),
                )
            )
    if problems:
        raise InputError(problems)
    return PolicyTest(
        path,
        str(name) if name else path.stem,
        policy_paths,
        [base / r for r in resources],
        expectations,
    )


# --- running them -----------------------------------------------------------------------


def _policy_names(files: list[Path]) -> set[str]:
    """Names a result may use (VAP names, CUE file names and stems)."""
    names: set[str] = set()
    for file in files:
        if file.suffix == CUE_SUFFIX:
            names.update({file.name, file.stem})
            continue
        try:
            documents = parse_yaml(read_source(file), str(file))
        except (InputError, OSError):
            continue  # check reports it
        for document in documents:
            data = document.data
            if not isinstance(data, dict):
                continue
            if (
                str(data.get("apiVersion", "")).startswith(_VAP_GROUP)
                and data.get("kind") == "ValidatingAdmissionPolicy"
            ):
                name = (data.get("metadata") or {}).get("name")
                if isinstance(name, str):
                    names.add(name)
    return names


def _rules(policy: str) -> set[str]:
    return {f"vap/{policy}", f"cue/{policy}", f"cue/{policy}{CUE_SUFFIX}"}


def _key(ref: ObjectRef | None) -> tuple[str, str, str] | None:
    if ref is None:
        return None
    return (ref.kind, ref.namespace or "", ref.name)


def _display(path: Path) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:
        return str(path)


def _case(
    expectation: Expectation,
    names: set[str],
    objects: set[tuple[str, str, str]],
    findings: list[Finding],
) -> CaseResult:
    if expectation.policy not in names:
        known = ", ".join(sorted(names)) or "none"
        return CaseResult(
            expectation, None, False, f"no policy {expectation.policy!r} (known: {known})"
        )
    target = _key(expectation.ref)
    if target not in objects:
        return CaseResult(
            expectation, None, False, "no such object among the inputs and rendered outputs"
        )
    rules = _rules(expectation.policy)
    mine = [f for f in findings if f.rule in rules and _key(f.object) == target]
    actual = "allow"
    for severity in (Severity.ERROR, Severity.WARNING, Severity.AUDIT):
        if any(f.severity is severity for f in mine):
            actual = _OUTCOME[severity]
            break
    messages = "; ".join(dict.fromkeys(f.message for f in mine))
    if actual != expectation.result:
        detail = f"expected {expectation.result}, got {actual}"
        return CaseResult(expectation, actual, False, f"{detail}: {messages}" if mine else detail)
    if expectation.message is not None and not any(expectation.message in f.message for f in mine):
        detail = f"no message contains {expectation.message!r}"
        return CaseResult(expectation, actual, False, f"{detail}: {messages}" if mine else detail)
    return CaseResult(expectation, actual, True, messages)


def run_test_file(path: Path) -> TestFileResult:
    """Run one PolicyTest file: one ``trainc check`` of its policies and resources."""
    from compiler.plan.check import check_paths
    from compiler.policy.cue import CueUnavailable, cue_binary

    test = load_test(path)
    out = TestFileResult(path, test.name)
    names = _policy_names(test.policies)
    cue_files = [p for p in test.policies if p.suffix == CUE_SUFFIX]
    if cue_files:
        try:
            cue_binary(cue_files)
        except CueUnavailable as error:
            out.skipped = str(error)
            return out
    result = check_paths([_display(p) for p in [*test.policies, *test.resources]])
    out.errors = [
        f"{finding.location or ''}: {finding.object or ''}: [{finding.rule}] {finding.message}"
        for finding in result.findings
        if finding.severity is Severity.ERROR and not finding.rule.startswith(_POLICY_RULES)
    ]
    objects = {k for k in (_key(o.ref) for o in result.objects) if k is not None}
    for expectation in test.expectations:
        if out.errors:
            out.cases.append(CaseResult(expectation, None, False, "the resources have errors"))
        else:
            out.cases.append(_case(expectation, names, objects, result.findings))
    return out


def run_tests(paths: Iterable[str | Path]) -> list[TestFileResult]:
    return [run_test_file(p) for p in find_test_files(paths)]


# --- reporting --------------------------------------------------------------------------


def format_report(results: list[TestFileResult]) -> str:
    lines: list[str] = []
    for result in results:
        lines.append(f"{_display(result.path)} ({result.name})")
        if result.skipped:
            lines.append(f"  SKIP  {result.skipped}")
            continue
        lines.extend(f"  ERROR {error}" for error in result.errors)
        for case in result.cases:
            e = case.expectation
            ref = e.ref
            head = f"{e.policy}  {ref}"
            if case.passed:
                lines.append(f"  PASS  {head}: {e.result}")
            else:
                lines.append(f"  FAIL  {head}: {case.detail}  ({e.location})")
    cases = [c for r in results for c in r.cases]
    failed = sum(1 for c in cases if not c.passed)
    skipped = sum(1 for r in results if r.skipped)
    lines.append(
        f"policy test: {len(cases) - failed} passed, {failed} failed, "
        f"{skipped} file{'' if skipped == 1 else 's'} skipped ({len(results)} test files)"
    )
    return "\n".join(lines) + "\n"


def exit_code(results: list[TestFileResult]) -> int:
    if any(r.failed or r.errors for r in results):
        return EXIT_VIOLATIONS
    if any(r.skipped for r in results) or not results:
        return EXIT_INPUT_ERROR
    return EXIT_OK


def main(paths: list[str]) -> int:
    """The CLI command: run, print the report, return the exit code."""
    results = run_tests(paths)
    sys.stdout.write(format_report(results))
    return exit_code(results)
