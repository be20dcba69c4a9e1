"""Issue 27's table, end to end: each row of ``tests/live/fixtures/workload-refusals.yaml``
(the real kube-apiserver's answer to the Job the JobSet controller makes, recorded by
``python -m tests.live.workload_refusals``) written into a runtime, rendered with
``trainc render``: exit 2, the API server's message word for word as the JobSet
controller's event says it, each field error located at the runtime's line that wrote
the field. The valid controls and a 48-character name render; 49 and 63 characters are
the JobSet webhook's denial as the Trainer's event reported it."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from compiler.upstream.artifacts import upstream
from tests.support import trainc_main

REPO = Path(__file__).resolve().parents[2]
FIXTURE = yaml.safe_load((REPO / "tests/live/fixtures/workload-refusals.yaml").read_text())
ROWS = FIXTURE["rows"]
REFUSED = [row for row in ROWS if row["job"]["code"] != 201]
CONTROLS = [row for row in ROWS if row["job"]["code"] == 201]
NAMESPACE = FIXTURE["namespace"]
TRAINJOB = "bare-torch"  # golden torch-defaults' TrainJob: the fixture's Job is bare-torch-node-0
# the runtime's pod spec, as the JobSet's pod template holds it
POD_SPEC = ("spec", "template", "spec", "replicatedJobs", 0, "template", "spec", "template", "spec")
_INDEX = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def _merge(target: dict[str, Any], changes: dict[str, Any]) -> None:
    """As the fixture's rows are applied: dicts merge, lists are appended."""
    for key, value in changes.items():
        if isinstance(value, dict) and isinstance(target.get(key), dict):
            _merge(target[key], value)
        elif isinstance(value, list) and isinstance(target.get(key), list):
            target[key] = target[key] + copy.deepcopy(value)
        else:
            target[key] = copy.deepcopy(value)


def _runtime(container: dict[str, Any], pod: dict[str, Any]) -> dict[str, Any]:
    """torch-defaults' runtime (the pinned torch_distributed) with a row's change."""
    path = upstream("v2.3.0").path("manifests/base/runtimes/torch_distributed.yaml")
    runtime = yaml.safe_load(path.read_text())
    pod_spec: Any = runtime
    for key in POD_SPEC:
        pod_spec = pod_spec[key]
    _merge(pod_spec["containers"][0], container)
    _merge(pod_spec, pod)
    return dict(runtime)


def _inputs(tmp_path: Path, row: dict[str, Any], name: str = TRAINJOB) -> tuple[Path, Path]:
    folder = tmp_path / "in"
    folder.mkdir()
    runtime = folder / "runtime.yaml"
    runtime.write_text(yaml.safe_dump(_runtime(row["container"], row["pod"]), sort_keys=False))
    trainjob = {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {"runtimeRef": {"name": "torch-distributed"}},
    }
    (folder / "job.yaml").write_text(yaml.safe_dump(trainjob, sort_keys=False))
    return folder, runtime


def _key_position(path: Path, keys: tuple[str | int, ...]) -> tuple[int, int]:
    """Line and column (1-based) of the deepest key of ``keys`` the YAML file has: where
    the field was written, or, for a field the API server requires and nobody wrote, the
    field that should hold it."""
    node = yaml.compose(path.read_text())
    assert node is not None, path
    position = (node.start_mark.line + 1, node.start_mark.column + 1)
    for key in keys:
        if isinstance(node, yaml.MappingNode):
            found = [(k, v) for k, v in node.value if k.value == key]
            if not found:
                break
            key_node, node = found[0]
            position = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int):
            node = node.value[key]
            position = (node.start_mark.line + 1, node.start_mark.column + 1)
        else:
            break
    return position


def _runtime_keys(job_field: str) -> tuple[str | int, ...]:
    """A Job field (``spec.template.spec.containers[0].image``) as a path in the runtime."""
    parts: list[str | int] = [
        int(index) if index else name for name, index in _INDEX.findall(job_field)
    ]
    assert parts[:3] == ["spec", "template", "spec"], job_field
    return (*POD_SPEC, *parts[3:])


