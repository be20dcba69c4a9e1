"""Torch plugin tests, re-expressing upstream v2.3.0 test cases.

Each test names its source: ``torch_test.go``/``torchtune_test.go`` (pkg/runtime/framework/
plugins/torch) or ``trainingruntime_test.go`` (pkg/runtime/core), then the Go case name.
Upstream compares env lists unsorted in TestTorchEnforceMLPolicy, so order is asserted too.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from compiler.errors import FieldError, InputError
from compiler.render.framework import TrainJobContext
from compiler.render.info import Info, JsonObject, PodSet, PodSetContainer
from compiler.render.plugins import torchtune
from compiler.render.plugins.torch import TorchPlugin
from compiler.render.resources import (
    num_cpu_per_node,
    num_gpu_per_node,
    resources_per_node_from_runtime,
)
from compiler.upstream.names import ANCESTOR_TRAINER, LABEL_ANCESTOR, NODE

RANK = {
    "name": "PET_NODE_RANK",
    "valueFrom": {
        "fieldRef": {
            "fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"
        }
    },
}
PORTS = [{"containerPort": 29500}]
INVALID = "FieldValueInvalid"


def pet(name: str, nodes: int, nproc: str, master: bool = True) -> list[JsonObject]:
    """The PET block upstream expects, in order; ``master=False`` for torchtune mode."""
    envs: list[JsonObject] = [
        {"name": "PET_NNODES", "value": str(nodes)},
        {"name": "PET_NPROC_PER_NODE", "value": nproc},
        RANK,
    ]
    if master:
        envs += [
            {"name": "PET_MASTER_ADDR", "value": f"{name}-node-0-0.{name}"},
            {"name": "PET_MASTER_PORT", "value": "29500"},
        ]
    return envs


def pod_set(
    name: str = NODE,
    ancestor: str | None = ANCESTOR_TRAINER,
    count: int = 1,
    containers: tuple[str, ...] = (NODE,),
    init_containers: tuple[str, ...] = (),
) -> PodSet:
    return PodSet(
        name=name,
        ancestor=ancestor,
        count=count,
        containers=[PodSetContainer(name=c) for c in containers],
        init_containers=[PodSetContainer(name=c) for c in init_containers],
        volumes=[],
        single_pod_requests={},
    )


def make_info(
    *pod_sets: PodSet,
    targets: list[JsonObject] | None = None,
    jobset_spec: JsonObject | None = None,
) -> Info:
    """Info for a torch runtime; ``targets`` become ``mlPolicy.torch.envInjection.targets``."""
    torch: JsonObject = {} if targets is None else {"envInjection": {"targets": targets}}
    return Info(
        labels={},
        annotations={},
        ml_policy={"torch": torch},
        pod_group_policy=None,
        jobset_spec=jobset_spec or {},
        pod_sets=list(pod_sets),
    )


def make_job(name: str = "test-job", runtime: str = "", **trainer: Any) -> TrainJobContext:
    """A TrainJob; ``requests=`` mirrors upstream's wrapper ``Container(...)`` (requests only)."""
    spec: JsonObject = {"runtimeRef": {"name": runtime}}
    if "requests" in trainer:
        trainer["resourcesPerNode"] = {"requests": trainer.pop("requests") or {}}
    spec["trainer"] = trainer
    return TrainJobContext({"metadata": {"name": name, "namespace": "default"}, "spec": spec})


def no_trainer_job(name: str = "test-job") -> TrainJobContext:
    return TrainJobContext({"metadata": {"name": name}, "spec": {"runtimeRef": {"name": "x"}}})


def trainer_container(info: Info) -> PodSetContainer:
    container = info.container_by_ancestor(ANCESTOR_TRAINER, NODE)
    assert container is not None
    return container


def enforce(info: Info, job: TrainJobContext) -> None:
    TorchPlugin().enforce_ml_policy(info, job)


# --- TestTorchEnforceMLPolicy (torch_test.go)


@pytest.mark.parametrize(
    "case, ml_policy",
    [
        ("no action when mlPolicySource is nil", None),
        ("no action when mlPolicySource torch is null", {}),
    ],
)
def test_enforce_no_action(case: str, ml_policy: JsonObject | None) -> None:
    info = make_info(pod_set())
    info.ml_policy = ml_policy
    before = copy.deepcopy(info)
    job = make_job(numNodes=2)
    enforce(info, job)
    assert info == before, case


def test_enforce_trainjob_num_nodes_respected() -> None:
    """torch_test.go: "trainJob numNodes is respected rather than mlPolicy one"."""
    info = make_info(pod_set(count=1))
    enforce(info, make_job("trainJob", numNodes=2))
    assert info.pod_sets[0].count == 2
    assert trainer_container(info).env == pet("trainJob", 2, "1")
    assert trainer_container(info).ports == PORTS


