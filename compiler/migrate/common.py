"""What every v1 kind shares: options, the job context (report, input errors, what
was consumed), the v1 defaults and webhook checks, runPolicy, restart policies, gang
scheduling, pod templates and the output objects (TrainJob + dedicated runtime)."""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.scalarstring import SingleQuotedScalarString

from compiler.errors import InputError, ObjectRef, Problem
from compiler.migrate.report import Diagnostic, JobReport, ObjectId
from compiler.migrate.source import TRAINER, SourceObject
from compiler.upstream.versions import DEFAULT_TRAINER_VERSION

ANCESTOR = "trainer.kubeflow.org/trainjob-ancestor-step"
FRAMEWORK = "trainer.kubeflow.org/framework"
SOURCE_ANNOTATION = "trainc.dev/migrated-from"
INDEX_FIELD = "metadata.annotations['batch.kubernetes.io/job-completion-index']"
MAX_INT32 = 2147483647
JOB_BACKOFF_DEFAULT = 6  # the API server's default of a Job's spec.backoffLimit
# etcd's default request limit (--max-request-bytes): the API server cannot store an
# object bigger than this, so an output value over it could never be applied
MAX_OBJECT_BYTES = 3 * 512 * 1024
IGNORED_METADATA = (
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "managedFields",
    "ownerReferences",
    "selfLink",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "finalizers",
)
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
_DNS1035 = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?\Z")


@dataclass(frozen=True)
class Options:
    namespace: str = "default"
    compat_env: bool = True
    gang_scheduler: str = "none"  # none | volcano | <scheduler-plugins scheduler name>
    allow_lossy: bool = False  # errors become warnings and the documented fallback is used
    tf_config_shim: bool = False
    merge_template: str = ""  # "" | worker | master
    trainer_version: str = DEFAULT_TRAINER_VERSION  # the release the output is for


@dataclass
class Job:
    """One v1 job being translated."""

    src: SourceObject
    options: Options
    report: JobReport
    problems: list[Problem] = field(default_factory=list)
    consumed: set[str] = field(default_factory=set)

    @property
    def data(self) -> CommentedMap:
        return self.src.data

    @property
    def name(self) -> str:
        return self.src.name

    @property
    def namespace(self) -> str:
        return self.src.namespace or self.options.namespace

    @property
    def spec(self) -> dict[str, Any]:
        spec = self.data.get("spec")
        return spec if isinstance(spec, dict) else {}

    # --- recording -------------------------------------------------------------------

    def reject(self, path: str, message: str) -> None:
        """The v1 webhook (or the operator's validation) would reject the job."""
        keys = tuple(int(k) if k.isascii() and k.isdigit() else k for k in _split(path))
        self.problems.append(
            Problem(
                message,
                self.src.location(keys),
                ObjectRef(self.src.kind, self.name, self.namespace),
                path,
                rule="v1-webhook",
            )
        )

    def mapped(self, source: str, target: str) -> None:
        self.consumed.add(source)
        self.report.mapped(source, target)

    def diag(
        self,
        code: str,
        severity: str,
        source: str,
        message: str,
        *,
        target: str = "",
        action: str = "translated",
        workaround: str = "",
        decide: bool = False,
        covers: tuple[str, ...] = (),
        hard: bool = False,
    ) -> None:
        """Record a diagnostic; ``hard`` errors have no fallback, so ``--allow-lossy``
        keeps them errors."""
        if severity == "error" and self.options.allow_lossy and not hard:
            severity = "warning"
            message += " (--allow-lossy: the documented fallback is used)"
        self.consumed.add(source)
        self.report.add(
            Diagnostic(code, severity, source, message, target, action, workaround, decide, covers)
        )

    def consume(self, path: str) -> None:
        self.consumed.add(path)

    def raise_problems(self) -> None:
        if self.problems:
            raise InputError(self.problems)


def refuse(
    job: Job, code: str, path: str, message: str, *, hard: bool = True, workaround: str = ""
) -> None:
    """An error of the job's report: the shape has no faithful v2 form."""
    job.diag(
        code,
        "error",
        path,
        message,
        action="rejected",
        workaround=workaround,
        decide=True,
        covers=("*",),
        hard=hard,
    )


def _split(path: str) -> list[str]:
    out: list[str] = []
    for part in re.findall(r"[^.\[\]]+", path):
        out.append(part)
    return out


# --- small helpers ----------------------------------------------------------------------


def cmap(*pairs: tuple[str, Any]) -> CommentedMap:
    out = CommentedMap()
    for key, value in pairs:
        out[key] = value
    return out


def child(mapping: Any, key: str, empty: Any) -> Any:
    """``mapping[key]``, set to ``empty`` when it is absent or null (the API server
    drops a null field: ``ports: null`` is no ports)."""
    value = mapping.get(key)
    if value is None:
        mapping[key] = value = empty
    return value


def seq(*items: Any) -> CommentedSeq:
    return CommentedSeq(list(items))


