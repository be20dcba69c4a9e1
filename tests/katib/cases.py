"""Experiments for the Katib conformance: Katib's own TrainJob example shape and variants
(grids, every parameter type, placeholders in every field type, metadata references,
ConfigMap templates, invalid ones), and a seeded fuzz of them."""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from typing import Any

Experiment = dict[str, Any]


def example() -> Experiment:
    """The shape of Katib v0.19.0's examples/v1beta1/kubeflow-trainer/trainjob-pytorch.yaml."""
    return {
        "apiVersion": "kubeflow.org/v1beta1",
        "kind": "Experiment",
        "metadata": {"name": "torch-distributed-example", "namespace": "kubeflow"},
        "spec": {
            "parallelTrialCount": 3,
            "maxTrialCount": 12,
            "maxFailedTrialCount": 3,
            "objective": {"type": "minimize", "goal": 0.001, "objectiveMetricName": "loss"},
            "algorithm": {"algorithmName": "random"},
            "parameters": [
                {
                    "name": "lr",
                    "parameterType": "double",
                    "feasibleSpace": {"min": "0.01", "max": "0.05"},
                },
                {
                    "name": "momentum",
                    "parameterType": "double",
                    "feasibleSpace": {"min": "0.5", "max": "0.9"},
                },
            ],
            "trialTemplate": {
                "primaryContainerName": "node",
                "trialParameters": [
                    {"name": "learningRate", "description": "Learning rate", "reference": "lr"},
                    {"name": "momentum", "description": "Momentum", "reference": "momentum"},
                ],
                "trialSpec": {
                    "apiVersion": "trainer.kubeflow.org/v1alpha1",
                    "kind": "TrainJob",
                    "spec": {
                        "runtimeRef": {"name": "torch-distributed"},
                        "trainer": {
                            "numNodes": 2,
                            "image": "docker.io/kubeflowkatib/pytorch-mnist:v1beta1-45c5727",
                            "command": [
                                "python3",
                                "/opt/pytorch-mnist/mnist.py",
                                "--epochs=1",
                                "--lr=${trialParameters.learningRate}",
                                "--momentum=${trialParameters.momentum}",
                            ],
                        },
                    },
                },
            },
        },
    }


def _spec(e: Experiment) -> dict[str, Any]:
    spec: dict[str, Any] = e["spec"]
    return spec


def _trainer(e: Experiment) -> dict[str, Any]:
    trainer: dict[str, Any] = e["spec"]["trialTemplate"]["trialSpec"]["spec"]["trainer"]
    return trainer


def _add_param(
    e: Experiment, name: str, kind: str, space: dict[str, Any], placeholder: str
) -> None:
    _spec(e)["parameters"].append({"name": name, "parameterType": kind, "feasibleSpace": space})
    _spec(e)["trialTemplate"]["trialParameters"].append({"name": placeholder, "reference": name})


def grid_3x2(e: Experiment) -> None:
    s = _spec(e)
    s["algorithm"] = {"algorithmName": "grid"}
    s["parameters"] = [
        {
            "name": "lr",
            "parameterType": "categorical",
            "feasibleSpace": {"list": ["0.01", "0.05", "0.1"]},
        },
        {
            "name": "momentum",
            "parameterType": "categorical",
            "feasibleSpace": {"list": ["0.5", "0.9"]},
        },
    ]


def numnodes_placeholder(e: Experiment) -> None:
    _add_param(e, "nodes", "int", {"min": "1", "max": "4"}, "nodes")
    _trainer(e)["numNodes"] = "${trialParameters.nodes}"


def gpu_categorical(e: Experiment) -> None:
    _add_param(e, "gpus", "categorical", {"list": ["1", "2", "two"]}, "gpus")
    _trainer(e)["resourcesPerNode"] = {"limits": {"nvidia.com/gpu": "${trialParameters.gpus}"}}


