"""trainc render with Katib Experiments: the Experiment is passed through (as written, or
with --server-defaults as Katib's defaulting webhook stores it); --expand trials adds each
planned trial's TrainJob and its objects after it (a 3x2 grid: 6 TrainJobs, 6 JobSets);
an Experiment Katib refuses, or a trial that fails the chain, fails the render (exit 2)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from compiler.cli import main
from tests.katib.cases import grid_3x2
from tests.katib.test_katib_check import BAD, _example, _setup


def _grid(tmp_path: Path) -> Path:
    tmp_path.mkdir()
    exp = _example()
    grid_3x2(exp)
    return _setup(tmp_path, yaml.safe_dump(exp))


def _render(
    capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, list[dict[str, Any]], str]:
    capsys.readouterr()
    code = main(["render", *args])
    out = capsys.readouterr()
    return code, [d for d in yaml.safe_load_all(out.out) if d], out.err


def test_render_passes_the_experiment_through(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inputs = _grid(tmp_path / "in")
    code, docs, err = _render(capsys, str(inputs), "-o", "-")
    assert code == 0, err
    written = yaml.safe_load((inputs / "experiment.yaml").read_text())
    written["metadata"]["namespace"] = "kubeflow"
    assert docs == [written]  # as written: no trial's objects without --expand trials
    code, docs, err = _render(capsys, str(inputs), "-o", "-", "--server-defaults")
    assert code == 0, err
    [stored] = docs
    assert stored["spec"]["resumePolicy"] == "Never"  # Katib's defaulting webhook
    assert stored["spec"]["trialTemplate"]["successCondition"]
    out = tmp_path / "out"
    assert main(["render", str(inputs), "-o", str(out), "-q"]) == 0
    files = sorted(str(p.relative_to(out)) for p in out.rglob("*.yaml"))
    assert files == ["kubeflow/kubeflow.org_Experiment_torch-distributed-example.yaml"]


def test_expand_trials_writes_six_trainjobs_and_six_jobsets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inputs = _grid(tmp_path / "in")
    code, docs, err = _render(capsys, str(inputs), "-o", "-", "--expand", "trials")
    assert code == 0, err
    kinds = [d["kind"] for d in docs]
    assert kinds[0] == "Experiment"
    assert kinds[1:] == ["TrainJob", "JobSet"] * 6  # each trial's TrainJob, then its JobSet
    names = [d["metadata"]["name"] for d in docs[1:]]
    assert len(set(names)) == 6 and all(n.startswith("torch-distributed-example-") for n in names)
    assert all(d["metadata"]["annotations"]["trainc.dev/expanded"] == "trials" for d in docs[1:])
    assert "trainc.dev/expanded" not in (docs[0]["metadata"].get("annotations") or {})
    code, docs, err = _render(capsys, str(inputs), "-o", "-", "--expand", "trials,pods")
    assert code == 0, err
    kinds = [d["kind"] for d in docs]
    assert (kinds.count("TrainJob"), kinds.count("JobSet"), kinds.count("Pod")) == (6, 6, 12)
    out = tmp_path / "out"
    assert main(["render", str(inputs), "-o", str(out), "--expand", "trials", "-q"]) == 0
    expanded = sorted(p.name.split("_")[1] for p in (tmp_path / "out.expanded").rglob("*.yaml"))
    assert expanded == ["JobSet"] * 6 + ["TrainJob"] * 6
    # what --expand wrote is refused as input, by every verb
    code, _, err = _render(capsys, str(tmp_path / "out.expanded"), str(inputs), "-o", "-")
    assert code == 2 and "trainc.dev/expanded" in err


def test_expand_refuses_an_unknown_depth(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["render", ".", "--expand", "trials,nodes"])
    assert exit_.value.code == 2
    assert "'nodes': not one of trials, jobs, pods" in capsys.readouterr().err


def test_a_failing_trial_fails_the_render(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, docs, err = _render(capsys, str(_setup(tmp_path, BAD)), "-o", "-")
    assert code == 2 and docs == []
    assert "trial nodes=1, gpus=1: spec.trainer.numNodes" in err
    assert "experiment.yaml:22:" in err


def test_an_experiment_katib_refuses_fails_the_render(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    exp = _example()
    exp["spec"]["parallelTrialCount"] = 20
    code, docs, err = _render(capsys, str(_setup(tmp_path, yaml.safe_dump(exp))), "-o", "-")
    assert code == 2 and docs == []
    assert "spec.parallelTrialCount: Invalid value: 20" in err


def test_emit_trainjobs_delivers_the_experiment_not_its_trials(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, docs, err = _render(capsys, str(_grid(tmp_path / "in")), "-o", "-", "--emit", "trainjobs")
    assert code == 0, err
    assert [d["kind"] for d in docs] == [
        "ClusterTrainingRuntime",
        "Experiment",
    ]  # Katib makes the trials


def test_argocd_generate_delivers_the_experiment_not_its_trials(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _grid(tmp_path / "in")
    (tmp_path / "trainc.yaml").write_text(
        "inputs:\n  runtimes: [in/runtime.yaml]\n  jobs: [in/experiment.yaml]\n"
        "output: rendered\nclusters:\n  - name: c\n    namespaces:\n      - name: kubeflow\n"
    )
    capsys.readouterr()
    code = main(
        ["argocd", "generate", "--project", str(tmp_path / "trainc.yaml"), "--cluster", "c"]
    )
    out = capsys.readouterr()
    assert code == 0, out.err
    docs = [d for d in yaml.safe_load_all(out.out) if d]
    assert [d["kind"] for d in docs] == ["Experiment"]  # not the 6 trials' JobSets


def test_expand_pods_shows_katibs_pod_webhook(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every Pod of a trial gets the trial labels and KATIB_TRIAL_NAME; the primary Pod
    (node, completion index 0) the StdOut metrics collector, the shared metrics volume and
    the wrapped command (compared with Katib's own code in test_katib_injector_conformance)."""
    code, docs, err = _render(
        capsys, str(_grid(tmp_path / "in")), "-o", "-", "--expand", "trials,pods"
    )
    assert code == 0, err
    pods = [d for d in docs if d["kind"] == "Pod"]
    assert len(pods) == 12
    for pod in pods:
        labels = pod["metadata"]["labels"]
        assert labels["katib.kubeflow.org/experiment"] == "torch-distributed-example"
        trial = labels["katib.kubeflow.org/trial"]
        assert pod["metadata"]["name"].startswith(trial + "-node-0-")
        node = pod["spec"]["containers"][0]
        assert node["env"][-1] == {
            "name": "KATIB_TRIAL_NAME",
            "valueFrom": {
                "fieldRef": {
                    "apiVersion": "v1",
                    "fieldPath": "metadata.labels['katib.kubeflow.org/trial']",
                }
            },
        }
    primary = [
        p
        for p in pods
        if p["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"] == "0"
    ]
    assert len(primary) == 6
    for pod in primary:
        node, sidecar = pod["spec"]["containers"]
        trial = pod["metadata"]["labels"]["katib.kubeflow.org/trial"]
        assert sidecar["name"] == "metrics-logger-and-collector"
        assert sidecar["image"] == "ghcr.io/kubeflow/katib/file-metrics-collector:v0.19.0"
        assert sidecar["args"][:2] == ["-t", trial]
        assert sidecar["terminationMessagePolicy"] == "File"  # defaulted after the patch
        assert "kube-api-access" not in str(sidecar)  # ServiceAccount admission ran before
        assert node["command"] == ["sh", "-c"]
        assert node["args"][0].endswith(
            "1>/var/log/katib/metrics.log 2>&1 && echo completed > /var/log/katib/$$$$.pid"
        )
        assert {"name": "metrics-volume", "mountPath": "/var/log/katib"} in node["volumeMounts"]
        assert pod["spec"]["shareProcessNamespace"] is True
        assert {"name": "metrics-volume", "emptyDir": {}} in pod["spec"]["volumes"]
        assert "status" not in pod
    workers = [p for p in pods if p not in primary]
    assert all(len(p["spec"]["containers"]) == 1 for p in workers)
    assert all("shareProcessNamespace" not in p["spec"] for p in workers)


