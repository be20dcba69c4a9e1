"""The context files of a render by chunks are loaded once per process, and forked
workers share the parent's load instead of loading them again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from compiler.apiserver.yaml_source import YamlStream
from compiler.emit.blobs import blob_store
from compiler.load import loader
from compiler.plan import chunks, context
from compiler.plan.build_plan import plan_for_paths

RUNTIME = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: plain}
spec:
  template:
    spec:
      replicatedJobs:
        - name: node
          template:
            metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
            spec:
              template:
                spec:
                  containers: [{name: node, image: "python:3.12"}]
"""

JOB = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {{name: job-{i}, namespace: team}}
spec: {{runtimeRef: {{name: plain}}}}
"""


@pytest.mark.parametrize("jobs", [1, 2])
def test_the_context_is_loaded_once_whatever_the_chunks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "runtimes.yaml").write_text(RUNTIME)
    for i in range(8):
        (repo / f"job-{i}.yaml").write_text(JOB.format(i=i))
    parsed = tmp_path / "parsed"  # one line per file parsed, by any process
    real = YamlStream

    def counting(text: Any, display: str, **options: Any) -> Any:
        with open(parsed, "a", encoding="utf-8") as out:
            out.write(Path(display).name + "\n")
        return real(text, display, **options)

    monkeypatch.setattr(loader, "YamlStream", counting)
    monkeypatch.setattr(chunks, "CHUNK_JOBS", 1)  # every file ends a chunk, about
    monkeypatch.setattr(context, "_LAST", [])
    plan = plan_for_paths([str(repo)])
    with blob_store(None, None, packed=True) as store:
        part = chunks.run_parts(plan, jobs=jobs, store=store, files=False)
    assert part is not None and part.chunks >= 4
    lines = parsed.read_text().splitlines()
    assert lines.count("runtimes.yaml") == 1
    assert sorted(n for n in lines if n != "runtimes.yaml") == [f"job-{i}.yaml" for i in range(8)]
    assert len(part.objects) == 8


def test_workers_share_the_context_the_parent_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The context alone comes from the render cache, the chunks do not: the parent still
    loads the context before the workers fork, once."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "runtimes.yaml").write_text(RUNTIME)
    for i in range(8):
        (repo / f"job-{i}.yaml").write_text(JOB.format(i=i))
    monkeypatch.setattr(chunks, "CHUNK_JOBS", 1)
    cache = tmp_path / "cache"
    with blob_store(cache, None) as store:
        assert chunks.run_parts(plan_for_paths([str(repo)]), cache=cache, store=store)
    for i in range(8):  # every chunk changed, the context alone not
        (repo / f"job-{i}.yaml").write_text(JOB.format(i=i).replace("job-", "changed-"))
    parsed = tmp_path / "parsed"
    real = YamlStream

    def counting(text: Any, display: str, **options: Any) -> Any:
        with open(parsed, "a", encoding="utf-8") as out:
            out.write(Path(display).name + "\n")
        return real(text, display, **options)

    monkeypatch.setattr(loader, "YamlStream", counting)
    monkeypatch.setattr(context, "_LAST", [])
    with blob_store(cache, None) as store:
        part = chunks.run_parts(plan_for_paths([str(repo)]), jobs=2, cache=cache, store=store)
    assert part is not None and part.rendered == part.chunks >= 4
    assert parsed.read_text().splitlines().count("runtimes.yaml") == 1


def test_check_is_cut_in_render_chunks(tmp_path: Path) -> None:
    """check's chunks are render's: a one-file change is checked again in a chunk of
    about :data:`~compiler.plan.chunks.CHUNK_JOBS` TrainJobs, not five times as many."""
    from compiler.plan.check_chunks import CHECK_CHUNK_JOBS

    files = [
        chunks.InputFile(f"jobs/{i:04d}.yaml", JOB.format(i=i).encode(), 1) for i in range(2000)
    ]
    rendered = chunks.chunk_files(files)
    assert chunks.chunk_files(files, CHECK_CHUNK_JOBS) == rendered
    assert len(rendered) >= 10
