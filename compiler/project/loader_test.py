"""trainc.yaml: validation errors at their exact file:line:col, glob expansion, discovery."""

from __future__ import annotations

import os
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


# --- confinement: nothing outside the repository (compiler.load.confine) ----------------

SECRET = "s3cr3t-token-value"
CONFINED = """\
inputs:
  jobs: [{entry}]
clusters:
  - name: production
"""


def _repo(tmp_path: Path) -> tuple[Path, Path]:
    """A repository (``repo/``, with ``.git``) and, beside it, a folder it must not reach
    holding a planted TrainJob with a secret value."""
    repo, outside = tmp_path / "repo", tmp_path / "outside"
    (repo / ".git").mkdir(parents=True)
    (repo / "jobs").mkdir()
    (repo / "jobs" / "a.yaml").write_text("a: 1\n")
    outside.mkdir()
    (outside / "secret.yaml").write_text(f"kind: TrainJob\nvalue: {SECRET}\n")
    (outside / "patch.yaml").write_text(f"metadata: {{labels: {{x: {SECRET}}}}}\n")
    return repo, outside


def _confined_error(repo: Path, entry: str, text: str = CONFINED) -> str:
    path = repo / "trainc.yaml"
    path.write_text(text.format(entry=entry))
    message = _error(path)
    assert SECRET not in message
    return message


@pytest.mark.parametrize(
    "entry",
    ["../outside/secret.yaml", "../outside/", "../outside/*.yaml", "../**", "'/tmp/**'"],
)
def test_relative_and_glob_escapes_are_errors_at_the_entry(tmp_path: Path, entry: str) -> None:
    repo, _ = _repo(tmp_path)
    shown = entry.strip("'")
    assert _confined_error(repo, entry) == (
        f"{repo / 'trainc.yaml'}:2:10: inputs.jobs[0]: {shown!r} is outside the repository {repo}"
    )


def test_absolute_path_and_absolute_glob_escapes(tmp_path: Path) -> None:
    repo, outside = _repo(tmp_path)
    for entry in (outside / "secret.yaml", outside / "**", outside):
        assert _confined_error(repo, str(entry)).endswith(
            f"inputs.jobs[0]: {str(entry)!r} is outside the repository {repo}"
        )
    # an absolute path inside the repository is fine
    (repo / "trainc.yaml").write_text(CONFINED.format(entry=repo / "jobs"))
    assert load_project(repo / "trainc.yaml").input_files() == [str(repo / "jobs" / "a.yaml")]


def test_symlinked_file_is_an_error_named_after_the_link(tmp_path: Path) -> None:
    repo, outside = _repo(tmp_path)
    (repo / "jobs" / "evil.yaml").symlink_to(outside / "secret.yaml")
    where = f"{repo / 'trainc.yaml'}:2:10: inputs.jobs[0]: "
    assert _confined_error(repo, "jobs/evil.yaml") == (
        f"{where}'jobs/evil.yaml' leads outside the repository {repo} "
        "(symbolic link jobs/evil.yaml)"
    )
    link = repo / "jobs" / "evil.yaml"
    for entry in ("jobs/", "jobs/*.yaml", "'jobs/**'"):
        assert _confined_error(repo, entry) == (
            f"{where}{link} is a symbolic link that leads outside the repository {repo}; "
            "not followed"
        )


def test_symlinked_folder_is_an_error_named_after_the_link(tmp_path: Path) -> None:
    repo, _ = _repo(tmp_path)
    (repo / "jobs" / "ext").symlink_to("../../outside")
    where = f"{repo / 'trainc.yaml'}:2:10: inputs.jobs[0]: "
    assert _confined_error(repo, "jobs/ext") == (
        f"{where}'jobs/ext' leads outside the repository {repo} (symbolic link jobs/ext)"
    )
    assert _confined_error(repo, "jobs/ext/secret.yaml").startswith(f"{where}'jobs/ext/secret")
    for entry in ("jobs/", "'jobs/**/*.yaml'", "jobs/*/secret.yaml"):
        assert _confined_error(repo, entry) == (
            f"{where}{repo / 'jobs' / 'ext'} is a symbolic link that leads outside the "
            f"repository {repo}; not followed"
        )


def test_symlinked_project_file_is_refused_before_it_is_read(tmp_path: Path) -> None:
    repo, outside = _repo(tmp_path)
    (outside / "trainc.yaml").write_text(CONFINED.format(entry=f"{outside}/secret.yaml"))
    (repo / "trainc.yaml").symlink_to(outside / "trainc.yaml")
    with pytest.raises(InputError) as caught:
        load_project(repo / "trainc.yaml")
    assert str(caught.value) == (
        f"{repo / 'trainc.yaml'}: the project file leads outside the repository {repo} "
        "(symbolic link trainc.yaml)"
    )


