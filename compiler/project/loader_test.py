"""trainc.yaml: validation errors at their exact file:line:col, glob expansion, discovery."""

from __future__ import annotations

from pathlib import Path

import pytest

from compiler.errors import InputError
from compiler.project import find_project, load_project

GOOD = """\
inputs:
  runtimes: [runtimes/]
  jobs: ["jobs/**/*.yaml"]
clusters:
  - name: production
    schedulers: [coscheduling]
    namespaces:
      - name: vision
        labels: {team: vision}
"""


def _project(tmp_path: Path, text: str = GOOD) -> Path:
    (tmp_path / "runtimes").mkdir()
    (tmp_path / "runtimes" / "r.yaml").write_text("a: 1\n")
    (tmp_path / "jobs" / "b").mkdir(parents=True)
    (tmp_path / "jobs" / "b" / "z.yaml").write_text("a: 1\n")
    (tmp_path / "jobs" / "a.yaml").write_text("a: 1\n")
    (tmp_path / "jobs" / "notes.md").write_text("not yaml\n")
    path = tmp_path / "trainc.yaml"
    path.write_text(text)
    return path


def _error(path: Path) -> str:
    with pytest.raises(InputError) as caught:
        load_project(path)
    return str(caught.value)


def test_good_project_defaults_and_deterministic_files(tmp_path: Path) -> None:
    project = load_project(_project(tmp_path))
    [cluster] = project.clusters
    assert cluster.trainer == "v2.3.0"
    assert cluster.default_namespace == "default"
    assert project.output == tmp_path / "rendered"
    rel = [str(Path(p).relative_to(tmp_path)) for p in project.input_files()]
    assert rel == ["runtimes/r.yaml", "jobs/a.yaml", "jobs/b/z.yaml"]
    assert project.namespace_labels(cluster) == {
        "vision": {"team": "vision", "kubernetes.io/metadata.name": "vision"}
    }


def test_unknown_field_reports_exact_line_and_column(tmp_path: Path) -> None:
    path = _project(tmp_path, GOOD.replace("    schedulers:", "    shedulers:"))
    assert _error(path) == f"{path}:6:5: clusters[0].shedulers: unknown field"


def test_unknown_nested_field_and_bad_scheduler(tmp_path: Path) -> None:
    text = GOOD.replace("[coscheduling]", "[coscheduling, yunikorn]").replace(
        "labels: {team: vision}", "labels: {team: vision}\n        quota: 3"
    )
    message = _error(_project(tmp_path, text))
    lines = message.splitlines()
    assert lines[0].startswith(f"{tmp_path / 'trainc.yaml'}:6:32: clusters[0].schedulers[1]: ")
    assert "'coscheduling', 'volcano' or 'kueue'" in lines[0]
    assert lines[1] == (
        f"{tmp_path / 'trainc.yaml'}:10:9: clusters[0].namespaces[0].quota: unknown field"
    )


def test_other_trainer_version_is_a_clear_error(tmp_path: Path) -> None:
    text = GOOD.replace("  - name: production\n", "  - name: production\n    trainer: v2.4.0\n")
    assert _error(_project(tmp_path, text)) == (
        f"{tmp_path / 'trainc.yaml'}:6:5: clusters[0].trainer: Trainer version 'v2.4.0' "
        "is not supported: trainc emulates v2.0.0, v2.1.0, v2.2.0, v2.3.0"
    )


def test_oldest_release_is_accepted(tmp_path: Path) -> None:
    from compiler.plan.build_plan import plans_for_project

    text = GOOD.replace("  - name: production\n", "  - name: production\n    trainer: v2.0.0\n")
    (plan,) = plans_for_project(load_project(_project(tmp_path, text)))
    assert (plan.trainer_version, plan.crds.trainer_version) == ("v2.0.0", "v2.0.0")


def test_each_cluster_builds_for_its_trainer_release(tmp_path: Path) -> None:
    from compiler.plan.build_plan import plans_for_project

    text = GOOD.replace("  - name: production\n", "  - name: production\n    trainer: v2.2.0\n")
    (plan,) = plans_for_project(load_project(_project(tmp_path, text)))
    assert (plan.trainer_version, plan.render.trainer_version) == ("v2.2.0", "v2.2.0")
    assert plan.crds.trainer_version == "v2.2.0"


