"""Volcano Job (batch.volcano.sh/v1alpha1) -> TrainJob + runtime with
``podGroupPolicy.volcano``, by the framework translators the v1 jobs use:

* plugin ``pytorch`` (a master task of one pod and a worker task): merged into ``node``
  with ``mlPolicy.torch`` (:func:`compiler.migrate.pytorch.migrate_volcano`);
* plugin ``mpi`` (with ``ssh``): the master task becomes the launcher, the worker task
  the ``node`` Job of ``mlPolicy.mpi`` (:func:`compiler.migrate.mpi.migrate_volcano`);
* plugin ``tensorflow``: one replicated job per role task, TF_CONFIG rebuilt by the shim
  (:func:`compiler.migrate.tensorflow.migrate_volcano`);
* ``ssh`` + ``svc`` with an MPI master (one pod launching mpirun/mpiexec/horovodrun)
  and a worker task, no framework plugin: as the mpi plugin, without its port and
  MPI_HOST;
* ``svc`` tasks named as TensorFlow roles, no plugin: the tensorflow plugin's replicated
  jobs without its TF_CONFIG;
* one task and no framework plugin: a plain runtime (:mod:`compiler.migrate.vcgroup`).

What Volcano's webhook denies is an input error (:mod:`compiler.migrate.vcwebhook`).
Other shapes (``ssh`` with pytorch or over other tasks, several tasks without a plugin,
``ray``, PVC templates) are refused with what to do. Volcano's controller is not a Go module the harness can run, so these rules
follow the spec's reading of its source (plugins env, svc, ssh, pytorch, mpi,
tensorflow; the webhook's plugin defaults)."""

from __future__ import annotations

import re
from typing import Any

from ruamel.yaml.comments import CommentedMap

from compiler.migrate import mpi, pytorch, tensorflow
from compiler.migrate.common import Job, check_metadata, hardcoded_addresses, refuse
from compiler.migrate.vcgroup import migrate_group
from compiler.migrate.vcjob import Tasks
from compiler.migrate.vcwebhook import webhook_checks

TF_ROLES = ("ps", "worker", "chief", "evaluator")
FRAMEWORKS = ("tensorflow", "mpi", "pytorch")


def migrate(job: Job) -> list[CommentedMap]:
    tasks = Tasks(job, *_tasks(job), _plugins(job))
    plugins = tasks.plugins
    names = "|".join(re.escape(n) for n in tasks.names)
    for index, task in enumerate(tasks.tasks):
        # Volcano's pod <job>-<task>-<i> written out: v2 names the pod otherwise
        hardcoded_addresses(
            job,
            task.get("template") or {},
            f"spec.tasks[{index}].template",
            names,
            origin="a Volcano pod address (<job>-<task>-<i>); v2 pods are <job>-<rjob>-0-<i>.<job>",
            workaround="read VC_<TASK>_HOSTS (or /etc/volcano/<task>.host) instead of the literal name",
        )
    frameworks = [p for p in FRAMEWORKS if p in plugins]
    if frameworks == ["mpi"]:
        args = tasks.args("mpi")
        master, worker = args.get("master") or "master", args.get("worker") or "worker"
        return mpi.migrate_volcano(tasks, master, worker, tasks.port("mpi", 22))
    if frameworks == ["tensorflow"]:
        args = tasks.args("tensorflow")
        role_of = {args.get(role) or role: role for role in TF_ROLES}
        return tensorflow.migrate_volcano(tasks, role_of, tasks.port("tensorflow", 2222))
    if not frameworks and "ssh" in plugins and len(tasks.names) > 1:
        pair = _mpi_pair(tasks)
        if pair is not None:
            return mpi.migrate_volcano(tasks, *pair, None)
    if not frameworks and _tf_roles(tasks):
        return tensorflow.migrate_volcano(tasks, {n: n for n in TF_ROLES}, None)
    _refuse_mixed(job, tasks)
    if "pytorch" in plugins:
        return pytorch.migrate_volcano(tasks)
    if "ray" in plugins:
        refuse(
            job,
            "VOLCANO_RAY_UNSUPPORTED",
            "spec.plugins.ray",
            "Trainer v2 has no Ray policy: the ray plugin's head and worker tasks have no runtime form",
            workaround="run the Ray cluster with KubeRay (a RayJob or RayCluster), or keep the job on Volcano",
        )
    elif len(tasks.names) > 1:
        refuse(
            job,
            "VOLCANO_MULTI_TASK_UNSUPPORTED",
            "spec.tasks",
            "several tasks without a framework plugin: v2 sizes one replicated job",
            workaround="name the tasks' roles with a framework plugin (pytorch --master/--worker, mpi --master/--worker, tensorflow), or, for TensorFlow, name the tasks ps/worker/chief/evaluator with the svc plugin; otherwise keep the job on Volcano",
        )
    elif "ssh" in plugins:
        _ssh_dropped(tasks)
    return migrate_group(tasks, tasks.names, None)


