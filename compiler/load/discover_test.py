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
