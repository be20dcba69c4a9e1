"""Flux plugin tests, re-expressing upstream v2.3.0 ``flux_test.go`` (pkg/runtime/framework/
plugins/flux) case by case, plus what trainc adds (the curve Secret as a requirement,
errors instead of upstream's nil dereferences).

Upstream's TestDeterministicCurve, TestBuildCurveSecret and TestEncodeZ85 test the key
derivation, which trainc never performs: their expectations on the Secret's name, key
and determinism are asserted on the requirement, and no key material appears anywhere.
"""

from __future__ import annotations

import copy
import doctest
from typing import Any

import pytest

from compiler.errors import FieldError, InputError, SetupError
from compiler.render.framework import RenderOptions, TrainJobContext
from compiler.render.info import Info, JsonObject, PodSet, PodSetContainer, SecretRequirement
from compiler.render.plugins import flux
from compiler.render.plugins.flux import (
    FluxPlugin,
    broker_settings,
    generate_range,
    hostlist,
    original_command,
    run_flags,
)
from compiler.upstream.names import ANCESTOR_TRAINER, NODE
from compiler.upstream.templates import FluxTemplates, flux_templates

INVALID = "FieldValueInvalid"
CM = "test-job-flux-entrypoint"

# Stand-ins with the real slot counts, so substitutions can be asserted exactly.
FAKE = FluxTemplates(
    broker="bind=%s connect=%s hosts=%s queue=%s",
    init="root=%s main=%s hosts=%s broker=[%s]",
    entrypoint="R=%s main=%s flags=%s",
)


def fake_templates(version: str = "v2.3.0") -> FluxTemplates:
    return FAKE


def pod_set(
    name: str = NODE,
    ancestor: str | None = ANCESTOR_TRAINER,
    containers: list[PodSetContainer] | None = None,
    init_containers: list[PodSetContainer] | None = None,
) -> PodSet:
    return PodSet(
        name=name,
        ancestor=ancestor,
        count=1,
        containers=containers if containers is not None else [PodSetContainer(name=NODE)],
        init_containers=init_containers or [],
        volumes=[],
        single_pod_requests={},
    )


def make_info(
    *pod_sets: PodSet, policy: JsonObject | None = None, jobset_spec: JsonObject | None = None
) -> Info:
    ml_policy = None if policy is None else {"flux": policy}
    return Info(
        labels={},
        annotations={},
        ml_policy=ml_policy,
        pod_group_policy=None,
        jobset_spec=jobset_spec or {},
        pod_sets=list(pod_sets),
    )


def make_job(
    trainer: JsonObject | None,
    name: str = "test-job",
    uid: str | None = "test-uid",
    namespace: str = "default",
) -> TrainJobContext:
    trainjob: JsonObject = {"metadata": {"name": name, "namespace": namespace}, "spec": {}}
    if trainer is not None:
        trainjob["spec"]["trainer"] = trainer
    return TrainJobContext(trainjob, RenderOptions(owner_uid=uid))


def owner(uid: str = "test-uid", name: str = "test-job") -> JsonObject:
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "name": name,
        "uid": uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }


def run(info: Info, job: TrainJobContext, plugin: FluxPlugin | None = None) -> list[JsonObject]:
    plugin = plugin or FluxPlugin(fake_templates)
    plugin.enforce_ml_policy(info, job)
    return plugin.build(info, job)


# --- flux_test.go TestFlux


def test_flux_no_action_when_flux_policy_is_nil() -> None:
    """TestFlux 'no action when flux policy is nil' (the templates are not even read)."""

    def no_templates(version: str) -> FluxTemplates:
        raise AssertionError("templates read for a non-Flux runtime")

    info = make_info(pod_set())
    before = copy.deepcopy(info)
    job = make_job({"numNodes": 2, "command": ["a"], "args": ["b"]})
    assert run(info, job, FluxPlugin(no_templates)) == []
    assert info == before
    assert job.trainer == {"numNodes": 2, "command": ["a"], "args": ["b"]}


