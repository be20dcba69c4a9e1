"""A build put together from chunks: objects kept as blobs, summaries kept as lines.

The driver renders a large plan chunk by chunk (:mod:`compiler.plan.chunks`); each
object is serialised at once into a content-addressed blob store and only its
:class:`ObjectFile` is kept, so memory stays bounded by the chunk, not the repo. A
:class:`PartBuild` is what a plan's chunks make together: what writers
(:mod:`compiler.emit.tree`, a stream) and delivery (``trainc diff``) read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from compiler.errors import Problem
from compiler.model.plan import BuildPlan
from compiler.render.info import SecretRequirement

__all__ = ["JobSummary", "ObjectFile", "PartBuild"]


class ObjectFile(NamedTuple):
    """A rendered object, serialised: where it goes, how it sorts, which blob holds it.
    (A tuple: a 10,000-TrainJob repo has 16,667 of them to unpickle on every run.)"""

    sort_key: tuple[str, str, str, str, str]
    relative_path: str
    digest: str
    trainjob: tuple[str, str]  # namespace, name
    kind: str


class JobSummary(NamedTuple):
    """What ``trainc render`` says of one TrainJob."""

    key: tuple[str, str]  # namespace, name
    line: str
    secret_requirements: tuple[SecretRequirement, ...]
    requirement_texts: tuple[str, ...]  # their entries in requirements.yaml


@dataclass
class PartBuild:
    """A plan's render put together from its chunks (objects in the driver's blob store)."""

    plan: BuildPlan
    objects: list[ObjectFile]  # sorted as in a stream
    summaries: list[JobSummary]  # sorted by namespace, name
    warnings: list[Problem]
    notes: list[str]
    rendered: int = 0  # chunks rendered in this run (the others came from the cache)
    chunks: int = 0

    @property
    def secret_requirements(self) -> list[SecretRequirement]:
        return [r for s in self.summaries for r in s.secret_requirements]

    def requirement_entries(self) -> list[str]:
        """The entries of the requirements file, in its order (none: no Secret needed)."""
        entries = sorted(
            ((r.namespace, r.name), text)
            for s in self.summaries
            for r, text in zip(s.secret_requirements, s.requirement_texts, strict=True)
        )
        return [text for _, text in entries]
