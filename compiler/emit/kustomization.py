"""``<output>/<cluster>/kustomization.yaml``: the rendered files as one kustomize base.

With ``gitops: {kustomization: true}`` on a project cluster, ``trainc render`` writes a
``kustomization.yaml`` beside the cluster's rendered files listing every object file,
sorted, and nothing else (no transformers, no namespace, no labels), so
``kubectl kustomize rendered/<cluster>`` and a Flux ``Kustomization`` pointing at the
folder build exactly the rendered objects. ``requirements.yaml`` is not a Kubernetes
object and is not listed. (A writer, as it is a file of the output tree; the GitOps
annotations on the objects are a stage of the chain, :mod:`compiler.plan.gitops`, so
that the API server's create path and the policies see them.)

    >>> print(kustomization_text(["b/x.yaml", "a/y.yaml"]), end="")
    # rendered by trainc: every object file of this folder, nothing else
    apiVersion: kustomize.config.k8s.io/v1beta1
    kind: Kustomization
    resources:
    - a/y.yaml
    - b/x.yaml
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from compiler.emit.output import planned_files
from compiler.emit.yaml_text import dump_document

if TYPE_CHECKING:
    from compiler.model.build import Build
    from compiler.model.plan import ClusterTarget

__all__ = ["KUSTOMIZATION", "cluster_extra_files", "extra_files", "kustomization_text"]

KUSTOMIZATION = "kustomization.yaml"


def kustomization_text(resources: Iterable[str]) -> str:
    header = "# rendered by trainc: every object file of this folder, nothing else\n"
    return header + dump_document(
        {
            "apiVersion": "kustomize.config.k8s.io/v1beta1",
            "kind": "Kustomization",
            "resources": sorted(resources),
        }
    )


def extra_files(build: Build) -> dict[str, bytes]:
    """The files besides the objects a cluster's folder holds (the kustomization)."""
    return cluster_extra_files(
        build.plan.cluster, (relative for relative, _ in planned_files(build.objects))
    )


def cluster_extra_files(
    cluster: ClusterTarget | None, resources: Iterable[str]
) -> dict[str, bytes]:
    """:func:`extra_files` of a cluster folder holding the object files ``resources``."""
    if cluster is None or cluster.gitops is None or not cluster.gitops.kustomization:
        return {}
    return {KUSTOMIZATION: kustomization_text(resources).encode("utf-8")}
