"""torchtune mode of the Torch plugin: recipe/config choice, command rewrite, checks (spec §4.5).

Upstream: pkg/runtime/framework/plugins/torch/torchtune.go. A TrainJob is in torchtune
mode when ``spec.trainer.command`` is exactly ``["tune", "run"]``; the Torch plugin then
extends that command instead of setting ``PET_MASTER_ADDR``/``PET_MASTER_PORT``.

``nproc`` below is the resolved ``numProcPerNode``: an ``int``, or the string ``"auto"``.
"""

from __future__ import annotations

from collections.abc import Iterator

from compiler.errors import FieldError
from compiler.render.framework import TrainJobContext
from compiler.render.info import JsonObject
from compiler.upstream.names import ANCESTOR_TRAINER, LABEL_ANCESTOR, NODE
from compiler.upstream.versions import DEFAULT_TRAINER_VERSION, Gate, PerVersion

NumProc = int | str

AUTO = "auto"
INVALID = "FieldValueInvalid"
CONTAINER_TRAINER_PORT = 29500

TORCHTUNE_ENTRYPOINT = ["tune", "run"]
ARG_RDZV_ENDPOINT = "--rdzv_endpoint"
ARG_CONFIG = "--config"

FULL_FINETUNE_SINGLE_DEVICE = "full_finetune_single_device"
FULL_FINETUNE_DISTRIBUTED = "full_finetune_distributed"
LORA_FINETUNE_SINGLE_DEVICE = "lora_finetune_single_device"
LORA_FINETUNE_DISTRIBUTED = "lora_finetune_distributed"

SUFFIX_FULL_SINGLE_DEVICE = "_full_single_device"
SUFFIX_FULL_MULTI_DEVICES = "_full"
SUFFIX_FULL_MULTI_NODES = "_full_multinode"
SUFFIX_LORA_SINGLE_DEVICE = "_lora_single_device"
SUFFIX_QLORA_SINGLE_DEVICE = "_qlora_single_device"
SUFFIX_LORA_DISTRIBUTED = "_lora"
SUFFIX_QLORA_DISTRIBUTED = "_qlora"

LORA_ATTN_MODULES = "model.lora_attn_modules"
QUANTIZE_BASE = "model.quantize_base"
USE_DORA = "model.use_dora"

MODEL_LLAMA3_2_1B = "llama3_2/1B"
MODEL_LLAMA3_2_3B = "llama3_2/3B"
MODEL_LLAMA3_2_7B = "llama3_2/7B"
MODEL_LLAMA3_3_70B = "llama3_3/70B"
MODEL_QWEN2_5_1_5B = "qwen2_5/1.5B"
# Version differences of torchtune (docs/trainer-versions.md).
SUPPORTED_MODELS = PerVersion(
    (
        ("v2.0.0", frozenset({MODEL_LLAMA3_2_1B, MODEL_LLAMA3_2_7B, MODEL_LLAMA3_3_70B})),
        (
            "v2.1.0",
            frozenset(
                {MODEL_LLAMA3_2_1B, MODEL_LLAMA3_2_3B, MODEL_LLAMA3_3_70B, MODEL_QWEN2_5_1_5B}
            ),
        ),
    )
)

# Config items the runtime sets on its trainer command; users must not set them in args.
IMMUTABLE_CONFIGS = PerVersion(
    (
        ("v2.0.0", frozenset({"output_dir", "tokenizer.path", "checkpointer.checkpoint_dir"})),
        (
            "v2.1.0",
            frozenset(
                {
                    "output_dir",
                    "tokenizer.path",
                    "checkpointer.checkpoint_dir",
                    "tokenizer.merges_file",
                }
            ),
        ),
    )
)

# v2.0.0 has full fine-tuning only: single device only for 1 node x the integer 1 (no
# GPU count), rendezvous unless so; LoRA/QLoRA/DoRA recipes and their checks from v2.1.0.
TORCHTUNE_RECIPES = Gate("v2.1.0", "LoRA/QLoRA recipes; one GPU counts as a single device")
BOOLEAN_ARGS = Gate(
    "v2.3.0", "QLoRA/DoRA args count only when their value is true (before: when present)"
)
ARGS_CHECKS = Gate(
    "v2.3.0", "admission refuses multi-node LoRA and immutable configs in spec.trainer.args"
)
# v2.1.0's check reads spec.trainer.numNodes through a nil pointer when it is unset; the
# webhook server recovers the panic and denies the TrainJob with this message.
NUM_NODES_DEFAULTED = Gate("v2.2.0", "admission takes an unset numNodes as 1 (before: a panic)")
NIL_NUM_NODES_DENIAL = (
    "panic: runtime error: invalid memory address or nil pointer dereference [recovered]"
)

