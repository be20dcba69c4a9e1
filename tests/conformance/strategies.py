"""Hypothesis strategies for the differential fuzzer: random runtimes + TrainJobs upstream admits.

:func:`cases` draws one :class:`FuzzCase`: the input files of a golden case (an optional
``priorityclasses.yaml``, ``runtime.yaml``, ``trainjob.yaml``) as YAML text. The inputs are
meant to be valid (admitted by the API server and the Trainer webhooks); a few choices,
each drawn rarely, step over a validation rule on purpose (reserved env names, a missing
PriorityClass, a patch of an unknown container, torchtune multi-node LoRA, ...), so that
rejections are fuzzed too. Either way both sides must agree.

Shrinking: every optional feature is drawn so that its simplest value is "absent" (a
boolean that shrinks to False, a list that shrinks to empty, ``sampled_from`` whose first
item is the plainest), so a minimal reproduction keeps only what the difference needs.

The runtime shapes below are written for the fuzzer; the torchtune ones follow the
structure of upstream's torchtune runtimes (three jobs, a PVC template named
``initializer``, ``STORAGE_URI`` defaults, a ``tune run`` command carrying the
runtime-managed ``output_dir``/``tokenizer.*``/``checkpointer.checkpoint_dir`` overrides).
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass, field
from typing import Any

import yaml
from hypothesis import strategies as st

from compiler.render.runtime_info import POD_TEMPLATE_OVERRIDES, RUNTIME_PATCHES
from compiler.upstream.versions import DEFAULT_TRAINER_VERSION

API = "trainer.kubeflow.org/v1alpha1"
ANCESTOR = "trainer.kubeflow.org/trainjob-ancestor-step"
QUEUE_KEY = "scheduling.volcano.sh/queue-name"

Json = dict[str, Any]
Draw = Any  # the ``draw`` callable of st.composite


# --------------------------------------------------------------------------- YAML text


class _Dumper(yaml.SafeDumper):
    pass


_AMBIGUOUS = re.compile(r"[-+.0-9][-+.0-9a-zA-Z_:]*|[A-Za-z]+")
_YAML11_WORDS = {"y", "n", "yes", "no", "on", "off", "true", "false", "null", "~"}


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    # Quote whatever some YAML reader (1.1 or 1.2) could take for a number or a boolean.
    numeric = _AMBIGUOUS.fullmatch(value) is not None and not value.isalpha()
    if value == "" or numeric or value.lower() in _YAML11_WORDS:
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style='"')
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


_Dumper.add_representer(str, _represent_str)


class Plain(str):
    """A scalar written unquoted on purpose, whatever a YAML reader makes of it."""


def _represent_plain(dumper: yaml.SafeDumper, value: Plain) -> yaml.ScalarNode:
    # Tag it as what PyYAML resolves it to, so that the emitter leaves it plain.
    tag = dumper.resolve(yaml.ScalarNode, str(value), (True, False))  # type: ignore[no-untyped-call]
    return dumper.represent_scalar(tag, str(value), style="")


_Dumper.add_representer(Plain, _represent_plain)

# Plain scalars YAML 1.1 (kubectl, the API server) and YAML 1.2 read differently, or read
# as something other than a string.
TRICKY_SCALARS = [
    "yes",
    "y",
    "on",
    "off",
    "no",
    "0x1F",
    "017",
    "0o17",
    "12:30",
    "1_000",
    "~",
    "2024-01-01",
]
TRICKY_QUANTITIES = ["1e3", "0.5", "1_000", "0x10", "017", "1.5e3"]


def dump(documents: list[Json]) -> str:
    return "---\n".join(
        yaml.dump(d, Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=1000)
        for d in documents
    )


# --------------------------------------------------------------------------- the case


@dataclass
class FuzzCase:
    """One example: input files (name, YAML text) in golden-case order."""

    files: list[tuple[str, str]]
    owner_uid: str
    features: list[str] = field(default_factory=list)
    env_order_random: bool = False

    @property
    def description(self) -> str:
        return "Found by the differential fuzzer: " + ", ".join(self.features)

    def size(self) -> int:
        return sum(len(text) for _, text in self.files)


# --------------------------------------------------------------------------- small values

SCALAR_WORDS = ["x", "debug", "1", "", "true", "/data", "a b", "0.5"]
ENV_NAMES = ["LOG_LEVEL", "DATA_DIR", "HF_HOME", "NCCL_DEBUG", "OMP_NUM_THREADS", "POD_IP"]
GPU_NAMES = ["nvidia.com/gpu", "amd.com/gpu", "gpu.intel.com/i915", "example.com/gpu"]
LABEL_KEYS = ["team", "app.kubernetes.io/part-of", "example.com/tier", "cost-center"]
LABEL_VALUES = ["ml", "research", "a1", "x-y"]


def maybe(draw: Draw, strategy: Any, weight: float = 0.5) -> Any:
    """``strategy``'s value with probability ``weight``, else None (shrinks to None)."""
    present = draw(st.integers(0, 99)) < int(weight * 100)
    return draw(strategy) if present else None


def rarely(draw: Draw, percent: int = 5) -> bool:
    """True with about ``percent`` % probability; shrinks to False."""
    return bool(draw(st.integers(0, 99)) >= 100 - percent)


def labels() -> Any:
    return st.dictionaries(
        st.sampled_from(LABEL_KEYS), st.sampled_from(LABEL_VALUES), min_size=1, max_size=2
    )


@st.composite
def quantity(draw: Draw, mantissas: list[Any], suffixes: list[str]) -> Any:
    """A quantity in one of the spellings the API accepts (int, or string with a suffix)."""
    mantissa = draw(st.sampled_from(mantissas))
    suffix = draw(st.sampled_from(suffixes))
    if isinstance(mantissa, int) and suffix == "":
        return mantissa if draw(st.booleans()) else str(mantissa)
    return f"{mantissa}{suffix}"


def cpu() -> Any:
    common = st.sampled_from(
        [1, 2, "500m", "250m", "1500m", "2", "0.5", "1.5", "3.7", 4, "100m", "2500m"]
    )
    odd = quantity(
        [1, 2, "0.5", ".5", "+2", "1.25", "1500", "0", "2.", "0.001"],
        ["", "m", "k", "e3", "E-3", "u"],
    )
    return st.one_of(common, odd)


def memory() -> Any:
    common = st.sampled_from(["1Gi", "512Mi", "2Gi", "4G", "1536Mi", "1000Mi", "8Gi", 1073741824])
    odd = quantity(
        [1, 2, "0.5", "1.5", "1024", "1536", "100", "3"],
        ["Ki", "Mi", "Gi", "Ti", "M", "G", "k", "", "e6"],
    )
    return st.one_of(common, odd)


def gpu_count() -> Any:
    return st.sampled_from([1, 2, 4, "2", 0, 8])


@st.composite
def resource_list(draw: Draw, gpu: bool = True) -> Json:
    out: Json = {}
    if draw(st.booleans()):
        out["cpu"] = draw(cpu())
    if draw(st.booleans()):
        out["memory"] = draw(memory())
    # At most one name containing "gpu" per list: upstream picks the first one a Go map
    # iteration yields, which is random when there are several.
    if gpu and draw(st.booleans()):
        out[draw(st.sampled_from(GPU_NAMES))] = draw(gpu_count())
    if out and rarely(draw, 2):
        out[next(iter(out))] = Plain(draw(st.sampled_from(TRICKY_QUANTITIES)))
    if rarely(draw, 10):
        out["google.com/tpu"] = draw(st.sampled_from([1, 4]))
    return out


@st.composite
def resources(draw: Draw, gpu: bool = True) -> Json:
    out: Json = {}
    if draw(st.booleans()):
        out["requests"] = draw(resource_list(gpu))
    if draw(st.booleans()):
        out["limits"] = draw(resource_list(gpu))
    return out


@st.composite
def env_var(draw: Draw, name: str) -> Json:
    kind = draw(
        st.sampled_from(["value", "value", "fieldRef", "resourceFieldRef", "configMap", "secret"])
    )
    if rarely(draw, 4):
        ref: Json = {"volumeName": "cfg", "path": "vars.env", "key": "TOKEN"}
        if draw(st.booleans()):
            ref["optional"] = draw(st.booleans())
        return {"name": name, "valueFrom": {"fileKeyRef": ref}}
    if kind == "value":
        if rarely(draw, 3):
            return {"name": name, "value": Plain(draw(st.sampled_from(TRICKY_SCALARS)))}
        value = draw(st.sampled_from(SCALAR_WORDS))
        return (
            {"name": name}
            if value == "" and draw(st.booleans())
            else {"name": name, "value": value}
        )
    if kind == "fieldRef":
        ref = {
            "fieldPath": draw(
                st.sampled_from(
                    [
                        "metadata.name",
                        "status.podIP",
                        "metadata.namespace",
                        "metadata.labels['app']",
                    ]
                )
            )
        }
        if draw(st.booleans()):
            ref = {"apiVersion": "v1", **ref}
        return {"name": name, "valueFrom": {"fieldRef": ref}}
    if kind == "resourceFieldRef":
        ref = {
            "resource": draw(
                st.sampled_from(["limits.cpu", "requests.memory", "limits.nvidia.com/gpu"])
            )
        }
        if draw(st.booleans()):
            ref["containerName"] = "node"
        if draw(st.booleans()):
            ref["divisor"] = draw(st.sampled_from(["1m", "1Mi", 1, "0", "1024Ki"]))
        return {"name": name, "valueFrom": {"resourceFieldRef": ref}}
    key = "configMapKeyRef" if kind == "configMap" else "secretKeyRef"
    ref = {"key": draw(st.sampled_from(["token", "level"]))}
    if draw(st.booleans()):
        ref["name"] = draw(st.sampled_from(["creds", "settings"]))
    if draw(st.booleans()):
        ref["optional"] = draw(st.booleans())
    return {"name": name, "valueFrom": {key: ref}}


@st.composite
def env_list(draw: Draw, names: list[str], max_size: int = 3) -> list[Json]:
    chosen = draw(st.lists(st.sampled_from(names), unique=True, max_size=max_size))
    return [draw(env_var(n)) for n in chosen]


@st.composite
def ports(draw: Draw) -> list[Json]:
    numbers = draw(
        st.lists(
            st.sampled_from([8080, 29500, 6006, 2222, 9090]), unique=True, min_size=1, max_size=2
        )
    )
    names = iter(["http", "metrics"])
    out = []
    for number in numbers:
        port: Json = {"containerPort": number}
        if draw(st.booleans()):
            port["name"] = next(names)
        if rarely(draw, 20):
            port["protocol"] = "TCP"
        out.append(port)
    return out


# --------------------------------------------------------------------------- pass-through fields
# Fields no plugin reads: they only go through upstream's typed round trip, where Go's
# omitempty drops zero scalars but keeps zero pointers, and quantities are canonicalised.