def test_missing_clusters_and_wrong_types(tmp_path: Path) -> None:
    path = _project(tmp_path, "inputs:\n  jobs: jobs/\n")
    lines = _error(path).splitlines()
    assert lines[0] == f"{path}:1:1: clusters: required field is missing"
    assert lines[1].startswith(f"{path}:2:3: inputs.jobs: Input should be a valid list")


def test_duplicate_cluster_and_missing_input(tmp_path: Path) -> None:
    text = GOOD.replace('"jobs/**/*.yaml"', '"job/*.yaml"') + "  - name: production\n"
    path = _project(tmp_path, text)
    assert _error(path).splitlines() == [
        f"{path}:3:10: inputs.jobs[0]: 'job/*.yaml' matches no file "
        f"(looked in {tmp_path / 'job/*.yaml'})",
        f"{path}:10:5: clusters[1].name: duplicate cluster 'production': also defined "
        f"at {path}:5:5",
    ]


def test_yaml_syntax_error_has_position(tmp_path: Path) -> None:
    path = _project(tmp_path, "clusters: [\n")
    assert _error(path).startswith(f"{path}:2:1: invalid YAML")


def test_unknown_cluster_points_at_clusters_list(tmp_path: Path) -> None:
    project = load_project(_project(tmp_path))
    with pytest.raises(InputError) as caught:
        project.cluster("prod")
    assert str(caught.value) == (
        f"{tmp_path / 'trainc.yaml'}:4:1: clusters: unknown cluster 'prod' "
        "(the project defines: production)"
    )


def test_policy_folders_skip_tests(tmp_path: Path) -> None:
    policy = tmp_path / "policies" / "p"
    (policy / "tests").mkdir(parents=True)
    (policy / "policy.yaml").write_text("a: 1\n")
    (policy / "check.cue").write_text("x: 1\n")
    (policy / "tests" / "case.yaml").write_text("a: 1\n")
    text = GOOD.replace("inputs:\n", "inputs:\n  policies: [policies]\n")
    project = load_project(_project(tmp_path, text))
    files = [str(Path(p).relative_to(tmp_path)) for p in project.policy_files(project.clusters[0])]
    assert files == ["policies/p/check.cue", "policies/p/policy.yaml"]


def test_find_project_walks_up_to_repo_root(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    assert find_project(deep) is None
    (tmp_path / "trainc.yaml").write_text(GOOD)
    assert find_project(deep) == tmp_path / "trainc.yaml"
    (tmp_path / "a" / "trainc.yaml").write_text(GOOD)
    assert find_project(deep) == tmp_path / "a" / "trainc.yaml"


def test_find_project_stops_at_repo_root(tmp_path: Path) -> None:
    (tmp_path / "trainc.yaml").write_text(GOOD)
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    assert find_project(repo) is None


def test_cluster_delivery_mode(tmp_path: Path) -> None:
    path = _project(tmp_path, GOOD + "    delivery: trainjobs\n")
    assert load_project(path).clusters[0].delivery == "trainjobs"
    path.write_text(GOOD + "    delivery: kustomize\n")
    assert "delivery" in _error(path)


def test_cluster_extensions(tmp_path: Path) -> None:
    path = _project(tmp_path, GOOD + "    extensions: [intel-mpi, yunikorn]\n")
    assert load_project(path).clusters[0].extensions == ["intel-mpi", "yunikorn"]
    path.write_text(GOOD)
    assert load_project(path).clusters[0].extensions == []
    path.write_text(GOOD + "    extensions: [horovod]\n")
    assert _error(path).endswith(
        "trainc.yaml:10:18: clusters[0].extensions[0]: Input should be 'intel-mpi', 'mpich', "
        "'tensorflow', 'paddlepaddle', 'elastic-torch' or 'yunikorn'"
    )
    path.write_text(GOOD + "    extensions: [mpich, mpich]\n")
    assert "an extension is listed twice" in _error(path)