_YAML11_WORDS = frozenset(
    [
        "y",
        "Y",
        "yes",
        "Yes",
        "YES",
        "n",
        "N",
        "no",
        "No",
        "NO",
        "true",
        "True",
        "TRUE",
        "false",
        "False",
        "FALSE",
        "on",
        "On",
        "ON",
        "off",
        "Off",
        "OFF",
        "~",
        "null",
        "Null",
        "NULL",
    ]
)


def env_value(name: str, value: str) -> CommentedMap:
    """An env entry; a value the Kubernetes (YAML 1.1) reader would take for another
    type is written quoted.

    >>> env_value("PADDLE_JOB_ID", "on")["value"].__class__.__name__
    'SingleQuotedScalarString'
    """
    text: str = value
    if value in _YAML11_WORDS or value == "":
        text = SingleQuotedScalarString(value)
    return cmap(("name", name), ("value", text))


def env_index(name: str) -> CommentedMap:
    return cmap(
        ("name", name),
        ("valueFrom", cmap(("fieldRef", cmap(("fieldPath", INDEX_FIELD))))),
    )


def int_or_none(value: Any) -> int | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value
    return None


def digit_count(start: int, stop: int) -> int:
    """The decimal digits of all of ``range(start, stop)`` (``start >= 0``), counted
    without writing the numbers out.

    >>> digit_count(8, 12) == len("891011")
    True
    """
    total, width, low = 0, 1, 0
    while low < stop:
        high = 10**width
        first, last = max(low, start), min(high, stop)
        if first < last:
            total += (last - first) * width
        low, width = high, width + 1
    return total


def listing_bytes(count: int, fixed: int, start: int = 0) -> int:
    """The length of ``count`` entries, each ``fixed`` characters plus the index
    ``start + i``, joined by one-character separators (a host list, a TF_CONFIG role).

    >>> listing_bytes(3, len("w-.w"), 1) == len("w-1.w,w-2.w,w-3.w")
    True
    """
    if count <= 0:
        return 0
    return count * fixed + digit_count(start, start + count) + count - 1


def listing_fits(job: Job, source: str, what: str, size: int) -> bool:
    """Whether a value listing every pod (``size`` bytes, computed before it is built)
    fits in an object the API server can store; if not, a hard error of the report.
    The list is never built then: its size grows with the replica count."""
    if size <= MAX_OBJECT_BYTES:
        return True
    refuse(
        job,
        "HOST_LIST_TOO_LARGE",
        source,
        f"{what} lists every pod: {size} bytes, over the {MAX_OBJECT_BYTES} bytes of an "
        "object the API server can store (etcd's default request limit); the pods that "
        "carry it could not be created",
        workaround="use fewer replicas",
    )
    return False


# --- v1 webhook checks (PyTorch, TF, XGBoost, Paddle, JAX) -------------------------------


@dataclass(frozen=True)
class Kind:
    """The facts of one v1 kind."""

    kind: str
    replica_field: str
    types: tuple[str, ...]  # exact keys, rank order
    main: str  # main container name
    port_name: str
    port: int
    restart: str  # default replica restart policy
    framework: str
    check_types: bool = True  # the webhook restricts the keys
    check_run_policy: bool = True  # JAXJob's webhook does not call ValidateRunPolicy


MANAGED_BY = ("kubeflow.org/training-operator", "kueue.x-k8s.io/multikueue")


def webhook_checks(job: Job, kind: Kind) -> None:
    """The v1.9.4 validating webhook of ``kind``, on the job as submitted."""
    name = job.name
    if not _DNS1035.match(name) or len(name) > 63:
        job.reject(
            "metadata.name",
            f'Invalid value: "{name}": should match: a DNS-1035 label must consist of lower case '
            "alphanumeric characters or '-', start with an alphabetic character, and end with "
            "an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation "
            "is '[a-z]([-a-z0-9]*[a-z0-9])?')",
        )
    run_policy = job.spec.get("runPolicy") or {}
    if kind.check_run_policy and run_policy.get("managedBy") not in (None, *MANAGED_BY):
        job.reject(
            "spec.runPolicy.managedBy",
            f'Unsupported value: "{run_policy.get("managedBy")}": supported values: '
            + ", ".join(f'"{m}"' for m in MANAGED_BY),
        )
    specs = job.spec.get(kind.replica_field)
    base = f"spec.{kind.replica_field}"
    if not isinstance(specs, dict):
        job.reject(base, "Required value: must be required")
        return
    chief_or_master = 0
    for rtype, rspec in specs.items():
        path = f"{base}[{rtype}]"
        if kind.check_types and rtype not in kind.types:
            job.reject(
                path,
                f'Unsupported value: "{rtype}": supported values: '
                + ", ".join(f'"{t}"' for t in kind.types),
            )
        containers = (
            (((rspec or {}).get("template") or {}).get("spec") or {}).get("containers")
        ) or []
        cpath = f"{path}.template.spec.containers"
        if not containers:
            job.reject(cpath, "Required value: must be specified")
        present = False
        for index, container in enumerate(containers):
            if not (container or {}).get("image"):
                job.reject(f"{cpath}[{index}].image", "Required value: must be required")
            if (container or {}).get("name") == kind.main:
                present = True
        if not present:
            main = f'"{kind.main}"' if kind.kind == "PaddleJob" else kind.main
            job.reject(cpath, f"Required value: must have at least one container with name {main}")
        replicas = (rspec or {}).get("replicas")
        if kind.kind in ("PyTorchJob", "XGBoostJob") and rtype == "Master":
            if replicas != 1:
                job.reject(f"{path}.replicas", "Forbidden: must be 1")
        elif kind.kind == "PyTorchJob" and isinstance(replicas, int) and replicas < 1:
            job.reject(f"{path}.replicas", "Forbidden: must be at least 1")
        if rtype in ("Chief", "Master"):
            chief_or_master += 1
    if kind.kind == "TFJob" and chief_or_master > 1:
        job.reject(base, "Forbidden: must not have more than 1 Chief or Master role")
    if kind.kind == "XGBoostJob" and "Master" not in specs:
        job.reject(f"{base}[Master]", "Required value: must be present")


