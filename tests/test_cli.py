"""The command line as a user meets it: exit codes, messages, output files, determinism."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from compiler.upstream.artifacts import upstream
from tests.support import trainc_process

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "example"


def trainc(*args: str, seed: str = "0", cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return trainc_process(*args, cwd=cwd, PYTHONHASHSEED=seed)


def test_render_example_writes_one_file_per_object(tmp_path: Path) -> None:
    result = trainc("render", str(EXAMPLE), "-o", str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr
    files = sorted(
        p.relative_to(tmp_path / "out").as_posix() for p in (tmp_path / "out").rglob("*.yaml")
    )
    assert files == [
        "vision/jobset.x-k8s.io_JobSet_resnet.yaml",
        "vision/jobset.x-k8s.io_JobSet_smoke.yaml",
        "vision/scheduling.x-k8s.io_PodGroup_resnet.yaml",
        "vision/scheduling.x-k8s.io_PodGroup_smoke.yaml",
    ]
    assert "vision/resnet: JobSet (1 replicated jobs, 4 pods)" in result.stdout


def test_the_example_project_renders_without_warnings() -> None:
    """A new user's first render: every overlay patch of the example matches something."""
    result = trainc("render", "-o", "-", cwd=EXAMPLE)
    assert result.returncode == 0, result.stderr
    assert "# cluster: production" in result.stdout and "# cluster: staging" in result.stdout
    assert result.stderr == ""


