from __future__ import annotations

from pathlib import Path

import pytest

from compiler.deliver.conftest import run_git
from compiler.deliver.staged import staged_differences
from compiler.errors import UsageError


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repo with out/a, out/b, out/c committed, and the current directory in it."""
    root = tmp_path / "repo"
    (root / "out").mkdir(parents=True)
    run_git(root, "init", "-q", "-b", "main")
    for name in "abc":
        (root / "out" / name).write_text(f"{name}\n")
    (root / ".gitignore").write_text("out/*.tmp\n")
    run_git(root, "add", "-A")
    run_git(root, "commit", "-q", "-m", "base")
    monkeypatch.chdir(root)
    return root


def test_new_changed_removed_against_the_index(repo: Path) -> None:
    out = repo / "out"
    (out / "a").write_text("a\n")  # rewritten, same bytes: not a difference
    (out / "b").write_text("B\n")
    (out / "c").unlink()
    (out / "d").write_text("d\n")
    (out / "e.tmp").write_text("ignored\n")
    report = staged_differences(Path("out"))
    assert (report.new, report.changed, report.removed) == (["out/d"], ["out/b"], ["out/c"])
    assert report.exit_code == 1
    text = report.text()
    assert "new (not staged):     out/d" in text
    assert "changed (not staged): out/b" in text
    assert "removed (not staged): out/c" in text
    assert "git add -A -- out" in text

    run_git(repo, "add", "-A", "--", "out")  # what the message says to do
    staged = staged_differences(out)
    assert not staged.differs and staged.exit_code == 0


def test_a_file_staged_then_changed_again_differs(repo: Path) -> None:
    (repo / "out" / "a").write_text("one\n")
    run_git(repo, "add", "out/a")
    (repo / "out" / "a").write_text("two\n")
    assert staged_differences(Path("out")).changed == ["out/a"]


def test_outside_a_git_work_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "out").mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    with pytest.raises(UsageError, match="not in a git work tree"):
        staged_differences(Path("out"))
