"""The build plans of a command: what it works on, decided once.

A command line with PATHs gives one plan; without PATHs the project file
(``trainc.yaml``) gives one plan per cluster, carrying that cluster's overlays,
policies, schedulers and namespaces (the record, :class:`compiler.model.plan.BuildPlan`).
Every verb takes its plans from here and hands them to the driver
(:mod:`compiler.plan.driver`); none re-decides between paths and project.

    >>> plan = plan_for_paths(["jobs/"])
    >>> (plan.cluster_name, plan.default_namespace, plan.trainer_version)
    (None, 'default', 'v2.3.0')
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from compiler.errors import UsageError
from compiler.model.plan import BuildPlan, ClusterTarget
from compiler.render.framework import RenderOptions
from compiler.upstream.versions import DEFAULT_KUBERNETES, DEFAULT_TRAINER_VERSION

if TYPE_CHECKING:  # the project file's model (pydantic) loads only when a project is used
    from compiler.project import Project

__all__ = ["plan_for_paths", "plans_for_project", "select_project"]


def plan_for_paths(
    paths: Sequence[str],
    *,
    default_namespace: str = "default",
    schemas: Path | None = None,
    owner_uid: str | None = None,
    strict: bool = False,
    previous: Sequence[Path] | None = None,
    kubernetes: tuple[int, int] = DEFAULT_KUBERNETES,
    trainer_version: str = DEFAULT_TRAINER_VERSION,
) -> BuildPlan:
    """The plan of a command given PATHs."""
    return BuildPlan(
        inputs=tuple(paths),
        default_namespace=default_namespace,
        trainer_version=trainer_version,
        schemas=schemas,
        render=RenderOptions(owner_uid=owner_uid, trainer_version=trainer_version),
        strict=strict,
        previous=None if previous is None else tuple(previous),
        kubernetes=kubernetes,
    )


def plans_for_project(
    project: Project,
    clusters: Iterable[str] | None = None,
    *,
    schemas: Path | None = None,
    owner_uid: str | None = None,
    strict: bool = False,
) -> list[BuildPlan]:
    """One plan per cluster (those named, in project order; default: every cluster).

    An unknown name is an InputError at the project's ``clusters`` list.
    """
    from compiler.apiserver.crds import parse_kubernetes_version

    wanted = None if clusters is None else list(clusters)
    for name in wanted or ():
        project.cluster(name)  # raises for an unknown name
    inputs = tuple(project.input_files())
    return [
        BuildPlan(
            inputs=inputs,
            policies=tuple(project.policy_files(cluster)),
            default_namespace=cluster.default_namespace,
            trainer_version=cluster.trainer,
            schemas=schemas,
            render=RenderOptions(owner_uid=owner_uid, trainer_version=cluster.trainer),
            strict=strict,
            cluster=ClusterTarget.of(project, cluster),
            kubernetes=(
                DEFAULT_KUBERNETES
                if cluster.kubernetes is None
                else parse_kubernetes_version(cluster.kubernetes)
            ),
        )
        for cluster in project.clusters
        if wanted is None or cluster.name in wanted
    ]


def select_project(
    command: str, given: Path | None, start: Path | None = None, root: Path | None = None
) -> Project:
    """The project of a command given no PATHs: ``given`` (``--project``), else the
    nearest ``trainc.yaml`` from ``start`` (default: the working directory) up to the
    repository root (or ``root``); a UsageError when there is none. ``root``: what its
    paths must stay inside (default: its repository; see :mod:`compiler.load.confine`)."""
    from compiler.project import find_project, load_project

    start = start or Path.cwd()
    path = given if given is not None else find_project(start, root)
    if path is None:
        raise UsageError(
            f"trainc {command}: no PATH given and no trainc.yaml found from "
            f"{start} up to the repository root (give PATHs or --project FILE)"
        )
    return load_project(path, root)