# Go's unicode.IsSpace set, for strings.TrimSpace (Python's str.strip() also trims \x1c-\x1f).
_GO_SPACE = (
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)


def is_torchtune(trainer: JsonObject | None) -> bool:
    """Whether the TrainJob's command is exactly ``["tune", "run"]`` (no more, no less)."""
    return trainer is not None and trainer.get("command") == TORCHTUNE_ENTRYPOINT


def _go_upper(text: str) -> str:
    """``strings.ToUpper``: simple case mapping, one rune to one rune (Python's ß -> SS is not)."""
    return "".join(c.upper() if len(c.upper()) == 1 else c for c in text)


def model_from_runtime_ref(runtime_ref_name: str) -> str:
    """The model a torchtune runtime name stands for; ``""`` unless it has exactly 3 parts.

    >>> model_from_runtime_ref("torchtune-qwen2.5-1.5b")
    'qwen2_5/1.5B'
    >>> model_from_runtime_ref("torchtune-llama3.2-1b-extra")
    ''
    """
    fields = runtime_ref_name.split("-")
    if len(fields) != 3:
        return ""
    return f"{fields[1].replace('.', '_')}/{_go_upper(fields[2])}"


def is_lora_config_enabled(args: list[str] | None) -> bool:
    """Any arg containing ``model.lora_attn_modules`` anywhere, whatever its value."""
    return any(LORA_ATTN_MODULES in arg for arg in args or ())


def is_bool_arg_enabled(args: list[str] | None, config_item: str) -> bool:
    """A ``key=value`` arg whose key contains ``config_item`` and whose value is ``true``.

    The value is trimmed and compared case-insensitively; args without ``=`` never count::

        >>> is_bool_arg_enabled(["model.quantize_base= TRUE "], "model.quantize_base")
        True
        >>> is_bool_arg_enabled(["model.quantize_base=False"], "model.quantize_base")
        False
    """
    for arg in args or ():
        name, found, value = arg.partition("=")
        if found and config_item in name and value.strip(_GO_SPACE).lower() == "true":
            return True
    return False


def is_use_qlora_finetune(args: list[str] | None, version: str = DEFAULT_TRAINER_VERSION) -> bool:
    """QLoRA: ``model.quantize_base`` true, unless DoRA (``model.use_dora``) is true.

    Before v2.3.0 the mere mention counts, whatever the value::

        >>> is_use_qlora_finetune(["model.quantize_base=False"], "v2.2.0")
        True
    """
    if not BOOLEAN_ARGS.on(version):
        for arg in args or ():
            if USE_DORA in arg:
                return False
        return any(QUANTIZE_BASE in arg for arg in args or ())
    if is_bool_arg_enabled(args, USE_DORA):
        return False
    return is_bool_arg_enabled(args, QUANTIZE_BASE)


def _is_int_one(nproc: NumProc) -> bool:
    return isinstance(nproc, int) and nproc == 1


def _is_single_device(num_nodes: int, nproc: NumProc, gpus: int) -> bool:
    return num_nodes == 1 and ((isinstance(nproc, int) and nproc == 1) or gpus == 1)


def _recipe_and_suffix(
    num_nodes: int, nproc: NumProc, gpus: int, args: list[str], version: str
) -> tuple[str, str]:
    if not TORCHTUNE_RECIPES.on(version):
        if num_nodes == 1 and _is_int_one(nproc):
            return FULL_FINETUNE_SINGLE_DEVICE, SUFFIX_FULL_SINGLE_DEVICE
        if num_nodes > 1:
            return FULL_FINETUNE_DISTRIBUTED, SUFFIX_FULL_MULTI_NODES
        return FULL_FINETUNE_DISTRIBUTED, SUFFIX_FULL_MULTI_DEVICES
    qlora, lora = is_use_qlora_finetune(args, version), is_lora_config_enabled(args)
    if _is_single_device(num_nodes, nproc, gpus):
        if qlora:
            return LORA_FINETUNE_SINGLE_DEVICE, SUFFIX_QLORA_SINGLE_DEVICE
        if lora:
            return LORA_FINETUNE_SINGLE_DEVICE, SUFFIX_LORA_SINGLE_DEVICE
        return FULL_FINETUNE_SINGLE_DEVICE, SUFFIX_FULL_SINGLE_DEVICE
    if num_nodes == 1 and qlora:
        return LORA_FINETUNE_DISTRIBUTED, SUFFIX_QLORA_DISTRIBUTED
    if num_nodes == 1 and lora:
        return LORA_FINETUNE_DISTRIBUTED, SUFFIX_LORA_DISTRIBUTED
    if num_nodes > 1:
        return FULL_FINETUNE_DISTRIBUTED, SUFFIX_FULL_MULTI_NODES
    return FULL_FINETUNE_DISTRIBUTED, SUFFIX_FULL_MULTI_DEVICES


