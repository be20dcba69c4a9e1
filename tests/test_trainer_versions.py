"""Per-cluster Trainer releases: the gates, the artifacts, the unknown-field hint, and
``trainc diff --between-versions`` (docs/trainer-versions.md)."""

from __future__ import annotations

import importlib
import json
import pkgutil
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

import compiler
from compiler.cli import main
from compiler.deliver.version_diff import diff_between_versions, render_version_diff
from compiler.plan.build_plan import plan_for_paths
from compiler.plan.stages import run as run_build
from compiler.render.plugins.torch import num_proc_per_node
from compiler.render.plugins.torchtune import AUTO as AUTO_NPROC
from compiler.render.webhooks import deprecation_warning, validate_runtime, webhook_text
from compiler.upstream.artifacts import upstream
from compiler.upstream.names import LABEL_ANCESTOR
from compiler.upstream.versions import (
    DEFAULT_TRAINER_VERSION,
    MEASURED_TRAINER_VERSIONS,
    TRAINER_VERSIONS,
    Gate,
    PerVersion,
)
from tests.conformance.oracle import BUILDS, oracle_binary
from tests.go_oracle import oracle_needed

REPO = Path(__file__).resolve().parents[1]
GOLDEN = REPO / "golden"


def _gates() -> dict[str, Gate]:
    """Every Gate and PerVersion declared at module level anywhere in compiler/."""
    found: dict[str, Gate] = {}
    for module_info in pkgutil.walk_packages(compiler.__path__, "compiler."):
        if module_info.name.endswith(("_test", "__main__")):
            continue
        module = importlib.import_module(module_info.name)
        for name, value in vars(module).items():
            if isinstance(value, Gate | PerVersion) and name.isupper():
                found[name] = value  # type: ignore[assignment]
    return found


def test_every_gate_is_in_the_version_table() -> None:
    table = (REPO / "docs" / "trainer-versions.md").read_text(encoding="utf-8")
    gates = _gates()
    assert len(gates) >= 15
    missing = [name for name in gates if f"`{name}`" not in table]
    assert missing == [], f"gates not in docs/trainer-versions.md: {missing}"


def test_gates_start_in_an_emulated_release() -> None:
    for name, gate in _gates().items():
        if isinstance(gate, Gate):
            assert gate.since in TRAINER_VERSIONS, name
            assert not gate.on(TRAINER_VERSIONS[0]) or gate.since == TRAINER_VERSIONS[0]


def test_a_gate_with_a_typo_fails_at_import() -> None:
    with pytest.raises(ValueError, match="not a release version"):
        Gate("2.3", "no v")


def test_every_release_has_artifacts_and_an_oracle_build() -> None:
    script = (REPO / "scripts" / "fetch-upstream.sh").read_text(encoding="utf-8")
    match = re.search(r"^ALL_VERSIONS=\((.*)\)$", script, re.M)
    assert match is not None
    fetched = tuple(match.group(1).split())
    # Every emulated release is fetched and built; a measured release may be prepared
    # (artifacts and oracle) before trainc accepts it.
    assert set(TRAINER_VERSIONS) <= set(fetched) <= set(MEASURED_TRAINER_VERSIONS)
    assert set(BUILDS) == set(fetched)
    assert TRAINER_VERSIONS[-1] == DEFAULT_TRAINER_VERSION
    for version in fetched:
        assert upstream(version).trainer_dir.name.endswith(f"@{version}")


def _prose_list(versions: tuple[str, ...]) -> str:
    """``("v2.0.0", "v2.1.0", "v2.2.0")`` -> ``"v2.0.0, v2.1.0 and v2.2.0"``."""
    return ", ".join(versions[:-1]) + " and " + versions[-1]


def test_every_other_list_of_releases_agrees_with_trainer_versions() -> None:
    """TRAINER_VERSIONS is the one list; the places that must name releases by hand
    (make rules with their own module files and tags, the fetch script, the manual) are
    checked against it, so adding a release without them fails here."""
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    script = (REPO / "scripts" / "fetch-upstream.sh").read_text(encoding="utf-8")
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    table = (REPO / "docs" / "trainer-versions.md").read_text(encoding="utf-8")

    assert f"TRAINER_VERSION := {DEFAULT_TRAINER_VERSION}\n" in makefile
    assert f"NEWEST_VERSION={DEFAULT_TRAINER_VERSION}\n" in script
    oracle_line = re.search(r"^oracle: (.*)$", makefile, re.M)
    assert oracle_line is not None
    targets = oracle_line.group(1).split()
    assert len(targets) == len(TRAINER_VERSIONS), "one oracle build per emulated release"
    for version, (flags, binary) in BUILDS.items():
        if version == DEFAULT_TRAINER_VERSION:
            continue
        assert f"-o bin/{binary} ." in makefile, f"no make rule builds {binary}"
        for flag in flags:  # the make rule spells -tags=x as "-tags x"
            assert flag.replace("-tags=", "-tags ") in makefile, (binary, flag)

    newest_first = ", ".join(f"**{v}**" for v in reversed(TRAINER_VERSIONS[1:]))
    assert f"{newest_first} and **{TRAINER_VERSIONS[0]}**" in readme
    assert f"**Emulated: {_prose_list(TRAINER_VERSIONS)}.**" in table