def normalise_types(job: Job, kind: Kind) -> dict[str, dict[str, Any]]:
    """The defaulter's case-insensitive key normalisation; keys in rank order."""
    specs = job.spec.get(kind.replica_field) or {}
    out: dict[str, dict[str, Any]] = {}
    for rtype, rspec in specs.items():
        canonical = next((t for t in kind.types if t.lower() == str(rtype).lower()), str(rtype))
        out[canonical] = rspec  # the user's object (comments survive)
        if canonical != rtype:
            job.diag(
                "REPLICA_TYPE_NORMALISED",
                "info",
                f"spec.{kind.replica_field}[{rtype}]",
                f"the v1 defaulter reads {rtype!r} as {canonical}",
            )
    order = {t: i for i, t in enumerate(kind.types)}
    return dict(sorted(out.items(), key=lambda item: order.get(item[0], 99)))


def replicas_of(rspec: dict[str, Any]) -> int:
    value = int_or_none(rspec.get("replicas"))
    return 1 if value is None else value


def main_container_index(template: dict[str, Any], main: str) -> int:
    containers = ((template.get("spec") or {}).get("containers")) or []
    for index, container in enumerate(containers):
        if container.get("name") == main:
            return index
    return 0


def port_of(rspec: dict[str, Any] | None, main: str, port_name: str, default: int) -> int:
    """The defaulted port: the main container's port named ``port_name``."""
    if rspec is None:
        return default
    containers = (((rspec.get("template") or {}).get("spec") or {}).get("containers")) or []
    for container in containers:
        if container.get("name") == main:
            for port in container.get("ports") or []:
                if port.get("name") == port_name:
                    return int(port.get("containerPort") or default)
    return default


# --- common mapping ---------------------------------------------------------------------


def check_metadata(job: Job) -> None:
    meta = job.data.get("metadata") or {}
    for key in meta:
        if key in IGNORED_METADATA:
            job.diag(
                "SERVER_METADATA_IGNORED",
                "info",
                f"metadata.{key}",
                "server-set metadata is not carried over",
                action="dropped",
            )
    job.consume("apiVersion")
    job.consume("kind")
    job.consume("status")
    if "status" in job.data:
        job.diag(
            "STATUS_IGNORED",
            "info",
            "status",
            "the v1 status is not carried over",
            action="dropped",
        )


def trainjob_metadata(job: Job) -> CommentedMap:
    meta = job.data.get("metadata") or CommentedMap()
    out = cmap(("name", job.name), ("namespace", job.namespace))
    job.mapped("metadata.name", "TrainJob.metadata.name")
    job.mapped(
        "metadata.namespace" if "namespace" in meta else "metadata", "TrainJob.metadata.namespace"
    )
    labels = meta.get("labels")
    if labels:
        out["labels"] = copy.deepcopy(labels)
        job.mapped("metadata.labels", "TrainJob.metadata.labels")
    annotations = meta.get("annotations")
    if annotations:
        kept = copy.deepcopy(annotations)
        if LAST_APPLIED in kept:
            del kept[LAST_APPLIED]
            job.diag(
                "LAST_APPLIED_DROPPED",
                "info",
                f"metadata.annotations[{LAST_APPLIED}]",
                "kubectl's record of the v1 object is not carried over",
                action="dropped",
            )
        if kept:
            out["annotations"] = kept
        job.mapped("metadata.annotations", "TrainJob.metadata.annotations")
    return out


def run_policy(
    job: Job, restart_policies: list[str], runtime: Runtime, *, mpi_operator: bool = False
) -> None:
    """runPolicy: suspend, managedBy, activeDeadlineSeconds, TTL, cleanPodPolicy,
    backoffLimit, schedulingPolicy (and the gang scheduler option). With
    ``mpi_operator`` (an MPIJob v2beta1) as the MPI Operator v0.7.0 applies them: on its
    launcher Job."""
    policy = job.spec.get("runPolicy") or {}
    base = "spec.runPolicy"
    if "runPolicy" in job.spec and not policy:
        job.consume(base)
    if policy.get("suspend") is True:
        job.mapped(f"{base}.suspend", "TrainJob.spec.suspend")
    elif "suspend" in policy:
        job.mapped(f"{base}.suspend", "TrainJob.spec.suspend (default false)")
    managed = policy.get("managedBy")
    if managed == "kueue.x-k8s.io/multikueue":
        job.mapped(f"{base}.managedBy", "TrainJob.spec.managedBy")
    elif managed is not None:
        job.diag(
            "MANAGED_BY_DEFAULT",
            "info",
            f"{base}.managedBy",
            "the v1 operator's own name: the TrainJob keeps v2's default manager",
            target="TrainJob.spec.managedBy",
            action="translated",
        )
    _deadline_and_ttl(job, policy, runtime, mpi_operator)
    _clean_pod_policy(job, policy)
    if mpi_operator:
        _launcher_backoff_limit(job, policy, restart_policies, runtime)
    else:
        _backoff_limit(job, policy, restart_policies, runtime)
    scheduling(job, policy.get("schedulingPolicy"), runtime)