@st.composite
def container_noise(draw: Draw) -> Json:
    options: list[tuple[str, Any]] = [
        ("imagePullPolicy", st.sampled_from(["IfNotPresent", "Always"])),
        ("workingDir", st.just("/workspace")),
        ("stdin", st.booleans()),
        ("tty", st.just(False)),
        ("terminationMessagePolicy", st.just("FallbackToLogsOnError")),
        (
            "readinessProbe",
            st.fixed_dictionaries(
                {
                    "httpGet": st.fixed_dictionaries(
                        {"path": st.just("/healthz"), "port": st.sampled_from([8080, "http"])}
                    )
                },
                optional={
                    "periodSeconds": st.sampled_from([0, 10]),
                    "failureThreshold": st.just(3),
                },
            ),
        ),
        (
            "securityContext",
            st.fixed_dictionaries(
                {},
                optional={
                    "privileged": st.booleans(),
                    "runAsUser": st.sampled_from([0, 1000]),
                    "capabilities": st.just({"add": ["SYS_PTRACE"]}),
                },
            ),
        ),
        ("envFrom", st.just([{"configMapRef": {"name": "train-config"}, "prefix": "CFG_"}])),
    ]
    out: Json = {}
    for key, strategy in options:
        if rarely(draw, 8):
            out[key] = draw(strategy)
    return out


@st.composite
def pod_noise(draw: Draw) -> Json:
    options: list[tuple[str, Any]] = [
        ("restartPolicy", st.sampled_from(["OnFailure", "Never"])),
        ("hostNetwork", st.booleans()),
        ("dnsPolicy", st.just("ClusterFirstWithHostNet")),
        ("terminationGracePeriodSeconds", st.sampled_from([0, 30])),
        ("enableServiceLinks", st.booleans()),
        ("securityContext", st.just({"runAsNonRoot": False, "runAsUser": 0})),
        ("nodeSelector", st.just({"pool": "cpu"})),
        ("tolerations", st.just([{"key": "spot", "operator": "Exists"}])),
        ("serviceAccountName", st.just("runtime-sa")),
        ("imagePullSecrets", st.just([{"name": "runtime-regcred"}])),
    ]
    out: Json = {}
    for key, strategy in options:
        if rarely(draw, 6):
            out[key] = draw(strategy)
    if rarely(draw, 10):
        out["volumes"] = [
            {"name": "scratch", "emptyDir": {"sizeLimit": draw(memory())}},
            {"name": "logs", "emptyDir": {}},
        ]
    return out


@st.composite
def job_noise(draw: Draw) -> Json:
    options: list[tuple[str, Any]] = [
        ("backoffLimit", st.sampled_from([0, 3])),
        ("completionMode", st.just("Indexed")),
        ("activeDeadlineSeconds", st.just(7200)),
        ("ttlSecondsAfterFinished", st.sampled_from([0, 60])),
        ("suspend", st.just(False)),
    ]
    out: Json = {}
    for key, strategy in options:
        if rarely(draw, 6):
            out[key] = draw(strategy)
    return out


def add_noise(draw: Draw, job: Job) -> None:
    for container in job.pod_spec.get("containers", []):
        container.update({k: v for k, v in draw(container_noise()).items() if k not in container})
    extra = draw(pod_noise())
    if "volumes" in extra and "volumes" in job.pod_spec:
        job.pod_spec["volumes"] = job.pod_spec["volumes"] + extra.pop("volumes")
    job.pod_spec.update({k: v for k, v in extra.items() if k not in job.pod_spec})
    job.job_spec_extra = {**draw(job_noise()), **job.job_spec_extra}
    if rarely(draw, 10):
        job.job_labels = dict(draw(labels()))
    if rarely(draw, 10):
        job.pod_metadata = {draw(st.sampled_from(["labels", "annotations"])): draw(labels())}
    if rarely(draw, 5) and "volumes" in job.pod_spec:
        for container in job.pod_spec.get("containers", []):
            container.setdefault("volumeMounts", []).append(
                {"name": "logs", "mountPath": "/var/log/train"}
            )
            break


# --------------------------------------------------------------------------- the runtime


@dataclass
class Job:
    """A replicated job being built, plus what the TrainJob strategy needs to know of it."""

    name: str
    ancestor: str | None
    pod_spec: Json
    job_spec_extra: Json = field(default_factory=dict)
    depends_on: list[Json] = field(default_factory=list)
    replicas: int | None = None
    job_labels: Json = field(default_factory=dict)
    pod_metadata: Json = field(default_factory=dict)

    @property
    def container_names(self) -> list[str]:
        return [c["name"] for c in self.pod_spec.get("containers", [])]

    @property
    def init_container_names(self) -> list[str]:
        return [c["name"] for c in self.pod_spec.get("initContainers", [])]

    def render(self) -> Json:
        labels = dict(self.job_labels)
        if self.ancestor is not None:
            labels[ANCESTOR] = self.ancestor
        template: Json = {}
        if labels:
            template["metadata"] = {"labels": labels}
        pod_template: Json = {}
        if self.pod_metadata:
            pod_template["metadata"] = self.pod_metadata
        pod_template["spec"] = self.pod_spec
        template["spec"] = {**self.job_spec_extra, "template": pod_template}
        out: Json = {"name": self.name}
        if self.replicas is not None:
            out["replicas"] = self.replicas
        if self.depends_on:
            out["dependsOn"] = self.depends_on
        out["template"] = template
        return out


@dataclass
class Runtime:
    kind: str  # TrainingRuntime or ClusterTrainingRuntime
    name: str
    policy: str  # none, numNodes, torch, torchtune, mpi, jax, xgboost, flux
    jobs: list[Job]
    spec: Json  # everything of spec except template.spec.replicatedJobs
    priority_classes: list[str] = field(default_factory=list)
    features: list[str] = field(default_factory=list)
    torchtune_model: str | None = None

    def job(self, name: str) -> Job | None:
        return next((j for j in self.jobs if j.name == name), None)

    def render(self, namespace: str | None) -> Json:
        metadata: Json = {"name": self.name}
        if self.kind == "TrainingRuntime" and namespace is not None:
            metadata["namespace"] = namespace
        spec = {k: v for k, v in self.spec.items() if k != "template"}
        template = dict(self.spec.get("template") or {})
        template_spec = dict(template.get("spec") or {})
        template_spec["replicatedJobs"] = [j.render() for j in self.jobs]
        template["spec"] = template_spec
        spec["template"] = template
        return {"apiVersion": API, "kind": self.kind, "metadata": metadata, "spec": spec}


def node_container(
    draw: Draw, image: str, command: list[str] | None, env_names: list[str] | None = None
) -> Json:
    c: Json = {"name": "node", "image": image}
    if command is not None:
        c["command"] = command
    if rarely(draw, 15):
        c["args"] = draw(st.sampled_from([["--epochs", "1"], ["--verbose"]]))
    if draw(st.booleans()):
        c["env"] = draw(env_list(env_names or ["RUNTIME_MODE", "LOG_LEVEL", "NCCL_DEBUG"], 2))
    if draw(st.booleans()):
        c["ports"] = draw(ports())
    if draw(st.booleans()):
        c["resources"] = draw(resources())
    return c


@st.composite
def sidecar(draw: Draw) -> Json:
    c: Json = {"name": draw(st.sampled_from(["log-shipper", "metrics"])), "image": "acme/sidecar:1"}
    if draw(st.booleans()):
        c["env"] = draw(env_list(["LEVEL", "LOG_LEVEL"], 1))
    if draw(st.booleans()):
        c["resources"] = {
            "requests": {"cpu": draw(st.sampled_from(["100m", "250m", 1])), "memory": "128Mi"}
        }
    return c


@st.composite
def init_container(draw: Draw) -> Json:
    c: Json = {"name": "prep", "image": "busybox:1.36", "command": ["sh", "-c", "true"]}
    if draw(st.booleans()):
        c["resources"] = {
            "requests": {"cpu": draw(st.sampled_from(["200m", 2, "1500m"])), "memory": "256Mi"}
        }
    if rarely(draw, 25):
        c["restartPolicy"] = "Always"  # a native sidecar: counts differently in pod requests
    return c


def initializer_job(draw: Draw, kind: str, volume_mode: str) -> Job:
    container: Json = {"name": kind, "image": f"acme/{kind}:v1"}
    if draw(st.booleans()):
        container["env"] = [
            {
                "name": "STORAGE_URI",
                "value": draw(st.sampled_from(["hf://org/default", "s3://b/k"])),
            }
        ]
    if draw(st.integers(0, 9)) > 0:  # rarely without the mount the TrainJob webhook wants
        container["volumeMounts"] = [{"name": "initializer", "mountPath": "/workspace"}]
    if rarely(draw, 30):
        container["resources"] = {"requests": {"cpu": "300m", "memory": "1Gi"}}
    if rarely(draw, 10):
        container["envFrom"] = [{"secretRef": {"name": "runtime-creds"}}]
    pod_spec: Json = {"containers": [container]}
    if volume_mode == "pod-volume":
        pod_spec["volumes"] = [
            {"name": "initializer", "persistentVolumeClaim": {"claimName": "shared"}}
        ]
    return Job(name=kind, ancestor=kind, pod_spec=pod_spec)


def extra_job(draw: Draw) -> Job:
    pod_spec: Json = {
        "containers": [
            {"name": "main", "image": "acme/eval:1", "resources": draw(resources(gpu=False))}
        ]
    }
    job = Job(
        name=draw(st.sampled_from(["evaluator", "tensorboard"])), ancestor=None, pod_spec=pod_spec
    )
    if draw(st.booleans()):
        job.job_spec_extra = {"parallelism": draw(st.integers(1, 3))}
    if rarely(draw, 30):
        job.replicas = 2
    return job


POLICIES = ["torch", "none", "numNodes", "mpi", "jax", "xgboost", "flux", "torchtune"]
# v2.1.0 has no Flux, JAX or XGBoost policy (golden cases pin their schema errors).
POLICIES_BEFORE_V2_2 = ["torch", "none", "numNodes", "mpi", "torchtune"]
# v2.1.0's int-or-string numProcPerNode ("many" is refused by its Torch admission).
NUM_PROC_V2_1: list[int | str] = [1, 2, "auto", "cpu", "gpu", "many"]
# The fields of v2.1.0's PodTemplateSpecOverride and ContainerOverride.
OVERRIDE_POD_FIELDS = (
    "serviceAccountName",
    "nodeSelector",
    "affinity",
    "tolerations",
    "volumes",
    "initContainers",
    "containers",
    "schedulingGates",
    "imagePullSecrets",
)
OVERRIDE_CONTAINER_FIELDS = ("name", "env", "volumeMounts")
# The pod fields of v2.0.0's PodSpecOverride (no metadata, affinity or pull secrets).
SPEC_OVERRIDE_POD_FIELDS = (
    "serviceAccountName",
    "nodeSelector",
    "tolerations",
    "volumes",
    "initContainers",
    "containers",
    "schedulingGates",
)
TORCHTUNE_RUNTIMES = {
    "torchtune-llama3.2-1b": ("llama3_2/1B", "meta-llama/Llama-3.2-1B-Instruct"),
    "torchtune-llama3.2-3b": ("llama3_2/3B", "meta-llama/Llama-3.2-3B-Instruct"),
    "torchtune-qwen2.5-1.5b": ("qwen2_5/1.5B", "Qwen/Qwen2.5-1.5B-Instruct"),
    "torchtune-llama3.3-70b": ("llama3_3/70B", "meta-llama/Llama-3.3-70B-Instruct"),
    "torchtune-gemma-2b": ("gemma/2B", "google/gemma-2b"),  # not a supported model
}


