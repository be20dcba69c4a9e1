"""The API server's check of a v1 job as submitted: its CRD's structural schema.

A v1 job that the API server would have refused never existed, so it is an input error
(exit 2) worded as the API server words it, not something to translate::

    spec.tfReplicaSpecs.Worker.replicas: Invalid value: "string":
    spec.tfReplicaSpecs.Worker.replicas in body must be of type integer: "string"

The check is the render side's (:func:`compiler.apiserver.crds.admit`: ObjectMeta
decoding, the schema, ObjectMeta rules) on a plain copy of the job. The v1 CRDs are not
among the upstream artifacts (setup fetches the Trainer module, not the Training
Operator's), so each kind's schema is assembled here: the spec fields of the Training
Operator v1.9.4 / MPI Operator v0.7.0 / Volcano v1alpha1 Go types (the fields and their
JSON types, as their generated CRDs have them), with the pod template schema taken from
the Trainer CRD (the same ``core/v1`` PodTemplateSpec). Unknown fields are left to the
migration report (it accounts for every field), so only type, format and required-field
errors are reported here.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from compiler.apiserver.crds import CrdInfo, admit, trainer_crds
from compiler.errors import FieldError, ObjectRef, Problem, SetupError
from compiler.migrate.source import MPI_V2, TRAINER, V1, VOLCANO, SourceObject

__all__ = ["schema_problems"]

RUNTIMES = ("TrainingRuntime", "ClusterTrainingRuntime")
_STRICT = 'strict decoding error: unknown field "'  # the unknown fields, in one message

INT32: dict[str, Any] = {"type": "integer", "format": "int32"}
INT64: dict[str, Any] = {"type": "integer", "format": "int64"}
STRING: dict[str, Any] = {"type": "string"}
BOOLEAN: dict[str, Any] = {"type": "boolean"}
ANY_OBJECT: dict[str, Any] = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
QUANTITY: dict[str, Any] = {
    "anyOf": [{"type": "integer"}, {"type": "string"}],
    "x-kubernetes-int-or-string": True,
}


def _object(required: tuple[str, ...] = (), /, **properties: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        out["required"] = list(required)
    return out


def _array(items: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": items}


def _map(values: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "additionalProperties": values}


def _scheduling_policy() -> dict[str, Any]:
    return _object(
        minAvailable=INT32,
        queue=STRING,
        minResources=_map(QUANTITY),
        priorityClass=STRING,
        scheduleTimeoutSeconds=INT32,
    )


def _run_policy() -> dict[str, Any]:
    """``RunPolicy`` (kubeflow/training-operator pkg/apis/kubeflow.org/v1 common_types.go;
    the MPI Operator's v2beta1 copy has the same fields)."""
    return _object(
        cleanPodPolicy=STRING,
        ttlSecondsAfterFinished=INT32,
        activeDeadlineSeconds=INT64,
        backoffLimit=INT32,
        schedulingPolicy=_scheduling_policy(),
        suspend=BOOLEAN,
        managedBy=STRING,
    )


def _replica_spec(template: dict[str, Any]) -> dict[str, Any]:
    return _object(replicas=INT32, template=template, restartPolicy=STRING)


def _elastic_policy(**extra: Any) -> dict[str, Any]:
    return _object(
        minReplicas=INT32,
        maxReplicas=INT32,
        maxRestarts=INT32,
        metrics=_array(ANY_OBJECT),
        **extra,
    )


def _spec(kind: str, template: dict[str, Any]) -> dict[str, Any]:
    """The spec schema of ``kind`` (the JSON types of its Go fields)."""
    replicas = _map(_replica_spec(template))
    common = {"runPolicy": _run_policy()}
    if kind == "PyTorchJob":
        elastic = _elastic_policy(
            rdzvBackend=STRING,
            rdzvPort=INT32,
            rdzvHost=STRING,
            rdzvId=STRING,
            rdzvConf=_array(_object(key=STRING, value=STRING)),
            standalone=BOOLEAN,
            nProcPerNode=INT32,
        )
        return _object(
            pytorchReplicaSpecs=replicas, elasticPolicy=elastic, nprocPerNode=STRING, **common
        )
    if kind == "TFJob":
        return _object(
            tfReplicaSpecs=replicas, successPolicy=STRING, enableDynamicWorker=BOOLEAN, **common
        )
    if kind == "XGBoostJob":
        return _object(xgbReplicaSpecs=replicas, **common)
    if kind == "PaddleJob":
        return _object(paddleReplicaSpecs=replicas, elasticPolicy=_elastic_policy(), **common)
    if kind == "JAXJob":
        return _object(jaxReplicaSpecs=replicas, **common)
    if kind == "MPIJob-v1":
        return _object(
            mpiReplicaSpecs=replicas, slotsPerWorker=INT32, mainContainer=STRING, **common
        )
    if kind == "MPIJob-v2beta1":
        return _object(
            mpiReplicaSpecs=replicas,
            slotsPerWorker=INT32,
            runLauncherAsWorker=BOOLEAN,
            sshAuthMountPath=STRING,
            launcherCreationPolicy=STRING,
            mpiImplementation=STRING,
            **common,
        )
    # Volcano's batch/v1alpha1 JobSpec
    policy = _object(
        event=STRING, events=_array(STRING), action=STRING, exitCode=INT32, timeout=STRING
    )
    task = _object(
        name=STRING,
        replicas=INT32,
        minAvailable=INT32,
        template=template,
        policies=_array(policy),
        topologyPolicy=STRING,
        maxRetry=INT32,
        dependsOn=ANY_OBJECT,
        partitionPolicy=ANY_OBJECT,
    )
    volume = _object(
        ("mountPath",), mountPath=STRING, volumeClaimName=STRING, volumeClaim=ANY_OBJECT
    )
    topology = _object(mode=STRING, highestTierAllowed=INT64, highestTierName=STRING)
    return _object(
        schedulerName=STRING,
        minAvailable=INT32,
        volumes=_array(volume),
        tasks=_array(task),
        policies=_array(policy),
        plugins=_map(_array(STRING)),
        runningEstimate=STRING,
        queue=STRING,
        maxRetry=INT32,
        ttlSecondsAfterFinished=INT32,
        priorityClassName=STRING,
        minSuccess=INT32,
        networkTopology=topology,
    )


def _pod_template() -> dict[str, Any]:
    """The PodTemplateSpec schema of the Trainer CRD (a JobSet replicated job's pod)."""
    runtime = trainer_crds().get("trainer.kubeflow.org/v1alpha1", "TrainingRuntime")
    if runtime is None or not isinstance(runtime.source, dict):
        raise SetupError(
            "the Trainer TrainingRuntime CRD has no schema to take the pod template from"
        )
    node: Any = runtime.source
    for key in ("spec", "template", "spec", "replicatedJobs", "items", "template"):
        node = node["items"] if key == "items" else node["properties"][key]
    for key in ("spec", "template"):
        node = node["properties"][key]
    return dict(node)


_KINDS = {
    (V1, "PyTorchJob"): ("PyTorchJob", "pytorchjobs"),
    (V1, "TFJob"): ("TFJob", "tfjobs"),
    (V1, "XGBoostJob"): ("XGBoostJob", "xgboostjobs"),
    (V1, "PaddleJob"): ("PaddleJob", "paddlejobs"),
    (V1, "JAXJob"): ("JAXJob", "jaxjobs"),
    (V1, "MPIJob"): ("MPIJob-v1", "mpijobs"),
    (MPI_V2, "MPIJob"): ("MPIJob-v2beta1", "mpijobs"),
    (VOLCANO, "Job"): ("Job", "jobs"),
}


@cache
def _crd(api_version: str, kind: str) -> CrdInfo:
    name, plural = _KINDS[(api_version, kind)]
    group, _, version = api_version.rpartition("/")
    schema = _object(
        apiVersion=STRING,
        kind=STRING,
        metadata={"type": "object"},
        spec=_spec(name, _pod_template()),
        status=ANY_OBJECT,
    )
    return CrdInfo(group, version, kind, plural, True, True, schema)


def plain(value: Any) -> Any:
    """JSON data of exact types (the schema checks compare types, not subclasses), built
    without recursion so that nesting depth cannot exhaust the stack."""
    root: list[Any] = [None]
    stack: list[tuple[Any, Any, Any]] = [(value, root, 0)]
    while stack:
        item, parent, key = stack.pop()
        if isinstance(item, dict):
            out: Any = {}
            stack.extend((v, out, str(k)) for k, v in item.items())
        elif isinstance(item, list):
            out = [None] * len(item)
            stack.extend((v, out, i) for i, v in enumerate(item))
        elif isinstance(item, bool) or item is None:
            out = item
        elif isinstance(item, int):
            out = int(item)
        elif isinstance(item, float):
            out = float(item)
        else:
            out = str(item)
        parent[key] = out
    return root[0]


def schema_problems(src: SourceObject, namespace: str) -> list[Problem]:
    """What the API server says of ``src`` (a v1, MPI Operator or Volcano job, or a
    Trainer runtime offered for reuse, checked against its real CRD) on create, located
    in its file; unknown fields are left out (see the module)."""
    if (src.api_version, src.kind) in _KINDS:
        crd = _crd(src.api_version, src.kind)
    elif src.api_version == TRAINER and src.kind in RUNTIMES:
        found = trainer_crds().get(src.api_version, src.kind)  # a runtime offered for reuse
        if found is None:
            return []
        crd = found
    else:
        return []
    data = plain(src.data)
    meta = data.get("metadata")
    if crd.namespaced and isinstance(meta, dict) and not meta.get("namespace"):
        meta["namespace"] = namespace
    errors = [
        e for e in admit(data, crd, trainer_crds()) if not e.unknown and _STRICT not in e.message
    ]
    ref = ObjectRef(src.kind, src.name, namespace if crd.namespaced else None)
    return [_problem(src, error, ref) for error in errors]


def _problem(src: SourceObject, error: FieldError, ref: ObjectRef) -> Problem:
    field = "<nil>" if error.field == "" else error.field
    return Problem(error.message, src.location(error.path), ref, field, "crd-schema")
