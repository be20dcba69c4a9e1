"""Input paths -> the YAML files to read, in a deterministic order.

* a path given is the user's choice and is taken as given (a link too);
* a file is taken as given, whatever its extension (as YAML, unless it ends in ``.cue``);
* a directory is searched recursively for ``*.yaml`` and ``*.yml`` (and ``*.cue``
  policy files, passed on as ``kind == "cue"`` sources, never parsed as YAML); files and
  directories whose name starts with ``.`` are skipped, and so is a ``trainc.yaml``
  project file (:mod:`compiler.project`); symlinked directories are not followed, and
  a link (to a file or a folder) whose target is outside the directory's repository
  (its Git root, or the directory itself outside any) is an error located at the link
  (:mod:`compiler.load.confine`); the files are sorted by their path relative to that
  directory, segment by segment (``a/b.yaml`` < ``a-b.yaml`` < ``a.yaml`` < ``b.yaml``);
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
from compiler.load.confine import Root, repository_root, walk

__all__ = [
    "CUE_SUFFIX",
    "STDIN",
    "YAML_SUFFIXES",
    "Source",
    "discover",
    "discover_collect",
    "path_kind",
    "repository_root",
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


def _walk(directory: Path) -> tuple[list[tuple[Path, str]], list[Problem]]:
    """The input files under ``directory``, each with its real path, and a problem for
    each link in it that leads outside its repository (:func:`compiler.load.confine.walk`).

    Strings, not :class:`~pathlib.Path` operations, per file: a repo of 10,000 files is
    walked on every run, also when every chunk comes from the render cache."""
    real = os.path.realpath(directory)
    root = Root.of(real)
    top = str(directory)
    found: list[tuple[list[str], str, str]] = []  # (parts below directory, path, real path)
    problems: list[Problem] = []

    def keep(name: str, real: str) -> bool:
        # rendered output is never input: folders trainc rendered carry its marker file
        return not os.path.exists(os.path.join(real, OUTPUT_MARKER))

    for entry in walk(root, top, real, keep):
        if entry.problem is not None or entry.real is None:
            message = f"symbolic link {entry.problem}; not followed"
            problems.append(Problem(message, SourceLocation(entry.path), rule="input"))
            continue
        name = os.path.basename(entry.path)
        if not name.endswith((*YAML_SUFFIXES, CUE_SUFFIX)):
            continue
        if name == PROJECT_FILE:  # the project file describes inputs, it is not one
            continue
        # walk() joins names onto ``top`` (bare names when it is "."), so the part below
        # the directory is what follows it
        below = entry.path if top in ("", ".") else entry.path[len(top) :].lstrip(os.sep)
        found.append((below.split(os.sep), entry.path, entry.real))
    found.sort(key=lambda item: item[0])
    return [(Path(path), real_path) for _, path, real_path in found], problems


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

    def add(path: Path | None, display: str, real: str | None = None) -> None:
        # ``real``: the real path when the walk knows it (no lookup per file)
        key = STDIN if path is None else real or os.path.realpath(path)
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
            files, outside = _walk(path)
            problems += outside
            for found, real in files:
                add(found, str(found), real)
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
