from __future__ import annotations

from pathlib import Path

import pytest

from compiler.cli import main
from compiler.deliver import git_revision
from compiler.deliver.conftest import run_git
from compiler.deliver.diff import format_path
from compiler.deliver.diff_format import render_markdown, render_text
from compiler.deliver.git_revision import diff_against

RESNET = "inputs/jobs/resnet.yaml"
RUNTIME = "inputs/runtimes/torch-gang.yaml"


def _edit(repo: Path, path: str, old: str, new: str) -> None:
    file = repo / path
    text = file.read_text()
    assert old in text
    file.write_text(text.replace(old, new))


def _snapshot(repo: Path) -> tuple[str, str, bytes, str]:
    return (
        run_git(repo, "status", "--porcelain"),
        run_git(repo, "diff"),
        (repo / ".git" / "index").read_bytes(),
        run_git(repo, "rev-parse", "HEAD"),
    )


def test_runtime_patch_change_shows_the_field_for_that_trainjob_only(example_repo: Path) -> None:
    _edit(example_repo, RESNET, "accelerator: a100", "accelerator: h100")
    diff = diff_against("HEAD", ["inputs"], cwd=example_repo)
    assert [(t.namespace, t.name) for t in diff.trainjobs] == [("vision", "resnet")]
    [jobset] = diff.trainjobs[0].objects
    assert (jobset.kind, jobset.status) == ("JobSet", "changed")
    [change] = jobset.fields
    assert format_path(change.path) == (
        "spec.replicatedJobs[name=node].template.spec.template.spec.nodeSelector"
        "['pool.example.com/accelerator']"
    )
    assert (change.old, change.new, change.replicated_job) == ("a100", "h100", "node")
    assert diff.impact is not None
    assert [(i.path, i.trainjobs) for i in diff.impact] == [(RESNET, [("", "vision", "resnet")])]


def test_runtime_image_change_lists_every_trainjob_using_it(example_repo: Path) -> None:
    before = _snapshot(example_repo)
    _edit(example_repo, RUNTIME, "pytorch:2.7.1", "pytorch:2.8.0")
    edited = _snapshot(example_repo)
    diff = diff_against("main", ["inputs"], cwd=example_repo)
    assert [t.name for t in diff.trainjobs] == ["resnet", "smoke"]
    for job in diff.trainjobs:
        [change] = [f for o in job.objects for f in o.fields]
        assert change.container == "node" and change.path[-1] == "image"
        assert change.new == "pytorch/pytorch:2.8.0-cuda12.8-cudnn9-runtime"
    assert diff.impact is not None
    [impact] = diff.impact
    assert impact.path == RUNTIME and impact.status == "modified"
    assert impact.trainjobs == [("", "vision", "resnet"), ("", "vision", "smoke")]
    text = render_text(diff)
    assert "container node  [template.spec.template.spec.containers[name=node]]" in text
    assert f"{RUNTIME} (modified): vision/resnet, vision/smoke" in text
    markdown = render_markdown(diff)
    assert "| `vision/resnet` | changed | JobSet ~ | 1 |" in markdown
    assert "| `vision/smoke` | changed | JobSet ~ | 1 |" in markdown
    assert f"| `{RUNTIME}` | modified | `vision/resnet`, `vision/smoke` |" in markdown
    assert markdown.count("<details>") == 2
    # nothing of the user's touched: tree, index, HEAD; no worktree left registered
    assert _snapshot(example_repo) == edited and edited[3] == before[3]
    assert len(run_git(example_repo, "worktree", "list").splitlines()) == 1