def test_flux_mutations_are_applied_correctly() -> None:
    """TestFlux 'flux mutations are applied correctly': numNodes 2, runtime numProcPerNode 1."""
    info = make_info(pod_set(), policy={"numProcPerNode": 1})
    job = make_job({"numNodes": 2})
    objects = run(info, job)
    (node,) = info.pod_sets
    assert node.count == 1  # PlainML sets counts, not Flux
    assert node.init_containers == [
        PodSetContainer(
            name="flux-installer",
            image="ghcr.io/converged-computing/flux-view-ubuntu:tag-jammy",
            command=["/bin/bash", "/etc/flux-config/init.sh"],
            volume_mounts=[
                {"name": "flux-install", "mountPath": "/mnt/flux"},
                {"name": CM, "mountPath": "/etc/flux-config", "readOnly": True},
            ],
        )
    ]
    assert node.containers == [
        PodSetContainer(
            name=NODE,
            volume_mounts=[
                {"name": "flux-install", "mountPath": "/mnt/flux"},
                {"name": "spack-install", "mountPath": "/opt/software"},
                {"name": CM, "mountPath": "/etc/flux-config", "readOnly": True},
                {"name": "flux-curve", "mountPath": "/curve", "readOnly": True},
                {"name": "shared-memory", "mountPath": "/dev/shm", "readOnly": True},
            ],
        )
    ]
    assert node.volumes == [
        {"name": "spack-install", "emptyDir": {}},
        {"name": "flux-install", "emptyDir": {}},
        {"name": CM, "configMap": {"name": CM, "defaultMode": 0o755}},
        {"name": "shared-memory", "emptyDir": {"medium": "Memory"}},
        {
            "name": "flux-curve",
            "secret": {"secretName": "test-job-flux-curve", "defaultMode": 0o400},
        },
    ]
    # wantObjs: the ConfigMap with a controller reference; the Secret, here a requirement.
    assert objects == [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": CM, "namespace": "default", "ownerReferences": [owner()]},
            "data": {
                "entrypoint.sh": "R=--cores=0 main=test-job-node-0-0 flags=-N 2 -n 2",
                "init.sh": (
                    "root=/opt/view main=test-job-0 hosts=test-job-node-0-[0-1] "
                    "broker=[bind=tcp://eth0:%p "
                    "connect=tcp://%h.test-job.default.svc.cluster.local:%p "
                    "hosts=test-job-node-0-[0-1] queue=fcfs]"
                ),
            },
        }
    ]
    assert info.secret_requirements == [
        SecretRequirement(
            name="test-job-flux-curve",
            namespace="default",
            type="",
            keys=("curve.cert",),
            generator="flux-curve-from-uid",
            immutable=False,
            owner_references=(owner(),),
        )
    ]
    assert job.trainer == {
        "numNodes": 2,
        "command": ["/bin/bash", "/etc/flux-config/entrypoint.sh", ""],
    }


# --- flux_test.go TestValidate


@pytest.mark.parametrize(
    ("policy", "trainer", "pod_sets", "expected"),
    [
        pytest.param(None, None, [], [], id="valid when flux policy is nil"),
        pytest.param({}, None, [], [], id="valid when flux policy is present"),
        pytest.param(
            {"numProcPerNode": 0},
            None,
            [],
            [
                FieldError(
                    INVALID,
                    "spec.trainer.numProcPerNode",
                    "must be greater than or equal to 1 for Flux TrainJob",
                    0,
                )
            ],
            id="invalid when runtime policy numProcPerNode is less than one",
        ),
        pytest.param(
            {"numProcPerNode": 1},
            {"numProcPerNode": 0},
            [],
            [
                FieldError(
                    INVALID,
                    "spec.trainer.numProcPerNode",
                    "must be greater than or equal to 1 for Flux TrainJob",
                    0,
                )
            ],
            id="invalid when trainJob numProcPerNode is less than one",
        ),
        pytest.param(
            {},
            None,
            [pod_set(ancestor=None, init_containers=[PodSetContainer(name="flux-installer")])],
            [
                FieldError(
                    INVALID,
                    "spec.trainer.initContainers",
                    "InitContainer 'flux-installer' is reserved",
                    "flux-installer",
                )
            ],
            id="invalid when node podSet includes reserved flux installer init container",
        ),
    ],
)
def test_validate(
    policy: JsonObject | None,
    trainer: JsonObject | None,
    pod_sets: list[PodSet],
    expected: list[FieldError],
) -> None:
    info = make_info(*pod_sets, policy=policy)
    assert FluxPlugin(fake_templates).validate(info, make_job(trainer)) == expected