def test_pods_without_the_primary_container_fail_the_trial(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Katib's pod webhook adds KATIB_TRIAL_NAME to the primary container of every Pod of a
    trial and refuses a Pod without one: a runtime's initializer Pods never start."""
    from compiler.upstream.artifacts import upstream

    inputs = _grid(tmp_path / "in")
    runtime = "manifests/base/runtimes/torchtune/llama3_2/llama3_2_1B.yaml"
    (inputs / "runtime.yaml").write_text(upstream("v2.3.0").path(runtime).read_text())
    text = (inputs / "experiment.yaml").read_text()
    (inputs / "experiment.yaml").write_text(
        text.replace("torch-distributed\n", "torchtune-llama3.2-1b\n")
    )
    code, docs, err = _render(capsys, str(inputs), "-o", "-")
    assert code == 2 and docs == [], err
    assert (
        "trial lr=0.01, momentum=0.5: the Pods of replicated job dataset-initializer: admission "
        'webhook "mutator.pod.katib.kubeflow.org" denied the request: Unable to find primary '
        "container node in mutated pod containers [{dataset-initializer ...}]"
    ) in err
    assert "experiment.yaml:31:5" in err  # trialTemplate.primaryContainerName


def _project(tmp_path: Path, gitops: str) -> Path:
    _grid(tmp_path / "in")
    (tmp_path / "trainc.yaml").write_text(
        "inputs:\n  runtimes: [in/runtime.yaml]\n  jobs: [in/experiment.yaml]\n"
        "output: rendered\nclusters:\n  - name: c\n"
        f"    gitops: {gitops}\n    namespaces:\n      - name: kubeflow\n"
    )
    return tmp_path / "trainc.yaml"


def test_the_experiment_carries_the_clusters_gitops_hints(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Sync wave 0 like a workload (Katib refuses it before its template's ConfigMap
    exists, wave -1), the sync options, and Flux's substitute: disabled."""
    project = _project(
        tmp_path,
        "{syncWaves: true, serverSideApply: true, immutableChange: force-replace, "
        "fluxSubstitute: disabled}",
    )
    code, docs, err = _render(capsys, "--project", str(project), "--cluster", "c", "-o", "-")
    assert code == 0, err
    [experiment] = [d for d in docs if d["kind"] == "Experiment"]
    assert experiment["metadata"]["annotations"] == {
        "argocd.argoproj.io/sync-wave": "0",
        "argocd.argoproj.io/sync-options": "ServerSideApply=true,Force=true,Replace=true",
        "kustomize.toolkit.fluxcd.io/substitute": "disabled",
    }
    code, docs, err = _render(
        capsys, "--project", str(project), "--cluster", "c", "-o", "-", "--server-defaults"
    )
    [stored] = [d for d in docs if d["kind"] == "Experiment"]
    assert stored["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"] == "0"
    assert "warning[gitops]" not in err


def test_flux_substitution_would_break_on_katib_placeholders(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Flux's postBuild parser stops at the dot of ${trialParameters.x}: warned, at the
    placeholder, unless the cluster turns Flux substitution off."""
    project = _project(tmp_path, "{syncWaves: true}")
    capsys.readouterr()
    assert main(["check", "--project", str(project)]) == 0
    out = capsys.readouterr().out
    assert (
        "warning[gitops]: Experiment kubeflow/torch-distributed-example: "
        "spec.trialTemplate.trialSpec.spec.trainer.command[3] holds "
        "'--lr=${trialParameters.learningRate}': Flux's postBuild substitution cannot parse "
        "a Katib placeholder (missing closing brace)"
    ) in out
    assert "experiment.yaml:" in out
