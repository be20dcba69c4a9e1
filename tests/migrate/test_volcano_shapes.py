"""Volcano Job shapes beyond the framework plugins (issue 29 point 6), on small jobs of
our own under ``tests/migrate/volcano/``: an ssh + svc MPI master/worker pair, svc + env
TensorFlow role tasks, one task with ssh; what Volcano's webhook denies is an input
error with its message; the refusals that stay say what to do. Every migrated job
renders with the runtime the migration writes."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from compiler.cli import main

HERE = Path(__file__).resolve().parent / "volcano"


def migrate(path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    """Migrate and render ``path``; the runtime's replicated jobs by name."""
    out = tmp_path / "out"
    assert main(["migrate", str(path), "-o", str(out), "--report", str(tmp_path / "r")]) == 0
    assert main(["render", str(out), "-o", str(tmp_path / "rendered")]) == 0, capsys.readouterr()
    docs = [d for p in out.rglob("*.yaml") for d in yaml.safe_load_all(p.read_text())]
    runtime = next(d for d in docs if d["kind"] == "TrainingRuntime")
    jobs = runtime["spec"]["template"]["spec"]["replicatedJobs"]
    return {j["name"]: j["template"]["spec"]["template"]["spec"] for j in jobs} | {
        "report": (tmp_path / "r").read_text(),
        "runtime": runtime,
    }


def host_file(pod: dict[str, Any], name: str, tmp_path: Path) -> str:
    """Run the host-file shim (its init container) into a folder of the test's and
    read the file ``name``."""
    [init] = [c for c in pod["initContainers"] if c["name"] == "volcano-hosts"]
    folder = tmp_path / "etc-volcano"
    folder.mkdir(exist_ok=True)
    script = init["command"][2].replace("/etc/volcano", str(folder))
    subprocess.run(["/bin/sh", "-c", script], check=True, timeout=10)
    return (folder / name).read_text()


def test_ssh_mpi_pair_is_an_mpi_runtime_with_host_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    got = migrate(HERE / "ssh-mpi-pair.yaml", tmp_path, capsys)
    assert got["runtime"]["spec"]["mlPolicy"]["mpi"]["sshAuthMountPath"] == "/root/.ssh"
    launcher = got["launcher"]
    assert "mpiexec" in launcher["containers"][0]["command"][2]
    hosts = host_file(launcher, "w.host", tmp_path)
    assert hosts == "pair-node-0-0.pair\npair-node-0-1.pair"  # no newline after the last
    assert host_file(got["node"], "lead.host", tmp_path) == "pair-launcher-0-0.pair"
    mounts = launcher["containers"][0]["volumeMounts"]
    assert {"name": "volcano-hosts", "mountPath": "/etc/volcano"} in mounts
    assert "VOLCANO_HOSTFILE_SHIMMED" in got["report"]
    assert "VOLCANO_SSH_REPLACED" in got["report"]
    jobs = got["runtime"]["spec"]["template"]["spec"]["replicatedJobs"]
    launcher_job = next(j for j in jobs if j["name"] == "launcher")
    assert launcher_job["dependsOn"] == [{"name": "node", "status": "Ready"}]


def test_svc_tensorflow_roles_are_replicated_jobs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    got = migrate(HERE / "svc-tf-roles.yaml", tmp_path, capsys)
    assert set(got) >= {"node", "ps"}
    command = got["ps"]["containers"][0]["command"]
    assert command[0] == "sh"  # no TF_CONFIG shim: the job builds its own
    env = {e["name"]: e for e in got["ps"]["containers"][0]["env"]}
    assert "fieldRef" in env["VK_TASK_INDEX"]["valueFrom"]  # the completion index
    assert (
        host_file(got["ps"], "worker.host", tmp_path)
        == "roles-node-0-0.roles\nroles-node-0-1.roles"
    )
    assert host_file(got["node"], "ps.host", tmp_path) == "roles-ps-0-0.roles"


def test_one_task_with_ssh_is_migrated_and_the_keys_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    got = migrate(HERE / "ssh-one-task.yaml", tmp_path, capsys)
    assert got["node"]["containers"][0]["name"] == "node"
    assert "warning VOLCANO_SSH_DROPPED spec.plugins.ssh" in got["report"]
    assert "/home/u/.ssh" in got["report"]


