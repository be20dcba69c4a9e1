"""Flux: the Flux Framework HPC ML policy (spec §8).

Upstream: pkg/runtime/framework/plugins/flux/flux.go (Trainer v2.3.0). Active when the
runtime's ``mlPolicy.flux`` is set; PlainML runs too and sets the node count and the
user env. Flux itself injects no env vars, so for Flux runtimes the relative order of
the two plugins does not show in the output.

EnforceMLPolicy, on the PodSet named ``node``: upserts the volumes ``spack-install``,
``flux-install``, ``NAME-flux-entrypoint`` (the ConfigMap, mode 0755), ``shared-memory``
(memory emptyDir) and ``flux-curve`` (the curve Secret, mode 0400); appends the
``flux-installer`` init container (the Flux view image, runs ``init.sh``); upserts five
mounts on its ``node`` containers. It also rewrites the TrainJob in memory: the command
becomes ``/bin/bash /etc/flux-config/entrypoint.sh "<original command and args>"`` and
the TrainJob args are dropped (the runtime template's args, if any, stay: upstream quirk).

Build: the ConfigMap ``NAME-flux-entrypoint`` with ``init.sh`` (host list and broker
config) and ``entrypoint.sh`` (``flux R encode`` resources and ``flux run`` flags), filled
from upstream's templates (read once per process by ``compiler.upstream.templates``);
and the curve Secret ``NAME-flux-curve``.

The curve Secret holds a CURVE key pair. Upstream derives it from the TrainJob UID
(private key = SHA-256 of the UID, public key by X25519), so anyone who knows the UID
can compute it. trainc never computes or renders it: it records a
:class:`~compiler.render.info.SecretRequirement` with upstream's name, namespace, key
(``curve.cert``), type (none set, so the API server makes it Opaque) and mutability,
and the apply step creates the Secret once, if absent:

* with ``--owner-uid`` (a TrainJob UID to reproduce), generator ``flux-curve-from-uid``:
  apply derives the pair from the UID in the owner reference, as upstream does, so the
  objects match what the controller would create for that TrainJob;
* without a UID, generator ``flux-curve-random``, no owner reference: there is no UID to
  derive from, and deriving from anything else known (an empty UID, the name) would
  give a predictable private key. The brokers only need to share one certificate, which
  they all read from this one Secret by name, so apply generates a fresh key pair.

Preconditions upstream dereferences without checking (the controller panics and the
TrainJob is never reconciled): ``spec.trainer`` with ``numNodes``, and a defaulted
``mlPolicy.flux.numProcPerNode`` when the TrainJob sets none. trainc raises an
:class:`~compiler.errors.InputError` naming the field instead.
"""

from __future__ import annotations

from collections.abc import Callable

from compiler.errors import FieldError, InputError, ObjectRef
from compiler.render import upsert
from compiler.render.framework import (
    ComponentBuilderPlugin,
    CustomValidationPlugin,
    EnforceMLPolicyPlugin,
    TrainJobContext,
)
from compiler.render.info import Info, JsonObject, PodSetContainer, SecretRequirement
from compiler.render.resources import effective_resources, num_gpu_per_node
from compiler.upstream.names import ANCESTOR_TRAINER, NODE, TRAINJOB_KIND
from compiler.upstream.templates import FluxTemplates, flux_templates, go_sprintf
from compiler.upstream.versions import Gate

NAME = "Flux"

# Version differences of this plugin (docs/trainer-versions.md).
SHARED_MEMORY = Gate("v2.3.0", "the shared-memory (/dev/shm) volume and mount on node")
RESOURCE_SPEC = Gate("v2.3.0", "entrypoint.sh encodes --cores/--gpu (before: --local)")
INSTALLER_THROUGH_POD_SET = Gate(
    "v2.3.0",
    "flux-installer goes through the PodSet (before: straight into the JobSet, image even if empty)",
)
TRAINJOB_NPROC_CHECKED = Gate(
    "v2.3.0", "admission checks the TrainJob's numProcPerNode (before: the runtime's only)"
)
INVALID = "FieldValueInvalid"

# Settings a TrainJob may override through env vars of the trainer container (spec §8.2).
FLUX_VIEW_IMAGE = "FLUX_VIEW_IMAGE"
FLUX_NETWORK_DEVICE = "FLUX_NETWORK_DEVICE"
FLUX_QUEUE_POLICY = "FLUX_QUEUE_POLICY"
DEFAULT_SETTINGS = {
    FLUX_VIEW_IMAGE: "ghcr.io/converged-computing/flux-view-ubuntu:tag-jammy",
    FLUX_NETWORK_DEVICE: "eth0",
    FLUX_QUEUE_POLICY: "fcfs",
}

