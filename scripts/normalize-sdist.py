#!/usr/bin/env python3
"""Rewrite sdists (``.tar.gz``) so the same sources give the same bytes: members sorted,
their times SOURCE_DATE_EPOCH, owner root, modes 0644/0755, a gzip header without a
time or a name. setuptools writes the files' own times and the build's time (`make
dist` runs this after `python -m build`; the wheels are reproducible already).

    SOURCE_DATE_EPOCH=... python3 scripts/normalize-sdist.py dist/trainc-0.1.0.tar.gz
"""

from __future__ import annotations

import gzip
import io
import os
import sys
import tarfile
from pathlib import Path


def normalize(path: Path, epoch: int) -> None:
    with tarfile.open(path, "r:gz") as source:
        members = [(m, source.extractfile(m).read() if m.isfile() else b"") for m in source]  # type: ignore[union-attr]
    out = io.BytesIO()
    with (
        gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=0, compresslevel=9) as zipped,
        tarfile.open(fileobj=zipped, mode="w", format=tarfile.PAX_FORMAT) as target,
    ):
        for member, data in sorted(members, key=lambda pair: pair[0].name):
            member.mtime = epoch
            member.uid = member.gid = 0
            member.uname = member.gname = ""
            member.mode = 0o755 if member.isdir() or member.mode & 0o111 else 0o644
            member.pax_headers = {}
            target.addfile(member, io.BytesIO(data) if member.isfile() else None)
    temporary = path.with_suffix(".tmp")
    temporary.write_bytes(out.getvalue())
    temporary.replace(path)


def main() -> None:
    epoch = int(os.environ.get("SOURCE_DATE_EPOCH") or 315532800)
    for name in sys.argv[1:]:
        normalize(Path(name), epoch)


if __name__ == "__main__":
    main()