def _deadline_and_ttl(
    job: Job, policy: dict[str, Any], runtime: Runtime, mpi_operator: bool
) -> None:
    """activeDeadlineSeconds (to the TrainJob: at least 1 in v2) and
    ttlSecondsAfterFinished (to the JobSet)."""
    base = "spec.runPolicy"
    deadline = policy.get("activeDeadlineSeconds")
    if deadline is not None:
        if isinstance(deadline, int) and deadline >= 1 and mpi_operator:
            job.diag(
                "ACTIVE_DEADLINE_WHOLE_JOB",
                "warning",
                f"{base}.activeDeadlineSeconds",
                "the MPI Operator set the deadline on its launcher Job (counted from the launcher's start); v2 counts it for the whole TrainJob, workers included",
                target="TrainJob.spec.activeDeadlineSeconds",
                action="approximated",
                covers=("job:launcher:activeDeadlineSeconds",),
            )
        elif isinstance(deadline, int) and deadline >= 1:
            job.mapped(f"{base}.activeDeadlineSeconds", "TrainJob.spec.activeDeadlineSeconds")
        else:
            refuse(
                job,
                "ACTIVE_DEADLINE_INVALID",
                f"{base}.activeDeadlineSeconds",
                f"{deadline} is not valid in v2 (minimum 1)",
                workaround="remove it or set at least 1",
            )
    ttl = policy.get("ttlSecondsAfterFinished")
    if ttl is not None:
        runtime.jobset_spec["ttlSecondsAfterFinished"] = ttl
        job.diag(
            "TTL_DELETES_JOBSET_ONLY",
            "warning",
            f"{base}.ttlSecondsAfterFinished",
            "v2 deletes the JobSet (and its pods) after the TTL; the TrainJob object stays "
            + (
                "(the MPI Operator set the TTL on its launcher Job: only that Job went)"
                if mpi_operator
                else "(v1 deleted the job itself)"
            ),
            target="TrainingRuntime.spec.template.spec.ttlSecondsAfterFinished",
            action="approximated",
            workaround="delete finished TrainJobs with a cleanup CronJob",
            covers=("job:launcher:ttlSecondsAfterFinished",) if mpi_operator else (),
        )


def _clean_pod_policy(job: Job, policy: dict[str, Any]) -> None:
    """cleanPodPolicy (runPolicy's, or the older spec-level field): JobSet's own
    cleanup is reported against it."""
    base = "spec.runPolicy"
    clean = policy.get("cleanPodPolicy") or job.spec.get("cleanPodPolicy") or "None"
    clean_path = (
        f"{base}.cleanPodPolicy"
        if "cleanPodPolicy" in policy
        else "spec.cleanPodPolicy"
        if "cleanPodPolicy" in job.spec
        else f"{base}.cleanPodPolicy"
    )
    if clean == "None":
        job.diag(
            "CLEANPOD_NONE_NOT_PRESERVED",
            "warning",
            clean_path,
            "v1 kept every pod after the job finished; JobSet deletes still-running pods when it finishes (like Running)",
            action="approximated",
            workaround="set ttlSecondsAfterFinished to control when finished pods go",
        )
    elif clean == "Running":
        job.diag(
            "CLEANPOD_RUNNING",
            "info",
            clean_path,
            "JobSet deletes still-running pods when it finishes, as v1 did",
            action="approximated",
        )
    else:
        job.diag(
            "CLEANPOD_ALL_APPROX",
            "warning",
            clean_path,
            "finished pods stay until the JobSet is deleted (v1 deleted all pods)",
            action="approximated",
            workaround="set ttlSecondsAfterFinished",
        )


