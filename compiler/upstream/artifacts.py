"""Locate the pinned upstream artifacts in the cache that setup fills.

Cache layout (``$TRAINC_CACHE``, default ``$XDG_CACHE_HOME/trainc`` or ``~/.cache/trainc``)::

    upstream/<trainer version>/manifest.json   written by scripts/fetch-upstream.sh
    upstream/<trainer version>/typeinfo.json   Go field facts (omitempty, pointer-ness)

``manifest.json`` records where the Go module cache holds the Kubeflow Trainer module
(``trainerDir``), the versions of the modules it was resolved with, and the CRD files
of the rendered kinds (``outputCrds``: CRD name -> file, e.g. ``jobsets.jobset.x-k8s.io``).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from compiler.errors import SetupError
from compiler.upstream.versions import DEFAULT_TRAINER_VERSION as DEFAULT_TRAINER_VERSION

_SETUP_HINT = "run `make setup` (it fetches the pinned upstream modules with `go mod download`)"


def cache_root() -> Path:
    explicit = os.environ.get("TRAINC_CACHE")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "trainc"


@dataclass(frozen=True)
class Upstream:
    """Paths to the artifacts of one emulated Trainer version."""

    version: str
    trainer_dir: Path
    typeinfo_path: Path
    # CRD name -> CRD file of each rendered kind (empty when the manifest predates them)
    output_crds: tuple[tuple[str, Path], ...] = ()

    @property
    def crd_dir(self) -> Path:
        return self.trainer_dir / "manifests" / "base" / "crds"

    def crd_path(self, plural: str) -> Path:
        """``trainjobs`` -> the TrainJob CRD file."""
        return self.crd_dir / f"trainer.kubeflow.org_{plural}.yaml"

    @property
    def openapi_path(self) -> Path:
        """OpenAPI v3 document with Trainer, JobSet and core types (patch strategies, merge keys)."""
        return self.trainer_dir / "api" / "openapi-spec" / "swagger.json"

    def path(self, relative: str) -> Path:
        """A file of the Trainer module, e.g. ``manifests/base/runtimes/torch_distributed.yaml``."""
        return self.trainer_dir / relative

    def output_crd_paths(self) -> list[Path]:
        """The CRD files of the rendered kinds (JobSet, PodGroup), for output validation."""
        if not self.output_crds:
            raise SetupError(
                f"the upstream manifest of Trainer {self.version} lists no output CRDs: "
                + _SETUP_HINT
            )
        missing = [str(path) for _, path in self.output_crds if not path.is_file()]
        if missing:
            raise SetupError(f"CRD files are gone: {', '.join(missing)}: {_SETUP_HINT}")
        return [path for _, path in self.output_crds]


@cache
def upstream(version: str = DEFAULT_TRAINER_VERSION) -> Upstream:
    """The artifacts for ``version``; a clear :class:`SetupError` when setup has not run."""
    directory = cache_root() / "upstream" / version
    manifest_path = directory / "manifest.json"
    if not manifest_path.is_file():
        raise SetupError(f"upstream artifacts for Trainer {version} are missing: {_SETUP_HINT}")
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    trainer_dir = Path(manifest["trainerDir"])
    if not (trainer_dir / "manifests").is_dir():
        raise SetupError(f"the Trainer module at {trainer_dir} is gone: {_SETUP_HINT}")
    output_crds = tuple(
        (name, Path(path)) for name, path in sorted((manifest.get("outputCrds") or {}).items())
    )
    return Upstream(version, trainer_dir, directory / "typeinfo.json", output_crds)


@cache
def load_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))
