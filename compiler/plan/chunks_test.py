"""The stored code fingerprint (:func:`compiler.plan.chunks.stored_fingerprint`)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from compiler.emit.blobs import remember
from compiler.plan import chunks

OLD = time.time_ns() - 3_600 * 10**9  # an hour ago: settled


@pytest.fixture(autouse=True)
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every file counts as settled: a test's files are seconds old (ctime cannot be set)."""
    monkeypatch.setattr(chunks, "_SETTLED_SECONDS", -60.0)


def _package(root: Path) -> Path:
    (root / "pkg" / "sub").mkdir(parents=True)
    (root / "pkg" / "a.py").write_text("A = 1\n")
    (root / "pkg" / "sub" / "b.py").write_text("B = 2\n")
    (root / "pkg" / "a_test.py").write_text("T = 3\n")
    for path in (root / "pkg").rglob("*.py"):
        os.utime(path, ns=(OLD, OLD))
    return root / "pkg"


def _content_hash(package: Path) -> str:
    return chunks.stored_fingerprint(package, "p", None)  # computed, nothing kept


def test_a_settled_fingerprint_is_kept_and_read_back(tmp_path: Path) -> None:
    package, store = _package(tmp_path), tmp_path / "store"
    first = chunks.stored_fingerprint(package, "p", store)
    assert first == _content_hash(package)
    assert len(list(store.iterdir())) == 1
    # read back, not hashed again: a kept value is what the key finds
    [entry] = store.iterdir()
    remember(entry, "kept")
    assert chunks.stored_fingerprint(package, "p", store) == "kept"


def test_an_edit_of_the_same_size_and_mtime_makes_a_new_fingerprint(tmp_path: Path) -> None:
    package, store = _package(tmp_path), tmp_path / "store"
    first = chunks.stored_fingerprint(package, "p", store)
    (package / "sub" / "b.py").write_text("B = 9\n")  # same size
    os.utime(package / "sub" / "b.py", ns=(OLD, OLD))  # mtime set back; ctime is not
    second = chunks.stored_fingerprint(package, "p", store)
    assert second != first
    assert second == _content_hash(package)


def test_a_new_or_removed_file_makes_a_new_fingerprint(tmp_path: Path) -> None:
    package, store = _package(tmp_path), tmp_path / "store"
    first = chunks.stored_fingerprint(package, "p", store)
    (package / "c.py").write_text("")
    added = chunks.stored_fingerprint(package, "p", store)
    (package / "c.py").unlink()
    (package / "sub" / "b.py").unlink()
    removed = chunks.stored_fingerprint(package, "p", store)
    assert len({first, added, removed}) == 3
    assert removed == _content_hash(package)


def test_tests_and_bytecode_are_not_code(tmp_path: Path) -> None:
    package, store = _package(tmp_path), tmp_path / "store"
    first = chunks.stored_fingerprint(package, "p", store)
    (package / "a_test.py").write_text("T = 4\n")
    (package / "__pycache__").mkdir()
    (package / "__pycache__" / "x.py").write_text("")
    assert chunks.stored_fingerprint(package, "p", store) == first


def test_a_fresh_file_is_hashed_but_not_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(chunks, "_SETTLED_SECONDS", 2.0)
    package, store = _package(tmp_path), tmp_path / "store"
    (package / "a.py").write_text("A = 2\n")  # mtime now: within the clock tick's reach
    assert chunks.stored_fingerprint(package, "p", store) == _content_hash(package)
    assert not store.exists() or not list(store.iterdir())


def test_the_prefix_is_part_of_the_fingerprint(tmp_path: Path) -> None:
    package, store = _package(tmp_path), tmp_path / "store"
    assert chunks.stored_fingerprint(package, "p", store) != chunks.stored_fingerprint(
        package, "q", store
    )