def _backoff_limit(
    job: Job, policy: dict[str, Any], restart_policies: list[str], runtime: Runtime
) -> None:
    """backoffLimit to every Job; unset, what v1 did: retry forever when a replica
    restarts, else fail at once."""
    base = "spec.runPolicy"
    backoff = policy.get("backoffLimit")
    retrying = any(p in ("OnFailure", "Always", "ExitCode") for p in restart_policies)
    if backoff is not None:
        runtime.backoff_limit = int(backoff)
        job.diag(
            "BACKOFF_SEMANTICS",
            "warning",
            f"{base}.backoffLimit",
            "the Job counts failed pods and container restarts per Job; v1 summed the restarts of running pods across the whole job",
            target="TrainingRuntime...template.spec.backoffLimit",
            action="approximated",
        )
    elif retrying:
        runtime.backoff_limit = MAX_INT32
        job.diag(
            "UNBOUNDED_RETRIES",
            "info",
            f"{base}.backoffLimit",
            "unset with restarting replicas: v1 retried forever, so the Job's backoffLimit is 2147483647",
            target="TrainingRuntime...template.spec.backoffLimit",
        )
    else:
        runtime.backoff_limit = 0
        job.diag(
            "NO_RETRIES",
            "info",
            f"{base}.backoffLimit",
            "unset with Never replicas: v1 failed on the first pod failure, so the Job's backoffLimit is 0",
            target="TrainingRuntime...template.spec.backoffLimit",
        )


def _launcher_backoff_limit(
    job: Job, policy: dict[str, Any], restart_policies: list[str], runtime: Runtime
) -> None:
    """The MPI Operator v0.7.0 passes backoffLimit as it is to its launcher Job (unset:
    the Job's default, 6) and none to the workers, plain pods it never replaces: a
    worker restarting OnFailure restarts in place without limit, one that fails (Never)
    stays failed."""
    base = "spec.runPolicy"
    backoff = policy.get("backoffLimit")
    worker = restart_policies[-1]  # [Launcher, Worker]
    for rjob in runtime.jobs:
        if rjob.name == "launcher":
            rjob.backoff_limit = JOB_BACKOFF_DEFAULT if backoff is None else int(backoff)
        else:
            rjob.backoff_limit = MAX_INT32 if worker in ("OnFailure", "Always") else 0
    if backoff is not None:
        job.mapped(f"{base}.backoffLimit", "launcher Job backoffLimit")
    else:
        job.diag(
            "LAUNCHER_BACKOFF_DEFAULT",
            "info",
            f"{base}.backoffLimit",
            f"unset: the MPI Operator left the launcher Job's backoffLimit to Kubernetes' default, {JOB_BACKOFF_DEFAULT}; it is written out",
            target="launcher Job backoffLimit",
        )
    job.diag(
        "WORKER_BACKOFF",
        "info",
        "spec.mpiReplicaSpecs[Worker].restartPolicy",
        "the MPI Operator's workers are pods it never replaces: the node Job's backoffLimit is "
        + (
            f"{MAX_INT32} (restarts in place, unbounded)"
            if worker in ("OnFailure", "Always")
            else "0 (a failed worker stays failed)"
        ),
        target="node Job backoffLimit",
    )


def trainjob_run_fields(job: Job, spec: CommentedMap) -> None:
    """The runPolicy fields that land on the TrainJob: suspend, activeDeadlineSeconds
    (at least 1 in v2) and a MultiKueue managedBy."""
    run = job.spec.get("runPolicy") or {}
    if run.get("suspend") is True:
        spec["suspend"] = True
    deadline = run.get("activeDeadlineSeconds")
    if isinstance(deadline, int) and not isinstance(deadline, bool) and deadline >= 1:
        spec["activeDeadlineSeconds"] = deadline
    if run.get("managedBy") == "kueue.x-k8s.io/multikueue":
        spec["managedBy"] = run["managedBy"]


def scheduling(job: Job, policy: dict[str, Any] | None, runtime: Runtime) -> None:
    gang = job.options.gang_scheduler
    base = "spec.runPolicy.schedulingPolicy"
    policy = policy or {}
    if gang == "none":
        if policy:
            job.diag(
                "SCHEDULING_POLICY_IGNORED_IN_V1",
                "info",
                base,
                "gang scheduling is off (--v1-gang-scheduler none): v1 ignored schedulingPolicy too",
                action="dropped",
                workaround="pass --v1-gang-scheduler volcano|<scheduler-plugins name> if your operator ran with --gang-scheduler-name",
            )
        return
    total = runtime.total_pods
    if gang == "volcano":
        runtime.pod_group = cmap(("volcano", CommentedMap()))
        runtime.scheduler_name = "volcano"
        if policy.get("queue"):
            runtime.template_annotations["scheduling.volcano.sh/queue-name"] = policy["queue"]
            job.mapped(
                f"{base}.queue",
                "TrainingRuntime.spec.template.metadata.annotations[scheduling.volcano.sh/queue-name]",
            )
        if policy.get("priorityClass"):
            runtime.priority_class = policy["priorityClass"]
            job.diag(
                "PRIORITY_CLASS_APPLIED_TO_PODS",
                "warning",
                f"{base}.priorityClass",
                "v2 takes the PodGroup priority from the pods' priorityClassName, so the pods get that priority too",
                target="pod priorityClassName",
                action="approximated",
                covers=("pod:priorityClassName",),
            )
    else:
        timeout = policy.get("scheduleTimeoutSeconds")
        coscheduling = CommentedMap()
        if timeout is not None:
            coscheduling["scheduleTimeoutSeconds"] = timeout
            job.mapped(
                f"{base}.scheduleTimeoutSeconds",
                "TrainingRuntime.spec.podGroupPolicy.coscheduling.scheduleTimeoutSeconds",
            )
        else:
            job.diag(
                "SCHEDULE_TIMEOUT_DEFAULTED",
                "info",
                base,
                "v2 defaults scheduleTimeoutSeconds to 60 (v1 left it unset)",
                target="TrainingRuntime.spec.podGroupPolicy.coscheduling",
            )
        runtime.pod_group = cmap(("coscheduling", coscheduling))
        runtime.scheduler_name = gang
        for key in ("queue", "priorityClass"):
            if policy.get(key):
                job.diag(
                    "SCHEDULING_FIELD_IGNORED_IN_V1",
                    "info",
                    f"{base}.{key}",
                    "the scheduler-plugins PodGroup has no such field; v1 ignored it too",
                    action="dropped",
                )
    if gang == "volcano" and "scheduleTimeoutSeconds" in policy:
        job.diag(
            "SCHEDULING_FIELD_IGNORED_IN_V1",
            "info",
            f"{base}.scheduleTimeoutSeconds",
            "the Volcano PodGroup has no timeout; v1 ignored it too",
            action="dropped",
        )
    minimum = policy.get("minAvailable")
    if minimum is not None:
        if minimum != total:
            job.diag(
                "MIN_AVAILABLE_DROPPED",
                "warning",
                f"{base}.minAvailable",
                f"v2's PodGroup minMember is always the pod count ({total}), not {minimum}",
                action="dropped",
            )
        else:
            job.mapped(f"{base}.minAvailable", "PodGroup.spec.minMember (the pod count)")
    if policy.get("minResources"):
        job.diag(
            "MIN_RESOURCES_DROPPED",
            "warning",
            f"{base}.minResources",
            "v2 computes minResources as the sum of every pod's requests",
            action="dropped",
        )
    job.diag(
        "GANG_SCHEDULER",
        "info",
        base,
        f"gang scheduling by {gang}: podGroupPolicy and pod schedulerName set in the runtime",
        target="TrainingRuntime.spec.podGroupPolicy",
    )


