"""The runtimes each Trainer release installs (its ``manifests/base/runtimes``), for
hints: a TrainJob that names ``torch-distributed`` with no such runtime among the
inputs gets the file to add, since trainc renders only what it is given (a cluster has
the release's runtimes; a repository of TrainJobs often does not)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

from compiler.apiserver.yaml_source import read_yaml
from compiler.errors import InputError, SetupError
from compiler.upstream.versions import DEFAULT_TRAINER_VERSION, TRAINER_VERSIONS

__all__ = ["RUNTIMES_FOLDER", "ReleaseRuntime", "release_runtime", "release_runtime_hint"]

RUNTIMES_FOLDER = "manifests/base/runtimes"


@dataclass(frozen=True)
class ReleaseRuntime:
    """A runtime file of a release: in the Trainer repository, and trainc's copy of it."""

    version: str
    relative: str  # e.g. manifests/base/runtimes/torch_distributed.yaml
    copy: Path


@cache
def _runtimes(version: str) -> dict[tuple[str, str], tuple[str, Path]]:
    """(kind, name) -> (file relative to the Trainer module, its path) of ``version``;
    empty when its artifacts are not set up (a hint is no reason to fail)."""
    from compiler.upstream.artifacts import upstream

    try:
        root = upstream(version).path(RUNTIMES_FOLDER)
    except SetupError:
        return {}
    out: dict[tuple[str, str], tuple[str, Path]] = {}
    for path in sorted(root.rglob("*.yaml")) if root.is_dir() else []:
        if path.name == "kustomization.yaml":
            continue
        try:
            documents = read_yaml(path)
        except (InputError, OSError):
            continue
        for document in documents:
            data = document.data if isinstance(document.data, dict) else {}
            meta = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
            kind, name = data.get("kind"), (meta or {}).get("name")
            if isinstance(kind, str) and isinstance(name, str):
                out.setdefault((kind, name), (f"{RUNTIMES_FOLDER}/{path.relative_to(root)}", path))
    return out


def release_runtime(
    kind: str, name: str, version: str = DEFAULT_TRAINER_VERSION
) -> tuple[ReleaseRuntime | None, list[str]]:
    """The runtime ``kind``/``name`` as Trainer ``version`` installs it (else as the newest
    release that has it), and every emulated release that has it."""
    releases = [v for v in TRAINER_VERSIONS if (kind, name) in _runtimes(v)]
    if not releases:
        return None, []
    chosen = version if version in releases else releases[-1]
    relative, path = _runtimes(chosen)[(kind, name)]
    return ReleaseRuntime(chosen, relative, path), releases


def release_runtime_hint(kind: str, name: str, version: str = DEFAULT_TRAINER_VERSION) -> str:
    """How to add a runtime a Trainer release installs, or "" when none does.

    >>> release_runtime_hint("ClusterTrainingRuntime", "no-such-runtime")
    ''
    """
    found, releases = release_runtime(kind, name, version)
    if found is None:
        return ""
    at = [TRAINER_VERSIONS.index(v) for v in releases]
    contiguous = len(at) > 1 and at == list(range(at[0], at[-1] + 1))
    which = f"{releases[0]} to {releases[-1]}" if contiguous else ", ".join(releases)
    # the release and the file, not trainc's copy of it: that path is this install's, and
    # the message would differ between machines (as migrate's report: compiler/migrate/nextstep.py)
    return (
        f"{name} is a runtime the Trainer release installs (kubeflow/trainer "
        f"{found.relative}, releases {which}); trainc renders only the runtimes it is given: "
        f"add that file of the release your cluster runs to the inputs (trainc.yaml "
        f"inputs.runtimes, or a PATH); trainc carries the Trainer {found.version} release's "
        f"{found.relative}"
    )