@st.composite
def runtimes(draw: Draw, version: str = DEFAULT_TRAINER_VERSION) -> Runtime:
    policies = POLICIES if RUNTIME_PATCHES.on(version) else POLICIES_BEFORE_V2_2
    policy = draw(st.sampled_from(policies))
    if policy == "torchtune":
        tune: Runtime = draw(torchtune_runtime())
        return tune
    kind = draw(st.sampled_from(["TrainingRuntime", "ClusterTrainingRuntime"]))
    name = {"none": "plain", "numNodes": "plain-nodes"}.get(policy, policy) + "-rt"
    features = [f"{kind} with mlPolicy {policy}"]
    ml_policy: Json | None = None
    if policy != "none":
        ml_policy = {}
        if draw(st.booleans()) or policy == "numNodes":
            ml_policy["numNodes"] = draw(st.integers(1, 4))
        if policy in ("torch", "jax", "xgboost"):
            ml_policy[policy] = {}
        elif policy == "flux":
            ml_policy["flux"] = (
                {"numProcPerNode": draw(st.integers(1, 4))} if draw(st.booleans()) else {}
            )

    jobs: list[Job] = []
    # JobSet volumeClaimPolicies reach the runtime schema in v2.2.0.
    volume_modes = (
        ["claim-template", "pod-volume"] if RUNTIME_PATCHES.on(version) else ["pod-volume"]
    )
    volume_mode = draw(st.sampled_from(volume_modes))
    if policy == "mpi":
        jobs, mpi = draw(mpi_jobs())
        assert ml_policy is not None
        ml_policy["mpi"] = mpi
        features.append(f"mpi {mpi}, jobs {[j.name for j in jobs]}")
        if rarely(draw, 15):
            jobs.insert(0, initializer_job(draw, "dataset-initializer", volume_mode))
    else:
        # 1-3 jobs: the trainer, then up to two of the initializers and an extra job.
        others = draw(
            st.lists(
                st.sampled_from(["dataset-initializer", "model-initializer", "extra"]),
                unique=True,
                max_size=2,
            )
        )
        for other in ["dataset-initializer", "model-initializer"]:
            if other in others:
                jobs.append(initializer_job(draw, other, volume_mode))
        trainer = trainer_job(draw, policy)
        trainer.depends_on = [
            {"name": j.name, "status": "Complete"} for j in jobs if draw(st.booleans())
        ]
        jobs.append(trainer)
        if "extra" in others:
            jobs.append(extra_job(draw))
        elif rarely(draw, 5):
            # A second trainer-ancestor job: some plugins act on the first only.
            shadow = Job(
                "node-shadow",
                "trainer",
                {"containers": [{"name": "node", "image": "acme/shadow:1"}]},
            )
            jobs.append(shadow)
        features.append(f"jobs {[j.name for j in jobs]}")

    if policy == "torch" and not RUNTIME_PATCHES.on(version) and draw(st.booleans()):
        # v2.1.0's runtime default for the TrainJob's numProcPerNode.
        assert ml_policy is not None
        ml_policy["torch"] = {"numProcPerNode": draw(st.sampled_from(NUM_PROC_V2_1))}
        features.append(f"torch numProcPerNode {ml_policy['torch']['numProcPerNode']}")
    elif policy == "torch" and rarely(draw, 35):
        assert ml_policy is not None
        targets = env_injection_targets(draw, jobs)
        if targets:
            ml_policy["torch"] = {"envInjection": {"targets": targets}}
            features.append("torch envInjection")

    for job in jobs:
        add_noise(draw, job)
    if ml_policy is not None and rarely(draw, 2):
        # Two policies: the CRD rejects the runtime, so the TrainJob finds no runtime.
        ml_policy["jax" if "jax" not in ml_policy else "xgboost"] = {}
        features.append("second mlPolicy member")
    spec: Json = {}
    if ml_policy is not None:
        spec["mlPolicy"] = ml_policy
    runtime = Runtime(kind=kind, name=name, policy=policy, jobs=jobs, spec=spec, features=features)
    template_spec = jobset_extras(draw, runtime, volume_mode)
    template: Json = {}
    if template_spec:
        template["spec"] = template_spec
    if draw(st.booleans()):
        template["metadata"] = {"labels": draw(labels())}
    if template:
        spec["template"] = template
    pod_group_policy(draw, runtime)
    return runtime


def trainer_job(draw: Draw, policy: str) -> Job:
    image = {"jax": "acme/jax:0.4", "xgboost": "acme/xgb:2", "flux": "acme/flux-app:1"}.get(
        policy, "acme/torch:2.5"
    )
    command = draw(
        st.sampled_from([None, ["torchrun", "train.py"], ["python", "main.py"], ["sleep", "10"]])
    )
    env_names = ["FLUX_VIEW_IMAGE", "FLUX_QUEUE_POLICY", "LOG_LEVEL"] if policy == "flux" else None
    containers = [node_container(draw, image, command, env_names)]
    if rarely(draw, 30):
        containers.append(draw(sidecar()))
        if draw(st.booleans()):
            containers.reverse()
    pod_spec: Json = {"containers": containers}
    if rarely(draw, 30):
        pod_spec["initContainers"] = [draw(init_container())]
    if rarely(draw, 20):
        containers[-1 if containers[-1]["name"] == "node" else 0]["volumeMounts"] = [
            {"name": "initializer", "mountPath": "/workspace"}
        ]
    name = "node" if draw(st.integers(0, 9)) > 0 else "trainer"  # a trainer job not called "node"
    job = Job(name=name, ancestor="trainer", pod_spec=pod_spec)
    if rarely(draw, 20):
        job.job_spec_extra = {"parallelism": draw(st.integers(2, 3))}  # replaced by the node count
    if rarely(draw, 10):
        job.replicas = 1
    return job


@st.composite
def mpi_jobs(draw: Draw) -> tuple[list[Job], Json]:
    mpi: Json = {}
    as_node = draw(st.booleans())
    if as_node or draw(st.booleans()):
        mpi["runLauncherAsNode"] = as_node
    if draw(st.booleans()):
        mpi["numProcPerNode"] = draw(st.integers(1, 4))
    if draw(st.booleans()):
        mpi["sshAuthMountPath"] = "/home/mpiuser/.ssh"
    if rarely(draw, 20):
        mpi["mpiImplementation"] = "" if rarely(draw, 30) else "OpenMPI"
    launcher_container = {
        "name": "node",
        "image": "acme/mpi:4",
        "command": ["mpirun", "python", "train.py"],
    }
    if draw(st.booleans()):
        launcher_container["resources"] = draw(resources())
    node_job_container: Json = {
        "name": "node",
        "image": "acme/mpi:4",
        "command": ["/usr/sbin/sshd", "-De"],
    }
    if draw(st.booleans()):
        node_job_container["resources"] = draw(resources())
    if draw(st.booleans()):
        node_job_container["ports"] = [{"containerPort": 2222, "name": "ssh"}]
    trainer_on = draw(st.sampled_from(["launcher", "node"]))
    launcher = Job(
        "launcher",
        "trainer" if trainer_on == "launcher" else None,
        {"containers": [launcher_container]},
    )
    node = Job(
        "node", "trainer" if trainer_on == "node" else None, {"containers": [node_job_container]}
    )
    layout = draw(st.sampled_from(["node-first", "launcher-first"]))
    if rarely(draw, 10):
        launcher.ancestor = "trainer"
        return [launcher], mpi
    if layout == "node-first":
        if draw(st.booleans()):
            launcher.depends_on = [{"name": "node", "status": "Ready"}]
        return [node, launcher], mpi
    return [launcher, node], mpi


def env_injection_targets(draw: Draw, jobs: list[Job]) -> list[Json]:
    targets = []
    for job in jobs:
        names = [n for n in job.container_names + job.init_container_names if n != "node"]
        if rarely(draw, 5):
            names.append("ghost")  # a container that does not exist: rejected
        if names and draw(st.booleans()):
            chosen = draw(st.lists(st.sampled_from(names), unique=True, min_size=1, max_size=2))
            targets.append({"jobName": job.name, "containerNames": chosen})
    return targets


def jobset_extras(draw: Draw, runtime: Runtime, volume_mode: str) -> Json:
    template_spec: Json = {}
    uses_initializer = any(
        m.get("name") == "initializer"
        for j in runtime.jobs
        for c in j.pod_spec.get("containers", [])
        for m in c.get("volumeMounts", [])
    )
    if uses_initializer and volume_mode == "claim-template":
        template_spec["volumeClaimPolicies"] = [
            {
                "templates": [
                    {
                        "metadata": {"name": "initializer"},
                        "spec": {
                            "accessModes": ["ReadWriteOnce"],
                            "resources": {"requests": {"storage": "5Gi"}},
                        },
                    }
                ]
            }
        ]
    if rarely(draw, 15):
        template_spec["network"] = {"subdomain": "train-net"}
    if rarely(draw, 10):
        template_spec["network"] = {"enableDNSHostnames": draw(st.booleans())}
    if rarely(draw, 15):
        template_spec["successPolicy"] = {
            "operator": "All",
            "targetReplicatedJobs": [runtime.jobs[-1].name],
        }
    if rarely(draw, 10):
        template_spec["failurePolicy"] = {"maxRestarts": draw(st.integers(0, 3))}
    if rarely(draw, 10):
        template_spec["ttlSecondsAfterFinished"] = 600
    if rarely(draw, 10):
        template_spec["suspend"] = True  # overwritten by the TrainJob's suspend
    if rarely(draw, 8) and not any(j.depends_on for j in runtime.jobs):
        # (JobSet's CEL rules make startupPolicy and dependsOn mutually exclusive.)
        template_spec["startupPolicy"] = {
            "startupPolicyOrder": draw(st.sampled_from(["InOrder", "AnyOrder"]))
        }
    if rarely(draw, 6):
        template_spec["network"] = {
            **template_spec.get("network", {}),
            "publishNotReadyAddresses": draw(st.booleans()),
        }
    if rarely(draw, 6):
        template_spec["coordinator"] = {
            "replicatedJob": runtime.jobs[-1].name,
            "jobIndex": 0,
            "podIndex": 0,
        }
    return template_spec


def pod_group_policy(draw: Draw, runtime: Runtime) -> None:
    kind = draw(st.sampled_from(["none", "none", "coscheduling", "volcano"]))
    spec = runtime.spec
    if kind == "coscheduling":
        cos: Json = {}
        if draw(st.booleans()):
            cos["scheduleTimeoutSeconds"] = draw(st.sampled_from([30, 120]))
        spec["podGroupPolicy"] = {"coscheduling": cos}
        runtime.features.append("coscheduling")
    elif kind == "volcano":
        vol: Json = {}
        if draw(st.booleans()):
            topology: Json = {}
            if draw(st.booleans()):
                topology["mode"] = draw(st.sampled_from(["hard", "soft"]))
            if draw(st.booleans()):
                topology["highestTierAllowed"] = draw(st.integers(1, 3))
            vol["networkTopology"] = topology
        spec["podGroupPolicy"] = {"volcano": vol}
        runtime.features.append("volcano")
        if draw(st.booleans()):
            template = spec.setdefault("template", {})
            metadata = template.setdefault("metadata", {})
            metadata["annotations"] = {
                QUEUE_KEY: "" if rarely(draw, 5) else draw(st.sampled_from(["q1", "research"]))
            }
            runtime.features.append("volcano queue annotation")
    # priorityClassName on some pod templates (volcano looks each one up).
    if kind == "volcano" or rarely(draw, 15):
        for job in runtime.jobs:
            if draw(st.booleans()):
                name = draw(st.sampled_from(["batch-high", "batch-low", "system-cluster-critical"]))
                job.pod_spec["priorityClassName"] = name
                if (
                    name.startswith("batch-")
                    and name not in runtime.priority_classes
                    and not rarely(draw, 5)
                ):
                    runtime.priority_classes.append(name)
        if kind == "volcano" and draw(st.booleans()):
            for job in runtime.jobs:
                job.pod_spec["schedulerName"] = "volcano"


