from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from compiler.cli import main
from compiler.deliver.conftest import EXAMPLE
from compiler.deliver.stale import check_rendered, compare_tree, expected_files, read_tree
from compiler.emit.output import write_directory
from compiler.plan.build_plan import plan_for_paths
from compiler.plan.stages import compile_paths, run


@pytest.fixture
def inputs(tmp_path: Path) -> Path:
    root = tmp_path / "inputs"
    shutil.copytree(EXAMPLE / "runtimes", root / "runtimes")
    shutil.copytree(EXAMPLE / "jobs", root / "jobs")
    return root


def test_in_memory_files_equal_what_render_writes(inputs: Path, tmp_path: Path) -> None:
    result = compile_paths([str(inputs)])
    write_directory(result.objects, tmp_path / "out", result.secret_requirements)
    assert read_tree(tmp_path / "out") == expected_files(result.objects, result.secret_requirements)


def test_missing_extra_and_changed_files_are_listed(inputs: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert main(["render", str(inputs), "-o", str(out), "-q"]) == 0
    assert not check_rendered([run(plan_for_paths([str(inputs)]))], out, whole=True).stale
    (out / "vision/jobset.x-k8s.io_JobSet_smoke.yaml").write_text("stale\n")
    (out / "vision/scheduling.x-k8s.io_PodGroup_resnet.yaml").unlink()
    (out / "vision/old.yaml").write_text("kind: X\n")
    report = check_rendered([run(plan_for_paths([str(inputs)]))], out, whole=True)
    assert report.stale and report.exit_code == 1
    assert report.changed == ["vision/jobset.x-k8s.io_JobSet_smoke.yaml"]
    assert report.missing == ["vision/scheduling.x-k8s.io_PodGroup_resnet.yaml"]
    assert report.extra == ["vision/old.yaml"]
    assert "changed: vision/jobset.x-k8s.io_JobSet_smoke.yaml" in report.text()


def test_input_change_makes_the_tree_stale(inputs: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert main(["render", str(inputs), "-o", str(out), "-q"]) == 0
    assert main(["check", str(inputs), "--rendered", str(out)]) == 0
    runtime = inputs / "runtimes/torch-gang.yaml"
    runtime.write_text(runtime.read_text().replace("2.7.1", "2.8.0"))
    assert main(["check", str(inputs), "--rendered", str(out)]) == 1


def test_absent_directory_is_stale(tmp_path: Path) -> None:
    report = compare_tree(tmp_path / "nothing", {})
    assert report.stale and report.absent
