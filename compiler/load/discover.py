"""Input paths -> the YAML files to read, in a deterministic order.

* a file is taken as given, whatever its extension (as YAML, unless it ends in ``.cue``);
* a directory is searched recursively for ``*.yaml`` and ``*.yml`` (and ``*.cue``
  policy files, passed on as ``kind == "cue"`` sources, never parsed as YAML); files and
  directories whose name starts with ``.`` are skipped, and so is a ``trainc.yaml``
  project file (:mod:`compiler.project`); symlinked directories are not
  followed; the files are sorted by their path relative to that directory, segment
  by segment (``a/b.yaml`` < ``a-b.yaml`` < ``a.yaml`` < ``b.yaml``);
* ``-`` is standard input (read once, shown as ``<stdin>``);
* paths keep the order they were given in; a file reached twice is read once.

    >>> [s.display for s in discover(["-"])]
    ['<stdin>']
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from compiler.errors import Problem, SourceLocation

__all__ = [
    "CUE_SUFFIX",
    "STDIN",
    "YAML_SUFFIXES",
    "Source",
    "discover",
    "discover_collect",
    "path_kind",
]

STDIN = "-"
STDIN_DISPLAY = "<stdin>"
YAML_SUFFIXES = (".yaml", ".yml")
CUE_SUFFIX = ".cue"
PROJECT_FILE = "trainc.yaml"


@dataclass(frozen=True)
class Source:
    """One input: a file (``path``) or standard input (``path is None``).

    ``kind`` is ``"yaml"`` (Kubernetes objects) or ``"cue"`` (a CUE policy file, for
    ``trainc check``; the loader skips it).
    """

    path: Path | None
    display: str
    kind: str = "yaml"

    @property
    def is_stdin(self) -> bool:
        return self.path is None


OUTPUT_MARKER = ".trainc-output"  # written by compiler.emit.output into every output tree


def _walk(directory: Path) -> list[Path]:
    found: list[tuple[tuple[str, ...], Path]] = []
    for root, dirs, files in os.walk(directory):
        base = Path(root)
        # Hidden folders, and folders trainc rendered (they carry its marker file):
        # rendered output is never input.
        dirs[:] = [
            d for d in dirs if not d.startswith(".") and not (base / d / OUTPUT_MARKER).exists()
        ]
        for name in files:
            if name.startswith(".") or not name.endswith((*YAML_SUFFIXES, CUE_SUFFIX)):
                continue
            if name == PROJECT_FILE:  # the project file describes inputs, it is not one
                continue
            path = base / name
            found.append((path.relative_to(directory).parts, path))
    found.sort(key=lambda item: item[0])
    return [path for _, path in found]


def path_kind(path: Path) -> str | None:
    """``"dir"``, ``"file"`` (regular, symlinks followed), ``"other"`` (a FIFO, a device,
    ...) or None when it cannot be reached (absent, a name too long, a loop, no access)."""
    try:
        mode = path.stat().st_mode
    except (OSError, ValueError):  # ValueError: a NUL in the name
        return None
    if stat.S_ISDIR(mode):
        return "dir"
    return "file" if stat.S_ISREG(mode) else "other"


def discover_collect(paths: list[str]) -> tuple[list[Source], list[Problem]]:
    """The sources under ``paths`` and a problem for each path that does not exist."""
    sources: list[Source] = []
    problems: list[Problem] = []
    seen: set[str] = set()

    def add(path: Path | None, display: str) -> None:
        key = STDIN if path is None else os.path.realpath(path)
        if key not in seen:
            seen.add(key)
            kind = "cue" if path is not None and path.name.endswith(CUE_SUFFIX) else "yaml"
            sources.append(Source(path, display, kind))

    for given in paths:
        if given == STDIN:
            add(None, STDIN_DISPLAY)
            continue
        path = Path(given)
        kind = path_kind(path)
        if kind == "dir":
            for found in _walk(path):
                add(found, str(found))
        elif kind == "file":
            add(path, given)
        elif kind == "other":
            problems.append(
                Problem("not a regular file or directory", SourceLocation(given), rule="input")
            )
        else:
            problems.append(
                Problem("no such file or directory", SourceLocation(given), rule="input")
            )
    return sources, problems


def discover(paths: list[str]) -> list[Source]:
    """Like :func:`discover_collect`, ignoring paths that do not exist."""
    return discover_collect(paths)[0]


def repository_root(start: Path) -> Path | None:
    """The nearest folder at or above ``start`` that holds ``.git`` (a repository or a
    worktree), or None outside any."""
    start = Path(os.path.abspath(start))
    for directory in (start, *start.parents):
        if (directory / ".git").exists():
            return directory
    return None
