"""Document ranges: a multi-document YAML file cut at its ``---`` lines into pieces that
each read as that part of the file read whole.

A range is loaded on its own (``compiler.load.loader.load_texts_collect`` with the
range's first line), so a chunk of a large file needs the memory of its range, and its
positions and problems are located in the file as a whole load would locate them.

Where a file is cut is decided by the documents themselves (content-defined): after a
document whose CRC-32 is 0 modulo ``target``, or after ``maximum`` documents without
such a cut. An edit changes only the cut after the edited document, so it moves the
boundaries of its own range and at most its neighbour's, never a far one.

A file is cut only where the YAML parser must agree that a document starts: a line
that is exactly ``---`` (trailing blanks allowed) at column 0. libyaml and the pure
parser both read such a line as a document start wherever it is (a block scalar needs
an indent of at least one column and ends before it; a plain scalar ends before it; in
a quoted scalar or a flow collection it is a syntax error, which any range of the file
reports too, and an error makes the render whole). A file is not cut at all when its
line numbers or its stream could read otherwise than a plain ``\\n`` count says:

* a directive line (``%YAML``, ``%TAG``): it belongs to the document after it;
* a line break other than ``\\n`` and ``\\r\\n`` (a lone ``\\r``, NEL, LS, PS: the
  parser counts lines by them) or a byte order mark after the start;
* more documents than the stream limit (``max_file_documents``): the whole read refuses
  the file, which the ranges would not. Documents are counted from above, every line
  that starts with ``---`` and a blank, and the text before the first.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["DocumentRange", "document_ranges"]

# what makes a file unsafe to cut (see the module docstring)
_UNSAFE = (b"\xc2\x85", b"\xe2\x80\xa8", b"\xe2\x80\xa9", b"\xef\xbb\xbf")
# a line with some content (not blank, not only a comment) before the first separator
_CONTENT = re.compile(rb"^[ \t]*[^ \t\r\n#]", re.MULTILINE)


@dataclass(frozen=True)
class DocumentRange:
    """Bytes ``start:end`` of a file, its first line (1-based) and its documents."""

    start: int
    end: int
    first_line: int
    documents: int  # the documents between the separators in it (at least one)
    last: int  # the CRC-32 of its last document: a content-defined mark for grouping
    apart: bool = False  # its documents are those ``apart`` picks out (see document_ranges)


def _separators(data: bytes) -> tuple[list[int], int] | None:
    """The offsets of the ``---`` lines a file may be cut at, and (from above) the
    document starts it has; None when it must not be cut."""
    if data.startswith(b"%") or b"\n%" in data or b"\xef\xbb\xbf" in data[3:]:
        return None
    if any(mark in data for mark in _UNSAFE[:3]):
        return None
    if data.count(b"\r") != data.count(b"\r\n"):
        return None
    cuts: list[int] = []
    starts = 0
    at = 0 if data.startswith(b"---") else data.find(b"\n---")
    while at >= 0:
        line = at if at == 0 and data.startswith(b"---") else at + 1
        after = data[line + 3 : line + 4]
        if after in (b"", b" ", b"\t", b"\r", b"\n"):
            starts += 1
            end = data.find(b"\n", line)
            rest = data[line + 3 : len(data) if end < 0 else end]
            if not rest.strip(b" \t\r"):
                cuts.append(line)
        at = data.find(b"\n---", line + 3)
    head = data[: cuts[0]] if cuts else data
    if _CONTENT.search(head.removeprefix(b"\xef\xbb\xbf")):
        starts += 1  # an implicit first document (over-counted when it is a separator's)
    return cuts, starts


def document_ranges(
    data: bytes,
    target: int,
    maximum: int,
    limit: int,
    apart: Callable[[bytes], bool] | None = None,
) -> list[DocumentRange] | None:
    """``data`` (a whole file) cut into ranges of about ``target`` documents, at most
    ``maximum``; None when it cannot be cut safely or would be one range anyway.
    ``limit``: the most documents a file may hold (see the module docstring).
    ``apart``: the documents it is true of are kept in ranges of their own (a file's
    runtimes apart from its TrainJobs), cut before and after each run of them."""
    found = _separators(data)
    if found is None:
        return None
    cuts, starts = found
    if starts > limit or not cuts:
        return None
    ranges: list[DocumentRange] = []
    view = memoryview(data)
    start, line, documents = 0, 1, 0
    previous = 0  # where the document before the next separator starts
    side = False  # whether the range being made holds ``apart`` documents
    last = 0
    for cut in [*(c for c in cuts if c), len(data)]:
        document = data[previous:cut] if apart is not None else b""
        here = apart is not None and apart(document)
        if here != side and previous > start:  # a run of the other side starts here
            ranges.append(DocumentRange(start, previous, line, documents, last, side))
            line += data.count(b"\n", start, previous)
            start, documents = previous, 0
        side = here
        last = zlib.crc32(view[previous:cut])
        documents += 1
        previous = cut
        if cut < len(data) and (last % target == 0 or documents >= maximum):
            ranges.append(DocumentRange(start, cut, line, documents, last, side))
            line += data.count(b"\n", start, cut)
            start, documents = cut, 0
    if start < len(data) or not ranges:
        ranges.append(DocumentRange(start, len(data), line, max(1, documents), last, side))
    return ranges if len(ranges) > 1 else None