def test_validate_trainjob_numprocpernode_overrides_an_invalid_runtime_value() -> None:
    info = make_info(policy={"numProcPerNode": 0})
    assert FluxPlugin(fake_templates).validate(info, make_job({"numProcPerNode": 2})) == []


def test_validate_reserved_init_container_only_in_the_node_pod_set() -> None:
    launcher = pod_set(name="launcher", init_containers=[PodSetContainer(name="flux-installer")])
    assert FluxPlugin(fake_templates).validate(make_info(launcher, policy={}), make_job(None)) == []


# --- TestGenerateRange, TestGenerateHostlist


@pytest.mark.parametrize(
    ("size", "start", "want"),
    [(1, 0, "0"), (4, 0, "0-3"), (3, 10, "10-12")],
    ids=["single node", "multiple nodes starting at zero", "multiple nodes with offset start"],
)
def test_generate_range(size: int, start: int, want: str) -> None:
    assert generate_range(size, start) == want


@pytest.mark.parametrize(
    ("prefix", "size", "want"),
    [
        ("lammps-job", 1, "lammps-job-node-0-[0]"),
        ("flux-cluster", 4, "flux-cluster-node-0-[0-3]"),
        ("", 2, "-node-0-[0-1]"),
    ],
    ids=["prefix with one node", "prefix with four nodes", "empty prefix handled"],
)
def test_generate_hostlist(prefix: str, size: int, want: str) -> None:
    assert hostlist(prefix, size) == want


# --- TestGetOriginalCommand


@pytest.mark.parametrize(
    ("trainer", "want"),
    [
        (
            {"command": ["python"], "args": ["train.py", "--epochs", "10"]},
            "python train.py --epochs 10",
        ),
        ({"command": ["  python  "], "args": [" script.py "]}, "python    script.py"),
    ],
    ids=["full command and args", "command and args with extra spaces"],
)
def test_get_original_command(trainer: JsonObject, want: str) -> None:
    assert original_command(make_info(), trainer) == want


def test_original_command_uses_runtime_command_and_only_trainjob_args() -> None:
    info = make_info(
        pod_set(containers=[PodSetContainer(name=NODE, command=["python3", "train.py"])])
    )
    assert original_command(info, {"args": ["--lr", "0.1"]}) == "python3 train.py --lr 0.1"
    assert original_command(info, None) == "python3 train.py"
    assert original_command(info, {"command": []}) == ""


def test_original_command_trims_like_go_trimspace() -> None:
    # U+001F is not white space for Go (unicode.IsSpace); U+00A0 is.
    assert original_command(make_info(), {"command": ["\u00a0run\u001f"]}) == "run\u001f"


# --- The curve Secret (TestDeterministicCurve, TestBuildCurveSecret): never key material


def _requirement(uid: str | None, name: str = "test-job") -> SecretRequirement:
    info = make_info(pod_set(), policy={"numProcPerNode": 1})
    objects = run(info, make_job({"numNodes": 1}, name=name, uid=uid))
    assert all(o["kind"] != "Secret" for o in objects)
    (requirement,) = info.secret_requirements
    return requirement


def test_curve_requirement_is_deterministic_and_named_after_the_job() -> None:
    first = _requirement("uid-123")
    assert first == _requirement("uid-123")
    assert first.name == "test-job-flux-curve"
    assert first.keys == ("curve.cert",)
    assert first.as_object()["data"] == {"curve.cert": ""}
    assert first.generator == "flux-curve-from-uid"
    assert first.owner_references == (owner("uid-123"),)


def test_curve_requirement_without_uid_asks_for_a_random_key() -> None:
    requirement = _requirement(None)
    assert requirement.generator == "flux-curve-random"
    assert requirement.owner_references == ()


def test_config_map_without_uid_has_no_owner() -> None:
    info = make_info(pod_set(), policy={"numProcPerNode": 1})
    (config_map,) = run(info, make_job({"numNodes": 1}, uid=None))
    assert config_map["metadata"] == {"name": CM, "namespace": "default"}


# --- Settings, flags, resources