NPROC_CASES = [
    # (Go case name, TrainJob name, requests, numProcPerNode, expected PET_NPROC_PER_NODE)
    ("nproc_per_node=auto with CPU limit", "test-job", {"cpu": "4"}, None, "4"),
    ("nproc_per_node=auto with no CPU resources", "test-job", None, None, "1"),
    ("nproc_per_node=auto with low CPU limit", "test-job", {"cpu": "2"}, None, "2"),
    ("nproc_per_node=auto with CPU request but no limit", "test-job", {"cpu": "3"}, None, "3"),
    ("nproc_per_node=auto with millicore CPU limit", "test-job", {"cpu": "2.5"}, None, "3"),
    ("nproc_per_node=auto with fractional CPU limit", "test-job", {"cpu": "0.7"}, None, "1"),
    (
        "nproc_per_node=auto with GPU request should remain auto",
        "test-job",
        {"example.com/gpu": "2"},
        None,
        "auto",
    ),
    ("explicitly set nproc_per_node should be preserved", "test-job", {"cpu": "8"}, 3, "3"),
    (
        "nproc_per_node=auto with millicore CPU limit in m format",
        "test-job",
        {"cpu": "2500m"},
        None,
        "3",
    ),
    ("nproc_per_node=cpu with CPU limit", "cpu-job", {"cpu": "4"}, None, "4"),
    (
        "nproc_per_node=auto resolves to GPU count when GPU resources present",
        "cpu-gpu-job",
        {"cpu": "6", "example.com/gpu": "2"},
        None,
        "auto",
    ),
    ("nproc_per_node=cpu with fractional CPU", "cpu-frac-job", {"cpu": "3.7"}, None, "4"),
]


@pytest.mark.parametrize("case, name, requests, nproc, want", NPROC_CASES)
def test_enforce_nproc_per_node(
    case: str, name: str, requests: JsonObject | None, nproc: int | None, want: str
) -> None:
    """torch_test.go: the nproc_per_node cases of TestTorchEnforceMLPolicy."""
    trainer: dict[str, Any] = {"image": "test:image", "requests": requests}
    if nproc is not None:
        trainer["numProcPerNode"] = nproc
    info = make_info(pod_set())
    enforce(info, make_job(name, **trainer))
    assert trainer_container(info).env == pet(name, 1, want), case
    assert trainer_container(info).ports == PORTS


def test_enforce_multi_node_multi_gpu() -> None:
    """torch_test.go: "multi-node multi-GPU training with complete info"."""
    info = make_info(pod_set())
    requests = {"cpu": "8", "memory": "16Gi", "example.com/gpu": "4"}
    enforce(info, make_job("gpu-job", numNodes=4, requests=requests))
    assert info.pod_sets[0].count == 4
    assert trainer_container(info).env == pet("gpu-job", 4, "auto")


TUNE_ARGS = [
    "dtype=fp16",
    "batch_size=32",
    "epochs=10",
    "loss=torchtune.modules.loss.CEWithChunkedOutputLoss",
]


@pytest.mark.parametrize(
    "case, runtime, nodes, nproc, gpus, want_nproc, want_tail",
    [
        (
            "multi-devices full fine-tuning with torchtune",
            "torchtune-llama3.2-1b",
            1,
            None,
            "4",
            "auto",
            [
                "--rdzv_endpoint=torchtune-job-node-0-0.torchtune-job:29500",
                "full_finetune_distributed",
                "--config",
                "llama3_2/1B_full",
            ],
        ),
        (
            "single-device full fine-tuning with torchtune",
            "torchtune-llama3.2-1b",
            1,
            1,
            "1",
            "1",
            ["full_finetune_single_device", "--config", "llama3_2/1B_full_single_device"],
        ),
        (
            "multi-nodes full fine-tuning with torchtune",
            "torchtune-llama3.3-70b",
            2,
            8,
            "8",
            "8",
            [
                "--rdzv_endpoint=torchtune-job-node-0-0.torchtune-job:29500",
                "full_finetune_distributed",
                "--config",
                "llama3_3/70B_full_multinode",
            ],
        ),
    ],
)
def test_enforce_torchtune(
    case: str,
    runtime: str,
    nodes: int,
    nproc: int | None,
    gpus: str,
    want_nproc: str,
    want_tail: list[str],
) -> None:
    """torch_test.go: the three torchtune cases (env, port); the command follows torchtune.go."""
    trainer: dict[str, Any] = {
        "numNodes": nodes,
        "image": "torchtune-trainer:test",
        "command": ["tune", "run"],
        "args": list(TUNE_ARGS),
        "requests": {"cpu": "8", "memory": "16Gi", "example.com/gpu": gpus},
    }
    if nproc is not None:
        trainer["numProcPerNode"] = nproc
    info = make_info(pod_set(count=nodes))
    job = make_job("torchtune-job", runtime, **trainer)
    enforce(info, job)
    assert info.pod_sets[0].count == nodes
    assert trainer_container(info).env == pet("torchtune-job", nodes, want_nproc, master=False), (
        case
    )
    assert trainer_container(info).ports == PORTS
    assert job.trainer is not None
    assert job.trainer["command"] == ["tune", "run", *want_tail]
    assert job.trainer["args"] == TUNE_ARGS


