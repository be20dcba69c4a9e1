"""CRD CEL rules: every rule of the three Trainer v2.3.0 CRDs, allowed and denied.

The CRDs are the real ones from the upstream cache. Expected texts are the API server's
(``field: body``, ``<nil>`` for the root), read from apiextensions-apiserver v0.36.2
``pkg/apiserver/schema/cel/validation.go``; the golden cases of the conformance oracle
(``golden/error-*``) check the same texts end to end.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from typing import Any

import pytest

from compiler.apiserver.crd_rules import NOT_CHECKED, blocks_rules, check_rules, rule_sites
from compiler.apiserver.crds import CrdInfo, admit, trainer_crds
from compiler.apiserver.structural import compile_schema
from compiler.errors import FieldError, SetupError

GROUP = "trainer.kubeflow.org"
API = f"{GROUP}/v1alpha1"
RUNTIME_KINDS = ("TrainingRuntime", "ClusterTrainingRuntime")
IMMUTABLE = "field is immutable"
VALUE_IMMUTABLE = "Value is immutable"


def crd(kind: str) -> CrdInfo:
    found = trainer_crds().get(API, kind)
    assert found is not None
    return found


def texts(errors: list[FieldError]) -> list[str]:
    """Errors as the API server prints them (Go prints the root path as ``<nil>``)."""
    return sorted(f"{e.field or '<nil>'}: {e.message}" for e in errors)


def admitted(obj: dict[str, Any]) -> dict[str, Any]:
    """``obj`` after the schema step (defaults applied), which must accept it."""
    info = crd(obj["kind"])
    errors = admit(obj, info, trainer_crds())
    assert [str(e) for e in errors] == []
    return obj


# The expected texts below are those of apiextensions-apiserver v0.36.2 (Kubernetes 1.36,
# the conformance oracle's library): since 1.35 a failed rule shows a scalar's value and no
# value for an object or array. Kubernetes 1.34's form (the schema type) is tested at the
# end of this file, against what the live v1.34.4 API server answered.
MODERN = (1, 36)


def cel(obj: dict[str, Any], old: dict[str, Any] | None = None) -> list[str]:
    return texts(check_rules(obj, crd(obj["kind"]), old=old, kubernetes=MODERN))


# --- objects ---------------------------------------------------------------------------------


def trainjob(name: str = "job", **spec: Any) -> dict[str, Any]:
    return admitted(
        {
            "apiVersion": API,
            "kind": "TrainJob",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"runtimeRef": {"name": "torch-distributed"}, **spec},
        }
    )


def pod_patch(**spec: Any) -> dict[str, Any]:
    """A runtime patch entry patching the pod spec of replicated job ``node``."""
    return {
        "manager": "example.com/tool",
        "trainingRuntimeSpec": {
            "template": {
                "spec": {
                    "replicatedJobs": [
                        {"name": "node", "template": {"spec": {"template": {"spec": spec}}}}
                    ]
                }
            }
        },
    }


PATCH_SPEC = (
    "spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[0]"
    ".template.spec.template.spec"
)


def runtime(kind: str, spec: dict[str, Any] | None = None, **jobset: Any) -> dict[str, Any]:
    """A runtime with one replicated job ``node`` (plus ``jobset`` fields of the template)."""
    jobs = jobset.pop("replicatedJobs", None) or [
        {
            "name": "node",
            "template": {
                "spec": {
                    "template": {"spec": {"containers": [{"name": "node", "image": "busybox"}]}}
                }
            },
        }
    ]
    obj = {
        "apiVersion": API,
        "kind": kind,
        "metadata": {"name": "rt"}
        if kind == "ClusterTrainingRuntime"
        else {"name": "rt", "namespace": "default"},
        "spec": {"template": {"spec": {"replicatedJobs": jobs, **jobset}}, **(spec or {})},
    }
    return admitted(obj)


def job(name: str, **spec: Any) -> dict[str, Any]:
    pod = {"containers": [{"name": "node", "image": "busybox"}]}
    return {"name": name, "template": {"spec": {"template": {"spec": pod}}}, **spec}


def vcp(metadata: dict[str, Any] | None) -> list[dict[str, Any]]:
    template: dict[str, Any] = {"spec": {"accessModes": ["ReadWriteOnce"]}}
    if metadata is not None:
        template["metadata"] = metadata
    return [{"templates": [template]}]


def changed(obj: dict[str, Any], edit: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    new = copy.deepcopy(obj)
    edit(new)
    return new


# --- the cases: (id, schema path covered, verdict, new, old, expected errors) ------------------

Case = tuple[str, str, str, Callable[[], tuple[dict[str, Any], dict[str, Any] | None]], list[str]]


def tj_cases() -> list[Case]:
    full: dict[str, Any] = {
        "activeDeadlineSeconds": 10,
        "managedBy": "trainer.kubeflow.org/trainjob-controller",
        "initializer": {
            "dataset": {"storageUri": "hf://tatsu-lab/alpaca"},
            "model": {"storageUri": "hf://meta/llama"},
        },
        "trainer": {
            "image": "pytorch",
            "numNodes": 2,
            "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
        },
        "runtimePatches": [
            pod_patch(
                containers=[{"name": "node"}, {"name": "sidecar"}],
                initContainers=[{"name": "init"}],
                imagePullSecrets=[{"name": "pull"}],
                volumes=[{"name": "a", "emptyDir": {}}, {"name": "b", "emptyDir": {}}],
                securityContext={"runAsUser": 1000},
                serviceAccountName="sa",
                terminationGracePeriodSeconds=30,
            )
        ],
    }

    def base() -> dict[str, Any]:
        return trainjob("job", **copy.deepcopy(full))

    def update(
        edit: Callable[[dict[str, Any]], None],
    ) -> Callable[[], tuple[dict[str, Any], dict[str, Any]]]:
        def make() -> tuple[dict[str, Any], dict[str, Any]]:
            old = base()
            return changed(old, edit), old

        return make

    def create(**spec: Any) -> Callable[[], tuple[dict[str, Any], None]]:
        return lambda: (trainjob(**spec), None)

    def named(name: str) -> Callable[[], tuple[dict[str, Any], None]]:
        # the schema step also reports the name (metadata), which does not block CEL
        def make() -> tuple[dict[str, Any], None]:
            obj = {
                "apiVersion": API,
                "kind": "TrainJob",
                "metadata": {"name": name, "namespace": "default"},
                "spec": {"runtimeRef": {"name": "x"}},
            }
            admit(obj, crd("TrainJob"), trainer_crds())
            return obj, None

        return make

    def patch_spec(new: dict[str, Any]) -> dict[str, Any]:
        spec: dict[str, Any] = new["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"][
            "spec"
        ]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
        return spec

    def set_patch(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
        return lambda new: patch_spec(new).__setitem__(key, value)

    def status(trainer_status: dict[str, Any]) -> Callable[[], tuple[dict[str, Any], None]]:
        def make() -> tuple[dict[str, Any], None]:
            obj = trainjob()
            obj["status"] = {"trainerStatus": trainer_status}  # a /status write keeps it
            return obj, None

        return make

    uri_msg = "storageUri may be empty, or it must be a valid URI (scheme://...)"
    managed_msg = "ManagedBy must be trainer.kubeflow.org/trainjob-controller or kueue.x-k8s.io/multikueue if set"
    return [
        ("name-ok", "<root>", "allow", create(), []),
        ("name-63", "<root>#2", "allow", named("a" * 63), []),
        (
            "name-rfc1035",
            "<root>",
            "deny",
            named("1job"),
            ["<nil>: Invalid value: metadata.name must match RFC 1035 DNS label format"],
        ),
        (
            "name-underscore",
            "<root>",
            "deny",
            named("Train_Job-1"),
            ["<nil>: Invalid value: metadata.name must match RFC 1035 DNS label format"],
        ),
        (
            "name-64",
            "<root>#2",
            "deny",
            named("a" * 64),
            ["<nil>: Invalid value: metadata.name must be no more than 63 characters"],
        ),
        ("deadline-same", ".spec.activeDeadlineSeconds", "allow", update(lambda n: None), []),
        (
            "deadline-added",
            ".spec.activeDeadlineSeconds",
            "allow",
            lambda: (trainjob(activeDeadlineSeconds=5), trainjob()),
            [],
        ),
        (
            "deadline-changed",
            ".spec.activeDeadlineSeconds",
            "deny",
            update(lambda n: n["spec"].__setitem__("activeDeadlineSeconds", 20)),
            [f"spec.activeDeadlineSeconds: Invalid value: 20: {IMMUTABLE}"],
        ),
        (
            "initializer-removed",
            ".spec.initializer",
            "allow",
            update(lambda n: n["spec"].pop("initializer")),
            [],
        ),
        (
            "initializer-changed",
            ".spec.initializer",
            "deny",
            update(
                lambda n: n["spec"]["initializer"]["model"].__setitem__(
                    "storageUri", "hf://meta/other"
                )
            ),
            [f"spec.initializer: Invalid value: {IMMUTABLE}"],
        ),
        (
            "dataset-uri-ok",
            ".spec.initializer.dataset.storageUri",
            "allow",
            create(initializer={"dataset": {"storageUri": "s3://bucket/x"}}),
            [],
        ),
        (
            "dataset-uri-empty",
            ".spec.initializer.dataset.storageUri",
            "allow",
            create(initializer={"dataset": {"storageUri": ""}}),
            [],
        ),
        (
            "dataset-uri-bad",
            ".spec.initializer.dataset.storageUri",
            "deny",
            create(initializer={"dataset": {"storageUri": "tatsu-lab/alpaca"}}),
            [f'spec.initializer.dataset.storageUri: Invalid value: "tatsu-lab/alpaca": {uri_msg}'],
        ),
        (
            "model-uri-ok",
            ".spec.initializer.model.storageUri",
            "allow",
            create(initializer={"model": {"storageUri": "hf://meta/llama"}}),
            [],
        ),
        (
            "model-uri-bad",
            ".spec.initializer.model.storageUri",
            "deny",
            create(initializer={"model": {"storageUri": "://x"}}),
            [f'spec.initializer.model.storageUri: Invalid value: "://x": {uri_msg}'],
        ),
        ("managedby-default", ".spec.managedBy", "allow", create(), []),
        (
            "managedby-multikueue",
            ".spec.managedBy",
            "allow",
            create(managedBy="kueue.x-k8s.io/multikueue"),
            [],
        ),
        (
            "managedby-other",
            ".spec.managedBy",
            "deny",
            create(managedBy="example.com/custom-controller"),
            [f'spec.managedBy: Invalid value: "example.com/custom-controller": {managed_msg}'],
        ),
        (
            "managedby-same",
            ".spec.managedBy#2",
            "allow",
            update(lambda n: n["spec"].__setitem__("suspend", True)),
            [],
        ),
        (
            "managedby-changed",
            ".spec.managedBy#2",
            "deny",
            update(lambda n: n["spec"].__setitem__("managedBy", "kueue.x-k8s.io/multikueue")),
            [f'spec.managedBy: Invalid value: "kueue.x-k8s.io/multikueue": {IMMUTABLE}'],
        ),
        # the patch list is a map keyed by manager: a changed manager is remove + add
        (
            "manager-same",
            ".spec.runtimePatches[*].manager",
            "allow",
            update(
                lambda n: n["spec"]["runtimePatches"][0].__setitem__("time", "2026-01-01T00:00:00Z")
            ),
            [],
        ),
        (
            "manager-renamed",
            ".spec.runtimePatches[*].manager",
            "allow",
            update(
                lambda n: n["spec"]["runtimePatches"][0].__setitem__("manager", "example.com/other")
            ),
            [],
        ),
        (
            "patch-added",
            ".spec.runtimePatches[*].trainingRuntimeSpec.template.spec.replicatedJobs[*].template.spec.template.spec.containers",
            "allow",
            lambda: (trainjob("job", **copy.deepcopy(full)), trainjob()),
            [],
        ),
        (
            "containers-reordered",
            ".spec.runtimePatches[*].trainingRuntimeSpec.template.spec.replicatedJobs[*].template.spec.template.spec.containers",
            "allow",
            update(set_patch("containers", [{"name": "sidecar"}, {"name": "node"}])),
            [],
        ),
        (
            "containers-changed",
            ".spec.runtimePatches[*].trainingRuntimeSpec.template.spec.replicatedJobs[*].template.spec.template.spec.containers",
            "deny",
            update(set_patch("containers", [{"name": "node"}])),
            [f"{PATCH_SPEC}.containers: Invalid value: {IMMUTABLE}"],
        ),
        (
            "pullsecrets-changed",
            ".spec.runtimePatches[*].trainingRuntimeSpec.template.spec.replicatedJobs[*].template.spec.template.spec.imagePullSecrets",
            "deny",
            update(set_patch("imagePullSecrets", [{"name": "other"}])),
            [f"{PATCH_SPEC}.imagePullSecrets: Invalid value: {IMMUTABLE}"],
        ),
        (
            "pullsecrets-same",
            ".spec.runtimePatches[*].trainingRuntimeSpec.template.spec.replicatedJobs[*].template.spec.template.spec.imagePullSecrets",
            "allow",
            update(lambda n: None),
            [],
        ),
        (
            "initcontainers-changed",
            ".spec.runtimePatches[*].trainingRuntimeSpec.template.spec.replicatedJobs[*].template.spec.template.spec.initContainers",
            "deny",
            update(
                set_patch(
                    "initContainers", [{"name": "init", "env": [{"name": "X", "value": "1"}]}]
                )
            ),
            [f"{PATCH_SPEC}.initContainers: Invalid value: {IMMUTABLE}"],
        ),
        (
            "initcontainers-same",
            ".spec.runtimePatches[*].trainingRuntimeSpec.template.spec.replicatedJobs[*].template.spec.template.spec.initContainers",
            "allow",
            update(lambda n: None),
            [],
        ),
        (
            "securitycontext-changed",
            ".spec.runtimePatches[*].trainingRuntimeSpec.template.spec.replicatedJobs[*].template.spec.template.spec.securityContext",
            "deny",
            update(set_patch("securityContext", {"runAsUser": 0})),
            [f"{PATCH_SPEC}.securityContext: Invalid value: {IMMUTABLE}"],
        ),
        (
            "securitycontext-same",
            ".spec.runtimePatches[*].trainingRuntimeSpec.template.spec.replicatedJobs[*].template.spec.template.spec.securityContext",
            "allow",
            update(lambda n: None),
            [],
        ),
        (
            "serviceaccount-changed",
            ".spec.runtimePatches[*].trainingRuntimeSpec.template.spec.replicatedJobs[*].template.spec.template.spec.serviceAccountName",
            "deny",
            update(set_patch("serviceAccountName", "other")),
            [f'{PATCH_SPEC}.serviceAccountName: Invalid value: "other": {IMMUTABLE}'],
        ),
        (
            "serviceaccount-same",
            ".spec.runtimePatches[*].trainingRuntimeSpec.template.spec.replicatedJobs[*].template.spec.template.spec.serviceAccountName",
            "allow",
            update(lambda n: None),
            [],
        ),
        (
            "grace-changed",
            ".spec.runtimePatches[*].trainingRuntimeSpec.template.spec.replicatedJobs[*].template.spec.template.spec.terminationGracePeriodSeconds",
            "deny",
            update(set_patch("terminationGracePeriodSeconds", 60)),
            [f"{PATCH_SPEC}.terminationGracePeriodSeconds: Invalid value: 60: {IMMUTABLE}"],
        ),
        (
            "grace-same",
            ".spec.runtimePatches[*].trainingRuntimeSpec.template.spec.replicatedJobs[*].template.spec.template.spec.terminationGracePeriodSeconds",
            "allow",
            update(lambda n: None),
            [],
        ),
        (
            "volumes-reordered",
            ".spec.runtimePatches[*].trainingRuntimeSpec.template.spec.replicatedJobs[*].template.spec.template.spec.volumes",
            "allow",
            update(
                set_patch("volumes", [{"name": "b", "emptyDir": {}}, {"name": "a", "emptyDir": {}}])
            ),
            [],
        ),
        (
            "volumes-changed",
            ".spec.runtimePatches[*].trainingRuntimeSpec.template.spec.replicatedJobs[*].template.spec.template.spec.volumes",
            "deny",
            update(
                set_patch(
                    "volumes",
                    [
                        {"name": "a", "emptyDir": {"medium": "Memory"}},
                        {"name": "b", "emptyDir": {}},
                    ],
                )
            ),
            [f"{PATCH_SPEC}.volumes: Invalid value: {IMMUTABLE}"],
        ),
        (
            "runtimeref-same",
            ".spec.runtimeRef",
            "allow",
            update(lambda n: n["spec"].__setitem__("suspend", True)),
            [],
        ),
        (
            "runtimeref-changed",
            ".spec.runtimeRef",
            "deny",
            update(lambda n: n["spec"]["runtimeRef"].__setitem__("name", "other")),
            [f"spec.runtimeRef: Invalid value: {IMMUTABLE}"],
        ),
        (
            "trainer-env-reordered",
            ".spec.trainer",
            "allow",
            update(lambda n: n["spec"]["trainer"]["env"].reverse()),
            [],
        ),
        (
            "trainer-changed",
            ".spec.trainer",
            "deny",
            update(lambda n: n["spec"]["trainer"].__setitem__("numNodes", 4)),
            [f"spec.trainer: Invalid value: {IMMUTABLE}"],
        ),
        (
            "status-ok",
            ".status.trainerStatus",
            "allow",
            status({"progressPercentage": 5, "lastUpdatedTime": "2026-01-01T00:00:00Z"}),
            [],
        ),
        (
            "status-no-time",
            ".status.trainerStatus",
            "deny",
            status({"progressPercentage": 5}),
            [
                "status.trainerStatus: Invalid value: lastUpdatedTime is required when trainerStatus is present"
            ],
        ),
    ]


def runtime_cases(kind: str) -> list[Case]:
    def create(
        spec: dict[str, Any] | None = None, **jobset: Any
    ) -> Callable[[], tuple[dict[str, Any], None]]:
        return lambda: (runtime(kind, copy.deepcopy(spec), **copy.deepcopy(jobset)), None)

    full: dict[str, Any] = {
        "replicatedJobs": [
            job("init"),
            job(
                "node",
                dependsOn=[
                    {"name": "init", "status": "Complete"},
                    {"name": "x", "status": "Ready"},
                ],
            ),
            job("x"),
        ],
        "failurePolicy": {"maxRestarts": 3},
        "network": {"enableDNSHostnames": True},
        "startupPolicy": {"startupPolicyOrder": "AnyOrder"},
        "successPolicy": {"operator": "All", "targetReplicatedJobs": ["node"]},
        "volumeClaimPolicies": vcp({"name": "data"}),
    }

    def update(
        edit: Callable[[dict[str, Any]], None],
    ) -> Callable[[], tuple[dict[str, Any], dict[str, Any]]]:
        def make() -> tuple[dict[str, Any], dict[str, Any]]:
            old = runtime(kind, None, **copy.deepcopy(full))
            return changed(old, lambda n: edit(n["spec"]["template"]["spec"])), old

        return make

    torch: dict[str, Any] = {"mlPolicy": {"torch": {}}}
    targets = "spec.mlPolicy.torch.envInjection.targets[0].containerNames"
    return [
        ("one-policy", ".spec.mlPolicy", "allow", create(torch), []),
        ("no-policy", ".spec.mlPolicy", "allow", create({"mlPolicy": {"numNodes": 2}}), []),
        (
            "two-policies",
            ".spec.mlPolicy",
            "deny",
            create({"mlPolicy": {"torch": {}, "mpi": {}}}),
            ["spec.mlPolicy: Invalid value: Only one of the policy can be configured"],
        ),
        (
            "flux-default",
            ".spec.mlPolicy.flux.numProcPerNode",
            "allow",
            create({"mlPolicy": {"flux": {}}}),
            [],
        ),
        (
            "flux-zero",
            ".spec.mlPolicy.flux.numProcPerNode",
            "deny",
            create({"mlPolicy": {"flux": {"numProcPerNode": 0}}}),
            [
                "spec.mlPolicy.flux.numProcPerNode: Invalid value: 0: NumProcPerNode in fluxPolicy must be >= 1"
            ],
        ),
        (
            "envinjection-ok",
            ".spec.mlPolicy.torch.envInjection.targets[*].containerNames",
            "allow",
            create(
                {
                    "mlPolicy": {
                        "torch": {
                            "envInjection": {
                                "targets": [{"jobName": "node", "containerNames": ["sidecar"]}]
                            }
                        }
                    }
                }
            ),
            [],
        ),
        (
            "envinjection-node",
            ".spec.mlPolicy.torch.envInjection.targets[*].containerNames",
            "deny",
            create(
                {
                    "mlPolicy": {
                        "torch": {
                            "envInjection": {
                                "targets": [
                                    {"jobName": "node", "containerNames": ["sidecar", "node"]}
                                ]
                            }
                        }
                    }
                }
            ),
            [
                f"{targets}: Invalid value: containerNames must not include the main node container because PET_* envs are always injected into it"
            ],
        ),
        (
            "inorder-no-dependson",
            ".spec.template.spec",
            "allow",
            create(None, startupPolicy={"startupPolicyOrder": "InOrder"}),
            [],
        ),
        (
            "anyorder-dependson",
            ".spec.template.spec",
            "allow",
            create(
                None,
                replicatedJobs=[
                    job("a"),
                    job("node", dependsOn=[{"name": "a", "status": "Ready"}]),
                ],
                startupPolicy={"startupPolicyOrder": "AnyOrder"},
            ),
            [],
        ),
        (
            "inorder-dependson",
            ".spec.template.spec",
            "deny",
            create(
                None,
                replicatedJobs=[
                    job("a"),
                    job("node", dependsOn=[{"name": "a", "status": "Ready"}]),
                ],
                startupPolicy={"startupPolicyOrder": "InOrder"},
            ),
            [
                "spec.template.spec: Invalid value: StartupPolicy and DependsOn APIs are mutually exclusive"
            ],
        ),
        (
            "failurepolicy-same",
            ".spec.template.spec.failurePolicy",
            "allow",
            update(lambda s: None),
            [],
        ),
        (
            "failurepolicy-changed",
            ".spec.template.spec.failurePolicy",
            "deny",
            update(lambda s: s["failurePolicy"].__setitem__("maxRestarts", 5)),
            [f"spec.template.spec.failurePolicy: Invalid value: {VALUE_IMMUTABLE}"],
        ),
        (
            "network-removed",
            ".spec.template.spec.network",
            "allow",
            update(lambda s: s.pop("network")),
            [],
        ),
        (
            "network-changed",
            ".spec.template.spec.network",
            "deny",
            update(lambda s: s["network"].__setitem__("subdomain", "sub")),
            [f"spec.template.spec.network: Invalid value: {VALUE_IMMUTABLE}"],
        ),
        (
            "dependson-reordered",
            ".spec.template.spec.replicatedJobs[*].dependsOn",
            "allow",
            update(lambda s: s["replicatedJobs"][1]["dependsOn"].reverse()),
            [],
        ),
        (
            "dependson-changed",
            ".spec.template.spec.replicatedJobs[*].dependsOn",
            "deny",
            update(lambda s: s["replicatedJobs"][1]["dependsOn"][0].__setitem__("status", "Ready")),
            [f"spec.template.spec.replicatedJobs[1].dependsOn: Invalid value: {VALUE_IMMUTABLE}"],
        ),
        (
            "startuppolicy-same",
            ".spec.template.spec.startupPolicy",
            "allow",
            update(lambda s: None),
            [],
        ),
        (
            "startuppolicy-changed",
            ".spec.template.spec.startupPolicy",
            "deny",
            update(lambda s: s["startupPolicy"].__setitem__("startupPolicyOrder", "InOrder")),
            [
                f"spec.template.spec.startupPolicy: Invalid value: {VALUE_IMMUTABLE}",
                "spec.template.spec: Invalid value: StartupPolicy and DependsOn APIs are mutually exclusive",
            ],
        ),
        (
            "successpolicy-same",
            ".spec.template.spec.successPolicy",
            "allow",
            update(lambda s: None),
            [],
        ),
        (
            "successpolicy-changed",
            ".spec.template.spec.successPolicy",
            "deny",
            update(lambda s: s["successPolicy"].__setitem__("operator", "Any")),
            [f"spec.template.spec.successPolicy: Invalid value: {VALUE_IMMUTABLE}"],
        ),
        (
            "vcp-same",
            ".spec.template.spec.volumeClaimPolicies",
            "allow",
            update(lambda s: None),
            [],
        ),
        (
            "vcp-changed",
            ".spec.template.spec.volumeClaimPolicies",
            "deny",
            update(lambda s: s.__setitem__("volumeClaimPolicies", vcp({"name": "other"}))),
            [f"spec.template.spec.volumeClaimPolicies: Invalid value: {VALUE_IMMUTABLE}"],
        ),
        (
            "vcp-no-namespace",
            ".spec.template.spec.volumeClaimPolicies[*]",
            "allow",
            create(None, volumeClaimPolicies=vcp({"name": "data"})),
            [],
        ),
        (
            "vcp-empty-namespace",
            ".spec.template.spec.volumeClaimPolicies[*]",
            "allow",
            create(None, volumeClaimPolicies=vcp({"name": "data", "namespace": ""})),
            [],
        ),
        (
            "vcp-namespace",
            ".spec.template.spec.volumeClaimPolicies[*]",
            "deny",
            create(None, volumeClaimPolicies=vcp({"name": "data", "namespace": "ns"})),
            [
                "spec.template.spec.volumeClaimPolicies[0]: Invalid value: namespace cannot be set for VolumeClaimPolicies templates"
            ],
        ),
        # a template without metadata makes the rule fail to evaluate ("no such key")
        (
            "vcp-no-metadata",
            ".spec.template.spec.volumeClaimPolicies[*]",
            "deny",
            create(None, volumeClaimPolicies=vcp(None)),
            [
                'spec.template.spec.volumeClaimPolicies[0]: Invalid value: "object": no such key: metadata evaluating rule: namespace cannot be set for VolumeClaimPolicies templates'
            ],
        ),
    ]


CASES = [(f"TrainJob/{c[0]}", *c[1:]) for c in tj_cases()] + [
    (f"{kind}/{c[0]}", *c[1:]) for kind in RUNTIME_KINDS for c in runtime_cases(kind)
]


@pytest.mark.parametrize(
    ("case_id", "site", "verdict", "make", "expected"), CASES, ids=[c[0] for c in CASES]
)
def test_rule(
    case_id: str,
    site: str,
    verdict: str,
    make: Callable[[], tuple[dict[str, Any], dict[str, Any] | None]],
    expected: list[str],
) -> None:
    new, old = make()
    assert cel(new, old) == sorted(expected)
    assert (verdict == "deny") == bool(expected)


def test_every_rule_is_allowed_and_denied() -> None:
    """Every rule of the three CRDs has an allow case and a deny case above.

    A second rule at the same schema node is named ``<path>#2`` (the root has two, and
    ``.spec.managedBy``).
    TJ9 (``runtimePatches[*].manager == oldSelf``) cannot fail: patches correlate by
    ``manager``, so the old value is always equal; its cases show a rename is accepted.
    """
    covered: dict[tuple[str, str], set[str]] = {}
    for case_id, site, verdict, _, _ in CASES:
        kind = case_id.split("/")[0]
        covered.setdefault((kind, site), set()).add(verdict)
    cannot_fail = {("TrainJob", ".spec.runtimePatches[*].manager")}
    total = 0
    for kind in ("TrainJob", *RUNTIME_KINDS):
        seen: set[str] = set()
        for rule_site in rule_sites(crd(kind)):
            total += 1
            path = rule_site.schema_path
            if path in seen:
                path += "#2"  # the second rule at the same node
            seen.add(path)
            wanted = {"allow"} if (kind, path) in cannot_fail else {"allow", "deny"}
            assert wanted <= covered.get((kind, path), set()), (kind, path, rule_site.rule)
    assert total == 41


def test_rule_sites_come_from_the_crds() -> None:
    sites = rule_sites(crd("TrainingRuntime"))
    assert [s.schema_path for s in sites][:2] == [
        ".spec.mlPolicy",
        ".spec.mlPolicy.flux.numProcPerNode",
    ]
    assert (
        sites[1].rule == "self >= 1"
        and sites[1].message == "NumProcPerNode in fluxPolicy must be >= 1"
    )
    assert [s.transition for s in sites].count(True) == 6


# --- the schema step decides whether CEL runs --------------------------------------------------


def test_blocking_schema_errors_skip_cel() -> None:
    obj = {
        "apiVersion": API,
        "kind": "TrainJob",
        "metadata": {"name": "1job", "namespace": "default"},
        "spec": {"runtimeRef": {"name": "x"}, "trainer": {"numNodes": "two"}},
    }
    found = admit(obj, crd("TrainJob"), trainer_crds())
    assert [blocks_rules(e) for e in found] == [True]
    assert texts(check_rules(obj, crd("TrainJob"), found, kubernetes=MODERN)) == [
        f"<nil>: Invalid value: null: {NOT_CHECKED}"
    ]


@pytest.mark.parametrize(
    ("detail", "blocks"),
    [
        ("Required value", True),
        ('Unsupported value: "x": supported values: "a"', True),
        ("Too long: may not be more than 253 bytes", True),
        ("Too many: 3: must have at most 2 items", True),
        ('Invalid value: "string": spec.n in body must be of type integer: "string"', True),
        ('Invalid value: "x": spec.t in body must be of type date-time: "x"', True),
        ("Invalid value: 0: spec.n in body should be greater than or equal to 1", False),
        ('Duplicate value: {"name":"a"}', False),
        ('Invalid value: "A": a lowercase RFC 1123 subdomain must consist of ...', False),
    ],
)
def test_blocks_rules(detail: str, blocks: bool) -> None:
    assert blocks_rules(FieldError.at(("spec",), "spec", detail)) is blocks


def test_unknown_fields_and_name_errors_do_not_block() -> None:
    obj = {
        "apiVersion": API,
        "kind": "TrainJob",
        "metadata": {"name": "Bad_Name", "namespace": "default"},
        "spec": {"runtimeRef": {"name": "x"}, "managedBy": "me", "bogus": 1},
    }
    found = admit(obj, crd("TrainJob"), trainer_crds())
    assert len(found) == 2  # unknown field, metadata.name
    assert texts(check_rules(obj, crd("TrainJob"), found, kubernetes=MODERN)) == [
        "<nil>: Invalid value: metadata.name must match RFC 1035 DNS label format",
        'spec.managedBy: Invalid value: "me": ManagedBy must be trainer.kubeflow.org/trainjob-controller or kueue.x-k8s.io/multikueue if set',
    ]


def test_undecodable_metadata_skips_cel() -> None:
    obj = {
        "apiVersion": API,
        "kind": "TrainJob",
        "metadata": {"name": 5},
        "spec": {"runtimeRef": {"name": "x"}, "managedBy": "me"},
    }
    found = admit(obj, crd("TrainJob"), trainer_crds())
    assert check_rules(obj, crd("TrainJob"), found) == []


def test_loader_reports_cel_errors_at_their_lines() -> None:
    from compiler.errors import InputError
    from compiler.load.loader import load_texts

    text = f"""apiVersion: {API}