INSTALLER_CONTAINER = "flux-installer"
INSTALL_VOLUME = "flux-install"
INSTALL_PATH = "/mnt/flux"
CONFIG_PATH = "/etc/flux-config"
CURVE_VOLUME = "flux-curve"
CURVE_PATH = "/curve"
MEMORY_VOLUME = "shared-memory"
MEMORY_PATH = "/dev/shm"
SPACK_VOLUME = "spack-install"
SPACK_PATH = "/opt/software"
VIEW_ROOT = "/opt/view"
CURVE_KEY = "curve.cert"

GENERATOR_FROM_UID = "flux-curve-from-uid"
GENERATOR_RANDOM = "flux-curve-random"

TemplateSource = Callable[[str], FluxTemplates]  # Trainer version -> its templates

# What Go's strings.TrimSpace removes (unicode.IsSpace); Python's str.strip() would also
# remove the ASCII separators U+001C..U+001F.
GO_SPACE = (
    "\t\n\v\f\r \u0085\u00a0\u1680"
    + "".join(chr(c) for c in range(0x2000, 0x200B))
    + "\u2028\u2029\u202f\u205f\u3000"
)


def config_map_name(trainjob_name: str) -> str:
    return f"{trainjob_name}-flux-entrypoint"


def curve_secret_name(trainjob_name: str) -> str:
    return f"{trainjob_name}-flux-curve"


# --- settings and the command


def broker_settings(info: Info, trainer: JsonObject) -> dict[str, str]:
    """Defaults, then the trainer container's literal env values, then the TrainJob env.

    A TrainJob entry with ``valueFrom`` sets the setting to ``""`` (upstream reads the
    ``value`` field only)::

        >>> info = Info({}, {}, None, None, {}, [])
        >>> env = [{"name": "FLUX_QUEUE_POLICY", "valueFrom": {}}, {"name": "OTHER", "value": "x"}]
        >>> broker_settings(info, {"env": env})[FLUX_QUEUE_POLICY]
        ''
    """
    settings = dict(DEFAULT_SETTINGS)
    container = info.container_by_ancestor(ANCESTOR_TRAINER, NODE)
    if container is not None:
        for env in container.env:
            if env.get("name") in settings and env.get("value") is not None:
                settings[env["name"]] = str(env["value"])
    for env in trainer.get("env") or ():
        if env.get("name") in settings:
            settings[env["name"]] = str(env.get("value") or "")
    return settings


def original_command(info: Info, trainer: JsonObject | None) -> str:
    """The command Flux wraps: command (TrainJob's, else the runtime's) and TrainJob args.

    Joined with single spaces, then stripped of surrounding whitespace only::

        >>> original_command(Info({}, {}, None, None, {}, []),
        ...                  {"command": ["  python  "], "args": [" script.py "]})
        'python    script.py'
    """
    command: list[str] = []
    container = info.container_by_ancestor(ANCESTOR_TRAINER, NODE)
    if container is not None and container.command is not None:
        command = list(container.command)
    args: list[str] = []
    if trainer is not None:
        if trainer.get("command") is not None:
            command = list(trainer["command"])
        if trainer.get("args") is not None:
            args = list(trainer["args"])
    return " ".join([*command, *args]).strip(GO_SPACE)


# --- host names and the scripts


def generate_range(size: int, start: int = 0) -> str:
    """``0`` for one item, else ``<start>-<start+size-1>`` (no check for size < 1).

    >>> generate_range(1), generate_range(4), generate_range(3, 10), generate_range(0)
    ('0', '0-3', '10-12', '0--1')
    """
    if size == 1:
        return str(start)
    return f"{start}-{_int32(start + size - 1)}"


def hostlist(prefix: str, size: int) -> str:
    """The Flux host list of a ``node`` job: ``<prefix>-node-0-[<range>]``."""
    return f"{prefix}-{NODE}-0-[{generate_range(size)}]"


def _int32(value: int) -> int:
    """Go int32 arithmetic wraps around."""
    return (value + 2**31) % 2**32 - 2**31


def broker_config(
    templates: FluxTemplates, job: TrainJobContext, hosts: str, settings: dict[str, str]
) -> str:
    """``broker.toml``; ``%p`` and ``%h`` are Flux's own placeholders, kept literally.

    The connect URI uses the TrainJob name as subdomain, whatever the runtime's
    ``network.subdomain`` says (upstream quirk).
    """
    fqdn = f"{job.name}.{job.namespace}.svc.cluster.local"
    return go_sprintf(
        templates.broker,
        f"tcp://{settings[FLUX_NETWORK_DEVICE]}:%p",
        f"tcp://%h.{fqdn}:%p",
        hosts,
        settings[FLUX_QUEUE_POLICY],
    )