def test_enforce_env_injection_init_container() -> None:
    """torch_test.go: "envInjection with init container"."""
    info = make_info(
        pod_set(count=2, init_containers=("preflight-check",)),
        targets=[{"jobName": NODE, "containerNames": ["preflight-check"]}],
    )
    enforce(info, make_job(numNodes=2))
    assert info.pod_sets[0].init_containers[0].env == pet("test-job", 2, "1")
    assert trainer_container(info).env == pet("test-job", 2, "1")


@pytest.mark.parametrize(
    "case, target, init_containers",
    [
        (
            "envInjection target container does not exist",
            {"jobName": NODE, "containerNames": ["non-existent-container"]},
            ("preflight-check",),
        ),
        (
            "envInjection target job does not exist",
            {"jobName": "missing-job", "containerNames": ["preflight-check"]},
            (),
        ),
    ],
)
def test_enforce_env_injection_missing(
    case: str, target: JsonObject, init_containers: tuple[str, ...]
) -> None:
    """torch_test.go: error text; the trainer container is already mutated, as upstream."""
    info = make_info(pod_set(init_containers=init_containers), targets=[target])
    with pytest.raises(InputError) as raised:
        enforce(info, make_job())
    container = target["containerNames"][0]
    assert str(raised.value) == (
        f'envInjection target podSet "{target["jobName"]}" container "{container}" '
        "not found in runtime template"
    ), case
    assert trainer_container(info).env == pet("test-job", 1, "1")
    assert all(c.env == [] for c in info.pod_sets[0].init_containers)


def test_enforce_env_injection_torchtune() -> None:
    """torch_test.go: "envInjection with torchtune command": targets still get the master vars."""
    info = make_info(
        pod_set(count=2, init_containers=("preflight-check",)),
        targets=[{"jobName": NODE, "containerNames": ["preflight-check"]}],
    )
    job = make_job(
        "test-job",
        "torchtune-llama3.2-1b",
        numNodes=2,
        command=["tune", "run"],
        args=["dtype=fp16"],
        requests={"cpu": "8", "example.com/gpu": "4"},
    )
    enforce(info, job)
    assert info.pod_sets[0].init_containers[0].env == pet("test-job", 2, "auto")
    assert trainer_container(info).env == pet("test-job", 2, "auto", master=False)
    assert trainer_container(info).ports == PORTS


def test_enforce_env_injection_multiple_containers() -> None:
    """torch_test.go: "envInjection with multiple containers in same target"."""
    info = make_info(
        pod_set(count=2, init_containers=("nccl-check", "driver-check")),
        targets=[{"jobName": NODE, "containerNames": ["nccl-check", "driver-check"]}],
    )
    enforce(info, make_job(numNodes=2))
    for container in info.pod_sets[0].init_containers:
        assert container.env == pet("test-job", 2, "1")
    assert trainer_container(info).env == pet("test-job", 2, "1")


def test_enforce_env_injection_sidecar() -> None:
    """torch_test.go: "envInjection with sidecar (regular container)"."""
    info = make_info(
        pod_set(containers=("sidecar", NODE)),
        targets=[{"jobName": NODE, "containerNames": ["sidecar"]}],
    )
    enforce(info, make_job())
    sidecar, node = info.pod_sets[0].containers
    assert sidecar.env == pet("test-job", 1, "1")
    assert sidecar.ports == []
    assert node.env == pet("test-job", 1, "1")
    assert node.ports == PORTS


def test_enforce_env_injection_empty_targets() -> None:
    """torch_test.go: "envInjection with empty targets (no additional injection)"."""
    info = make_info(pod_set(init_containers=("preflight-check",)), targets=[])
    enforce(info, make_job())
    assert info.pod_sets[0].init_containers[0].env == []
    assert trainer_container(info).env == pet("test-job", 1, "1")


def test_enforce_env_injection_multiple_jobs() -> None:
    """torch_test.go: "envInjection with multiple targets in different jobs leaves unlisted ..."."""
    info = make_info(
        pod_set(count=2, containers=("sidecar", NODE), init_containers=("preflight-check",)),
        pod_set("worker", None, 1, containers=("worker",), init_containers=("worker-check",)),
        targets=[
            {"jobName": NODE, "containerNames": ["sidecar"]},
            {"jobName": "worker", "containerNames": ["worker-check"]},
        ],
    )
    enforce(info, make_job(numNodes=2))
    node_set, worker_set = info.pod_sets
    assert node_set.init_containers[0].env == []
    assert node_set.containers[0].env == pet("test-job", 2, "1")
    assert node_set.containers[1].env == pet("test-job", 2, "1")
    assert worker_set.init_containers[0].env == pet("test-job", 2, "1")
    assert worker_set.containers[0].env == []


