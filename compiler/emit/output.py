"""Write rendered objects: one file per object under a predictable path, or one stream.

Layout of an output directory (owned by trainc: it is rewritten on each run)::

    <namespace>/<group>_<Kind>_<name>.yaml      (group ``core`` for v1 objects)
    requirements.yaml                           (Secrets with generated data, if any)

A path names what names the object in the cluster (namespace, group, kind, name), so two
objects that would clash on apply clash here first, as an error. There is no directory
per TrainJob: the objects of one are named after it already, and a directory costs the
filesystem as much as several files (measured in ``tests/bench/render_bench.py``).

``requirements.yaml`` lists the Secrets whose data upstream generates (SSH or curve keys):
trainc never writes key material: the Secret is to be created once, if absent, by the
apply step (not part of trainc yet) or by hand with the generator the entry names.

The directory is written next to its final place and swapped in only when every
file is written, so a failed run leaves the previous output untouched. (A render by
chunks may instead update a few files in place: :mod:`compiler.emit.tree`.)
"""

from __future__ import annotations

import ctypes
import errno
import os
import shutil
import sys
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from compiler.emit.yaml_text import dump_document, dump_documents
from compiler.errors import InputError, TraincError, escape_text
from compiler.model.objects import RenderedObject, sorted_objects
from compiler.model.parts import PartBuild
from compiler.render.info import SecretRequirement

if TYPE_CHECKING:  # a run whose chunks all come from the cache builds nothing
    from compiler.model.build import Build

MARKER = ".trainc-output"
MARKER_TEXT = "rendered by trainc; replaced whole on each run\n"


def stream_text(objects: Iterable[RenderedObject]) -> str:
    """One multi-document YAML stream, sorted by namespace, TrainJob, kind and name.

    Two objects with one identity are an error here as in a directory (:func:`planned_files`).
    """
    return dump_documents(obj.data for _, obj in planned_files(objects, files=False))


def _requirement_entry(r: SecretRequirement) -> dict[str, object]:
    return {
        "kind": "Secret",
        "namespace": r.namespace,
        "name": r.name,
        **({"type": r.type} if r.type else {}),
        "keys": list(r.keys),
        "generator": r.generator,
        "immutable": r.immutable,
    }


_REQUIREMENTS_KEY = "requirements:\n"


def requirement_text(requirement: SecretRequirement) -> str:
    """One entry of the requirements file, as it appears there (a ``- `` item)."""
    text = dump_document({"requirements": [_requirement_entry(requirement)]})
    assert text.startswith(_REQUIREMENTS_KEY)
    return text[len(_REQUIREMENTS_KEY) :]


def requirements_text(requirements: Iterable[SecretRequirement]) -> str:
    """The requirements file: plain data for the apply step, not Kubernetes objects."""
    ordered = sorted(requirements, key=lambda r: (r.namespace, r.name))
    return requirements_file(requirement_text(r) for r in ordered)


def part_requirements(part: PartBuild) -> str | None:
    """The requirements file of a build by chunks (None: no Secret is required)."""
    entries = part.requirement_entries()
    return requirements_file(entries) if entries else None


def requirements_file(entries: Iterable[str]) -> str:
    """The requirements file of entries (:func:`requirement_text`) in their order."""
    header = (
        "# Secrets with generated key material that trainc never renders;\n"
        "# create each one once, if absent, with the generator it names.\n"
    )
    body = "".join(entries)
    return header + (_REQUIREMENTS_KEY + body if body else dump_document({"requirements": []}))


def planned_files(
    objects: Iterable[RenderedObject], *, files: bool = True
) -> list[tuple[str, RenderedObject]]:
    """Each object with its relative path, in stream order; two objects on one path are an error.

    Such a pair would be one object in the cluster, each apply overwriting the other.
    ``files=False`` (a stream): cluster-scoped objects (``--emit trainjobs`` runtimes)
    need no namespace folder.
    """
    planned: dict[str, RenderedObject] = {}
    folded: dict[str, str] = {}  # by case-folded path: a checkout on macOS or Windows
    for obj in sorted_objects(objects):
        path = obj.relative_path
        folder, _, name = path.partition("/")
        if files and (folder in ("", ".", "..") or "/" in name or "\0" in path):
            # only an output overlay can get here: the API server would refuse such names
            raise InputError.single(
                f"cannot write a rendered {obj.data.get('kind')} of TrainJob "
                f"{obj.trainjob_namespace}/{obj.trainjob_name} to {path!r}: its namespace, "
                "kind and name must be Kubernetes names (was one changed by an overlay?)"
            )
        first = planned.setdefault(path, obj)
        if first is not obj:
            raise InputError.single(
                f"two rendered objects would be written to {path}, one for TrainJob "
                f"{first.trainjob_namespace}/{first.trainjob_name} and one for TrainJob "
                f"{obj.trainjob_namespace}/{obj.trainjob_name}: in the cluster they are the same "
                "object (same namespace, kind and name)"
            )
        other = folded.setdefault(path.casefold(), path)
        if other != path:
            raise InputError.single(
                f"two rendered objects would be written to {other} and {path}, paths that "
                "differ only in case: one file on a case-insensitive filesystem (macOS, "
                "Windows); rename one"
            )
    return list(planned.items())


