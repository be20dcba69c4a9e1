"""The one resolver every path a repository names goes through: kernel semantics, and
nothing outside the root looked at."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from compiler.load.confine import Outside, Root, glob, repository_root, walk


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "jobs" / "deep" / "er").mkdir(parents=True)
    (root / "jobs" / "a.yaml").write_text("a: 1\n")
    (root / "shared").mkdir()
    (root / "shared" / "s.yaml").write_text("s: 1\n")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.yaml").write_text("token: s3cr3t\n")
    return root


def _outside(root: Root, path: str, start: str | None = None) -> str:
    with pytest.raises(Outside) as caught:
        root.resolve(path, start=start)
    return str(caught.value)


def test_inside_paths_resolve_to_their_real_place(repo: Path) -> None:
    root = Root.at(repo)
    start = str(repo / "jobs")
    assert root.resolve("a.yaml", start=start) == str(repo / "jobs" / "a.yaml")
    assert root.resolve("../shared/s.yaml", start=start) == str(repo / "shared" / "s.yaml")
    assert root.resolve(str(repo / "jobs" / "a.yaml")) == str(repo / "jobs" / "a.yaml")
    assert root.resolve("missing/x.yaml", start=start) == str(repo / "jobs/missing/x.yaml")
    # up to a folder above the root and back in is the root still
    assert root.resolve(f"../../{repo.name}/jobs", start=start) == str(repo / "jobs")


def test_relative_absolute_and_linked_escapes(repo: Path, tmp_path: Path) -> None:
    root = Root.at(repo)
    start = str(repo)
    assert _outside(root, "../outside/secret.yaml", start) == f"is outside the repository {repo}"
    assert _outside(root, str(tmp_path / "outside" / "secret.yaml"), start) == (
        f"is outside the repository {repo}"
    )
    assert _outside(root, "..", start) == f"is outside the repository {repo}"
    (repo / "jobs" / "evil.yaml").symlink_to(tmp_path / "outside" / "secret.yaml")
    (repo / "jobs" / "ext").symlink_to("../../outside")
    for path in ("jobs/evil.yaml", "jobs/ext/secret.yaml", "jobs/ext"):
        message = _outside(root, path, start)
        assert message.startswith(f"leads outside the repository {repo} (symbolic link jobs/")


def test_dotdot_after_a_link_leaves_the_links_target_as_the_kernel_does(repo: Path) -> None:
    # jobs/deep/er/up -> ../../.. is the repo root; up/.. is then the repo's parent
    (repo / "jobs" / "deep" / "er" / "up").symlink_to("../../..")
    root = Root.at(repo)
    assert root.resolve("jobs/deep/er/up/shared/s.yaml", start=str(repo)) == str(
        repo / "shared" / "s.yaml"
    )
    assert _outside(root, "jobs/deep/er/up/../outside/secret.yaml", str(repo)).startswith(
        "leads outside"
    )
    # lexically that path is inside the repo: only a component-wise walk sees it leave
    assert os.path.normpath(repo / "jobs/deep/er/up/../outside").startswith(str(repo))


def test_link_loops_and_absolute_targets_inside(repo: Path) -> None:
    (repo / "loop").symlink_to("loop")
    (repo / "abs").symlink_to(repo / "shared")
    root = Root.at(repo)
    assert "too many levels of symbolic links" in _outside(root, "loop/x", str(repo))
    assert root.resolve("abs/s.yaml", start=str(repo)) == str(repo / "shared" / "s.yaml")


def test_nothing_outside_the_root_is_looked_at(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (repo / "jobs" / "evil.yaml").symlink_to(tmp_path / "outside" / "secret.yaml")
    (repo / "jobs" / "chain").symlink_to("evil.yaml")
    looked: list[str] = []
    real_lstat = os.lstat

    def lstat(path: str) -> os.stat_result:
        looked.append(str(path))
        return real_lstat(path)

    root = Root.at(repo)
    monkeypatch.setattr(os, "lstat", lstat)
    for path in (
        "jobs/chain",
        "../outside/secret.yaml",
        f"../{repo.name}/../outside/secret.yaml",
        str(tmp_path / "outside" / "secret.yaml"),
    ):
        with pytest.raises(Outside):
            root.resolve(path, start=str(repo))
    assert looked and all(p.startswith(str(repo) + "/") for p in looked)


def test_existing_and_missing_outside_targets_give_one_answer(repo: Path, tmp_path: Path) -> None:
    (repo / "a").symlink_to(tmp_path / "outside" / "secret.yaml")
    (repo / "b").symlink_to(tmp_path / "outside" / "missing.yaml")
    root = Root.at(repo)
    assert _outside(root, "a", str(repo)).replace("link a", "link b") == _outside(
        root, "b", str(repo)
    )
    assert _outside(root, "../outside/secret.yaml", str(repo)) == _outside(
        root, "../outside/missing.yaml", str(repo)
    )


def test_walk_and_glob_report_links_that_leave(repo: Path, tmp_path: Path) -> None:
    (repo / "jobs" / "evil.yaml").symlink_to(tmp_path / "outside" / "secret.yaml")
    (repo / "jobs" / "ext").symlink_to(tmp_path / "outside")
    (repo / "jobs" / "inside.yaml").symlink_to("../shared/s.yaml")
    root = Root.at(repo)
    walked = {f.path: f.problem for f in walk(root, "jobs", str(repo / "jobs"), lambda n, r: True)}
    assert walked == {
        "jobs/a.yaml": None,
        "jobs/evil.yaml": f"leads outside the repository {repo}",
        "jobs/ext": f"leads outside the repository {repo}",
        "jobs/inside.yaml": None,
    }
    cwd = os.getcwd()
    os.chdir(repo)
    try:
        globbed = {f.path: f.problem for f in glob(root, "jobs/**/*.yaml")}
        with pytest.raises(Outside):
            glob(root, "../**")
        with pytest.raises(Outside):
            glob(root, "/tmp/**")
    finally:
        os.chdir(cwd)
    assert globbed["jobs/ext"] == f"leads outside the repository {repo}"
    assert globbed["jobs/evil.yaml"] == f"leads outside the repository {repo}"
    assert globbed["jobs/inside.yaml"] is None and globbed["jobs/a.yaml"] is None


def test_repository_root_and_root_of(tmp_path: Path) -> None:
    (tmp_path / "r" / ".git").mkdir(parents=True)
    (tmp_path / "r" / "a" / "b").mkdir(parents=True)
    (tmp_path / "plain").mkdir()
    assert repository_root(tmp_path / "r" / "a" / "b") == tmp_path / "r"
    assert Root.of(tmp_path / "r" / "a" / "b").path == str(tmp_path / "r")
    assert Root.of(tmp_path / "plain").path == str(tmp_path / "plain")


@pytest.mark.parametrize(
    "pattern",
    [
        "*",
        "**",
        "**/*.yaml",
        "jobs/*",
        "jobs/**",
        "jobs/**/*.yaml",
        "*/deep/*",
        "jobs/deep/**/",
        ".hidden/*",
        "**/.x.yaml",
        "jobs/[ab].yaml",
        "jobs/?.yaml",
        "jobs/*/er",
        "shared/s.yaml*",
        "missing/*",
    ],
)
def test_glob_finds_what_glob_glob_finds_without_links(
    repo: Path, pattern: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import glob as stdlib

    (repo / ".hidden").mkdir()
    (repo / ".hidden" / "h.yaml").write_text("h: 1\n")
    (repo / "jobs" / ".x.yaml").write_text("x: 1\n")
    (repo / "jobs" / "b.yaml").write_text("b: 1\n")
    (repo / "jobs" / "deep" / "er" / "z.yaml").write_text("z: 1\n")
    monkeypatch.chdir(repo)
    ours = {Path(f.path) for f in glob(Root.at(repo), pattern)}
    assert ours == {Path(m) for m in stdlib.glob(pattern, recursive=True)}