def init_script(
    templates: FluxTemplates, job: TrainJobContext, num_nodes: int, settings: dict[str, str]
) -> str:
    hosts = hostlist(job.name, num_nodes)
    return go_sprintf(
        templates.init,
        VIEW_ROOT,
        f"{job.name}-0",
        hosts,
        broker_config(templates, job, hosts, settings),
    )


def run_flags(num_nodes: int, tasks: int, gpus: int) -> tuple[str, str]:
    """``flux R encode`` resource options and ``flux run`` flags (GPU flags only with GPUs).

    >>> run_flags(2, 4, 0)
    ('--cores=0-3', '-N 2 -n 8')
    >>> run_flags(2, 1, 1)
    ('--cores=0 --gpu=0', '-N 2 -n 2 -g 1')
    """
    flags = f"-N {num_nodes} -n {_int32(tasks * num_nodes)}"
    resources = f"--cores={generate_range(tasks)}"
    if gpus > 0:
        flags += f" -g {gpus}"
        resources += f" --gpu={generate_range(gpus)}"
    return resources, flags


def entrypoint_script(
    templates: FluxTemplates, job: TrainJobContext, num_nodes: int, tasks: int, gpus: int
) -> str:
    resources, flags = run_flags(num_nodes, tasks, gpus)
    main_host = f"{job.name}-{NODE}-0-0"
    if not RESOURCE_SPEC.on(job.trainer_version):
        return go_sprintf(templates.entrypoint, main_host, flags)
    return go_sprintf(templates.entrypoint, resources, main_host, flags)


# --- objects


def _view_volumes(config_map: str, version: str) -> list[JsonObject]:
    volumes: list[JsonObject] = [
        {"name": SPACK_VOLUME, "emptyDir": {}},
        {"name": INSTALL_VOLUME, "emptyDir": {}},
        {"name": config_map, "configMap": {"name": config_map, "defaultMode": 0o755}},
    ]
    if SHARED_MEMORY.on(version):
        volumes.append({"name": MEMORY_VOLUME, "emptyDir": {"medium": "Memory"}})
    return volumes


def _curve_volume(trainjob_name: str) -> JsonObject:
    return {
        "name": CURVE_VOLUME,
        "secret": {"secretName": curve_secret_name(trainjob_name), "defaultMode": 0o400},
    }


def _installer(config_map: str, image: str) -> PodSetContainer:
    return PodSetContainer(
        name=INSTALLER_CONTAINER,
        image=image,
        command=["/bin/bash", f"{CONFIG_PATH}/init.sh"],
        volume_mounts=[
            {"name": INSTALL_VOLUME, "mountPath": INSTALL_PATH},
            {"name": config_map, "mountPath": CONFIG_PATH, "readOnly": True},
        ],
    )


def _append_to_jobset(info: Info, index: int, installer: PodSetContainer) -> None:
    """Before v2.3.0: the installer written into the JobSet's job ``index`` as is."""
    job = info.jobset_spec["replicatedJobs"][index]
    pod_spec = job["template"]["spec"]["template"]["spec"]
    pod_spec.setdefault("initContainers", []).append(
        {
            "name": installer.name,
            "image": installer.image,
            "command": list(installer.command or ()),
            "volumeMounts": [dict(m) for m in installer.volume_mounts],
        }
    )


def _node_mounts(config_map: str, version: str) -> list[JsonObject]:
    mounts: list[JsonObject] = [
        {"name": INSTALL_VOLUME, "mountPath": INSTALL_PATH},
        {"name": SPACK_VOLUME, "mountPath": SPACK_PATH},
        {"name": config_map, "mountPath": CONFIG_PATH, "readOnly": True},
        {"name": CURVE_VOLUME, "mountPath": CURVE_PATH, "readOnly": True},
    ]
    if SHARED_MEMORY.on(version):
        mounts.append({"name": MEMORY_VOLUME, "mountPath": MEMORY_PATH, "readOnly": True})
    return mounts


def curve_requirement(job: TrainJobContext) -> SecretRequirement:
    """The curve Secret as a requirement: shape only, never the key (see module docstring)."""
    owners = tuple(job.owner_references())
    return SecretRequirement(
        name=curve_secret_name(job.name),
        namespace=job.namespace,
        type="",  # upstream sets no type
        keys=(CURVE_KEY,),
        generator=GENERATOR_FROM_UID if owners else GENERATOR_RANDOM,
        immutable=False,
        owner_references=owners,
    )


# --- the plugin


def _policy(info: Info) -> JsonObject | None:
    policy: JsonObject | None = (info.ml_policy or {}).get("flux")
    return policy


def _missing(job: TrainJobContext, field_path: str, what: str) -> InputError:
    return InputError.single(
        f"required for a Flux runtime ({what}); the Trainer controller cannot reconcile "
        "this TrainJob without it",
        object=ObjectRef(TRAINJOB_KIND, job.name, job.namespace),
        field_path=field_path,
    )


