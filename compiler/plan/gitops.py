"""Delivery hints for GitOps controllers: a stage that annotates every rendered object.

A project cluster's ``gitops:`` block (:class:`compiler.project.model.GitOps`) turns
each hint on; with none set (the default) this stage changes nothing::

    syncWaves: true               argocd.argoproj.io/sync-wave: "-1" on everything but
                                  the workload, "0" on JobSets, TrainJobs and Katib
                                  Experiments, so PodGroups, ConfigMaps and runtimes
                                  exist first
    serverSideApply: true         argocd.argoproj.io/sync-options: ServerSideApply=true
    immutableChange: replace      ... Replace=true        (kubectl replace/create)
    immutableChange: force-replace ... Force=true,Replace=true (delete and recreate)
    fluxSubstitute: disabled      kustomize.toolkit.fluxcd.io/substitute: disabled

``Replace`` and ``Force`` are destructive: a replaced JobSet restarts its pods from
scratch. The stage runs after the output overlays and before the API server's create
path, so the annotations are validated and policies see them: that is why it is a stage
of the chain here, not a writer (the kustomization the same ``gitops:`` block asks for
is a file of the output tree: :mod:`compiler.emit.kustomization`).

:func:`substitution_warnings` warns (rule ``gitops``) about a rendered container
command or argument holding ``${``: Flux's ``postBuild`` substitution would replace it
(an unset variable becomes the empty string) unless ``fluxSubstitute: disabled``.

    >>> from compiler.project.model import GitOps
    >>> hint_annotations(GitOps(sync_waves=True, server_side_apply=True,
    ...                    immutable_change="force-replace"), "JobSet")
    {'argocd.argoproj.io/sync-wave': '0', 'argocd.argoproj.io/sync-options': 'ServerSideApply=true,Force=true,Replace=true'}
    >>> hint_annotations(GitOps(sync_waves=True), "PodGroup")
    {'argocd.argoproj.io/sync-wave': '-1'}
    >>> hint_annotations(GitOps(), "JobSet")
    {}
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from compiler.errors import Problem, SourceLocation

if TYPE_CHECKING:
    from compiler.model.build import Build
    from compiler.model.objects import TrainJobSummary
    from compiler.project.model import GitOps

__all__ = [
    "FLUX_SUBSTITUTE",
    "SYNC_OPTIONS",
    "SYNC_WAVE",
    "annotate_for_gitops",
    "hint_annotations",
    "substitution_warnings",
]

SYNC_WAVE = "argocd.argoproj.io/sync-wave"
SYNC_OPTIONS = "argocd.argoproj.io/sync-options"
FLUX_SUBSTITUTE = "kustomize.toolkit.fluxcd.io/substitute"

# The workload kinds: created last (wave 0), after what they use (wave -1). A Katib
# Experiment is one: Katib's webhook refuses it while its trial template's ConfigMap is
# missing, and its trials use the runtimes.
WORKLOAD_KINDS = frozenset({"JobSet", "TrainJob", "Experiment"})
_IMMUTABLE_OPTIONS = {"replace": "Replace=true", "force-replace": "Force=true,Replace=true"}


def hint_annotations(gitops: GitOps, kind: str) -> dict[str, str]:
    """The annotations ``gitops`` puts on an object of ``kind``."""
    out: dict[str, str] = {}
    if gitops.sync_waves:
        out[SYNC_WAVE] = "0" if kind in WORKLOAD_KINDS else "-1"
    options = []
    if gitops.server_side_apply:
        options.append("ServerSideApply=true")
    if gitops.immutable_change is not None:
        options.append(_IMMUTABLE_OPTIONS[gitops.immutable_change])
    if options:
        out[SYNC_OPTIONS] = ",".join(options)
    if gitops.flux_substitute == "disabled":
        out[FLUX_SUBSTITUTE] = "disabled"
    return out


def _annotated(data: dict[str, Any], extra: dict[str, str]) -> dict[str, Any]:
    metadata = dict(data.get("metadata") or {})
    metadata["annotations"] = {**(metadata.get("annotations") or {}), **extra}
    return {**data, "metadata": metadata}


def annotate_objects(build: Build) -> None:
    """Add the cluster's GitOps annotations to every object the build delivers (the
    resolved objects, or with ``--emit trainjobs`` the TrainJobs and runtimes)."""
    cluster = build.plan.cluster
    gitops = cluster.gitops if cluster is not None else None
    if gitops is None:
        return
    for summary in build.summaries:
        objects = []
        for obj in summary.objects:
            extra = hint_annotations(gitops, str(obj.data.get("kind", "")))
            objects.append(replace(obj, data=_annotated(obj.data, extra)) if extra else obj)
        summary.objects = objects


def annotate_for_gitops(build: Build) -> None:
    """The stage: annotate every rendered object, and warn where Flux would substitute.

    Reads ``plan.cluster``, ``summaries``; replaces each summary's ``objects``; adds
    ``warnings``."""
    cluster = build.plan.cluster
    if cluster is None or cluster.gitops is None:
        return
    annotate_objects(build)
    build.warnings += substitution_warnings(build)


def _commands(data: dict[str, Any]) -> Iterator[tuple[tuple[str | int, ...], str]]:
    """Every container command and args string of a JobSet or TrainJob, with its path."""

    def containers(pod_spec: Any, path: tuple[str | int, ...]) -> Iterator[tuple[Any, ...]]:
        if not isinstance(pod_spec, dict):
            return
        for list_name in ("initContainers", "containers"):
            for index, container in enumerate(pod_spec.get(list_name) or []):
                yield (*path, list_name, index), container

    spec = data.get("spec") or {}
    found: list[tuple[tuple[str | int, ...], Any]] = []
    for index, job in enumerate(spec.get("replicatedJobs") or []):
        pod = (((job or {}).get("template") or {}).get("spec") or {}).get("template") or {}
        base: tuple[str | int, ...] = ("spec", "replicatedJobs", index)
        path = (*base, "template", "spec", "template", "spec")
        found += list(containers(pod.get("spec"), path))
    trainer = spec.get("trainer")
    if isinstance(trainer, dict):
        found.append((("spec", "trainer"), trainer))
    for path, container in found:
        if not isinstance(container, dict):
            continue
        for key in ("command", "args"):
            for index, item in enumerate(container.get(key) or []):
                if isinstance(item, str):
                    yield (*path, key, index), item


def _field(path: tuple[str | int, ...]) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def _origin(
    summary: TrainJobSummary, data: dict[str, Any], path: tuple[str | int, ...], text: str
) -> SourceLocation:
    """Where ``text`` came from: the TrainJob's trainer command or args holding it, else
    the input provenance finds for the field."""
    from compiler.provenance.locate import locate_output

    trainjob = summary.trainjob
    assert trainjob is not None
    trainer = (trainjob.data.get("spec") or {}).get("trainer") or {}
    for key in ("command", "args"):
        items = trainer.get(key) or [] if isinstance(trainer, dict) else []
        if text in items:
            return trainjob.locate(("spec", "trainer", key, items.index(text)))
    return locate_output(data, path, trainjob, summary.runtime)


def substitution_warnings(build: Build) -> list[Problem]:
    """A warning per rendered command holding ``${`` when Flux substitution is not off."""
    cluster = build.plan.cluster
    gitops = cluster.gitops if cluster is not None else None
    if cluster is None or (gitops is not None and gitops.flux_substitute == "disabled"):
        return []
    from compiler.model.objects import RenderedObject

    warnings = []
    for summary in build.summaries:
        if summary.trainjob is None:
            continue
        for obj in summary.objects:
            assert isinstance(obj, RenderedObject)
            for path, text in _commands(obj.data):
                if "${" not in text:
                    continue
                metadata = obj.data.get("metadata") or {}
                warnings.append(
                    Problem(
                        f"{obj.data.get('kind')} {metadata.get('name')}: {_field(path)} holds "
                        f"{text!r}: Flux's postBuild substitution would replace its ${{...}} "
                        "(an unset variable becomes an empty string); set `gitops: "
                        f"{{fluxSubstitute: disabled}}` for cluster {cluster.name!r} in "
                        f"{cluster.project_file} if Flux deploys it",
                        _origin(summary, obj.data, path, text),
                        summary.trainjob.ref,
                        None,
                        "gitops",
                        stage="output",
                    )
                )
                break  # one warning per object
    return warnings