def test_worktree_removed_when_rendering_fails(
    example_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[Path] = []

    def boom(root: Path, target: git_revision.Target, *rest: object) -> dict[str, list[object]]:
        if root != example_repo.resolve():
            seen.append(root)
            raise RuntimeError("render failed")
        return {"": []}

    monkeypatch.setattr(git_revision, "render_target", boom)
    with pytest.raises(RuntimeError):
        diff_against("HEAD", ["inputs"], cwd=example_repo)
    assert seen and not seen[0].exists() and not seen[0].parent.exists()
    assert len(run_git(example_repo, "worktree", "list").splitlines()) == 1


def test_paths_new_since_the_base_render_as_added(example_repo: Path) -> None:
    run_git(example_repo, "mv", "inputs", "moved")
    run_git(example_repo, "commit", "-q", "-m", "move")
    first = run_git(example_repo, "rev-list", "--max-parents=0", "HEAD").strip()
    # the base lacks moved/: every TrainJob is new; a new input file counts as added
    diff = diff_against(first, ["moved"], cwd=example_repo)
    assert [(t.name, t.status) for t in diff.trainjobs] == [("resnet", "added"), ("smoke", "added")]
    assert diff.impact is not None
    assert {i.status for i in diff.impact} == {"added"}


def test_cli_exit_codes_and_output_file(
    example_repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(example_repo)
    assert main(["diff", "--base", "HEAD", "inputs", "--exit-code"]) == 0
    assert "no rendered output changes" in capsys.readouterr().out
    _edit(example_repo, RESNET, "numNodes: 4", "numNodes: 3")
    assert main(["diff", "--base", "HEAD", "inputs"]) == 0
    out_text = capsys.readouterr().out
    assert "~ template.spec.parallelism: 4 -> 3" in out_text
    assert '~ env[name=PET_NNODES].value: "4" -> "3"' in out_text
    out = example_repo / "comment.md"
    code = main(
        [
            "diff",
            "--base",
            "HEAD",
            "inputs",
            "--exit-code",
            "--format",
            "markdown",
            "--output",
            str(out),
        ]
    )
    assert code == 1
    assert "| `vision/resnet` | changed |" in out.read_text()
    assert main(["diff", "--base", "no-such-rev", "inputs"]) == 2


def test_project_mode_base_without_project_file(example_repo: Path) -> None:
    (example_repo / "trainc.yaml").write_text(
        "inputs:\n  runtimes: [inputs/runtimes/]\n  jobs: [inputs/jobs/]\n"
        "clusters:\n  - name: east\n    schedulers: [coscheduling]\n"
        "  - name: west\n    schedulers: [coscheduling]\n"
    )
    diff = diff_against("HEAD", [], cwd=example_repo / "inputs")
    assert [(t.cluster, t.name, t.status) for t in diff.trainjobs] == [
        ("east", "resnet", "added"),
        ("east", "smoke", "added"),
        ("west", "resnet", "added"),
        ("west", "smoke", "added"),
    ]
    run_git(example_repo, "add", "trainc.yaml")
    run_git(example_repo, "commit", "-q", "-m", "project")
    _edit(example_repo, RUNTIME, "scheduleTimeoutSeconds: 120", "scheduleTimeoutSeconds: 60")
    diff = diff_against("HEAD", [], cwd=example_repo, clusters=["west"])
    assert [(t.cluster, t.name) for t in diff.trainjobs] == [("west", "resnet"), ("west", "smoke")]
    assert diff.impact is not None
    assert diff.impact[0].trainjobs == [("west", "vision", "resnet"), ("west", "vision", "smoke")]
    markdown = render_markdown(diff)
    assert "| `west` | `vision/resnet` | changed | PodGroup ~ | 1 |" in markdown


def test_diff_by_chunks_says_what_the_whole_way_says(
    example_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rendered by chunks through the render cache (base, head and every impact render),
    the diff and its impact section are those of whole renders."""
    from compiler.plan import chunks as incremental

    jobs = example_repo / "inputs" / "jobs"
    smoke = (jobs / "smoke.yaml").read_text()
    for i in range(6):
        (jobs / f"smoke-{i}.yaml").write_text(smoke.replace("name: smoke", f"name: smoke-{i}"))
    run_git(example_repo, "add", ".")
    run_git(example_repo, "commit", "-q", "-m", "more jobs")
    _edit(example_repo, "inputs/jobs/smoke-2.yaml", "--max-steps=10", "--max-steps=20")
    (jobs / "smoke-4.yaml").unlink()
    (jobs / "smoke-9.yaml").write_text(smoke.replace("name: smoke", "name: smoke-9"))
    _edit(example_repo, RESNET, "accelerator: a100", "accelerator: h100")

    monkeypatch.setattr(incremental, "CHUNK_JOBS", 1)
    monkeypatch.setattr(incremental, "default_jobs", lambda: 2)
    monkeypatch.setenv("TRAINC_RENDER_CACHE", str(tmp_path / "cache"))
    real_run_parts = incremental.run_parts
    by_chunks: list[bool] = []

    def run_parts(*args: object, **kwargs: object) -> object:
        part = real_run_parts(*args, **kwargs)  # type: ignore[arg-type]
        by_chunks.append(part is not None)
        return part

    monkeypatch.setattr(incremental, "run_parts", run_parts)
    chunked = diff_against("HEAD", ["inputs"], cwd=example_repo)
    assert by_chunks and all(by_chunks)  # base, head and each impact render
    monkeypatch.setattr(incremental, "run_parts", lambda *args, **kwargs: None)
    whole = diff_against("HEAD", ["inputs"], cwd=example_repo)

    assert render_text(chunked) == render_text(whole)
    assert render_markdown(chunked) == render_markdown(whole)
    assert chunked.impact == whole.impact
    assert [(t.name, t.status) for t in chunked.trainjobs] == [
        ("resnet", "changed"),
        ("smoke-2", "changed"),
        ("smoke-4", "removed"),
        ("smoke-9", "added"),
    ]


def test_a_full_disk_is_an_error_message_not_a_traceback(
    example_repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import errno

    from compiler.emit import blobs

    def full(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", "/cache/blobs/ab/abc")

    monkeypatch.setattr(blobs.BlobStore, "put", full)
    _edit(example_repo, RESNET, "accelerator: a100", "accelerator: h100")
    monkeypatch.chdir(example_repo)
    assert main(["diff", "--base", "HEAD", "inputs"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("trainc diff: cannot write the base worktree, the render cache")
    assert "(/cache/blobs/ab/abc): No space left on device" in err and "Traceback" not in err
    assert len(run_git(example_repo, "worktree", "list").splitlines()) == 1  # removed


def test_blobs_pruned_while_diffing_are_rendered_again(
    example_repo: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Removing the render cache is safe while a diff reads it: the diff renders again."""
    from compiler.emit import blobs
    from compiler.plan import chunks as incremental

    cache = tmp_path / "cache"
    monkeypatch.setattr(incremental, "render_cache_dir", lambda: cache)
    _edit(example_repo, RESNET, "accelerator: a100", "accelerator: h100")
    monkeypatch.chdir(example_repo)
    assert main(["diff", "--base", "HEAD", "inputs"]) == 0
    expected = capsys.readouterr()
    assert "h100" in expected.out
    real = blobs.BlobStore.read
    pruned: list[str] = []

    def pruned_at_read(self: blobs.BlobStore, digest: str) -> bytes:
        blob = Path(self.path(digest))
        if cache in blob.parents:
            blob.unlink(missing_ok=True)
            pruned.append(digest)
        return real(self, digest)

    monkeypatch.setattr(blobs.BlobStore, "read", pruned_at_read)
    assert main(["diff", "--base", "HEAD", "inputs"]) == 0
    assert capsys.readouterr() == expected
    assert pruned


def _pods(diff: object, status: str) -> list[str]:
    return sorted(
        o.name
        for t in diff.trainjobs  # type: ignore[attr-defined]
        for o in t.objects
        if o.kind == "Pod" and o.status == status
    )


def test_expand_pods_shows_the_pods_a_change_adds_and_the_env_it_changes(
    example_repo: Path,
) -> None:
    _edit(example_repo, RESNET, "numNodes: 4", "numNodes: 8")
    assert _pods(diff_against("HEAD", ["inputs"], cwd=example_repo, impact=False), "added") == []
    diff = diff_against("HEAD", ["inputs"], cwd=example_repo, impact=False, expand="pods")
    added = _pods(diff, "added")
    assert len(added) == 4 and all(name.startswith("resnet-node-0-") for name in added), added
    kinds = {(o.kind, o.status) for t in diff.trainjobs for o in t.objects}
    assert ("Pod", "changed") in kinds  # PET_NNODES in each of the first four
    changed = [
        f
        for t in diff.trainjobs
        for o in t.objects
        if o.kind == "Pod" and o.status == "changed"
        for f in o.fields
    ]
    assert any("PET_NNODES" in format_path(f.path) and f.new == "8" for f in changed), changed


def test_expand_jobs_adds_no_pods(example_repo: Path) -> None:
    _edit(example_repo, RESNET, "numNodes: 4", "numNodes: 8")
    diff = diff_against("HEAD", ["inputs"], cwd=example_repo, impact=False, expand="jobs")
    kinds = {o.kind for t in diff.trainjobs for o in t.objects}
    assert "Job" in kinds and "Pod" not in kinds, kinds


def test_diff_expand_is_for_base_only(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diff", "--live", "--expand", "pods"]) == 2
    assert "--expand applies to --base only" in capsys.readouterr().err