def test_output_folder_must_stay_inside(tmp_path: Path) -> None:
    repo, outside = _repo(tmp_path)
    text = CONFINED.replace("clusters:", "output: {output}\nclusters:").replace("{entry}", "jobs/")
    path = repo / "trainc.yaml"
    for output in ("../outside/rendered", str(outside / "rendered")):
        path.write_text(text.format(output=output))
        assert _error(path) == (
            f"{path}:3:1: output: output {output!r} is outside the repository {repo}"
        )
    (repo / "rendered").symlink_to(outside)
    path.write_text(text.format(output="rendered"))
    assert _error(path) == (
        f"{path}:3:1: output: output 'rendered' leads outside the repository {repo} "
        "(symbolic link rendered)"
    )
    (repo / "rendered").unlink()
    (repo / "rendered").mkdir()
    (repo / "rendered" / "production").symlink_to(outside)
    assert _error(path).startswith(f"{path}:5:5: clusters[0].name: output 'rendered/production'")


def test_outside_paths_that_exist_and_do_not_give_the_same_error(tmp_path: Path) -> None:
    repo, outside = _repo(tmp_path)
    present = _confined_error(repo, "../outside/secret.yaml")
    absent = _confined_error(repo, "../outside/absent.yaml")
    assert present.replace("secret.yaml", "absent.yaml") == absent
    assert "does not exist" not in present
    (repo / "jobs" / "evil.yaml").symlink_to(outside / "secret.yaml")
    present = _confined_error(repo, "jobs/")
    (repo / "jobs" / "evil.yaml").unlink()
    (repo / "jobs" / "evil.yaml").symlink_to(outside / "absent.yaml")
    assert _confined_error(repo, "jobs/") == present
    # a glob through a linked folder: whatever is (or is not) behind it
    (repo / "jobs" / "ext").symlink_to(outside)
    with_file = _confined_error(repo, "jobs/*/secret.yaml")
    (outside / "secret.yaml").unlink()
    assert _confined_error(repo, "jobs/*/secret.yaml") == with_file


def test_monorepo_paths_and_links_inside_the_repository_keep_working(tmp_path: Path) -> None:
    repo, _ = _repo(tmp_path)
    (repo / "shared" / "jobs").mkdir(parents=True)
    (repo / "shared" / "jobs" / "s.yaml").write_text("s: 1\n")
    app = repo / "apps" / "ml"
    (app / "jobs").mkdir(parents=True)
    (app / "jobs" / "own.yaml").write_text("o: 1\n")
    (app / "jobs" / "linked.yaml").symlink_to("../../../shared/jobs/s.yaml")
    (app / "more").symlink_to("../../shared/jobs")
    (app / "trainc.yaml").write_text(
        "inputs:\n  jobs: [../../shared/jobs/, jobs/, 'more/*.yaml']\nclusters:\n  - name: p\n"
    )
    files = load_project(app / "trainc.yaml").input_files()
    assert [str(Path(p).relative_to(repo)) for p in files] == [
        "shared/jobs/s.yaml",
        "apps/ml/jobs/own.yaml",
    ]  # the link and the glob reach s.yaml again: read once


def test_special_files_matched_by_a_glob_are_errors(tmp_path: Path) -> None:
    repo, _ = _repo(tmp_path)
    os.mkfifo(repo / "jobs" / "pipe.yaml")
    where = f"{repo / 'trainc.yaml'}:2:10: inputs.jobs[0]: "
    assert _confined_error(repo, "jobs/*.yaml") == (
        f"{where}{repo / 'jobs' / 'pipe.yaml'} is not a regular file or directory"
    )
    (repo / "jobs" / "pipe.yaml").unlink()
    (repo / "jobs" / "zero.yaml").symlink_to("/dev/zero")
    assert _confined_error(repo, "jobs/*.yaml") == (
        f"{where}{repo / 'jobs' / 'zero.yaml'} is a symbolic link that leads outside the "
        f"repository {repo}; not followed"
    )


def test_without_git_the_root_is_the_project_folder(tmp_path: Path) -> None:
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "s.yaml").write_text("s: 1\n")
    (tmp_path / "app").mkdir()
    path = tmp_path / "app" / "trainc.yaml"
    path.write_text(CONFINED.format(entry="../shared/s.yaml"))
    assert _error(path).endswith(f"is outside the repository {tmp_path / 'app'}")
    load_project(path, root=tmp_path)  # a root given (argocd's checkout) holds it