@st.composite
def torchtune_runtime(draw: Draw) -> Runtime:
    name = draw(st.sampled_from(list(TORCHTUNE_RUNTIMES)))
    model, hub_model = TORCHTUNE_RUNTIMES[name]
    kind = draw(st.sampled_from(["ClusterTrainingRuntime", "TrainingRuntime"]))
    command = [
        "tune",
        "run",
        "--rdzv_endpoint=localhost:29500",
        "full_finetune_distributed",
        "--config",
        f"{model}_full",
        "dataset=torchtune.datasets.instruct_dataset",
        "dataset.source=parquet",
        "dataset.data_dir=/workspace/dataset/data",
        "output_dir=/workspace/output",
    ]
    if model.startswith("qwen"):
        command += [
            "tokenizer.path=/workspace/model/vocab.json",
            "tokenizer.merges_file=/workspace/model/merges.txt",
        ]
    else:
        command += ["tokenizer.path=/workspace/model/original/tokenizer.model"]
    command += ["checkpointer.checkpoint_dir=/workspace/model"]
    mount = [{"name": "initializer", "mountPath": "/workspace"}]
    dataset = Job(
        "dataset-initializer",
        "dataset-initializer",
        {
            "containers": [
                {
                    "name": "dataset-initializer",
                    "image": "acme/dataset-initializer",
                    "env": [{"name": "STORAGE_URI", "value": "hf://tatsu-lab/alpaca"}],
                    "volumeMounts": mount,
                }
            ]
        },
    )
    model_job = Job(
        "model-initializer",
        "model-initializer",
        {
            "containers": [
                {
                    "name": "model-initializer",
                    "image": "acme/model-initializer",
                    "env": [{"name": "STORAGE_URI", "value": f"hf://{hub_model}"}],
                    "volumeMounts": mount,
                }
            ]
        },
    )
    gpus = draw(st.sampled_from([2, 1, 4]))
    node = Job(
        "node",
        "trainer",
        {
            "containers": [
                {
                    "name": "node",
                    "image": "acme/torchtune-trainer",
                    "command": command,
                    "resources": {"limits": {"nvidia.com/gpu": gpus}},
                    "volumeMounts": mount,
                }
            ]
        },
        depends_on=[
            {"name": "dataset-initializer", "status": "Complete"},
            {"name": "model-initializer", "status": "Complete"},
        ],
    )
    spec: Json = {
        "mlPolicy": {"numNodes": 1, "torch": {}},
        "template": {
            "spec": {
                "volumeClaimPolicies": [
                    {
                        "templates": [
                            {
                                "metadata": {"name": "initializer"},
                                "spec": {
                                    "accessModes": ["ReadWriteOnce"],
                                    "resources": {"requests": {"storage": "20Gi"}},
                                },
                            }
                        ]
                    }
                ]
            }
        },
    }
    runtime = Runtime(
        kind=kind,
        name=name,
        policy="torchtune",
        jobs=[dataset, model_job, node],
        spec=spec,
        features=[f"torchtune {kind} {name} (gpu limit {gpus})"],
        torchtune_model=model,
    )
    if rarely(draw, 15):
        pod_group_policy(draw, runtime)
    return runtime


# --------------------------------------------------------------------------- the TrainJob

RESERVED_ENV = {
    "torch": ["PET_NNODES", "PET_MASTER_ADDR"],
    "torchtune": ["PET_NPROC_PER_NODE"],
    "mpi": ["OMPI_MCA_orte_default_hostfile", "OMPI_MCA_plm_rsh_args"],
    "xgboost": ["DMLC_NUM_WORKER", "DMLC_TRACKER_PORT"],
    "jax": ["JAX_NUM_PROCESSES", "JAX_COORDINATOR_ADDRESS"],  # not reserved: the user value wins
    "flux": [
        "FLUX_VIEW_IMAGE",
        "FLUX_NETWORK_DEVICE",
        "FLUX_QUEUE_POLICY",
    ],  # settings, not reserved
}

TORCHTUNE_ARGS = [
    "dtype=bf16",
    "epochs=1",
    "batch_size=2",
    "model.lora_attn_modules=[q_proj,v_proj,output_proj]",
    "model.lora_rank=8",
    "model.quantize_base=True",
    "model.quantize_base=False",
    "model.quantize_base= true ",
    "model.use_dora=True",
    "model.use_dora=false",
    "dataset.data_dir=/workspace/dataset/alpaca",
]
TORCHTUNE_IMMUTABLE = [
    "output_dir=/tmp/out",
    "tokenizer.path=/tmp/tok",
    "checkpointer.checkpoint_dir=/ckpt",
]


@st.composite
def trainer_spec(draw: Draw, runtime: Runtime) -> Json | None:
    policy = runtime.policy
    if policy != "flux" and rarely(draw, 12):
        return None
    trainer: Json = {}
    if policy == "torchtune":
        if draw(st.integers(0, 9)) > 1:
            trainer["command"] = ["tune", "run"]
            args = draw(st.lists(st.sampled_from(TORCHTUNE_ARGS), unique=True, max_size=4))
            if rarely(draw, 8):
                args.append(draw(st.sampled_from(TORCHTUNE_IMMUTABLE)))
            if args or draw(st.booleans()):
                trainer["args"] = args
        elif draw(st.booleans()):
            trainer["command"] = draw(st.sampled_from([[], ["torchrun", "x.py"]]))
    else:
        if draw(st.booleans()):
            trainer["command"] = draw(
                st.sampled_from(
                    [
                        ["python", "train.py"],
                        ["torchrun", "--nnodes", "2", "t.py"],
                        [],
                        ["bash", "-c", "echo  hi "],
                    ]
                    + ([["tune", "run"]] if policy == "torch" else [])
                )
            )
        if rarely(draw, 30):
            trainer["args"] = draw(st.sampled_from([["--lr", "0.1"], [], [" spaced "]]))
    if rarely(draw, 25):
        trainer["image"] = "acme/custom:9"
    names = list(ENV_NAMES)
    if rarely(draw, 10):
        names += RESERVED_ENV.get(policy, [])
    if draw(st.booleans()):
        trainer["env"] = draw(env_list(names))
    if policy == "flux":
        if not rarely(draw, 3):  # without numNodes upstream's Flux plugin crashes
            trainer["numNodes"] = draw(st.integers(1, 4))
    elif policy == "torchtune":
        if draw(st.booleans()):
            trainer["numNodes"] = 1 if draw(st.integers(0, 9)) > 0 else 2
    elif draw(st.booleans()):
        trainer["numNodes"] = draw(st.integers(0, 4) if rarely(draw, 10) else st.integers(1, 4))
    if draw(st.booleans()):
        trainer["numProcPerNode"] = draw(
            st.integers(1, 4) if not rarely(draw, 5) else st.integers(0, 0)
        )
    if draw(st.booleans()):
        if policy == "torchtune":
            res: Json = {}
            for part in draw(
                st.lists(st.sampled_from(["limits", "requests"]), unique=True, min_size=1)
            ):
                res[part] = {"nvidia.com/gpu": draw(st.sampled_from([1, 2]))}
                if draw(st.booleans()):
                    res[part]["cpu"] = draw(cpu())
            trainer["resourcesPerNode"] = res
        else:
            trainer["resourcesPerNode"] = draw(resources())
    return trainer


def initializer_spec(draw: Draw, runtime: Runtime) -> Json | None:
    out: Json = {}
    for key, job_name in (("dataset", "dataset-initializer"), ("model", "model-initializer")):
        present = runtime.job(job_name) is not None
        if not (draw(st.booleans()) if present else rarely(draw, 3)):
            continue
        item: Json = {}
        if draw(st.integers(0, 9)) > 1:
            item["storageUri"] = draw(
                st.sampled_from(
                    ["hf://tatsu-lab/alpaca", "s3://bucket/path/data", "hf://org/m?rev=1", ""]
                )
            )
        if draw(st.booleans()):
            item["env"] = draw(
                env_list(["ACCESS_TOKEN", "ENDPOINT", "STORAGE_URI", "IGNORE_PATTERNS"], 2)
            )
        if draw(st.booleans()):
            item["secretRef"] = {"name": "hf-creds"} if draw(st.integers(0, 9)) > 0 else {}
        out[key] = item
    return out or None


MANAGERS = [
    "example.com/policy",
    "kueue.x-k8s.io/manager",
    "acme.io/gpu/scheduler",
    "team.example.org/a",
]


@st.composite
def runtime_patches(draw: Draw, runtime: Runtime) -> list[Json]:
    managers = draw(st.lists(st.sampled_from(MANAGERS), unique=True, max_size=3))
    if managers and rarely(draw, 3):
        managers[0] = "not-a-domain"  # the webhook wants a domain-prefixed path
    return [draw(runtime_patch(runtime, m)) for m in managers]


@st.composite
def runtime_patch(draw: Draw, runtime: Runtime, manager: str) -> Json:
    template: Json = {}
    if draw(st.booleans()):
        metadata: Json = {}
        if draw(st.booleans()):
            metadata["labels"] = draw(labels())
        annotations: Json = {}
        if draw(st.booleans()):
            annotations = dict(draw(labels()))
        if "volcano" in runtime.spec.get("podGroupPolicy", {}) and draw(st.booleans()):
            annotations[QUEUE_KEY] = draw(st.sampled_from(["q-patched", "research"]))
        if annotations:
            metadata["annotations"] = annotations
        template["metadata"] = metadata
    jobs = [draw(job_patch(runtime, job)) for job in runtime.jobs if draw(st.booleans())]
    if rarely(draw, 3):
        jobs.append({"name": "ghost-job", "template": {"metadata": {"labels": {"team": "x"}}}})
    if jobs:
        template["spec"] = {"replicatedJobs": jobs}
    return {"manager": manager, "trainingRuntimeSpec": {"template": template}}


RESERVED_CONTAINERS = {"node", "dataset-initializer", "model-initializer"}