def meta_refs(e: Experiment) -> None:
    t = _spec(e)["trialTemplate"]
    t["trialSpec"]["metadata"] = {"labels": {"team": "ml"}, "annotations": {"owner": "alice"}}
    for ref, name in [
        ("${trialSpec.Name}", "trialName"),
        ("${trialSpec.Namespace}", "trialNs"),
        ("${trialSpec.Kind}", "trialKind"),
        ("${trialSpec.APIVersion}", "trialApi"),
        ("${trialSpec.Labels[team]}", "team"),
        ("${trialSpec.Annotations[owner]}", "owner"),
    ]:
        t["trialParameters"].append({"name": name, "reference": ref})
        _trainer(e)["command"].append(f"--{name}=${{trialParameters.{name}}}")


def env_placeholder(e: Experiment) -> None:
    _add_param(e, "batch", "discrete", {"list": ["16", "32", "64"]}, "batchSize")
    _trainer(e)["env"] = [{"name": "BATCH", "value": "${trialParameters.batchSize}"}]


def int_grid(e: Experiment) -> None:
    s = _spec(e)
    s["algorithm"] = {"algorithmName": "grid"}
    s["maxTrialCount"] = 4
    s["parameters"] = [
        {
            "name": "lr",
            "parameterType": "int",
            "feasibleSpace": {"min": "1", "max": "5", "step": "2"},
        },
        {"name": "momentum", "parameterType": "discrete", "feasibleSpace": {"list": ["1", "2"]}},
    ]


def html_chars(e: Experiment) -> None:
    _trainer(e)["command"].append("echo <a> & 'b' \"c\" \\ \t")


def configmap_template(e: Experiment) -> None:
    t = _spec(e)["trialTemplate"]
    del t["trialSpec"]
    t["configMap"] = {
        "configMapName": "templates",
        "configMapNamespace": "kubeflow",
        "templatePath": "trainjob.yaml",
    }
    t["successCondition"] = 'status.conditions.#(type=="Complete")#|#(status=="True")#'
    t["failureCondition"] = 'status.conditions.#(type=="Failed")#|#(status=="True")#'


def configmap_scalars(e: Experiment) -> None:
    """A YAML template whose placeholders land in plain scalars (typed after substitution)."""
    configmap_template(e)
    _spec(e)["trialTemplate"]["configMap"]["templatePath"] = "scalars.yaml"
    s = _spec(e)
    s["parameters"][0] = {
        "name": "lr",
        "parameterType": "categorical",
        "feasibleSpace": {"list": ["1e3", "yes", "0x10", "1_000", ".5", "1.0", "~", "x: y"]},
    }


def batch_job(e: Experiment) -> None:
    """A batch/v1 Job trial template (the shape of Katib's random example)."""
    template = _spec(e)["trialTemplate"]
    template["primaryContainerName"] = "training-container"
    template["trialParameters"] = [{"name": "lr", "reference": "lr"}]
    template["trialSpec"] = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "spec": {
            "template": {
                "spec": {
                    "containers": [
                        {
                            "name": "training-container",
                            "image": "docker.io/kubeflowkatib/mxnet-mnist:v1",
                            "command": ["python3", "/opt/mnist.py", "--lr=${trialParameters.lr}"],
                        }
                    ],
                    "restartPolicy": "Never",
                }
            }
        },
    }


def _job_spec(key: str, value: Any) -> Callable[[Experiment], None]:
    def apply(e: Experiment) -> None:
        _spec(e)["trialTemplate"]["trialSpec"]["spec"][key] = value

    return apply


def _job_pod(key: str, value: Any) -> Callable[[Experiment], None]:
    def apply(e: Experiment) -> None:
        _spec(e)["trialTemplate"]["trialSpec"]["spec"]["template"]["spec"][key] = value

    return apply


def _job_container(key: str, value: Any) -> Callable[[Experiment], None]:
    def apply(e: Experiment) -> None:
        pod = _spec(e)["trialTemplate"]["trialSpec"]["spec"]["template"]["spec"]
        pod["containers"][0][key] = value

    return apply


