"""run_cue against the real cue CLI (skipped when `make setup` has not installed it)."""

from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

import compiler.policy.cue as cue
from compiler.apiserver.manifest import Manifest
from compiler.apiserver.yaml_source import parse_yaml
from compiler.errors import InputError, Severity, SourceLocation, UsageError
from compiler.policy.objects import PolicyObject


def _installed() -> bool:
    try:
        cue.cue_binary()
    except cue.CueUnavailable:
        return False
    return True


@pytest.fixture
def cue_installed() -> None:
    """The pinned cue CLI, which `make setup` builds: a failure, not a skip, without it."""
    if not _installed():
        pytest.fail(f"cue {cue.CUE_VERSION} is not installed (run `make setup`)", pytrace=False)


needs_cue = pytest.mark.usefixtures("cue_installed")

JOBS = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: big
  namespace: team-a
  labels: {team: vision}
spec:
  trainer:
    numNodes: 32
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: unlabelled
  namespace: team-a
spec:
  trainer:
    numNodes: 2
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: other
  namespace: team-a
"""

POLICY = """\
package limits

TrainJob: {
\tmetadata: labels: team!: string
\tspec: trainer: numNodes?: <=16
}
"""


def _objects(text: str, file: str = "jobs.yaml") -> list[PolicyObject]:
    return [PolicyObject(d.data, Manifest(d.data, d.source)) for d in parse_yaml(text, file)]


def _policy(tmp_path: Path, text: str, name: str = "limits.cue") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _summary(findings: list[Any]) -> list[tuple[str, str, str | None, str]]:
    return [(f.rule, _name(f), f.field_path, f.message) for f in findings]


def _name(finding: Any) -> str:
    return finding.object.name if finding.object is not None else ""


@needs_cue
def test_conflicts_and_missing_fields_are_both_reported(tmp_path: Path) -> None:
    # cue drops "field is required" errors when any conflict exists in the same run;
    # the second pass must bring them back.
    findings = cue.run_cue([_policy(tmp_path, POLICY)], _objects(JOBS))
    assert _summary(findings) == [
        ("cue/limits.cue", "big", "spec.trainer.numNodes", "invalid value 32 (out of bound <=16)"),
        (
            "cue/limits.cue",
            "unlabelled",
            "metadata.labels.team",
            "field is required but not present",
        ),
    ]
    big = findings[0]
    assert big.severity is Severity.ERROR
    assert big.stage == "input"
    assert big.location == SourceLocation("jobs.yaml", 9, 5)  # numNodes:
    assert big.details == (("policy", f"{tmp_path / 'limits.cue'}:5:28"),)
    assert findings[1].location == SourceLocation("jobs.yaml", 13, 1)  # metadata: (no labels)


@needs_cue
def test_clean_objects_give_no_findings_in_one_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _count_runs(monkeypatch)
    text = JOBS.replace("numNodes: 32", "numNodes: 3").replace(
        "name: unlabelled", "name: x\n  labels: {team: a}"
    )
    assert cue.run_cue([_policy(tmp_path, POLICY)], _objects(text)) == []
    assert len(calls) == 1


def _count_runs(monkeypatch: pytest.MonkeyPatch, pids: list[int] | None = None) -> list[list[str]]:
    """The command lines of the processes started (and their ``pids``)."""
    calls: list[list[str]] = []
    real = subprocess.Popen

    def counting(args: list[str], **kwargs: Any) -> Any:
        calls.append(list(args))
        process = real(args, **kwargs)
        if pids is not None:
            pids.append(process.pid)
        return process

    monkeypatch.setattr(subprocess, "Popen", counting)
    return calls


@needs_cue
@pytest.mark.parametrize("count", [1, 50, 500])
def test_processes_per_run_do_not_grow_with_objects(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, count: int
) -> None:
    docs = "---\n".join(
        f"apiVersion: v1\nkind: TrainJob\nmetadata: {{name: j{i}, labels: {{team: t}}}}\n"
        f"spec: {{trainer: {{numNodes: {i % 20}}}}}\n"
        for i in range(count)
    )
    docs += "---\napiVersion: v1\nkind: TrainJob\nmetadata: {name: nolabel}\n"
    calls = _count_runs(monkeypatch)
    findings = cue.run_cue([_policy(tmp_path, POLICY)], _objects(docs))
    assert len(calls) == 2  # the second pass, after violations, checks the pairs that passed
    expected_conflicts = sum(1 for i in range(count) if i % 20 > 16)
    assert sum("out of bound" in f.message for f in findings) == expected_conflicts
    assert sum("required" in f.message for f in findings) == 1


@needs_cue
def test_several_policies_and_objects_across_them(tmp_path: Path) -> None:
    cross = _policy(
        tmp_path,
        """\