@st.composite
def job_patch(draw: Draw, runtime: Runtime, job: Job) -> Json:
    patch: Json = {"name": job.name}
    template: Json = {}
    if rarely(draw, 25):
        template["metadata"] = {"labels": draw(labels())}
    pod: Json = {}
    if rarely(draw, 25):
        pod["metadata"] = {draw(st.sampled_from(["labels", "annotations"])): draw(labels())}
    spec: Json = {}
    if draw(st.booleans()):
        spec["nodeSelector"] = {
            draw(st.sampled_from(["pool", "node.kubernetes.io/instance-type"])): "gpu-a100"
        }
    if draw(st.booleans()):
        spec["tolerations"] = draw(
            st.lists(
                st.sampled_from(
                    [
                        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
                        {
                            "key": "dedicated",
                            "operator": "Equal",
                            "value": "ml",
                            "effect": "NoExecute",
                        },
                        {"operator": "Exists"},
                    ]
                ),
                unique_by=lambda t: str(t),
                min_size=1,
                max_size=2,
            )
        )
    if rarely(draw, 25):
        spec["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": "zone", "operator": "In", "values": ["a", "b"]}
                            ]
                        }
                    ]
                }
            }
        }
    if rarely(draw, 20):
        spec["serviceAccountName"] = "trainer-sa"
    if rarely(draw, 10):
        spec["imagePullSecrets"] = [{"name": "regcred"}]
    if rarely(draw, 10):
        spec["schedulingGates"] = [{"name": "example.com/gate"}]
    if rarely(draw, 10):
        spec["terminationGracePeriodSeconds"] = draw(st.sampled_from([0, 30]))
    if rarely(draw, 10):
        spec["securityContext"] = {"runAsNonRoot": draw(st.booleans()), "fsGroup": 1000}
    volume_names: list[str] = []
    if rarely(draw, 30):
        volumes = draw(
            st.lists(
                st.sampled_from(
                    [
                        {
                            "name": "extra-data",
                            "persistentVolumeClaim": {"claimName": "datasets", "readOnly": True},
                        },
                        {"name": "cache", "emptyDir": {"medium": "Memory"}},
                        {"name": "cfg", "configMap": {"name": "train-config"}},
                        # same names as runtime volumes, maybe another source type (SMP merges both)
                        {"name": "initializer", "emptyDir": {}},
                        {"name": "logs", "emptyDir": {"medium": "Memory", "sizeLimit": "512Mi"}},
                        {"name": "scratch", "hostPath": {"path": "/mnt/fast"}},
                    ]
                ),
                unique_by=lambda v: str(v["name"]),
                min_size=1,
                max_size=2,
            )
        )
        spec["volumes"] = volumes
        volume_names.extend(v["name"] for v in volumes)
    containers = []
    for name in draw(st.permutations(job.container_names)):
        if not draw(st.booleans()):
            continue
        c: Json = {"name": name}
        if volume_names and draw(st.booleans()):
            mount_path = draw(
                st.sampled_from(["/mnt/" + volume_names[0], "/workspace", "/var/log/train"])
            )
            c["volumeMounts"] = [{"name": volume_names[0], "mountPath": mount_path}]
        if (name not in RESERVED_CONTAINERS or rarely(draw, 5)) and draw(st.booleans()):
            c["env"] = draw(env_list(["LEVEL", "EXTRA"], 2))
        if rarely(draw, 10):
            c["securityContext"] = {"allowPrivilegeEscalation": False}
        if len(c) > 1:
            containers.append(c)
    if rarely(draw, 3):
        containers.append({"name": "ghost", "env": [{"name": "A", "value": "1"}]})
    if containers:
        spec["containers"] = containers
    init_names = job.init_container_names
    if init_names and draw(st.booleans()):
        spec["initContainers"] = [{"name": init_names[0], "env": [{"name": "PREP", "value": "1"}]}]
    elif rarely(draw, 3):
        # An init-container patch naming a regular container passes the webhook and adds
        # an init container that has only a name and env.
        spec["initContainers"] = [
            {"name": job.container_names[0], "env": [{"name": "PREP", "value": "1"}]}
        ]
    if spec:
        pod["spec"] = spec
    if pod:
        template["spec"] = {"template": pod}
    if template:
        patch["template"] = template
    return patch


@st.composite
def trainjobs(
    draw: Draw,
    runtime: Runtime,
    namespace: str | None,
    job_name: str,
    version: str = DEFAULT_TRAINER_VERSION,
) -> tuple[Json, list[str]]:
    """One TrainJob for ``runtime`` and the features it exercises."""
    metadata: Json = {"name": job_name}
    if namespace is not None:
        metadata["namespace"] = namespace
    if rarely(draw, 10):
        metadata["labels"] = {"kueue.x-k8s.io/queue-name": "user-queue"}
    runtime_ref: Json = {"name": runtime.name}
    if runtime.kind == "TrainingRuntime" or draw(st.booleans()):
        runtime_ref["kind"] = runtime.kind
    if rarely(draw, 15):
        runtime_ref["apiGroup"] = "trainer.kubeflow.org"
    features: list[str] = []
    if rarely(draw, 3):
        # A reference upstream cannot resolve: the other kind, or one it does not support.
        other = "ClusterTrainingRuntime" if runtime.kind == "TrainingRuntime" else "TrainingRuntime"
        runtime_ref["kind"] = draw(st.sampled_from([other, "Runtime"]))
        features.append(f"runtimeRef kind {runtime_ref['kind']}")
    spec: Json = {"runtimeRef": runtime_ref}
    initializer = initializer_spec(draw, runtime)
    if initializer is not None:
        spec["initializer"] = initializer
        features.append("initializer " + "+".join(initializer))
    trainer = draw(trainer_spec(runtime))
    if trainer is not None:
        spec["trainer"] = trainer
        features.append("trainer " + (",".join(trainer) or "{}"))
    patches = draw(runtime_patches(runtime))
    if patches and RUNTIME_PATCHES.on(version):
        spec["runtimePatches"] = patches
        features.append(f"{len(patches)} runtimePatches")
    elif patches and POD_TEMPLATE_OVERRIDES.on(version):
        features += v21_overrides(draw, spec, patches)
    elif patches:
        features += v20_overrides(draw, spec, patches)
    if rarely(draw, 15):
        spec["suspend"] = draw(st.booleans())
    if rarely(draw, 5):
        spec["managedBy"] = draw(
            st.sampled_from(
                ["trainer.kubeflow.org/trainjob-controller", "kueue.x-k8s.io/multikueue"]
            )
        )
        features.append("managedBy " + spec["managedBy"])
    if rarely(draw, 5) and RUNTIME_PATCHES.on(version):
        spec["activeDeadlineSeconds"] = 3600
    return {"apiVersion": API, "kind": "TrainJob", "metadata": metadata, "spec": spec}, features


def _override_pod_spec(pod_spec: Json, fields: tuple[str, ...]) -> Json:
    """A patch's pod spec kept to an override's fields (containers to theirs)."""
    kept = {k: v for k, v in pod_spec.items() if k in fields}
    for key in ("containers", "initContainers"):
        if key in kept:
            kept[key] = [
                {k: v for k, v in c.items() if k in OVERRIDE_CONTAINER_FIELDS} for c in kept[key]
            ]
    return kept


def v20_overrides(draw: Draw, spec: Json, patches: list[Json]) -> list[str]:
    """v2.0.0's TrainJob overrides drawn from runtimePatches, as :func:`v21_overrides` but
    as podSpecOverrides: the pod spec's fields beside ``targetJobs`` (no metadata); the
    same job patched twice becomes a duplicate target."""
    features = v21_overrides(draw, spec, patches)
    overrides = spec.pop("podTemplateOverrides", None)
    if overrides is None:
        return features
    spec["podSpecOverrides"] = [
        {
            "targetJobs": override["targetJobs"],
            **_override_pod_spec(override.get("spec") or {}, SPEC_OVERRIDE_POD_FIELDS),
        }
        for override in overrides
    ]
    return [
        f"{len(overrides)} podSpecOverrides" if f.endswith(" podTemplateOverrides") else f
        for f in features
    ]


def v21_overrides(draw: Draw, spec: Json, patches: list[Json]) -> list[str]:
    """v2.1.0's TrainJob overrides drawn from runtimePatches: each patched job's pod
    template becomes a podTemplateOverride (kept to the override's fields), the first
    patch's JobSet metadata becomes spec.labels/annotations; sometimes a string
    numProcPerNode."""
    overrides: list[Json] = []
    for patch in patches:
        template = (patch.get("trainingRuntimeSpec") or {}).get("template") or {}
        for job_patch in (template.get("spec") or {}).get("replicatedJobs") or ():
            pod = ((job_patch.get("template") or {}).get("spec") or {}).get("template") or {}
            override: Json = {"targetJobs": [{"name": job_patch["name"]}]}
            if pod.get("metadata"):
                override["metadata"] = pod["metadata"]
            pod_spec = _override_pod_spec(pod.get("spec") or {}, OVERRIDE_POD_FIELDS)
            if pod_spec:
                override["spec"] = pod_spec
            overrides.append(override)
    features: list[str] = []
    if overrides:
        spec["podTemplateOverrides"] = overrides
        features.append(f"{len(overrides)} podTemplateOverrides")
    metadata = ((patches[0].get("trainingRuntimeSpec") or {}).get("template") or {}).get(
        "metadata"
    ) or {}
    for key in ("labels", "annotations"):
        if metadata.get(key):
            spec[key] = metadata[key]
            features.append(f"spec.{key}")
    trainer = spec.get("trainer")
    if trainer is not None and rarely(draw, 3):
        trainer["numProcPerNode"] = draw(st.sampled_from(NUM_PROC_V2_1))
        features.append(f"numProcPerNode {trainer['numProcPerNode']}")
    return features


@st.composite
def cases(draw: Draw, version: str = DEFAULT_TRAINER_VERSION) -> FuzzCase:
    """One example on Trainer ``version``: runtime, TrainJob(s) and the PriorityClasses the
    runtime names (v2.1.0: its own TrainJob override fields and policies)."""
    runtime = draw(runtimes(version))
    namespace = draw(st.sampled_from([None, None, "default", "team-a"]))
    runtime_namespace = namespace
    features = list(runtime.features)
    if runtime.kind == "TrainingRuntime" and rarely(draw, 3):
        runtime_namespace = "elsewhere"  # not the TrainJob's namespace: not found
        features.append("runtime in another namespace")
    names = ["job", "llm-ft", "a", "train-7"]
    job_name = draw(st.sampled_from(names))
    if rarely(draw, 3):
        # Not a DNS-1035 label: v2.0.0's TrainJob webhook refuses it, later CRDs too.
        job_name = draw(st.sampled_from(["llm.ft", "7b-tune"]))
        features.append(f"TrainJob name {job_name}")
    first, job_features = draw(trainjobs(runtime, namespace, job_name, version))
    features += job_features
    documents = [first]
    if rarely(draw, 10):
        # A second TrainJob on the same runtime: rendering one must not change the other.
        second, _ = draw(
            trainjobs(
                runtime,
                namespace,
                draw(st.sampled_from([n for n in names if n != job_name])),
                version,
            )
        )
        documents.append(second)
        features.append("second TrainJob")

    files: list[tuple[str, str]] = []
    if runtime.priority_classes:
        classes = [
            {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": n},
                "value": 1000 if n.endswith("low") else 100000,
            }
            for n in runtime.priority_classes
        ]
        files.append(("priorityclasses.yaml", dump(classes)))
    files.append(("runtime.yaml", dump([runtime.render(runtime_namespace)])))
    files.append(("trainjob.yaml", dump(documents)))
    owner_uid = str(draw(st.uuids(version=4)))
    return FuzzCase(
        files=files,
        owner_uid=owner_uid,
        features=features,
        env_order_random=runtime.policy == "xgboost",
    )


