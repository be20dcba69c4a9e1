"""trainc check with Katib Experiments: Katib's own TrainJob example with the upstream torch
runtime is clean; a 3x2 categorical grid is 6 trials (6 TrainJobs, 6 JobSets); a placeholder
in numNodes, a categorical GPU count that is no quantity and parallelTrialCount above
maxTrialCount are errors with the real messages, at the Experiment's lines."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from compiler.model.build import Build
from compiler.model.objects import RenderedObject
from compiler.plan.check import check_paths
from compiler.upstream.artifacts import katib_upstream, upstream
from tests.katib.cases import grid_3x2

EXAMPLE = "examples/v1beta1/kubeflow-trainer/trainjob-pytorch.yaml"


def _setup(tmp_path: Path, experiment: str | None = None) -> Path:
    shutil.copy(
        upstream("v2.3.0").path("manifests/base/runtimes/torch_distributed.yaml"),
        tmp_path / "runtime.yaml",
    )
    katib_dir = katib_upstream().katib_config.parents[4]
    text = experiment if experiment is not None else (katib_dir / EXAMPLE).read_text()
    (tmp_path / "experiment.yaml").write_text(text, encoding="utf-8")
    return tmp_path


def _errors(tmp_path: Path) -> list[str]:
    result = check_paths([str(tmp_path)])
    return [
        f"{f.location.line if f.location else 0}: {f.message}"
        for f in result.findings
        if f.severity.name == "ERROR"
    ]


def _trial_objects(build: Build) -> list[RenderedObject]:
    """What the trials rendered to (checked; not delivered: Katib creates them)."""
    return [o for s in build.trial_summaries for o in s.objects]


def test_katib_example_checks_clean(tmp_path: Path) -> None:
    result = check_paths([str(_setup(tmp_path))])
    assert [f.message for f in result.findings] == []
    kinds = [o.data["kind"] for o in _trial_objects(result.builds[0])]
    assert kinds.count("JobSet") == 3  # the corners of two doubles


def _example() -> dict[str, Any]:
    katib_dir = katib_upstream().katib_config.parents[4]
    data: dict[str, Any] = yaml.safe_load((katib_dir / EXAMPLE).read_text())
    return data


def test_grid_3x2_is_six_trainjobs_six_jobsets(tmp_path: Path) -> None:
    exp = _example()
    grid_3x2(exp)
    result = check_paths([str(_setup(tmp_path, yaml.safe_dump(exp)))])
    build = result.builds[0]
    assert [f.message for f in result.findings] == []
    assert len(build.katib_trials) == 6
    assert len(build.trial_summaries) == 6  # the trials' TrainJobs, rendered
    assert [o.data["kind"] for o in _trial_objects(build)].count("JobSet") == 6
    assert [o.data["kind"] for o in build.objects] == ["Experiment"]  # what is delivered


BAD = """\
apiVersion: kubeflow.org/v1beta1
kind: Experiment
metadata: {name: bad, namespace: kubeflow}
spec:
  maxTrialCount: 12
  objective: {type: minimize, objectiveMetricName: loss}
  algorithm: {algorithmName: random}
  parameters:
    - {name: nodes, parameterType: int, feasibleSpace: {min: "1", max: "2"}}
    - {name: gpus, parameterType: categorical, feasibleSpace: {list: ["1", "two"]}}
  trialTemplate:
    primaryContainerName: node
    trialParameters:
      - {name: nodes, reference: nodes}
      - {name: gpus, reference: gpus}
    trialSpec:
      apiVersion: trainer.kubeflow.org/v1alpha1
      kind: TrainJob
      spec:
        runtimeRef: {name: torch-distributed}
        trainer:
          numNodes: ${trialParameters.nodes}
          resourcesPerNode:
            limits:
              nvidia.com/gpu: "${trialParameters.gpus}"