def recipe_and_config(
    num_nodes: int,
    nproc: NumProc,
    gpus: int,
    trainer: JsonObject,
    runtime_ref_name: str,
    version: str = DEFAULT_TRAINER_VERSION,
) -> tuple[str, str]:
    """The recipe and ``--config`` value; single device when nproc is 1 or exactly one GPU.

    DoRA with LoRA args picks the LoRA rows; ``num_nodes > 1`` drops LoRA silently;
    ``num_nodes == 0`` falls through to the single-node distributed full config::

        >>> recipe_and_config(1, "auto", 4, {"args": ["model.lora_attn_modules=[q]"]},
        ...                   "torchtune-llama3.2-1b")
        ('lora_finetune_distributed', 'llama3_2/1B_lora')
        >>> recipe_and_config(1, 1, 4, {}, "torchtune-llama3.2-1b")
        ('full_finetune_single_device', 'llama3_2/1B_full_single_device')
    """
    args = trainer.get("args") or []
    recipe, suffix = _recipe_and_suffix(num_nodes, nproc, gpus, args, version)
    return recipe, model_from_runtime_ref(runtime_ref_name) + suffix


def needs_rendezvous(
    num_nodes: int, nproc: NumProc, gpus: int, version: str = DEFAULT_TRAINER_VERSION
) -> bool:
    """Distributed run: several nodes, an integer nproc above 1, or ``auto`` with several GPUs
    (v2.0.0: anything but 1 node x the integer 1)."""
    if not TORCHTUNE_RECIPES.on(version):
        return num_nodes > 1 or not _is_int_one(nproc)
    if num_nodes > 1:
        return True
    if isinstance(nproc, int):
        return nproc > 1
    return gpus > 1


def _trainer_node_containers(jobset_spec: JsonObject) -> Iterator[JsonObject]:
    """``node`` containers of every replicated job labelled as the trainer, template order."""
    for rjob in jobset_spec.get("replicatedJobs") or ():
        template = rjob.get("template") or {}
        labels = (template.get("metadata") or {}).get("labels")
        if not labels or labels.get(LABEL_ANCESTOR) != ANCESTOR_TRAINER:
            continue
        pod_spec = ((template.get("spec") or {}).get("template") or {}).get("spec") or {}
        for container in pod_spec.get("containers") or ():
            if container.get("name") == NODE:
                yield container


def overrides_from_runtime(
    jobset_spec: JsonObject, version: str = DEFAULT_TRAINER_VERSION
) -> list[str]:
    """The runtime trainer command's immutable ``key=value`` items, verbatim and in order.

    Everything else on the runtime command (recipe, ``--config``, dataset items) is dropped::

        >>> overrides_from_runtime({"replicatedJobs": [{"template": {
        ...     "metadata": {"labels": {LABEL_ANCESTOR: "trainer"}},
        ...     "spec": {"template": {"spec": {"containers": [{"name": "node",
        ...         "command": ["tune", "run", "output_dir=/o", "dataset.source=x"]}]}}}}}]})
        ['output_dir=/o']
    """
    return [
        item
        for container in _trainer_node_containers(jobset_spec)
        for item in container.get("command") or ()
        if item.split("=", 1)[0] in IMMUTABLE_CONFIGS.at(version)
    ]


def trainer_endpoint(trainjob_name: str) -> str:
    """Hard-coded first trainer pod: ``<name>-node-0-0.<name>`` (ignores job name and subdomain)."""
    return f"{trainjob_name}-{NODE}-0-0.{trainjob_name}"


