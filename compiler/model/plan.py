"""The build plan: what one build works on (its inputs, its cluster, its options).

A record made once per command (PATHs give one plan; a project one per cluster:
:mod:`compiler.plan.build_plan` makes them) and read by every stage of the chain and by
the writers after it (a cluster's output folder, its GitOps hints).

    >>> plan = BuildPlan(inputs=("jobs/",))
    >>> (plan.cluster_name, plan.default_namespace, plan.trainer_version)
    (None, 'default', 'v2.3.0')
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from compiler.render.framework import RenderOptions
from compiler.upstream.versions import DEFAULT_KUBERNETES, DEFAULT_TRAINER_VERSION

if TYPE_CHECKING:  # the project file's model (pydantic) loads only when a project is used
    from compiler.apiserver.crds import CrdSet  # a run from the cache needs no CRDs
    from compiler.load.confine import Root
    from compiler.project import Project
    from compiler.project.model import ApplySetSetting, Cluster, GitOps

__all__ = ["DELIVERIES", "BuildPlan", "ClusterTarget", "OverlayLayer"]

# What a cluster is delivered as: the objects the controller makes, or the TrainJobs and
# runtimes themselves (``delivery:`` in trainc.yaml, ``--delivery`` of argocd generate).
DELIVERIES = ("resolved", "trainjobs")


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
    delivery: str = "resolved"  # one of DELIVERIES: what apply pushes
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
        from compiler.apiserver.crds import crds_with_schemas_from, trainer_crds

        if self.schemas is not None:
            crds = crds_with_schemas_from(self.schemas, self.trainer_version)
        else:
            crds = trainer_crds(self.trainer_version)
        return crds.served_by(self.kubernetes)
