"""Rendering by chunks (cache, -j N, streaming) gives the bytes a whole render gives.

A project of two clusters, overlays with locks and a namespace-only patch, a policy and
several job files is rendered once into the render cache; then each kind of input is
changed in turn and the render that reuses the cache (always into one output folder, so
that it is updated in place where it can be) is compared, byte for byte (output tree,
stdout, stderr, exit code), with a whole render of the same inputs done without the
chunk machinery at all.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from compiler.cli import main
from compiler.emit import blobs
from compiler.emit import tree as tree_module
from compiler.model.parts import PartBuild
from compiler.plan import chunks as incremental

REPO = Path(__file__).resolve().parents[1]
in_place: list[bool] = []  # per output folder the last cached render wrote: in place?

JOB = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: {name}
  namespace: {namespace}
spec:
  runtimeRef: {{name: {runtime}}}
  trainer:
    numNodes: {nodes}
    env:
      - {{name: RUN, value: "{name}"}}
"""

MPI_RUNTIME = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: mpi}
spec:
  mlPolicy: {numNodes: 1, mpi: {numProcPerNode: 1, runLauncherAsNode: true}}
  template:
    spec:
      replicatedJobs:
        - name: launcher
          template:
            metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
            spec:
              template:
                spec:
                  containers:
                    - name: node
                      image: registry.prod.example.com/openmpi:0.6.0
        - name: node
          template:
            spec:
              template:
                spec:
                  containers:
                    - name: node
                      image: registry.prod.example.com/openmpi:0.6.0
"""

AUDIO_OVERLAY = """\
apiVersion: trainc.dev/v1alpha1
kind: Overlay
metadata: {name: audio-only}
layer: cluster
patches:
  - target: {kind: TrainJob, namespace: audio}
    patch:
      metadata:
        labels: {team: audio}
"""

# a namespace overlay of a namespace with no TrainJobs: its patch matches nothing
LLM_OVERLAY = """\
apiVersion: trainc.dev/v1alpha1
kind: Overlay
metadata: {name: llm-team, namespace: llm}
layer: namespace
patches:
  - target: {kind: JobSet}
    patch:
      metadata:
        labels: {example.com/cost-centre: llm-research}
"""


# a Katib Experiment among the job files: passed through, its trials checked, in its chunk
EXPERIMENT = """\
apiVersion: kubeflow.org/v1beta1
kind: Experiment
metadata: {name: tune, namespace: vision}
spec:
  maxTrialCount: 4
  objective: {type: minimize, objectiveMetricName: loss}
  algorithm: {algorithmName: grid}
  parameters:
    - {name: lr, parameterType: categorical, feasibleSpace: {list: ["0.1", "0.2"]}}
  trialTemplate:
    primaryContainerName: node
    trialParameters:
      - {name: lr, reference: lr}
    trialSpec:
      apiVersion: trainer.kubeflow.org/v1alpha1
      kind: TrainJob
      spec:
        runtimeRef: {name: torch-gang}
        trainer:
          numNodes: 1
          env:
            - {name: LR, value: "${trialParameters.lr}"}
"""


def job_file(index: int) -> str:
    namespace = "audio" if index == 3 else "vision"
    return "---\n".join(
        JOB.format(
            name=f"job-{index}-{k}",
            namespace=namespace,
            runtime="mpi" if k == 1 else "torch-gang",
            nodes=1 + (index + k) % 3,
        )
        for k in range(2)
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(REPO / "example" / "runtimes", root / "runtimes")
    (root / "runtimes" / "mpi.yaml").write_text(MPI_RUNTIME)
    shutil.copytree(REPO / "overlays", root / "overlays")
    (root / "overlays" / "production" / "audio.yaml").write_text(AUDIO_OVERLAY)
    (root / "overlays" / "staging" / "llm.yaml").write_text(LLM_OVERLAY)
    shutil.copytree(REPO / "policies" / "required-labels", root / "policies" / "required-labels")
    (root / "jobs").mkdir()
    for index in range(6):
        (root / "jobs" / f"jobs-{index}.yaml").write_text(job_file(index))
    project = (REPO / "example" / "trainc.yaml").read_text()
    project = project.replace("../overlays/", "overlays/").replace(
        "    overlays: [overlays/production]\n",
        "    overlays: [overlays/production]\n    policies: [policies/required-labels]\n",
    )
    (root / "trainc.yaml").write_text(project)
    return root


Outcome = tuple[int, str, str, dict[str, bytes]]


def tree(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def render(capsys: pytest.CaptureFixture[str], project: Path, out: Path, *flags: str) -> Outcome:
    capsys.readouterr()
    code = main(["render", "--project", str(project / "trainc.yaml"), "-o", str(out), *flags])
    captured = capsys.readouterr()
    files = tree(out) if out.is_dir() and out.name != "-" else {}
    return code, captured.out.replace(str(out), "OUT"), captured.err, files


Parts = list["PartBuild | None"]


@pytest.fixture
def renders(
    project: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> Callable[[str], tuple[Outcome, Outcome, Outcome, Parts]]:
    """(whole render, chunked from the cache with -j 2, chunked without a cache -j 1, the
    cached run's builds by chunks: None where a plan had to be rendered whole)."""
    monkeypatch.setattr(incremental, "CHUNK_JOBS", 1)  # one job file per chunk
    monkeypatch.setattr(incremental, "render_cache_dir", lambda: tmp_path / "cache")
    upstream = tmp_path / "upstream-manifest.json"
    upstream.write_text("{}")
    monkeypatch.setattr(incremental, "_upstream_files", lambda version: [upstream])
    real_run_parts = incremental.run_parts
    real_write_tree = tree_module.write_tree
    parts: Parts = []

    def recorded(*args: object, **kwargs: object) -> PartBuild | None:
        part = real_run_parts(*args, **kwargs)  # type: ignore[arg-type]
        parts.append(part)
        return part

    def write_tree(*args: object, **kwargs: object) -> bool:
        updated = real_write_tree(*args, **kwargs)  # type: ignore[arg-type]
        in_place.append(updated)
        return updated

    monkeypatch.setattr(tree_module, "write_tree", write_tree)

    def run(label: str) -> tuple[Outcome, Outcome, Outcome, Parts]:
        monkeypatch.setattr(incremental, "run_parts", lambda *a, **k: None)
        whole = render(capsys, project, tmp_path / f"whole-{label}")
        monkeypatch.setattr(incremental, "run_parts", recorded)
        parts.clear()
        in_place.clear()
        # one output folder for every change: what it held is updated in place
        cached = render(capsys, project, tmp_path / "cached", "-j", "2")
        seen = list(parts)
        written = list(in_place)  # the cached render's folders only
        fresh = render(capsys, project, tmp_path / f"fresh-{label}", "-j", "1", "--no-cache")
        in_place[:] = written
        return whole, cached, fresh, seen

    return run


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1))