kind: TrainJob
metadata:
  name: 9lives
spec:
  runtimeRef: {{name: torch-distributed}}
  managedBy: me
"""
    with pytest.raises(InputError) as raised:
        load_texts([("job.yaml", text)])
    problems = [(str(p.location), p.field_path, p.message) for p in raised.value.problems]
    assert problems == [
        (
            "job.yaml:1:1",
            "<nil>",
            'Invalid value: "object": metadata.name must match RFC 1035 DNS label format',
        ),
        (
            "job.yaml:7:3",
            "spec.managedBy",
            'Invalid value: "string": ManagedBy must be trainer.kubeflow.org/trainjob-controller or kueue.x-k8s.io/multikueue if set',
        ),
    ]


# --- Kubernetes semantics on a made-up CRD -----------------------------------------------------


def made_up(schema: dict[str, Any], kind: str = "Widget") -> CrdInfo:
    root = {
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": schema,
        },
    }
    return CrdInfo("example.com", "v1", kind, kind.lower() + "s", True, False, compile_schema(root))


def widget(spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "namespace": "ns", "labels": {"a": "b"}},
        "spec": spec,
    }


def run(schema: dict[str, Any], spec: Any, old: Any = None, kind: str = "Widget") -> list[str]:
    info = made_up(schema, kind)
    return texts(
        check_rules(widget(spec), info, old=None if old is None else widget(old), kubernetes=MODERN)
    )


def rules(*items: dict[str, Any]) -> list[dict[str, Any]]:
    return list(items)


def test_message_expression_reason_and_field_path() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "integer"},
            "m": {"type": "object", "additionalProperties": {"type": "string"}},
        },
        "x-kubernetes-validations": rules(
            {
                "rule": "self.a < 3",
                "messageExpression": "'a is ' + string(self.a)",
                "fieldPath": ".a",
            },
            {"rule": "self.a < 2", "message": "too big", "reason": "FieldValueForbidden"},
            {"rule": "self.a < 1", "reason": "FieldValueRequired", "fieldPath": ".m['x.y']"},
            {
                "rule": "self.a < 0",
                "messageExpression": "self.a",
                "message": "fallback",
                "reason": "FieldValueDuplicate",
            },
            {"rule": "self.a < -1", "messageExpression": "'  '", "fieldPath": ".nope"},
        ),
    }
    assert run(schema, {"a": 5, "m": {}}) == sorted(
        [
            "spec.a: Invalid value: a is 5",  # the value is the rule node's (an object: not shown)
            "spec: Forbidden: too big",
            "spec.m[x.y]: Required value: failed rule: self.a < 1",
            "spec: Duplicate value",
            "spec: Invalid value: failed rule: self.a < -1",
        ]
    )


def test_escaped_names_numbers_bytes_and_int_or_string() -> None:
    schema = {
        "type": "object",
        "properties": {
            "dash-name": {"type": "string"},
            "namespace": {"type": "string"},
            "ratio": {"type": "number"},
            "data": {"type": "string", "format": "byte"},
            "port": {"x-kubernetes-int-or-string": True},
            "opt": {"type": "string", "nullable": True},
        },
        "x-kubernetes-validations": rules(
            {"rule": "self.dash__dash__name == 'x' && self.namespace == 'n'"},
            {"rule": "type(self.ratio) == double && self.ratio == 2.0"},
            {"rule": "self.data == b'hi'"},
            {"rule": "type(self.port) == string ? self.port == 'http' : self.port > 0"},
            {"rule": "!has(self.opt)"},
        ),
    }
    assert (
        run(
            schema,
            {
                "dash-name": "x",
                "namespace": "n",
                "ratio": 2,
                "data": "aGk=",
                "port": "http",
                "opt": None,
            },
        )
        == []
    )
    assert run(
        schema, {"dash-name": "y", "namespace": "n", "ratio": 2, "data": "aGk=", "port": 0}
    ) == [
        "spec: Invalid value: failed rule: self.dash__dash__name == 'x' && self.namespace == 'n'",
        "spec: Invalid value: failed rule: type(self.port) == string ? self.port == 'http' : self.port > 0",
    ]


def test_root_sees_type_meta_and_only_name_of_metadata() -> None:
    root = {
        "type": "object",
        "properties": {"metadata": {"type": "object"}, "spec": {"type": "object"}},
        "x-kubernetes-validations": [
            {
                "rule": "self.kind == 'Widget' && self.metadata.name == 'w' && !has(self.metadata.labels)"
            },
            {"rule": "self.metadata.namespace == 'ns'"},
        ],
    }
    info = CrdInfo("example.com", "v1", "Widget", "widgets", True, False, compile_schema(root))
    assert texts(check_rules(widget({}), info, kubernetes=MODERN)) == [
        "<nil>: Invalid value: \"object\": no such key: namespace evaluating rule: self.metadata.namespace == 'ns'"
    ]


def test_items_and_map_values_each_run_with_their_path() -> None:
    schema = {
        "type": "object",
        "properties": {
            "list": {
                "type": "array",
                "items": {
                    "type": "integer",
                    "x-kubernetes-validations": rules({"rule": "self > 0", "message": "positive"}),
                },
            },
            "map": {
                "type": "object",
                "additionalProperties": {
                    "type": "string",
                    "x-kubernetes-validations": rules({"rule": "self != ''", "message": "empty"}),
                },
            },
        },
    }
    assert run(schema, {"list": [1, -1, 0], "map": {"a.b/c": "", "d": "x"}}) == [
        "spec.list[1]: Invalid value: -1: positive",
        "spec.list[2]: Invalid value: 0: positive",
        'spec.map[a.b/c]: Invalid value: "": empty',
    ]


def test_set_and_map_lists_compare_without_order_but_index_in_order() -> None:
    schema = {
        "type": "object",
        "properties": {
            "set": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
            "ports": {
                "type": "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
                "items": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}, "n": {"type": "integer"}},
                },
            },
        },
        "x-kubernetes-validations": rules(
            {"rule": "self.set == ['a', 'b']", "message": "set"},
            {"rule": "self.ports == oldSelf.ports", "message": "ports"},
            {"rule": "self.set[0] == 'b'", "message": "first"},
        ),
    }
    spec: dict[str, Any] = {
        "set": ["b", "a"],
        "ports": [{"name": "y", "n": 2}, {"name": "x", "n": 1}],
    }
    old = {"set": ["a"], "ports": [{"name": "x", "n": 1}, {"name": "y", "n": 2}]}
    assert run(schema, spec, old) == []
    spec["ports"][0]["n"] = 3
    assert run(schema, spec, old) == ["spec: Invalid value: ports"]


def test_transition_rules_need_a_correlated_old_value() -> None:
    item = {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "v": {
                "type": "integer",
                "x-kubernetes-validations": rules(
                    {"rule": "self == oldSelf", "message": "immutable"}
                ),
            },
        },
    }
    schema = {
        "type": "object",
        "properties": {
            "byname": {
                "type": "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
                "items": item,
            },
            "atomic": {"type": "array", "items": item},
        },
    }
    old = {
        "byname": [{"name": "a", "v": 1}, {"name": "b", "v": 1}],
        "atomic": [{"name": "a", "v": 1}],
    }
    new = {
        "byname": [{"name": "b", "v": 1}, {"name": "a", "v": 2}, {"name": "c", "v": 9}],
        "atomic": [{"name": "a", "v": 2}],
    }
    assert run(schema, new, old) == ["spec.byname[1].v: Invalid value: 2: immutable"]
    assert run(schema, new) == []  # create: transition rules never run


def test_ratcheting_keeps_unchanged_invalid_values() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {
                "type": "string",
                "x-kubernetes-validations": rules({"rule": "self.startsWith('x')", "message": "x"}),
            },
            "b": {"type": "integer"},
        },
    }
    warnings: list[str] = []
    info = made_up(schema)
    errors = check_rules(
        widget({"a": "bad", "b": 2}),
        info,
        old=widget({"a": "bad", "b": 1}),
        warnings=warnings,
        kubernetes=MODERN,
    )
    assert errors == [] and warnings == ['spec.a: Invalid value: "bad": x']
    assert run(schema, {"a": "worse"}, {"a": "bad"}) == ['spec.a: Invalid value: "worse": x']


def test_date_time_self_is_a_timestamp_and_duration_a_duration() -> None:
    schema = {
        "type": "object",
        "properties": {
            "at": {
                "type": "string",
                "format": "date-time",
                "x-kubernetes-validations": rules(
                    {"rule": "self > timestamp('2020-01-01T00:00:00Z')", "message": "old"},
                    {"rule": "self == oldSelf", "message": "immutable"},
                ),
            },
            "ttl": {
                "type": "string",
                "format": "duration",
                "x-kubernetes-validations": rules(
                    {"rule": "self <= duration('1h')", "message": "long"}
                ),
            },
        },
    }
    assert run(schema, {"at": "2026-05-01T10:00:00.5+02:00", "ttl": "30m"}) == []
    assert run(schema, {"at": "2019-12-31T23:59:59Z", "ttl": "1h30m"}) == [
        'spec.at: Invalid value: "2019-12-31T23:59:59Z": old',
        'spec.ttl: Invalid value: "1h30m": long',
    ]
    # equal instants written differently are equal timestamps
    assert run(schema, {"at": "2026-05-01T08:00:00Z"}, {"at": "2026-05-01T10:00:00+02:00"}) == []


def test_runtime_errors_are_reported_in_go_words() -> None:
    schema = {
        "type": "object",
        "properties": {
            "n": {"x-kubernetes-int-or-string": True},
            "l": {"type": "array", "items": {"type": "string"}},
        },
        "x-kubernetes-validations": rules(
            {"rule": "self.n + 1 > 0"}, {"rule": "self.l[3] == 'x'"}, {"rule": "self.missing == 1"}
        ),
    }
    assert run(schema, {"n": "a", "l": []}) == [
        "spec: Invalid value: \"object\": 'no such overload': call arguments did not match a supported operator, function or macro signature for rule: self.n + 1 > 0",
        "spec: Invalid value: \"object\": index out of bounds: 3 evaluating rule: self.l[3] == 'x'",
        'spec: Invalid value: "object": no such key: missing evaluating rule: self.missing == 1',
    ]


def test_runaway_rule_stops_and_skips_the_rest() -> None:
    runaway = "self.l.all(x, self.l.all(y, self.l.all(z, x + y + z >= 0)))"
    schema = {
        "type": "object",
        "properties": {"l": {"type": "array", "items": {"type": "integer"}}},
        "x-kubernetes-validations": rules(
            {"rule": runaway}, {"rule": "false", "message": "never reached"}
        ),
    }
    start = time.perf_counter()
    found = run(schema, {"l": list(range(100))})
    assert time.perf_counter() - start < 5
    assert found == [
        f"spec: Invalid value: \"object\": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: {runaway}"
    ]


def test_a_rule_that_does_not_compile_is_a_setup_error() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "string", "x-kubernetes-validations": rules({"rule": "self.matches('["})}
        },
    }
    with pytest.raises(
        SetupError, match=r"brokens\.example\.com \(version v1\).* at \.spec\.a .*self.matches"
    ):
        run(schema, {"a": "x"}, kind="Broken")
    broken: dict[str, Any] = {"type": "object", "x-kubernetes-validations": [{"rule": "self.foo("}]}
    with pytest.raises(SetupError, match=r"Syntax error"):
        run(broken, {}, kind="Broken2")


def test_rules_compile_once_per_process() -> None:
    import compiler.apiserver.crd_rules as crd_rules

    rule_sites(crd("TrainJob"))
    before = len(crd_rules._PROGRAMS)
    for _ in range(3):
        check_rules(trainjob(), crd("TrainJob"))
    assert len(crd_rules._PROGRAMS) == before


# --- throughput ------------------------------------------------------------------------------


def generated_trainjobs(count: int) -> list[dict[str, Any]]:
    jobs = []
    for index in range(count):
        jobs.append(
            trainjob(
                f"job-{index}",
                activeDeadlineSeconds=100 + index,
                initializer={
                    "dataset": {"storageUri": f"hf://data/{index}"},
                    "model": {"storageUri": f"s3://m/{index}"},
                },
                trainer={
                    "image": "pytorch",
                    "numNodes": 1 + index % 4,
                    "env": [{"name": f"E{i}", "value": str(i)} for i in range(index % 5)],
                },
                runtimePatches=[
                    pod_patch(
                        containers=[{"name": "node"}],
                        volumes=[{"name": "v", "emptyDir": {}}],
                        serviceAccountName=f"sa-{index}",
                    )
                ],
            )
        )
    return jobs


def test_generated_trainjobs_pass_on_create_and_update() -> None:
    jobs = generated_trainjobs(50)
    info = crd("TrainJob")
    for obj in jobs:
        assert check_rules(obj, info) == []
        assert check_rules(obj, info, old=copy.deepcopy(obj)) == []


def test_message_expression_sees_old_self_on_update() -> None:
    schema = {
        "type": "object",
        "properties": {
            "n": {
                "type": "integer",
                "x-kubernetes-validations": rules(
                    {"rule": "self == oldSelf", "messageExpression": "'was ' + string(oldSelf)"}
                ),
            }
        },
    }
    assert run(schema, {"n": 2}, {"n": 1}) == ["spec.n: Invalid value: 2: was 1"]


# --- Kubernetes 1.34: the schema type as the bad value ------------------------------------


def test_kubernetes_1_34_shows_the_schema_type_of_the_failing_node() -> None:
    """The texts kube-apiserver v1.34.4 answered for these inputs (tests/live, make
    conformance-live: error-managedby-invalid, error-runtime-two-mlpolicies,
    flux-error-runtime-numprocpernode-zero, error-trainjob-name-invalid)."""
    job = trainjob(managedBy="example.com/custom-controller")
    assert texts(check_rules(job, crd("TrainJob"), kubernetes=(1, 34))) == [
        'spec.managedBy: Invalid value: "string": ManagedBy must be '
        "trainer.kubeflow.org/trainjob-controller or kueue.x-k8s.io/multikueue if set"
    ]
    assert texts(check_rules(job, crd("TrainJob"), kubernetes=(1, 35))) == [
        'spec.managedBy: Invalid value: "example.com/custom-controller": ManagedBy must be '
        "trainer.kubeflow.org/trainjob-controller or kueue.x-k8s.io/multikueue if set"
    ]
    both = runtime("TrainingRuntime", {"mlPolicy": {"torch": {}, "mpi": {}}})
    assert texts(check_rules(both, crd("TrainingRuntime"), kubernetes=(1, 34))) == [
        'spec.mlPolicy: Invalid value: "object": Only one of the policy can be configured'
    ]
    assert texts(check_rules(both, crd("TrainingRuntime"), kubernetes=(1, 35))) == [
        "spec.mlPolicy: Invalid value: Only one of the policy can be configured"
    ]
    named = trainjob(name="a.b")
    assert texts(check_rules(named, crd("TrainJob"), kubernetes=(1, 34))) == [
        '<nil>: Invalid value: "object": metadata.name must match RFC 1035 DNS label format'
    ]
