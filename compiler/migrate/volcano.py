"""Volcano Job (batch.volcano.sh/v1alpha1) -> TrainJob + runtime with
``podGroupPolicy.volcano``, by the framework translators the v1 jobs use:

* plugin ``pytorch`` (a master task of one pod and a worker task): merged into ``node``
  with ``mlPolicy.torch`` (:func:`compiler.migrate.pytorch.migrate_volcano`);
* plugin ``mpi`` (with ``ssh``): the master task becomes the launcher, the worker task
  the ``node`` Job of ``mlPolicy.mpi`` (:func:`compiler.migrate.mpi.migrate_volcano`);
* plugin ``tensorflow``: one replicated job per role task, TF_CONFIG rebuilt by the shim
  (:func:`compiler.migrate.tensorflow.migrate_volcano`);
* one task and no framework plugin: a plain runtime (:mod:`compiler.migrate.vcgroup`).

Other shapes (``ssh`` with pytorch, several tasks without a plugin, PVC templates) are
reported. Volcano's controller is not a Go module the harness can run, so these rules
follow the spec's reading of its source (plugins env, svc, ssh, pytorch, mpi,
tensorflow; the webhook's plugin defaults)."""

from __future__ import annotations

from typing import Any

from ruamel.yaml.comments import CommentedMap

from compiler.migrate import mpi, pytorch, tensorflow
from compiler.migrate.common import Job, check_metadata, refuse
from compiler.migrate.vcgroup import migrate_group
from compiler.migrate.vcjob import Tasks

TF_ROLES = ("ps", "worker", "chief", "evaluator")
FRAMEWORKS = ("tensorflow", "mpi", "pytorch")


def migrate(job: Job) -> list[CommentedMap]:
    tasks = Tasks(job, *_tasks(job), _plugins(job))
    plugins = tasks.plugins
    if "mpi" in plugins and "tensorflow" not in plugins and "pytorch" not in plugins:
        args = tasks.args("mpi")
        master, worker = args.get("master") or "master", args.get("worker") or "worker"
        return mpi.migrate_volcano(tasks, master, worker, tasks.port("mpi", 22))
    if "tensorflow" in plugins and "pytorch" not in plugins and "mpi" not in plugins:
        args = tasks.args("tensorflow")
        role_of = {args.get(role) or role: role for role in TF_ROLES}
        return tensorflow.migrate_volcano(tasks, role_of, tasks.port("tensorflow", 2222))
    _refuse_mixed(job, plugins)
    if "pytorch" in plugins:
        return pytorch.migrate_volcano(tasks)
    if len(tasks.names) > 1:
        refuse(
            job,
            "VOLCANO_MULTI_TASK_UNSUPPORTED",
            "spec.tasks",
            "several tasks without a framework plugin: v2 sizes one replicated job",
        )
    return migrate_group(tasks, tasks.names, None)


def _tasks(job: Job) -> tuple[list[str], list[Any]]:
    """The tasks and their names, checked as Volcano's webhook checks them."""
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


def _refuse_mixed(job: Job, plugins: dict[str, Any]) -> None:
    """ssh/mpi or tensorflow beside another framework plugin: no v2 form."""
    if "ssh" in plugins or "mpi" in plugins:
        refuse(
            job,
            "VOLCANO_SSH_UNSUPPORTED",
            "spec.plugins.ssh" if "ssh" in plugins else "spec.plugins.mpi",
            "Volcano's ssh/mpi plugins have no v2 equivalent outside mlPolicy.mpi, which this migration does not build from a Volcano Job",
        )
    if "tensorflow" in plugins:
        refuse(
            job,
            "VOLCANO_TF_UNSUPPORTED",
            "spec.plugins.tensorflow",
            "per-task TF_CONFIG has no v2 equivalent",
        )
