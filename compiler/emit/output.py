"""Write rendered objects: one file per object under a predictable path, or one stream.

Layout of an output directory (owned by trainc: it is replaced whole on each run)::

    <namespace>/<trainjob>/<group>_<Kind>_<name>.yaml      (group ``core`` for v1 objects)
    requirements.yaml                                       (Secrets with generated data, if any)

``requirements.yaml`` lists the Secrets whose data upstream generates (SSH or curve keys):
trainc never writes key material, and ``trainc apply`` creates each one once, if absent.

The directory is written next to its final place and swapped in only when every
file is written, so a failed run leaves the previous output untouched.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compiler.emit.yaml_text import dump_document, dump_documents
from compiler.errors import InputError
from compiler.render.info import SecretRequirement

MARKER = ".trainc-output"


@dataclass(frozen=True)
class RenderedObject:
    """An object and the TrainJob it was rendered for."""

    trainjob_namespace: str
    trainjob_name: str
    data: dict[str, Any]

    @property
    def sort_key(self) -> tuple[str, str, str, str, str]:
        return (
            self.trainjob_namespace,
            self.trainjob_name,
            str(self.data.get("kind", "")),
            str(self.data.get("apiVersion", "")),
            str(self.data.get("metadata", {}).get("name", "")),
        )

    @property
    def relative_path(self) -> Path:
        api_version = str(self.data.get("apiVersion", ""))
        group = api_version.split("/")[0] if "/" in api_version else "core"
        kind = self.data.get("kind", "")
        name = self.data.get("metadata", {}).get("name", "")
        return Path(self.trainjob_namespace, self.trainjob_name, f"{group}_{kind}_{name}.yaml")


def sorted_objects(objects: Iterable[RenderedObject]) -> list[RenderedObject]:
    return sorted(objects, key=lambda o: o.sort_key)


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
        "# `trainc apply` creates each one once, if absent.\n"
    )
    return header + dump_document({"requirements": entries})


def write_directory(
    objects: Iterable[RenderedObject],
    directory: Path,
    requirements: Iterable[SecretRequirement] = (),
) -> int:
    """Replace ``directory`` with one file per object, atomically; returns the file count."""
    count = 0
    with staged_directory(directory) as staging:
        for obj in sorted_objects(objects):
            path = staging / obj.relative_path
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(dump_document(obj.data))
            count += 1
        requirements = list(requirements)
        if requirements:
            (staging / "requirements.yaml").write_text(requirements_text(requirements))
    return count


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
        (staging / MARKER).write_text("rendered by trainc; replaced whole on each run\n")
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