JOB = """apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: bad}
spec:
  minAvailable: 2
  tasks:
    - name: t
      replicas: 2
      template:
        spec:
          containers: [{name: t, image: x}]
"""


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            "  policies:\n    - {event: PodFailed, action: RestartJob}\n    - {event: PodFailed, action: AbortJob}\n",
            "spec.policies[1]: duplicate event PodFailed  across different policy",
        ),
        (
            "  minAvailable: 5\n",
            "spec.minAvailable: job 'minAvailable' should not be greater than total replicas in tasks",
        ),
        ("  plugins: {nccl: []}\n", "spec.plugins.nccl: unable to find job plugin: nccl"),
        (
            "  plugins: {mpi: [--master=boss]}\n",
            "spec.plugins.mpi: The specified mpi master task was not found",
        ),
        (
            "  policies:\n    - {event: PodFailed, action: Wait}\n",
            'spec.policies[0]: Invalid value: "Wait": invalid policy action',
        ),
        (
            "  policies:\n    - {exitCode: 0, action: AbortJob}\n",
            "spec.policies[0]: 0 is not a valid error code",
        ),
        (
            "  policies:\n    - {action: AbortJob}\n",
            "spec.policies[0]: either event and exitCode should be specified",
        ),
    ],
)
def test_what_volcanos_webhook_denies_is_an_input_error(
    change: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "job.yaml"
    lines = JOB.replace("  minAvailable: 2\n", "") if "minAvailable" in change else JOB
    path.write_text(lines.replace("spec:\n", "spec:\n" + change, 1))
    assert main(["migrate", str(path), "-o", str(tmp_path / "out")]) == 2
    _, err = capsys.readouterr()
    assert f"Job default/bad: {message}" in err
    assert err.startswith(f"{path}:"), err  # located
    assert not (tmp_path / "out").exists()


def test_task_min_available_above_its_replicas(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(
        JOB.replace("      replicas: 2\n", "      replicas: 2\n      minAvailable: 3\n")
    )
    assert main(["migrate", str(path), "-o", "-"]) == 2
    assert (
        "spec.tasks[0].minAvailable: 'minAvailable' is greater than 'replicas' in task: t, job: bad"
        in capsys.readouterr().err
    )


@pytest.mark.parametrize(
    ("change", "code", "advice"),
    [
        ("  plugins: {ray: []}\n", "VOLCANO_RAY_UNSUPPORTED", "KubeRay"),
        (
            "  plugins: {ssh: [], svc: []}\n",
            "VOLCANO_SSH_UNSUPPORTED",
            "--master=<task> --worker=<task>",
        ),
        ("", "VOLCANO_MULTI_TASK_UNSUPPORTED", "ps/worker/chief/evaluator"),
    ],
)
def test_refusals_say_what_to_do(
    change: str, code: str, advice: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    two = JOB.replace(
        "    - name: t\n",
        "    - name: u\n      replicas: 1\n      template:\n        spec:\n          containers: [{name: u, image: x}]\n    - name: t\n",
    )
    path = tmp_path / "job.yaml"
    path.write_text(two.replace("spec:\n", "spec:\n" + change, 1))
    assert main(["migrate", str(path), "-o", "-"]) == 1
    err = capsys.readouterr().err
    line = next(ln for ln in err.splitlines() if f"error {code}" in ln)
    assert advice in line


def test_a_written_out_volcano_pod_address_is_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = (HERE / "svc-tf-roles.yaml").read_text()
    path = tmp_path / "job.yaml"
    path.write_text(text.replace("PS=`cat /etc/volcano/ps.host`", "PS=roles-ps-0.roles"))
    assert main(["migrate", str(path), "-o", "-"]) == 0
    err = capsys.readouterr().err
    assert (
        "warning HARDCODED_V1_ADDRESS spec.tasks[0].template.spec.containers[0]: a command,"
        " argument or env value names a Volcano pod address (<job>-<task>-<i>)" in err
    )
