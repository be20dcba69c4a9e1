"""The blob stores: files named by their digest, and packs for a run's own blobs."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from compiler.emit.blobs import PackStore, blob_store
from compiler.emit.output import MissingBlob


def test_a_pack_store_reads_what_it_and_a_forked_worker_put(tmp_path: Path) -> None:
    store = PackStore(tmp_path)
    first = store.put(b"kind: A\n")
    assert store.put(b"kind: A\n") == first  # once
    store.flush()
    pid = os.fork()
    if pid == 0:  # a worker: its blobs in a pack of its own, readable once flushed
        try:
            store.put(b"kind: B\n")
            store.flush()
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    assert store.read(first) == b"kind: A\n"
    worker = hashlib.sha256(b"kind: B\n").hexdigest()
    assert store.has(worker) and store.read(worker) == b"kind: B\n"
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_file()) == sorted(
        f"{p}.{kind}" for p in (os.getpid(), pid) for kind in ("pack", "index")
    )
    store.close()


def test_a_pack_removed_is_a_missing_blob(tmp_path: Path) -> None:
    store = PackStore(tmp_path)
    digest = store.put(b"kind: A\n")
    store.flush()
    for pack in tmp_path.glob("*.pack"):
        pack.unlink()
    with pytest.raises(MissingBlob):
        store.read(digest)
    with pytest.raises(MissingBlob):
        store.read("0" * 64)
    store.close()


def test_a_temporary_packed_store_is_removed_after_use() -> None:
    with blob_store(None, None, packed=True) as store:
        assert isinstance(store, PackStore)
        store.read(store.put(b"x"))
        root = store.root
    assert not root.exists()