"""


def test_placeholder_in_numnodes_and_bad_gpu_value(tmp_path: Path) -> None:
    errors = _errors(_setup(tmp_path, BAD))
    assert (
        '22: trial nodes=1, gpus=1: spec.trainer.numNodes: Invalid value: "string": '
        'spec.trainer.numNodes in body must be of type integer: "string"'
    ) in errors
    gpu = [e for e in errors if "nvidia.com/gpu" in e]
    assert len(gpu) == 1 and gpu[0].startswith(
        "25: trial nodes=1, gpus=two: spec.trainer.resourcesPerNode"
    )
    assert 'Invalid value: "two"' in gpu[0]


def test_parallel_above_max(tmp_path: Path) -> None:
    exp = _example()
    exp["spec"]["parallelTrialCount"] = 20
    errors = _errors(_setup(tmp_path, yaml.safe_dump(exp, sort_keys=False)))
    assert errors == [
        "7: spec.parallelTrialCount: Invalid value: 20: should be less than or equal to "
        "spec.maxTrialCount"
    ]


def test_peak_requests_at_parallel_trial_count(tmp_path: Path) -> None:
    exp = _example()
    exp["spec"]["algorithm"] = {"algorithmName": "grid"}
    exp["spec"]["parallelTrialCount"] = 2
    exp["spec"]["parameters"] = [
        {"name": "lr", "parameterType": "categorical", "feasibleSpace": {"list": ["1", "2", "4"]}},
        {
            "name": "momentum",
            "parameterType": "categorical",
            "feasibleSpace": {"list": ["0.5", "0.9"]},
        },
    ]
    trainer = exp["spec"]["trialTemplate"]["trialSpec"]["spec"]["trainer"]
    trainer["resourcesPerNode"] = {"limits": {"nvidia.com/gpu": "${trialParameters.learningRate}"}}
    result = check_paths([str(_setup(tmp_path, yaml.safe_dump(exp)))])
    assert [f.message for f in result.findings] == []
    # 2 nodes x {1, 2, 4} GPUs, twice each: the two costliest trials ask 8 + 8
    assert result.notes == [
        "Experiment kubeflow/torch-distributed-example: peak requests at parallelTrialCount 2 "
        "(the 2 costliest of 6 trials checked): nvidia.com/gpu 16"
    ]


VAP = """\
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: max-one-node}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: [trainer.kubeflow.org]
      apiVersions: [v1alpha1]
      operations: [CREATE]
      resources: [trainjobs]
  validations:
  - expression: "object.spec.trainer.numNodes <= 1"
    message: at most one node
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: max-one-node}
spec:
  policyName: max-one-node
  validationActions: [Deny]
