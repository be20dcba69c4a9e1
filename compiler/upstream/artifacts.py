"""Locate the pinned upstream artifacts of each emulated Trainer release.

They are looked for in three places; the first that has the release's ``manifest.json``
wins (:func:`search_path`):

1. ``$TRAINC_CACHE/upstream/<release>/`` when ``TRAINC_CACHE`` is set: a development
   cache filled by ``scripts/fetch-upstream.sh`` (``make setup``), e.g. to try new pins;
2. the installed ``trainc-upstream`` package (``trainc_upstream/data/<release>/``), the
   data wheel trainc depends on, built by ``make dist`` (scripts/build-upstream-wheel.py):
   what an installed trainc uses, with neither Go, the network nor a cache;
3. the default cache (``$XDG_CACHE_HOME/trainc`` or ``~/.cache/trainc``): a checkout
   after ``make setup``.

Each folder holds::

    manifest.json   trainerDir (the Trainer module's files), the versions of the modules
                    it was resolved with, outputCrds (CRD name -> the CRD file of a
                    rendered kind, e.g. ``jobsets.jobset.x-k8s.io``)
    typeinfo.json   Go field facts (omitempty, pointer-ness)

A cache's manifest names folders of the Go module cache; the package's names folders
beside it (relative paths), holding only the files trainc reads.

The pinned Kueue release (``KUEUE_VERSION``) has its own folder ``kueue/<version>/`` in
the same places (:func:`kueue_upstream`): ``manifest.json`` with ``inputCrds`` (the CRDs
of the Kueue kinds read as inputs) and ``trainerVersion`` (the Trainer it embeds). The
pinned Katib release (``KATIB_VERSION``) likewise has ``katib/<version>/``
(:func:`katib_upstream`): the Experiment CRD and the release's ``katib-config.yaml``.
"""

from __future__ import annotations

import importlib.util
import json
import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from compiler.errors import SetupError
from compiler.upstream.versions import DEFAULT_TRAINER_VERSION as DEFAULT_TRAINER_VERSION
from compiler.upstream.versions import KATIB_VERSION, KUEUE_VERSION

_SETUP_HINT = (
    "install the trainc-upstream package that trainc depends on (`pip install trainc` "
    "brings it); in a trainc checkout, `make setup` fetches them with `go mod download`"
)
PACKAGE = "trainc_upstream"  # the import name of the trainc-upstream data wheel


def cache_root() -> Path:
    explicit = os.environ.get("TRAINC_CACHE")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "trainc"


def package_data() -> Path | None:
    """The ``data`` folder of the installed trainc-upstream package, or None."""
    spec = importlib.util.find_spec(PACKAGE)  # finds it without importing it
    for location in (spec.submodule_search_locations or []) if spec else []:
        data = Path(location) / "data"
        if (data / "MANIFEST.json").is_file():
            return data
    return None


def search_path(version: str) -> list[tuple[str, Path]]:
    """Where the artifacts of ``version`` are looked for, in order: (what, folder)."""
    package = package_data()
    places = [("trainc-upstream package", package / version)] if package else []
    cache_folder = ("cache", cache_root() / "upstream" / version)
    if os.environ.get("TRAINC_CACHE"):
        return [cache_folder, *places]
    return [*places, cache_folder]


def package_manifest() -> dict[str, Any] | None:
    """The installed trainc-upstream package's MANIFEST.json (versions, sums, files)."""
    data = package_data()
    if data is None:
        return None
    manifest: dict[str, Any] = json.loads((data / "MANIFEST.json").read_text(encoding="utf-8"))
    return manifest


@dataclass(frozen=True)
class Upstream:
    """Paths to the artifacts of one emulated Trainer version."""

    version: str
    trainer_dir: Path
    typeinfo_path: Path
    # CRD name -> CRD file of each rendered kind (empty when the manifest predates them)
    output_crds: tuple[tuple[str, Path], ...] = ()
    # where they were found: "trainc-upstream package" or "cache"
    source: str = ""
    # module path -> version, as the manifest records them
    modules: tuple[tuple[str, str], ...] = ()

    @property
    def manifest_path(self) -> Path:
        return self.typeinfo_path.parent / "manifest.json"

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
    """The artifacts for ``version`` (:func:`search_path` order); a clear
    :class:`SetupError` when no place has them."""
    places = search_path(version)
    for source, directory in places:
        manifest_path = directory / "manifest.json"
        if manifest_path.is_file():
            return _read_manifest(version, source, directory, manifest_path)
    looked = ", ".join(str(directory) for _, directory in places)
    if package_data() is None:
        looked += " (the trainc-upstream package is not installed)"
    raise SetupError(
        f"upstream artifacts for Trainer {version} are missing: {_SETUP_HINT} (looked in {looked})"
    )


