"""The Kubeflow Trainer releases trainc emulates, and the gates that tell them apart.

A cluster of ``trainc.yaml`` names the release it runs (``trainer: v2.2.0``); the build
plan carries it to load (the release's CRDs), admission and render. Each behaviour
that differs between releases is one :class:`Gate`, declared at the top of the module
that implements it (one place per plugin); docs/trainer-versions.md is the table of
every difference, measured by reading the releases' sources, and names each gate.

    >>> MPI_SSH_FILE_MODES = Gate("v2.3.0", "SSH Secret volume file modes")
    >>> MPI_SSH_FILE_MODES.on("v2.2.0"), MPI_SSH_FILE_MODES.on("v2.3.0")
    (False, True)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Generic, TypeVar

__all__ = [
    "DEFAULT_KUBERNETES",
    "DEFAULT_TRAINER_VERSION",
    "KATIB_VERSION",
    "KUEUE_TRAINER_VERSIONS",
    "KUEUE_VERSION",
    "MEASURED_TRAINER_VERSIONS",
    "TRAINER_VERSIONS",
    "Gate",
    "PerVersion",
    "version_key",
]

DEFAULT_TRAINER_VERSION = "v2.3.0"
# The Kubernetes version whose API server trainc emulates unless told otherwise: the one
# the live conformance oracle runs (tests/live). A cluster's ``kubernetes:`` in
# trainc.yaml (or ``--kubernetes``) chooses another; it changes message texts only.
# (Here, not in compiler.apiserver.crds, so that a build plan is made without the CRDs.)
DEFAULT_KUBERNETES: tuple[int, int] = (1, 34)
# The releases trainc renders for, oldest first: each has its artifacts in the cache
# (scripts/fetch-upstream.sh) and its own conformance oracle build.
TRAINER_VERSIONS: tuple[str, ...] = ("v2.0.0", "v2.1.0", "v2.2.0", "v2.3.0")
# Releases whose differences docs/trainer-versions.md records; those not in
# TRAINER_VERSIONS are refused with a message saying so.
MEASURED_TRAINER_VERSIONS: tuple[str, ...] = ("v2.0.0", "v2.1.0", "v2.2.0", "v2.3.0")

# The Kueue release whose Workloads and admission trainc computes: the newest the Go module
# proxy serves, fetched by scripts/fetch-upstream.sh (KUEUE_VERSION there too).
KUEUE_VERSION = "v0.17.0"
# The Trainer release each Kueue release embeds (its go.mod's github.com/kubeflow/trainer/v2):
# Kueue's TrainJob integration computes a Workload's PodSets with that release's code.
KUEUE_TRAINER_VERSIONS: dict[str, str] = {"v0.17.0": "v2.2.0"}

# The Katib release whose Experiment webhooks and trial manifests trainc emulates: the first
# with TrainJob trials, fetched by scripts/fetch-upstream.sh (KATIB_VERSION there too).
KATIB_VERSION = "v0.19.0"

T = TypeVar("T")

_VERSION = re.compile(r"^v(\d+)\.(\d+)\.(\d+)$")


@cache  # asked for each gate a render passes (tens of thousands of times at 1,000 TrainJobs)
def version_key(version: str) -> tuple[int, int, int]:
    """``"v2.10.0"`` -> ``(2, 10, 0)``, for ordering releases.

    >>> version_key("v2.10.0") > version_key("v2.3.0")
    True
    """
    match = _VERSION.match(version)
    if match is None:
        raise ValueError(f"{version!r} is not a release version (vMAJOR.MINOR.PATCH)")
    major, minor, patch = match.groups()
    return int(major), int(minor), int(patch)


@dataclass(frozen=True)
class Gate:
    """A behaviour that exists from release ``since`` on (``what`` says which)."""

    since: str
    what: str

    def __post_init__(self) -> None:
        version_key(self.since)  # a typo in a gate fails at import, not at render

    def on(self, version: str) -> bool:
        """Whether Trainer ``version`` has the behaviour."""
        return version_key(version) >= version_key(self.since)


@dataclass(frozen=True)
class PerVersion(Generic[T]):
    """A value that changed between releases: ``(since, value)`` pairs, oldest first.

    >>> url = PerVersion((("v2.1.0", "old"), ("v2.3.0", "new")))
    >>> url.at("v2.2.0"), url.at("v2.3.0")
    ('old', 'new')
    """

    values: tuple[tuple[str, T], ...]

    def at(self, version: str) -> T:
        key = version_key(version)
        chosen = [value for since, value in self.values if version_key(since) <= key]
        if not chosen:
            raise ValueError(f"no value for Trainer {version}")
        return chosen[-1]