def _trainer(job: TrainJobContext) -> JsonObject:
    trainer = job.trainer
    if trainer is None:
        raise _missing(job, "spec.trainer", "with numNodes")
    return trainer


def _num_nodes(job: TrainJobContext, trainer: JsonObject) -> int:
    if trainer.get("numNodes") is None:
        raise _missing(job, "spec.trainer.numNodes", "the Flux host list is built from it")
    value: int = trainer["numNodes"]
    return value


def _tasks(job: TrainJobContext, trainer: JsonObject, policy: JsonObject) -> int:
    if trainer.get("numProcPerNode") is not None:
        value: int = trainer["numProcPerNode"]
        return value
    if policy.get("numProcPerNode") is None:
        raise _missing(
            job, "spec.trainer.numProcPerNode", "or a runtime mlPolicy.flux.numProcPerNode"
        )
    runtime_value: int = policy["numProcPerNode"]
    return runtime_value


class FluxPlugin(EnforceMLPolicyPlugin, ComponentBuilderPlugin, CustomValidationPlugin):
    """``templates`` gives the template text; by default the cached upstream loader.

    It is called only for Flux runtimes, so other runtimes render without the files.
    """

    name = NAME

    def __init__(self, templates: TemplateSource = flux_templates) -> None:
        self._templates = templates

    def validate(self, info: Info, job: TrainJobContext) -> list[FieldError]:
        """numProcPerNode >= 1 (TrainJob's, else the runtime's); no reserved init container."""
        policy = _policy(info)
        if policy is None:
            return []
        errors: list[FieldError] = []
        nproc = policy.get("numProcPerNode")
        trainer = job.trainer
        checks_trainjob = TRAINJOB_NPROC_CHECKED.on(job.trainer_version)
        if checks_trainjob and trainer is not None and trainer.get("numProcPerNode") is not None:
            nproc = trainer["numProcPerNode"]
        if nproc is not None and nproc < 1:
            errors.append(
                FieldError(
                    INVALID,
                    "spec.trainer.numProcPerNode",
                    "must be greater than or equal to 1 for Flux TrainJob",
                    nproc,
                )
            )
        for pod_set in info.pod_sets:
            if pod_set.name != NODE:
                continue
            for container in pod_set.init_containers:
                if container.name == INSTALLER_CONTAINER:
                    errors.append(
                        FieldError(
                            INVALID,
                            "spec.trainer.initContainers",
                            f"InitContainer '{INSTALLER_CONTAINER}' is reserved",
                            container.name,
                        )
                    )
        return errors

    def enforce_ml_policy(self, info: Info, job: TrainJobContext) -> None:
        if _policy(info) is None:
            return
        trainer = _trainer(job)
        self._templates(
            job.trainer_version
        )  # a missing template is a setup problem: report it before any work
        settings = broker_settings(info, trainer)
        config_map = config_map_name(job.name)
        command = original_command(info, trainer)
        trainer["command"] = ["/bin/bash", f"{CONFIG_PATH}/entrypoint.sh", command]
        trainer.pop("args", None)
        for index, pod_set in enumerate(info.pod_sets):
            if pod_set.name != NODE:
                continue
            upsert.upsert_volumes(pod_set.volumes, _view_volumes(config_map, job.trainer_version))
            upsert.upsert_volumes(pod_set.volumes, [_curve_volume(job.name)])
            installer = _installer(config_map, settings[FLUX_VIEW_IMAGE])
            if INSTALLER_THROUGH_POD_SET.on(job.trainer_version):
                pod_set.init_containers.append(installer)
            else:
                _append_to_jobset(info, index, installer)
            for container in pod_set.containers:
                if container.name == NODE:
                    upsert.upsert_volume_mounts(
                        container.volume_mounts, _node_mounts(config_map, job.trainer_version)
                    )

    def sync_parallel_count(self, info: Info) -> None:
        return None

    def build(self, info: Info, job: TrainJobContext) -> list[JsonObject]:
        """The entrypoint ConfigMap; the curve Secret goes to ``info.secret_requirements``."""
        policy = _policy(info)
        if policy is None:
            return []
        templates = self._templates(job.trainer_version)
        trainer = _trainer(job)
        settings = broker_settings(info, trainer)
        num_nodes = _num_nodes(job, trainer)
        tasks = _tasks(job, trainer, policy)
        gpus = num_gpu_per_node(effective_resources(info, trainer))
        metadata = job.object_metadata()
        metadata["name"] = config_map_name(job.name)
        config_map: JsonObject = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": metadata,
            "data": {
                "entrypoint.sh": entrypoint_script(templates, job, num_nodes, tasks, gpus),
                "init.sh": init_script(templates, job, num_nodes, settings),
            },
        }
        info.secret_requirements.append(curve_requirement(job))
        return [config_map]
