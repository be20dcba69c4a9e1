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

from compiler.emit.output import MissingBlob, remove_tree

__all__ = ["BlobStore", "blob_store", "remember", "write_pickle"]


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


@contextmanager
def blob_store(cache: Path | None, near: Path | None) -> Iterator[BlobStore]:
    """The render cache's blobs, or (no cache) a temporary store removed afterwards, made
    beside ``near`` so that its files can be hard-linked into the output."""
    if cache is not None:
        yield BlobStore(cache / "blobs")
        return
    parent = near if near is not None and near.is_dir() else None
    store = BlobStore(Path(tempfile.mkdtemp(prefix=".trainc-blobs-", dir=parent)))
    try:
        yield store
    finally:
        remove_tree(store.root, store.written)


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