def restart_policy(job: Job, path: str, value: str | None, default: str) -> tuple[str, bool]:
    """The pod restartPolicy for a replica policy, and whether it is ExitCode."""
    policy = value or default
    if value is not None:
        job.mapped(path, "pod restartPolicy")
    if policy not in ("Always", "OnFailure", "Never", "ExitCode"):
        # the v1 CRD has no enum: the job was accepted, and its pods were not
        refuse(
            job,
            "V1_RESTART_POLICY_INVALID",
            path,
            f"{policy!r} is not a restart policy: v1 accepted the job but could not create its pods",
            workaround="use OnFailure, Never or ExitCode",
        )
        return "Never", False
    if policy == "Always":
        job.diag(
            "RESTART_ALWAYS_UNSUPPORTED",
            "warning",
            path,
            "Jobs forbid Always: pods restart OnFailure",
            target="pod restartPolicy",
            action="approximated",
            covers=("restartPolicy",),
        )
        return "OnFailure", False
    if policy == "ExitCode":
        job.diag(
            "EXITCODE_AS_PODFAILUREPOLICY",
            "info",
            path,
            "ExitCode becomes restartPolicy Never and a podFailurePolicy that fails the job on exit codes 1-127 (needs Kubernetes >= 1.26)",
            target="Job podFailurePolicy",
        )
        return "Never", True
    return policy, False


def pod_failure_policy() -> CommentedMap:
    return cmap(
        (
            "rules",
            seq(
                cmap(
                    ("action", "FailJob"),
                    (
                        "onExitCodes",
                        cmap(
                            ("containerName", "node"),
                            ("operator", "NotIn"),
                            ("values", seq(0, *range(128, 256))),
                        ),
                    ),
                )
            ),
        )
    )


def name_length(job: Job, jobs: list[tuple[str, int]]) -> None:
    """JobSet's pod-name check: <name>-<rjob>-<jobIdx>-<podIdx>-abcde within 63."""
    for rjob, pods in jobs:
        longest = f"{job.name}-{rjob}-0-{max(pods - 1, 0)}-abcde"
        if len(longest) > 63:
            refuse(
                job,
                "NAME_TOO_LONG",
                "metadata.name",
                f"the pod names of replicated job {rjob} ({longest}) exceed 63 characters",
                workaround="rename the job",
            )
            return


# --- the output objects -----------------------------------------------------------------


@dataclass
class ReplicatedJob:
    name: str
    pod_template: CommentedMap
    ancestor: bool = False
    parallelism: int | None = None
    depends_on: CommentedSeq | None = None
    backoff_limit: int | None = None  # over the runtime's, for this Job alone