def nas(e: Experiment) -> None:
    """A neural architecture search (the shape of Katib's ENAS example)."""
    spec = _spec(e)
    spec["parameters"] = []
    spec["algorithm"] = {"algorithmName": "enas"}
    spec["nasConfig"] = {
        "graphConfig": {"numLayers": 8, "inputSizes": [32, 32, 3], "outputSizes": [10]},
        "operations": [
            {
                "operationType": "convolution",
                "parameters": [
                    {
                        "name": "filter_size",
                        "parameterType": "categorical",
                        "feasibleSpace": {"list": ["3", "5", "7"]},
                    }
                ],
            }
        ],
    }
    spec["trialTemplate"]["trialParameters"] = [
        {"name": "learningRate", "reference": "architecture"},
        {"name": "momentum", "reference": "nn_config"},
    ]


def _set(path: str, value: Any) -> Callable[[Experiment], None]:
    def apply(e: Experiment) -> None:
        node: Any = e
        keys = path.split(".")
        for key in keys[:-1]:
            node = node[int(key)] if isinstance(node, list) else node.setdefault(key, {})
        if value is _DELETE:
            node.pop(keys[-1], None)
        else:
            node[keys[-1]] = value

    return apply


_DELETE = object()

# (name, mutations); each case starts from example()
VARIANTS: list[tuple[str, list[Callable[[Experiment], None]]]] = [
    ("example", []),
    ("grid-3x2", [grid_3x2]),
    ("numnodes-placeholder", [numnodes_placeholder]),
    ("gpu-categorical", [gpu_categorical]),
    ("meta-refs", [meta_refs]),
    ("env-placeholder", [env_placeholder]),
    ("int-grid-capped", [int_grid]),
    ("html-chars", [html_chars]),
    ("grid-meta", [grid_3x2, meta_refs]),
    ("grid-gpu", [grid_3x2, gpu_categorical]),
    ("parallel-above-max", [_set("spec.parallelTrialCount", 20)]),
    ("failed-above-max", [_set("spec.maxFailedTrialCount", 13)]),
    ("max-zero", [_set("spec.maxTrialCount", 0)]),
    ("parallel-zero", [_set("spec.parallelTrialCount", 0)]),
    ("failed-negative", [_set("spec.maxFailedTrialCount", -1)]),
    ("no-parallel", [_set("spec.parallelTrialCount", _DELETE)]),
    ("no-max", [_set("spec.maxTrialCount", _DELETE)]),
    ("name-upper", [_set("metadata.name", "Torch")]),
    ("name-long", [_set("metadata.name", "a" * 41)]),
    ("name-40", [_set("metadata.name", "a" * 40)]),
    ("no-objective", [_set("spec.objective", _DELETE)]),
    ("objective-type", [_set("spec.objective.type", "lowest")]),
    ("objective-no-metric", [_set("spec.objective.objectiveMetricName", _DELETE)]),
    ("objective-additional", [_set("spec.objective.additionalMetricNames", ["acc", "loss"])]),
    ("objective-additional-ok", [_set("spec.objective.additionalMetricNames", ["acc"])]),
    (
        "objective-max",
        [
            _set("spec.objective.type", "maximize"),
            _set("spec.objective.additionalMetricNames", ["acc"]),
        ],
    ),
    (
        "strategies",
        [_set("spec.objective.metricStrategies", [{"name": "loss", "value": "latest"}])],
    ),
    ("no-algorithm", [_set("spec.algorithm", _DELETE)]),
    ("algorithm-empty", [_set("spec.algorithm.algorithmName", "")]),
    ("algorithm-unknown", [_set("spec.algorithm.algorithmName", "genetic")]),
    ("algorithm-tpe", [_set("spec.algorithm.algorithmName", "tpe")]),
    ("algorithm-bayes", [_set("spec.algorithm.algorithmName", "bayesianoptimization")]),
    ("early-stopping", [_set("spec.earlyStopping", {"algorithmName": "medianstop"})]),
    ("early-unknown", [_set("spec.earlyStopping", {"algorithmName": "never"})]),
    ("early-empty", [_set("spec.earlyStopping", {"algorithmName": ""})]),
    ("resume-bad", [_set("spec.resumePolicy", "Sometimes")]),
    ("resume-long", [_set("spec.resumePolicy", "LongRunning")]),
    ("no-template", [_set("spec.trialTemplate", _DELETE)]),
    ("no-primary", [_set("spec.trialTemplate.primaryContainerName", _DELETE)]),
    ("success-only", [_set("spec.trialTemplate.trialSpec.kind", "Deployment")]),
    ("pytorchjob-kind", [_set("spec.trialTemplate.trialSpec.kind", "PyTorchJob")]),
    (
        "own-conditions",
        [
            _set("spec.trialTemplate.successCondition", "status.done"),
            _set("spec.trialTemplate.failureCondition", "status.bad"),
        ],
    ),
    ("own-pod-labels", [_set("spec.trialTemplate.primaryPodLabels", {"role": "main"})]),
    ("no-trial-params", [_set("spec.trialTemplate.trialParameters", _DELETE)]),
    ("empty-trial-params", [_set("spec.trialTemplate.trialParameters", [])]),
    ("no-source", [_set("spec.trialTemplate.trialSpec", _DELETE)]),
    (
        "both-sources",
        [
            _set(
                "spec.trialTemplate.configMap",
                {"configMapName": "x", "configMapNamespace": "y", "templatePath": "z"},
            )
        ],
    ),
    ("configmap", [configmap_template]),
    ("configmap-scalars", [configmap_scalars]),
    ("configmap-scalars-grid", [configmap_scalars, _set("spec.algorithm.algorithmName", "grid")]),
    (
        "configmap-missing",
        [configmap_template, _set("spec.trialTemplate.configMap.configMapName", "gone")],
    ),
    (
        "configmap-path",
        [configmap_template, _set("spec.trialTemplate.configMap.templatePath", "other.yaml")],
    ),
    (
        "configmap-partial",
        [configmap_template, _set("spec.trialTemplate.configMap.templatePath", "")],
    ),
    ("tp-no-name", [_set("spec.trialTemplate.trialParameters.0.name", "")]),
    ("tp-brace", [_set("spec.trialTemplate.trialParameters.0.name", "lr}")]),
    ("tp-dup-name", [_set("spec.trialTemplate.trialParameters.1.name", "learningRate")]),
    ("tp-dup-ref", [_set("spec.trialTemplate.trialParameters.1.reference", "lr")]),
    ("tp-bad-ref", [_set("spec.trialTemplate.trialParameters.1.reference", "beta")]),
    (
        "tp-unused",
        [
            lambda e: _spec(e)["trialTemplate"]["trialParameters"].append(
                {"name": "extra", "reference": "${trialSpec.Name}"}
            )
        ],
    ),
    (
        "placeholder-unknown",
        [lambda e: _trainer(e)["command"].append("--x=${trialParameters.nobody}")],
    ),
    ("template-name", [_set("spec.trialTemplate.trialSpec.metadata", {"name": "fixed"})]),
    ("template-no-kind", [_set("spec.trialTemplate.trialSpec.kind", "")]),
    ("no-parameters", [_set("spec.parameters", [])]),
    ("param-type", [_set("spec.parameters.0.parameterType", "float")]),
    ("param-distribution", [_set("spec.parameters.0.feasibleSpace.distribution", "beta")]),
    ("param-lognormal", [_set("spec.parameters.0.feasibleSpace.distribution", "logNormal")]),
    ("param-no-space", [_set("spec.parameters.0.feasibleSpace", {})]),
    ("param-double-list", [_set("spec.parameters.0.feasibleSpace.list", ["1", "2"])]),
    ("param-no-max", [_set("spec.parameters.0.feasibleSpace.max", _DELETE)]),
    (
        "param-categorical-min",
        [
            _set("spec.parameters.0.parameterType", "categorical"),
            _set("spec.parameters.0.feasibleSpace.list", ["a"]),
        ],
    ),
    ("collector-file", [_set("spec.metricsCollectorSpec", {"collector": {"kind": "File"}})]),
    (
        "collector-file-json",
        [
            _set(
                "spec.metricsCollectorSpec",
                {
                    "collector": {"kind": "File"},
                    "source": {
                        "fileSystemPath": {"path": "/m.json", "kind": "File", "format": "JSON"}
                    },
                },
            )
        ],
    ),
    (
        "collector-file-relative",
        [
            _set(
                "spec.metricsCollectorSpec",
                {
                    "collector": {"kind": "File"},
                    "source": {"fileSystemPath": {"path": "m.log", "kind": "File"}},
                },
            )
        ],
    ),
    (
        "collector-tfevent",
        [_set("spec.metricsCollectorSpec", {"collector": {"kind": "TensorFlowEvent"}})],
    ),
    (
        "collector-tfevent-format",
        [
            _set(
                "spec.metricsCollectorSpec",
                {
                    "collector": {"kind": "TensorFlowEvent"},
                    "source": {
                        "fileSystemPath": {"path": "/t", "kind": "Directory", "format": "TEXT"}
                    },
                },
            )
        ],
    ),
    (
        "collector-prometheus",
        [_set("spec.metricsCollectorSpec", {"collector": {"kind": "PrometheusMetric"}})],
    ),
    ("collector-push", [_set("spec.metricsCollectorSpec", {"collector": {"kind": "Push"}})]),
    ("collector-custom", [_set("spec.metricsCollectorSpec", {"collector": {"kind": "Custom"}})]),
    ("collector-unknown", [_set("spec.metricsCollectorSpec", {"collector": {"kind": "Carrier"}})]),
    (
        "float-numbers",
        [
            _set("spec.trialTemplate.trialSpec.spec.trainer.numProcPerNode", 1.0),
            _set("spec.trialTemplate.trialSpec.spec.x", 0.0000001),
        ],
    ),
    ("unicode", [lambda e: _trainer(e)["command"].append("naïve \u2028 ok")]),
    # batch/v1 Job trial templates: Katib converts them to its Go Job type
    ("job", [batch_job]),
    ("job-unknown-field", [batch_job, _job_spec("backoffLimt", 3)]),
    ("job-placeholder-int", [batch_job, _job_spec("backoffLimit", "${trialParameters.lr}")]),
    ("job-float-int", [batch_job, _job_spec("completions", 2.5)]),
    ("job-float-whole", [batch_job, _job_spec("completions", 2.0)]),
    ("job-bool-string", [batch_job, _job_spec("suspend", "yes")]),
    ("job-enum-int", [batch_job, _job_container("imagePullPolicy", 3)]),
    ("job-ports-string", [batch_job, _job_container("ports", "8080")]),
    ("job-field-case", [batch_job, _job_container("Image", "x")]),
    ("job-resources", [batch_job, _job_container("resources", {"limits": {"cpu": "1000m"}})]),
    (
        "job-quantity-placeholder",
        [batch_job, _job_container("resources", {"limits": {"cpu": "${trialParameters.lr}"}})],
    ),
    (
        "job-int-or-string-bool",
        [batch_job, _job_container("livenessProbe", {"httpGet": {"port": True}})],
    ),
    (
        "job-quantity-normalised",
        [batch_job, _job_pod("volumes", [{"name": "v", "emptyDir": {"sizeLimit": "1024Mi"}}])],
    ),
    ("job-env-float", [batch_job, _job_container("env", [{"name": "A", "value": 1.5}])]),
    ("job-map-int", [batch_job, _job_pod("nodeSelector", {"a": 1})]),
    # neural architecture search
    ("nas", [nas]),
    (
        "nas-and-parameters",
        [nas, lambda e: _spec(e).update(parameters=example()["spec"]["parameters"])],
    ),
    ("nas-bad-type", [nas, _set("spec.nasConfig.graphConfig.numLayers", "8")]),
    ("nas-bad-list", [nas, _set("spec.nasConfig.graphConfig.inputSizes", [32, "x"])]),
]


