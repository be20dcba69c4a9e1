"""The shipped policy library (policies/): every test case, and the library's shape.

Each PolicyTest file runs as `trainc policy test` runs it. Files whose policies need the
ValidatingAdmissionPolicy engine are skipped while compiler.policy.vap is not built;
files with CUE policies are skipped when the pinned cue CLI is not installed.
"""

from __future__ import annotations

import shutil
from collections import defaultdict
from pathlib import Path

import pytest
import yaml

from compiler.cli import main
from compiler.plan.policy_testing import (
    find_test_files,
    format_report,
    load_test,
    run_test_file,
)

ROOT = Path(__file__).resolve().parents[1]
POLICIES = ROOT / "policies"
TEST_FILES = find_test_files([POLICIES])


def _documents(path: Path) -> list[dict]:
    return [d for d in yaml.safe_load_all(path.read_text()) if isinstance(d, dict)]


def _policy_folders() -> list[Path]:
    return sorted(p for p in POLICIES.iterdir() if p.is_dir())


@pytest.mark.parametrize("path", TEST_FILES, ids=lambda p: str(p.relative_to(POLICIES)))
def test_policy_cases(path: Path) -> None:
    result = run_test_file(path)
    if result.skipped:
        pytest.fail(
            result.skipped + " (`make setup` installs it; `make test` runs setup first)",
            pytrace=False,
        )
    assert not result.errors and not result.failed, format_report([result])
    assert result.cases


def test_library_has_the_promised_policies() -> None:
    vaps = [f for f in _policy_folders() if (f / "policy.yaml").is_file()]
    cues = [c for f in _policy_folders() for c in f.glob("*.cue")]
    assert len(vaps) >= 8
    assert len(cues) >= 2
    for folder in _policy_folders():
        assert list(folder.glob("tests/*.yaml")), f"{folder.name} has no tests"


@pytest.mark.parametrize(
    "folder",
    [f for f in _policy_folders() if (f / "policy.yaml").is_file()],
    ids=lambda f: f.name,
)
def test_each_vap_installs_unchanged(folder: Path) -> None:
    """A policy, a binding of it, and the params the binding names, as the API server wants."""
    documents = [d for p in sorted(folder.glob("*.yaml")) for d in _documents(p)]
    by_kind: dict[str, list[dict]] = defaultdict(list)
    for document in documents:
        by_kind[document["kind"]].append(document)
        assert document["apiVersion"] in ("admissionregistration.k8s.io/v1", "v1")
    [policy] = by_kind["ValidatingAdmissionPolicy"]
    name = policy["metadata"]["name"]
    assert name.startswith("trainc-")
    spec = policy["spec"]
    assert spec["failurePolicy"] == "Fail"
    assert spec["validations"] and spec["matchConstraints"]["resourceRules"]
    [binding] = by_kind["ValidatingAdmissionPolicyBinding"]
    assert binding["spec"]["policyName"] == name
    assert set(binding["spec"]["validationActions"]) <= {"Deny", "Warn", "Audit"}
    if "paramKind" in spec:
        ref = binding["spec"]["paramRef"]
        params = [
            d
            for d in by_kind[spec["paramKind"]["kind"]]
            if d["metadata"]["name"] == ref["name"]
            and d["metadata"].get("namespace")
            == ref.get("namespace", d["metadata"].get("namespace"))
        ]
        assert params, f"{folder.name}: no example params object {ref['name']}"


def test_every_policy_is_tested_allowing_and_denying() -> None:
    outcomes: dict[str, set[str]] = defaultdict(set)
    for path in TEST_FILES:
        for expectation in load_test(path).expectations:
            outcomes[expectation.policy.removesuffix(".cue")].add(expectation.result)
    policies = [
        _documents(f / "policy.yaml")[0]["metadata"]["name"]
        for f in _policy_folders()
        if (f / "policy.yaml").is_file()
    ] + [c.stem for f in _policy_folders() for c in f.glob("*.cue")]
    for policy in policies:
        assert "allow" in outcomes[policy], f"{policy}: no case that allows"
        assert outcomes[policy] - {"allow"}, f"{policy}: no case that denies or warns"


# --- the command ------------------------------------------------------------------------


def _copy_policy(tmp_path: Path, name: str) -> Path:
    target = tmp_path / name
    shutil.copytree(POLICIES / name, target)
    return target


def test_cli_passes_and_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _copy_policy(tmp_path, "gang-podgroup")
    probe = run_test_file(next(folder.glob("tests/gang-podgroup.yaml")))
    if probe.skipped:
        pytest.fail(
            probe.skipped + " (`make setup` installs it; `make test` runs setup first)",
            pytrace=False,
        )
    assert main(["policy", "test", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "PASS  gang-podgroup.cue  JobSet team-a/multi-node-plain: deny" in out
    assert out.endswith("policy test: 4 passed, 0 failed, 0 files skipped (1 test files)\n")

    test = folder / "tests" / "gang-podgroup.yaml"
    test.write_text(test.read_text().replace("result: deny", "result: allow", 1))
    assert main(["policy", "test", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert (
        "FAIL  gang-podgroup.cue  JobSet team-a/multi-node-plain: expected allow, got deny: "
        "runs 4 pods in one replicated job without a PodGroup"
    ) in out
    assert "gang-podgroup.yaml:12:5" in out  # the result that failed


def test_cli_rejects_a_malformed_test(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "t.yaml").write_text(
        "apiVersion: trainc/v1\nkind: PolicyTest\nresults:\n  - policy: p\n    result: maybe\n"
    )
    assert main(["policy", "test", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "t.yaml:4:5: results.0: result: expected one of allow, deny, warn, audit" in err
    assert "expected resource or resources" in err


def test_cli_names_unknown_policies_and_objects(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _copy_policy(tmp_path, "gang-podgroup")
    if run_test_file(folder / "tests" / "gang-podgroup.yaml").skipped:
        pytest.fail(
            "cue is not installed (`make setup` installs it; `make test` runs setup first)",
            pytrace=False,
        )
    (folder / "tests" / "typos.yaml").write_text(
        "apiVersion: trainc/v1\nkind: PolicyTest\nresources: [resources.yaml]\nresults:\n"
        "  - {policy: gang.cue, resource: JobSet/team-a/multi-node-gang, result: allow}\n"
        "  - {policy: gang-podgroup, resource: JobSet/team-b/multi-node-gang, result: allow}\n"
    )
    assert main(["policy", "test", str(folder / "tests" / "typos.yaml")]) == 1
    out = capsys.readouterr().out
    assert "no policy 'gang.cue' (known: gang-podgroup, gang-podgroup.cue)" in out
    assert "JobSet team-b/multi-node-gang: no such object among the inputs" in out
