"""Compiled CEL programs kept between runs: ``$TRAINC_CACHE/cel/<key>.json``.

Type-checking and planning a policy's expressions costs tens of milliseconds per run,
a fixed cost that a ``trainc check`` of a hundred TrainJobs notices. The engine's
compiled expressions serialize (``Expression.serialize``, the checked syntax tree), so
:class:`~compiler.apiserver.cel.k8s.K8sEngine` keeps what compiling an expression
gave (result type, names read, the run text and its serialized program) under a key
made of the expression, its declared variables and this :data:`salt`: the version of
``cel-expr-python`` and a hash of trainc's CEL code (the rewrites, the library
declarations and functions), so no change to either can reuse an old entry. Entries
are written atomically; an entry that cannot be read is compiled again. Expressions
that do not compile are not kept: their errors are worked out each time.

``TRAINC_CEL_CACHE=0`` turns the store off.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

from compiler.upstream.artifacts import cache_root

__all__ = ["ProgramStore", "default_store", "salt"]

_CEL_CODE = Path(__file__).resolve().parent


@cache
def salt() -> str:
    """What the stored programs depend on besides their text: the engine's version and
    trainc's CEL code."""
    digest = hashlib.sha256()
    try:
        digest.update(metadata.version("cel-expr-python").encode())
    except metadata.PackageNotFoundError:  # pragma: no cover - the dependency is pinned
        digest.update(b"unknown")
    for path in sorted(_CEL_CODE.rglob("*.py")):
        if not path.name.endswith("_test.py"):
            digest.update(path.relative_to(_CEL_CODE).as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


class ProgramStore:
    """JSON entries by key in ``directory`` (created on the first write)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def key(self, *parts: Any) -> str:
        text = json.dumps([salt(), *parts], separators=(",", ":"), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()

    def get(self, key: str) -> dict[str, Any] | None:
        try:
            entry = json.loads((self.directory / f"{key}.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return entry if isinstance(entry, dict) else None

    def put(self, key: str, entry: dict[str, Any]) -> None:
        """Write ``entry`` atomically; a cache that cannot be written is no error."""
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            fd, temporary = tempfile.mkstemp(dir=self.directory, suffix=".tmp")
        except OSError:
            return
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(entry, out)
            os.replace(temporary, self.directory / f"{key}.json")
        except OSError:
            Path(temporary).unlink(missing_ok=True)


def default_store() -> ProgramStore | None:
    """The store in the trainc cache, or None when ``TRAINC_CEL_CACHE=0``."""
    if os.environ.get("TRAINC_CEL_CACHE", "1") == "0":
        return None
    return ProgramStore(cache_root() / "cel")