CHANGES: list[tuple[str, Callable[[Path], None]]] = [
    ("trainjob", lambda p: edit(p / "jobs" / "jobs-1.yaml", 'value: "job-1-0"', 'value: "x"')),
    ("new job file", lambda p: (p / "jobs" / "jobs-9.yaml").write_text(job_file(9))),
    ("removed job file", lambda p: (p / "jobs" / "jobs-2.yaml").unlink()),
    ("runtime", lambda p: edit(p / "runtimes" / "mpi.yaml", "openmpi:0.6.0", "openmpi:0.7.0")),
    (
        "overlay",
        lambda p: edit(p / "overlays" / "production" / "platform.yaml", "86400", "3600"),
    ),
    (
        "lock",
        lambda p: edit(
            p / "overlays" / "production" / "platform.yaml",
            "prefix: registry.prod.example.com/\n  - path: spec.initContainers",
            "prefix: registry.other.example.com/\n  - path: spec.initContainers",
        ),
    ),
    (
        "policy",
        lambda p: edit(
            next((p / "policies" / "required-labels").glob("*.yaml")), "team", "owner-team"
        ),
    ),
    (
        "trainc.yaml (namespace, schedulers, GitOps)",
        lambda p: edit(
            p / "trainc.yaml",
            "    schedulers: [coscheduling, kueue]\n    overlays: [overlays/staging]",
            "    schedulers: [coscheduling]\n    gitops: {syncWaves: true, kustomization: true}\n"
            "    overlays: [overlays/staging]",
        ),
    ),
    # the upstream artifacts of the emulated version (here a stand-in file: the test
    # cannot fetch another Trainer release)
    ("upstream", lambda p: (p.parent / "upstream-manifest.json").write_text('{"v": 2}')),
    # another emulated Trainer release on one cluster: its own artifacts and gates
    (
        "trainer release",
        lambda p: edit(
            p / "trainc.yaml",
            "  - name: staging\n    trainer: v2.3.0",
            "  - name: staging\n    trainer: v2.2.0",
        ),
    ),
    ("experiment", lambda p: (p / "jobs" / "tune.yaml").write_text(EXPERIMENT)),
    ("an error", lambda p: edit(p / "jobs" / "jobs-4.yaml", "numNodes: ", "numNodes: -")),
]


def test_every_kind_of_change_renders_as_a_whole_render_does(
    project: Path, renders: Callable[[str], tuple[Outcome, Outcome, Outcome, Parts]]
) -> None:
    whole, cached, fresh, parts = renders("start")
    assert whole[0] == 0, whole[2]
    assert len(whole[3]) > 20  # objects of both clusters
    # a patch that matches nothing in any chunk (overlay llm-team) is said once
    assert whole[2].count("matches no output object in namespace llm") == 1
    assert cached == whole and fresh == whole
    assert [p is not None and p.chunks for p in parts] == [6, 6]
    for label, change in CHANGES:
        change(project)
        before = cached[3]
        whole, cached, fresh, parts = renders(label.split()[0])
        assert fresh == whole, label
        if label == "an error":
            assert cached[:3] == whole[:3]
            assert cached[3] == before  # the folder written before is left as it was
            assert parts == [None]  # rendered whole: the error names the place
            continue
        assert cached == whole, label
        assert all(p is not None for p in parts), label
        if label == "trainjob":  # the changed file alone, in each cluster
            assert [p.rendered for p in parts if p is not None] == [1, 1]
            assert in_place == [True]  # its few files replaced in the folder written before
        if label == "experiment":  # passed through, in one chunk of its own
            assert [p.rendered for p in parts if p is not None] == [1, 1]
            assert "production/vision/kubeflow.org_Experiment_tune.yaml" in whole[3], label
        if label in ("runtime", "overlay", "upstream", "trainer release"):
            assert sum(p.rendered for p in parts if p is not None) >= 5, label
    assert whole[0] == 2 and "jobs-4.yaml" in whole[2]  # the last change is an error