@pytest.mark.parametrize("output", ["-", "out"])
def test_render_of_a_folder_without_trainjobs_says_so(tmp_path: Path, output: str) -> None:
    """An empty (or mistyped) folder renders nothing: a warning, not silence; exit 0."""
    (tmp_path / "empty").mkdir()
    result = trainc("render", "empty", "-o", output, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stderr == "trainc: warning: no TrainJob in empty: nothing to render\n"
    assert result.stdout == (
        "" if output == "-" else f"trainc: 0 objects for 0 TrainJobs written to {output}\n"
    )


def test_output_is_byte_identical_across_hash_seeds() -> None:
    outputs = {
        trainc("render", str(EXAMPLE), "-o", "-", seed=seed).stdout for seed in ("0", "1", "4242")
    }
    assert len(outputs) == 1
    assert outputs.pop().startswith("apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\n")


def test_yaml_syntax_error_is_located_exit_2_no_traceback_no_output(tmp_path: Path) -> None:
    job = tmp_path / "job.yaml"
    job.write_text(
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata:\n  name: x\nspec: {a: [}\n"
    )
    out = tmp_path / "out"
    result = trainc("render", str(job), "-o", str(out))
    assert result.returncode == 2
    assert f"{job}:5:" in result.stderr
    assert "Traceback" not in result.stderr
    assert not out.exists()


def test_flow_style_values_with_colons_render_as_kubectl_reads_them(tmp_path: Path) -> None:
    """``[--data=s3://host:9000/x]`` in flow style: kubectl reads it, so trainc must (the
    libyaml of ruamel.yaml.clibz alone refused the ':' inside a flow plain scalar)."""
    example = tmp_path / "example"
    shutil.copytree(EXAMPLE, example)
    smoke = example / "jobs" / "smoke.yaml"
    smoke.write_text(
        smoke.read_text().replace(
            "    args:\n      - --max-steps=10\n",
            "    args: [--max-steps=10, --data=s3://minio:9000/vision]\n",
        )
    )
    result = trainc("render", str(example), "-o", "-")
    assert result.returncode == 0, result.stderr
    assert "--data=s3://minio:9000/vision" in result.stdout


def test_failed_run_keeps_previous_output(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert trainc("render", str(EXAMPLE), "-o", str(out)).returncode == 0
    before = {p: p.read_bytes() for p in out.rglob("*.yaml")}
    bad = tmp_path / "bad"
    shutil.copytree(EXAMPLE, bad)
    (bad / "jobs" / "smoke.yaml").write_text(
        (bad / "jobs" / "smoke.yaml").read_text().replace("numNodes: 2", "numNodes: two")
    )
    result = trainc("render", str(bad), "-o", str(out))
    assert result.returncode == 2
    assert "smoke.yaml:11:5: TrainJob vision/smoke: spec.trainer.numNodes:" in result.stderr
    assert {p: p.read_bytes() for p in out.rglob("*.yaml")} == before


def test_missing_runtime_names_the_runtime_ref(tmp_path: Path) -> None:
    shutil.copy(EXAMPLE / "jobs" / "smoke.yaml", tmp_path / "smoke.yaml")
    result = trainc("render", str(tmp_path / "smoke.yaml"))
    assert result.returncode == 2
    assert "smoke.yaml:9:5: TrainJob vision/smoke: spec.RuntimeRef:" in result.stderr
    assert 'ClusterTrainingRuntime.trainer.kubeflow.org "torch-gang" not found' in result.stderr


def test_schemas_replace_the_pinned_crds(tmp_path: Path) -> None:
    crd = upstream().crd_path("trainjobs").read_text()
    marker = "description: numNodes is the number of training nodes.\n"
    assert marker in crd
    stricter = crd.replace(marker, marker + "                    maximum: 3\n", 1)
    (tmp_path / "trainjobs.yaml").write_text(stricter)
    result = trainc("render", str(EXAMPLE), "--schemas", str(tmp_path), "-o", "-")
    assert result.returncode == 2
    assert "resnet.yaml:12:5: TrainJob vision/resnet: spec.trainer.numNodes:" in result.stderr
    assert "less than or equal to 3" in result.stderr


@pytest.mark.parametrize("args", [[], ["render"], ["render", "x", "--bogus"]])
def test_usage_errors_exit_2(args: list[str]) -> None:
    assert trainc(*args).returncode == 2


def test_check_previous_catches_a_change_to_an_immutable_field(tmp_path: Path) -> None:
    previous = tmp_path / "previous"
    previous.mkdir()
    smoke = (EXAMPLE / "jobs" / "smoke.yaml").read_text()
    (previous / "smoke.yaml").write_text(smoke.replace("name: torch-gang", "name: torch-other"))
    result = trainc("check", str(EXAMPLE), "--previous", str(previous))  # a folder
    assert result.returncode == 2, result.stdout + result.stderr  # the API server refuses it
    assert "smoke.yaml:8:3" in result.stdout
    assert "immutable" in result.stdout.lower()
    assert trainc("check", str(EXAMPLE)).returncode == 0


def test_overlay_target_matching_nothing_warns_or_fails_with_strict(tmp_path: Path) -> None:
    shutil.copytree(EXAMPLE, tmp_path / "example", ignore=shutil.ignore_patterns("rendered"))
    shutil.copytree(REPO / "overlays", tmp_path / "overlays")
    (tmp_path / ".git").mkdir()  # one repository: example/ may name ../overlays
    staging = tmp_path / "overlays" / "staging" / "platform.yaml"
    staging.write_text(
        staging.read_text().replace(
            "patches:\n",
            "patches:\n  - target:\n      kind: TrainJob\n      name: no-such-job\n"
            "    patch:\n      metadata:\n        labels:\n          x: y\n",
            1,
        )
    )
    project = tmp_path / "example" / "trainc.yaml"
    lenient = trainc(
        "render", "--project", str(project), "--cluster", "staging", "-o", str(tmp_path / "a")
    )
    assert lenient.returncode == 0, lenient.stderr
    assert "platform.yaml:9:" in lenient.stderr and "warning" in lenient.stderr
    strict = trainc(
        "render",
        "--project",
        str(project),
        "--cluster",
        "staging",
        "--strict",
        "-o",
        str(tmp_path / "b"),
    )
    assert strict.returncode == 2
    assert "platform.yaml:9:" in strict.stderr
    assert not (tmp_path / "b").exists()


def test_check_previous_accepts_a_git_revision(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(EXAMPLE, repo, ignore=shutil.ignore_patterns("rendered", "trainc.yaml"))
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "-C", str(repo), "add", "-A"], check=True)
    subprocess.run([*git, "-C", str(repo), "commit", "-qm", "base"], check=True)
    smoke = repo / "jobs" / "smoke.yaml"
    smoke.write_text(smoke.read_text().replace("name: torch-gang", "name: torch-other"))
    result = trainc("check", ".", "--previous", "HEAD", cwd=repo)
    assert result.returncode == 2, result.stdout + result.stderr  # the API server refuses it
    assert "immutable" in result.stdout.lower()
    listed = subprocess.run(
        ["git", "-C", str(repo), "worktree", "list"], capture_output=True, text=True
    )
    assert len(listed.stdout.splitlines()) == 1  # the temporary checkout is gone