def _mpi_pair(tasks: Tasks) -> tuple[str, str] | None:
    """An ssh + svc job of two tasks, one a single pod that launches MPI (its command
    runs mpirun, mpiexec or horovodrun): (master, worker)."""
    if len(tasks.names) != 2 or "svc" not in tasks.plugins:
        return None
    single = [n for n in tasks.names if tasks.replicas(n) == 1]
    masters = [n for n in single if _launches_mpi(tasks.by_name[n])]
    if len(masters) != 1:
        return None
    master = masters[0]
    return master, next(n for n in tasks.names if n != master)


MPI_LAUNCHERS = re.compile(r"\b(mpirun|mpiexec|horovodrun)\b")


def _launches_mpi(task: dict[str, Any]) -> bool:
    containers = ((task.get("template") or {}).get("spec") or {}).get("containers") or []
    return any(
        MPI_LAUNCHERS.search(
            " ".join(map(str, [*(c.get("command") or []), *(c.get("args") or [])]))
        )
        for c in containers
    )


def _tf_roles(tasks: Tasks) -> bool:
    """svc tasks named as TensorFlow roles, a worker among them: their commands build
    TF_CONFIG from the host files."""
    names = set(tasks.names)
    return (
        len(names) > 1
        and "svc" in tasks.plugins
        and "ssh" not in tasks.plugins
        and "worker" in names
        and names <= set(TF_ROLES)
    )


def _ssh_dropped(tasks: Tasks) -> None:
    """One task with the ssh plugin: v2 makes SSH keys only for mlPolicy.mpi."""
    path = tasks.args("ssh").get("ssh-key-file-path") or "/root/.ssh"
    tasks.job.diag(
        "VOLCANO_SSH_DROPPED",
        "warning",
        "spec.plugins.ssh",
        f"no SSH keys are mounted at {path}: v2 generates them only for mlPolicy.mpi (a launcher and its nodes); pods of this task that reach each other over SSH fail",
        action="dropped",
        workaround=f"create a Secret with id_rsa, id_rsa.pub and authorized_keys and mount it at {path} in the runtime's template, or give the job an MPI master task and the mpi plugin",
        decide=True,
        covers=("mount:*", "volume:*"),
    )


def _tasks(job: Job) -> tuple[list[str], list[Any]]:
    """The tasks and their names, checked as Volcano's validating webhook checks them
    (its messages, at the field)."""
    tasks = job.spec.get("tasks") or []
    if not tasks:
        job.reject("spec.tasks", "Required value: No task specified in job spec")
    names = [str(t.get("name") or f"default{i}") for i, t in enumerate(tasks)]
    if len(set(names)) != len(names):
        job.reject("spec.tasks", "Invalid value: duplicated task name")
    for index, task in enumerate(tasks):
        if int(task.get("replicas") or 0) < 0:
            job.reject(f"spec.tasks[{index}].replicas", "Invalid value: replicas must be >= 0")
        if not ((task.get("template") or {}).get("spec") or {}).get("containers"):
            job.reject(
                f"spec.tasks[{index}].template.spec.containers",
                "Required value: a task needs containers",
            )
    job.raise_problems()
    webhook_checks(job, names, tasks)
    job.raise_problems()
    check_metadata(job)
    return names, list(tasks)


def _plugins(job: Job) -> dict[str, Any]:
    """The plugins as Volcano's mutating webhook leaves them (svc added to framework
    jobs, ssh to mpi ones); the ones v2 has nothing for are reported."""
    plugins = dict(job.spec.get("plugins") or {})
    for name in plugins:
        if name in ("pytorch", "svc", "env"):
            job.consume(f"spec.plugins.{name}")
        elif name not in ("ssh", "mpi", "tensorflow"):
            job.diag(
                "VOLCANO_PLUGIN_DROPPED",
                "warning",
                f"spec.plugins.{name}",
                f"the {name} plugin has no v2 equivalent",
                action="dropped",
            )
    if any(p in plugins for p in (*FRAMEWORKS, "ray")) and "svc" not in plugins:
        plugins["svc"] = []
        job.diag(
            "VOLCANO_SVC_DEFAULTED",
            "info",
            "spec.plugins",
            "Volcano's webhook adds the svc plugin to framework jobs; its variables are reproduced",
        )
    if "mpi" in plugins and "ssh" not in plugins:
        plugins["ssh"] = []
    return plugins


def _refuse_mixed(job: Job, tasks: Tasks) -> None:
    """ssh/mpi or tensorflow beside another framework plugin, or ssh over several tasks
    that are no MPI master and worker: no v2 form."""
    plugins = tasks.plugins
    if "mpi" in plugins or ("ssh" in plugins and ("pytorch" in plugins or len(tasks.names) > 1)):
        refuse(
            job,
            "VOLCANO_SSH_UNSUPPORTED",
            "spec.plugins.ssh" if "ssh" in plugins else "spec.plugins.mpi",
            "Volcano's ssh/mpi plugins have a v2 form only as mlPolicy.mpi: an MPI master task (one pod) and a worker task",
            workaround="name the tasks with the mpi plugin (--master=<task> --worker=<task>), or drop the ssh plugin if the pods do not use SSH",
        )
    if "tensorflow" in plugins:
        refuse(
            job,
            "VOLCANO_TF_UNSUPPORTED",
            "spec.plugins.tensorflow",
            "per-task TF_CONFIG has no v2 equivalent",
            workaround="use the tensorflow plugin without other framework plugins",
        )
