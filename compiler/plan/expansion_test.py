"""What a build's JobSets and Katib trials expand into (``render --expand``), and what a
diff's renders compare below each JobSet (``diff --expand``)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from compiler.errors import InputError
from compiler.model.build import Build
from compiler.model.objects import RenderedObject
from compiler.plan import driver
from compiler.plan.build_plan import plan_for_paths
from compiler.plan.expansion import (
    build_expansion,
    expanded_folder,
    interleaved,
    jobsets_expanded,
    renders_expanded,
    trial_expansion,
)
from compiler.upstream.artifacts import upstream

RUNTIME = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: torch-small}
spec:
  mlPolicy: {numNodes: 2, torch: {}}
  template:
    spec:
      replicatedJobs:
        - name: node
          template:
            metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
            spec:
              template:
                spec:
                  priorityClassName: urgent
                  containers: [{name: node, image: "pytorch/pytorch:2.7.1"}]
"""

PRIORITY_CLASS = """\
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: urgent}
value: 1000
"""

TRAINJOB = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {{namespace: research, name: {name}}}
spec: {{runtimeRef: {{name: torch-small}}}}
"""

EXPERIMENT = """\
apiVersion: kubeflow.org/v1beta1
kind: Experiment
metadata: {namespace: kubeflow, name: tune}
spec:
  parallelTrialCount: 2
  maxTrialCount: 2
  objective: {type: minimize, objectiveMetricName: loss}
  algorithm: {algorithmName: grid}
  parameters:
    - name: lr
      parameterType: categorical
      feasibleSpace: {list: ["0.01", "0.1"]}
  trialTemplate:
    primaryContainerName: node
    trialParameters: [{name: learningRate, reference: lr}]
    trialSpec:
      apiVersion: trainer.kubeflow.org/v1alpha1
      kind: TrainJob
      spec:
        runtimeRef: {name: torch-distributed}
        trainer:
          numNodes: 1
          image: python:3.12
          command: [python3, train.py, "--lr=${trialParameters.learningRate}"]