# --------------------------------------------------------------------------- the pod depth
# tests/live/fuzz_pods.py runs the cases down to the Pods (the JobSet webhooks and
# controller, the Job controller, the API server's Job and Pod validation). These draw
# more of what matters there, on top of :func:`cases`: several replicated jobs with
# replicas > 1, dependsOn, JobSet success/failure/startup policies and network, the
# exclusive-placement annotation, init containers and sidecars, volumes and mounts, env
# valueFrom, a ServiceAccount, a PriorityClass among the inputs, TrainJob names near the
# 63-character limits of the names JobSet derives from them.

EXCLUSIVE = "alpha.jobset.sigs.k8s.io/exclusive-topology"
NODE_SELECTOR_STRATEGY = "alpha.jobset.sigs.k8s.io/node-selector-strategy"


def _replicated_jobs(runtime: Json) -> list[Json]:
    spec = ((runtime.get("spec") or {}).get("template") or {}).get("spec") or {}
    jobs = spec.get("replicatedJobs")
    return jobs if isinstance(jobs, list) else []


def _pod_spec(job: Json) -> Json:
    template = job.setdefault("template", {}).setdefault("spec", {}).setdefault("template", {})
    spec: Json = template.setdefault("spec", {})
    return spec


@st.composite
def long_name(draw: Draw) -> str:
    """A DNS-1035 label of 40 to 63 characters: around the lengths where JobSet's names
    (``<jobset>-<replicatedJob>-<index>-<podIndex>-<suffix>``) pass 63."""
    length = draw(st.integers(40, 63))
    stem = "train-" + "abcdefghij" * 7
    name = stem[:length].rstrip("-")
    return name if name[-1].isalnum() else name[:-1] + "z"


@st.composite
def pod_depth(draw: Draw, runtime: Json) -> list[str]:
    """Add pod-depth features to ``runtime`` (a runtime document) in place; their names."""
    jobs = _replicated_jobs(runtime)
    if not jobs:
        return []
    features: list[str] = []
    template = runtime["spec"].setdefault("template", {})
    jobset_spec: Json = template.setdefault("spec", {})
    names = [str(j.get("name")) for j in jobs]
    for job in jobs:
        if rarely(draw, 30):
            job["replicas"] = draw(st.integers(2, 3))
            features.append(f"{job['name']} replicas {job['replicas']}")
    if len(jobs) > 1 and rarely(draw, 25) and "startupPolicy" not in jobset_spec:
        later = draw(st.integers(1, len(jobs) - 1))
        earlier = draw(st.integers(0, later - 1))
        jobs[later]["dependsOn"] = [
            {"name": names[earlier], "status": draw(st.sampled_from(["Complete", "Ready"]))}
        ]
        features.append(f"{names[later]} dependsOn {names[earlier]}")
    if rarely(draw, 25):
        policy: Json = {"operator": draw(st.sampled_from(["All", "Any"]))}
        if draw(st.booleans()):
            policy["targetReplicatedJobs"] = draw(
                st.lists(st.sampled_from(names), min_size=1, max_size=2, unique=True)
            )
        jobset_spec["successPolicy"] = policy
        features.append("successPolicy")
    if rarely(draw, 25):
        failure: Json = {"maxRestarts": draw(st.integers(0, 3))}
        if draw(st.booleans()):
            failure["restartStrategy"] = draw(st.sampled_from(["Recreate", "BlockingRecreate"]))
        if draw(st.booleans()):
            rule: Json = {
                # "rule-a": not a rule name JobSet's webhook takes
                "name": "rule-a" if rarely(draw, 10) else "restart_all",
                "action": draw(
                    st.sampled_from(
                        ["FailJobSet", "RestartJobSet", "RestartJobSetAndIgnoreMaxRestarts"]
                    )
                ),
            }
            if draw(st.booleans()):
                rule["onJobFailureReasons"] = ["PodFailurePolicy"]
            if draw(st.booleans()):
                rule["targetReplicatedJobs"] = [draw(st.sampled_from(names))]
            failure["rules"] = [rule]
        jobset_spec["failurePolicy"] = failure
        features.append("failurePolicy")
    if rarely(draw, 15) and not any(j.get("dependsOn") for j in jobs):
        jobset_spec["startupPolicy"] = {
            "startupPolicyOrder": draw(st.sampled_from(["InOrder", "AnyOrder"]))
        }
        features.append("startupPolicy")
    if rarely(draw, 35):
        network: Json = dict(jobset_spec.get("network") or {})
        for key, values in (
            ("subdomain", st.sampled_from(["train-net", "a" * 60, "my-svc"])),
            ("enableDNSHostnames", st.booleans()),
            ("publishNotReadyAddresses", st.booleans()),
        ):
            if draw(st.booleans()):
                network[key] = draw(values)
        jobset_spec["network"] = network
        features.append(f"network {sorted(network)}")
    if rarely(draw, 20):
        annotations = template.setdefault("metadata", {}).setdefault("annotations", {})
        annotations[EXCLUSIVE] = draw(
            st.sampled_from(["kubernetes.io/hostname", "cloud.google.com/gke-nodepool"])
        )
        if rarely(draw, 30):
            annotations[NODE_SELECTOR_STRATEGY] = "true"
        features.append("exclusive placement")
    for job in jobs:
        pod = _pod_spec(job)
        containers = pod.get("containers")
        if not isinstance(containers, list) or not containers:
            continue
        if rarely(draw, 15):
            pod.setdefault("initContainers", []).append(draw(init_container()))
            features.append(f"{job['name']} initContainer")
        if rarely(draw, 15):
            side = draw(sidecar())
            if draw(st.booleans()):
                side["restartPolicy"] = "Always"  # a native sidecar
                pod.setdefault("initContainers", []).append(side)
            else:
                containers.append(side)
            features.append(f"{job['name']} sidecar")
        if rarely(draw, 20):
            volume = draw(st.sampled_from(["scratch", "cfg-vol"]))
            source: Json = (
                {"emptyDir": {}} if volume == "scratch" else {"configMap": {"name": "settings"}}
            )
            if volume not in {v.get("name") for v in pod.get("volumes") or []}:
                pod.setdefault("volumes", []).append({"name": volume, **source})
            mounts = containers[0].setdefault("volumeMounts", [])
            if volume not in {m.get("name") for m in mounts}:
                mounts.append({"name": volume, "mountPath": f"/mnt/{volume}"})
            features.append(f"{job['name']} volume {volume}")
        if rarely(draw, 20):
            env = containers[0].setdefault("env", [])
            name = draw(st.sampled_from(["MY_POD", "MY_NODE", "MY_CPU"]))
            if name not in {e.get("name") for e in env}:
                env.append(draw(env_var(name)))
            features.append(f"{job['name']} env valueFrom")
        if rarely(draw, 15):
            pod["serviceAccountName"] = draw(st.sampled_from(["trainer-sa", "default"]))
            features.append("serviceAccountName")
    return features


@st.composite
def pod_cases(draw: Draw, version: str = DEFAULT_TRAINER_VERSION) -> FuzzCase:
    """:func:`cases` with the pod-depth features of :func:`pod_depth`, a PriorityClass
    the runtime names among the inputs, sometimes a TrainJob name near 63 characters,
    then the :func:`held_out` probes and sometimes a name of exactly 48 to 64."""
    base: FuzzCase = draw(cases(version))
    files = dict(base.files)
    runtime = yaml.safe_load(files["runtime.yaml"])
    trainjobs_ = [d for d in yaml.safe_load_all(files["trainjob.yaml"]) if d]
    features = list(base.features) + draw(pod_depth(runtime))
    classes = list(yaml.safe_load_all(files.get("priorityclasses.yaml", ""))) or []
    jobs = _replicated_jobs(runtime)
    if jobs and rarely(draw, 20):
        pod = _pod_spec(draw(st.sampled_from(jobs)))
        if "priorityClassName" not in pod:
            pod["priorityClassName"] = "fuzz-priority"
            classes = [c for c in classes if c] + [
                {
                    "apiVersion": "scheduling.k8s.io/v1",
                    "kind": "PriorityClass",
                    "metadata": {"name": "fuzz-priority"},
                    "value": draw(st.sampled_from([10, 5000])),
                }
            ]
            features.append("priorityClassName fuzz-priority")
    if rarely(draw, 20):
        name = draw(long_name())
        trainjobs_[0]["metadata"]["name"] = name
        features.append(f"TrainJob name of {len(name)} characters")
    # drawn last, so that what came before is drawn as it was
    features += draw(held_out(runtime, trainjobs_[0]))
    if rarely(draw, 10):
        length = draw(st.sampled_from(EXACT_NAME_LENGTHS))
        name = ("train-" + "abcdefghij" * 7)[:length]
        trainjobs_[0]["metadata"]["name"] = name
        features.append(f"TrainJob name of exactly {length} characters")
    out: list[tuple[str, str]] = []
    if any(classes):
        out.append(("priorityclasses.yaml", dump([c for c in classes if c])))
    out.append(("runtime.yaml", dump([runtime])))
    out.append(("trainjob.yaml", dump(trainjobs_)))
    return FuzzCase(
        files=out,
        owner_uid=base.owner_uid,
        features=features,
        env_order_random=base.env_order_random,
    )


# --------------------------------------------------------------------------- held-out probes
# What issue 27's table lists and what a reviewer of Job/Pod validation would try next:
# each entry one concrete change, valid or not (both verdicts matter, and the words).
# (family, where, key, value): ``container`` keys go on one container of a replicated
# job's pod (``env``, ``volumeMounts`` and ``ports`` are appended to), ``pod`` keys on the
# pod spec (``volumes`` and ``tolerations`` appended, ``nodeSelector`` merged).