def test_settings_defaults_runtime_env_then_trainjob_env() -> None:
    container = PodSetContainer(
        name=NODE,
        env=[
            {"name": "FLUX_NETWORK_DEVICE", "value": "ib0"},
            {"name": "FLUX_QUEUE_POLICY", "value": "easy"},
            {"name": "FLUX_VIEW_IMAGE", "valueFrom": {"fieldRef": {"fieldPath": "x"}}},
            {"name": "OTHER", "value": "1"},
        ],
    )
    info = make_info(pod_set(containers=[container]), policy={})
    trainer = {
        "env": [
            {
                "name": "FLUX_QUEUE_POLICY",
                "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}},
            },
            {"name": "FLUX_VIEW_IMAGE", "value": "rocky:9"},
        ]
    }
    assert broker_settings(info, trainer) == {
        "FLUX_VIEW_IMAGE": "rocky:9",
        "FLUX_NETWORK_DEVICE": "ib0",
        "FLUX_QUEUE_POLICY": "",
    }


def test_broker_uses_settings_and_name_namespace_fqdn() -> None:
    container = PodSetContainer(name=NODE, env=[{"name": "FLUX_NETWORK_DEVICE", "value": "ib0"}])
    info = make_info(pod_set(containers=[container]), policy={"numProcPerNode": 1})
    job = make_job(
        {"numNodes": 3, "env": [{"name": "FLUX_QUEUE_POLICY", "value": "easy"}]}, namespace="hpc"
    )
    (config_map,) = run(info, job)
    assert config_map["metadata"]["namespace"] == "hpc"
    assert (
        "bind=tcp://ib0:%p connect=tcp://%h.test-job.hpc.svc.cluster.local:%p"
        in config_map["data"]["init.sh"]
    )
    assert "queue=easy]" in config_map["data"]["init.sh"]


def test_empty_view_image_leaves_the_installer_without_image() -> None:
    info = make_info(pod_set(), policy={"numProcPerNode": 1})
    job = make_job({"numNodes": 1, "env": [{"name": "FLUX_VIEW_IMAGE", "valueFrom": {}}]})
    run(info, job)
    assert info.pod_sets[0].init_containers[0].image == ""


@pytest.mark.parametrize(
    ("nodes", "tasks", "gpus", "want"),
    [
        (2, 4, 0, ("--cores=0-3", "-N 2 -n 8")),
        (2, 1, 1, ("--cores=0 --gpu=0", "-N 2 -n 2 -g 1")),
        (1, 5, 4, ("--cores=0-4 --gpu=0-3", "-N 1 -n 5 -g 4")),
        (65536, 65536, 0, ("--cores=0-65535", "-N 65536 -n 0")),  # int32 product wraps
    ],
)
def test_run_flags(nodes: int, tasks: int, gpus: int, want: tuple[str, str]) -> None:
    assert run_flags(nodes, tasks, gpus) == want


def _gpu_runtime_spec() -> JsonObject:
    container = {"name": NODE, "resources": {"limits": {"nvidia.com/gpu": "4"}}}
    return {
        "replicatedJobs": [
            {
                "name": NODE,
                "template": {"spec": {"template": {"spec": {"containers": [container]}}}},
            }
        ]
    }


def test_entrypoint_gpus_from_the_runtime() -> None:
    info = make_info(pod_set(), policy={"numProcPerNode": 1}, jobset_spec=_gpu_runtime_spec())
    (config_map,) = run(info, make_job({"numNodes": 2}))
    assert (
        config_map["data"]["entrypoint.sh"]
        == "R=--cores=0 --gpu=0-3 main=test-job-node-0-0 flags=-N 2 -n 2 -g 4"
    )


def test_entrypoint_trainjob_resources_replace_the_runtime_ones() -> None:
    info = make_info(pod_set(), policy={"numProcPerNode": 1}, jobset_spec=_gpu_runtime_spec())
    trainer = {"numNodes": 2, "numProcPerNode": 8, "resourcesPerNode": {"requests": {"cpu": "4"}}}
    (config_map,) = run(info, make_job(trainer))
    assert (
        config_map["data"]["entrypoint.sh"]
        == "R=--cores=0-7 main=test-job-node-0-0 flags=-N 2 -n 16"
    )


# --- The command rewrite and the PodSets it touches


