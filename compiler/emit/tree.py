"""Write an output tree from the blob store: in place when few of its files change.

A render by chunks (:mod:`compiler.plan.chunks`) leaves every object in a blob of
the render cache, and an output tree is hard links to those blobs. Building a whole new
tree and swapping it in (:func:`compiler.emit.output.staged_directory`) costs a link per
file: 0.23 s for the 16,667 files of 10,000 TrainJobs, most of a one-file re-render. So
the render cache also keeps a *tree record* for each output folder: every path of the
tree, what it holds (a blob, or a text's digest) and its inode. When a run finds the
folder exactly as recorded (the same paths with the same inodes: a file that anyone else
edits by replacing it, adds or removes makes a difference) and at most a quarter of its
files change, only those are replaced, in two steps:

1. every new file and folder is made beside its final place first (a file as
   ``.<name>.trainc-new``); an error on the way (a full disk) removes them again, and
   the tree is as it was;
2. then each new file is renamed over its path, atomically, and the files no longer
   rendered are removed, with the folders that become empty.

A reader during step 2 can see some files old and some new, never a partial file. The
record is removed before step 2 and written after it, so a run killed in between leaves
no record and the next run replaces the tree whole. Without a record, with more changes,
or without a render cache (``--no-cache``) the tree is replaced whole, as every render
that is not done by chunks does. Runs into one folder take turns (a lock beside its
record).
"""

from __future__ import annotations

import hashlib
import os
import pickle
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from compiler.emit.blobs import BlobStore, remember
from compiler.emit.output import (
    MARKER,
    MARKER_TEXT,
    check_replaceable,
    link_new_file,
    os_errors,
    part_requirements,
    staged_directory,
    write_new_file,
)
from compiler.model.parts import PartBuild

try:
    import fcntl
except ImportError:  # not POSIX: no lock, so every tree is replaced whole
    fcntl = None  # type: ignore[assignment]

__all__ = ["ClusterFiles", "write_files", "write_parts", "write_project_files", "write_tree"]

RECORD_FORMAT = 1
FOLDER = "folder"  # what a folder holds, in a record
IN_PLACE_SHARE = 4  # in place when at most 1/IN_PLACE_SHARE of the files change
_NEW_SUFFIX = ".trainc-new"

# A tree's files by relative path: the blob path (object files) or the text to write.
Contents = Mapping[str, str | bytes]


@dataclass(frozen=True)
class TreeRecord:
    """An output tree as a run left it: the folder's identity (device, inode) and each
    path below it (folders end in ``/``) with what it holds and its inode."""

    root: tuple[int, int]
    entries: dict[str, tuple[str, int]]
    format: int = RECORD_FORMAT


def _held(contents: Contents) -> dict[str, str]:
    """What each path should hold: a blob's path, or ``text:<sha256>`` of a text."""
    return {
        relative: source
        if isinstance(source, str)
        else "text:" + hashlib.sha256(source).hexdigest()
        for relative, source in contents.items()
    }


def _walk(directory: Path) -> dict[str, int]:
    """Every path below ``directory`` (folders with a trailing ``/``) and its inode;
    one directory read per folder, no stat per file (``{"ns/": 12, "ns/a.yaml": 13}``)."""
    found: dict[str, int] = {}
    folders = [("", str(directory))]
    while folders:
        prefix, path = folders.pop()
        with os.scandir(path) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    found[f"{prefix}{entry.name}/"] = entry.inode()
                    folders.append((f"{prefix}{entry.name}/", entry.path))
                else:
                    found[prefix + entry.name] = entry.inode()
    return found


def _identity(directory: Path) -> tuple[int, int]:
    status = os.stat(directory)
    return status.st_dev, status.st_ino


def _record_path(records: Path, directory: Path) -> Path:
    return records / f"{hashlib.sha256(os.fsencode(directory)).hexdigest()}.pickle"


def _load(path: Path) -> TreeRecord | None:
    try:
        with open(path, "rb") as stored:
            record = pickle.load(stored)
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError):
        return None
    if not isinstance(record, TreeRecord) or record.format != RECORD_FORMAT:
        return None
    return record


@contextmanager
def _locked(record: Path) -> Iterator[None]:
    record.parent.mkdir(parents=True, exist_ok=True)
    with open(record.with_suffix(".lock"), "ab") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _parents(relative: str) -> Iterator[str]:
    """``"a/b/c.yaml"`` -> ``"a/b/"``, ``"a/"``: each folder above a path, deepest first."""
    while "/" in relative.rstrip("/"):
        relative = relative.rstrip("/").rpartition("/")[0] + "/"
        yield relative