@dataclass
class Runtime:
    """The dedicated TrainingRuntime being built."""

    ml_policy: CommentedMap
    jobs: list[ReplicatedJob] = field(default_factory=list)
    total_pods: int = 1
    backoff_limit: int | None = None
    exit_code: bool = False
    pod_group: CommentedMap | None = None
    scheduler_name: str | None = None
    priority_class: str | None = None
    template_annotations: CommentedMap = field(default_factory=CommentedMap)
    jobset_spec: CommentedMap = field(default_factory=CommentedMap)
    success_policy: CommentedMap | None = None

    def spec(self) -> CommentedMap:
        out = cmap(("mlPolicy", self.ml_policy))
        if self.pod_group is not None:
            out["podGroupPolicy"] = self.pod_group
        template = CommentedMap()
        if self.template_annotations:
            template["metadata"] = cmap(("annotations", self.template_annotations))
        jobset = CommentedMap()
        for key, value in self.jobset_spec.items():
            jobset[key] = value
        if self.success_policy is not None:
            jobset["successPolicy"] = self.success_policy
        rjobs = CommentedSeq()
        for rjob in self.jobs:
            pod = rjob.pod_template
            pod_spec = child(pod, "spec", CommentedMap())
            if self.scheduler_name and not pod_spec.get("schedulerName"):
                pod_spec["schedulerName"] = self.scheduler_name
            if self.priority_class and not pod_spec.get("priorityClassName"):
                pod_spec["priorityClassName"] = self.priority_class
            job_spec = CommentedMap()
            if rjob.parallelism is not None:
                job_spec["parallelism"] = rjob.parallelism
                job_spec["completions"] = rjob.parallelism
            limit = rjob.backoff_limit if rjob.backoff_limit is not None else self.backoff_limit
            if limit is not None:
                job_spec["backoffLimit"] = limit
            if self.exit_code:
                job_spec["podFailurePolicy"] = pod_failure_policy()
            job_spec["template"] = pod
            job_template = CommentedMap()
            if rjob.ancestor:
                job_template["metadata"] = cmap(("labels", cmap((ANCESTOR, "trainer"))))
            job_template["spec"] = job_spec
            entry = cmap(("name", rjob.name))
            if rjob.depends_on is not None:
                entry["dependsOn"] = rjob.depends_on
            entry["replicas"] = 1
            entry["template"] = job_template
            rjobs.append(entry)
        jobset["replicatedJobs"] = rjobs
        template["spec"] = jobset
        out["template"] = template
        return out


def runtime_object(job: Job, runtime: Runtime, framework: str) -> CommentedMap:
    meta = cmap(
        ("name", job.name),
        ("namespace", job.namespace),
        ("labels", cmap((FRAMEWORK, framework))),
        (
            "annotations",
            cmap((SOURCE_ANNOTATION, f"{job.src.api_version}/{job.src.kind} {job.name}")),
        ),
    )
    return cmap(
        ("apiVersion", TRAINER),
        ("kind", "TrainingRuntime"),
        ("metadata", meta),
        ("spec", runtime.spec()),
    )


def dedicated_runtime_ref(job: Job) -> CommentedMap:
    """The TrainJob's ``runtimeRef`` to the TrainingRuntime written for this job alone
    (same name and namespace as the job, see :func:`runtime_object`)."""
    return cmap(
        ("apiGroup", "trainer.kubeflow.org"), ("kind", "TrainingRuntime"), ("name", job.name)
    )


def trainjob_object(job: Job, spec: CommentedMap) -> CommentedMap:
    return cmap(
        ("apiVersion", TRAINER),
        ("kind", "TrainJob"),
        ("metadata", trainjob_metadata(job)),
        ("spec", spec),
    )


def object_id(obj: dict[str, Any]) -> ObjectId:
    meta = obj.get("metadata") or {}
    return ObjectId(
        str(obj.get("apiVersion")),
        str(obj.get("kind")),
        str(meta.get("namespace") or ""),
        str(meta.get("name")),
    )


# --- pod templates ----------------------------------------------------------------------


def pod_template(
    job: Job,
    template: dict[str, Any] | None,
    path: str,
    main: str,
    *,
    defaulted_port: tuple[str, int] | None = None,
    keep_port: bool = True,
) -> tuple[CommentedMap, int]:
    """A deep copy of a v1 pod template with the main container renamed ``node``
    (the index of the main container is returned). Fields of the template are carried
    over as they are (recorded as mapped); a user restartPolicy is dropped (v1
    overwrote it) and reported."""
    out = copy.deepcopy(template) if template else CommentedMap()
    if not isinstance(out, CommentedMap):
        out = CommentedMap(out)
    spec = child(out, "spec", CommentedMap())
    index = main_container_index(out, main)
    containers = spec.get("containers") or CommentedSeq()
    if containers:
        container = containers[index]
        original = container.get("name")
        if original != "node":
            container["name"] = "node"
            job.diag(
                "MAIN_CONTAINER_RENAMED",
                "info",
                f"{path}.spec.containers[{index}].name",
                f"the main container {original!r} is named node in v2",
                target="container node",
            )
        if defaulted_port is not None:
            port_name, number = defaulted_port
            ports = container.get("ports")
            if not any(p.get("name") == port_name for p in ports or []):
                ports = child(container, "ports", CommentedSeq())
                ports.append(cmap(("name", port_name), ("containerPort", number)))
                job.report.defaulted_ports.append((port_name, number))
                job.diag(
                    "V1_PORT_KEPT",
                    "info",
                    f"{path}.spec.containers[{index}].ports",
                    f"the port v1 defaulted ({port_name} {number}) is written out",
                    target="container node ports",
                )
    if "restartPolicy" in spec:
        job.diag(
            "TEMPLATE_RESTART_POLICY_IGNORED",
            "info",
            f"{path}.spec.restartPolicy",
            "v1 overwrote the pod template's restartPolicy with the replica's; so does the migration",
            action="dropped",
        )
        del spec["restartPolicy"]
    for key in out:
        job.mapped(f"{path}.{key}", "TrainingRuntime pod template")
    return out, index