CONFIG_MAPS: list[dict[str, Any]] = [
    {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "templates", "namespace": "kubeflow"},
        "data": {
            "trainjob.yaml": (
                "apiVersion: trainer.kubeflow.org/v1alpha1\n"
                "kind: TrainJob\n"
                "spec:\n"
                "  runtimeRef:\n"
                "    name: torch-distributed\n"
                "  trainer:\n"
                "    numNodes: 2\n"
                "    command: [python3, train.py, '--lr=${trialParameters.learningRate}',\n"
                "              '--momentum=${trialParameters.momentum}']\n"
            ),
            "scalars.yaml": (
                "apiVersion: trainer.kubeflow.org/v1alpha1\n"
                "kind: TrainJob\n"
                "metadata:\n"
                "  labels: {team: ml}\n"
                "spec:\n"
                "  trainer:\n"
                "    numNodes: ${trialParameters.learningRate}\n"
                "    env:\n"
                "    - name: M\n"
                "      value: ${trialParameters.momentum}\n"
            ),
        },
    }
]


def cases() -> list[tuple[str, Experiment]]:
    out = []
    for name, mutations in VARIANTS:
        e = example()
        for mutate in mutations:
            mutate(e)
        out.append((name, e))
    return out


_FUZZ_MUTATIONS: list[Callable[[Experiment], None]] = [
    grid_3x2,
    numnodes_placeholder,
    gpu_categorical,
    meta_refs,
    env_placeholder,
    int_grid,
    html_chars,
]