def plan_update(record: TreeRecord, held: Mapping[str, str]) -> tuple[list[str], list[str]] | None:
    """(the paths to write, the paths to remove) to turn the recorded tree into ``held``;
    None when the tree should be replaced whole (too many changes, or a path that is a
    file in one and a folder in the other).

    >>> record = TreeRecord((0, 0), {"ns/": (FOLDER, 1), "ns/a": ("x", 2), "ns/b": ("y", 3),
    ...                              "ns/c": ("z", 4), "ns/d": ("w", 5)})
    >>> plan_update(record, {"ns/a": "x", "ns/b": "Y", "ns/c": "z", "ns/d": "w"})
    (['ns/b'], [])
    >>> plan_update(record, {"ns/a": "x", "ns/b": "Y", "ns/c": "Z", "ns/d": "w"}) is None
    True
    """
    entries = record.entries
    writes = [path for path, source in held.items() if entries.get(path, ("",))[0] != source]
    removals = [
        path for path, (source, _) in entries.items() if source != FOLDER and path not in held
    ]
    if (len(writes) + len(removals)) * IN_PLACE_SHARE > max(len(held), 1):
        return None
    for path in writes:
        if f"{path}/" in entries or any(
            entries.get(parent.rstrip("/"), (FOLDER,))[0] != FOLDER for parent in _parents(path)
        ):
            return None
    return writes, removals


def _update_in_place(
    directory: Path,
    record: TreeRecord,
    held: Mapping[str, str],
    contents: Contents,
    writes: Sequence[str],
    removals: Sequence[str],
    record_path: Path,
) -> dict[str, tuple[str, int]]:
    """Apply (``writes``, ``removals``) in the two steps of the module docstring; returns
    the new record's entries."""
    entries = dict(record.entries)
    made: list[str] = []  # folders made, outermost first
    prepared: list[tuple[str, str]] = []  # (new file, its final path)
    try:
        for path in writes:
            for parent in reversed(list(_parents(path))):
                if parent not in entries:
                    os.mkdir(f"{directory}/{parent}")
                    made.append(parent)
                    entries[parent] = (FOLDER, os.stat(f"{directory}/{parent}").st_ino)
            folder, _, name = path.rpartition("/")
            new = (
                f"{directory}/{folder}/.{name}{_NEW_SUFFIX}"
                if folder
                else (f"{directory}/.{name}{_NEW_SUFFIX}")
            )
            prepared.append((new, f"{directory}/{path}"))
            source = contents[path]
            if isinstance(source, str):
                link_new_file(source, new)
            else:
                write_new_file(new, source)
            entries[path] = (held[path], os.stat(new).st_ino)
    except BaseException:
        for new, _ in prepared:
            with suppress(FileNotFoundError):
                os.unlink(new)
        for parent in reversed(made):
            os.rmdir(f"{directory}/{parent}")
        raise
    record_path.unlink(missing_ok=True)  # from here on the tree is not the recorded one
    for new, final in prepared:
        os.replace(new, final)
    emptied: set[str] = set()
    for path in removals:
        os.unlink(f"{directory}/{path}")
        del entries[path]
        emptied.update(_parents(path))
    for parent in sorted(emptied, key=lambda p: p.count("/"), reverse=True):
        try:
            os.rmdir(f"{directory}/{parent}")
        except OSError:
            continue  # still holds files
        del entries[parent]
    return entries


def write_tree(directory: Path, contents: Contents, records: Path | None) -> bool:
    """Make ``directory`` hold ``contents`` (besides trainc's marker file); True when it
    was updated in place, False when it was replaced whole (see the module docstring).

    ``contents``: by relative path, the blob to hard-link (its path) or the bytes to
    write. ``records``: where tree records are kept (None: no record, replace whole).
    """
    directory = directory.resolve()
    check_replaceable(directory)
    if records is None or fcntl is None:
        _replace(directory, contents)
        return False
    record_path = _record_path(records, directory)
    with _locked(record_path):
        held = {MARKER: "text:" + hashlib.sha256(MARKER_TEXT.encode()).hexdigest()}
        held.update(_held(contents))
        record = _load(record_path)
        if record is not None and directory.is_dir():
            update = None
            if record.root == _identity(directory) and _walk(directory) == {
                path: inode for path, (_, inode) in record.entries.items()
            }:
                update = plan_update(record, held)
            if update is not None:
                entries = _update_in_place(directory, record, held, contents, *update, record_path)
                remember(record_path, TreeRecord(record.root, entries))
                return True
        record_path.unlink(missing_ok=True)
        _replace(directory, contents)
        inodes = _walk(directory)
        entries = {path: (held.get(path, FOLDER), inode) for path, inode in inodes.items()}
        remember(record_path, TreeRecord(_identity(directory), entries))
        return False