def strip_for_compare(template: dict[str, Any]) -> Any:
    """A template without what v1 overwrote (restartPolicy), for equivalence checks."""
    out = copy.deepcopy(template)
    spec = out.get("spec") or {}
    spec.pop("restartPolicy", None)
    return _plain(out)


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items() if v not in (None, {}, [])}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def differing_paths(a: Any, b: Any, path: str = "") -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        out: list[str] = []
        for key in sorted(set(a) | set(b)):
            out += differing_paths(a.get(key), b.get(key), f"{path}.{key}" if path else key)
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        out = []
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            out += differing_paths(x, y, f"{path}[{i}]")
        return out
    return [] if a == b else [path or "."]


def hardcoded_addresses(
    job: Job,
    template: dict[str, Any],
    path: str,
    roles: str,
    *,
    origin: str = "a v1 pod address; v2 pods are <job>-node-0-<i>.<job>",
    workaround: str = "use the compat env (MASTER_ADDR, ...) instead of the literal name",
) -> None:
    """A literal ``<job>-<role>-<i>`` (the source's pod name) in a command, argument or
    env value: v2 names its pods otherwise."""
    pattern = re.compile(rf"\b{re.escape(job.name)}-({roles})-\d+\b")
    for index, container in enumerate((template.get("spec") or {}).get("containers") or []):
        texts = [*(container.get("command") or []), *(container.get("args") or [])]
        texts += [str(e.get("value") or "") for e in container.get("env") or []]
        if any(pattern.search(str(t)) for t in texts):
            job.diag(
                "HARDCODED_V1_ADDRESS",
                "warning",
                f"{path}.spec.containers[{index}]",
                f"a command, argument or env value names {origin}",
                action="dropped",
                workaround=workaround,
                decide=True,
            )


def common_notes(job: Job, sidecars: list[str], v1_env_everywhere: bool) -> None:
    job.diag(
        "SERVICE_TOPOLOGY_CHANGED",
        "info",
        "",
        "v1 created one headless Service per pod (<job>-<type>-<i>); JobSet creates one headless Service <job> and pods are <job>-<rjob>-<j>-<i>.<job>",
        covers=("peer:*",),
    )
    job.diag(
        "V1_LABELS_NOT_SET",
        "info",
        "",
        "pods lose the training.kubeflow.org/* labels; JobSet labels replace them (jobset.sigs.k8s.io/jobset-name, batch.kubernetes.io/job-completion-index)",
        covers=("label:*",),
    )
    job.diag(
        "INDEXED_JOB_ENV",
        "info",
        "",
        "Kubernetes sets JOB_COMPLETION_INDEX in every container of an Indexed Job's pods",
        covers=("env:*:JOB_COMPLETION_INDEX",),
    )
    if v1_env_everywhere:
        for sidecar in sidecars:
            job.diag(
                "SIDECAR_ENV_NOT_INJECTED",
                "warning",
                "",
                f"v1 put its env into every container; v2 injects only into node, not into {sidecar}",
                workaround=f"add the variables {sidecar} needs to its env in the runtime",
                covers=(f"env:{sidecar}:*",),
            )


def role_pod(
    job: Job,
    kind: Kind,
    rtype: str,
    rspec: dict[str, Any],
    target: str,
    policies: list[str],
) -> tuple[CommentedMap, int, bool]:
    """A replica type that runs as a replicated job of its own (a TF or Paddle role):
    its pod template (container ``node``, the restart policy as a pod policy), the main
    container's index and whether the policy is ExitCode; ``policies`` gets v1's
    policy, ``target`` is where its replicas go."""
    path = f"spec.{kind.replica_field}[{rtype}]"
    if "replicas" in rspec:
        job.mapped(f"{path}.replicas", target)
    roles = "|".join(t.lower() for t in kind.types)
    hardcoded_addresses(job, rspec.get("template") or {}, f"{path}.template", roles)
    policy, code = restart_policy(
        job, f"{path}.restartPolicy", rspec.get("restartPolicy"), kind.restart
    )
    policies.append(rspec.get("restartPolicy") or kind.restart)
    pod, main = pod_template(
        job,
        rspec.get("template"),
        f"{path}.template",
        kind.main,
        defaulted_port=(kind.port_name, port_of(rspec, kind.main, kind.port_name, kind.port)),
    )
    pod["spec"]["restartPolicy"] = policy
    return pod, main, code


def role_job(name: str, pod: CommentedMap, count: int) -> ReplicatedJob:
    """A role's replicated job: ``node`` (the workers) is the ancestor the TrainJob
    sizes; the others run ``count`` pods."""
    return ReplicatedJob(
        name, pod, ancestor=name == "node", parallelism=None if name == "node" else count
    )