"""


def test_policies_judge_each_trial(tmp_path: Path) -> None:
    (_setup(tmp_path) / "policy.yaml").write_text(VAP, encoding="utf-8")
    result = check_paths([str(tmp_path)])
    denied = [f for f in result.findings if f.rule == "vap/max-one-node"]
    assert len(denied) == 3  # each corner trial of Katib's example asks for 2 nodes
    assert all(str(f.object) == "Experiment kubeflow/torch-distributed-example" for f in denied)
    assert denied[0].message.startswith("trial lr=0.01, momentum=0.5: ValidatingAdmissionPolicy")
    assert all(
        f.location is not None and f.location.file.endswith("experiment.yaml") for f in denied
    )


def test_configmap_template_works_like_an_inline_one(tmp_path: Path) -> None:
    """A YAML template's placeholder substituted as text becomes a typed value: nodes=1 is
    an integer, nodes=x a string; the errors are located at trialTemplate.configMap."""
    text = (Path(__file__).parent / "configmap-experiment.yaml").read_text(encoding="utf-8")
    errors = _errors(_setup(tmp_path, text))
    schema = [e for e in errors if "must be of type integer" in e]
    assert [e.split(":")[0] + ":" + e.split(":")[1] for e in schema] == [
        "31: trial lr=0.1, nodes=x",
        "31: trial lr=0.2, nodes=x",
    ]
    result = check_paths([str(tmp_path)])
    assert len(result.builds[0].katib_trials) == 2  # the two nodes=1 trials were admitted
    assert [o.data["kind"] for o in _trial_objects(result.builds[0])].count("JobSet") == 2


def test_cli_trials_and_seed_add_samples(tmp_path: Path) -> None:
    """check --trials N --seed S: N seeded random trials besides the corners, the same for
    the same seed; a count out of range is a usage error (exit 2)."""
    _setup(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}

    def run(*flags: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "compiler", "check", *flags, str(tmp_path)],
            capture_output=True,
            text=True,
            env=env,
            check=False,
            timeout=600,
        )

    first = run("--trials", "3", "--seed", "1")
    assert first.returncode == 0, first.stderr
    assert "(the 3 costliest of 6 trials checked)" in first.stdout + first.stderr
    assert "checked 8 input objects and 6 rendered objects" in first.stdout
    assert run("--trials", "3", "--seed", "1").stdout == first.stdout
    assert run("--trials", "501").returncode == 2


def _batch_job_experiment(restart: str = "Never", **spec: Any) -> str:
    exp = _example()
    template = exp["spec"]["trialTemplate"]
    template["primaryContainerName"] = "training-container"
    container = {
        "name": "training-container",
        "image": "docker.io/kubeflowkatib/mxnet-mnist:v1",
        "command": ["python3", "/opt/mnist.py", "--lr=${trialParameters.learningRate}"],
        "args": ["--momentum=${trialParameters.momentum}"],
    }
    template["trialSpec"] = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "spec": {
            "template": {"spec": {"containers": [container], "restartPolicy": restart}},
            **spec,
        },
    }
    return yaml.safe_dump(exp, sort_keys=False)


def test_batch_job_trials_go_through_the_job_create_path(tmp_path: Path) -> None:
    """A batch Job template (no successCondition: Katib's defaulting fills it): each trial's
    Job as the API server validates it when Katib's trial controller creates it."""
    (tmp_path / "ok").mkdir()
    assert _errors(_setup(tmp_path / "ok", _batch_job_experiment())) == []
    (tmp_path / "bad").mkdir()
    errors = _errors(_setup(tmp_path / "bad", _batch_job_experiment("Always")))
    assert len(errors) == 3  # the corners of two doubles
    line = next(
        i
        for i, text in enumerate((tmp_path / "bad" / "experiment.yaml").read_text().splitlines(), 1)
        if "restartPolicy: Always" in text
    )
    assert errors[0].startswith(
        f'{line}: trial lr=0.01, momentum=0.5: Job.batch "torch-distributed-example-'
    )
    assert errors[0].endswith(
        'is invalid: spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"'
    )


def test_katib_refuses_a_batch_job_template_it_cannot_convert(tmp_path: Path) -> None:
    """Katib's webhook converts a Job template to Go's Job: a field Go has no place for is
    refused with Katib's message (the converted template included)."""
    errors = _errors(_setup(tmp_path, _batch_job_experiment(backoffLimt=3)))
    assert len(errors) == 1
    assert (
        'spec.trialTemplate: Invalid value: "": invalid spec.trialTemplate: unable to '
        "convert: /spec/backoffLimt - 3 to Job, converted template: "
        '{"kind":"Job","apiVersion":"batch/v1","metadata":{},"spec":{"template":'
    ) in errors[0]


def test_a_nas_experiment_is_checked_not_its_trials(tmp_path: Path) -> None:
    exp = _example()
    exp["spec"]["parameters"] = []
    exp["spec"]["algorithm"] = {"algorithmName": "enas"}
    exp["spec"]["nasConfig"] = {
        "graphConfig": {"numLayers": 8, "inputSizes": [32, 32, 3], "outputSizes": [10]},
        "operations": [{"operationType": "convolution", "parameters": []}],
    }
    exp["spec"]["trialTemplate"]["trialParameters"] = [
        {"name": "learningRate", "reference": "architecture"},
        {"name": "momentum", "reference": "nn_config"},
    ]
    (tmp_path / "nas").mkdir()
    result = check_paths([str(_setup(tmp_path / "nas", yaml.safe_dump(exp)))])
    assert [f.message for f in result.findings] == []
    assert result.builds[0].katib_trials == []
    assert any("nasConfig: Katib's enas suggestion makes each trial" in n for n in result.notes)
    exp["spec"]["parameters"] = _example()["spec"]["parameters"]
    (tmp_path / "both").mkdir()
    errors = _errors(_setup(tmp_path / "both", yaml.safe_dump(exp)))
    [both] = [e for e in errors if "only one of" in e]  # and the unknown references
    assert both.endswith(": only one of spec.parameters and spec.nasConfig can be specified")
    assert ': spec: Invalid value: {"parameters":[{"name":"lr",' in both


def test_a_mount_at_the_metrics_folder_breaks_the_primary_pod(tmp_path: Path) -> None:
    """Katib's webhook mounts its metrics volume at /var/log/katib in the primary
    container: a mount of the runtime's there makes every trial's primary Pod invalid."""
    root = _setup(tmp_path)
    runtime = (root / "runtime.yaml").read_text()
    container = "                    - name: node\n"
    assert container in runtime
    runtime = runtime.replace(
        container,
        container + "                      volumeMounts:\n"
        "                        - {name: logs, mountPath: /var/log/katib}\n",
        1,
    ).replace(
        "                  containers:\n",
        "                  volumes:\n                    - {name: logs, emptyDir: {}}\n"
        "                  containers:\n",
        1,
    )
    (root / "runtime.yaml").write_text(runtime)
    errors = _errors(root)
    assert len(errors) == 3, errors  # the corners of two doubles
    lines = (root / "experiment.yaml").read_text().splitlines()
    at = next(i for i, text in enumerate(lines, 1) if "primaryContainerName:" in text)
    assert all(e.startswith(f"{at}: trial ") for e in errors)  # no metricsCollectorSpec
    assert (
        "the primary Pod of replicated job node, with Katib's metrics collector: Pod "
        '"torch-distributed-example-'
    ) in errors[0]
    assert errors[0].endswith(
        'is invalid: spec.containers[0].volumeMounts[1].mountPath: Invalid value: "/var/log/katib": must be unique'
    )


def test_a_namespace_among_the_inputs_must_enable_katibs_pod_webhook(tmp_path: Path) -> None:
    """Katib refuses an Experiment in a namespace without the label that turns its pod
    webhook (the metrics collector) on; a Namespace among the inputs says which."""
    root = _setup(tmp_path)
    namespace = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: kubeflow\n"
    (root / "namespace.yaml").write_text(namespace)
    errors = _errors(root)
    assert errors == [
        '5: admission webhook "validator.experiment.katib.kubeflow.org" denied the request: '
        'Cannot create the Experiment "torch-distributed-example" in namespace "kubeflow": '
        'the namespace lacks label "katib.kubeflow.org/metrics-collector-injection: enabled"'
    ]
    labelled = (
        namespace + "  labels:\n    katib.kubeflow.org/metrics-collector-injection: enabled\n"
    )
    (root / "namespace.yaml").write_text(labelled)
    assert _errors(root) == []
