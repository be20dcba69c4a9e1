from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from compiler.emit.output import MARKER, MissingBlob
from compiler.emit.tree import IN_PLACE_SHARE, write_project_files, write_tree


class Blobs:
    """A tiny blob store: files named by the SHA-256 of what they hold."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir()

    def __call__(self, text: str) -> str:
        data = text.encode()
        path = self.root / hashlib.sha256(data).hexdigest()
        if not path.exists():
            path.write_bytes(data)
        return str(path)


def _tree(directory: Path) -> dict[str, str]:
    return {
        str(p.relative_to(directory)): p.read_text()
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


def _inodes(directory: Path) -> dict[str, int]:
    return {str(p.relative_to(directory)): p.stat().st_ino for p in directory.rglob("*")}


def _contents(blobs: Blobs, count: int, **changed: str) -> dict[str, str | bytes]:
    contents: dict[str, str | bytes] = {
        f"ns{i % 3}/obj-{i}.yaml": blobs(changed.get(f"obj_{i}", f"object {i}\n"))
        for i in range(count)
    }
    contents["requirements.yaml"] = b"entries: []\n"
    return contents


def test_a_few_changes_are_made_in_place_and_the_rest_is_kept(tmp_path: Path) -> None:
    blobs, records, out, fresh = (
        Blobs(tmp_path / "b"),
        tmp_path / "r",
        tmp_path / "out",
        tmp_path / "fresh",
    )
    assert write_tree(out, _contents(blobs, 40), records) is False  # no record yet: whole
    before = _inodes(out)
    changed = _contents(blobs, 40, obj_7="object 7, changed\n")
    del changed["ns2/obj-5.yaml"]
    changed["ns9/obj-new.yaml"] = blobs("a new object\n")

    assert write_tree(out, changed, records) is True
    write_tree(fresh, changed, None)
    assert _tree(out) == _tree(fresh)  # as a whole render writes it
    after = _inodes(out)
    kept = set(before) - {"ns1/obj-7.yaml", "ns2/obj-5.yaml"}
    assert {p: after[p] for p in kept} == {p: before[p] for p in kept}  # not rewritten
    assert after["ns1/obj-7.yaml"] != before["ns1/obj-7.yaml"]
    assert not [p for p in after if ".trainc-new" in p]


def test_a_folder_left_empty_is_removed(tmp_path: Path) -> None:
    blobs, records, out = Blobs(tmp_path / "b"), tmp_path / "r", tmp_path / "out"
    contents = _contents(blobs, 40)
    contents["lonely/only.yaml"] = blobs("only\n")
    write_tree(out, contents, records)
    del contents["lonely/only.yaml"]
    assert write_tree(out, contents, records) is True
    assert not (out / "lonely").exists()


def test_a_tree_changed_by_someone_else_is_replaced_whole(tmp_path: Path) -> None:
    blobs, records, out = Blobs(tmp_path / "b"), tmp_path / "r", tmp_path / "out"
    write_tree(out, _contents(blobs, 40), records)
    (out / "ns0" / "stray.yaml").write_text("mine\n")  # a file trainc did not write
    (out / "ns1" / "obj-1.yaml").unlink()
    (out / "ns1" / "obj-1.yaml").write_text("edited\n")  # replaced: another inode

    assert write_tree(out, _contents(blobs, 40), records) is False
    assert not (out / "ns0" / "stray.yaml").exists()
    assert (out / "ns1" / "obj-1.yaml").read_text() == "object 1\n"
    assert write_tree(out, _contents(blobs, 40, obj_2="x\n"), records) is True  # recorded again


def test_many_changes_replace_the_tree_whole(tmp_path: Path) -> None:
    blobs, records, out = Blobs(tmp_path / "b"), tmp_path / "r", tmp_path / "out"
    write_tree(out, _contents(blobs, 40), records)
    many = {f"obj_{i}": f"v2 {i}\n" for i in range(41 // IN_PLACE_SHARE + 1)}
    assert write_tree(out, _contents(blobs, 40, **many), records) is False
    assert (out / "ns0" / "obj-0.yaml").read_text() == "v2 0\n"


def test_an_error_while_preparing_leaves_the_tree_and_its_record(tmp_path: Path) -> None:
    blobs, records, out = Blobs(tmp_path / "b"), tmp_path / "r", tmp_path / "out"
    write_tree(out, _contents(blobs, 40), records)
    before = _tree(out), _inodes(out)
    broken = _contents(blobs, 40, obj_3="three\n")
    broken["new-folder/obj.yaml"] = str(tmp_path / "b" / "pruned")  # a blob that is gone
    with pytest.raises(MissingBlob):
        write_tree(out, broken, records)
    assert (_tree(out), _inodes(out)) == before  # nothing new left behind, nothing replaced
    assert write_tree(out, _contents(blobs, 40, obj_3="three\n"), records) is True


def test_a_run_stopped_between_the_two_steps_makes_the_next_one_replace_whole(
    tmp_path: Path,
) -> None:
    blobs, records, out = Blobs(tmp_path / "b"), tmp_path / "r", tmp_path / "out"
    write_tree(out, _contents(blobs, 40), records)
    [record] = records.glob("*.pickle")
    record.unlink()  # what step 2 does first: a run killed there leaves no record
    assert write_tree(out, _contents(blobs, 40, obj_1="one\n"), records) is False
    assert (out / "ns1" / "obj-1.yaml").read_text() == "one\n"


def test_without_records_the_tree_is_replaced_whole(tmp_path: Path) -> None:
    blobs, out = Blobs(tmp_path / "b"), tmp_path / "out"
    write_tree(out, _contents(blobs, 40), None)
    assert write_tree(out, _contents(blobs, 40, obj_1="one\n"), None) is False
    assert (out / MARKER).is_file()


def test_a_project_tree_is_updated_in_place_like_a_whole_write(tmp_path: Path) -> None:
    blobs, records = Blobs(tmp_path / "b"), tmp_path / "r"
    out, fresh = tmp_path / "out", tmp_path / "fresh"

    def clusters(
        change: str,
    ) -> dict[str, tuple[list[tuple[str, str]], str | None, dict[str, bytes]]]:
        files = [(f"ns/obj-{i}.yaml", blobs(f"{i}{change if i == 4 else ''}\n")) for i in range(20)]
        return {
            "east": (files, None, {"kustomization.yaml": b"resources: []\n"}),
            "west": (files[:10], "entries: []\n", {}),
        }

    write_project_files(clusters(""), out, whole=True, records=records)
    inode = (out / "east" / "ns" / "obj-1.yaml").stat().st_ino
    write_project_files(clusters("!"), out, whole=True, records=records)
    write_project_files(clusters("!"), fresh, whole=True)
    assert _tree(out) == _tree(fresh)
    assert (out / "east" / MARKER).is_file() and (out / MARKER).is_file()
    assert (out / "east" / "ns" / "obj-1.yaml").stat().st_ino == inode  # kept: in place
    assert os.listdir(tmp_path).count("out") == 1
