"""The build plan: what one command works on, decided once.

A command line with PATHs gives one plan; without PATHs the project file
(``trainc.yaml``) gives one plan per cluster, carrying that cluster's overlays,
policies, schedulers and namespaces. Every verb takes its plans from here and hands
each to the stage chain (:mod:`compiler.plan.stages`); none re-decides between paths
and project.

    >>> plan = BuildPlan(inputs=("jobs/",))
    >>> (plan.cluster_name, plan.default_namespace, plan.trainer_version)
    (None, 'default', 'v2.3.0')
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from compiler.apiserver.crds import (
    DEFAULT_KUBERNETES,
    CrdSet,
    crds_with_schemas_from,
    parse_kubernetes_version,
    trainer_crds,
)
from compiler.errors import UsageError
from compiler.render.framework import RenderOptions
from compiler.upstream.versions import DEFAULT_TRAINER_VERSION

if TYPE_CHECKING:  # the project file's model (pydantic) loads only when a project is used
    from compiler.load.confine import Root
    from compiler.project import Project
    from compiler.project.model import ApplySetSetting, Cluster, GitOps

__all__ = [
    "BuildPlan",
    "ClusterTarget",
    "plan_for_paths",
    "plans_for_project",
    "select_project",
]


OverlayLayer = tuple[str | None, tuple[str, ...]]


@dataclass(frozen=True)
class ClusterTarget:
    """One cluster of a project, as a build sees it."""

    name: str
    project_file: Path
    output: Path  # the project's output folder (the cluster renders into output/<name>)
    # None: the project does not say, so nothing is checked; () : no gang scheduler, no Kueue
    schedulers: tuple[str, ...] | None = None
    # declared namespaces with their labels (for policies' namespaceSelector)
    namespaces: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    # (namespace or None, overlay paths), in layer order base -> cluster -> namespace
    overlay_layers: tuple[OverlayLayer, ...] = ()
    delivery: str = "resolved"  # resolved | trainjobs: what apply pushes
    # delivery hints for GitOps controllers (compiler.plan.gitops); None: none set
    gitops: GitOps | None = None
    # opt-in extensions the cluster enables (compiler.render.extensions)
    extensions: tuple[str, ...] = ()
    # trainc apply's ApplySet (defaults filled in); apply-only, so not in the repr
    applyset: ApplySetSetting | None = field(default=None, repr=False)
    # resolved JobSets go to Kueue's JobSet integration (compiler.queue.delivery)
    kueue_jobsets: bool = False
    kueue_version: str | None = None  # the Kueue release the cluster runs, if declared
    # what the paths the overlays name stay inside (compiler.load.confine); not in the
    # repr, which keys the render cache: where the repository is changes no output
    root: Root | None = field(default=None, repr=False)

    def has_scheduler(self, scheduler: str) -> bool | None:
        """Whether the cluster runs ``scheduler``; None when the project does not say."""
        return None if self.schedulers is None else scheduler in self.schedulers

    @classmethod
    def of(cls, project: Project, cluster: Cluster) -> ClusterTarget:
        return cls(
            name=cluster.name,
            project_file=project.path,
            output=project.output,
            schedulers=None if cluster.schedulers is None else tuple(cluster.schedulers),
            namespaces=project.namespace_labels(cluster),
            overlay_layers=tuple(
                (namespace, tuple(paths)) for namespace, paths in project.overlay_layers(cluster)
            ),
            delivery=cluster.delivery,
            gitops=cluster.gitops,
            extensions=tuple(cluster.extensions),
            applyset=cluster.resolved_applyset(),
            kueue_jobsets=cluster.kueue.job_sets,
            kueue_version=cluster.kueue.version,
            root=project.confinement,
        )


@dataclass(frozen=True)
class BuildPlan:
    """The inputs of one build and everything that is not in them."""

    inputs: tuple[
        str, ...
    ]  # files, folders or '-' (stdin): runtimes, jobs, and in paths mode policies
    policies: tuple[str, ...] = ()  # a project cluster's policy files: checked, never rendered
    default_namespace: str = "default"
    trainer_version: str = DEFAULT_TRAINER_VERSION
    schemas: Path | None = None  # --schemas DIR: CRDs exported from a cluster
    render: RenderOptions = field(default_factory=RenderOptions)
    strict: bool = False  # an overlay target that matches nothing is an error
    # --previous: the inputs as a previous revision had them; objects found there make
    # the load an update, so the CRDs' transition rules (oldSelf) run
    previous: tuple[Path, ...] | None = None
    cluster: ClusterTarget | None = None
    # the target cluster's Kubernetes (major, minor): the API server's message texts
    kubernetes: tuple[int, int] = DEFAULT_KUBERNETES
    # check --trials N --seed S: seeded random Katib trials on top of the corners
    katib_samples: tuple[int, int] = (0, 0)

    def __post_init__(self) -> None:
        if self.render.trainer_version != self.trainer_version:
            raise ValueError("the render options name another Trainer version than the plan")

    def for_trainer(self, version: str) -> BuildPlan:
        """The same build on a cluster running Trainer ``version``."""
        return replace(
            self, trainer_version=version, render=replace(self.render, trainer_version=version)
        )

    @property
    def cluster_name(self) -> str | None:
        return None if self.cluster is None else self.cluster.name

    @cached_property
    def crds(self) -> CrdSet:
        """The Trainer CRDs of the emulated version, replaced kind by kind by ``schemas``."""
        if self.schemas is not None:
            crds = crds_with_schemas_from(self.schemas, self.trainer_version)
        else:
            crds = trainer_crds(self.trainer_version)
        return crds.served_by(self.kubernetes)


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