def test_command_rewrite_drops_trainjob_args() -> None:
    info = make_info(pod_set(), policy={"numProcPerNode": 1})
    job = make_job({"numNodes": 1, "command": ["lmp"], "args": ["-in", "in.lj"]})
    FluxPlugin(fake_templates).enforce_ml_policy(info, job)
    assert job.trainer == {
        "numNodes": 1,
        "command": ["/bin/bash", "/etc/flux-config/entrypoint.sh", "lmp -in in.lj"],
    }


def test_only_the_node_pod_set_and_its_node_containers_change() -> None:
    existing = PodSetContainer(name="prepare", image="busybox")
    shm = {"name": "dshm", "mountPath": "/dev/shm"}
    node = pod_set(
        containers=[
            PodSetContainer(name=NODE, volume_mounts=[shm]),
            PodSetContainer(name="sidecar"),
        ],
        init_containers=[existing],
    )
    other = pod_set(name="dataset-initializer", ancestor="dataset-initializer")
    info = make_info(other, node, policy={"numProcPerNode": 1})
    run(info, make_job({"numNodes": 1}))
    assert info.pod_sets[0] == pod_set(name="dataset-initializer", ancestor="dataset-initializer")
    assert [c.name for c in info.pod_sets[1].init_containers] == ["prepare", "flux-installer"]
    node_mounts = info.pod_sets[1].containers[0].volume_mounts
    assert node_mounts[0] == {"name": "shared-memory", "mountPath": "/dev/shm", "readOnly": True}
    assert len(node_mounts) == 5
    assert info.pod_sets[1].containers[1].volume_mounts == []


# --- Preconditions upstream dereferences (a controller panic there)


def test_missing_trainer_is_an_input_error() -> None:
    info = make_info(pod_set(), policy={"numProcPerNode": 1})
    with pytest.raises(InputError) as error:
        FluxPlugin(fake_templates).enforce_ml_policy(info, make_job(None))
    assert error.value.problems[0].field_path == "spec.trainer"


def test_missing_num_nodes_is_an_input_error() -> None:
    info = make_info(pod_set(), policy={"numProcPerNode": 1})
    with pytest.raises(InputError) as error:
        run(info, make_job({"command": ["x"]}))
    (problem,) = error.value.problems
    assert problem.field_path == "spec.trainer.numNodes"
    assert str(problem.object) == "TrainJob default/test-job"


def test_undefaulted_runtime_numprocpernode_is_an_input_error() -> None:
    with pytest.raises(InputError, match="numProcPerNode"):
        run(make_info(pod_set(), policy={}), make_job({"numNodes": 1}))


def test_missing_templates_are_a_setup_error_for_flux_runtimes_only() -> None:
    def missing(version: str) -> FluxTemplates:
        raise SetupError("the Flux script template ... is missing")

    plugin = FluxPlugin(missing)
    plugin.enforce_ml_policy(make_info(pod_set()), make_job({"numNodes": 1}))
    with pytest.raises(SetupError):
        plugin.enforce_ml_policy(make_info(pod_set(), policy={}), make_job({"numNodes": 1}))


# --- With the pinned templates


def test_real_templates_render_the_scripts() -> None:
    try:
        templates = flux_templates()
    except SetupError as err:
        pytest.fail(f"upstream artifacts missing: `make setup` fetches them ({err})", pytrace=False)
    info = make_info(pod_set(), policy={"numProcPerNode": 4})
    (config_map,) = run(
        info, make_job({"numNodes": 2, "command": ["lmp"]}), FluxPlugin(lambda _version: templates)
    )
    data: dict[str, Any] = config_map["data"]
    assert 'hosts="test-job-node-0-[0-1]"' in data["init.sh"]
    assert 'default_bind = "tcp://eth0:%p"' in data["init.sh"]
    assert 'queue-policy = "fcfs"' in data["init.sh"]
    assert "flux R encode --hosts=${hosts} --cores=0-3 > /tmp/R" in data["entrypoint.sh"]
    assert 'flags="-N 2 -n 8  "' in data["entrypoint.sh"]
    assert "%s" not in data["init.sh"] + data["entrypoint.sh"]


def test_doctests() -> None:
    assert doctest.testmod(flux).failed == 0
