"""MPI plugin tests, re-expressing upstream v2.3.0 test cases.

Each test names its source: ``mpi_test.go`` (pkg/runtime/framework/plugins/mpi, TestMPI and
TestValidate), ``framework_test.go`` (pkg/runtime/framework/core, TestRunComponentBuilderPlugins)
or ``trainingruntime_test.go`` (pkg/runtime/core), then the Go case name.

Two differences from the Go fixtures, both by design:

* upstream's unit fixtures hand-write each PodSet's endpoint iterator (e.g. only
  ``trainJob-node-1-0`` for a node count of 2); trainc derives endpoints from the count,
  replicas and subdomain (PodSet.endpoints), so the expected hostfiles list every pod;
* the SSH Secret is a SecretRequirement, never an object, and is recorded whether or
  not it exists in a cluster (the apply step creates it only if absent). The Go cases
  about the API server (Secret already exists, Get fails) have no counterpart.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from compiler.errors import FieldError, InputError
from compiler.render.framework import RenderOptions, TrainJobContext
from compiler.render.info import Info, JsonObject, PodSet, PodSetContainer, SecretRequirement
from compiler.render.pipeline import render_trainjob
from compiler.render.plugins.mpi import MPIPlugin
from compiler.upstream.names import ANCESTOR_TRAINER, LAUNCHER, NODE

INVALID = "FieldValueInvalid"
NAME = "trainJob"
SSH_VOLUME = {
    "name": "mpi-ssh-auth",
    "secret": {
        "secretName": f"{NAME}-mpi-ssh-auth",
        "defaultMode": 0o400,
        "items": [
            {"key": "ssh-privatekey", "path": "id_rsa", "mode": 0o640},
            {"key": "ssh-publickey", "path": "id_rsa.pub", "mode": 0o644},
            {"key": "ssh-publickey", "path": "authorized_keys", "mode": 0o644},
        ],
    },
}
HOSTFILE_VOLUME = {
    "name": "mpi-hostfile",
    "configMap": {
        "name": f"{NAME}-mpi-hostfile",
        "items": [{"key": "hostfile", "path": "hostfile", "mode": 0o444}],
    },
}
OWNER = {
    "apiVersion": "trainer.kubeflow.org/v1alpha1",
    "kind": "TrainJob",
    "name": NAME,
    "uid": NAME,
    "controller": True,
    "blockOwnerDeletion": True,
}
RESERVED_MESSAGE = "must not have reserved envs, invalid envs configured: "
LAUNCHER_AS_NODE_MESSAGE = (
    "must have 1 when MPI trainingRuntime with enabled runLauncherAsNode "
    "does not have either launcher and node"
)


def ompi(slots: int) -> list[JsonObject]:
    return [
        {"name": "OMPI_MCA_orte_default_hostfile", "value": "/etc/mpi/hostfile"},
        {"name": "OMPI_MCA_orte_keep_fqdn_hostnames", "value": "true"},
        {"name": "OMPI_MCA_orte_set_default_slots", "value": str(slots)},
        {"name": "OMPI_MCA_plm_rsh_args", "value": "-o ConnectionAttempts=10"},
    ]


def mpi_policy(
    num_proc: int = 1,
    implementation: str = "OpenMPI",
    ssh_path: str = "/root/.ssh",
    launcher_as_node: bool = False,
) -> JsonObject:
    """``MPIPolicy(numProcPerNode, implementation, sshAuthMountPath, runLauncherAsNode)``."""
    return {
        "numProcPerNode": num_proc,
        "mpiImplementation": implementation,
        "sshAuthMountPath": ssh_path,
        "runLauncherAsNode": launcher_as_node,
    }


def pod_set(
    name: str,
    ancestor: str | None = None,
    count: int = 1,
    containers: tuple[str, ...] = (),
) -> PodSet:
    return PodSet(
        name=name,
        ancestor=ancestor,
        count=count,
        containers=[PodSetContainer(name=c) for c in containers],
        init_containers=[],
        volumes=[],
        single_pod_requests={},
        subdomain=NAME,
        trainjob_name=NAME,
    )


def make_info(policy: JsonObject | None, *pod_sets: PodSet) -> Info:
    return Info(
        labels={},
        annotations={},
        ml_policy=None if policy is None else {"mpi": policy},
        pod_group_policy=None,
        jobset_spec={},
        pod_sets=list(pod_sets),
    )


def make_job(trainer: JsonObject | None = None) -> TrainJobContext:
    spec: JsonObject = {"runtimeRef": {"name": "test-runtime"}}
    if trainer is not None:
        spec["trainer"] = trainer
    return TrainJobContext(
        {"metadata": {"name": NAME, "namespace": "default"}, "spec": spec},
        RenderOptions(owner_uid=NAME),
    )


def hostfile_configmap(text: str) -> JsonObject:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": f"{NAME}-mpi-hostfile",
            "namespace": "default",
            "ownerReferences": [OWNER],
        },
        "data": {"hostfile": text},
    }


SSH_REQUIREMENT = SecretRequirement(
    name=f"{NAME}-mpi-ssh-auth",
    namespace="default",
    type="kubernetes.io/ssh-auth",
    keys=("ssh-privatekey", "ssh-publickey"),
    generator="ssh-ecdsa-p521",
    immutable=True,
    owner_references=(OWNER,),
)


def run(info: Info, job: TrainJobContext) -> list[JsonObject]:
    plugin = MPIPlugin()
    plugin.enforce_ml_policy(info, job)
    return plugin.build(info, job)


# --- TestMPI (mpi_test.go)


@pytest.mark.parametrize(
    "case, ml_policy",
    [
        ("no action when mlPolicySource is nil", None),
        ("no action when mlPolicySource mpi is null", {}),
    ],
)
def test_no_action(case: str, ml_policy: JsonObject | None) -> None:
    info = make_info(None, pod_set(LAUNCHER), pod_set(NODE, ANCESTOR_TRAINER))
    info.ml_policy = ml_policy
    before = copy.deepcopy(info)
    assert run(info, make_job({"numNodes": 2})) == [], case
    assert info == before, case
    assert MPIPlugin().validate(info, make_job({"numNodes": 2})) == [], case


def test_trainjob_num_nodes_respected() -> None:
    """mpi_test.go: "trainJob numNodes is respected rather than mlPolicy one"."""
    info = make_info(mpi_policy(), pod_set(LAUNCHER), pod_set(NODE, ANCESTOR_TRAINER))
    objects = run(info, make_job({"numNodes": 2}))
    launcher, node = info.pod_sets
    assert (launcher.count, node.count) == (1, 2)
    assert launcher.volumes == [SSH_VOLUME, HOSTFILE_VOLUME]
    assert node.volumes == [SSH_VOLUME]
    assert objects == [
        hostfile_configmap(f"{NAME}-node-0-0.{NAME} slots=1\n{NAME}-node-0-1.{NAME} slots=1\n")
    ]
    assert info.secret_requirements == [SSH_REQUIREMENT]


def test_trainjob_num_proc_per_node_respected() -> None:
    """mpi_test.go: "trainJob numProcPerNode is respected rather than mlPolicy one"."""
    info = make_info(mpi_policy(), pod_set(LAUNCHER), pod_set(NODE, ANCESTOR_TRAINER))
    objects = run(info, make_job({"numNodes": 1, "numProcPerNode": 2}))
    assert info.ml_policy == {"mpi": mpi_policy(num_proc=2)}
    assert objects == [hostfile_configmap(f"{NAME}-node-0-0.{NAME} slots=2\n")]


def test_num_proc_per_node_from_trainjob_gpus() -> None:
    """mpi_test.go: "numProcPerNode is set to number of GPUs in TrainJob" (custom.com/gpu 5)."""
    info = make_info(mpi_policy(), pod_set(LAUNCHER), pod_set(NODE, ANCESTOR_TRAINER))
    job = make_job({"numNodes": 1, "resourcesPerNode": {"requests": {"custom.com/gpu": "5"}}})
    objects = run(info, job)
    assert info.ml_policy == {"mpi": mpi_policy(num_proc=5)}
    assert objects == [hostfile_configmap(f"{NAME}-node-0-0.{NAME} slots=5\n")]


def test_run_launcher_as_node() -> None:
    """mpi_test.go: "runLauncherAsNode is true" (numNodes 10: node 9, launcher line first)."""
    info = make_info(
        mpi_policy(launcher_as_node=True),
        pod_set(LAUNCHER, containers=(NODE,)),
        pod_set(NODE, ANCESTOR_TRAINER, containers=(NODE,)),
    )
    objects = run(info, make_job({"numNodes": 10}))
    launcher, node = info.pod_sets
    assert (launcher.count, node.count) == (1, 9)
    assert launcher.containers[0].volume_mounts == [
        {"name": "mpi-ssh-auth", "mountPath": "/root/.ssh"},
        {"name": "mpi-hostfile", "mountPath": "/etc/mpi"},
    ]
    assert launcher.containers[0].env == ompi(1)
    assert node.containers[0].volume_mounts == [{"name": "mpi-ssh-auth", "mountPath": "/root/.ssh"}]
    assert node.containers[0].env == []
    assert launcher.volumes == [SSH_VOLUME, HOSTFILE_VOLUME]
    assert node.volumes == [SSH_VOLUME]
    lines = [f"{NAME}-launcher-0-0.{NAME} slots=1\n"]
    lines += [f"{NAME}-node-0-{i}.{NAME} slots=1\n" for i in range(9)]
    assert objects == [hostfile_configmap("".join(lines))]


def test_secret_requirement_without_trainer() -> None:
    """mpi_test.go: "sshAuth secret already has existed in the cluster" (launcher only, as node).

    Upstream then skips the Secret; trainc records the requirement either way.
    """
    info = make_info(mpi_policy(launcher_as_node=True), pod_set(LAUNCHER))
    objects = run(info, make_job())
    assert info.pod_sets[0].volumes == [SSH_VOLUME, HOSTFILE_VOLUME]
    assert objects == [hostfile_configmap(f"{NAME}-launcher-0-0.{NAME} slots=1\n")]
    assert info.secret_requirements == [SSH_REQUIREMENT]
    assert SSH_REQUIREMENT.as_object()["data"] == {"ssh-privatekey": "", "ssh-publickey": ""}


# --- mpi.go branches without an upstream unit case (goldens pin them against the oracle)


def test_only_node_containers_touched() -> None:
    info = make_info(
        mpi_policy(ssh_path="/home/mpiuser/.ssh"),
        pod_set(LAUNCHER, ANCESTOR_TRAINER, containers=("launcher", NODE)),
        pod_set(NODE, containers=("metrics", NODE)),
        pod_set("extra", containers=(NODE,)),
    )
    run(info, make_job({"numNodes": 3}))
    launcher, node, extra = info.pod_sets
    assert launcher.containers[0] == PodSetContainer(name="launcher")
    assert node.containers[0] == PodSetContainer(name="metrics")
    assert launcher.containers[1].volume_mounts[0]["mountPath"] == "/home/mpiuser/.ssh"
    assert extra == pod_set("extra", containers=(NODE,))
    assert node.count == 3


def test_runtime_gpus_only_when_runtime_num_proc_is_one() -> None:
    gpu_spec = {
        "replicatedJobs": [
            {
                "name": NODE,
                "template": {
                    "spec": {
                        "template": {
                            "spec": {
                                "containers": [
                                    {"name": NODE, "resources": {"limits": {"nvidia.com/gpu": "8"}}}
                                ]
                            }
                        }
                    }
                },
            }
        ]
    }
    for num_proc, slots in ((1, 8), (2, 2)):
        info = make_info(mpi_policy(num_proc=num_proc), pod_set(NODE, ANCESTOR_TRAINER))
        info.jobset_spec = gpu_spec
        MPIPlugin().enforce_ml_policy(info, make_job())
        assert info.ml_policy == {"mpi": mpi_policy(num_proc=slots)}


def test_unsupported_implementation() -> None:
    """Only raised with a launcher ``node`` container; the hostfile is then empty."""
    without = make_info(
        mpi_policy(implementation=""), pod_set(LAUNCHER, containers=("mpirun",)), pod_set(NODE)
    )
    assert run(without, make_job()) == [hostfile_configmap("")]
    assert MPIPlugin().validate(without, make_job()) == []
    with_node = make_info(mpi_policy(implementation=""), pod_set(LAUNCHER, containers=(NODE,)))
    errors = MPIPlugin().validate(with_node, make_job())
    # the controller's reconcile error: no field, no error type (it is not a field error)
    assert [(e.field, e.type) for e in errors] == [("", "")]
    assert errors[0].message.startswith(
        "TrainJob resources reconciliation failed: MPI implementation for 0x<address> "
        "doesn't supported"
    )
    assert 'which is "":' in errors[0].message
    with pytest.raises(InputError):
        MPIPlugin().enforce_ml_policy(with_node, make_job())


# --- TestValidate (mpi_test.go)


def validate(
    policy: JsonObject | None, trainer: JsonObject | None, *pod_sets: PodSet
) -> list[FieldError]:
    return MPIPlugin().validate(make_info(policy, *pod_sets), make_job(trainer))


@pytest.mark.parametrize(
    "case, policy, trainer, pod_sets",
    [
        ("no action when info does not have MLPolicySource", None, None, ()),
        ("numProcPerNode typed is int", mpi_policy(), {"numProcPerNode": 8}, ()),
        (
            "runtime does not have Launcher but TrainJob has only 1 numNodes",
            mpi_policy(launcher_as_node=True),
            {"numNodes": 1},
            (pod_set(NODE, ANCESTOR_TRAINER, containers=(NODE,)),),
        ),
        (
            "trainer has non-reserved env is valid",
            mpi_policy(),
            {"env": [{"name": "CUSTOM_ENV", "value": "custom-value"}]},
            (),
        ),
    ],
)
def test_validate_accepts(
    case: str, policy: JsonObject | None, trainer: JsonObject | None, pod_sets: tuple[PodSet, ...]
) -> None:
    assert validate(policy, trainer, *pod_sets) == [], case


def test_validate_no_mpi_policy() -> None:
    """mpi_test.go: "info does not have MPIPolicySource"."""
    info = make_info(None)
    info.ml_policy = {"numNodes": 2}
    assert MPIPlugin().validate(info, make_job({"numNodes": 3})) == []


@pytest.mark.parametrize(
    "case, pod_sets",
    [
        (
            "runtime does not have Launcher even though MPI with runLauncherAsNode has 2 numNodes",
            (pod_set(NODE, containers=(NODE,)),),
        ),
        (
            "runtime does not have Node even though MPI with runLauncherAsNode has 2 numNodes",
            (pod_set(LAUNCHER, containers=(NODE,)),),
        ),
        (
            "runtime does not have Launcher and Node "
            "even though MPI with runLauncherAsNode has 2 numNodes",
            (),
        ),
    ],
)
def test_validate_launcher_as_node(case: str, pod_sets: tuple[PodSet, ...]) -> None:
    errors = validate(mpi_policy(launcher_as_node=True), {"numNodes": 2}, *pod_sets)
    assert errors == [FieldError(INVALID, "spec.trainer.numNodes", LAUNCHER_AS_NODE_MESSAGE, 2)], (
        case
    )


@pytest.mark.parametrize(
    "case, names, listed",
    [
        (
            "trainer has reserved MPI env OMPI_MCA_orte_default_hostfile",
            ["OMPI_MCA_orte_default_hostfile"],
            "[OMPI_MCA_orte_default_hostfile]",
        ),
        (
            "trainer has multiple reserved MPI envs",
            ["OMPI_MCA_orte_default_hostfile", "OMPI_MCA_plm_rsh_args"],
            "[OMPI_MCA_orte_default_hostfile OMPI_MCA_plm_rsh_args]",
        ),
    ],
)
def test_validate_reserved_envs(case: str, names: list[str], listed: str) -> None:
    envs: list[dict[str, Any]] = [{"name": n, "value": "custom"} for n in names]
    errors = validate(mpi_policy(), {"env": envs})
    assert errors == [FieldError(INVALID, "spec.trainer.env", RESERVED_MESSAGE + listed, envs)], (
        case
    )


# --- The whole pipeline (framework_test.go, trainingruntime_test.go)


def _replicated_job(name: str, container: JsonObject, ancestor: str | None = None) -> JsonObject:
    template: JsonObject = {"spec": {"template": {"spec": {"containers": [container]}}}}
    if ancestor is not None:
        template["metadata"] = {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": ancestor}}
    return {"name": name, "groupName": "default", "replicas": 1, "template": template}


def _jobs_by_name(objects: list[JsonObject]) -> dict[str, JsonObject]:
    jobset = next(o for o in objects if o["kind"] == "JobSet")
    return {j["name"]: j for j in jobset["spec"]["replicatedJobs"]}


def _pod_spec(job: JsonObject) -> JsonObject:
    spec: JsonObject = job["template"]["spec"]["template"]["spec"]
    return spec


def test_pipeline_resources_on_launcher_and_node() -> None:
    """framework_test.go: "succeeded to build JobSet with container resources applied both to
    Launcher and Node replicatedJob" (numNodes 100, runLauncherAsNode: node 99, launcher 1)."""
    requests = {"cpu": "1", "memory": "4Gi"}
    runtime_spec = {
        "mlPolicy": {"mpi": mpi_policy(launcher_as_node=True)},
        "template": {
            "spec": {
                "replicatedJobs": [
                    _replicated_job(
                        LAUNCHER,
                        {
                            "name": NODE,
                            "image": "test:runtime",
                            "resources": {"requests": requests},
                        },
                        ANCESTOR_TRAINER,
                    ),
                    _replicated_job(
                        NODE,
                        {
                            "name": NODE,
                            "image": "test:openssh",
                            "command": ["command:openssh"],
                            "args": ["args:openssh"],
                            "resources": {"requests": requests},
                        },
                        "invalid",
                    ),
                ]
            }
        },
    }
    trainjob = {
        "metadata": {"name": "test-job", "namespace": "default"},
        "spec": {
            "runtimeRef": {"name": "test-runtime"},
            "trainer": {
                "numNodes": 100,
                "image": "test:trainjob",
                "command": ["trainjob"],
                "args": ["trainjob"],
                "resourcesPerNode": {"requests": requests},
            },
        },
    }
    result = render_trainjob(trainjob, runtime_spec, RenderOptions(owner_uid="uid"))
    assert result.errors == []
    jobs = _jobs_by_name(result.objects)
    launcher, node = jobs[LAUNCHER], jobs[NODE]
    assert launcher["template"]["spec"]["parallelism"] == 1
    assert node["template"]["spec"]["parallelism"] == 99
    launcher_container = _pod_spec(launcher)["containers"][0]
    assert launcher_container["image"] == "test:trainjob"
    assert launcher_container["command"] == ["trainjob"]
    assert launcher_container["resources"] == {"requests": requests}
    assert launcher_container["volumeMounts"] == [
        {"name": "mpi-ssh-auth", "mountPath": "/root/.ssh"},
        {"name": "mpi-hostfile", "mountPath": "/etc/mpi"},
    ]
    assert launcher_container["env"] == ompi(1)
    assert [v["name"] for v in _pod_spec(launcher)["volumes"]] == ["mpi-ssh-auth", "mpi-hostfile"]
    node_container = _pod_spec(node)["containers"][0]
    assert node_container["image"] == "test:openssh"
    assert node_container["command"] == ["command:openssh"]
    assert node_container["resources"] == {"requests": requests}
    assert node_container["volumeMounts"] == [{"name": "mpi-ssh-auth", "mountPath": "/root/.ssh"}]
    assert [v["name"] for v in _pod_spec(node)["volumes"]] == ["mpi-ssh-auth"]
    configmap = next(o for o in result.objects if o["kind"] == "ConfigMap")
    lines = configmap["data"]["hostfile"].splitlines()
    assert lines[0] == "test-job-launcher-0-0.test-job slots=1"
    assert lines[1:] == [f"test-job-node-0-{i}.test-job slots=1" for i in range(99)]
    assert [r.name for r in result.secret_requirements] == ["test-job-mpi-ssh-auth"]