@pytest.mark.parametrize("version", TRAINER_VERSIONS)
def test_deprecation_warning_names_the_release_own_policy_url(version: str) -> None:
    """The URL is read from that release's pkg/constants (a fact of the source); a release
    without the constant (v2.0.0) gives no warning."""
    constants = upstream(version).path("pkg/constants/constants.go").read_text(encoding="utf-8")
    url = re.search(r'RuntimeDeprecationPolicyURL string = "([^"]+)"', constants)
    runtime = {
        "kind": "ClusterTrainingRuntime",
        "metadata": {"name": "old", "labels": {"trainer.kubeflow.org/support": "deprecated"}},
    }
    warning = deprecation_warning(runtime, version)
    if url is None:
        assert warning is None
        return
    assert warning is not None and warning.endswith(f"deprecation policy: {url.group(1)}")


def _copy_case(name: str, into: Path, prefix: str) -> None:
    for path in (GOLDEN / name).glob("*.yaml"):
        if path.name not in ("case.yaml", "expected.yaml"):
            shutil.copy(path, into / f"{prefix}-{path.name}")


def _repo(tmp_path: Path) -> Path:
    """A folder with a MultiKueue TrainJob, an MPI job with 2 replicas and an
    envInjection runtime: three TrainJobs that v2.2.0 and v2.3.0 treat differently."""
    shutil.copy(
        upstream("v2.3.0").path("manifests/base/runtimes/torch_distributed.yaml"),
        tmp_path / "torch-runtime.yaml",
    )
    _copy_case("torch-managedby-multikueue", tmp_path, "kueue")
    _copy_case("mpi-own-replicas-subdomain", tmp_path, "mpi")
    _copy_case("custom-envinjection-targets", tmp_path, "inject")
    return tmp_path


