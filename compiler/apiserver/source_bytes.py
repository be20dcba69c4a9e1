"""Reading an input file's bytes within the size limits (``$TRAINC_MAX_FILE_BYTES``,
``$TRAINC_MAX_FILE_DOCUMENTS``), without the YAML parser: a run whose chunks all come
from the render cache reads every input to key it, and parses none
(:mod:`compiler.apiserver.yaml_source` parses; it re-exports these names)."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

from compiler.errors import InputError, SourceLocation

# Every file trainc reads (inputs, overlays, policies, the project file) is at most this
# big: a symlink to /dev/zero or a generated monster must end in an error, not in swap.
# 128 MiB holds the largest file of TrainJobs the document limit lets through (100,000 of
# ~1 KB: a generated sweep of 100,000 is ~85 MB), and renders by document ranges in a
# bounded peak (a file at this limit: under 512 MiB, docs/guides/large-repos.md).
DEFAULT_MAX_FILE_BYTES = 128 * 1024 * 1024
MAX_FILE_BYTES_ENV = "TRAINC_MAX_FILE_BYTES"


def max_file_bytes() -> int:
    """The size limit of one input file: ``$TRAINC_MAX_FILE_BYTES`` or 128 MiB."""
    value = os.environ.get(MAX_FILE_BYTES_ENV, "")
    return int(value) if value.isdigit() and int(value) > 0 else DEFAULT_MAX_FILE_BYTES


# Documents in one stream, at most: each costs time and, when kept, memory whatever its
# size; 900,000 one-line documents in 8 MB must end in an error, not in a gigabyte.
DEFAULT_MAX_FILE_DOCUMENTS = 100_000
MAX_FILE_DOCUMENTS_ENV = "TRAINC_MAX_FILE_DOCUMENTS"


def max_file_documents() -> int:
    """The document limit of one stream: ``$TRAINC_MAX_FILE_DOCUMENTS`` or 100,000."""
    value = os.environ.get(MAX_FILE_DOCUMENTS_ENV, "")
    return int(value) if value.isdigit() and int(value) > 0 else DEFAULT_MAX_FILE_DOCUMENTS


def too_many_documents(limit: int) -> str:
    return (
        f"more than {limit} YAML documents in one file "
        f"(set {MAX_FILE_DOCUMENTS_ENV} to raise the limit)"
    )


def _too_big(limit: int) -> str:
    return f"file larger than the limit of {limit} bytes (set {MAX_FILE_BYTES_ENV} to raise it)"


def _kind_of_mode(mode: int) -> str:
    for test, what in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return what
    return "not a regular file"


def read_source(path: str | Path, display: str | None = None) -> bytes:
    """The bytes of a regular file (a symlink is followed only to one), at most
    :func:`max_file_bytes`; an :class:`InputError` at the file otherwise.

    The file is opened without blocking (a FIFO cannot hang the run) and checked with
    ``fstat`` on the open descriptor, so what is read is what was checked.
    """
    name = display if display is not None else str(path)
    limit = max_file_bytes()
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        raise InputError.single(
            f"cannot read: {error.strerror or error}", SourceLocation(name)
        ) from None
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise InputError.single(
                f"cannot read: {_kind_of_mode(info.st_mode)}, not a regular file",
                SourceLocation(name),
            )
        if info.st_size > limit:
            raise InputError.single(_too_big(limit), SourceLocation(name))
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(descriptor, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:  # it grew while being read
            raise InputError.single(_too_big(limit), SourceLocation(name))
        return b"".join(chunks)
    except OSError as error:
        raise InputError.single(
            f"cannot read: {error.strerror or error}", SourceLocation(name)
        ) from None
    finally:
        os.close(descriptor)


def read_stream(stream: BinaryIO, display: str) -> bytes:
    """Standard input, at most :func:`max_file_bytes`."""
    limit = max_file_bytes()
    data = stream.read(limit + 1)
    if len(data) > limit:
        raise InputError.single(_too_big(limit), SourceLocation(display))
    return data
