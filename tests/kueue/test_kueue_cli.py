"""Kueue through the verbs: `check` says what Kueue will say, and delivery never bypasses a
queue (render refuses a queued TrainJob going out resolved to a cluster that runs Kueue)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import yaml

from tests.support import trainc_process

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "example"

RUNTIME = """apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: torch
spec:
  mlPolicy:
    numNodes: 1
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
                      command: [torchrun, train.py]
"""
QUEUES = """apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: a100
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: research
spec:
  namespaceSelector: {matchLabels: {kueue: enabled}}
  resourceGroups:
    - coveredResources: [nvidia.com/gpu]
      flavors:
        - name: a100
          resources:
            - name: nvidia.com/gpu
              nominalQuota: 8
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  name: research
  namespace: team
spec:
  clusterQueue: research
"""


def trainjob(name: str, nodes: int, gpus: int, queue: str = "research") -> str:
    return f"""apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: {name}
  namespace: team
  labels:
    kueue.x-k8s.io/queue-name: {queue}
spec:
  runtimeRef:
    name: torch
  trainer:
    numNodes: {nodes}
    resourcesPerNode:
      limits:
        nvidia.com/gpu: {gpus}
"""


def trainc(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return trainc_process(*args, cwd=cwd)


def repo(root: Path, cluster: str = "") -> Path:
    """One ClusterQueue of 8 GPUs; TrainJobs of 2 x 4 GPUs, 4 x 4 GPUs, and one naming a
    LocalQueue that does not exist; with ``cluster``, a trainc.yaml of that cluster."""
    (root / "jobs").mkdir(parents=True)
    (root / "runtime.yaml").write_text(RUNTIME)
    (root / "queues.yaml").write_text(QUEUES)
    (root / "jobs" / "small.yaml").write_text(trainjob("small", 2, 4))
    (root / "jobs" / "big.yaml").write_text(trainjob("big", 4, 4))
    (root / "jobs" / "lost.yaml").write_text(trainjob("lost", 1, 1, "nowhere"))
    if cluster:
        (root / "trainc.yaml").write_text(
            "inputs:\n  runtimes: [runtime.yaml, queues.yaml]\n  jobs: [jobs/]\n"
            "clusters:\n  - name: gpu\n    schedulers: [kueue]\n"
            "    namespaces:\n      - name: team\n        labels: {kueue: enabled}\n" + cluster
        )
    return root


def test_check_says_what_kueue_will_say(tmp_path: Path) -> None:
    root = repo(tmp_path, "    delivery: trainjobs\n")
    result = trainc("check", "--format", "json", cwd=root)
    assert result.returncode == 1, result.stderr
    findings = [f for f in yaml.safe_load(result.stdout)["findings"] if f["rule"] == "kueue"]
    by_job = {f["object"]["name"]: f for f in findings}
    assert set(by_job) == {"big", "lost"}  # 2 x 4 GPUs fit in 8
    big = by_job["big"]
    assert big["severity"] == "error"
    assert big["location"]["file"].endswith("jobs/big.yaml") and big["location"]["line"] == 7
    for part in ("16 requested", "8 available", "LocalQueue 'research'", "flavor 'a100'",
                 "ClusterQueue 'research'", "nvidia.com/gpu"):  # fmt: skip
        assert part in big["message"], big["message"]
    assert "LocalQueue 'nowhere' does not exist in namespace 'team'" in by_job["lost"]["message"]


def test_the_namespace_selector_uses_the_projects_namespace_labels(tmp_path: Path) -> None:
    root = repo(tmp_path, "    delivery: trainjobs\n")
    (root / "trainc.yaml").write_text(
        (root / "trainc.yaml").read_text().replace("{kueue: enabled}", "{kueue: disabled}")
    )
    result = trainc("check", cwd=root)
    assert "has a namespaceSelector that excludes namespace 'team'" in result.stdout


def test_a_queued_trainjob_never_goes_out_resolved_to_a_cluster_with_kueue(
    tmp_path: Path,
) -> None:
    root = repo(tmp_path, "    delivery: resolved\n")
    result = trainc("render", "-o", "-", cwd=root)
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if "small" in line]
    assert lines and "jobs/small.yaml:7:5: TrainJob team/small: " in lines[0]
    assert "delivery: trainjobs" in lines[0] and "jobSets: true" in lines[0]


def test_a_flux_kustomization_of_the_rendered_folder_is_a_resolved_delivery(
    tmp_path: Path,
) -> None:
    """``delivery: trainjobs`` says what apply and Argo CD push; a kustomization.yaml in
    the rendered folder hands Flux the resolved JobSets all the same: refused too."""
    root = repo(tmp_path, "    delivery: trainjobs\n    gitops: {kustomization: true}\n")
    result = trainc("render", cwd=root)
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if "small" in line]
    assert lines and "jobs/small.yaml:7:5: TrainJob team/small: " in lines[0]
    assert "kustomization" in lines[0] and "jobSets: true" in lines[0]
    assert not (root / "rendered").exists()  # nothing half-written
    opted_in = repo(
        tmp_path / "opt-in", "    gitops: {kustomization: true}\n    kueue: {jobSets: true}\n"
    )
    assert trainc("render", cwd=opted_in).returncode == 0


def test_the_jobset_opt_in_delivers_suspended_queue_labelled_jobsets(tmp_path: Path) -> None:
    root = repo(tmp_path, "    kueue: {jobSets: true}\n")
    result = trainc("render", "-o", "-", cwd=root)
    assert result.returncode == 0, result.stderr
    jobsets = [d for d in yaml.safe_load_all(result.stdout) if d and d["kind"] == "JobSet"]
    assert len(jobsets) == 3
    for jobset in jobsets:
        assert jobset["spec"]["suspend"] is True
        assert jobset["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] in ("research", "nowhere")


def test_an_unknown_kueue_release_is_a_project_error(tmp_path: Path) -> None:
    root = repo(tmp_path, "    delivery: trainjobs\n    kueue: {version: v0.99.0}\n")
    result = trainc("render", "-o", "-", cwd=root)
    assert result.returncode == 2
    assert "Kueue version 'v0.99.0' is not known to trainc" in result.stderr


def test_the_bundled_example_never_bypasses_its_queue() -> None:
    """Its clusters run Kueue and their overlays queue every TrainJob: each cluster delivers
    TrainJobs, or sends suspended JobSets to Kueue's JobSet integration; render passes."""
    project = yaml.safe_load((EXAMPLE / "trainc.yaml").read_text())
    for cluster in project["clusters"]:
        if "kueue" in (cluster.get("schedulers") or ()):
            opted_in = (cluster.get("kueue") or {}).get("jobSets") is True
            assert cluster.get("delivery") == "trainjobs" or opted_in, cluster["name"]
    result = trainc("render", "-o", "-", cwd=EXAMPLE)
    assert result.returncode == 0, result.stderr


