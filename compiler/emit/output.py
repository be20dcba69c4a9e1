"""Write rendered objects: one file per object under a predictable path, or one stream.

Layout of an output directory (owned by trainc: it is replaced whole on each run)::

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
file is written, so a failed run leaves the previous output untouched.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from compiler.emit.yaml_text import dump_document, dump_documents
from compiler.errors import InputError
from compiler.plan.compile import RenderedObject, sorted_objects
from compiler.plan.stages import Build
from compiler.render.info import SecretRequirement

MARKER = ".trainc-output"


def stream_text(objects: Iterable[RenderedObject]) -> str:
    """One multi-document YAML stream, sorted by namespace, TrainJob, kind and name."""
    return dump_documents(o.data for o in sorted_objects(objects))


def requirements_text(requirements: Iterable[SecretRequirement]) -> str:
    """The requirements file: plain data for the apply step, not Kubernetes objects."""
    entries = [
        {
            "kind": "Secret",
            "namespace": r.namespace,
            "name": r.name,
            **({"type": r.type} if r.type else {}),
            "keys": list(r.keys),
            "generator": r.generator,
            "immutable": r.immutable,
        }
        for r in sorted(requirements, key=lambda r: (r.namespace, r.name))
    ]
    header = (
        "# Secrets with generated key material that trainc never renders;\n"
        "# create each one once, if absent, with the generator it names.\n"
    )
    return header + dump_document({"requirements": entries})


def planned_files(objects: Iterable[RenderedObject]) -> list[tuple[str, RenderedObject]]:
    """Each object with its relative path, in stream order; two objects on one path are an error.

    Such a pair would be one object in the cluster, each apply overwriting the other.
    """
    planned: dict[str, RenderedObject] = {}
    for obj in sorted_objects(objects):
        path = obj.relative_path
        folder, _, name = path.partition("/")
        if folder in ("", ".", "..") or "/" in name or "\0" in path:
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
    return list(planned.items())


def write_directory(
    objects: Iterable[RenderedObject],
    directory: Path,
    requirements: Iterable[SecretRequirement] = (),
) -> int:
    """Replace ``directory`` with one file per object, atomically; returns the file count."""
    files = planned_files(objects)  # before anything is written: a clash writes nothing
    requirements = list(requirements)
    with staged_directory(directory) as staging:
        made: set[str] = set()
        for relative, obj in files:
            folder = relative.rpartition("/")[0]
            if folder not in made:
                os.makedirs(staging / folder, exist_ok=True)
                made.add(folder)
            _write_new_file(f"{staging}/{relative}", dump_document(obj.data).encode("utf-8"))
        if requirements:
            _write_new_file(
                f"{staging}/requirements.yaml", requirements_text(requirements).encode("utf-8")
            )
    return len(files)


def _write_new_file(path: str, data: bytes) -> None:
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


@contextmanager
def staged_directory(directory: Path) -> Iterator[Path]:
    """A fresh directory, marked as trainc's, that replaces ``directory`` whole on success.

    Written beside its final place and renamed in; on any failure it is removed and
    ``directory`` is left as it was.
    """
    directory = directory.resolve()
    check_replaceable(directory)
    directory.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{directory.name}.", dir=directory.parent))
    try:
        (staging / MARKER).write_text(
            "rendered by trainc; replaced whole on each run\n", encoding="utf-8"
        )
        yield staging
        os.chmod(staging, 0o755)
        _swap(staging, directory)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _swap(staging: Path, directory: Path) -> None:
    if not directory.exists():
        staging.rename(directory)
        return
    retired = Path(tempfile.mkdtemp(prefix=f".{directory.name}.old.", dir=directory.parent))
    retired.rmdir()
    directory.rename(retired)
    try:
        staging.rename(directory)
    except BaseException:
        retired.rename(directory)
        raise
    shutil.rmtree(retired, ignore_errors=True)


def write_project(results: Mapping[str, Build], directory: Path, *, whole: bool) -> int:
    """Write ``<directory>/<cluster>/...``; returns the number of objects written.

    ``whole``: the tree holds every cluster and is swapped in at once (clusters no
    longer in the project disappear). Otherwise only the given clusters' folders are
    replaced, each atomically, and the others stay as they are.
    """
    directory = directory.resolve()
    check_replaceable(directory)
    count = 0
    if not whole:
        directory.mkdir(parents=True, exist_ok=True)
        (directory / MARKER).write_text(
            "rendered by trainc; replaced whole on each run\n", encoding="utf-8"
        )
        for name, result in results.items():
            count += write_directory(result.objects, directory / name, result.secret_requirements)
        return count
    with staged_directory(directory) as staging:
        for name, result in results.items():
            count += write_directory(result.objects, staging / name, result.secret_requirements)
    return count