def command_tail(
    jobset_spec: JsonObject,
    trainer: JsonObject,
    runtime_ref_name: str,
    trainjob_name: str,
    num_nodes: int,
    nproc: NumProc,
    gpus: int,
    version: str = DEFAULT_TRAINER_VERSION,
) -> list[str]:
    """What is appended to ``tune run``: [rendezvous], recipe, ``--config``, config, overrides.

        >>> command_tail({}, {}, "torchtune-llama3.3-70b", "j", 30, 3, 0)
        ['--rdzv_endpoint=j-node-0-0.j:29500', 'full_finetune_distributed', '--config', \
'llama3_3/70B_full_multinode']
    """
    tail: list[str] = []
    if needs_rendezvous(num_nodes, nproc, gpus, version):
        tail.append(
            f"{ARG_RDZV_ENDPOINT}={trainer_endpoint(trainjob_name)}:{CONTAINER_TRAINER_PORT}"
        )
    recipe, config = recipe_and_config(num_nodes, nproc, gpus, trainer, runtime_ref_name, version)
    tail += [recipe, ARG_CONFIG, config]
    tail += overrides_from_runtime(jobset_spec, version)
    return tail


def _runtime_ref_name(job: TrainJobContext) -> str:
    return str((job.spec.get("runtimeRef") or {}).get("name", ""))


def _qlora_errors(
    model: str, config: str, name: str, trainer: JsonObject, nproc: NumProc
) -> list[FieldError]:
    if SUFFIX_QLORA_DISTRIBUTED not in config:
        return []
    errors: list[FieldError] = []
    if model == MODEL_QWEN2_5_1_5B:
        message = f"QLoRA is not supported for {model} model"
        errors.append(FieldError(INVALID, "spec.runtimeRef.name", message, name))
    if SUFFIX_QLORA_SINGLE_DEVICE not in config and model in (MODEL_LLAMA3_2_1B, MODEL_LLAMA3_2_3B):
        errors.append(
            FieldError(
                INVALID,
                "spec.trainer.numProcPerNode",
                f"must be auto or 1 for {model} model when using QLoRA",
                nproc,
            )
        )
        errors.append(
            FieldError(
                INVALID,
                "spec.trainer.resourcesPerNode",
                f"must have gpu resource with value 1 for {model} model when using QLoRA",
                trainer.get("resourcesPerNode"),
            )
        )
    return errors


def _immutable_arg_errors(args: list[str], version: str) -> list[FieldError]:
    errors: list[FieldError] = []
    for index, arg in enumerate(args):
        key = arg.split("=", 1)[0]
        if key in IMMUTABLE_CONFIGS.at(version):
            message = (
                f'must not set immutable config "{key}" in trainer args; '
                "it is managed by the runtime"
            )
            errors.append(FieldError(INVALID, f"spec.trainer.args[{index}]", message, arg))
    return errors


def validate_torchtune(job: TrainJobContext, gpus: int) -> list[FieldError]:
    """Admission checks of a torchtune TrainJob (TT1..TT6), on the TrainJob as submitted.

    Uses ``numNodes`` of the TrainJob (default 1, not the runtime's) and ``numProcPerNode``
    without the CPU fallback, so a CPU-only QLoRA job selects the distributed ``_qlora`` config.
    """
    trainer: JsonObject = job.trainer or {}
    if trainer.get("numNodes") is None and not NUM_NODES_DEFAULTED.on(job.trainer_version):
        return [FieldError("", "", NIL_NUM_NODES_DENIAL)]
    name = _runtime_ref_name(job)
    model = model_from_runtime_ref(name)
    errors: list[FieldError] = []
    if model not in SUPPORTED_MODELS.at(job.trainer_version):
        message = f"must have a supported pretrained model, invalid model configured: {model}"
        errors.append(FieldError(INVALID, "spec.runtimeRef.name", message, name))
    num_nodes: int = trainer["numNodes"] if trainer.get("numNodes") is not None else 1
    if num_nodes > 1 and model != MODEL_LLAMA3_3_70B:
        errors.append(
            FieldError(INVALID, "spec.trainer.numNodes", f"must be 1 for {model} model", num_nodes)
        )
    nproc: NumProc = (
        trainer["numProcPerNode"] if trainer.get("numProcPerNode") is not None else AUTO
    )
    version = job.trainer_version
    if not TORCHTUNE_RECIPES.on(version):
        return errors
    _, config = recipe_and_config(num_nodes, nproc, gpus, trainer, name, version)
    errors += _qlora_errors(model, config, name, trainer, nproc)
    if not ARGS_CHECKS.on(version):
        return errors
    args: list[str] = trainer.get("args") or []
    if num_nodes > 1 and (is_lora_config_enabled(args) or is_use_qlora_finetune(args, version)):
        message = "LoRA fine-tuning is not supported for multi-node training in TorchTune"
        errors.append(FieldError(INVALID, "spec.trainer.numNodes", message, num_nodes))
    errors += _immutable_arg_errors(args, version)
    return errors