# --- Env order and quirks (derived from torch.go's code path; spec §4.3, §4.4)


def test_enforce_user_env_before_pet_and_runtime_env_keeps_position() -> None:
    """trainingruntime_test.go: "succeeded to build JobSet with Torch values from the Runtime
    and envs." (that test sorts env; the order asserted here is the code path's)."""
    pods = pod_set(count=100)
    pods.containers[0].env = [
        {"name": "TRAIN_JOB", "value": "original"},
        {"name": "RUNTIME", "value": "test:runtime"},
    ]
    info = make_info(pods)
    job = make_job(
        requests={"cpu": "1"},
        env=[
            {"name": "TRAIN_JOB", "value": "override"},
            {"name": "TRAIN_JOB_CUSTOM", "value": "test:trainjob"},
        ],
    )
    enforce(info, job)
    assert trainer_container(info).env == [
        {"name": "TRAIN_JOB", "value": "override"},
        {"name": "RUNTIME", "value": "test:runtime"},
        {"name": "TRAIN_JOB_CUSTOM", "value": "test:trainjob"},
        *pet("test-job", 100, "1"),
    ]


def test_enforce_without_trainer_only_env_injection() -> None:
    """torch.go: no spec.trainer => no PET env or port on node; envInjection targets get them."""
    info = make_info(
        pod_set(init_containers=("preflight-check",)),
        targets=[{"jobName": NODE, "containerNames": ["preflight-check"]}],
    )
    enforce(info, no_trainer_job())
    assert trainer_container(info).env == []
    assert trainer_container(info).ports == []
    assert info.pod_sets[0].init_containers[0].env == pet("test-job", 1, "1")


def test_enforce_port_replaces_first_unnamed_port() -> None:
    """apply_test.go "insert new port": the unnamed 29500 replaces the first unnamed port."""
    pods = pod_set()
    pods.containers[0].ports = [{"name": "metrics", "containerPort": 9090}, {"containerPort": 8080}]
    info = make_info(pods)
    enforce(info, make_job())
    assert trainer_container(info).ports == [
        {"name": "metrics", "containerPort": 9090},
        {"containerPort": 29500},
    ]


def test_enforce_num_nodes_zero_not_clamped() -> None:
    """torch.go: numNodes 0 is copied as is; PET_NNODES "0"; 0 nodes selects the "_full" config."""
    info = make_info(pod_set())
    job = make_job(
        runtime="torchtune-llama3.2-1b",
        numNodes=0,
        command=["tune", "run"],
        requests={"example.com/gpu": "2"},
    )
    enforce(info, job)
    assert info.pod_sets[0].count == 0
    assert trainer_container(info).env[0] == {"name": "PET_NNODES", "value": "0"}
    assert job.trainer is not None
    assert job.trainer["command"][2:] == [
        "--rdzv_endpoint=test-job-node-0-0.test-job:29500",
        "full_finetune_distributed",
        "--config",
        "llama3_2/1B_full",
    ]


# --- TorchTune through the runtime (trainingruntime_test.go, TestTrainingRuntimeNewObjects)


def runtime_jobset(command: list[str], requests: JsonObject) -> JsonObject:
    return {
        "replicatedJobs": [
            {
                "name": NODE,
                "template": {
                    "metadata": {"labels": {LABEL_ANCESTOR: ANCESTOR_TRAINER}},
                    "spec": {
                        "template": {
                            "spec": {
                                "containers": [
                                    {
                                        "name": NODE,
                                        "image": "test:runtime",
                                        "command": command,
                                        "resources": {"requests": requests},
                                    }
                                ]
                            }
                        }
                    },
                },
            }
        ]
    }


RUNTIME_1B = [
    "tune",
    "run",
    "--rdzv_endpoint=localhost:29500",
    "full_finetune_distributed",
    "--config",
    "llama3_2/1B_full",
    "dataset=torchtune.datasets.instruct_dataset",
    "dataset.source=parquet",
    "dataset.data_dir=/workspace/dataset/data",
    "output_dir=/workspace/output",
    "tokenizer.path=/workspace/model/original/tokenizer.model",
    "checkpointer.checkpoint_dir=/workspace/model",
]
OVERRIDES_1B = [
    "output_dir=/workspace/output",
    "tokenizer.path=/workspace/model/original/tokenizer.model",
    "checkpointer.checkpoint_dir=/workspace/model",
]
LORA_ARGS = [
    "dataset.data_dir=/workspace/dataset/data",
    "model.apply_lora_to_mlp=True",
    "model.lora_attn_modules=[q_proj,k_proj,v_proj,output_proj]",
    "dataset=torchtune.datasets.instruct_dataset",
    "dataset.source=parquet",
]
RDZV = "--rdzv_endpoint=test-job-node-0-0.test-job:29500"