def fuzz_cases(count: int, seed: int) -> list[tuple[str, Experiment]]:
    """Seeded combinations of the variants' mutations and random counts and values."""
    rng = random.Random(seed)
    variants = [v for v in VARIANTS if "configmap" not in v[0]]
    out = []
    for i in range(count):
        e = example()
        for mutate in rng.sample(_FUZZ_MUTATIONS, rng.randint(0, 3)):
            mutate(e)
        _, extra = rng.choice(variants)
        for mutate in extra:
            mutate(e)
        if rng.random() < 0.3:
            _spec(e)["maxTrialCount"] = rng.randint(-1, 8)
        if rng.random() < 0.3:
            _spec(e)["parallelTrialCount"] = rng.randint(-1, 8)
        if rng.random() < 0.3 and _spec(e)["parameters"]:
            _spec(e)["parameters"][0]["feasibleSpace"] = rng.choice(
                [
                    {"list": ["a", "b&c", "<d>"]},
                    {"min": "-1", "max": "1e-3"},
                    {"min": "0.1", "max": "0.2", "step": "0.05"},
                ]
            )
        if rng.random() < 0.25:  # a value of the wrong JSON type somewhere Katib decodes
            _wrong_type(e, rng)
        out.append((f"fuzz-{i}", copy.deepcopy(e)))
    return out


_WRONG: list[Any] = ["x", 7, 2.5, True, ["a"], {"k": 1}, 1e21, -(2**40)]


def _wrong_type(e: Experiment, rng: random.Random) -> None:
    """Replace one typed field's value by one of another JSON type."""
    paths = [
        ("maxTrialCount",),
        ("parallelTrialCount",),
        ("resumePolicy",),
        ("objective", "type"),
        ("objective", "additionalMetricNames"),
        ("algorithm", "algorithmName"),
        ("parameters", 0, "name"),
        ("parameters", 0, "feasibleSpace", "min"),
        ("parameters", -1, "feasibleSpace", "list"),
        ("trialTemplate", "primaryContainerName"),
        ("trialTemplate", "primaryPodLabels"),
        ("trialTemplate", "trialParameters", 0, "reference"),
        ("trialTemplate", "retain"),
    ]
    targets: list[tuple[Any, str | int]] = []
    for path in paths:
        node: Any = _spec(e)
        try:
            for key in path[:-1]:
                node = node[key]
        except (KeyError, IndexError, TypeError):
            continue
        if isinstance(node, dict):
            targets.append((node, path[-1]))
    node, key = rng.choice(targets)
    node[key] = copy.deepcopy(rng.choice(_WRONG))
