"""`trainc check`: what it finds, where it points, how it exits, and that it writes nothing."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
import types
from pathlib import Path
from typing import Any

import pytest

import compiler.plan.check as check_module
from compiler.apiserver.yaml_source import parse_yaml
from compiler.errors import Finding, ObjectRef, SetupError, Severity, SourceLocation
from compiler.load.discover import discover_collect
from compiler.load.loader import load_collect
from compiler.plan.check import check_paths
from compiler.plan.outputs import output_crds
from compiler.policy.objects import PolicyObject
from compiler.upstream.artifacts import upstream
from tests.support import trainc_process

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures" / "check"
VIOLATIONS = FIXTURES / "violations"
CLEAN = FIXTURES / "clean"
GOLDEN = REPO / "golden"


def rel(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


def trainc(*args: str, cwd: Path = REPO, seed: str = "0") -> subprocess.CompletedProcess[str]:
    return trainc_process(*args, cwd=cwd, PYTHONHASHSEED=seed)


@pytest.fixture
def no_policy_modules(monkeypatch: pytest.MonkeyPatch) -> None:
    """The built-in checks alone: no policy engine runs."""
    monkeypatch.setattr(check_module, "_vap_findings", lambda *args: [])
    monkeypatch.setattr(check_module, "_cue_findings", lambda *args: [])


def where(finding: Finding) -> tuple[str, str, int, int]:
    assert finding.location is not None
    location = finding.location
    return (finding.rule, Path(location.file).name, location.line, location.column)


# --- what check finds -------------------------------------------------------------------


@pytest.mark.usefixtures("no_policy_modules")
def test_every_stage_reports_with_its_rule_and_source_position(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(REPO)
    result = check_paths([rel(VIOLATIONS)])
    assert {where(f) for f in result.findings} == {
        ("crd-cel", "typo.yaml", 1, 1),  # the API server's "rules not checked" after a type error
        ("crd-schema", "typo.yaml", 10, 5),  # numNodes: two
        ("webhook", "typo.yaml", 10, 5),  # which the defaulting webhook cannot decode, first
        ("resolve", "missing.yaml", 8, 5),  # runtimeRef.name: no-such-runtime
        ("webhook", "gang.yaml", 6, 3),  # deprecated runtime: a warning
        ("webhook", "gang.yaml", 44, 11),  # replicas: 2
        ("output-schema", "ghost.yaml", 21, 23),  # the patched-in job's pod spec: no containers
        ("output-schema", "ghost.yaml", 6, 3),  # so the controller cannot create the JobSet
    }
    severities = {f.rule + str(f.location): f.severity for f in result.findings}
    assert list(severities.values()).count(Severity.WARNING) == 1
    assert result.exit_code == 2  # render fails on these inputs too (schema, webhook, resolve)
    assert result.summary() == "7 errors, 1 warning, 0 audit"


@pytest.mark.usefixtures("no_policy_modules")
def test_output_violation_points_back_to_the_input_that_produced_the_field() -> None:
    result = check_paths([str(VIOLATIONS / "runtimes"), str(VIOLATIONS / "jobs" / "ghost.yaml")])
    [failure, finding] = [f for f in result.findings if f.rule == "output-schema"]
    # what the controller would report: its creation-failure event, at the TrainJob
    assert failure.object == ObjectRef("TrainJob", "ghost", "team-a")
    # JobSet's mutating webhook patches in the containers: null that Go's encoding of the
    # pod spec writes, before the schema is checked (kube-apiserver v1.34.4, JobSet v0.12.0)
    containers = "spec.replicatedJobs[0].template.spec.template.spec.containers"
    null = f'Invalid value: "null": {containers} in body must be of type array: "null"'
    assert failure.message.startswith(
        'TrainJob resources reconciliation failed: JobSet.jobset.x-k8s.io "ghost" is invalid: '
        f"[{containers}: {null}, "
    )
    assert finding.stage == "output"
    assert finding.object == ObjectRef("JobSet", "ghost", "team-a")
    assert finding.field_path == containers
    assert finding.message == null
    assert finding.location == SourceLocation(str(VIOLATIONS / "jobs" / "ghost.yaml"), 21, 23)
    lines = (VIOLATIONS / "jobs" / "ghost.yaml").read_text().splitlines()
    assert lines[20][22:] == "spec:"  # the launcher's pod spec in the TrainJob's runtimePatches
    assert dict(finding.details)["renderedFrom"] == "TrainJob team-a/ghost"


@pytest.mark.usefixtures("no_policy_modules")
def test_clean_inputs_exit_0_and_every_output_is_validated() -> None:
    result = check_paths([str(CLEAN)])
    assert result.findings == []
    assert result.exit_code == 0
    outputs = sorted(str(o.ref) for o in result.objects if o.stage == "output")
    assert outputs == ["JobSet team-a/resnet", "PodGroup team-a/resnet"]
    assert result.notes == []
    # outputs are given to policies as the API server stores them: CRD defaults applied
    [jobset] = [o for o in result.objects if o.ref.kind == "JobSet"]
    pod = jobset.data["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    assert pod["containers"][0]["ports"] == [{"containerPort": 29500, "protocol": "TCP"}]
    assert jobset.origin.kind == "TrainJob"


@pytest.mark.usefixtures("no_policy_modules")
def test_unreadable_input_is_exit_2_with_findings() -> None:
    result = check_paths([str(FIXTURES / "broken"), str(FIXTURES / "nope.yaml")])
    assert {(f.rule, f.location) for f in result.findings} == {
        ("yaml", SourceLocation(str(FIXTURES / "broken" / "bad.yaml"), 5, 21)),
        ("input", SourceLocation(str(FIXTURES / "nope.yaml"))),
    }
    assert result.exit_code == 2


def test_cue_files_are_discovered_and_never_read_as_yaml(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")
    (tmp_path / "limits.cue").write_text("objects: [...{kind: string}]\n")
    explicit = tmp_path / "other.cue"
    explicit.write_text("x: 1 & 2\n")
    sources, problems = discover_collect([str(tmp_path), str(explicit)])
    assert problems == []
    assert [(s.path.name if s.path else None, s.kind) for s in sources] == [
        ("a.yaml", "yaml"),
        ("limits.cue", "cue"),
        ("other.cue", "cue"),
    ]
    loaded, problems = load_collect([str(tmp_path), str(explicit)])
    assert problems == []
    assert [m.name for m in loaded.others] == ["a"]
    assert list(loaded.texts) == [str(tmp_path / "a.yaml")]


def test_volcano_podgroups_are_noted_as_not_validated(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(check_module, "_cue_findings", lambda *args: [])
    case = GOLDEN / "volcano-priorityclass-two-jobs-soft-topology"
    result = check_paths(
        [str(case / n) for n in ("priorityclasses.yaml", "runtime.yaml", "trainjob.yaml")]
    )
    assert result.findings == []
    assert any(
        note.startswith("PodGroup scheduling.volcano.sh/v1beta1 outputs are not validated")
        for note in result.notes
    )


def test_schemas_dir_replaces_an_output_crd(tmp_path: Path) -> None:
    [podgroup_crd] = [p for p in upstream().output_crd_paths() if "podgroups" in p.name]
    text = podgroup_crd.read_text()
    marker = "              minMember:\n"
    assert text.count(marker) == 1
    stricter = text.replace(marker, marker + "                maximum: 1\n")
    (tmp_path / "podgroup.yaml").write_text(stricter)
    result = check_paths([str(CLEAN)], schemas=tmp_path)
    [finding] = [f for f in result.findings if f.rule == "output-schema" and f.field_path]
    assert finding.object == ObjectRef("PodGroup", "resnet", "team-a")
    assert finding.field_path == "spec.minMember"
    assert "less than or equal to 1" in finding.message
    # minMember comes from numNodes: no input field holds it, so the TrainJob is named
    assert finding.location == SourceLocation(str(CLEAN / "job.yaml"), 8, 1)


def test_pinned_output_crds_accept_what_upstream_creates() -> None:
    """Every JobSet and PodGroup the real controller created for a golden case is valid
    (the case whose JobSet the API server refuses has no objects: it is a rejection)."""
    from compiler.apiserver.crd_rules import check_rules
    from compiler.apiserver.crds import admit, trainer_crds

    crds = output_crds(trainer_crds())
    rejected: dict[str, list[str]] = {}
    checked = 0
    for expected in sorted(GOLDEN.glob("*/expected.yaml")):
        for document in parse_yaml(expected.read_bytes(), str(expected)):
            data = document.data
            crd = crds.get(str(data.get("apiVersion")), str(data.get("kind")))
            if crd is None:
                continue
            checked += 1
            stored = copy.deepcopy(data)
            errors = admit(stored, crd, crds)
            errors += check_rules(stored, crd, errors)
            if errors:
                rejected.setdefault(expected.parent.name, []).extend(str(e) for e in errors)
    assert checked > 100
    assert rejected == {}


# --- user policies ----------------------------------------------------------------------


def fake_vap(found: list[Finding], calls: list[Any]) -> types.ModuleType:
    module = types.ModuleType("compiler.policy.vap")

    class PolicySet:
        @classmethod
        def from_manifests(cls, manifests: list[Any]) -> PolicySet:
            calls.append(("from_manifests", [m.kind for m in manifests]))
            return cls()

        def evaluate(
            self,
            objects: list[PolicyObject],
            namespaces: dict[str, dict[str, str]],
            locate_output: Any = None,
        ) -> list[Finding]:
            calls.append(("evaluate", [(o.stage, str(o.ref)) for o in objects], namespaces))
            return found

    module.PolicySet = PolicySet  # type: ignore[attr-defined]
    return module


def test_vap_policies_see_every_input_and_output(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[Any] = []
    found = [Finding("vap/p", Severity.WARNING, "w", ObjectRef("JobSet", "resnet", "team-a"))]
    monkeypatch.setattr(check_module, "PolicySet", fake_vap(found, calls).PolicySet)
    result = check_paths([str(CLEAN)])
    assert result.findings == found
    assert result.exit_code == 0  # warnings allowed
    assert calls[0] == (
        "from_manifests",
        ["Namespace", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"],
    )
    _, objects, namespaces = calls[1]
    assert ("output", "JobSet team-a/resnet") in objects
    assert ("input", "TrainJob team-a/resnet") in objects
    assert namespaces == {"team-a": {"tier": "research", "kubernetes.io/metadata.name": "team-a"}}


def test_vap_findings_on_outputs_are_located_at_the_input_field(tmp_path: Path) -> None:
    """A policy's fieldPath in a rendered JobSet points at the TrainJob field the value
    came from; the finding names the TrainJob last (renderedFrom)."""
    repo = tmp_path / "clean"
    shutil.copytree(CLEAN, repo)
    job = repo / "job.yaml"
    job.write_text(job.read_text().replace("registry.example.com/train", "docker.io/train"))
    path = "spec.replicatedJobs[0].template.spec.template.spec.containers[0].image"
    policy = repo / "policy.yaml"
    policy.write_text(
        policy.read_text().replace(
            "      message: images must come from registry.example.com\n",
            f"      message: images must come from registry.example.com\n      fieldPath: {path}\n",
        )
    )
    result = check_paths([str(repo)])
    [finding] = [f for f in result.findings if f.rule == "vap/images-from-registry"]
    assert finding.stage == "output" and finding.field_path == path
    # the image is the TrainJob's spec.trainer.image, line 18 column 5
    lines = job.read_text().splitlines()
    assert lines[17] == "    image: docker.io/train:1.0"
    assert finding.location == SourceLocation(str(job), 18, 5)
    assert finding.details[-1] == ("renderedFrom", "TrainJob team-a/resnet")
    assert finding.message == (
        "Validation failed for ValidatingAdmissionPolicy 'images-from-registry' with binding"
        " 'images-from-registry': images must come from registry.example.com"
    )


def test_policy_that_cannot_be_read_is_an_input_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from compiler.errors import InputError

    module = types.ModuleType("compiler.policy.vap")

    class PolicySet:
        @classmethod
        def from_manifests(cls, manifests: list[Any]) -> PolicySet:
            where = SourceLocation(str(CLEAN / "policy.yaml"), 14, 7)
            raise InputError.single("compile error", where)

    module.PolicySet = PolicySet  # type: ignore[attr-defined]
    monkeypatch.setattr(check_module, "PolicySet", module.PolicySet)  # type: ignore[attr-defined]
    result = check_paths([str(CLEAN)])
    assert [(f.rule, f.location) for f in result.findings] == [
        ("policy", SourceLocation(str(CLEAN / "policy.yaml"), 14, 7))
    ]
    assert result.exit_code == 2


def test_cue_policies_get_the_cue_files_and_every_object(monkeypatch: pytest.MonkeyPatch) -> None:
    module = types.ModuleType("compiler.policy.cue")
    received: list[Any] = []

    class CueUnavailable(Exception):
        pass

    def run_cue(files: list[Path], objects: list[PolicyObject]) -> list[Finding]:
        received.append((files, objects))
        [job] = [o for o in objects if o.ref.kind == "TrainJob" and o.ref.name == "good"]
        return [
            Finding(
                "cue/limits.cue",
                Severity.ERROR,
                "conflicting values",
                job.ref,
                "spec.trainer.numNodes",
                job.origin.locate(("spec", "trainer", "numNodes")),
            )
        ]

    module.CueUnavailable = CueUnavailable  # type: ignore[attr-defined]
    module.run_cue = run_cue  # type: ignore[attr-defined]
    monkeypatch.setattr(check_module, "CueUnavailable", CueUnavailable)
    monkeypatch.setattr(check_module, "run_cue", run_cue)
    monkeypatch.setattr(check_module, "_vap_findings", lambda *args: [])
    result = check_paths([str(VIOLATIONS)])
    [(files, objects)] = received
    assert files == [VIOLATIONS / "policies" / "limits.cue"]
    assert result.policy_files == [str(VIOLATIONS / "policies" / "limits.cue")]
    stages = {(o.stage, str(o.ref)) for o in objects}
    assert ("output", "JobSet team-a/good") in stages
    assert ("input", "TrainJob team-a/typo") not in stages  # the API server rejects it
    assert ("output", "JobSet team-a/ghost") not in stages  # the JobSet CRD rejects it
    assert ("cue/limits.cue", "good.yaml", 10, 5) in {where(f) for f in result.findings}

    def unavailable(files: list[Path], objects: list[PolicyObject]) -> list[Finding]:
        raise CueUnavailable("the cue CLI is not on PATH")

    monkeypatch.setattr(check_module, "run_cue", unavailable)
    with pytest.raises(SetupError, match="cue CLI is not on PATH"):
        check_paths([str(VIOLATIONS)])


# --- the command line -------------------------------------------------------------------


def test_cli_exit_codes(tmp_path: Path) -> None:
    assert trainc("check", rel(CLEAN / "job.yaml"), rel(CLEAN / "runtime.yaml")).returncode == 0
    violations = trainc("check", rel(VIOLATIONS / "jobs"), rel(VIOLATIONS / "runtimes"))
    assert violations.returncode == 2  # input errors, as `trainc render` says
    assert violations.stdout.endswith("7 errors, 1 warning, 0 audit\n")
    broken = trainc("check", rel(FIXTURES / "broken"))
    assert broken.returncode == 2
    assert "Traceback" not in broken.stderr
    for usage in (["check"], ["check", "x", "--format", "xml"], ["check", "x", "--bogus"]):
        result = trainc(*usage)
        assert result.returncode == 2
        assert "Traceback" not in result.stderr
    missing = tmp_path / "missing"  # not /nonexistent: a root process may have made that
    setup = trainc("check", rel(CLEAN), "--schemas", str(missing))
    assert setup.returncode == 2
    assert f"--schemas: {missing} is not a directory" in setup.stderr


def test_cli_text_report_quotes_the_source_with_a_caret() -> None:
    result = trainc("check", rel(VIOLATIONS / "jobs" / "typo.yaml"))
    lines = result.stdout.splitlines()
    at = lines.index(f"  --> {rel(VIOLATIONS / 'jobs' / 'typo.yaml')}:10:5")
    assert lines[at - 1].startswith(
        "error[crd-schema]: TrainJob team-a/typo: spec.trainer.numNodes:"
    )
    assert lines[at + 1 : at + 5] == [
        "   |",
        " 9 |   trainer:",
        "10 |     numNodes: two",
        "   |     ^",
    ]


def test_cli_writes_nothing_but_the_output_file(tmp_path: Path) -> None:
    work = tmp_path / "repo"
    shutil.copytree(VIOLATIONS, work / "inputs")
    (work / ".git").mkdir()  # the repository root SARIF paths are relative to
    before = sorted(p.relative_to(work).as_posix() for p in work.rglob("*"))
    result = trainc("check", "inputs/jobs", "inputs/runtimes", "--format", "sarif", cwd=work)
    assert result.returncode == 2  # input errors among the violations
    assert sorted(p.relative_to(work).as_posix() for p in work.rglob("*")) == before
    sarif = json.loads(result.stdout)
    regions = {
        (
            r["ruleId"],
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            r["locations"][0]["physicalLocation"]["region"]["startLine"],
            r["locations"][0]["physicalLocation"]["region"]["startColumn"],
        )
        for r in sarif["runs"][0]["results"]
    }
    assert ("crd-schema", "inputs/jobs/typo.yaml", 10, 5) in regions
    assert ("output-schema", "inputs/jobs/ghost.yaml", 21, 23) in regions

    out = work / "reports" / "check.xml"
    out.parent.mkdir()
    result = trainc(
        "check",
        "inputs/jobs",
        "inputs/runtimes",
        "--format",
        "junit",
        "--output",
        str(out),
        cwd=work,
    )
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.endswith("trainc: 7 errors, 1 warning, 0 audit\n")
    assert out.read_text().startswith('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites')
    assert sorted(p.name for p in out.parent.iterdir()) == ["check.xml"]


def test_cli_reports_are_byte_identical_across_hash_seeds() -> None:
    for fmt in ("json", "sarif", "junit", "text"):
        args = ("check", rel(VIOLATIONS / "jobs"), rel(VIOLATIONS / "runtimes"), "--format", fmt)
        outputs = {trainc(*args, seed=seed).stdout for seed in ("0", "1", "4242")}
        assert len(outputs) == 1, fmt


def _real_cue() -> None:
    import compiler.policy.cue as cue

    try:
        cue.cue_binary()
    except cue.CueUnavailable as error:
        pytest.fail(
            f"cue is not installed: {error} (`make setup` installs it; `make test` runs setup first)",
            pytrace=False,
        )


def test_real_cue_policies_on_inputs_and_outputs(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _real_cue()
    monkeypatch.setattr(check_module, "_vap_findings", lambda *args: [])
    images = tmp_path / "images.cue"
    images.write_text(
        "package images\n\n"
        "JobSet: spec: replicatedJobs: [...{template: spec: template: spec: containers: "
        '[...{image: =~"^pytorch/"}]}]\n'
    )
    result = check_paths([str(VIOLATIONS), str(images)])
    cue_findings = {where(f) for f in result.findings if f.rule.startswith("cue/")}
    assert cue_findings == {
        ("cue/limits.cue", "good.yaml", 10, 5),  # numNodes: 2 against <=1, in the TrainJob
        # the rendered JobSet's image is the TrainJob's spec.trainer.image
        ("cue/images.cue", "good.yaml", 11, 5),
    }
    [on_output] = [f for f in result.findings if f.rule == "cue/images.cue"]
    assert on_output.stage == "output"
    assert on_output.object == ObjectRef("JobSet", "good", "team-a")
    assert result.exit_code == 2  # the fixture's inputs have errors render exits 2 on


@pytest.mark.parametrize(
    ("action", "severity", "exit_code"),
    [("Warn", Severity.WARNING, 0), ("Deny", Severity.ERROR, 1)],
)
def test_real_vap_on_rendered_jobsets(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, action: str, severity: Severity, exit_code: int
) -> None:
    monkeypatch.setattr(check_module, "_cue_findings", lambda *args: [])
    policy = (CLEAN / "policy.yaml").read_text()
    policy = policy.replace("startsWith('registry.example.com/')", "startsWith('pytorch/')")
    policy = policy.replace("validationActions: [Warn]", f"validationActions: [{action}]")
    (tmp_path / "policy.yaml").write_text(policy)
    result = check_paths([str(CLEAN / "job.yaml"), str(CLEAN / "runtime.yaml"), str(tmp_path)])
    [finding] = result.findings
    assert (finding.rule, finding.severity, finding.stage) == (
        "vap/images-from-registry",
        severity,
        "output",
    )
    assert finding.object == ObjectRef("JobSet", "resnet", "team-a")
    assert finding.location is not None and finding.location.file == str(CLEAN / "job.yaml")
    assert result.exit_code == exit_code


@pytest.mark.usefixtures("no_policy_modules")
def test_namespace_option_is_the_default_namespace(tmp_path: Path) -> None:
    job = (CLEAN / "job.yaml").read_text().split("---\n", 1)[1].replace("  namespace: team-a\n", "")
    (tmp_path / "job.yaml").write_text(job)
    result = check_paths(
        [str(tmp_path / "job.yaml"), str(CLEAN / "runtime.yaml")],
        default_namespace="ml",
    )
    assert result.findings == []
    assert sorted(str(o.ref) for o in result.objects if o.stage == "output") == [
        "JobSet ml/resnet",
        "PodGroup ml/resnet",
    ]


# --- the policy step's fast paths give what policy-by-policy evaluation gives --------------


def _bench_policy_inputs(tmp_path: Path, variant: str) -> tuple[Any, list[PolicyObject], Any]:
    """The check of a small bench repo up to its policies: (policy set, objects, namespaces)."""
    from compiler.plan.build_plan import plan_for_paths
    from compiler.plan.stages import run
    from compiler.policy.vap import PolicySet
    from tests.bench.check_bench import make_repo, shipped_policies

    repo = make_repo(tmp_path, 30, variant)
    policies = shipped_policies(variant == "clean")
    if variant == "clean":
        policies.append(repo / "registries.yaml")
    stages = check_module.CHECK_STAGES
    build = run(
        plan_for_paths([str(repo), *map(str, policies)]),
        stages[: stages.index(check_module.evaluate_policies)],
    )
    objects = build.checked
    namespaces = check_module._namespaces(build.loaded.others, objects)
    return PolicySet.from_manifests(build.loaded.others), objects, namespaces


@pytest.mark.parametrize("variant", ["findings", "clean"])
def test_grouped_policy_evaluation_equals_policy_by_policy(
    tmp_path: Path, variant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Evaluations worked out once per kind and namespace give the findings, texts and
    order of evaluating each policy on each object."""
    import compiler.policy.vap as vap

    policies, objects, namespaces = _bench_policy_inputs(tmp_path, variant)
    grouped = policies.evaluate(objects, namespaces)
    with monkeypatch.context() as patch:
        patch.setattr(vap.PolicySet, "_evaluate_group", lambda *_: None)
        one_by_one = policies.evaluate(objects, namespaces)
    assert grouped == one_by_one
    if variant == "findings":  # labels, registries, gang scheduling, launcher requests
        assert len(grouped) > 2 * 30
        assert {f.object.kind for f in grouped if f.object} == {"TrainJob", "JobSet"}
    else:
        assert grouped == []


def test_a_group_step_that_errors_falls_back_per_policy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When one of an object's programs errors, each of its policies is evaluated on its
    own (the slow way for the one that errors), as without groups."""
    import compiler.policy.vap as vap
    from compiler.apiserver.cel.engine import CelEvalError

    policies, objects, namespaces = _bench_policy_inputs(tmp_path, "findings")
    expected = policies.evaluate(objects, namespaces)
    assert expected

    class Failing:
        def evaluate(self, _: object) -> object:
            raise CelEvalError("no such overload")

    real_group = vap.PolicySet._group
    failed: list[bool] = []

    def group(self: Any, subject: Any, found: Any) -> Any:
        made = real_group(self, subject, found)
        if made.steps:
            failed.append(True)
            made.steps = [*made.steps[:-1], (*made.steps[-1][:2], Failing())]
        return made

    fresh = vap.PolicySet(policies.policies, policies.params)
    monkeypatch.setattr(vap.PolicySet, "_group", group)
    assert fresh.evaluate(objects, namespaces) == expected
    assert failed
