"""``render`` below the JobSet: the JobSet webhook's refusals, the API server's refusal of
a Job or Pod (through the seam of registered workload checks), ``--expand``."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from compiler.cli import main
from compiler.errors import FieldError
from compiler.expand import downstream
from tests.support import trainc_main

RUNTIME = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: torch-small
spec:
  mlPolicy:
    numNodes: 2
    torch: {}
  template:
    spec:
      replicatedJobs:
        - name: node
          template:
            metadata:
              labels:
                trainer.kubeflow.org/trainjob-ancestor-step: trainer
            spec:
              template:
                spec:
                  containers:
                    - name: node
                      image: pytorch/pytorch:2.7.1
                      resources:
                        requests:
                          cpu: "4"
"""

TRAINJOB = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  namespace: research
  name: {name}
spec:
  runtimeRef:
    name: torch-small
"""


def _inputs(tmp_path: Path, name: str) -> Path:
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "runtime.yaml").write_text(RUNTIME)
    (tmp_path / "in" / "job.yaml").write_text(TRAINJOB.format(name=name))
    return tmp_path / "in"


def _render(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    return trainc_main(capsys, "render", *args)


def test_a_name_of_48_characters_renders(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _render(capsys, str(_inputs(tmp_path, "a" * 48)), "-o", "-")
    assert code == 0, err


@pytest.mark.parametrize("length", [49, 63])
def test_a_longer_name_is_the_webhooks_refusal_at_the_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], length: int
) -> None:
    name = "a" * length
    code, out, err = _render(capsys, str(_inputs(tmp_path, name)), "-o", "-")
    assert code == 2
    assert out == ""
    job_file = tmp_path / "in" / "job.yaml"
    pod_error = (
        f"{job_file}:5:3: JobSet research/{name}: spec.replicatedJobs[0].name: Invalid value: "
        f'"{name}-node-0": JobSet name is too long, pod names generated for this JobSet will '
        "exceed 63 characters"
    )
    assert pod_error in err.splitlines()
    assert (
        f"{job_file}:5:3: TrainJob research/{name}: TrainJob resources reconciliation failed: "
        f'admission webhook "vjobset.kb.io" denied the request: JobSet.jobset.x-k8s.io "{name}" '
        "is invalid: "
    ) in err
    job_error = "job names generated for this JobSet will exceed 63 characters"
    assert (job_error in err) is (length == 63)


def test_a_pod_the_api_server_refuses_points_at_the_runtime(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def validate_pod(pod: object) -> list[FieldError]:
        path = ("spec", "containers", 0, "resources", "requests")
        return [
            FieldError(
                "FieldValueInvalid",
                "spec.containers[0].resources.requests",
                'Invalid value: "4": must be less than or equal to cpu limit of 2',
                "4",
                path,
            )
        ]

    monkeypatch.setitem(downstream.WORKLOAD_CHECKS, "Pod", validate_pod)
    code, _, err = _render(capsys, str(_inputs(tmp_path, "demo")), "-o", "-")
    assert code == 2
    runtime = tmp_path / "in" / "runtime.yaml"
    # the Job controller creates Pod 0 alone first (its slow start): its refusal is the event
    assert (
        f"{runtime}:24:25: Pod research/demo-node-0-0-00000: spec.containers[0].resources.requests: "
        'Invalid value: "4": must be less than or equal to cpu limit of 2'
    ) in err.splitlines()
    assert (
        'Error creating: Pod "demo-node-0-0-00000" is invalid: spec.containers[0].resources.requests'
    ) in err
    assert "demo-node-0-1-" not in err


def test_expand_pods_on_stdout_follows_each_trainjob(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _render(capsys, str(_inputs(tmp_path, "demo")), "-o", "-", "--expand", "pods")
    assert code == 0, err
    kinds = [(d["kind"], d["metadata"]["name"]) for d in yaml.safe_load_all(out)]
    assert kinds == [
        ("JobSet", "demo"),
        ("Job", "demo-node-0"),
        ("Service", "demo"),
        ("Pod", "demo-node-0-0-00000"),
        ("Pod", "demo-node-0-1-00000"),
    ]


def test_expand_into_a_folder_is_marked_and_refused_as_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_dir = tmp_path / "out"
    code, _, err = _render(
        capsys, str(_inputs(tmp_path, "demo")), "-o", str(out_dir), "--expand", "jobs"
    )
    assert code == 0, err
    assert sorted(p.name for p in out_dir.rglob("*.yaml")) == ["jobset.x-k8s.io_JobSet_demo.yaml"]
    expanded = tmp_path / "out.expanded"
    files = sorted(p.relative_to(expanded).as_posix() for p in expanded.rglob("*.yaml"))
    assert files == ["research/batch_Job_demo-node-0.yaml", "research/core_Service_demo.yaml"]
    job = yaml.safe_load((expanded / "research" / "batch_Job_demo-node-0.yaml").read_text())
    assert job["metadata"]["annotations"]["trainc.dev/expanded"] == "jobs"
    code, _, err = _render(capsys, str(expanded), "-o", "-")
    assert code == 2
    assert "written by `trainc render --expand`" in err
    # apply refuses it before it reaches for a cluster (the server here does not exist)
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        'clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]\n'
        "contexts: [{name: c, context: {cluster: c, user: u}}]\nusers: [{name: u, user: {}}]\n"
    )
    assert main(["apply", str(expanded), "--kubeconfig", str(kubeconfig)]) == 2
    err = capsys.readouterr().err
    assert "metadata.annotations[trainc.dev/expanded]: this Job was written by" in err


def test_older_trainer_releases_are_not_checked_below_the_jobset(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """v2.2.0 installs JobSet 0.11.1, not the v0.12.0 trainc emulates below the JobSet."""
    inputs = str(_inputs(tmp_path, "a" * 49))
    code, _, err = _render(capsys, inputs, "-o", "-", "--trainer", "v2.2.0")
    assert code == 0, err


def test_expand_pods_resolves_the_input_priority_classes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """PriorityClasses among the inputs are the cluster's: the Priority admission plugin
    gives each Pod its class's value, and JobSet's pod webhook copies it into the label
    (as the live control plane showed for this golden case)."""
    case = (
        Path(__file__).resolve().parents[2]
        / "golden"
        / "volcano-priorityclass-two-jobs-soft-topology"
    )
    inputs = [str(case / f) for f in ("priorityclasses.yaml", "runtime.yaml", "trainjob.yaml")]
    code, out, err = _render(capsys, *inputs, "--expand", "pods", "-o", "-")
    assert code == 0, err
    pods = [d for d in yaml.safe_load_all(out) if d and d["kind"] == "Pod"]
    assert sorted(p["spec"]["priority"] for p in pods) == [1000, 100000, 100000]
    for pod in pods:
        label = pod["metadata"]["labels"]["jobset.sigs.k8s.io/priority"]
        assert label == str(pod["spec"]["priority"])


def _with_pod_spec(tmp_path: Path, extra: str) -> Path:
    """The inputs with ``extra`` (YAML lines at the pod spec's indent) in the pod spec."""
    inputs = _inputs(tmp_path, "demo")
    runtime = inputs / "runtime.yaml"
    runtime.write_text(
        RUNTIME.replace(
            "                  containers:\n", extra + "                  containers:\n"
        )
    )
    return inputs


def test_an_overhead_without_a_runtime_class_is_the_runtime_class_plugins_refusal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inputs = _with_pod_spec(
        tmp_path, "                  overhead:\n                    cpu: 100m\n"
    )
    code, _, err = _render(capsys, str(inputs), "-o", "-")
    assert code == 2, err
    # validating admission, after validation took the Pod: forbidden, not invalid
    assert (
        'Error creating: pods "demo-node-0-0-00000" is forbidden: pod rejected: Pod Overhead '
        "set without corresponding RuntimeClass defined Overhead"
    ) in err
    assert f"{inputs / 'runtime.yaml'}:20:19: Pod research/demo-node-0-0-00000: pod rejected" in err


def test_an_overhead_with_a_runtime_class_is_left_to_the_cluster(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    extra = "                  runtimeClassName: kata\n                  overhead:\n                    cpu: 100m\n"
    code, _, err = _render(capsys, str(_with_pod_spec(tmp_path, extra)), "-o", "-")
    assert code == 0, err


def test_expand_pods_merges_match_label_keys_into_the_selectors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    extra = (
        "                  affinity:\n"
        "                    podAntiAffinity:\n"
        "                      requiredDuringSchedulingIgnoredDuringExecution:\n"
        "                      - topologyKey: kubernetes.io/hostname\n"
        "                        labelSelector:\n"
        "                          matchLabels: {app: x}\n"
        "                        matchLabelKeys: [jobset.sigs.k8s.io/jobset-name, absent]\n"
        "                        mismatchLabelKeys: [jobset.sigs.k8s.io/replicatedjob-name]\n"
        "                  topologySpreadConstraints:\n"
        "                  - maxSkew: 1\n"
        "                    topologyKey: zone\n"
        "                    whenUnsatisfiable: ScheduleAnyway\n"
        "                    labelSelector: {matchExpressions: [{key: a, operator: Exists}]}\n"
        "                    matchLabelKeys: [batch.kubernetes.io/job-name]\n"
    )
    inputs = _with_pod_spec(tmp_path, extra)
    code, out, err = _render(capsys, str(inputs), "-o", "-", "--expand", "pods")
    assert code == 0, err
    pods = [d for d in yaml.safe_load_all(out) if d["kind"] == "Pod"]
    spec = pods[0]["spec"]
    term_selector = spec["affinity"]["podAntiAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ][0]["labelSelector"]
    assert term_selector == {
        "matchLabels": {"app": "x"},
        "matchExpressions": [
            {"key": "jobset.sigs.k8s.io/jobset-name", "operator": "In", "values": ["demo"]},
            {
                "key": "jobset.sigs.k8s.io/replicatedjob-name",
                "operator": "NotIn",
                "values": ["node"],
            },
        ],
    }
    assert spec["topologySpreadConstraints"][0]["labelSelector"]["matchExpressions"] == [
        {"key": "a", "operator": "Exists"},
        {"key": "batch.kubernetes.io/job-name", "operator": "In", "values": ["demo-node-0"]},
    ]
    # the Job's pod template keeps the selector as written (only the Pod strategy merges)
    job = next(d for d in yaml.safe_load_all(out) if d["kind"] == "Job")
    assert (
        "matchExpressions"
        not in job["spec"]["template"]["spec"]["affinity"]["podAntiAffinity"][
            "requiredDuringSchedulingIgnoredDuringExecution"
        ][0]["labelSelector"]
    )