def test_pipeline_open_mpi_values() -> None:
    """trainingruntime_test.go: "succeeded to build JobSet with OpenMPI values from the TrainJob"
    (numNodes 2, numProcPerNode 8, runLauncherAsNode false)."""
    runtime_spec = {
        "mlPolicy": {"numNodes": 1, "mpi": mpi_policy()},
        "template": {
            "spec": {
                "replicatedJobs": [
                    _replicated_job(
                        LAUNCHER, {"name": NODE, "command": ["mpirun"], "args": ["echo.sh"]}
                    ),
                    _replicated_job(
                        NODE,
                        {
                            "name": NODE,
                            "image": "test:runtime",
                            "command": ["runtime"],
                            "args": ["runtime"],
                        },
                        ANCESTOR_TRAINER,
                    ),
                ]
            }
        },
    }
    trainjob = {
        "metadata": {"name": "test-job", "namespace": "default"},
        "spec": {
            "runtimeRef": {"name": "test-runtime"},
            "trainer": {"numNodes": 2, "numProcPerNode": 8},
        },
    }
    result = render_trainjob(trainjob, runtime_spec, RenderOptions(owner_uid="uid"))
    assert result.errors == []
    jobs = _jobs_by_name(result.objects)
    assert jobs[LAUNCHER]["template"]["spec"]["parallelism"] == 1
    assert jobs[NODE]["template"]["spec"]["parallelism"] == 2
    assert _pod_spec(jobs[LAUNCHER])["containers"][0]["env"] == ompi(8)
    assert _pod_spec(jobs[NODE])["containers"][0]["volumeMounts"] == [
        {"name": "mpi-ssh-auth", "mountPath": "/root/.ssh"}
    ]
    configmap = next(o for o in result.objects if o["kind"] == "ConfigMap")
    assert configmap["data"]["hostfile"] == (
        "test-job-node-0-0.test-job slots=8\ntest-job-node-0-1.test-job slots=8\n"
    )
    requirement = result.secret_requirements[0]
    assert (requirement.name, requirement.type, requirement.immutable) == (
        "test-job-mpi-ssh-auth",
        "kubernetes.io/ssh-auth",
        True,
    )