def test_torchtune_values_from_trainjob() -> None:
    """trainingruntime_test.go:
    "succeeded to build JobSet with TorchTune values from the TrainJob"."""
    runtime_command = [
        "tune",
        "run",
        "full_finetune_distributed",
        "--config",
        "llama3_3/70B_full_multinode",
        "output_dir=/workspace/model/llama3_3/70B",
        "tokenizer.path=/workspace/model/original/tokenizer.model",
        "checkpointer.checkpoint_dir=/workspace/model",
    ]
    info = make_info(pod_set(count=100), jobset_spec=runtime_jobset(runtime_command, {"cpu": "1"}))
    job = make_job(
        "test-job",
        "torchtune-llama3.3-70b",
        command=["tune", "run"],
        args=list(TUNE_ARGS),
        requests={"cpu": "1"},
        numNodes=30,
        numProcPerNode=3,
    )
    enforce(info, job)
    assert job.trainer is not None
    assert job.trainer["command"] == [
        "tune",
        "run",
        RDZV,
        "full_finetune_distributed",
        "--config",
        "llama3_3/70B_full_multinode",
        *runtime_command[5:],
    ]
    assert trainer_container(info).env == pet("test-job", 30, "3", master=False)
    assert trainer_container(info).ports == PORTS


@pytest.mark.parametrize(
    "case, extra_args, gpus, want_tail",
    [
        (
            "succeeded to build Jobset with TorchTune values from the TrainJob (LoRA)",
            [],
            "2",
            [RDZV, "lora_finetune_distributed", "--config", "llama3_2/1B_lora"],
        ),
        (
            "succeeded to build Jobset with TorchTune values from the TrainJob (QLoRA)",
            ["model.quantize_base=True"],
            "1",
            ["lora_finetune_single_device", "--config", "llama3_2/1B_qlora_single_device"],
        ),
        (
            "succeeded to build Jobset with TorchTune values from the TrainJob (DoRA)",
            ["model.quantize_base=True", "model.use_dora=True"],
            "2",
            [RDZV, "lora_finetune_distributed", "--config", "llama3_2/1B_lora"],
        ),
    ],
)
def test_torchtune_lora_variants(
    case: str, extra_args: list[str], gpus: str, want_tail: list[str]
) -> None:
    """trainingruntime_test.go: the LoRA/QLoRA/DoRA cases (torchTuneResWithCPU(gpu))."""
    args = [*LORA_ARGS[:3], *extra_args, *LORA_ARGS[3:]]
    info = make_info(pod_set(count=1), jobset_spec=runtime_jobset(RUNTIME_1B, {"cpu": "1"}))
    job = make_job(
        "test-job",
        "torchtune-llama3.2-1b",
        command=["tune", "run"],
        args=args,
        requests={"cpu": "1", "example.com/gpu": gpus},
        numNodes=1,
    )
    enforce(info, job)
    assert job.trainer is not None
    assert job.trainer["command"] == ["tune", "run", *want_tail, *OVERRIDES_1B], case
    assert job.trainer["args"] == args
    assert trainer_container(info).env == pet("test-job", 1, "auto", master=False)


# --- TestTorchValidate (torch_test.go)


def validate(info: Info, job: TrainJobContext) -> list[FieldError]:
    return TorchPlugin().validate(info, job)


@pytest.mark.parametrize(
    "case, ml_policy",
    [
        ("no action when info does not have MLPolicySource", None),
        ("no action when info has MLPolicySource but no Torch policy", {}),
    ],
)
def test_validate_no_action(case: str, ml_policy: JsonObject | None) -> None:
    info = make_info()
    info.ml_policy = ml_policy
    assert validate(info, make_job(env=[{"name": "PET_NNODES", "value": "1"}])) == [], case


def test_validate_env_injection_target_missing() -> None:
    """torch_test.go: "envInjection target container does not exist" (runs without spec.trainer)."""
    target = {"jobName": NODE, "containerNames": ["missing-container"]}
    info = make_info(pod_set(), targets=[target])
    assert validate(info, no_trainer_job("test")) == [
        FieldError(
            INVALID,
            "spec.runtimeRef",
            'envInjection target podSet "node" container "missing-container" '
            "not found in runtime template",
            target,
        )
    ]


@pytest.mark.parametrize(
    "case, env",
    [
        ("no action when info does not have numProcPerNode", None),
        (
            "valid environment variable present",
            [{"name": "test", "value": "value"}, {"name": "test2", "value": "value"}],
        ),
    ],
)
def test_validate_ok(case: str, env: list[JsonObject] | None) -> None:
    trainer: dict[str, Any] = {} if env is None else {"env": env}
    assert validate(make_info(), make_job("test", **trainer)) == [], case