def _replace(directory: Path, contents: Contents) -> None:
    """Write ``contents`` into a new tree and swap it in for ``directory``."""
    with staged_directory(directory, len(contents)) as staging:
        made: set[str] = set()
        for path, source in contents.items():
            parent = path.rpartition("/")[0]
            if parent and parent not in made:
                os.makedirs(staging / parent, exist_ok=True)
                made.add(parent)
            if isinstance(source, str):
                link_new_file(source, f"{staging}/{path}")
            else:
                write_new_file(f"{staging}/{path}", source)


# --- the trees of a render --------------------------------------------------------------


def tree_contents(
    files: Sequence[tuple[str, str]], requirements: str | None, extra: Mapping[str, bytes]
) -> dict[str, str | bytes]:
    """An output folder's contents: its object files (relative path, blob path), the
    requirements file (its text, if one is due) and ``extra`` files by name."""
    contents: dict[str, str | bytes] = dict(files)
    if requirements is not None:
        contents["requirements.yaml"] = requirements.encode("utf-8")
    contents.update(extra)
    return contents


def write_files(
    files: Sequence[tuple[str, str]],
    directory: Path,
    requirements: str | None = None,
    extra: Mapping[str, bytes] | None = None,
    records: Path | None = None,
) -> int:
    """Like :func:`compiler.emit.output.write_directory` for objects already serialised:
    ``files`` are (relative path, blob path) pairs, checked for clashes by the caller;
    ``requirements`` the text of the requirements file, if one is due. Returns the
    number of object files."""
    with os_errors(directory):
        write_tree(directory, tree_contents(files, requirements, extra or {}), records)
    return len(files)


ClusterFiles = tuple[Sequence[tuple[str, str]], str | None, Mapping[str, bytes]]


def write_project_files(
    clusters: Mapping[str, ClusterFiles],
    directory: Path,
    *,
    whole: bool,
    records: Path | None = None,
) -> int:
    """Like :func:`compiler.emit.output.write_project` for objects already serialised, by
    cluster: (files, requirements, extra files) as :func:`write_files` takes them."""
    with os_errors(directory):
        directory = directory.resolve()
        check_replaceable(directory)
        if not whole:
            directory.mkdir(parents=True, exist_ok=True)
            (directory / MARKER).write_text(MARKER_TEXT, encoding="utf-8")
            for name, (files, requirements, extra) in clusters.items():
                write_tree(directory / name, tree_contents(files, requirements, extra), records)
        else:
            contents: dict[str, str | bytes] = {}
            for name, (files, requirements, extra) in clusters.items():
                contents[f"{name}/{MARKER}"] = MARKER_TEXT.encode("utf-8")
                for path, source in tree_contents(files, requirements, extra).items():
                    contents[f"{name}/{path}"] = source
            write_tree(directory, contents, records)
    return sum(len(files) for files, _, _ in clusters.values())


def write_parts(
    parts: Sequence[PartBuild],
    store: BlobStore,
    output: Path,
    project_mode: bool,
    whole: bool,
    records: Path | None,
) -> int:
    """Write the trees of a render by chunks (each object a hard link to its blob in
    ``store``): one folder of PATHs, or a project's folder per cluster (``whole``: every
    cluster of the project, so a folder of another is stale); ``records``: where the
    render cache keeps what each tree holds, so that it can be updated in place. The
    number of objects written."""

    from compiler.emit.kustomization import cluster_extra_files  # project mode only

    def files_of(part: PartBuild) -> list[tuple[str, str]]:
        return [(obj.relative_path, store.path(obj.digest)) for obj in part.objects]

    if not project_mode:
        return write_files(files_of(parts[0]), output, part_requirements(parts[0]), None, records)
    clusters: dict[str, ClusterFiles] = {}
    for part in parts:
        files = files_of(part)
        extra = cluster_extra_files(part.plan.cluster, (relative for relative, _ in files))
        clusters[part.plan.cluster_name or ""] = (files, part_requirements(part), extra)
    return write_project_files(clusters, output, whole=whole, records=records)