// no package clause: the runner gives it one
#objects: [...]
_names: [for o in #objects if o.kind == "ConfigMap" {o.metadata.name}]
TrainJob: {
\tmetadata: name: string
\tif len(_names) > 0 {
\t\t_configMaps: error("\\(metadata.name) shares its namespace with ConfigMaps \\(_names[0])")
\t}
}
""",
        "cross.cue",
    )
    findings = cue.run_cue([_policy(tmp_path, POLICY), cross], _objects(JOBS))
    rules = sorted({(f.rule, _name(f)) for f in findings})
    assert rules == [
        ("cue/cross.cue", "big"),
        ("cue/cross.cue", "unlabelled"),
        ("cue/limits.cue", "big"),
        ("cue/limits.cue", "unlabelled"),
    ]
    cross_big = next(f for f in findings if f.rule == "cue/cross.cue" and _name(f) == "big")
    assert cross_big.message == "big shares its namespace with ConfigMaps other"
    assert cross_big.field_path is None  # a hidden field: the object itself
    # line 7 of the file as written (the added package clause is not counted)
    assert cross_big.details == (("policy", f"{cross}:7:16"),)


@needs_cue
def test_outputs_point_at_their_origin(tmp_path: Path) -> None:
    [trainjob] = _objects(JOBS.split("---")[0])
    jobset = {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": "big", "namespace": "team-a"},
        "spec": {"replicatedJobs": []},
    }
    policy = _policy(tmp_path, "package p\nJobSet: spec: replicatedJobs: [_, ...]\n")
    [finding] = cue.run_cue([policy], [PolicyObject(jobset, trainjob.origin, stage="output")])
    assert finding.stage == "output"
    assert str(finding.object) == "JobSet team-a/big"
    assert finding.field_path == "spec.replicatedJobs"
    assert finding.location == trainjob.origin.locate(())


@needs_cue
def test_a_broken_policy_is_an_input_error_at_its_line(tmp_path: Path) -> None:
    policy = _policy(tmp_path, "package p\n\nTrainJob: spec: {\n")
    with pytest.raises(InputError) as raised:
        cue.run_cue([policy], _objects(JOBS))
    [problem] = raised.value.problems
    assert problem.location is not None and problem.location.file == str(policy)
    assert problem.location.line == 3  # where the file ends unclosed
    assert problem.rule == "policy"


def test_no_policies_need_no_cue(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cue, "cue_binary", _unavailable)
    assert cue.run_cue([], _objects(JOBS)) == []


def _unavailable(*args: Any) -> Path:
    raise AssertionError("cue looked up")


def test_missing_cue_says_how_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRAINC_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("TRAINC_CUE", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))  # no cue on PATH
    with pytest.raises(cue.CueUnavailable) as raised:
        cue.run_cue([_policy(tmp_path, POLICY)], _objects(JOBS))
    message = str(raised.value)
    assert "make setup" in message and cue.CUE_VERSION in message
    assert "on PATH or set TRAINC_CUE" in message
    assert raised.value.exit_code == 2


def _fake_cue(folder: Path, version: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    binary = folder / "cue"
    binary.write_text(f"#!/bin/sh\necho 'cue version {version}'\n", encoding="utf-8")
    binary.chmod(0o755)
    return binary


def test_trainc_cue_names_the_binary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An installed trainc has no cache: TRAINC_CUE (or PATH) gives the cue to use."""
    configured = _fake_cue(tmp_path / "tools", cue.CUE_VERSION)
    _fake_cue(tmp_path / "cache" / "cue" / cue.CUE_VERSION, cue.CUE_VERSION)
    monkeypatch.setenv("TRAINC_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("TRAINC_CUE", str(configured))
    assert cue.cue_binary() == configured  # before the one setup installed


def test_trainc_cue_of_another_version_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    configured = _fake_cue(tmp_path / "old", "v0.9.0")
    monkeypatch.setenv("TRAINC_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("TRAINC_CUE", str(configured))
    monkeypatch.setenv("PATH", str(tmp_path / "old"))  # not looked at: TRAINC_CUE is set
    with pytest.raises(cue.CueUnavailable) as raised:
        cue.cue_binary([Path("policies/gang.cue")])
    message = str(raised.value)
    assert f"$TRAINC_CUE, {configured}, is v0.9.0" in message
    assert "(policies/gang.cue)" in message and "TRAINC_CUE" in message


def test_cue_on_path_of_the_pinned_version(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    on_path = _fake_cue(tmp_path / "bin", cue.CUE_VERSION)
    monkeypatch.setenv("TRAINC_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("TRAINC_CUE", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    assert cue.cue_binary() == on_path


def test_install_script_pins_the_same_version() -> None:
    script = Path(__file__).parents[2] / "scripts" / "install-cue.sh"
    match = re.search(r"^CUE_VERSION=(\S+)$", script.read_text(), re.MULTILINE)
    assert match is not None and match.group(1) == cue.CUE_VERSION


def test_error_report_parsing() -> None:
    text = (
        'results."0"."3".metadata.labels."app.kubernetes.io/name": conflicting values "a" and "b":\n'
        "    ./p/0/x.cue:3:4\n"
        "    objects.json:4:10\n"
        'results."1"."0".spec.l.2._x: line one\n'
        "line two:\n"
        "    ./p/1/y.cue:7:1\n"
        "import failed: cannot find package\n"
    )
    errors = cue._parse_errors(text)
    assert [(e.path, e.message, e.positions) for e in errors] == [
        (
            ["results", "0", "3", "metadata", "labels", "app.kubernetes.io/name"],
            'conflicting values "a" and "b"',
            [("./p/0/x.cue", 3, 4), ("objects.json", 4, 10)],
        ),
        (
            ["results", "1", "0", "spec", "l", 2, "_x"],
            "line one\nline two",
            [("./p/1/y.cue", 7, 1)],
        ),
        ([], "import failed: cannot find package", []),
    ]
    assert cue._field_path(errors[1].path[3:]) == ("spec", "l", 2)


SECRET = "s3cr3t-token-value"


@needs_cue
@pytest.mark.parametrize(
    ("attribute", "message"),
    [
        ('@embed(file="../../../../outside/secret.json")', "cannot refer to parent directory"),
        ('@embed(glob="../../../../outside/*.json")', "cannot refer to parent directory"),
        ('@embed(file="{outside}/secret.json")', "only relative files are allowed"),
    ],
)
def test_cue_refuses_an_embed_outside_its_module_and_the_error_is_located(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, attribute: str, message: str
) -> None:
    """trainc copies each policy alone into a throwaway module; cue itself refuses an
    embed that leaves it (``..``, absolute), even where the file exists at that place."""
    import tempfile

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.json").write_text(f'{{"token": "{SECRET}"}}\n')
    # the throwaway module in tmp/trainc-cue-*/; its p/0/ is four levels below tmp_path
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    embed = attribute.replace("{outside}", str(outside))
    policy = _policy(
        tmp_path,
        f"@extern(embed)\n\npackage p\n\nx: _ {embed}\nTrainJob: metadata: name: x.token\n",
    )
    with pytest.raises(InputError) as raised:
        cue.run_cue([policy], _objects(JOBS))
    [problem] = raised.value.problems
    assert problem.location is not None
    assert (problem.location.file, problem.location.line) == (str(policy), 5)
    assert message in problem.message
    assert SECRET not in str(raised.value)


@needs_cue
@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("trainc.local/run/../../outside", 'invalid path element ".."'),
        ("{outside}", "no location found for package"),
        ("example.com/outside", "cannot find package"),
    ],
)
def test_cue_imports_reach_nothing_outside_the_module(
    tmp_path: Path, target: str, message: str
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.cue").write_text(f'package outside\n\ntoken: "{SECRET}"\n')
    source = target.replace("{outside}", str(outside))
    policy = _policy(
        tmp_path, f'package p\n\nimport o "{source}"\n\nTrainJob: metadata: name: o.token\n'
    )
    with pytest.raises(InputError) as raised:
        cue.run_cue([policy], _objects(JOBS))
    [problem] = raised.value.problems
    assert problem.location is not None
    assert (problem.location.file, problem.location.line) == (str(policy), 3)
    assert message in problem.message
    assert SECRET not in str(raised.value)


# --- limits (issue 25; the end-to-end tests are in tests/test_cue_limits.py) ------------

LOOP = """\
package loop

import "list"

_r: list.Range(0, 2000, 1)
TrainJob: metadata: annotations: n: "\\(len([for a in _r for b in _r for c in _r if a+b+c < 0 {a}]))"
"""


def test_limits_from_the_environment() -> None:
    assert cue.CueLimits.from_environ({}) == cue.CueLimits(30.0, 2 * 1024**3)
    limits = cue.CueLimits.from_environ(
        {"TRAINC_CUE_TIMEOUT": "1.5m", "TRAINC_CUE_MEMORY": "512Mi"}
    )
    assert limits == cue.CueLimits(90.0, 512 * 1024**2)
    assert cue.CueLimits.from_environ({"TRAINC_CUE_TIMEOUT": "500ms"}).timeout == 0.5
    assert cue.CueLimits.from_environ({"TRAINC_CUE_TIMEOUT": "45"}).timeout == 45.0
    assert cue.CueLimits.from_environ({"TRAINC_CUE_MEMORY": "1G"}).memory == 10**9
    for name, value, says in [
        ("TRAINC_CUE_TIMEOUT", "0", "not a duration above zero"),
        ("TRAINC_CUE_TIMEOUT", "soon", "not a duration above zero"),
        ("TRAINC_CUE_MEMORY", "lots", "not a quantity of bytes"),
        ("TRAINC_CUE_MEMORY", "64Mi", "below 128Mi"),
    ]:
        with pytest.raises(UsageError) as raised:
            cue.CueLimits.from_environ({name: value})
        assert str(raised.value).startswith(f"${name}: {value!r} is ") and says in str(raised.value)


@needs_cue
def test_a_looping_policy_is_stopped_at_the_deadline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[int] = []
    _count_runs(monkeypatch, started)
    policy = _policy(tmp_path, LOOP, "loop.cue")
    begin = time.monotonic()
    with pytest.raises(InputError) as raised:
        cue.run_cue([policy], _objects(JOBS), cue.CueLimits(timeout=1.5))
    assert time.monotonic() - begin < 10  # 1.5 s, on a busy machine
    [problem] = raised.value.problems
    assert problem.location == SourceLocation(str(policy))
    assert problem.rule == "policy" and problem.details == (("cue-limit", "time"),)
    assert "time limit of 1.5s ($TRAINC_CUE_TIMEOUT)" in problem.message
    [pid] = started
    with pytest.raises(ProcessLookupError):  # its group: nothing of it is left
        os.killpg(pid, 0)
    assert not Path(f"/proc/{pid}").exists()  # killed and reaped


@needs_cue
def test_several_policies_out_of_time_are_named_together(tmp_path: Path) -> None:
    """One cue process checks them all, so the error cannot say which one loops."""
    loop = _policy(tmp_path, LOOP, "loop.cue")
    limits = _policy(tmp_path, POLICY)
    with pytest.raises(InputError) as raised:
        cue.run_cue([limits, loop], _objects(JOBS), cue.CueLimits(timeout=1))
    [problem] = raised.value.problems
    assert problem.location is None
    assert problem.message.startswith(f"CUE policies ({limits}, {loop}): cue vet ran past")