def test_unknown_field_of_another_release_names_both(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    build = diff_between_versions([plan_for_paths([str(repo)])], "v2.2.0", "v2.3.0")
    (runtime,) = [v for v in build.verdicts if not v.namespace]
    assert runtime.name == "TrainingRuntime default/torch-injected"
    assert runtime.old.endswith(
        "(spec.mlPolicy.torch.envInjection is not in Trainer v2.2.0's TrainingRuntime "
        "schema; v2.3.0 has it)"
    )
    assert runtime.new == "admitted"


def test_between_versions_lists_verdicts_and_field_changes(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    result = diff_between_versions([plan_for_paths([str(repo)])], "v2.2.0", "v2.3.0")
    verdicts = {(v.name, v.old.split(":")[0], v.new) for v in result.verdicts if v.namespace}
    assert verdicts == {
        ("delegated", "rendered", "skipped (managed by kueue.x-k8s.io/multikueue)"),
        ("injected", "rejected", "rendered"),
    }
    changed = {(t.name, t.status) for t in result.objects.trainjobs}
    assert changed == {("delegated", "removed"), ("injected", "added"), ("replicas", "changed")}
    text = render_version_diff(result)
    assert text.startswith(
        "trainc diff: 3 TrainJobs render differently on Trainer v2.2.0 and v2.3.0\n"
    )
    # v2.2.0 names the pods of replica 0 only; v2.3.0 those of both replicas
    assert "replicas-node-1-0.mpi-hosts slots=2" in text
    assert (
        "+ template.spec.template.spec.volumes[name=mpi-ssh-auth].secret.defaultMode: 256" in text
    )
    assert "| `TrainJob default/injected` | rejected" in render_version_diff(result, markdown=True)


def test_same_release_twice_has_no_difference(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    result = diff_between_versions([plan_for_paths([str(repo)])], "v2.3.0", "v2.3.0")
    assert not result.changed
    assert render_version_diff(result) == (
        "trainc diff: no TrainJob renders differently on Trainer v2.3.0 and v2.3.0\n"
    )


def test_between_versions_cli_exit_codes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = _repo(tmp_path)
    args = ["diff", "--between-versions", "v2.2.0", "v2.3.0", str(repo)]
    assert main([*args, "--exit-code"]) == 1
    assert main(["diff", "--between-versions", "v2.4.0", "v2.3.0", str(repo)]) == 2
    assert "'v2.4.0' is not an emulated Trainer release" in capsys.readouterr().err
    (repo / "broken.yaml").write_text("apiVersion: v1\n", encoding="utf-8")
    assert main(args) == 2  # an input error on both releases: nothing to compare


def test_render_trainer_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = _repo(tmp_path)
    (repo / "inject-runtime.yaml").unlink()
    (repo / "inject-trainjob.yaml").unlink()
    assert main(["render", str(repo), "-o", "-", "--trainer", "v2.2.0"]) == 0
    older = capsys.readouterr().out
    assert main(["render", str(repo), "-o", "-"]) == 0
    newer = capsys.readouterr().out
    assert "name: delegated" in older and "name: delegated" not in newer
    assert "defaultMode: 256" in newer and "defaultMode: 256" not in older


def _v21_repo(tmp_path: Path) -> Path:
    """A v2.1.0 podTemplateOverrides TrainJob and a coscheduling TrainJob with
    resourcesPerNode: what v2.1.0 and v2.2.0 treat differently."""
    _copy_case("v21-overrides-node-metadata-spec", tmp_path, "overrides")
    shutil.copy(
        upstream("v2.1.0").path("manifests/base/runtimes/torch_distributed.yaml"),
        tmp_path / "torch-runtime.yaml",
    )
    _copy_case("versions-podgroup-resources-per-node", tmp_path, "gang")
    return tmp_path


def test_between_v21_and_v22_overrides_and_podgroup_requests(tmp_path: Path) -> None:
    """v2.2.0 does not know podTemplateOverrides (an unknown field naming the releases that
    have it); v2.1.0's PodGroup counts the runtime's requests, v2.2.0's resourcesPerNode."""
    repo = _v21_repo(tmp_path)
    result = diff_between_versions([plan_for_paths([str(repo)])], "v2.1.0", "v2.2.0")
    (overrides,) = [v for v in result.verdicts if v.name == "overrides-node"]
    assert overrides.old == "rendered"
    assert overrides.new.endswith(
        "(spec.labels is not in Trainer v2.2.0's TrainJob schema; v2.0.0, v2.1.0 have it)"
    )
    text = render_version_diff(result)
    assert '~ spec.minResources.cpu: "2" -> "8"' in text, text


def test_v21_render_applies_pod_template_overrides(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = _v21_repo(tmp_path)
    (repo / "gang-runtime.yaml").unlink()
    (repo / "gang-trainjob.yaml").unlink()
    assert main(["render", str(repo), "-o", "-", "--trainer", "v2.1.0"]) == 0
    out = capsys.readouterr().out
    for fact in ("team: vision", "tier: gold", "accelerator: a100", "claimName: imagenet"):
        assert fact in out, fact
    assert main(["render", str(repo), "-o", "-", "--trainer", "v2.2.0"]) == 2
    assert "spec.podTemplateOverrides is not in Trainer v2.2.0's TrainJob schema" in (
        capsys.readouterr().err
    )


def _runtime(name: str, replicas: int, ancestor: str | None, container: str) -> dict[str, Any]:
    labels = {"trainer.kubeflow.org/support": "deprecated"}
    job_metadata = {"labels": {LABEL_ANCESTOR: ancestor}} if ancestor else {}
    job = {
        "name": name,
        "replicas": replicas,
        "template": {
            "metadata": job_metadata,
            "spec": {"template": {"spec": {"containers": [{"name": container, "image": "x"}]}}},
        },
    }
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "ClusterTrainingRuntime",
        "metadata": {"name": f"{name}-{replicas}-{ancestor or 'none'}", "labels": labels},
        "spec": {"template": {"spec": {"replicatedJobs": [job]}}},
    }


RUNTIME_WEBHOOK_CASES = [
    _runtime("launcher", 2, None, "node"),  # v2.0.0 only: the launcher rule
    _runtime("launcher", 2, "trainer", "node"),  # both rules, one message
    _runtime("node", 1, "trainer", "other"),  # v2.1.0 only: the expected container
    _runtime("node", 3, "trainer", "node"),  # both releases
]


@pytest.mark.parametrize("version", ["v2.0.0", "v2.1.0"])
@pytest.mark.parametrize("runtime", RUNTIME_WEBHOOK_CASES, ids=lambda r: r["metadata"]["name"])
def test_runtime_webhook_matches_the_release_oracle(
    tmp_path: Path, runtime: dict[str, Any], version: str
) -> None:
    """v2.0.0's runtime webhook (launcher replicas, no container check, no deprecation
    warning) against the real code of each release, built as its conformance oracle."""
    with oracle_needed("`make oracle` builds it; `make test` runs it first"):
        binary = oracle_binary(version)
    path = tmp_path / "runtime.yaml"
    path.write_text(yaml.safe_dump(runtime), encoding="utf-8")
    result = subprocess.run(
        [str(binary), "validate", str(path)], capture_output=True, text=True, check=False
    )
    answer = json.loads(result.stdout)
    upstream_errors = [(e["field"], e["message"]) for e in answer["errors"]]
    ours = [
        (
            e.field,
            f"{e.field}: {webhook_text(e, runtime, 'trainer.v1alpha1.ClusterTrainingRuntime')}",
        )
        for e in validate_runtime(runtime, version)
    ]
    assert ours == upstream_errors
    upstream_warnings = [w["message"] for w in answer["warnings"]]
    warning = deprecation_warning(runtime, version)
    assert ([warning] if warning else []) == upstream_warnings


NAMES = ["tune", "llama-3.2-tune", "7b-finetune", "a" * 64, "-" + "b" * 63, "ok-1"]


@pytest.mark.parametrize("name", NAMES)
def test_trainjob_name_rule_matches_the_v2_0_0_oracle(tmp_path: Path, name: str) -> None:
    """v2.0.0's TrainJob webhook checks the name (DNS-1035, at most 63 characters) with
    the runtime's checks; trainc's findings on metadata.name say word for word the same."""
    with oracle_needed("`make oracle` builds it; `make test` runs it first"):
        binary = oracle_binary("v2.0.0")
    shutil.copy(upstream("v2.0.0").path("manifests/base/runtimes/torch_distributed.yaml"), tmp_path)
    trainjob = {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": name},
        "spec": {"runtimeRef": {"name": "torch-distributed"}},
    }
    path = tmp_path / "trainjob.yaml"
    path.write_text(yaml.safe_dump(trainjob), encoding="utf-8")
    result = subprocess.run(
        [str(binary), "validate", str(tmp_path / "torch_distributed.yaml"), str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    answer = json.loads(result.stdout)
    upstream_errors = [e["message"] for e in answer["errors"] if e["field"] == "metadata.name"]
    build = run_build(plan_for_paths([str(tmp_path)], trainer_version="v2.0.0"))
    ours = [f"{p.field_path}: {p.message}" for p in build.problems]
    assert ours == upstream_errors
    assert bool(ours) == (name not in ("tune", "ok-1"))


@pytest.mark.parametrize(
    ("trainer", "policy", "expected"),
    [
        ({}, None, AUTO_NPROC),  # no resourcesPerNode: the value is kept
        ({"numProcPerNode": 4, "resourcesPerNode": {}}, None, 1),  # no list read: 1
        ({"numProcPerNode": 4, "resourcesPerNode": {"requests": {"cpu": "2"}}}, None, 4),
        ({"resourcesPerNode": {"limits": {"cpu": "1500m"}}}, None, 2),  # rounded up
        ({"resourcesPerNode": {"limits": {"AMD.com/GPU": "1"}}}, None, 1),  # GPU, no requests
        ({"resourcesPerNode": {"limits": {"memory": "1Gi"}}}, {"numProcPerNode": "gpu"}, 1),
        ({"numProcPerNode": "cpu", "resourcesPerNode": {"limits": {"memory": "1Gi"}}}, None, 1),
        ({"numProcPerNode": "gpu", "resourcesPerNode": {"requests": {"cpu": "8"}}}, None, "gpu"),
        ({"numProcPerNode": "auto", "resourcesPerNode": {"requests": {"cpu": "0"}}}, None, 1),
    ],
)
def test_v2_0_0_num_proc_per_node_reads_only_the_trainjob_resources(
    trainer: dict[str, Any], policy: dict[str, Any] | None, expected: int | str
) -> None:
    """torch.go of v2.0.0 (calculateNumProcPerNode): limits first, then requests; an
    absent list gives 1; the runtime's resources are never read."""
    runtime_resources = {"requests": {"cpu": "16"}}
    assert num_proc_per_node(trainer, 0, runtime_resources, policy, "v2.0.0") == expected


def test_the_kueue_pin_is_one_release_everywhere() -> None:
    """KUEUE_VERSION is the release the fetch script downloads, and the Trainer it embeds
    (read from its go.mod by the script) is the one KUEUE_TRAINER_VERSIONS records."""
    from compiler.upstream.artifacts import kueue_upstream
    from compiler.upstream.versions import KUEUE_TRAINER_VERSIONS, KUEUE_VERSION

    script = (REPO / "scripts" / "fetch-upstream.sh").read_text(encoding="utf-8")
    assert f"KUEUE_VERSION={KUEUE_VERSION}\n" in script
    found = kueue_upstream(KUEUE_VERSION)
    assert found.trainer_version == KUEUE_TRAINER_VERSIONS[KUEUE_VERSION]
    kinds = {name.split(".")[0] for name, _ in found.input_crds}
    assert kinds == {
        "resourceflavors",
        "clusterqueues",
        "cohorts",
        "localqueues",
        "workloadpriorityclasses",
        "workloads",
    }
    assert all(path.is_file() for path in found.input_crd_paths())
