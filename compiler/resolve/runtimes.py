"""Find the runtime a TrainJob references (R-1.2, R-1.3).

A ``TrainingRuntime`` is looked up in the TrainJob's namespace, a ``ClusterTrainingRuntime``
by name. Any other kind or group is unsupported, as upstream says::

    unsupported runtime: Foo.example.com
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from compiler.apiserver.manifest import Manifest
from compiler.errors import Problem
from compiler.kube.fielderror import error_body, field_type, go_value
from compiler.resolve.release_runtimes import release_runtime_hint
from compiler.upstream.names import (
    CLUSTER_TRAINING_RUNTIME_KIND,
    TRAINER_GROUP,
    TRAINING_RUNTIME_KIND,
    TRAINJOB_CONTROLLER,
)
from compiler.upstream.versions import DEFAULT_TRAINER_VERSION, Gate

TRAINJOB_TYPE = "trainer.v1alpha1.TrainJob"


@dataclass(frozen=True)
class Resolved:
    trainjob: Manifest
    runtime: Manifest


@dataclass
class RuntimeIndex:
    """Runtimes by (namespace, name) and cluster runtimes by name."""

    namespaced: dict[tuple[str, str], Manifest]
    cluster: dict[str, Manifest]
    # Runtimes among the inputs that admission rejected: they are never created.
    rejected: frozenset[tuple[str, str | None, str]] = frozenset()

    @classmethod
    def of(cls, manifests: Iterable[Manifest], rejected: Iterable[Manifest] = ()) -> RuntimeIndex:
        namespaced: dict[tuple[str, str], Manifest] = {}
        cluster: dict[str, Manifest] = {}
        for manifest in manifests:
            if manifest.kind == TRAINING_RUNTIME_KIND:
                namespaced[(manifest.namespace or "default", manifest.name)] = manifest
            elif manifest.kind == CLUSTER_TRAINING_RUNTIME_KIND:
                cluster[manifest.name] = manifest
        refused = frozenset((m.kind, m.namespace, m.name) for m in rejected)
        return cls(namespaced, cluster, refused)


# v2.2.0's API documents spec.managedBy, but its controller has no check: it
# reconciles a MultiKueue-managed TrainJob like any other (docs/trainer-versions.md).
CONTROLLER_HONOURS_MANAGED_BY = Gate(
    "v2.3.0", "the TrainJob controller skips a TrainJob another controller manages"
)


def is_managed_by_trainer(trainjob: Manifest, version: str = DEFAULT_TRAINER_VERSION) -> bool:
    """Upstream does nothing for a TrainJob another controller manages (e.g. MultiKueue)."""
    if not CONTROLLER_HONOURS_MANAGED_BY.on(version):
        return True
    managed_by = trainjob.data.get("spec", {}).get("managedBy")
    return managed_by is None or managed_by == TRAINJOB_CONTROLLER


def runtime_ref_supported(trainjob: Manifest) -> bool:
    """Whether the TrainJob's runtimeRef names a kind the Trainer has a runtime for."""
    ref = trainjob.data.get("spec", {}).get("runtimeRef") or {}
    return ref.get("apiGroup", "") == TRAINER_GROUP and ref.get("kind", "") in (
        TRAINING_RUNTIME_KIND,
        CLUSTER_TRAINING_RUNTIME_KIND,
    )


def resolve(trainjob: Manifest, index: RuntimeIndex) -> Resolved | Problem:
    """The runtime of ``trainjob``, or the problem that stops it being rendered."""
    ref = trainjob.data.get("spec", {}).get("runtimeRef") or {}
    kind = ref.get("kind", "")
    group = ref.get("apiGroup", "")
    name = ref.get("name", "")
    namespace = trainjob.namespace or "default"
    if not runtime_ref_supported(trainjob):
        # Upstream's webhook answers with a plain error, not a field error.
        location = trainjob.locate(("spec", "runtimeRef"))
        return Problem(f"unsupported runtime: {kind}.{group}", location, trainjob.ref, None)
    if kind == CLUSTER_TRAINING_RUNTIME_KIND:
        runtime = index.cluster.get(name)
        if runtime is None:
            hint = ""
            if (CLUSTER_TRAINING_RUNTIME_KIND, None, name) in index.rejected:
                hint = "it is among the inputs but admission rejects it (see its errors)"
            elif any(n == name for (_, n) in index.namespaced):
                hint = f'a TrainingRuntime "{name}" exists: did you mean runtimeRef.kind: TrainingRuntime?'
            else:  # e.g. torch-distributed: the cluster has it, the inputs do not
                hint = release_runtime_hint(kind, name)
            # Upstream's field path, capital R included (clustertrainingruntime.go).
            return _not_found(
                trainjob, "spec.RuntimeRef", kind, name, "clusterTrainingRuntime", hint
            )
        return Resolved(trainjob, runtime)
    runtime = index.namespaced.get((namespace, name))
    if runtime is None:
        elsewhere = sorted(ns for (ns, n) in index.namespaced if n == name)
        hint = ""
        if (TRAINING_RUNTIME_KIND, namespace, name) in index.rejected:
            hint = "it is among the inputs but admission rejects it (see its errors)"
        elif elsewhere:
            hint = (
                "TrainingRuntimes are namespaced and looked up in the TrainJob's namespace, "
                f"but this one is in namespace {', '.join(elsewhere)}"
            )
        elif name in index.cluster:
            hint = f'a ClusterTrainingRuntime "{name}" exists: did you mean runtimeRef.kind: ClusterTrainingRuntime?'
        elif upstream := release_runtime_hint(CLUSTER_TRAINING_RUNTIME_KIND, name):
            hint = f"did you mean runtimeRef.kind: ClusterTrainingRuntime? {upstream}"
        return _not_found(trainjob, "spec.runtimeRef", kind, name, "trainingRuntime", hint)
    return Resolved(trainjob, runtime)


def _not_found(
    trainjob: Manifest, field: str, kind: str, name: str, what: str, hint: str
) -> Problem:
    """The TrainJob webhook's denial for a runtime it cannot find, word for word: the
    client's not-found error names the Kind (``ClusterTrainingRuntime.trainer.kubeflow.org
    "x" not found``), after the TrainJob's runtimeRef as Go marshals it."""
    go_type = field_type(TRAINJOB_TYPE, ("spec", "runtimeRef"))
    value = (trainjob.data.get("spec") or {}).get("runtimeRef")
    detail = (
        f'{kind}.{TRAINER_GROUP} "{name}" not found: specified {what} must be created '
        "before the TrainJob is created"
    )
    message = error_body(
        "FieldValueInvalid", go_value(value, go_type) if go_type else value, detail, go_type
    )
    return Problem(
        f"{message} ({hint})" if hint else message,
        trainjob.locate(("spec", "runtimeRef", "name")),
        trainjob.ref,
        field,
    )