def test_validate_reserved_env() -> None:
    """torch_test.go: "reserved environment variable present"."""
    env = [{"name": "test", "value": "value"}, {"name": "PET_NPROC_PER_NODE", "value": "value"}]
    assert validate(make_info(), make_job("test", env=env)) == [
        FieldError(
            INVALID,
            "spec.trainer.env",
            "must not have reserved envs, invalid envs configured: [PET_NPROC_PER_NODE]",
            env,
        )
    ]


def test_validate_reserved_env_sorted_once() -> None:
    """torch.go: one error, names de-duplicated and sorted, space separated (Go %v of a list)."""
    env = [{"name": n, "value": "v"} for n in ("PET_NODE_RANK", "PET_MASTER_ADDR", "PET_NODE_RANK")]
    errors = validate(make_info(), make_job("test", env=env))
    assert [e.message for e in errors] == [
        "must not have reserved envs, invalid envs configured: [PET_MASTER_ADDR PET_NODE_RANK]"
    ]


def tune_job(
    runtime: str, nodes: int, args: list[str] | None, requests: JsonObject
) -> TrainJobContext:
    return make_job(
        "test",
        runtime,
        numNodes=nodes,
        image="torchtune-trainer:test",
        command=["tune", "run"],
        args=args,
        requests=requests,
    )


QLORA = ["model.lora_attn_modules=[q_proj, v_proj, output_proj]", "model.quantize_base=True"]


def test_validate_unsupported_model() -> None:
    """torch_test.go: "unsupported pretrained model"."""
    job = tune_job("torchtune-llama3.1-70b", 1, None, {})
    assert validate(make_info(), job) == [
        FieldError(
            INVALID,
            "spec.runtimeRef.name",
            "must have a supported pretrained model, invalid model configured: llama3_1/70B",
            "torchtune-llama3.1-70b",
        )
    ]


def test_validate_multi_node_only_70b() -> None:
    """torch_test.go: "multi-node mode is only enabled for Llama-3.3-70b"."""
    job = tune_job("torchtune-llama3.2-3b", 2, None, {})
    assert validate(make_info(), job) == [
        FieldError(INVALID, "spec.trainer.numNodes", "must be 1 for llama3_2/3B model", 2)
    ]


def test_validate_qlora_qwen() -> None:
    """torch_test.go: "qlora is not supported for qwen in torchtune"."""
    job = tune_job("torchtune-qwen2.5-1.5b", 1, QLORA, {})
    assert validate(make_info(), job) == [
        FieldError(
            INVALID,
            "spec.runtimeRef.name",
            "QLoRA is not supported for qwen2_5/1.5B model",
            "torchtune-qwen2.5-1.5b",
        )
    ]


def test_validate_multi_device_qlora_llama() -> None:
    """torch_test.go: "muti-devices qlora is not supported for llama3.2-1b in torchtune"."""
    job = tune_job("torchtune-llama3.2-1b", 1, QLORA, {"example.com/gpu": "2"})
    assert validate(make_info(), job) == [
        FieldError(
            INVALID,
            "spec.trainer.numProcPerNode",
            "must be auto or 1 for llama3_2/1B model when using QLoRA",
            "auto",
        ),
        FieldError(
            INVALID,
            "spec.trainer.resourcesPerNode",
            "must have gpu resource with value 1 for llama3_2/1B model when using QLoRA",
            {"requests": {"example.com/gpu": "2"}},
        ),
    ]


def test_validate_lora_multi_node() -> None:
    """torch_test.go: "lora is not supported for multi-node training in torchtune"."""
    job = tune_job("torchtune-llama3.3-70b", 2, QLORA[:1], {})
    assert validate(make_info(), job) == [
        FieldError(
            INVALID,
            "spec.trainer.numNodes",
            "LoRA fine-tuning is not supported for multi-node training in TorchTune",
            2,
        )
    ]


def test_validate_lora_single_node() -> None:
    """torch_test.go: "lora is supported for single-node training in torchtune"."""
    assert validate(make_info(), tune_job("torchtune-llama3.3-70b", 1, QLORA[:1], {})) == []


@pytest.mark.parametrize(
    "case, args",
    [
        ("immutable runtime config must not be set in trainer args", ["output_dir=/custom/output"]),
        (
            "multiple immutable runtime configs must not be set in trainer args",
            ["output_dir=custom-output", "tokenizer.path=/some/path"],
        ),
    ],
)
def test_validate_immutable_args(case: str, args: list[str]) -> None:
    job = tune_job("torchtune-llama3.2-1b", 1, args, {})
    want = [
        FieldError(
            INVALID,
            f"spec.trainer.args[{i}]",
            f'must not set immutable config "{arg.split("=")[0]}" in trainer args; '
            "it is managed by the runtime",
            arg,
        )
        for i, arg in enumerate(args)
    ]
    assert validate(make_info(), job) == want, case