def test_a_trainer_skew_that_changes_the_requests_is_a_warning(tmp_path: Path) -> None:
    """Trainer v2.3.0 merges resourcesPerNode into the runtime's requests, v2.2.0 (inside
    Kueue v0.17.0) replaces them: Kueue would reserve GPUs only, the pods request CPUs too."""
    root = repo(tmp_path, "    delivery: trainjobs\n")
    runtime = (root / "runtime.yaml").read_text()
    (root / "runtime.yaml").write_text(
        runtime + "                      resources: {requests: {cpu: '2'}}\n"
    )
    result = trainc("check", cwd=root)
    warnings = [line for line in result.stdout.splitlines() if line.startswith("warning[kueue]")]
    assert len(warnings) == 3, result.stdout  # small, big, lost
    assert "with the Trainer it embeds (v2.2.0), which requests node x2: nvidia.com/gpu 8;" in (
        "\n".join(warnings)
    )
    assert "request node x2: cpu 4, nvidia.com/gpu 8" in "\n".join(warnings)
    (root / "trainc.yaml").write_text(
        (root / "trainc.yaml")
        .read_text()
        .replace("- name: gpu\n", "- name: gpu\n    trainer: v2.2.0\n")
    )
    same = trainc("check", cwd=root)
    assert "warning[kueue]" not in same.stdout, same.stdout


def test_a_delivery_chosen_on_the_command_line_is_judged_too(tmp_path: Path) -> None:
    """The Argo CD plugin's `delivery` parameter overrides trainc.yaml: resolved JobSets for
    a cluster that runs Kueue are refused there as well."""
    root = repo(tmp_path, "    delivery: trainjobs\n")
    (root / ".git").mkdir()
    result = trainc_process("argocd", "generate", cwd=root, PARAM_DELIVERY="resolved")
    assert result.returncode == 2, result.stderr
    assert "runs Kueue and delivers resolved JobSets" in result.stderr


def test_diff_shows_the_quota_impact_per_cluster_queue(tmp_path: Path) -> None:
    root = repo(tmp_path, "    delivery: trainjobs\n")
    (root / "jobs" / "big.yaml").unlink()
    (root / "jobs" / "lost.yaml").unlink()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    for command in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "base"]):
        subprocess.run([*git, *command], cwd=root, check=True, capture_output=True)
    (root / "jobs" / "small.yaml").write_text(trainjob("small", 4, 4))
    result = trainc("diff", "--base", "HEAD", cwd=root)
    assert result.returncode == 0, result.stderr
    assert result.stdout.endswith(
        "\nquota impact (Kueue):\n"
        "  cluster gpu: ClusterQueue research: nvidia.com/gpu 8 -> 16 (nominal 8; over by 8)\n"
    )
    markdown = trainc("diff", "--base", "HEAD", "--format", "markdown", cwd=root).stdout
    assert "| `gpu` | `research` | `nvidia.com/gpu` | 8 | 16 | 8 |" in markdown