def _read_manifest(version: str, source: str, directory: Path, manifest_path: Path) -> Upstream:
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    # a cache's paths are absolute, the package's relative to its folder
    trainer_dir = directory / manifest["trainerDir"]
    if not (trainer_dir / "manifests").is_dir():
        raise SetupError(f"the Trainer module at {trainer_dir} is gone: {_SETUP_HINT}")
    output_crds = tuple(
        (name, directory / path)
        for name, path in sorted((manifest.get("outputCrds") or {}).items())
    )
    modules = tuple(sorted((manifest.get("modules") or {}).items()))
    return Upstream(
        version,
        trainer_dir,
        directory / "typeinfo.json",
        output_crds,
        source=source,
        modules=modules,
    )


@cache
def load_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def describe(versions: tuple[str, ...]) -> list[str]:
    """Lines for ``trainc --version``: the data package, then each release with the
    module versions its artifacts were built from and where they were found."""
    manifest = package_manifest()
    data = package_data()
    if manifest is None:
        lines = ["upstream artifacts: the trainc-upstream package is not installed"]
    else:
        lines = [f"upstream artifacts: trainc-upstream {manifest.get('version')} ({data})"]
    for version in versions:
        try:
            found = upstream(version)
        except SetupError:
            lines.append(f"Trainer {version}: missing")
            continue
        modules = ", ".join(f"{path} {module}" for path, module in found.modules)
        lines.append(f"Trainer {version} ({found.source}): {modules}")
    return lines


@dataclass(frozen=True)
class KueueUpstream:
    """The pinned Kueue release's artifacts: the CRDs of its input kinds."""

    version: str
    # the Trainer release it embeds (its go.mod), which computes TrainJob Workloads
    trainer_version: str
    # CRD name -> CRD file (``clusterqueues.kueue.x-k8s.io`` -> ...)
    input_crds: tuple[tuple[str, Path], ...]
    source: str = ""

    def input_crd_paths(self) -> list[Path]:
        missing = [str(path) for _, path in self.input_crds if not path.is_file()]
        if missing:
            raise SetupError(f"Kueue CRD files are gone: {', '.join(missing)}: {_SETUP_HINT}")
        return [path for _, path in self.input_crds]


def kueue_search_path(version: str) -> list[tuple[str, Path]]:
    """Where Kueue ``version``'s artifacts are looked for, in :func:`search_path` order."""
    return [(what, folder.parent / "kueue" / version) for what, folder in search_path(version)]


@cache
def kueue_upstream(version: str = KUEUE_VERSION) -> KueueUpstream:
    """Kueue ``version``'s artifacts; a clear :class:`SetupError` when none has them."""
    places = kueue_search_path(version)
    for source, directory in places:
        manifest_path = directory / "manifest.json"
        if manifest_path.is_file():
            manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
            crds = tuple(
                (name, directory / path)
                for name, path in sorted((manifest.get("inputCrds") or {}).items())
            )
            return KueueUpstream(version, str(manifest["trainerVersion"]), crds, source)
    looked = ", ".join(str(directory) for _, directory in places)
    raise SetupError(
        f"upstream artifacts for Kueue {version} are missing: {_SETUP_HINT} (looked in {looked})"
    )


@dataclass(frozen=True)
class KatibUpstream:
    """The pinned Katib release's artifacts: the Experiment CRD and its katib-config.yaml."""

    version: str
    input_crds: tuple[tuple[str, Path], ...]
    # the release's standalone katib-config.yaml: the algorithms and collectors it runs
    katib_config: Path
    source: str = ""

    def input_crd_paths(self) -> list[Path]:
        missing = [str(path) for _, path in self.input_crds if not path.is_file()]
        if not self.katib_config.is_file():
            missing.append(str(self.katib_config))
        if missing:
            raise SetupError(f"Katib files are gone: {', '.join(missing)}: {_SETUP_HINT}")
        return [path for _, path in self.input_crds]


@cache
def katib_upstream(version: str = KATIB_VERSION) -> KatibUpstream:
    """Katib ``version``'s artifacts; a clear :class:`SetupError` when none has them."""
    places = [(what, folder.parent / "katib" / version) for what, folder in search_path(version)]
    for source, directory in places:
        manifest_path = directory / "manifest.json"
        if manifest_path.is_file():
            manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
            crds = tuple(
                (name, directory / path)
                for name, path in sorted((manifest.get("inputCrds") or {}).items())
            )
            config = directory / str(manifest["katibConfig"])
            return KatibUpstream(version, crds, config, source)
    looked = ", ".join(str(directory) for _, directory in places)
    raise SetupError(
        f"upstream artifacts for Katib {version} are missing: {_SETUP_HINT} (looked in {looked})"
    )