def test_stdout_and_single_cluster_as_a_whole_render(
    project: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(incremental, "CHUNK_JOBS", 1)
    monkeypatch.setattr(incremental, "render_cache_dir", lambda: tmp_path / "cache")
    real_run_parts = incremental.run_parts
    outcomes = []
    for mode in ("whole", "cold", "warm"):
        monkeypatch.setattr(
            incremental, "run_parts", (lambda *a, **k: None) if mode == "whole" else real_run_parts
        )
        for flags in (["-o", "-"], ["--cluster", "staging", "-o", str(tmp_path / "o")]):
            capsys.readouterr()
            code = main(["render", "--project", str(project / "trainc.yaml"), "-j", "2", *flags])
            captured = capsys.readouterr()
            files = tree(tmp_path / "o") if "-" not in flags else {}
            outcomes.append((mode, code, captured.out, captured.err, files))
    by_mode = {m: [o[1:] for o in outcomes if o[0] == m] for m in ("whole", "cold", "warm")}
    assert by_mode["whole"][0][1].startswith("# cluster: production\n")
    assert by_mode["cold"] == by_mode["whole"]
    assert by_mode["warm"] == by_mode["whole"]


def test_chunks_are_cut_by_file_names_and_keep_input_order() -> None:
    files = [incremental.InputFile(f"jobs/{i:03d}.yaml", b"", trainjobs=5) for i in range(200)]
    chunks = incremental.chunk_files(files)
    assert [f for chunk in chunks for f in chunk] == files
    assert 5 <= len(chunks) <= 25  # about 100 TrainJobs each (20 files of 5)
    # a new file moves no boundary but its own
    more = incremental.chunk_files(
        [*files[:50], incremental.InputFile("jobs/050a.yaml", b"", 5), *files[50:]]
    )
    assert sum(1 for chunk in chunks if chunk not in more) <= 1


def test_context_files_are_those_not_made_of_trainjobs_only() -> None:
    classify = incremental._classify
    assert classify("a", b"kind: TrainJob\n---\nkind: TrainJob # x\n").trainjobs == 2
    assert classify("a", b"kind: TrainJob\n---\nkind: ClusterTrainingRuntime\n").trainjobs == 0
    assert classify("a", b"{kind: TrainJob}\n").trainjobs == 0
    assert classify("a", b'kind: "TrainJob"\n').trainjobs == 0
    assert classify("a", b"x: 1\r\nkind: TrainJob\r\n").trainjobs == 1
    assert classify("a", b"kind: TrainJob").trainjobs == 1
    assert classify("a", b"spec:\n  kind: Other\nkind: TrainJob\n").trainjobs == 1


@pytest.mark.parametrize("format", ["text", "json", "sarif", "junit"])
def test_check_by_chunks_reports_as_a_whole_check(
    project: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    format: str,
) -> None:
    from compiler.plan import check_chunks as check_parts

    monkeypatch.setattr(check_parts, "CHECK_CHUNK_JOBS", 1)
    monkeypatch.setattr(incremental, "render_cache_dir", lambda: tmp_path / "cache")
    real = check_parts.check_parts
    parts: list[object] = []

    def recorded(*args: object) -> object:
        result = real(*args)  # type: ignore[arg-type]
        parts.append(result)
        return result

    # a policy finding on some TrainJobs, a warning on others (staging has no Kueue)
    edit(
        project / "trainc.yaml",
        "schedulers: [coscheduling, kueue]\n    overlays: [overlays/staging]",
        "schedulers: [coscheduling]\n    overlays: [overlays/staging]",
    )
    outcomes = []
    for mode in ("whole", "-j 2", "-j 3"):
        monkeypatch.setattr(
            check_parts, "check_parts", (lambda *a: None) if mode == "whole" else recorded
        )
        capsys.readouterr()
        jobs = [] if mode == "whole" else mode.split()
        code = main(["check", "--project", str(project / "trainc.yaml"), "--format", format, *jobs])
        captured = capsys.readouterr()
        outcomes.append((code, captured.out, captured.err))
    assert outcomes[0][0] == 1, outcomes[0]  # required-labels: the jobs have no cost-center
    assert outcomes[1] == outcomes[0]
    assert outcomes[2] == outcomes[0]
    assert len(parts) == 4 and all(p is not None for p in parts)  # 2 clusters, 2 runs
    monkeypatch.setattr(check_parts, "check_parts", recorded)
    assert main(["check", "--project", str(project / "trainc.yaml"), "-j", "1"]) == 1
    assert len(parts) == 4  # -j 1 checks whole


def test_an_unusable_render_cache_renders_without_it(
    project: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A cache folder that cannot be made (here below a regular file; in a read-only
    image, a read-only one) is skipped: the render is the one without a cache."""
    monkeypatch.setattr(incremental, "CHUNK_JOBS", 1)
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("TRAINC_RENDER_CACHE", str(blocker / "render"))
    assert incremental.writable_render_cache() is None
    cached = render(capsys, project, tmp_path / "out", "-j", "2")
    fresh = render(capsys, project, tmp_path / "out", "-j", "2", "--no-cache")
    assert cached == fresh and cached[0] == 0


def test_check_from_the_cache_reports_as_a_whole_check(
    project: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``check -j 2`` keeps each chunk's findings in the render cache; after each kind
    of change (and a CUE policy edit) its report is the whole check's, byte for byte, and
    an edited TrainJob file is the one chunk checked again."""
    from compiler.plan import check_chunks as check_parts

    if shutil.which("cue") is None and not _cue_installed():
        pytest.fail(
            "the pinned cue CLI is not installed (`make setup` installs it; `make test` runs setup first)",
            pytrace=False,
        )
    shutil.copytree(REPO / "policies" / "gang-podgroup", project / "policies" / "gang-podgroup")
    edit(
        project / "trainc.yaml",
        "policies: [policies/required-labels]",
        "policies: [policies/required-labels, policies/gang-podgroup]",
    )
    monkeypatch.setattr(check_parts, "CHECK_CHUNK_JOBS", 1)
    monkeypatch.setattr(incremental, "render_cache_dir", lambda: tmp_path / "cache")
    upstream = tmp_path / "upstream-manifest.json"
    upstream.write_text("{}")
    monkeypatch.setattr(incremental, "_upstream_files", lambda version: [upstream])
    real_check_chunk = check_parts._check_chunk
    checked: list[int] = []

    def check_chunk(*args: object) -> object:
        checked.append(1)
        return real_check_chunk(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(check_parts, "_check_chunk", check_chunk)
    real_check_parts = check_parts.check_parts

    def check(mode: str) -> tuple[int, str, str]:
        monkeypatch.setattr(
            check_parts, "check_parts", (lambda *a: None) if mode == "whole" else real_check_parts
        )
        capsys.readouterr()
        flags = {"whole": ["-j", "1"], "cached": ["-j", "2"], "fresh": ["-j", "2", "--no-cache"]}
        code = main(["check", "--project", str(project / "trainc.yaml"), *flags[mode]])
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    cue_change = (
        "cue policy",
        lambda p: edit(
            p / "policies" / "gang-podgroup" / "gang-podgroup.cue", "must be gang", "are to be gang"
        ),
    )
    for label, change in [("start", lambda p: None), *CHANGES[:-1], cue_change, CHANGES[-1]]:
        change(project)
        whole = check("whole")
        checked.clear()
        cached = check("cached")
        assert cached == whole, label
        assert check("fresh") == whole, label
        if label == "trainjob":  # one chunk again in each cluster (the rest from the cache)
            assert len(checked) == 2, checked
        if label == "cue policy":  # its findings say what the edited policy says
            assert "are to be gang-scheduled" in whole[1]
    assert whole[0] == 2 and "jobs-4.yaml" in whole[1]  # the last change is an error


def _cue_installed() -> bool:
    from compiler.policy.cue import CueUnavailable, cue_binary

    try:
        cue_binary()
    except CueUnavailable:
        return False
    return True


def test_a_cache_that_cannot_be_written_mid_run_is_no_error(
    project: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A full disk under the cache (blobs, chunk results, tree records, check findings):
    render renders whole and check keeps nothing; both answer as without a cache."""
    import errno

    from compiler.plan import check_chunks as check_parts

    monkeypatch.setattr(incremental, "CHUNK_JOBS", 1)
    monkeypatch.setattr(check_parts, "CHECK_CHUNK_JOBS", 1)
    monkeypatch.setattr(incremental, "render_cache_dir", lambda: tmp_path / "cache")
    fresh = render(capsys, project, tmp_path / "fresh", "-j", "2", "--no-cache")
    capsys.readouterr()
    checked = main(["check", "--project", str(project / "trainc.yaml"), "-j", "2", "--no-cache"])
    fresh_check = (checked, capsys.readouterr())

    def full(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(blobs.BlobStore, "put", full)
    monkeypatch.setattr(blobs, "write_pickle", full)
    assert render(capsys, project, tmp_path / "out", "-j", "2") == fresh
    checked = main(["check", "--project", str(project / "trainc.yaml"), "-j", "2"])
    assert (checked, capsys.readouterr()) == fresh_check
    assert not (tmp_path / "cache" / "check").exists()


def test_a_check_stopped_at_a_cue_limit_is_not_kept_in_the_cache(
    project: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """cue running out of its time depends on the machine's load and the limits set: the
    next run checks again instead of replaying the error from the cache."""
    from compiler.plan import check_chunks as check_parts
    from compiler.policy import bounded, cue

    if not _cue_installed():
        pytest.fail("the pinned cue CLI is not installed (run `make setup`)", pytrace=False)
    shutil.copytree(REPO / "policies" / "gang-podgroup", project / "policies" / "gang-podgroup")
    edit(
        project / "trainc.yaml",
        "policies: [policies/required-labels]",
        "policies: [policies/required-labels, policies/gang-podgroup]",
    )
    monkeypatch.setattr(check_parts, "CHECK_CHUNK_JOBS", 1)
    monkeypatch.setattr(incremental, "render_cache_dir", lambda: tmp_path / "cache")
    command = ["check", "--project", str(project / "trainc.yaml"), "--cluster", "production"]

    def out_of_time(*args: object, **kwargs: object) -> bounded.Completed:
        raise bounded.LimitExceeded("time")

    with monkeypatch.context() as patch:
        patch.setattr(cue, "run_bounded", out_of_time)
        assert main([*command, "-j", "2"]) == 2
        assert "cue vet ran past its time limit" in capsys.readouterr().out
    assert not list((tmp_path / "cache" / "check").rglob("*.pickle"))
    code = main([*command, "-j", "2"])
    assert "time limit" not in capsys.readouterr().out
    assert code == main([*command, "-j", "1"])
    assert list((tmp_path / "cache" / "check").rglob("*.pickle"))


def test_two_prunes_during_one_render_render_again(
    project: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Removing the render cache is always safe, even twice while one render runs: each
    time the blobs are gone when the tree is linked; the render renders again."""
    monkeypatch.setattr(incremental, "CHUNK_JOBS", 1)
    monkeypatch.setattr(incremental, "render_cache_dir", lambda: tmp_path / "cache")
    fresh = render(capsys, project, tmp_path / "fresh", "-j", "2", "--no-cache")
    real = tree_module.write_parts
    prunes: list[int] = []

    def pruned_first(*args: Any, **kwargs: Any) -> int:
        shutil.rmtree(tmp_path / "cache")  # rm -rf $TRAINC_CACHE/render
        prunes.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(tree_module, "write_parts", pruned_first)
    assert render(capsys, project, tmp_path / "out", "-j", "2") == fresh
    assert len(prunes) == 2  # then rendered whole


def test_a_blob_pruned_while_streaming_is_rendered_again(
    project: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``-o -`` from the cache: blobs removed after the stream has started (at the point
    each is read) are made again; the stream is whole and written once."""
    monkeypatch.setattr(incremental, "CHUNK_JOBS", 1)
    monkeypatch.setattr(incremental, "render_cache_dir", lambda: tmp_path / "cache")
    command = ["render", "--project", str(project / "trainc.yaml"), "-o", "-", "-j", "2"]

    def stream(*flags: str) -> tuple[int, str, str]:
        capsys.readouterr()
        code = main([*command, *flags])
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    fresh = stream("--no-cache")
    assert fresh[0] == 0 and fresh[1].count("# cluster:") == 2
    assert stream() == fresh  # fills the cache
    real = blobs.BlobStore.read
    reads: list[str] = []

    def pruned_at_read(self: blobs.BlobStore, digest: str) -> bytes:
        if len(reads) % 3 == 2:  # every third blob, from the third on
            Path(self.path(digest)).unlink(missing_ok=True)
        reads.append(digest)
        return real(self, digest)

    monkeypatch.setattr(blobs.BlobStore, "read", pruned_at_read)
    assert stream() == fresh
    assert len(reads) > 3


def test_argocd_generate_by_chunks_survives_a_removed_blob(
    project: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A blob gone from generate's own store when it is read: the answer is the whole
    way's, never a traceback."""
    from compiler.plan import check_chunks as check_parts

    edit(project / "trainc.yaml", "    policies: [policies/required-labels]\n", "")
    # resolved delivery (generate's by-chunks way), the queued JobSets to Kueue's JobSet
    # integration (the example's production cluster delivers TrainJobs)
    edit(project / "trainc.yaml", "    delivery: trainjobs\n", "    kueue: {jobSets: true}\n")
    monkeypatch.setattr(check_parts, "CHECK_CHUNK_JOBS", 1)
    monkeypatch.setattr(incremental, "default_jobs", lambda: 2)
    command = ["argocd", "generate", "--project", str(project / "trainc.yaml")]
    command += ["--cluster", "production"]
    capsys.readouterr()
    expected = (main(command), capsys.readouterr())
    assert expected[0] == 0 and expected[1].out.startswith("# cluster: production\n")
    real = blobs.PackStore.read  # generate's store: nothing reads it after the run
    reads: list[str] = []

    def removed_at_read(self: blobs.PackStore, digest: str) -> bytes:
        if not reads:
            for pack in self.root.glob("*.pack"):
                pack.unlink()
        reads.append(digest)
        return real(self, digest)

    monkeypatch.setattr(blobs.PackStore, "read", removed_at_read)
    assert (main(command), capsys.readouterr()) == expected
    assert reads


def test_a_stream_without_the_cache_writes_no_file_per_object(
    project: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``--no-cache -o -``: nothing will read the blobs back after the run, so they go to
    a pack per process (two files each: the pack and its index), not a file per object
    (issue 28: a quarter of a render); the stream is the whole render's."""
    from compiler.plan import driver

    monkeypatch.setattr(incremental, "CHUNK_JOBS", 1)
    real_store = blobs.blob_store
    files: list[int] = []

    @contextmanager
    def counted(*args: Any, **kwargs: Any) -> Iterator[blobs.BlobStore]:
        with real_store(*args, **kwargs) as store:
            yield store
            files.append(sum(1 for p in store.root.rglob("*") if p.is_file()))

    monkeypatch.setattr(driver, "blob_store", counted)
    command = ["render", "--project", str(project / "trainc.yaml"), "-o", "-", "--no-cache"]
    outcomes = []
    for jobs in ("1", "2"):
        capsys.readouterr()
        code = main([*command, "-j", jobs])
        outcomes.append((code, capsys.readouterr()))
    monkeypatch.setattr(incremental, "run_parts", lambda *a, **k: None)
    capsys.readouterr()
    whole = (main([*command, "-j", "1"]), capsys.readouterr())
    assert outcomes == [whole, whole]
    objects = whole[1].out.count("\nkind: ")
    # a pack and its index for the parent and each worker (two clusters, two each)
    assert len(files) == 2 and max(files) <= 2 * 5 < objects


@pytest.mark.parametrize("layout", ["one job file", "runtimes and jobs in one file"])
def test_single_file_layouts_render_as_a_whole_render_does(
    project: Path,
    renders: Callable[[str], tuple[Outcome, Outcome, Outcome, Parts]],
    layout: str,
) -> None:
    """Every TrainJob in one multi-document file (a generated sweep), and that file also
    holding the runtimes: cached, -j 2 and --no-cache renders give the whole render's bytes
    (today as one chunk; document ranges within a file must keep this)."""
    jobs = sorted((project / "jobs").glob("*.yaml"))
    documents = [path.read_text() for path in jobs]
    if layout != "one job file":  # the MPI runtime moved in with the jobs
        documents.append((project / "runtimes" / "mpi.yaml").read_text())
        (project / "runtimes" / "mpi.yaml").unlink()
    for path in jobs:
        path.unlink()
    (project / "jobs" / "all.yaml").write_text("---\n".join(documents))
    whole, cached, fresh, _ = renders(layout.split()[0])
    assert whole[0] == 0, whole[2]
    assert len(whole[3]) > 20
    assert cached == whole and fresh == whole
    edit(project / "jobs" / "all.yaml", 'value: "job-1-0"', 'value: "x"')
    whole, cached, fresh, _ = renders(layout.split()[0] + "-edited")
    assert whole[0] == 0 and cached == whole and fresh == whole


LOOKALIKE = """\
apiVersion: kubeflow.org/v1
kind: TrainJob
metadata: {name: not-a-trainer-job, namespace: vision}
spec: {}
"""


def stream(capsys: pytest.CaptureFixture[str], project: Path, *flags: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["render", "--project", str(project / "trainc.yaml"), "-o", "-", *flags])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_one_file_in_document_ranges_renders_as_a_whole_render_does(
    project: Path,
    renders: Callable[[str], tuple[Outcome, Outcome, Outcome, Parts]],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Every TrainJob in one file, cut into document ranges (about 2 TrainJobs each here,
    100 by default): each range is a chunk, and cached, -j 2, --no-cache and streamed
    renders give the whole render's bytes through edits inside a range, a document
    inserted (boundaries after it move), a warning located in a later range, a name
    given twice in two ranges and an error in a later range (both whole, located)."""
    monkeypatch.setattr(incremental, "RANGE_JOBS", 2)
    monkeypatch.setattr(incremental, "MAX_RANGE_JOBS", 3)
    for path in (project / "jobs").glob("*.yaml"):
        path.unlink()
    sweep = project / "jobs" / "sweep.yaml"
    sweep.write_text("---\n".join(job_file(i) for i in range(12)))

    def same(label: str, *, whole_only: bool = False) -> tuple[Outcome, Parts]:
        whole, cached, fresh, parts = renders(label)
        assert fresh == whole, label
        assert cached[:3] == whole[:3], label
        if whole_only:
            assert parts == [None], label  # rendered whole: the error names its places
        else:
            assert cached == whole, label
            assert all(p is not None and p.chunks >= 4 for p in parts), (label, parts)
        with monkeypatch.context() as whole_way:
            whole_way.setattr(incremental, "run_parts", lambda *a, **k: None)
            streamed = stream(capsys, project, "-j", "1")
        assert stream(capsys, project, "-j", "2") == streamed, label
        assert stream(capsys, project, "-j", "2", "--no-cache") == streamed, label
        return whole, parts

    whole, parts = same("start")
    assert whole[0] == 0 and len(whole[3]) > 20, whole[2]
    # a value edited inside one range: that range's chunk again, in each cluster, and
    # its neighbour's when the edited document was the one its range ended after
    edit(sweep, 'value: "job-7-1"', 'value: "x"')
    _, parts = same("edited")
    assert all(p is not None and 1 <= p.rendered <= 2 < p.chunks for p in parts), parts
    # a document inserted in the middle: the boundaries around it move
    text = sweep.read_text()
    middle = text.index("---\n", len(text) // 2)
    sweep.write_text(text[:middle] + "---\n" + job_file(40).split("---\n")[0] + text[middle:])
    _, parts = same("inserted")
    # the ranges before it are taken from the cache (those after it moved down a few lines)
    assert all(p is not None and 1 <= p.rendered < p.chunks for p in parts), parts
    # a warning of a document in a later range, located by that range's first line
    sweep.write_text(sweep.read_text() + "---\n" + LOOKALIKE)
    whole, _ = same("warning")
    line = len(sweep.read_text().splitlines()) - 3  # its apiVersion
    assert f"sweep.yaml:{line}:1" in whole[2] and "not the Trainer's" in whole[2]
    # one TrainJob's name given twice, in the first range and the last
    sweep.write_text(sweep.read_text() + "---\n" + job_file(0).split("---\n")[0])
    whole, _ = same("duplicate", whole_only=True)
    assert whole[0] == 2
    lines = sweep.read_text().splitlines()
    second = max(i for i, text in enumerate(lines) if text == "  name: job-0-0") + 1
    assert (
        f"jobs/sweep.yaml:{second}:3: TrainJob vision/job-0-0: duplicate object: TrainJob "
        "'job-0-0' is also defined at "
    ) in whole[2] and whole[2].endswith("/jobs/sweep.yaml:4:3\n"), whole[2]
    edit(sweep, "name: job-0-0\n  namespace: vision\n", "name: job-0-x\n  namespace: vision\n")
    same("no duplicate")
    # an error in a later range
    edit(
        sweep,
        "name: job-9-1\n  namespace: vision\nspec:\n",
        "name: job-9-1\n  namespace: x_\nspec:\n",
    )
    whole, _ = same("error", whole_only=True)
    error_line = sweep.read_text().splitlines().index("  namespace: x_") + 1
    assert whole[0] == 2 and f"sweep.yaml:{error_line}:" in whole[2], whole[2]


@pytest.mark.parametrize("format", ["text", "json"])
def test_check_of_one_file_in_document_ranges_reports_as_a_whole_check(
    project: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    format: str,
) -> None:
    """``check -j 2`` on one file cut into document ranges: the findings of later ranges
    (required-labels on each TrainJob) are located in the file as a whole check has them."""
    from compiler.plan import check_chunks as check_parts

    monkeypatch.setattr(incremental, "RANGE_JOBS", 2)
    monkeypatch.setattr(incremental, "MAX_RANGE_JOBS", 3)
    monkeypatch.setattr(check_parts, "CHECK_CHUNK_JOBS", 2)
    monkeypatch.setattr(incremental, "render_cache_dir", lambda: tmp_path / "cache")
    for path in (project / "jobs").glob("*.yaml"):
        path.unlink()
    (project / "jobs" / "sweep.yaml").write_text("---\n".join(job_file(i) for i in range(12)))
    real = check_parts.check_parts
    parts: list[object] = []

    def recorded(*args: object) -> object:
        result = real(*args)  # type: ignore[arg-type]
        parts.append(result)
        return result

    outcomes = []
    for mode in ("whole", "-j 2", "cached"):
        monkeypatch.setattr(
            check_parts, "check_parts", (lambda *a: None) if mode == "whole" else recorded
        )
        capsys.readouterr()
        jobs = ["-j", "1"] if mode == "whole" else ["-j", "2"]
        command = ["check", "--project", str(project / "trainc.yaml"), "--format", format]
        code = main([*command, *jobs])
        captured = capsys.readouterr()
        outcomes.append((code, captured.out, captured.err))
    assert outcomes[0][0] == 1, outcomes[0]
    assert "sweep.yaml" in outcomes[0][1]
    assert outcomes[1] == outcomes[0]
    assert outcomes[2] == outcomes[0]
    assert len(parts) == 4 and all(p is not None for p in parts)  # 2 clusters, 2 runs


def test_runtimes_among_the_trainjobs_of_one_file_are_every_range_s_context(
    project: Path,
    tmp_path: Path,
    renders: Callable[[str], tuple[Outcome, Outcome, Outcome, Parts]],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A runtime in the middle of a file of TrainJobs (which refer to it): the runtime's
    documents are a range of their own that every chunk loads as context, the TrainJobs'
    ranges are chunks; render (folder, stream) and check give the whole way's bytes,
    also after the runtime is edited."""
    from compiler.plan import check_chunks as check_parts

    monkeypatch.setattr(incremental, "RANGE_JOBS", 2)
    monkeypatch.setattr(incremental, "MAX_RANGE_JOBS", 3)
    monkeypatch.setattr(check_parts, "CHECK_CHUNK_JOBS", 2)
    for path in (project / "jobs").glob("*.yaml"):
        path.unlink()
    runtime = project / "runtimes" / "mpi.yaml"
    documents = [job_file(i) for i in range(12)]
    documents.insert(5, runtime.read_text())
    runtime.unlink()
    mixed = project / "jobs" / "mixed.yaml"
    mixed.write_text("---\n".join(documents))

    real_check_parts = check_parts.check_parts
    checked_parts: list[object] = []

    def recorded(*args: object) -> object:
        checked_parts.append(real_check_parts(*args))  # type: ignore[arg-type]
        return checked_parts[-1]

    def check(whole: bool) -> tuple[int, str, str]:
        with monkeypatch.context() as patch:
            patch.setattr(check_parts, "check_parts", (lambda *a: None) if whole else recorded)
            capsys.readouterr()
            command = ["check", "--project", str(project / "trainc.yaml"), "-j", "2"]
            code = main(command)
            captured = capsys.readouterr()
        return code, captured.out, captured.err

    for label in ("start", "runtime edited"):
        whole, cached, fresh, parts = renders(label.split()[0])
        assert whole[0] == 0 and len(whole[3]) > 20, whole[2]
        assert cached == whole and fresh == whole, label
        assert all(p is not None and p.chunks >= 4 for p in parts), (label, parts)
        with monkeypatch.context() as whole_way:
            whole_way.setattr(incremental, "run_parts", lambda *a, **k: None)
            streamed = stream(capsys, project, "-j", "1")
        assert stream(capsys, project, "-j", "2") == streamed, label
        checked = check(whole=True)
        assert checked[0] == 1 and "mixed.yaml" in checked[1]
        assert check(whole=False) == checked, label
        edit(mixed, "openmpi:0.6.0", "openmpi:0.7.0")
    assert all(p is not None and p.rendered == p.chunks for p in parts)  # its context changed
    assert len(checked_parts) == 4 and None not in checked_parts  # by chunks, 2 clusters


def test_a_file_s_warnings_past_its_limit_across_ranges_are_counted_as_whole(
    project: Path,
    renders: Callable[[str], tuple[Outcome, Outcome, Outcome, Parts]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A whole load keeps a file's first MAX_PROBLEMS_PER_FILE warnings and counts the
    rest; ranges each under the limit cannot, so such a file renders whole."""
    from compiler.load import loader

    monkeypatch.setattr(incremental, "RANGE_JOBS", 2)
    monkeypatch.setattr(incremental, "MAX_RANGE_JOBS", 3)
    monkeypatch.setattr(loader, "MAX_PROBLEMS_PER_FILE", 3)
    for path in (project / "jobs").glob("*.yaml"):
        path.unlink()
    documents = [job_file(i) for i in range(12)]
    for at in (1, 4, 7, 9, 11):  # lookalikes in several ranges
        documents.insert(at, LOOKALIKE.replace("not-a-trainer-job", f"lookalike-{at}"))
    (project / "jobs" / "sweep.yaml").write_text("---\n".join(documents))
    whole, cached, fresh, parts = renders("limit")
    assert whole[0] == 0 and "and 2 more warnings in this file" in whole[2], whole[2]
    assert cached == whole and fresh == whole
    assert parts == [None]  # rendered whole (the first cluster says so)


class ChunkRenders:
    """Each chunk render of the runs to come (workers' too, through a file): its own
    files' (or ranges') TrainJob counts (a chunk patched document by document renders
    the changed documents alone)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, log: Path) -> None:
        self.log = log
        real = incremental.render_chunk

        def recorded(plan: Any, context: Any, own: Any, *args: Any, **kwargs: Any) -> Any:
            with open(log, "a") as out:
                out.write(" ".join(str(unit.trainjobs) for unit in own) + "\n")
            return real(plan, context, own, *args, **kwargs)

        monkeypatch.setattr(incremental, "render_chunk", recorded)

    def clear(self) -> None:
        self.log.unlink(missing_ok=True)

    def cached_run(self) -> list[list[int]]:
        """The renders of the cached run of ``renders``: those before the run without the
        cache renders the context alone (``[]``; the cached run has it from the cache).
        Sorted: the clusters' chunks render side by side, in no fixed order."""
        lines = self.log.read_text().splitlines() if self.log.exists() else []
        calls = [[int(n) for n in line.split()] for line in lines]
        return sorted(calls[: calls.index([])] if [] in calls else calls)


def test_a_changed_document_is_rendered_alone_as_a_whole_render_does(
    project: Path,
    renders: Callable[[str], tuple[Outcome, Outcome, Outcome, Parts]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A job file of 8 TrainJobs: an edit to one of them renders that document alone
    (in each cluster) and patches the chunk; a rename, a rename into another's name (an
    error, whole), a warning and a document added all give the whole render's bytes."""
    jobs = project / "jobs" / "jobs-1.yaml"
    jobs.write_text("---\n".join(job_file(10 + i).split("---\n")[0] for i in range(8)))
    first = project / "jobs" / "jobs-0.yaml"  # the first chunk's
    first.write_text("---\n".join(job_file(50 + i).split("---\n")[0] for i in range(8)))
    whole, cached, fresh, _ = renders("start")
    assert whole[0] == 0 and cached == whole and fresh == whole, whole[2]
    calls = ChunkRenders(monkeypatch, project.parent / "calls.log")

    def same(label: str, rendered: list[list[int]] | None) -> None:
        calls.clear()
        whole, cached, fresh, parts = renders(label)
        assert fresh == whole, label
        assert cached == whole, label
        assert all(p is not None for p in parts), label
        if rendered is not None:
            assert calls.cached_run() == rendered, (label, calls.cached_run())

    edit(jobs, 'value: "job-13-0"', 'value: "x"')
    same("edited", [[1], [1]])  # the one document, in each cluster
    edit(jobs, "name: job-14-0\n", "name: job-14-x\n")
    same("renamed", [[1], [1]])
    edit(jobs, 'value: "x"', 'value: "y"')
    edit(jobs, 'value: "job-15-0"', 'value: "z"')
    same("two edited", [[1, 1], [1, 1]])
    # a warning in the edited document: the chunk is rendered again whole
    calls.clear()
    edit(jobs, "name: job-12-0\n  namespace: vision", "name: job-12-0\n  namespace: audio")
    whole, cached, _, _ = renders("warning")
    assert "TrainJob audio/job-12-0: metadata.namespace: namespace 'audio'" in whole[2]
    assert cached[:3] == whole[:3], (cached[:3], whole[:3])
    assert cached == whole and calls.cached_run() == [[1], [1], [8], [8]], calls.cached_run()
    edit(jobs, "name: job-12-0\n  namespace: audio", "name: job-12-0\n  namespace: vision")
    same("warning gone", None)
    # the first chunk is patched too, unless a context file holds a TrainJob (it renders
    # that one: here the MPI runtime's file)
    edit(first, 'value: "job-51-0"', 'value: "x"')
    same("first chunk", [[1], [1]])
    mpi = project / "runtimes" / "mpi.yaml"
    mpi.write_text(mpi.read_text() + "---\n" + job_file(60).split("---\n")[0])
    same("a TrainJob in the context", None)
    edit(first, 'value: "job-52-0"', 'value: "x"')
    same("first chunk with a TrainJob in the context", [[8], [8]])
    mpi.write_text(mpi.read_text().split("---\n")[0])
    # the context as before: the first chunk's edit since is patched in from its last
    # result under that context
    same("context back", [[1], [1]])
    # a document added: the chunk is rendered again whole
    jobs.write_text(jobs.read_text() + "---\n" + job_file(30).split("---\n")[0])
    same("added", [[9], [9]])
    # a TrainJob renamed into another's name: rendered whole, the error located
    edit(jobs, "name: job-16-0\n", "name: job-17-0\n")
    whole, cached, fresh, parts = renders("duplicate")
    assert whole[0] == 2 and "duplicate object" in whole[2], whole[2]
    assert cached[:3] == whole[:3] and fresh == whole and parts == [None]


def test_a_line_inserted_above_document_ranges_renders_none_of_them_again(
    project: Path,
    renders: Callable[[str], tuple[Outcome, Outcome, Outcome, Parts]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One file cut into document ranges: a line inserted at its top moves every range's
    first line (part of its key), not its documents; only the first chunk (which holds
    the new line) and those that warn of their own documents are rendered again, the
    others are patched with nothing to render, and every place said is still the
    file's own line (warnings in later ranges)."""
    monkeypatch.setattr(incremental, "RANGE_JOBS", 2)
    monkeypatch.setattr(incremental, "MAX_RANGE_JOBS", 3)
    for path in (project / "jobs").glob("*.yaml"):
        path.unlink()
    sweep = project / "jobs" / "sweep.yaml"
    sweep.write_text("---\n".join(job_file(i) for i in range(12)))
    whole, cached, fresh, parts = renders("start")
    assert whole[0] == 0 and cached == whole and fresh == whole, whole[2]
    chunks = [p.chunks for p in parts if p is not None]
    assert len(chunks) == 2 and min(chunks) >= 4, parts
    calls = ChunkRenders(monkeypatch, project.parent / "calls.log")
    sweep.write_text("# a comment\n" + sweep.read_text())
    whole, cached, fresh, parts = renders("inserted")
    assert cached == whole and fresh == whole, whole[2]
    # in each cluster the first chunk (it holds the new line) and the one that warns of
    # its own documents (job-3-*'s namespace, not the clusters'): its places moved down
    assert calls.cached_run() == [[1], [1], [3], [3]], calls.cached_run()
    # a warning in a later range, then a line inserted above it: located anew
    sweep.write_text(sweep.read_text() + "---\n" + LOOKALIKE)
    renders("warning")
    sweep.write_text("# another\n" + sweep.read_text())
    whole, cached, fresh, _ = renders("inserted again")
    line = len(sweep.read_text().splitlines()) - 3  # the lookalike's apiVersion
    assert f"sweep.yaml:{line}:1" in whole[2], whole[2]
    assert cached == whole and fresh == whole


def test_check_patches_a_chunk_document_by_document_as_a_whole_check_reports(
    project: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``check -j 2`` of job files of 8 TrainJobs (no policy): an edited or renamed
    TrainJob is checked alone and its chunk patched; a warning of a TrainJob (a lookalike
    of another group) and a name given twice check the chunk whole; every report is the
    whole check's, byte for byte, in text and JSON."""
    from compiler.plan import check_chunks as check_parts

    monkeypatch.setattr(check_parts, "CHECK_CHUNK_JOBS", 1)
    monkeypatch.setattr(incremental, "render_cache_dir", lambda: tmp_path / "cache")
    upstream = tmp_path / "upstream-manifest.json"
    upstream.write_text("{}")
    monkeypatch.setattr(incremental, "_upstream_files", lambda version: [upstream])
    for index in range(4):
        jobs = "---\n".join(job_file(10 * index + i).split("---\n")[0] for i in range(8))
        (project / "jobs" / f"jobs-{index}.yaml").write_text(jobs)
    for index in range(4, 6):
        (project / "jobs" / f"jobs-{index}.yaml").unlink()
    log = tmp_path / "checked.log"
    real_check_chunk = check_parts._check_chunk

    def check_chunk(plan: Any, context: Any, own: Any, *args: Any) -> Any:
        with open(log, "a") as out:
            out.write(" ".join(str(unit.trainjobs) for unit in own) + "\n")
        return real_check_chunk(plan, context, own, *args)

    monkeypatch.setattr(check_parts, "_check_chunk", check_chunk)
    real_check_parts = check_parts.check_parts
    inputs = [str(project / "runtimes"), str(project / "jobs")]

    def check(mode: str, format: str) -> tuple[int, str, str]:
        monkeypatch.setattr(
            check_parts, "check_parts", (lambda *a: None) if mode == "whole" else real_check_parts
        )
        capsys.readouterr()
        flags = {"whole": ["-j", "1"], "cached": ["-j", "2"], "fresh": ["-j", "2", "--no-cache"]}
        code = main(["check", *inputs, "--format", format, *flags[mode]])
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    def same(label: str) -> list[list[int]]:
        """Both formats the whole check's; the cached text run's chunk checks."""
        checked: list[list[int]] = []
        for format in ("text", "json"):
            whole = check("whole", format)
            log.unlink(missing_ok=True)
            cached = check("cached", format)
            if format == "text":
                lines = log.read_text().splitlines() if log.exists() else []
                checked = sorted([int(n) for n in line.split()] for line in lines)  # -j 2
            assert cached == whole, (label, format)
            assert check("fresh", format) == whole, (label, format)
        return checked

    same("start")
    jobs = project / "jobs" / "jobs-2.yaml"
    edit(jobs, 'value: "job-23-0"', 'value: "x"')
    assert same("edited") == [[1]]  # the one document
    edit(jobs, "name: job-24-0\n", "name: job-24-x\n")
    assert same("renamed") == [[1]]
    edit(
        jobs,
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata:\n  name: job-25",
        "apiVersion: kubeflow.org/v1\nkind: TrainJob\nmetadata:\n  name: job-25",
    )
    assert same("lookalike") == [[1], [8]]  # it warns: the chunk checked whole
    edit(jobs, "name: job-26-0\n", "name: job-27-0\n")
    whole = check("whole", "text")
    assert whole[0] == 2 and "duplicate object" in whole[1] + whole[2], whole
    same("duplicate")