def _render(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    return trainc_main(capsys, "render", *args, "-o", "-")


@pytest.mark.parametrize("row", REFUSED, ids=lambda row: str(row["name"]))
def test_each_row_is_the_api_servers_refusal_at_the_runtime(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], row: dict[str, Any]
) -> None:
    folder, runtime = _inputs(tmp_path, row)
    code, out, err = _render(capsys, str(folder))
    assert code == 2, err
    assert out == ""
    job = FIXTURE["job"]
    event = f'job "{job}" creation failed with error: {row["job"]["message"]}'
    lines = err.splitlines()
    assert any(f"TrainJob {NAMESPACE}/{TRAINJOB}: {event}" in line for line in lines), err
    for cause in row["job"]["causes"]:
        line, column = _key_position(runtime, _runtime_keys(cause["field"]))
        where = f"{runtime}:{line}:{column}: Job {NAMESPACE}/{job}: "
        assert f"{where}{cause['field']}: {cause['message']}" in lines, err


@pytest.mark.parametrize("row", CONTROLS, ids=lambda row: str(row["name"]))
def test_the_valid_controls_render(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], row: dict[str, Any]
) -> None:
    folder, _ = _inputs(tmp_path, row)
    code, out, err = _render(capsys, str(folder))
    assert code == 0, err
    assert "kind: JobSet" in out


@pytest.mark.parametrize(
    "named", FIXTURE["trainJobNames"], ids=lambda named: f"{named['nameLength']}-characters"
)
def test_trainjob_names_as_the_cluster_answered(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], named: dict[str, Any]
) -> None:
    name = "t" * named["nameLength"]
    folder, _ = _inputs(tmp_path, {"container": {}, "pod": {}}, name)
    code, _, err = _render(capsys, str(folder))
    if named["jobSetCreated"]:
        assert code == 0, err
        return
    assert code == 2, err
    job_file = folder / "job.yaml"
    line, column = _key_position(job_file, ("metadata", "name"))
    for event in named["events"]:
        assert f"{job_file}:{line}:{column}: TrainJob {NAMESPACE}/{name}: {event}" in err, err


TOLERATION_ROW = next(row for row in REFUSED if row["name"] == "toleration-exists-with-value")
OVERLAY = """\
apiVersion: trainc.dev/v1alpha1
kind: Overlay
metadata: {name: platform}
layer: cluster
patches:
  - target: {kind: JobSet}
    patch:
      spec:
        replicatedJobs:
          - name: node
            template:
              spec:
                template:
                  spec:
                    tolerations:
                      - {key: nvidia.com/gpu, operator: Exists, value: present}
"""


def test_a_cluster_overlay_that_adds_the_bad_toleration_is_located_at_its_patch(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 27's toleration row, the toleration written by a cluster overlay."""
    folder, _ = _inputs(tmp_path, {"container": {}, "pod": {}})
    overlay = tmp_path / "platform.yaml"
    overlay.write_text(OVERLAY)
    project = tmp_path / "trainc.yaml"
    project.write_text(
        f"inputs:\n  runtimes: [{folder}/runtime.yaml]\n  jobs: [{folder}/job.yaml]\n"
        "output: rendered\nclusters:\n  - name: prod\n    trainer: v2.3.0\n"
        f"    overlays: [{overlay}]\n"
    )
    code, _, err = _render(capsys, "--project", str(project))
    assert code == 2, err
    job = FIXTURE["job"]
    event = f'job "{job}" creation failed with error: {TOLERATION_ROW["job"]["message"]}'
    assert event in err
    cause = TOLERATION_ROW["job"]["causes"][0]
    keys = ("patches", 0, "patch", "spec", "replicatedJobs", 0, "template", "spec", "template")
    line, _ = _key_position(overlay, (*keys, "spec", "tolerations", 0))
    assert f"{overlay}:{line}:" in err and f"{cause['field']}: {cause['message']}" in err, err
    located = [entry for entry in err.splitlines() if entry.startswith(f"{overlay}:{line}:")]
    assert any(cause["message"] in entry for entry in located), err