def test_validate_torchtune_only_for_exact_entrypoint() -> None:
    """torch.go: slices.Equal(command, ["tune", "run"]); a longer command is torchrun mode."""
    job = make_job("test", "bad-name", command=["tune", "run", "x"])
    assert validate(make_info(), job) == []


# --- torchtune_test.go


@pytest.mark.parametrize(
    "case, name, want",
    [
        ("llama3.2 1B is normalized", "torchtune-llama3.2-1b", "llama3_2/1B"),
        ("qwen2.5 1.5B is normalized", "torchtune-qwen2.5-1.5b", "qwen2_5/1.5B"),
        ("fewer than three parts returns empty", "torchtune-llama3.2", ""),
        ("more than three parts returns empty", "torchtune-llama3.2-1b-extra", ""),
        ("empty name returns empty", "", ""),
    ],
)
def test_model_from_runtime_ref(case: str, name: str, want: str) -> None:
    """torchtune_test.go: TestGetModelFromRuntimeRef."""
    assert torchtune.model_from_runtime_ref(name) == want, case


@pytest.mark.parametrize(
    "case, args, want",
    [
        (
            "lora attn modules present",
            ["batch_size=32", "model.lora_attn_modules=['q_proj','v_proj']"],
            True,
        ),
        ("no lora args", ["batch_size=32", "epochs=10"], False),
        ("empty args", None, False),
    ],
)
def test_is_lora_config_enabled(case: str, args: list[str] | None, want: bool) -> None:
    """torchtune_test.go: TestIsLoraConfigEnabled."""
    assert torchtune.is_lora_config_enabled(args) is want, case


@pytest.mark.parametrize(
    "case, args, want",
    [
        ("quantize base enabled", ["model.quantize_base=True"], True),
        ("quantize base explicitly disabled", ["model.quantize_base=False"], False),
        (
            "dora short-circuits even when quantize base is set",
            ["model.quantize_base=True", "model.use_dora=True"],
            False,
        ),
        (
            "dora explicitly disabled with quantize base set",
            ["model.quantize_base=True", "model.use_dora=False"],
            True,
        ),
        ("neither quantize base nor dora", ["batch_size=32"], False),
        ("empty args", None, False),
    ],
)
def test_is_use_qlora_finetune(case: str, args: list[str] | None, want: bool) -> None:
    """torchtune_test.go: TestIsUseQLoraFinetune."""
    assert torchtune.is_use_qlora_finetune(args) is want, case


LORA = ["model.lora_attn_modules=['q_proj']"]
QB = ["model.quantize_base=True"]


@pytest.mark.parametrize(
    "case, nodes, nproc, gpus, args, recipe, suffix",
    [
        (
            "single device full",
            1,
            "auto",
            1,
            None,
            "full_finetune_single_device",
            "_full_single_device",
        ),
        (
            "single device lora",
            1,
            "auto",
            1,
            LORA,
            "lora_finetune_single_device",
            "_lora_single_device",
        ),
        (
            "single device qlora",
            1,
            "auto",
            1,
            QB,
            "lora_finetune_single_device",
            "_qlora_single_device",
        ),
        ("single node multi-gpu full", 1, "auto", 4, None, "full_finetune_distributed", "_full"),
        ("single node multi-gpu lora", 1, "auto", 4, LORA, "lora_finetune_distributed", "_lora"),
        ("single node multi-gpu qlora", 1, "auto", 4, QB, "lora_finetune_distributed", "_qlora"),
        ("multi-node full", 2, "auto", 8, None, "full_finetune_distributed", "_full_multinode"),
        (
            "numProcPerNode=1 forces single device even with multiple gpus",
            1,
            1,
            4,
            None,
            "full_finetune_single_device",
            "_full_single_device",
        ),
        ("numProcPerNode>1 uses distributed", 1, 4, 4, None, "full_finetune_distributed", "_full"),
    ],
)
def test_recipe_and_config(
    case: str,
    nodes: int,
    nproc: int | str,
    gpus: int,
    args: list[str] | None,
    recipe: str,
    suffix: str,
) -> None:
    """torchtune_test.go: TestGetRecipeAndConfig."""
    trainer: JsonObject = {"command": ["tune", "run"], "args": args}
    got = torchtune.recipe_and_config(nodes, nproc, gpus, trainer, "torchtune-llama3.2-1b")
    assert got == (recipe, "llama3_2/1B" + suffix), case


def overrides_spec(ancestor: str, container: str) -> JsonObject:
    return {
        "replicatedJobs": [
            {
                "template": {
                    "metadata": {"labels": {LABEL_ANCESTOR: ancestor}},
                    "spec": {
                        "template": {
                            "spec": {
                                "containers": [
                                    {
                                        "name": container,
                                        "command": [
                                            "output_dir=/out",
                                            "tokenizer.path=/tok",
                                            "batch_size=32",
                                        ],
                                    }
                                ]
                            }
                        }
                    },
                }
            }
        ]
    }


