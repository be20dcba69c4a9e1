"""Confinement: the paths a repository names stay inside that repository.

Argo CD runs ``trainc argocd generate`` on repositories other teams write, in a repo
server that holds other applications' checkouts and its own credentials, so a path a
repository names is never trusted to stay in it. The rule, applied here and only here:

* The **root** of a project is the repository holding its ``trainc.yaml``: the nearest
  folder at or above the project file's folder that holds ``.git``, else that folder
  (:meth:`Root.of`). For ``trainc argocd generate`` it is the checkout the repo server
  gave the plugin (:func:`compiler.deliver.argocd.checkout_root`).
* Every path the project file names (inputs, overlays, policies, output), the project
  file itself, a patch file an overlay names with ``path:`` and the plugin's ``project``
  parameter must resolve, following symbolic links, inside the root
  (:meth:`Root.resolve`); so must every symbolic link met while expanding a glob or
  walking a folder (:func:`walk`).
* Paths given on the command line (``trainc render PATH``, ``--project FILE``,
  ``-o DIR``) are the user's own choice and are taken as given; but a folder given so is
  walked with *its* repository as root (the nearest ``.git`` at or above the folder,
  else the folder itself), so a link in it cannot lead elsewhere.

:meth:`Root.resolve` follows a path one component at a time as the kernel does (a
``..`` after a link leaves the link's target), looking only at what lies inside the
root: the folders above the root are taken as they are (the root is a real path, so
they hold no link) and the first step that would go anywhere else stops the walk. What
it answers therefore never depends on what exists outside the root (no existence
oracle), and its message names the path as written and, for a link, the link: never a
target's content nor whether it exists.

    >>> root = Root("/srv/repo")
    >>> try:
    ...     root.resolve("../other/secret.yaml", start="/srv/repo")
    ... except Outside as error:
    ...     print(error)
    is outside the repository /srv/repo
"""

from __future__ import annotations

import fnmatch
import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = ["MAX_LINKS", "Outside", "Root", "repository_root", "walk"]

MAX_LINKS = 40  # the kernel's limit on links followed in one lookup (MAXSYMLINKS)


class Outside(Exception):
    """A path that leaves the root; the text says how, naming only what is inside it:
    ``link`` is the link (relative to the root) that led out, if one did."""

    def __init__(self, how: str, link: str | None = None) -> None:
        super().__init__(how)
        self.link = link


def repository_root(start: Path | str) -> Path | None:
    """The nearest folder at or above ``start`` that holds ``.git`` (a repository or a
    worktree), or None outside any."""
    here = Path(os.path.abspath(start))
    for directory in (here, *here.parents):
        if (directory / ".git").exists():
            return directory
    return None


@dataclass(frozen=True)
class Root:
    """A folder nothing may leave: ``path`` is absolute and real (no symbolic links)."""

    path: str
    what: str = "the repository"  # how messages name it: "the repository", "the checkout"

    @classmethod
    def of(cls, folder: Path | str) -> Root:
        """The repository of ``folder``: its Git root, else the folder itself."""
        real = os.path.realpath(folder)
        return cls(os.path.realpath(repository_root(real) or real))

    @classmethod
    def at(cls, folder: Path | str, what: str = "the repository") -> Root:
        """Exactly ``folder`` (symbolic links in its own path resolved)."""
        return cls(os.path.realpath(folder), what)

    def __str__(self) -> str:
        return f"{self.what} {self.path}"

    def _place(self, path: str) -> str:
        """``inside`` the root, ``above`` it (the root or a folder holding it), or ``outside``."""
        if path == self.path or self.path.startswith(path.rstrip("/") + "/"):
            return "above"
        if path.startswith(self.path.rstrip("/") + "/"):
            return "inside"
        return "outside"

    def contains(self, real: str) -> bool:
        """Whether the real path ``real`` is the root or inside it."""
        return real == self.path or self._place(real) == "inside"

    def relative(self, real: str) -> str:
        """``real`` (inside the root) as a path relative to it, for messages."""
        return os.path.relpath(real, self.path) if self.contains(real) else real

    def resolve(self, path: Path | str, start: str | None = None) -> str:
        """The real path ``path`` (relative to the real folder ``start``, default the
        working directory) leads to; :class:`Outside` if it, or a link on its way,
        leaves the root. A missing component ends the lookup: the rest is taken as
        written (opening it fails anyway)."""
        text = os.fspath(path)
        here = "/" if text.startswith("/") else (start or os.getcwd())
        pending = list(reversed(text.split("/")))
        via: str | None = None  # the last link followed
        links = 0
        exists = True
        while pending:
            part = pending.pop()
            if part in ("", "."):
                continue
            if part == "..":
                here = os.path.dirname(here)  # ``here`` is real: its parent is the parent
                continue
            candidate = os.path.join(here, part)
            place = self._place(candidate)
            if place == "outside":
                raise self._how(via)
            if place == "above" or not exists:
                here = candidate
                continue
            try:
                mode = os.lstat(candidate).st_mode
            except (OSError, ValueError):  # absent, not a folder, no access, a NUL
                exists = False
                here = candidate
                continue
            if stat.S_ISLNK(mode):
                links += 1
                if links > MAX_LINKS:
                    where = self.relative(candidate)
                    raise Outside(f"has too many levels of symbolic links (at {where})", where)
                try:
                    target = os.readlink(candidate)
                except OSError:  # gone since: the lookup fails there
                    exists = False
                    here = candidate
                    continue
                via = candidate
                if target.startswith("/"):
                    here = "/"
                pending.extend(reversed(target.split("/")))
                continue
            here = candidate
        if not self.contains(here):
            raise self._how(via)
        return here

    def _how(self, via: str | None) -> Outside:
        if via is None:
            return Outside(f"is outside {self}")
        link = self.relative(via)
        return Outside(f"leads outside {self} (symbolic link {link})", link)