_GPU = "nvidia.com/gpu"
HELD_OUT: list[tuple[str, str, str, Any]] = [
    # resources: requests above limits, extended resources, hugepages, names
    ("resources", "container", "resources", {"requests": {"cpu": "4"}, "limits": {"cpu": 2}}),
    ("resources", "container", "resources", {"requests": {_GPU: 1}, "limits": {_GPU: 2}}),
    ("resources", "container", "resources", {"requests": {_GPU: 1}}),
    ("resources", "container", "resources", {"limits": {_GPU: 2}}),
    ("resources", "container", "resources", {"requests": {_GPU: 2}, "limits": {_GPU: "2"}}),
    ("resources", "container", "resources", {"requests": {"example.com/widget": "500m"}}),
    (
        "resources",
        "container",
        "resources",
        {"requests": {"example.com/widget": 3}, "limits": {"example.com/widget": 3}},
    ),
    ("resources", "container", "resources", {"limits": {"hugepages-2Mi": "1Gi"}}),
    (
        "resources",
        "container",
        "resources",
        {"limits": {"hugepages-2Mi": "1Gi", "memory": "2Gi"}, "requests": {"memory": "1Gi"}},
    ),
    (
        "resources",
        "container",
        "resources",
        {"requests": {"ephemeral-storage": "10Gi"}, "limits": {"ephemeral-storage": "5Gi"}},
    ),
    ("resources", "container", "resources", {"requests": {"memory": "-1Gi"}}),
    ("resources", "container", "resources", {"requests": {"foo": "1"}}),
    ("resources", "container", "resources", {"limits": {"cpu": "0"}, "requests": {"cpu": "0"}}),
    (
        "resources",
        "container",
        "resources",
        {"limits": {"cpu": "1", _GPU: 1}, "requests": {"cpu": "1500m", _GPU: 1}},
    ),
    # volume mounts against volumes
    ("mounts", "container", "volumeMounts", {"name": "data", "mountPath": "/data"}),
    ("mounts", "container", "volumeMounts", {"name": "Data", "mountPath": "/data"}),
    ("mounts", "container", "volumeMounts", {"name": "held", "mountPath": "/h", "subPath": "../x"}),
    ("mounts", "container", "volumeMounts", {"name": "held", "mountPath": "/h", "subPath": "s"}),
    ("mounts", "container", "volumeMounts", {"name": "held", "mountPath": "relative/dir"}),
    ("mounts", "container", "volumeMounts", {"name": "held", "mountPath": ""}),
    (
        "mounts",
        "container",
        "volumeMounts",
        {"name": "held", "mountPath": "/h", "mountPropagation": "Bidirectional"},
    ),
    ("mounts", "container", "volumeMounts", {"name": "held", "mountPath": "/h", "readOnly": True}),
    ("volumes", "pod", "volumes", {"name": "held", "emptyDir": {}, "hostPath": {"path": "/x"}}),
    (
        "volumes",
        "pod",
        "volumes",
        {"name": "held", "secret": {"secretName": "s", "defaultMode": 512}},
    ),
    (
        "volumes",
        "pod",
        "volumes",
        {"name": "held", "configMap": {"name": "c", "items": [{"key": "k", "path": "../k"}]}},
    ),
    ("volumes", "pod", "volumes", {"name": "held", "persistentVolumeClaim": {"claimName": ""}}),
    ("volumes", "pod", "volumes", {"name": "held", "hostPath": {"path": "/x", "type": "Dir"}}),
    (
        "volumes",
        "pod",
        "volumes",
        {
            "name": "held",
            "projected": {
                "sources": [{"serviceAccountToken": {"path": "t", "expirationSeconds": 100}}]
            },
        },
    ),
    (
        "volumes",
        "pod",
        "volumes",
        {
            "name": "held",
            "downwardAPI": {"items": [{"path": "labels", "fieldRef": {"fieldPath": "spec.x"}}]},
        },
    ),
    ("volumes", "pod", "volumes", {"name": "held", "emptyDir": {"sizeLimit": "-1Gi"}}),
    ("volumes", "pod", "volumes", {"name": "h" * 64, "emptyDir": {}}),
    ("volumes", "pod", "volumes", {"name": "held", "emptyDir": {"medium": "Disk"}}),
    # env names and sources
    ("env", "container", "env", {"name": "1BAD=NAME", "value": "x"}),
    ("env", "container", "env", {"name": "my.var-1 x", "value": "x"}),
    ("env", "container", "env", {"name": "", "value": "x"}),
    ("env", "container", "env", {"name": "CAF\u00c9", "value": "x"}),
    ("env", "container", "env", {"name": "REF", "value": "$(HOME)/x"}),
    (
        "env",
        "container",
        "env",
        {
            "name": "TWO",
            "valueFrom": {
                "configMapKeyRef": {"name": "c", "key": "k"},
                "secretKeyRef": {"name": "s", "key": "k"},
            },
        },
    ),
    (
        "env",
        "container",
        "env",
        {"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
    ),
    (
        "env",
        "container",
        "env",
        {"name": "BAD", "valueFrom": {"fieldRef": {"fieldPath": "spec.foo"}}},
    ),
    (
        "env",
        "container",
        "env",
        {"name": "ANN", "valueFrom": {"fieldRef": {"fieldPath": "metadata.annotations['a/b']"}}},
    ),
    (
        "env",
        "container",
        "env",
        {"name": "K", "valueFrom": {"secretKeyRef": {"name": "s", "key": "a b"}}},
    ),
    ("envFrom", "container", "envFrom", [{"prefix": "1_", "configMapRef": {"name": "c"}}]),
    (
        "envFrom",
        "container",
        "envFrom",
        [{"configMapRef": {"name": "c"}, "secretRef": {"name": "s"}}],
    ),
    # restart policies
    ("restartPolicy", "pod", "restartPolicy", "Always"),
    ("restartPolicy", "pod", "restartPolicy", "Never"),
    ("restartPolicy", "container", "restartPolicy", "Always"),
    ("restartPolicy", "container", "restartPolicy", "Never"),
    # tolerations
    ("tolerations", "pod", "tolerations", {"key": "gpu", "operator": "Exists", "value": "x"}),
    ("tolerations", "pod", "tolerations", {"operator": "Equal", "value": "x"}),
    ("tolerations", "pod", "tolerations", {"operator": "Exists"}),
    (
        "tolerations",
        "pod",
        "tolerations",
        {"key": "spot", "effect": "NoSchedule", "tolerationSeconds": 60},
    ),
    (
        "tolerations",
        "pod",
        "tolerations",
        {"key": "spot", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60},
    ),
    ("tolerations", "pod", "tolerations", {"key": "bad key", "operator": "Exists"}),
    ("tolerations", "pod", "tolerations", {"key": "a", "operator": "Gt", "value": "1"}),
    ("tolerations", "pod", "tolerations", {"key": "a", "value": "b", "effect": "Sometimes"}),
    # nodeSelector keys and values
    ("nodeSelector", "pod", "nodeSelector", {"gpu": "nvidia tesla"}),
    ("nodeSelector", "pod", "nodeSelector", {"pool": "a" * 63}),
    ("nodeSelector", "pod", "nodeSelector", {"pool": "a" * 64}),
    ("nodeSelector", "pod", "nodeSelector", {"bad key!": "x"}),
    ("nodeSelector", "pod", "nodeSelector", {"example.com/pool": ""}),
    ("nodeSelector", "pod", "nodeSelector", {"pool": "-a"}),
    # probes
    ("probes", "container", "livenessProbe", {"exec": {"command": ["true"]}, "periodSeconds": 5}),
    ("probes", "container", "livenessProbe", {"periodSeconds": 5}),
    ("probes", "container", "livenessProbe", {"tcpSocket": {"port": 8080}, "successThreshold": 2}),
    (
        "probes",
        "container",
        "readinessProbe",
        {"tcpSocket": {"port": 8080}, "exec": {"command": ["true"]}},
    ),
    ("probes", "container", "readinessProbe", {"grpc": {"port": 9090}}),
    ("probes", "container", "readinessProbe", {"httpGet": {"port": "toolongportname1"}}),
    ("probes", "container", "readinessProbe", {"httpGet": {"port": 0}}),
    (
        "probes",
        "container",
        "readinessProbe",
        {"tcpSocket": {"port": 8080}, "terminationGracePeriodSeconds": 10},
    ),
    ("probes", "container", "startupProbe", {"tcpSocket": {"port": 8080}, "successThreshold": 2}),
    ("probes", "container", "startupProbe", {"httpGet": {"port": 8080}, "initialDelaySeconds": -1}),
    ("probes", "container", "livenessProbe", {"httpGet": {"port": 8080, "scheme": "FTP"}}),
    # security contexts
    (
        "securityContext",
        "container",
        "securityContext",
        {"privileged": True, "allowPrivilegeEscalation": False},
    ),
    (
        "securityContext",
        "container",
        "securityContext",
        {"capabilities": {"add": ["SYS_ADMIN"]}, "allowPrivilegeEscalation": False},
    ),
    ("securityContext", "container", "securityContext", {"runAsUser": -1}),
    ("securityContext", "container", "securityContext", {"seccompProfile": {"type": "Localhost"}}),
    (
        "securityContext",
        "container",
        "securityContext",
        {"seccompProfile": {"type": "RuntimeDefault"}, "readOnlyRootFilesystem": True},
    ),
    ("securityContext", "container", "securityContext", {"appArmorProfile": {"type": "Localhost"}}),
    ("securityContext", "container", "securityContext", {"procMount": "Unmasked"}),
    (
        "securityContext",
        "pod",
        "securityContext",
        {"sysctls": [{"name": "net.core.somaxconn", "value": "1024"}]},
    ),
    ("securityContext", "pod", "securityContext", {"sysctls": [{"name": "bad", "value": "1"}]}),
    ("securityContext", "pod", "securityContext", {"fsGroupChangePolicy": "Sometimes"}),
    ("securityContext", "pod", "securityContext", {"runAsGroup": -5, "supplementalGroups": [-1]}),
    # ports
    ("ports", "container", "ports", {"containerPort": 8081, "name": "toolongportname1"}),
    ("ports", "container", "ports", {"containerPort": 8081, "name": "HTTP"}),
    ("ports", "container", "ports", {"containerPort": 8081, "protocol": "UDP", "name": "u"}),
    ("ports", "container", "ports", {"containerPort": 8081, "protocol": "SCTP"}),
    ("ports", "container", "ports", {"containerPort": 8081, "protocol": "tcp"}),
    ("ports", "container", "ports", {"containerPort": 8081, "hostPort": 8081}),
    ("ports", "container", "ports", {"containerPort": 8081, "hostPort": 70000}),
    ("ports", "container", "ports", {"containerPort": 0}),
    ("ports", "container", "ports", {"containerPort": 8081, "hostIP": "10.0.0.1"}),
    # affinity
    (
        "affinity",
        "pod",
        "affinity",
        {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}
            }
        },
    ),
    (
        "affinity",
        "pod",
        "affinity",
        {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": [{"key": "z", "operator": "In"}]}]
                }
            }
        },
    ),
    (
        "affinity",
        "pod",
        "affinity",
        {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchFields": [
                                {"key": "metadata.labels", "operator": "In", "values": ["a"]}
                            ]
                        }
                    ]
                }
            }
        },
    ),
    (
        "affinity",
        "pod",
        "affinity",
        {
            "nodeAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 0,
                        "preference": {"matchExpressions": [{"key": "z", "operator": "Exists"}]},
                    }
                ]
            }
        },
    ),
    (
        "affinity",
        "pod",
        "affinity",
        {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": ""}
                ]
            }
        },
    ),
    (
        "affinity",
        "pod",
        "affinity",
        {
            "podAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 50,
                        "podAffinityTerm": {
                            "labelSelector": {"matchLabels": {"app": "x"}},
                            "topologyKey": "kubernetes.io/hostname",
                            "matchLabelKeys": ["pod-template-hash"],
                        },
                    }
                ]
            }
        },
    ),
    # topology spread
    (
        "topologySpread",
        "pod",
        "topologySpreadConstraints",
        [
            {
                "maxSkew": 1,
                "topologyKey": "topology.kubernetes.io/zone",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "x"}},
            }
        ],
    ),
    (
        "topologySpread",
        "pod",
        "topologySpreadConstraints",
        [{"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}],
    ),
    (
        "topologySpread",
        "pod",
        "topologySpreadConstraints",
        [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "Maybe"}],
    ),
    (
        "topologySpread",
        "pod",
        "topologySpreadConstraints",
        [
            {
                "maxSkew": 1,
                "minDomains": 2,
                "topologyKey": "zone",
                "whenUnsatisfiable": "ScheduleAnyway",
            }
        ],
    ),
    (
        "topologySpread",
        "pod",
        "topologySpreadConstraints",
        [
            {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
            {"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
        ],
    ),
    (
        "topologySpread",
        "pod",
        "topologySpreadConstraints",
        [
            {
                "maxSkew": 1,
                "topologyKey": "zone",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "x"}},
                "matchLabelKeys": ["app"],
            }
        ],
    ),
    # the rest of a pod spec
    ("pod", "pod", "dnsPolicy", "None"),
    ("pod", "pod", "dnsConfig", {"nameservers": ["1.1.1.1", "1.0.0.1", "8.8.8.8", "8.8.4.4"]}),
    ("pod", "pod", "activeDeadlineSeconds", 0),
    ("pod", "pod", "terminationGracePeriodSeconds", -1),
    ("pod", "pod", "priority", 5),
    ("pod", "pod", "schedulerName", "My_Scheduler"),
    ("pod", "pod", "hostname", "Bad_Host"),
    ("pod", "pod", "shareProcessNamespace", True),
    ("pod", "pod", "hostPID", True),
    ("pod", "pod", "os", {"name": "windows"}),
    ("pod", "pod", "hostNetwork", True),
    ("pod", "pod", "schedulingGates", [{"name": "gate"}, {"name": "gate"}]),
    # the rest of a container
    ("container", "container", "imagePullPolicy", "Sometimes"),
    ("container", "container", "image", " "),
    ("container", "container", "terminationMessagePolicy", "Sometimes"),
    ("container", "container", "lifecycle", {"preStop": {"sleep": {"seconds": 5}}}),
    ("container", "container", "lifecycle", {"postStart": {}}),
    (
        "container",
        "container",
        "resizePolicy",
        [
            {"resourceName": "cpu", "restartPolicy": "NotRequired"},
            {"resourceName": "cpu", "restartPolicy": "RestartContainer"},
        ],
    ),
    ("container", "container", "stdinOnce", True),
    ("container", "container", "workingDir", "relative"),
    # more, each checked against the Go oracle of Job/Pod validation (tests/pods/validate)
    ("container", "container", "lifecycle", {"preStop": {"sleep": {"seconds": -1}}}),
    (
        "container",
        "container",
        "lifecycle",
        {"preStop": {"exec": {"command": ["a"]}, "sleep": {"seconds": 1}}},
    ),
    ("container", "container", "lifecycle", {"postStart": {"httpGet": {"port": "Bad_Name"}}}),
    ("probes", "container", "readinessProbe", {"exec": {}}),
    ("probes", "container", "livenessProbe", {"grpc": {"port": 70000}}),
    (
        "probes",
        "container",
        "livenessProbe",
        {"httpGet": {"port": 8080, "httpHeaders": [{"name": "bad header", "value": "x"}]}},
    ),
    ("probes", "container", "livenessProbe", {"httpGet": {"port": 8080, "host": "bad host"}}),
    (
        "probes",
        "container",
        "startupProbe",
        {"tcpSocket": {"port": 8080}, "periodSeconds": -1, "timeoutSeconds": -2},
    ),
    ("volumes", "pod", "volumes", {"name": "held", "configMap": {"name": "c", "defaultMode": -1}}),
    (
        "volumes",
        "pod",
        "volumes",
        {
            "name": "held",
            "secret": {"secretName": "s", "items": [{"key": "k", "path": "p", "mode": 1024}]},
        },
    ),
    (
        "volumes",
        "pod",
        "volumes",
        {
            "name": "held",
            "downwardAPI": {
                "items": [{"path": "cpu", "resourceFieldRef": {"resource": "limits.cpu"}}]
            },
        },
    ),
    (
        "volumes",
        "pod",
        "volumes",
        {"name": "held", "emptyDir": {"medium": "Memory", "sizeLimit": "1Gi"}},
    ),
    ("volumes", "pod", "volumes", {"name": "held", "nfs": {"server": "s", "path": "relative"}}),
    ("volumes", "pod", "volumes", {"name": "held", "csi": {"driver": ""}}),
    (
        "volumes",
        "pod",
        "volumes",
        {
            "name": "held",
            "projected": {"sources": [{"configMap": {"name": "c"}, "secret": {"name": "s"}}]},
        },
    ),
    (
        "env",
        "container",
        "env",
        {
            "name": "D",
            "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu", "divisor": "3m"}},
        },
    ),
    (
        "env",
        "container",
        "env",
        {
            "name": "D",
            "valueFrom": {"resourceFieldRef": {"resource": "limits.memory", "divisor": "1m"}},
        },
    ),
    (
        "env",
        "container",
        "env",
        {"name": "D", "valueFrom": {"resourceFieldRef": {"resource": "requests.hugepages-2Mi"}}},
    ),
    (
        "env",
        "container",
        "env",
        {
            "name": "D",
            "valueFrom": {"fieldRef": {"fieldPath": "metadata.name", "apiVersion": "v2"}},
        },
    ),
    ("ports", "container", "ports", {"containerPort": 8082, "name": "http"}),
    ("pod", "pod", "hostAliases", [{"ip": "not-an-ip", "hostnames": ["Bad_Host"]}]),
    ("pod", "pod", "readinessGates", [{"conditionType": "bad type!"}]),
    ("pod", "pod", "setHostnameAsFQDN", True),
    ("pod", "pod", "preemptionPolicy", "Sometimes"),
    (
        "pod",
        "pod",
        "dnsConfig",
        {
            "searches": [
                "a",
                "a",
                "a",
                "a",
                "a",
                "a",
                "a",
                "a",
                "a",
                "a",
                "a",
                "a",
                "a",
                "a",
                "a",
                "a",
                "a",
                "a",
                "a",
                "a",
                "a",
                "a",
                "a",
                "a",
                "a",
                "a",
                "a",
                "a",
                "a",
                "a",
                "a",
                "a",
                "a",
            ],
            "options": [{"name": ""}],
        },
    ),
    (
        "container",
        "container",
        "name",
        "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn",
    ),
    (
        "container",
        "container",
        "terminationMessagePath",
        "/xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    ),
    ("securityContext", "pod", "securityContext", {"seLinuxChangePolicy": "Weird"}),
    ("securityContext", "pod", "securityContext", {"supplementalGroupsPolicy": "Weird"}),
    ("securityContext", "pod", "securityContext", {"appArmorProfile": {"type": "Localhost"}}),
    (
        "securityContext",
        "pod",
        "securityContext",
        {"seccompProfile": {"type": "Unconfined", "localhostProfile": "x"}},
    ),
    (
        "securityContext",
        "container",
        "securityContext",
        {"capabilities": {"add": ["CAP_SYS_ADMIN"]}, "allowPrivilegeEscalation": False},
    ),
    (
        "affinity",
        "pod",
        "affinity",
        {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchFields": [{"key": "metadata.name", "operator": "Exists"}]}
                    ]
                }
            }
        },
    ),
    (
        "affinity",
        "pod",
        "affinity",
        {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{}]}
            }
        },
    ),
    (
        "affinity",
        "pod",
        "affinity",
        {
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "labelSelector": {"matchLabels": {"app": "x"}},
                        "topologyKey": "zone",
                        "namespaceSelector": {
                            "matchExpressions": [{"key": "a", "operator": "Bad"}]
                        },
                    }
                ]
            }
        },
    ),
    (
        "topologySpread",
        "pod",
        "topologySpreadConstraints",
        [
            {
                "maxSkew": 1,
                "topologyKey": "",
                "whenUnsatisfiable": "DoNotSchedule",
                "nodeTaintsPolicy": "Bad",
            }
        ],
    ),
    (
        "topologySpread",
        "pod",
        "topologySpreadConstraints",
        [
            {
                "maxSkew": 1,
                "topologyKey": "zone",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"bad key!": "x"}},
            }
        ],
    ),
    (
        "tolerations",
        "pod",
        "tolerations",
        {"key": "", "operator": "Exists", "effect": "NoSchedule"},
    ),
    (
        "tolerations",
        "pod",
        "tolerations",
        {
            "key": "k",
            "operator": "Equal",
            "value": "vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv",
        },
    ),
    (
        "nodeSelector",
        "pod",
        "nodeSelector",
        {"example.com/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa": "x"},
    ),
]
# What a runtimePatch's container and pod spec take (Trainer v2.3.0 ContainerPatch,
# PodSpecPatch): these go through a TrainJob's runtimePatches too.
PATCH_CONTAINER_KEYS = frozenset({"env", "volumeMounts", "securityContext"})
PATCH_POD_KEYS = frozenset(
    {"volumes", "securityContext", "nodeSelector", "affinity", "tolerations", "schedulingGates"}
)
_APPENDED = frozenset({"env", "volumeMounts", "ports", "volumes", "tolerations"})
EXACT_NAME_LENGTHS = [48, 49, 50, 62, 63, 64]