class OutputError(TraincError):
    """The output could not be written (exit code 2): a full disk, a read-only
    filesystem, a path below a regular file, a name the filesystem refuses. The previous
    output is left as it was."""


@contextmanager
def os_errors(directory: Path) -> Iterator[None]:
    try:
        yield
    except OSError as error:
        where = error.filename or directory
        raise OutputError(
            escape_text(
                f"cannot write the output {directory}: {where}: {error.strerror or error} "
                "(the previous output is left as it was)"
            )
        ) from None


def write_directory(
    objects: Iterable[RenderedObject],
    directory: Path,
    requirements: Iterable[SecretRequirement] = (),
    extra: Mapping[str, bytes] | None = None,
) -> int:
    """Replace ``directory`` with one file per object, atomically; returns the file count.

    ``extra``: more files by name (a cluster's ``kustomization.yaml``), not counted.
    An OS error (disk full, read-only filesystem, ...) is an :class:`OutputError`."""
    with os_errors(directory):
        return _write_directory(objects, directory, requirements, extra)


def _write_directory(
    objects: Iterable[RenderedObject],
    directory: Path,
    requirements: Iterable[SecretRequirement] = (),
    extra: Mapping[str, bytes] | None = None,
) -> int:
    files = planned_files(objects)  # before anything is written: a clash writes nothing
    requirements = list(requirements)
    text = requirements_text(requirements) if requirements else None
    with staged_directory(directory) as staging:
        _fill(staging, files, text, extra)
    return len(files)


def _fill(
    folder: Path,
    files: Iterable[tuple[str, RenderedObject]],
    requirements: str | None = None,
    extra: Mapping[str, bytes] | None = None,
) -> None:
    """Write ``files`` (relative path, object), the requirements file (its text, if
    any) and ``extra`` in ``folder``."""
    made: set[str] = set()
    for relative, obj in files:
        parent = relative.rpartition("/")[0]
        if parent not in made:
            os.makedirs(folder / parent, exist_ok=True)
            made.add(parent)
        write_new_file(f"{folder}/{relative}", dump_document(obj.data).encode("utf-8"))
    if requirements is not None:
        write_new_file(f"{folder}/requirements.yaml", requirements.encode("utf-8"))
    for name, data in (extra or {}).items():
        write_new_file(f"{folder}/{name}", data)


class MissingBlob(Exception):
    """A blob of the render cache is gone (someone pruned the cache): render again."""


def link_new_file(blob: str, path: str) -> None:
    """``path`` as a hard link to ``blob``; a copy where the filesystem cannot link
    (another device, a link limit, a filesystem without hard links)."""
    try:
        os.link(blob, path)
    except OSError as error:
        if error.errno == errno.ENOENT and not os.path.exists(blob):
            raise MissingBlob(blob) from None
        if error.errno not in (errno.EXDEV, errno.EMLINK, errno.EPERM, errno.ENOTSUP):
            raise
        with open(blob, "rb") as source:
            write_new_file(path, source.read())