@pytest.mark.parametrize(
    "case, spec, want",
    [
        ("no jobset template", {}, []),
        (
            "trainer node container returns only immutable configs",
            overrides_spec(ANCESTOR_TRAINER, NODE),
            ["output_dir=/out", "tokenizer.path=/tok"],
        ),
        ("non-trainer ancestor is ignored", overrides_spec("other", NODE), []),
        ("non-node container is ignored", overrides_spec(ANCESTOR_TRAINER, "sidecar"), []),
    ],
)
def test_overrides_from_runtime(case: str, spec: JsonObject, want: list[str]) -> None:
    """torchtune_test.go: TestExtractOverridesFromRuntime."""
    assert torchtune.overrides_from_runtime(spec) == want, case


# --- Resource helpers (runtime.go; spec §1.5)


def jobs_spec(*jobs: tuple[str, str | None, JsonObject | None]) -> JsonObject:
    """Replicated jobs of (name, ancestor label, node container resources or None = no node)."""
    out = []
    for name, ancestor, resources in jobs:
        labels = {LABEL_ANCESTOR: ancestor} if ancestor else {}
        containers = [{"name": "other", "resources": {"requests": {"cpu": "99"}}}]
        if resources is not None:
            containers.append({"name": NODE, "resources": resources})
        out.append(
            {
                "name": name,
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {"template": {"spec": {"containers": containers}}},
                },
            }
        )
    return {"replicatedJobs": out}


def test_runtime_resources_name_or_ancestor() -> None:
    """runtime.go ExtractResourcePerNodeFromRuntime: job named node OR trainer-labelled."""
    spec = jobs_spec(
        ("launcher", ANCESTOR_TRAINER, None),
        ("x", None, {"limits": {"cpu": "1"}}),
        ("node", None, {"requests": {"cpu": "2"}}),
    )
    got = resources_per_node_from_runtime(make_info(jobset_spec=spec))
    assert got == {"limits": {}, "requests": {"cpu": "2"}}
    spec = jobs_spec(("trainer", ANCESTOR_TRAINER, {}), ("node", None, {"requests": {"cpu": "2"}}))
    assert resources_per_node_from_runtime(make_info(jobset_spec=spec)) == {
        "limits": {},
        "requests": {},
    }
    assert resources_per_node_from_runtime(make_info(jobset_spec=jobs_spec(("x", "y", {})))) is None


def test_trainjob_resources_replace_runtime() -> None:
    """torch.go: a TrainJob resourcesPerNode (even {}) replaces the runtime's for nproc."""
    spec = jobs_spec(("node", ANCESTOR_TRAINER, {"requests": {"nvidia.com/gpu": "4"}}))
    info = make_info(pod_set(), jobset_spec=spec)
    enforce(info, make_job(resourcesPerNode={}))
    assert trainer_container(info).env[1] == {"name": "PET_NPROC_PER_NODE", "value": "1"}
    info = make_info(pod_set(), jobset_spec=spec)
    enforce(info, make_job())
    assert trainer_container(info).env[1] == {"name": "PET_NPROC_PER_NODE", "value": "auto"}


@pytest.mark.parametrize(
    "resources, want",
    [
        ({"requests": {"nvidia.com/gpu": "2"}, "limits": {"nvidia.com/gpu": "4"}}, 2),
        ({"requests": {"nvidia.com/gpu": "0"}, "limits": {"amd.com/gpu": "4"}}, 4),
        ({"limits": {"gpu.intel.com/i915": "1"}}, 1),
        ({"requests": {"google.com/tpu": "4", "nvidia.com/mig-1g.5gb": "1"}}, 0),
        ({"requests": {"nvidia.com/gpu": "500m"}}, 1),
        ({"requests": {"b.example/gpu": "3", "a.example/gpu": "2"}}, 2),  # trainc: sorted order
    ],
)
def test_num_gpu_per_node(resources: JsonObject, want: int) -> None:
    """runtime.go GetNumGPUPerNode: requests first, limits only when 0, Value() rounds up."""
    assert num_gpu_per_node(resources) == want


@pytest.mark.parametrize(
    "resources, want",
    [
        ({"requests": {"cpu": "2"}, "limits": {"cpu": "4"}}, 2),
        ({"requests": {"cpu": "0"}, "limits": {"cpu": "4"}}, 4),
        ({"limits": {"cpu": "1500m"}}, 2),
        ({"requests": {"cpu": "1m"}}, 1),
        ({}, 0),
        ({"requests": {"cpu": 4}, "limits": {"cpu": 0.7}}, 4),  # raw YAML numbers
        ({"limits": {"cpu": 0.7}}, 1),
    ],
)
def test_num_cpu_per_node(resources: JsonObject, want: int) -> None:
    """torch.go getNumCPUPerNode: non-zero request wins over limit; rounded up."""
    assert num_cpu_per_node(resources) == want