def _apply(target: Json, key: str, value: Any) -> None:
    """One held-out change on a container or pod spec (appended, merged or set)."""
    value = copy.deepcopy(value)
    if key in _APPENDED:
        target[key] = [*(target.get(key) or []), value]
    elif key == "nodeSelector":
        target[key] = {**(target.get(key) or {}), **value}
    else:
        target[key] = value


@st.composite
def held_out(draw: Draw, runtime: Json, trainjob: Json) -> list[str]:
    """Up to three :data:`HELD_OUT` changes on ``runtime``'s replicated jobs, some through
    a runtimePatch of ``trainjob`` instead (in place); their names."""
    jobs = [j for j in _replicated_jobs(runtime) if _pod_spec(j).get("containers")]
    if not jobs:
        return []
    features: list[str] = []
    for _ in range(draw(st.integers(0, 3))):
        family, where, key, value = draw(st.sampled_from(HELD_OUT))
        job = draw(st.sampled_from(jobs))
        pod = _pod_spec(job)
        containers = pod["containers"]
        index = draw(st.integers(0, len(containers) - 1))
        patchable = key in (PATCH_CONTAINER_KEYS if where == "container" else PATCH_POD_KEYS)
        if patchable and rarely(draw, 35):
            patch_pod: Json = {}
            if where == "container":
                container: Json = {"name": containers[index]["name"]}
                _apply(container, key, value)
                patch_pod["containers"] = [container]
            else:
                _apply(patch_pod, key, value)
            patches = trainjob.setdefault("spec", {}).setdefault("runtimePatches", [])
            patches.append(
                {
                    "manager": f"example.com/held-out-{len(patches)}",
                    "trainingRuntimeSpec": {
                        "template": {
                            "spec": {
                                "replicatedJobs": [
                                    {
                                        "name": job["name"],
                                        "template": {"spec": {"template": {"spec": patch_pod}}},
                                    }
                                ]
                            }
                        }
                    },
                }
            )
            features.append(f"{job['name']} {family} {key} (runtimePatch)")
            continue
        _apply(containers[index] if where == "container" else pod, key, value)
        features.append(f"{job['name']} {family} {key}")
    if "held" in json.dumps(runtime) + json.dumps(trainjob) and rarely(draw, 50):
        # the volume the held-out mounts name, where none came with them
        pod = _pod_spec(draw(st.sampled_from(jobs)))
        if "held" not in {v.get("name") for v in pod.get("volumes") or []}:
            pod["volumes"] = [*(pod.get("volumes") or []), {"name": "held", "emptyDir": {}}]
    return features
