from __future__ import annotations

from pathlib import Path

import pytest

from compiler.emit.output import MARKER, stream_text, write_directory
from compiler.errors import InputError
from compiler.model.objects import RenderedObject


def _obj(kind: str, name: str, api: str = "jobset.x-k8s.io/v1alpha2") -> RenderedObject:
    return RenderedObject(
        "ns", "job", {"apiVersion": api, "kind": kind, "metadata": {"name": name}}
    )


def test_one_file_per_object_at_a_predictable_path(tmp_path: Path) -> None:
    out = tmp_path / "out"
    count = write_directory([_obj("JobSet", "job"), _obj("ConfigMap", "job-x", "v1")], out)
    assert count == 2
    assert (out / "ns" / "jobset.x-k8s.io_JobSet_job.yaml").is_file()
    assert (out / "ns" / "core_ConfigMap_job-x.yaml").is_file()
    assert (out / MARKER).is_file()


def test_rewrite_replaces_previous_output_whole(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_directory([_obj("JobSet", "old")], out)
    write_directory([_obj("JobSet", "new")], out)
    files = sorted(p.name for p in (out / "ns").iterdir())
    assert files == ["jobset.x-k8s.io_JobSet_new.yaml"]
    assert [p.name for p in tmp_path.iterdir()] == ["out"]  # no staging left behind


def test_failed_write_leaves_previous_output_untouched(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_directory([_obj("JobSet", "keep")], out)
    before = (out / "ns" / "jobset.x-k8s.io_JobSet_keep.yaml").read_text()
    unserialisable = RenderedObject(
        "ns",
        "job",
        {"apiVersion": "v1", "kind": "K", "metadata": {"name": "x"}, "spec": {"bad": object()}},
    )
    with pytest.raises(TypeError):
        write_directory([_obj("JobSet", "new"), unserialisable], out)
    assert (out / "ns" / "jobset.x-k8s.io_JobSet_keep.yaml").read_text() == before
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_refuses_to_replace_a_directory_trainc_did_not_write(tmp_path: Path) -> None:
    precious = tmp_path / "src"
    precious.mkdir()
    (precious / "main.py").write_text("x")
    with pytest.raises(InputError):
        write_directory([_obj("JobSet", "job")], precious)
    assert (precious / "main.py").read_text() == "x"


def test_stream_is_sorted_by_namespace_trainjob_kind_name() -> None:
    a = RenderedObject(
        "b", "j", {"apiVersion": "v1", "kind": "PodGroup", "metadata": {"name": "j"}}
    )
    b = RenderedObject(
        "a", "j", {"apiVersion": "v1", "kind": "PodGroup", "metadata": {"name": "j"}}
    )
    c = RenderedObject("a", "j", {"apiVersion": "v1", "kind": "JobSet", "metadata": {"name": "j"}})
    text = stream_text([a, b, c])
    assert text.index("kind: JobSet") < text.index("kind: PodGroup")
    assert text.count("---") == 2


def test_objects_that_would_be_one_object_in_the_cluster_are_an_error(tmp_path: Path) -> None:
    # e.g. an output overlay that renames two TrainJobs' JobSets to the same name
    out = tmp_path / "out"
    write_directory([_obj("JobSet", "keep")], out)
    first = RenderedObject("ns", "a", {"apiVersion": "v1", "kind": "K", "metadata": {"name": "x"}})
    second = RenderedObject("ns", "b", {"apiVersion": "v1", "kind": "K", "metadata": {"name": "x"}})
    with pytest.raises(InputError) as raised:
        write_directory([first, second], out)
    message = str(raised.value)
    assert "ns/core_K_x.yaml" in message
    assert "TrainJob ns/a" in message and "TrainJob ns/b" in message
    assert [p.name for p in (out / "ns").iterdir()] == ["jobset.x-k8s.io_JobSet_keep.yaml"]


def test_the_object_namespace_names_the_folder(tmp_path: Path) -> None:
    moved = RenderedObject(
        "ns", "job", {"apiVersion": "v1", "kind": "K", "metadata": {"name": "x", "namespace": "o"}}
    )
    write_directory([moved], tmp_path / "out")
    assert (tmp_path / "out" / "o" / "core_K_x.yaml").is_file()


@pytest.mark.parametrize(
    "metadata",
    [
        {"name": "x", "namespace": ".."},
        {"name": "../../x"},
        {"name": "a/b"},
    ],
)
def test_names_that_would_leave_the_output_directory_are_an_error(
    tmp_path: Path, metadata: dict[str, str]
) -> None:
    bad = RenderedObject("ns", "job", {"apiVersion": "v1", "kind": "K", "metadata": metadata})
    with pytest.raises(InputError, match="must be Kubernetes names"):
        write_directory([bad], tmp_path / "out")
    assert sorted(p.name for p in tmp_path.iterdir()) == []
