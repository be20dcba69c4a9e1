"""MPI translations (MPIJob v1 and v2beta1, the Volcano mpi plugin): launcher and node
replicated jobs, the worker's sshd, the variables the launcher sees."""

from __future__ import annotations

from compiler.migrate.conftest import Migrate

V2 = """apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {name: pi}
spec:
  slotsPerWorker: 2
  runLauncherAsWorker: true
  sshAuthMountPath: /home/mpi/.ssh
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers: [{name: launcher, image: mpi, command: [mpirun, pi]}]
    Worker:
      replicas: 3
      template:
        spec:
          containers: [{name: worker, image: mpi}]
"""


def test_v2beta1_launcher_and_workers(migrated: Migrate) -> None:
    result = migrated(V2)
    policy = result.objects["TrainingRuntime"]["spec"]["mlPolicy"]["mpi"]
    assert policy == {
        "numProcPerNode": 2,
        "mpiImplementation": "OpenMPI",
        "sshAuthMountPath": "/home/mpi/.ssh",
        "runLauncherAsNode": True,
    }
    assert result.container("node")["command"] == ["/usr/sbin/sshd", "-De"]
    assert result.env("node") == {"K_MPI_JOB_ROLE": "worker"}
    assert result.env("launcher") == {"K_MPI_JOB_ROLE": "launcher"}
    assert "dependsOn" not in result.rjob("launcher")  # AtStartup
    trainer = result.objects["TrainJob"]["spec"]["trainer"]
    assert trainer == {"numNodes": 4, "numProcPerNode": 2}  # the launcher is a node too


def test_v1_launcher_waits_for_ready_workers(migrated: Migrate) -> None:
    result = migrated(
        V2.replace("v2beta1", "v1")
        .replace("  runLauncherAsWorker: true\n", "")
        .replace("  sshAuthMountPath: /home/mpi/.ssh\n", "")
    )
    assert result.rjob("launcher")["dependsOn"] == [{"name": "node", "status": "Ready"}]
    assert result.env("launcher") == {
        "NVIDIA_VISIBLE_DEVICES": "",
        "NVIDIA_DRIVER_CAPABILITIES": "",
    }
    assert "MPI_WORKER_HAS_NO_SSHD_COMMAND" in result.codes


VOLCANO = """apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: vmpi}
spec:
  plugins: {mpi: ["--master=lead", "--worker=w", "--port=2022"], ssh: ["--ssh-key-file-path=/home/u/.ssh"]}
  tasks:
    - name: lead
      replicas: 1
      template:
        spec:
          containers: [{name: side, image: s}, {name: lead, image: m, command: [mpirun, hi]}]
    - name: w
      replicas: 2
      template:
        spec:
          containers: [{name: w, image: m, command: [/usr/sbin/sshd, -D]}]
"""


def test_volcano_mpi_plugin(migrated: Migrate) -> None:
    result = migrated(VOLCANO)
    launcher = result.container("launcher")
    assert launcher["name"] == "node"  # the master's main container, moved first
    assert {"name": "mpijob-port", "containerPort": 2022} in launcher["ports"]
    hosts = "vmpi-node-0-0.vmpi,vmpi-node-0-1.vmpi"
    assert result.env("launcher") == {
        "MPI_HOST": hosts,
        "VC_LEAD_HOSTS": "vmpi-launcher-0-0.vmpi",
        "VC_LEAD_NUM": "1",
        "VC_W_HOSTS": hosts,
        "VC_W_NUM": "2",
    }
    assert "MPI_HOST" not in result.env("node")
    policy = result.objects["TrainingRuntime"]["spec"]["mlPolicy"]["mpi"]
    assert policy["sshAuthMountPath"] == "/home/u/.ssh"
    assert result.objects["TrainJob"]["spec"]["trainer"] == {"numNodes": 2, "numProcPerNode": 1}


def test_v2beta1_launcher_backoff_is_the_run_policy_or_the_job_default(
    migrated: Migrate,
) -> None:
    """MPI Operator v0.7.0 passes runPolicy.backoffLimit as it is to the launcher Job
    (unset: Kubernetes' 6) and none to its workers, pods it never replaces."""
    result = migrated(V2)
    assert result.rjob("launcher")["template"]["spec"]["backoffLimit"] == 6
    assert result.rjob("node")["template"]["spec"]["backoffLimit"] == 0  # Never: stays failed
    assert "LAUNCHER_BACKOFF_DEFAULT" in result.codes
    limited = V2.replace(
        "spec:\n  slotsPerWorker", "spec:\n  runPolicy: {backoffLimit: 3}\n  slotsPerWorker"
    )
    limited = limited.replace("    Worker:\n", "    Worker:\n      restartPolicy: OnFailure\n")
    result = migrated(limited)
    assert result.rjob("launcher")["template"]["spec"]["backoffLimit"] == 3
    assert result.rjob("node")["template"]["spec"]["backoffLimit"] == 2147483647


def test_v2beta1_deadline_and_ttl_are_reported_as_launcher_fields(migrated: Migrate) -> None:
    run = "spec:\n  runPolicy: {activeDeadlineSeconds: 60, ttlSecondsAfterFinished: 5}\n  slotsPerWorker"
    result = migrated(V2.replace("spec:\n  slotsPerWorker", run))
    assert result.objects["TrainJob"]["spec"]["activeDeadlineSeconds"] == 60
    reports = result.migration.reports[0]
    assert reports.covers("job:launcher:activeDeadlineSeconds")
    assert reports.covers("job:launcher:ttlSecondsAfterFinished")


def test_v1_keeps_the_training_operator_retries(migrated: Migrate) -> None:
    """Training Operator v1.9.4 retried forever while a replica restarts (unset
    backoffLimit): the same limit on every Job."""
    v1 = V2.replace("v2beta1", "v1").replace("  runLauncherAsWorker: true\n", "")
    v1 = v1.replace("    Worker:\n", "    Worker:\n      restartPolicy: OnFailure\n")
    result = migrated(v1)
    assert result.rjob("launcher")["template"]["spec"]["backoffLimit"] == 2147483647
    assert result.rjob("node")["template"]["spec"]["backoffLimit"] == 2147483647