def test_find_project_stops_at_the_given_root(tmp_path: Path) -> None:
    (tmp_path / "trainc.yaml").write_text(GOOD)  # planted above the checkout
    checkout = tmp_path / "checkout"
    (checkout / "app").mkdir(parents=True)
    assert find_project(checkout / "app") == tmp_path / "trainc.yaml"  # no .git: walks up
    assert find_project(checkout / "app", stop=checkout) is None


def test_cue_policy_files_outside_are_errors(tmp_path: Path) -> None:
    repo, outside = _repo(tmp_path)
    (outside / "p.cue").write_text(f'package p\n\nTrainJob: metadata: name: "{SECRET}"\n')
    (repo / "policies").mkdir()
    (repo / "policies" / "p.cue").symlink_to(outside / "p.cue")
    text = "inputs:\n  policies: [{entry}]\nclusters:\n  - name: production\n"
    where = f"{repo / 'trainc.yaml'}:2:14: inputs.policies[0]: "
    assert _confined_error(repo, "../outside/p.cue", text) == (
        f"{where}'../outside/p.cue' is outside the repository {repo}"
    )
    assert _confined_error(repo, "policies/", text) == (
        f"{where}{repo / 'policies' / 'p.cue'} is a symbolic link that leads outside the "
        f"repository {repo}; not followed"
    )


def test_a_glob_whose_wildcards_normalize_away_is_a_plain_path(tmp_path: Path) -> None:
    repo, _ = _repo(tmp_path)
    (repo / "trainc.yaml").write_text(CONFINED.format(entry="'jobs*/../jobs/a.yaml'"))
    assert load_project(repo / "trainc.yaml").input_files() == [str(repo / "jobs" / "a.yaml")]
    assert _confined_error(repo, "'jobs*/../../outside/secret.yaml'").endswith(
        f"'jobs*/../../outside/secret.yaml' is outside the repository {repo}"
    )


def test_cluster_applyset_defaults_and_values(tmp_path: Path) -> None:
    text = GOOD.replace(
        "  - name: production\n",
        "  - name: production\n    defaultNamespace: ml\n    applyset: {}\n"
        "  - name: staging\n    applyset: {name: team-a.set, namespace: ops, prune: true}\n"
        "  - name: dev\n",
    )
    production, staging, dev = load_project(_project(tmp_path, text)).clusters
    resolved = production.resolved_applyset()
    assert resolved is not None
    assert (resolved.name, resolved.namespace, resolved.prune) == ("trainc-production", "ml", False)
    resolved = staging.resolved_applyset()
    assert resolved is not None
    assert (resolved.name, resolved.namespace, resolved.prune) == ("team-a.set", "ops", True)
    assert dev.applyset is None and dev.resolved_applyset() is None


@pytest.mark.parametrize(
    ("setting", "where", "message"),
    [
        (
            "{name: Team_A}",
            "6:16: clusters[0].applyset.name",
            "'Team_A' is not a valid Secret name (the ApplySet parent's; lowercase RFC 1123 "
            "subdomain: letters, digits, '-' and '.', at most 253 characters)",
        ),
        (
            "{namespace: Ops}",
            "6:16: clusters[0].applyset.namespace",
            "'Ops' is not a valid namespace name (lowercase RFC 1123 label)",
        ),
        ("{prune: 'yes'}", "6:16: clusters[0].applyset.prune", "Input should be a valid boolean"),
        ("{prnue: true}", "6:16: clusters[0].applyset.prnue", "unknown field"),
        ("team-a", "6:5: clusters[0].applyset", "Input should be a valid dictionary"),
    ],
)
def test_cluster_applyset_bad_values_are_located(
    tmp_path: Path, setting: str, where: str, message: str
) -> None:
    text = GOOD.replace("    schedulers:", f"    applyset: {setting}\n    schedulers:")
    path = _project(tmp_path, text)
    error = _error(path)
    assert error.startswith(f"{path}:{where}: {message}"), error


def test_cluster_applyset_default_name_must_be_a_secret_name(tmp_path: Path) -> None:
    text = GOOD.replace("- name: production", "- name: Prod_1").replace(
        "    schedulers:", "    applyset: {prune: true}\n    schedulers:"
    )
    path = _project(tmp_path, text)
    assert _error(path) == (
        f"{path}:6:5: clusters[0].applyset: the ApplySet's default name 'trainc-Prod_1' "
        "(trainc-<cluster>) is not a valid Secret name: give applyset.name"
    )