"""

EXPANDED = "trainc.dev/expanded"


def _build(folder: Path, files: dict[str, str]) -> Build:
    folder.mkdir()
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    build = driver.run(plan_for_paths([str(folder)]))
    assert [p.message for p in build.problems] == []
    return build


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> Build:
    """Two TrainJobs of a two-node runtime whose Pods name a PriorityClass of the inputs."""
    return _build(
        tmp_path_factory.mktemp("plain") / "in",
        {
            "runtime.yaml": RUNTIME,
            "priority.yaml": PRIORITY_CLASS,
            "a.yaml": TRAINJOB.format(name="a"),
            "b.yaml": TRAINJOB.format(name="b"),
        },
    )


@pytest.fixture(scope="module")
def katib(tmp_path_factory: pytest.TempPathFactory) -> Build:
    """A Katib Experiment of two trials on the upstream torch runtime."""
    folder = tmp_path_factory.mktemp("katib") / "in"
    folder.mkdir()
    runtime = upstream("v2.3.0").path("manifests/base/runtimes/torch_distributed.yaml")
    shutil.copy(runtime, folder / "runtime.yaml")
    (folder / "experiment.yaml").write_text(EXPERIMENT, encoding="utf-8")
    build = driver.run(plan_for_paths([str(folder)]))
    assert [p.message for p in build.problems] == []
    return build


def _rows(objects: list[RenderedObject]) -> list[tuple[str, str, str, str]]:
    """(TrainJob, kind, name, expanded annotation) of each object."""
    return [
        (
            f"{o.trainjob_namespace}/{o.trainjob_name}",
            o.data["kind"],
            o.data["metadata"].get("name") or o.data["metadata"]["generateName"],
            (o.data["metadata"].get("annotations") or {}).get(EXPANDED, "-"),
        )
        for o in objects
    ]


def test_jobsets_expanded_files_each_object_under_its_trainjob_marked_at_its_depth(
    plain: Build,
) -> None:
    assert _rows(jobsets_expanded(plain.outputs, "jobs")) == [
        ("research/a", "Job", "a-node-0", "jobs"),
        ("research/a", "Service", "a", "jobs"),
        ("research/b", "Job", "b-node-0", "jobs"),
        ("research/b", "Service", "b", "jobs"),
    ]
    pods = [r for r in _rows(jobsets_expanded(plain.outputs, "pods")) if r[1] == "Pod"]
    assert pods == [
        ("research/a", "Pod", "a-node-0-0-00000", "pods"),
        ("research/a", "Pod", "a-node-0-1-00000", "pods"),
        ("research/b", "Pod", "b-node-0-0-00000", "pods"),
        ("research/b", "Pod", "b-node-0-1-00000", "pods"),
    ]


def test_the_priority_classes_given_are_the_clusters(plain: Build) -> None:
    def priorities(classes: list[dict[str, Any]]) -> set[object]:
        pods = [o.data for o in jobsets_expanded(plain.outputs, "pods", classes)]
        return {pod["spec"].get("priority") for pod in pods if pod["kind"] == "Pod"}

    urgent = [m.data for m in plain.loaded.others if m.kind == "PriorityClass"]
    assert priorities(urgent) == {1000}
    # the build's expansion takes them from the inputs
    pods = [o.data for o in build_expansion(plain, ("pods",), False) if o.data["kind"] == "Pod"]
    assert {pod["spec"]["priority"] for pod in pods} == {1000}


def test_a_build_without_experiments_has_no_trials(plain: Build) -> None:
    assert build_expansion(plain, ("trials",), False) == []
    assert _rows(build_expansion(plain, ("trials", "jobs"), False)) == _rows(
        jobsets_expanded(plain.outputs, "jobs")
    )


def test_trials_are_filed_under_their_experiment_with_katibs_webhook_on_their_pods(
    katib: Build,
) -> None:
    notes: list[str] = []
    rows = _rows(build_expansion(katib, ("trials", "pods"), False, notes.append))
    assert {r[0] for r in rows} == {"kubeflow/tune"}
    assert {r[3] for r in rows} == {"trials"}
    kinds = [r[1] for r in rows]
    assert kinds == ["TrainJob", "JobSet", "Job", "Service", "Pod"] * 2
    assert notes == []
    trial = katib.katib_trials[0]
    pods = [
        o.data for o in trial_expansion(katib, trial, "pods", False, []) if o.data["kind"] == "Pod"
    ]
    [pod] = pods
    assert pod["metadata"]["labels"]["katib.kubeflow.org/trial"] == trial.manifest.name
    # without the webhook (a plain expansion of the same JobSet) there is no such label
    outputs = [o for o in katib.trial_outputs if o.summary.name == trial.manifest.name]
    [plain_pod] = [o.data for o in jobsets_expanded(outputs, "pods") if o.data["kind"] == "Pod"]
    assert "katib.kubeflow.org/trial" not in plain_pod["metadata"]["labels"]


def test_a_trial_without_depth_is_its_trainjob_and_objects_as_rendered_or_stored(
    katib: Build,
) -> None:
    trial = katib.katib_trials[0]
    rendered = trial_expansion(katib, trial, None, False, [])
    stored = trial_expansion(katib, trial, None, True, [])
    assert [o.data["kind"] for o in rendered] == ["TrainJob", "JobSet"]
    # as the server stores it: the CRD's defaults (here, a container port's protocol)
    [rendered_port] = _container(rendered[1].data)["ports"]
    [stored_port] = _container(stored[1].data)["ports"]
    assert "protocol" not in rendered_port
    assert stored_port["protocol"] == "TCP"
    # copies: marking them changed nothing of the build's
    assert EXPANDED not in (trial.manifest.data["metadata"].get("annotations") or {})


def _container(jobset: dict[str, Any]) -> dict[str, Any]:
    container: dict[str, Any] = jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"][
        "spec"
    ]["containers"][0]
    return container


def test_two_expanded_objects_on_one_path_are_refused(plain: Build) -> None:
    twice = Build(plain.plan)
    twice.loaded = plain.loaded
    twice.outputs = [o for o in plain.outputs if o.summary.name == "a"] * 2
    with pytest.raises(InputError, match="two rendered objects would be written to"):
        build_expansion(twice, ("jobs",), False)


def test_renders_expanded_puts_each_jobsets_objects_after_it_unmarked(plain: Build) -> None:
    jobset = next(o.rendered for o in plain.outputs if o.rendered.data["kind"] == "JobSet")
    other = RenderedObject("research", "x", {"kind": "ConfigMap", "metadata": {"name": "x"}})
    refused = RenderedObject(
        "research",
        "long",
        {**jobset.data, "metadata": {**jobset.data["metadata"], "name": "n" * 49}},
    )
    out = renders_expanded({"": [jobset, other, refused]}, "jobs")
    assert _rows(out[""]) == [
        ("research/a", "JobSet", "a", "-"),
        ("research/a", "Job", "a-node-0", "-"),
        ("research/a", "Service", "a", "-"),
        ("research/x", "ConfigMap", "x", "-"),
        ("research/long", "JobSet", "n" * 49, "-"),  # refused by the webhook: nothing below
    ]


def test_interleaved_puts_each_trainjobs_expansion_after_its_objects(plain: Build) -> None:
    expansion = jobsets_expanded(plain.outputs, "jobs")
    documents = interleaved(plain.objects, expansion)
    kinds = [(d["kind"], d["metadata"]["name"]) for d in documents]
    assert kinds == [
        ("JobSet", "a"),
        ("Job", "a-node-0"),
        ("Service", "a"),
        ("JobSet", "b"),
        ("Job", "b-node-0"),
        ("Service", "b"),
    ]
    # an expansion of a TrainJob with no object in the stream is left out
    assert (
        interleaved([o for o in plain.objects if o.trainjob_name == "b"], expansion)
        == (documents[3:])
    )


def test_expanded_folder_is_beside_the_output() -> None:
    assert expanded_folder(Path("deploy/rendered")) == Path("deploy/rendered.expanded")
