"""Which files a set of paths names, and in which order."""

from __future__ import annotations

from pathlib import Path

from compiler.load.discover import discover, discover_collect

FIXTURES = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "load"


def names(paths: list[str]) -> list[str]:
    return [
        s.display if s.path is None else s.path.relative_to(FIXTURES).as_posix()
        for s in discover(paths)
    ]


def test_directories_are_searched_recursively_in_sorted_order() -> None:
    assert names([str(FIXTURES / "tree")]) == [
        "tree/a-runtime.yaml",
        "tree/b/job.yml",
        "tree/nested/policy.yaml",
    ]


def test_hidden_files_and_directories_and_other_extensions_are_skipped() -> None:
    found = names([str(FIXTURES)])
    assert not any("/." in name or name.startswith(".") for name in found)
    assert not any(name.endswith(".md") for name in found)


def test_explicit_files_keep_their_order_and_are_read_once() -> None:
    job = str(FIXTURES / "bad-job.yaml")
    runtime = str(FIXTURES / "bad-runtime.yaml")
    assert names([runtime, job, runtime, str(FIXTURES)])[:2] == ["bad-runtime.yaml", "bad-job.yaml"]
    assert names([runtime, job, runtime, str(FIXTURES)]).count("bad-job.yaml") == 1


def test_an_explicit_file_is_taken_whatever_its_extension(tmp_path: Path) -> None:
    manifest = tmp_path / "job.txt"
    manifest.write_text("a: 1\n")
    assert [s.path for s in discover([str(manifest)])] == [manifest]


def test_stdin_and_missing_paths() -> None:
    sources, problems = discover_collect(["-", "-", str(FIXTURES / "nope")])
    assert [s.display for s in sources] == ["<stdin>"]
    assert sources[0].is_stdin
    assert [str(p) for p in problems] == [f"{FIXTURES / 'nope'}: no such file or directory"]


def test_segment_order_not_string_order(tmp_path: Path) -> None:
    for name in ("a.yaml", "a/b.yaml", "a-b.yaml", "b.yaml"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x: 1\n")
    found = [s.path.relative_to(tmp_path).as_posix() for s in discover([str(tmp_path)]) if s.path]
    assert found == ["a/b.yaml", "a-b.yaml", "a.yaml", "b.yaml"]


def test_folders_trainc_rendered_are_not_inputs(tmp_path: Path) -> None:
    from compiler.emit.output import MARKER
    from compiler.load.discover import OUTPUT_MARKER, discover

    assert OUTPUT_MARKER == MARKER
    (tmp_path / "jobs").mkdir()
    (tmp_path / "jobs" / "a.yaml").write_text("kind: X\n")
    (tmp_path / "rendered" / "prod").mkdir(parents=True)
    (tmp_path / "rendered" / MARKER).write_text("")
    (tmp_path / "rendered" / "prod" / "b.yaml").write_text("kind: Y\n")
    assert [s.display for s in discover([str(tmp_path)])] == [str(tmp_path / "jobs" / "a.yaml")]


def test_links_in_a_given_folder_stay_in_its_repository(tmp_path: Path) -> None:
    """A folder given on the command line is the user's; the links met while walking it
    may not lead outside its repository (Git root, or the folder itself outside any)."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "jobs").mkdir()
    (repo / "jobs" / "a.yaml").write_text("a: 1\n")
    (repo / "shared").mkdir()
    (repo / "shared" / "s.yaml").write_text("s: 1\n")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.yaml").write_text("token: s3cr3t\n")
    (repo / "jobs" / "inside.yaml").symlink_to("../shared/s.yaml")  # same repository: read
    (repo / "jobs" / "evil.yaml").symlink_to(tmp_path / "outside" / "secret.yaml")
    (repo / "jobs" / "ext").symlink_to(tmp_path / "outside")
    (repo / "jobs" / "gone.yaml").symlink_to(tmp_path / "outside" / "absent.yaml")
    sources, problems = discover_collect([str(repo / "jobs")])
    assert [s.display for s in sources] == [
        str(repo / "jobs" / n) for n in ("a.yaml", "inside.yaml")
    ]
    assert [str(p) for p in problems] == [
        f"{repo / 'jobs' / name}: symbolic link leads outside the repository {repo}; not followed"
        for name in ("evil.yaml", "ext", "gone.yaml")
    ]
    # a file given is taken as given, a link too: the user chose it
    sources, problems = discover_collect([str(repo / "jobs" / "evil.yaml")])
    assert [s.display for s in sources] == [str(repo / "jobs" / "evil.yaml")] and not problems


def test_a_folder_outside_any_repository_is_its_own_root(tmp_path: Path) -> None:
    (tmp_path / "jobs").mkdir()
    (tmp_path / "jobs" / "up.yaml").symlink_to("../other.yaml")
    (tmp_path / "other.yaml").write_text("a: 1\n")
    sources, problems = discover_collect([str(tmp_path / "jobs")])
    assert not sources
    assert [str(p) for p in problems] == [
        f"{tmp_path / 'jobs' / 'up.yaml'}: symbolic link leads outside the repository "
        f"{tmp_path / 'jobs'}; not followed"
    ]
