"""Provenance on a small torch runtime + TrainJob (testdata/): real origins, real lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compiler.cli import main
from compiler.deliver.explain import ObjectProvenance, explain, trace_result
from compiler.plan.stages import compile_paths
from compiler.provenance.trace import FieldOrigin, format_field_path, parse_field_path

TESTDATA = Path(__file__).parent / "testdata"
POD = "spec.replicatedJobs[name=node].template.spec.template.spec"
NODE = f"{POD}.containers[name=node]"


def _line(text: str, file: str) -> int:
    """The 1-based line of the first line of testdata/``file`` containing ``text``."""
    lines = (TESTDATA / file).read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


@pytest.fixture(scope="module")
def traced() -> dict[str, ObjectProvenance]:
    return trace_result(compile_paths([str(TESTDATA)]))


def _origin(traced: dict[str, ObjectProvenance], obj: str, path: str) -> FieldOrigin:
    return traced[obj].fields[path]


def test_runtime_patch_overrides_the_runtime_node_selector(
    traced: dict[str, ObjectProvenance],
) -> None:
    origin = _origin(traced, "JobSet/team-a/resnet", f"{POD}.nodeSelector.disk")
    assert (origin.layer, origin.value) == ("runtimePatch", "ssd")
    assert origin.label == "runtimePatch[0] manager=example.com/placement"
    assert origin.source is not None
    assert origin.source.line == _line("disk: ssd", "trainjob.yaml")
    assert origin.source.file is not None and origin.source.file.endswith("trainjob.yaml")
    (runtime,) = origin.overridden
    assert (runtime.layer, runtime.value) == ("runtime", "hdd")
    assert runtime.source is not None and runtime.source.line == _line("disk: hdd", "runtime.yaml")


def test_image_set_by_trainer_image_over_the_runtime(traced: dict[str, ObjectProvenance]) -> None:
    origin = _origin(traced, "JobSet/team-a/resnet", f"{NODE}.image")
    assert (origin.layer, origin.label) == ("trainjob", "TrainJob spec.trainer.image")
    assert origin.source is not None and origin.source.path == "spec.trainer.image"
    assert origin.source.line == _line("image: team/resnet:2", "trainjob.yaml")
    assert [(o.layer, o.value) for o in origin.overridden] == [("runtime", "runtime/torch:1")]


def test_pet_nnodes_derived_from_num_nodes(traced: dict[str, ObjectProvenance]) -> None:
    origin = _origin(traced, "JobSet/team-a/resnet", f"{NODE}.env[name=PET_NNODES].value")
    assert (origin.layer, origin.label, origin.derived, origin.value) == (
        "plugin",
        "plugin Torch",
        True,
        "4",
    )
    assert [(i.path, i.line, i.value) for i in origin.inputs] == [
        ("spec.trainer.numNodes", _line("numNodes: 4", "trainjob.yaml"), 4)
    ]
    # a constant of the plugin depends on no input
    port = _origin(traced, "JobSet/team-a/resnet", f"{NODE}.env[name=PET_MASTER_PORT].value")
    assert port.derived and port.inputs == ()


def test_min_resources_derived_from_requests_and_count(
    traced: dict[str, ObjectProvenance],
) -> None:
    origin = _origin(traced, "PodGroup/team-a/resnet", "spec.minResources.cpu")
    assert origin.value == "8" and origin.derived and origin.label == "plugin CoScheduling"
    paths = {i.path for i in origin.inputs}
    assert "spec.trainer.numNodes" in paths
    assert f"spec.template.{NODE}.resources.requests.cpu" in paths
    timeout = _origin(traced, "PodGroup/team-a/resnet", "spec.scheduleTimeoutSeconds")
    assert not timeout.derived and timeout.source is not None
    assert timeout.source.path == "spec.podGroupPolicy.coscheduling.scheduleTimeoutSeconds"


def test_parallelism_overrides_the_builder_value(traced: dict[str, ObjectProvenance]) -> None:
    origin = _origin(
        traced, "JobSet/team-a/resnet", "spec.replicatedJobs[name=node].template.spec.parallelism"
    )
    assert origin.value == 4 and origin.label == "plugin Torch"
    assert "spec.trainer.numNodes" in {i.path for i in origin.inputs}
    assert [o.value for o in origin.overridden] == [1]


def test_every_leaf_of_every_object_has_an_origin(traced: dict[str, ObjectProvenance]) -> None:
    from compiler.provenance.trace import _walk

    for entry in traced.values():
        assert {format_field_path(k) for k, _, _ in _walk(entry.data)} == set(entry.fields)


def test_explain_accepts_indices_and_prints_the_chain(
    traced: dict[str, ObjectProvenance],
) -> None:
    text = explain(
        traced,
        "JobSet/resnet",
        "spec.replicatedJobs[0].template.spec.template.spec.nodeSelector",
    )
    assert "set by runtimePatch[0] manager=example.com/placement at" in text
    assert f"trainjob.yaml:{_line('disk: ssd', 'trainjob.yaml')}:" in text
    assert '"hdd" set by ClusterTrainingRuntime torch-small at' in text


def test_field_path_round_trip() -> None:
    text = f"{NODE}.env[name=PET_NNODES].value"
    assert format_field_path(parse_field_path(text)) == text
    labels = 'metadata.labels["a.b/c"]'
    assert format_field_path(parse_field_path(labels)) == labels


def test_cli_explain_and_side_file_leave_manifests_unchanged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["render", str(TESTDATA)]) == 0
    plain = capsys.readouterr().out
    side = tmp_path / "provenance.json"
    assert main(["render", str(TESTDATA), "--provenance", str(side)]) == 0
    assert capsys.readouterr().out == plain
    document = json.loads(side.read_text())
    nnodes = document["objects"]["JobSet/team-a/resnet"][f"{NODE}.env[name=PET_NNODES].value"]
    assert nnodes["inputs"][0]["path"] == "spec.trainer.numNodes"
    assert (
        main(["explain", str(TESTDATA), "--object", "PodGroup/team-a/resnet", "spec.minMember"])
        == 0
    )
    assert "derived by plugin CoScheduling from:" in capsys.readouterr().out
    assert main(["explain", str(TESTDATA), "--object", "JobSet/team-a/resnet", "spec.nope"]) == 2
