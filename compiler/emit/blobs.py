"""Files written once, atomically: the blob store of rendered objects, cache entries.

:class:`BlobStore` keeps serialised objects in files named by the SHA-256 of their
bytes (the driver's chunks put them there, :mod:`compiler.plan.chunks`; output trees
hard-link them, :mod:`compiler.emit.tree`); :func:`write_pickle` and :func:`remember`
keep a value in a file atomically (a cache entry, a tree's record).
"""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import BinaryIO, TextIO

from compiler.emit.output import MissingBlob, remove_tree

__all__ = ["BlobStore", "PackStore", "blob_store", "remember", "write_pickle"]


def _file_mode() -> int:
    umask = os.umask(0o022)
    os.umask(umask)
    return 0o666 & ~umask


_FILE_MODE = _file_mode()


class BlobStore:
    """Files named by the SHA-256 of their bytes; written once, atomically, never changed
    (output trees hard-link them, so an object file must never be edited in place)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._prefix = f"{root}/"  # (a 10,000-TrainJob tree asks for 16,667 paths)
        self.written = 0  # blobs this process wrote

    def path(self, digest: str) -> str:
        return f"{self._prefix}{digest[:2]}/{digest}"

    def put(self, data: bytes) -> str:
        digest = hashlib.sha256(data).hexdigest()
        path = self.path(digest)
        if not os.path.exists(path):
            folder = os.path.dirname(path)
            os.makedirs(folder, exist_ok=True)
            descriptor, temporary = tempfile.mkstemp(dir=folder, prefix=".tmp-")
            try:
                with os.fdopen(descriptor, "wb") as out:
                    out.write(data)
                os.chmod(temporary, _FILE_MODE)  # as a file trainc writes itself
                os.replace(temporary, path)
                self.written += 1
            except BaseException:
                os.unlink(temporary)
                raise
        return digest

    def read(self, digest: str) -> bytes:
        """The blob's bytes; :class:`~compiler.emit.output.MissingBlob` when it is gone
        (the render cache was pruned since it was written)."""
        try:
            with open(self.path(digest), "rb") as blob:
                return blob.read()
        except FileNotFoundError:
            raise MissingBlob(self.path(digest)) from None

    def has(self, digest: str) -> bool:
        return os.path.exists(self.path(digest))

    def flush(self) -> None:
        """Make every blob put so far readable by other processes (written at once here)."""


class PackStore(BlobStore):
    """A temporary blob store that nothing will read back after this run (``--no-cache``,
    a stream): each process appends its blobs to one pack file of its own, and their
    places to an index beside it, instead of one file per blob (which cost a quarter of
    a render). Blobs cannot be hard-linked from here (:meth:`path` names no file of its
    own), so a store an output tree links to is a :class:`BlobStore`.

    Forked workers write packs of their own (named by process id); a worker's writes
    are in its files once :meth:`flush` returns, which each chunk calls when it ends, so
    the parent reads every blob by the indexes after the workers are done."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self._places: dict[str, tuple[str, int, int]] = {}  # digest: pack, offset, size
        self._owner = 0  # the process whose pack is open
        self._pack: BinaryIO | None = None
        self._index: TextIO | None = None
        self._size = 0
        self._readers: dict[str, int] = {}

    def _open(self) -> tuple[BinaryIO, TextIO]:
        pid = os.getpid()
        if self._owner != pid or self._pack is None or self._index is None:
            # a forked worker: the parent's files (flushed before the fork) are left to it
            name = str(pid)
            self._pack = open(self.root / f"{name}.pack", "ab")  # noqa: SIM115
            self._index = open(self.root / f"{name}.index", "a", encoding="ascii")  # noqa: SIM115
            self._size = self._pack.tell()
            self._owner = pid
            self._readers = {}
        return self._pack, self._index

    def path(self, digest: str) -> str:
        place = self._places.get(digest)
        pack = place[0] if place is not None else "?"
        return f"{self._prefix}{pack}.pack#{digest}"

    def put(self, data: bytes) -> str:
        digest = hashlib.sha256(data).hexdigest()
        if digest not in self._places:
            pack, index = self._open()
            pack.write(data)
            name = str(self._owner)
            self._places[digest] = (name, self._size, len(data))
            index.write(f"{digest} {name} {self._size} {len(data)}\n")
            self._size += len(data)
            self.written += 1
        return digest

    def flush(self) -> None:
        if self._owner == os.getpid() and self._pack is not None and self._index is not None:
            self._pack.flush()
            self._index.flush()

    def _find(self, digest: str) -> tuple[str, int, int] | None:
        place = self._places.get(digest)
        if place is None:
            self.flush()
            for index in sorted(self.root.glob("*.index")):
                for line in index.read_text(encoding="ascii").splitlines():
                    blob, name, offset, size = line.split(" ")
                    self._places.setdefault(blob, (name, int(offset), int(size)))
            place = self._places.get(digest)
        return place

    def read(self, digest: str) -> bytes:
        place = self._find(digest)
        if place is None:
            raise MissingBlob(self.path(digest))
        name, offset, size = place
        self.flush()
        descriptor = self._readers.get(name)
        if descriptor is None:
            try:
                descriptor = os.open(self.root / f"{name}.pack", os.O_RDONLY)
            except FileNotFoundError:
                raise MissingBlob(self.path(digest)) from None
            self._readers[name] = descriptor
        data = os.pread(descriptor, size, offset)
        if len(data) != size:  # the pack cut short meanwhile: as a blob gone
            raise MissingBlob(self.path(digest))
        return data

    def has(self, digest: str) -> bool:
        return self._find(digest) is not None

    def close(self) -> None:
        for descriptor in self._readers.values():
            os.close(descriptor)
        self._readers = {}
        if self._owner == os.getpid():
            for out in (self._pack, self._index):
                if out is not None:
                    out.close()
        self._pack = self._index = None


@contextmanager
def blob_store(
    cache: Path | None, near: Path | None, *, packed: bool = False
) -> Iterator[BlobStore]:
    """The render cache's blobs, or (no cache) a temporary store removed afterwards, made
    beside ``near`` so that its files can be hard-linked into the output; ``packed``: a
    temporary store nothing links to (a stream), its blobs in packs (:class:`PackStore`)."""
    if cache is not None:
        yield BlobStore(cache / "blobs")
        return
    parent = near if near is not None and near.is_dir() else None
    root = Path(tempfile.mkdtemp(prefix=".trainc-blobs-", dir=parent))
    store = PackStore(root) if packed else BlobStore(root)
    try:
        yield store
    finally:
        if isinstance(store, PackStore):
            store.close()
        remove_tree(store.root, 0 if isinstance(store, PackStore) else store.written)


def write_pickle(path: Path, value: object) -> None:
    """Store ``value`` in ``path`` atomically (a reader sees the old file or the new one)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(descriptor, "wb") as out:
            pickle.dump(value, out, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def remember(path: Path, value: object) -> None:
    """:func:`write_pickle` for a cache entry: one that cannot be written (a full disk)
    is simply not kept, and the run goes on."""
    with suppress(OSError):
        write_pickle(path, value)