# --- walking folders and expanding globs, links checked -----------------------------------


@dataclass(frozen=True)
class Found:
    """What a walk or a glob met: a path as it will be shown and read, its real path and
    whether that is a folder; for a link that leaves the root, ``real`` is None and
    ``problem`` says how (``leads outside the repository ...``), for the caller to locate."""

    path: str
    real: str | None
    is_dir: bool = False
    problem: str | None = None


def _entries(real: str) -> list[tuple[str, bool, bool]]:
    """(name, is a link, is a folder) of each entry of a folder, links not followed;
    none if it cannot be read."""
    try:
        with os.scandir(real) as entries:
            return [(e.name, e.is_symlink(), e.is_dir(follow_symlinks=False)) for e in entries]
    except OSError:
        return []


def _join(folder: str, name: str) -> str:
    return name if folder in ("", ".") else os.path.join(folder, name)


def _step(root: Root, folder: str, real: str, name: str, is_link: bool, is_dir: bool) -> Found:
    """The entry ``name`` of a folder (shown as ``folder``, real path ``real``), a link
    resolved inside ``root`` or refused."""
    shown = _join(folder, name)
    if not is_link:
        return Found(shown, os.path.join(real, name), is_dir)
    try:
        target = root.resolve(name, start=real)
    except Outside as outside:
        itself = outside.link == root.relative(os.path.join(real, name))
        return Found(shown, None, problem=f"leads outside {root}" if itself else str(outside))
    return Found(shown, target, _is_dir(target))


def _is_dir(real: str) -> bool:
    try:
        return stat.S_ISDIR(os.stat(real).st_mode)
    except (OSError, ValueError):
        return False


def walk(
    root: Root, top: str, top_real: str, keep_dir: Callable[[str, str], bool]
) -> Iterator[Found]:
    """Every entry under the folder ``top`` (real path ``top_real``, inside ``root``),
    as ``os.walk`` would list it: folders are entered when ``keep_dir(name, real)``;
    linked folders are not entered (as before), linked files are given with their target.
    A link (not hidden) whose target leaves the root is given with its ``problem``,
    whatever it names: whether it names a folder or a file is not looked at."""
    for name, is_link, is_dir in sorted(_entries(top_real)):
        if name.startswith("."):
            continue
        found = _step(root, top, top_real, name, is_link, is_dir)
        if found.real is None:
            yield found
        elif found.is_dir:
            if not is_link and keep_dir(name, found.real):
                yield from walk(root, found.path, found.real, keep_dir)
        else:
            yield found


GLOB_CHARS = frozenset("*?[")


def _magic(part: str) -> bool:
    return bool(GLOB_CHARS & set(part))


def glob(root: Root, pattern: str) -> list[Found]:
    """The matches of a glob, as :func:`glob.glob` (``recursive=True``) finds them, but
    only inside ``root``: the folder before the first wildcard must resolve inside it
    (:class:`Outside` otherwise), and a link met on the way that leaves it is a match
    with a ``problem``, not followed. ``pattern`` is normalized (no ``.`` or ``..``
    after a wildcard)."""
    parts = pattern.split("/")
    first = next((i for i, part in enumerate(parts) if _magic(part)), None)
    if first is None:  # the wildcards went with a ``..`` (``jobs*/../a.yaml``)
        real = root.resolve(pattern)
        return [Found(pattern, real, _is_dir(real))] if os.path.lexists(real) else []
    prefix = "/".join(parts[:first]) if first else ""
    if pattern.startswith("/") and first == 1:
        prefix = "/"
    real = root.resolve(prefix or ".")
    out: list[Found] = []
    _match(root, prefix, real, parts[first:], out, frozenset({real}))
    return out


def _match(
    root: Root, shown: str, real: str, parts: list[str], out: list[Found], seen: frozenset[str]
) -> None:
    head, rest = parts[0], parts[1:]
    if head == "**":
        if not rest:
            if shown:  # the folder itself, as glob (but not for a pattern starting with **)
                out.append(Found(shown, real, True))
        else:
            _match(root, shown, real, rest, out, seen)
        for name, is_link, is_dir in _entries(real):
            if name.startswith("."):
                continue
            found = _step(root, shown, real, name, is_link, is_dir)
            if found.real is None or not rest:
                out.append(found)
            if found.real is not None and found.is_dir and found.real not in seen:
                _match(root, found.path, found.real, parts, out, seen | {found.real})  # once
        return
    if _magic(head):
        names = [
            entry
            for entry in _entries(real)
            if (head.startswith(".") or not entry[0].startswith("."))
            and fnmatch.fnmatchcase(entry[0], head)
        ]
    else:
        try:
            mode = os.lstat(os.path.join(real, head)).st_mode
            names = [(head, stat.S_ISLNK(mode), stat.S_ISDIR(mode))]
        except (OSError, ValueError):
            names = []
    for name, is_link, is_dir in names:
        found = _step(root, shown, real, name, is_link, is_dir)
        if found.real is None or not rest:
            out.append(found)
        elif found.is_dir:
            _match(root, found.path, found.real, rest, out, seen | {found.real})
