"""Intel MPI / MPICH: values as MPI Operator v0.7.0's mpi_job_controller.go writes them
(``intelEnvVars``, ``mpichEnvVars``, ``intelMPISlotsEnv``, ``newConfigMap``); the whole
rendering is compared with the operator by ``make extension-conformance``."""

from __future__ import annotations

from compiler.render.extensions.mpi_hydra import hostfile, launcher_envs, search_domain
from compiler.render.info import Info, PodSet


def pod_set(name: str, count: int) -> PodSet:
    return PodSet(name, None, count, [], [], [], {}, subdomain="job", trainjob_name="job")


def info(*pod_sets: PodSet) -> Info:
    return Info({}, {}, {"mpi": {"numProcPerNode": 2}}, None, {}, list(pod_sets))


def test_intel_launcher_env() -> None:
    assert launcher_envs("intel-mpi", 4) == [
        {"name": "I_MPI_HYDRA_HOST_FILE", "value": "/etc/mpi/hostfile"},
        {"name": "I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS", "value": "-o ConnectionAttempts=10"},
        {"name": "I_MPI_PERHOST", "value": "4"},
    ]


def test_mpich_launcher_env_has_no_slots_variable() -> None:
    assert launcher_envs("mpich", 4) == [
        {"name": "HYDRA_HOST_FILE", "value": "/etc/mpi/hostfile"},
        {"name": "HYDRA_LAUNCH_EXTRA_ARGS", "value": "-o ConnectionAttempts=10"},
    ]


def test_hostfile_is_host_colon_slots_launcher_first_when_it_is_a_node() -> None:
    pods = info(pod_set("launcher", 1), pod_set("node", 2))
    assert hostfile(pods, 2, run_launcher_as_node=True) == (
        "job-launcher-0-0.job:2\njob-node-0-0.job:2\njob-node-0-1.job:2\n"
    )
    assert hostfile(pods, 3, run_launcher_as_node=False) == (
        "job-node-0-0.job:3\njob-node-0-1.job:3\n"
    )


def test_workers_search_the_subdomain_service() -> None:
    assert search_domain("job", "team") == "job.team.svc.cluster.local"