def write_new_file(path: str, data: bytes) -> None:
    """Create ``path`` (it must not exist) holding ``data``: three system calls, no buffering."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(descriptor, view) :]
    finally:
        os.close(descriptor)


def check_replaceable(directory: Path) -> None:
    """Refuse to replace a non-empty directory trainc did not write (it has no marker)."""
    if directory.exists() and (
        not directory.is_dir() or (any(directory.iterdir()) and not (directory / MARKER).exists())
    ):
        raise InputError.single(
            f"{directory} exists and was not written by trainc; refusing to replace it "
            "(choose an empty or new output directory)"
        )


# Staging folders are named ``.<output>.trainc-<pid>-<random>``: a run killed before
# its swap (SIGKILL, power loss) leaves one behind, and the next run into the same output
# removes those whose process is gone, and only those that hold trainc's marker.
_STAGING = ".{name}.trainc-"


def _staging_prefix(directory: Path) -> str:
    return _STAGING.format(name=directory.name)


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: it exists, owned by someone else
        return True
    return True


def remove_stale_staging(directory: Path) -> list[Path]:
    """Remove the staging folders of ``directory`` left by trainc runs that died; returns them.

    A folder counts only if its name has trainc's staging prefix and a PID that no live
    process has, and it holds trainc's marker file (it is never anything a user made).
    """
    prefix = _staging_prefix(directory)
    removed = []
    try:
        entries = list(os.scandir(directory.parent))
    except OSError:
        return []
    for entry in entries:
        if not entry.name.startswith(prefix) or not entry.is_dir(follow_symlinks=False):
            continue
        pid_text = entry.name[len(prefix) :].partition("-")[0]
        if not pid_text.isdigit() or _process_alive(int(pid_text)):
            continue
        path = Path(entry.path)
        if not (path / MARKER).is_file():
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return removed


# Trees of more files than this are removed, once swapped out, by a process of their own
# that outlives trainc (unlinking 16,000 files costs ~0.15 s, most of an incremental
# render's time); a removal it does not finish is taken up by the next run
# (:func:`remove_stale_staging`).
BACKGROUND_REMOVAL_FILES = 2000


def remove_tree(path: Path, files: int) -> None:
    """Remove ``path``: in the background when it holds many ``files``."""
    if files > BACKGROUND_REMOVAL_FILES and os.name == "posix" and shutil.which("rm"):
        import subprocess

        subprocess.Popen(
            ["rm", "-rf", "--", str(path)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        return
    shutil.rmtree(path, ignore_errors=True)


@contextmanager
def staged_directory(directory: Path, files: int = 0) -> Iterator[Path]:
    """A fresh directory, marked as trainc's, that replaces ``directory`` whole on success.

    Written beside its final place and swapped in (:func:`_swap`); on any failure it is
    removed and ``directory`` is left as it was. Stale staging folders of killed runs
    are removed first (:func:`remove_stale_staging`). ``files``: about how many files
    the tree holds (a large old tree is removed in the background).
    """
    directory = directory.resolve()
    check_replaceable(directory)
    directory.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_staging(directory)
    staging = Path(
        tempfile.mkdtemp(prefix=f"{_staging_prefix(directory)}{os.getpid()}-", dir=directory.parent)
    )
    try:
        (staging / MARKER).write_text(MARKER_TEXT, encoding="utf-8")
        yield staging
        os.chmod(staging, 0o755)
        _swap(staging, directory, files)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


_RENAME_EXCHANGE = 2  # linux/fs.h


def _exchange(first: Path, second: Path) -> bool:
    """Swap two paths in one atomic step (Linux ``renameat2(RENAME_EXCHANGE)``); False
    where the system or the filesystem cannot."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd = -100
    result = renameat2(
        at_fdcwd, os.fsencode(first), at_fdcwd, os.fsencode(second), _RENAME_EXCHANGE
    )
    if result == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP):
        return False  # not supported here: fall back to two renames
    raise OSError(code, os.strerror(code), str(second))


def _swap(staging: Path, directory: Path, files: int = 0) -> None:
    """Put ``staging`` in ``directory``'s place.

    Where the system can (Linux, most local filesystems) the two are exchanged in one
    atomic step, so ``directory`` always exists and holds a whole tree, the old or the
    new one. Elsewhere it is two renames: for the moment between them ``directory`` does
    not exist (a reader sees no output, never a partial one).
    """
    if not directory.exists():
        staging.rename(directory)
        return
    if _exchange(staging, directory):
        remove_tree(staging, files)  # now the old tree
        return
    retired = Path(
        tempfile.mkdtemp(prefix=f"{_staging_prefix(directory)}{os.getpid()}-", dir=directory.parent)
    )
    retired.rmdir()
    directory.rename(retired)
    try:
        staging.rename(directory)
    except BaseException:
        retired.rename(directory)
        raise
    remove_tree(retired, files)


def write_project(
    results: Mapping[str, Build], directory: Path, *, whole: bool, stored: bool = False
) -> int:
    """Write ``<directory>/<cluster>/...``; returns the number of objects written.

    ``stored``: the objects as the API server stores them (``render --server-defaults``).

    ``whole``: the tree holds every cluster and is swapped in at once (clusters no
    longer in the project disappear). Otherwise only the given clusters' folders are
    replaced, each atomically, and the others stay as they are.
    """
    with os_errors(directory):
        return _write_project(results, directory, whole=whole, stored=stored)


def _write_project(
    results: Mapping[str, Build], directory: Path, *, whole: bool, stored: bool
) -> int:
    from compiler.emit.kustomization import extra_files

    directory = directory.resolve()
    check_replaceable(directory)
    count = 0
    if not whole:
        directory.mkdir(parents=True, exist_ok=True)
        (directory / MARKER).write_text(MARKER_TEXT, encoding="utf-8")
        for name, result in results.items():
            objects = result.stored_objects() if stored else result.objects
            count += _write_directory(
                objects, directory / name, result.secret_requirements, extra_files(result)
            )
        return count
    with staged_directory(directory) as staging:
        for name, result in results.items():
            objects = result.stored_objects() if stored else result.objects
            count += _write_directory(
                objects, staging / name, result.secret_requirements, extra_files(result)
            )
    return count
