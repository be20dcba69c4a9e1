"""``make migrate-conformance``: for every case under ``cases/``, the v1 operator's pods
(the Go harness) versus the pods of the JobSet trainc renders from the migrated
TrainJob, compared on what the training process sees (``pods.py``). A job is
*equivalent* when both sides reject it, or when every difference is named by a
diagnostic of its report. Closing line: ``migrate-conformance: X/Y jobs equivalent``.

    python -m tests.migrate.conformance [--only NAME...] [--verbose]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from compiler.errors import InputError
from compiler.migrate import Migration, Options, migrate_paths
from compiler.migrate.report import JobReport
from tests.migrate.pods import Addresses, compare_pods, v1_pods, v2_pods
from tests.migrate.volcano_model import volcano_pods

HERE = Path(__file__).parent
CASES = HERE / "cases"
ORACLE = HERE / "oracle" / "bin" / "v1oracle"
ORDER = {"Master": 0, "Chief": 0, "PS": 1, "Worker": 2, "Evaluator": 3}
MAIN = {
    "PyTorchJob": "pytorch",
    "TFJob": "tensorflow",
    "XGBoostJob": "xgboost",
    "PaddleJob": "paddle",
    "JAXJob": "jax",
}


@dataclass
class Case:
    name: str
    path: Path
    description: str
    options: Options
    expect: str  # migrated | refused | rejected
    job: dict[str, Any] = field(default_factory=dict)
    # the API server's own refusal, met before the operator ever sees the job (the v1
    # CRD's schema: controller-gen makes a field without omitempty, as a container's
    # name, required); the operator's validation is then unreachable
    apiserver: str = ""


@dataclass
class Outcome:
    case: Case
    equivalent: bool
    detail: list[str]


def load_cases(only: list[str] | None = None) -> list[Case]:
    out: list[Case] = []
    for folder in sorted(p for p in CASES.iterdir() if (p / "case.yaml").is_file()):
        if only and folder.name not in only:
            continue
        meta = yaml.safe_load((folder / "case.yaml").read_text())
        options = Options(
            compat_env=meta.get("compatEnv", True),
            gang_scheduler=meta.get("gangScheduler", "none"),
            allow_lossy=meta.get("allowLossy", False),
            merge_template=meta.get("mergeTemplate", ""),
        )
        job = yaml.safe_load((folder / "job.yaml").read_text())
        job.setdefault("metadata", {}).setdefault("namespace", "default")
        out.append(
            Case(
                folder.name,
                folder / "job.yaml",
                meta["description"],
                options,
                meta["expect"],
                job,
                meta.get("apiserver", ""),
            )
        )
    return out


def run_oracle(cases: list[Case]) -> dict[str, dict[str, Any]]:
    requests = [
        {
            "id": c.name,
            "object": c.job,
            "gangScheduler": "" if c.options.gang_scheduler == "none" else c.options.gang_scheduler,
        }
        for c in cases
        if c.job.get("apiVersion", "").startswith("kubeflow.org/")
    ]
    if not requests:
        return {}
    done = subprocess.run(
        [str(ORACLE)], input=json.dumps(requests), capture_output=True, text=True, check=True
    )
    return {r["id"]: r for r in json.loads(done.stdout)}


def migrate_case(case: Case) -> Migration | InputError:
    try:
        return migrate_paths([str(case.path)], case.options)
    except InputError as error:
        return error


def rendered(objects: list[Any], extra: list[str] | None = None) -> list[Any]:
    """Every object trainc renders from the migration's output (with the PriorityClasses
    it names, which a cluster would hold)."""
    import copy

    from compiler.cli.migrate import documents
    from compiler.plan.stages import compile_paths

    objects = copy.deepcopy(objects)
    for obj in objects:
        # A MultiKueue TrainJob is rendered by the worker cluster's controller, from a
        # copy without managedBy: compare what that cluster creates.
        if obj.get("kind") == "TrainJob":
            obj["spec"].pop("managedBy", None)
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in documents(objects).items():
            path = Path(tmp) / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        classes = sorted(set(_priority_classes(objects)))
        if classes:
            (Path(tmp) / "priorityclasses.yaml").write_text(
                "".join(
                    f"---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: {c}\nvalue: 1000\n"
                    for c in classes
                )
            )
        build = compile_paths([tmp, *(extra or [])])
    return [o.data for o in build.objects]


def _priority_classes(value: Any) -> list[str]:
    out: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "priorityClassName" and isinstance(item, str):
                out.append(item)
            else:
                out += _priority_classes(item)
    elif isinstance(value, list):
        for item in value:
            out += _priority_classes(item)
    return out


def render(objects: list[Any], extra: list[str] | None = None) -> dict[str, Any]:
    jobsets = [o for o in rendered(objects, extra) if o.get("kind") == "JobSet"]
    assert len(jobsets) == 1, len(jobsets)
    return jobsets[0]


def _logical_v1(case: Case) -> tuple[Any, Any]:
    job = case.job
    name = job["metadata"]["name"]
    kind = job["kind"]
    if kind == "MPIJob":

        def logical(pod: str) -> str:
            return "launcher" if pod == f"{name}-launcher" else "worker-" + pod.rsplit("-", 1)[1]

        def main(pod: str, spec: dict[str, Any]) -> str:
            if pod.endswith("-launcher"):
                return str(spec["containers"][0]["name"])
            wanted = job["spec"].get("mainContainer")
            names = [c["name"] for c in spec["containers"]]
            return str(wanted if wanted in names else names[0])

        return logical, main
    mmaster = _volcano_mpi_master(job) if kind == "Job" else None
    if mmaster is not None:  # Volcano MPI

        def mlogical(pod: str) -> str:
            task, _, index = pod[len(name) + 1 :].rpartition("-")
            return "launcher" if task == mmaster else f"worker-{index}"

        def mmain(pod: str, spec: dict[str, Any]) -> str:
            containers = spec["containers"]
            task = pod[len(name) + 1 :].rpartition("-")[0]
            names = [c["name"] for c in containers]
            return task if task in names and len(names) > 1 else str(names[0])

        return mlogical, mmain
    roles = _volcano_tf_roles(job) if kind == "Job" else None
    if roles is not None:

        def tlogical(pod: str) -> str:
            task, _, index = pod[len(name) + 1 :].rpartition("-")
            return f"{roles.get(task, task)}-{index}"

        def tmain(pod: str, spec: dict[str, Any]) -> str:
            containers = spec["containers"]
            task = pod[len(name) + 1 :].rpartition("-")[0]
            names = [c["name"] for c in containers]
            return task if task in names and len(names) > 1 else str(names[0])

        return tlogical, tmain
    if kind == "Job":  # Volcano
        tasks = job["spec"]["tasks"]
        args = {}
        for value in (job["spec"].get("plugins") or {}).get("pytorch") or []:
            key, _, rest = str(value)[2:].partition("=")
            args[key] = rest
        master = args.get("master") or "master"
        ordered = sorted(tasks, key=lambda t: 0 if t["name"] == master else 1)
        offsets: dict[str, int] = {}
        total = 0
        for task in ordered:
            offsets[task["name"]] = total
            total += int(task.get("replicas") or 0)

        def vlogical(pod: str) -> str:
            rest = pod[len(name) + 1 :]
            task, _, index = rest.rpartition("-")
            return f"rank-{offsets[task] + int(index)}"

        def vmain(pod: str, spec: dict[str, Any]) -> str:
            containers = spec["containers"]
            if len(containers) == 1:
                return str(containers[0]["name"])
            task = pod[len(name) + 1 :].rpartition("-")[0]
            names = [c["name"] for c in containers]
            return task if task in names else str(names[0])

        return vlogical, vmain
    replica_field = next(k for k in job["spec"] if k.endswith("ReplicaSpecs"))
    if _tf_roles(job):

        def rlogical(pod: str) -> str:
            rtype, _, index = pod[len(name) + 1 :].rpartition("-")
            return f"{rtype}-{index}"

        return rlogical, lambda pod, spec: MAIN[kind]
    types = sorted(
        job["spec"][replica_field],
        key=lambda t: ORDER.get(t.capitalize() if t.lower() != "ps" else "PS", 9),
    )
    offsets = {}
    total = 0
    for rtype in types:
        offsets[rtype.lower()] = total
        replicas = job["spec"][replica_field][rtype].get("replicas")
        total += 1 if replicas is None else int(replicas)

    def glogical(pod: str) -> str:
        rest = pod[len(name) + 1 :]
        rtype, _, index = rest.rpartition("-")
        return f"rank-{offsets[rtype] + int(index)}"

    return glogical, lambda pod, spec: MAIN[kind]


def _tf_roles(job: dict[str, Any]) -> bool:
    """A TFJob with roles beside the workers, or a PaddleJob in parameter-server mode
    (one replicated job per role in v2)."""
    if job["kind"] == "PaddleJob":
        return any(k.lower() == "master" for k in job["spec"].get("paddleReplicaSpecs") or {})
    if job["kind"] != "TFJob":
        return False
    specs = job["spec"].get("tfReplicaSpecs") or {}
    total = sum(1 if s.get("replicas") is None else int(s["replicas"]) for s in specs.values())
    return {k.lower() for k in specs} != {"worker"} and total > 1


def _logical_v2(job: dict[str, Any]) -> Any:
    kind = job["kind"]
    if _tf_roles(job) or (kind == "Job" and _volcano_tf_roles(job) is not None):
        return lambda rjob, i: f"worker-{i}" if rjob == "node" else f"{rjob}-{i}"
    if kind == "MPIJob" or (kind == "Job" and _volcano_mpi_master(job) is not None):
        return lambda rjob, i: "launcher" if rjob == "launcher" else f"worker-{i}"
    return lambda rjob, i: f"rank-{i}"


TF_ROLE_NAMES = ("ps", "worker", "chief", "evaluator")


def _plugin_args(job: dict[str, Any], plugin: str) -> dict[str, str]:
    out = {}
    for value in (job["spec"].get("plugins") or {}).get(plugin) or []:
        key, _, rest = str(value)[2:].partition("=")
        out[key] = rest
    return out


def _volcano_mpi_master(job: dict[str, Any]) -> str | None:
    """The MPI master task of a Volcano Job: the mpi plugin's, or in an ssh + svc job
    of two tasks without a framework plugin, the one pod whose command runs an MPI
    launcher (the pair Volcano's examples write)."""
    import re

    plugins = job["spec"].get("plugins") or {}
    if "mpi" in plugins:
        return _plugin_args(job, "mpi").get("master") or "master"
    tasks = job["spec"].get("tasks") or []
    if any(p in plugins for p in ("pytorch", "tensorflow")) or len(tasks) != 2:
        return None
    if "ssh" not in plugins or "svc" not in plugins:
        return None
    masters = [
        t["name"]
        for t in tasks
        if int(t.get("replicas") or 0) == 1
        and any(
            re.search(
                r"\b(mpirun|mpiexec|horovodrun)\b",
                " ".join(map(str, [*(c.get("command") or []), *(c.get("args") or [])])),
            )
            for c in t["template"]["spec"]["containers"]
        )
    ]
    return masters[0] if len(masters) == 1 else None


def _volcano_tf_roles(job: dict[str, Any]) -> dict[str, str] | None:
    """Task -> TensorFlow role of a Volcano Job: the tensorflow plugin's, or svc tasks
    named as the roles (a worker among them) without a framework plugin or ssh."""
    plugins = job["spec"].get("plugins") or {}
    if "tensorflow" in plugins and "pytorch" not in plugins:
        args = _plugin_args(job, "tensorflow")
        return {(args.get(r) or r): r for r in TF_ROLE_NAMES}
    names = {t["name"] for t in job["spec"].get("tasks") or []}
    if any(p in plugins for p in ("pytorch", "mpi", "ssh")) or "svc" not in plugins:
        return None
    if len(names) > 1 and "worker" in names and names <= set(TF_ROLE_NAMES):
        return {r: r for r in TF_ROLE_NAMES}
    return None


def differences(case: Case, oracle: dict[str, Any], migration: Migration) -> list[str]:
    job = case.job
    name = job["metadata"]["name"]
    namespace = job["metadata"]["namespace"]
    if job["kind"] == "Job":
        raw = volcano_pods(job)
        files: dict[str, str] = {}
    else:
        raw = oracle.get("pods") or []
        files = oracle.get("files") or {}
    logical, main = _logical_v1(case)
    left = v1_pods(raw, namespace, name, logical, main)
    jobset = render(migration.objects, migration.runtime_files)
    right = v2_pods(jobset, _logical_v2(job))
    addresses = Addresses(left + right)
    out: list[str] = []
    by_id = {p.logical: p for p in right}
    for pod in left:
        other = by_id.pop(pod.logical, None)
        if other is None:
            out.append(f"pods:missing@{pod.logical}")
            continue
        out += [f"{d}@{pod.logical}" for d in compare_pods(pod, other, addresses)]
    out += [f"pods:extra@{p}" for p in by_id]
    # files the processes read (the MPI hostfile)
    hostfile = files.get("/etc/mpi/hostfile")
    if hostfile is not None:
        mine = _trainer_hostfile(jobset, name, migration)
        if sorted(addresses(hostfile).split()) != sorted(addresses(mine).split()):
            out.append("file:/etc/mpi/hostfile")
    for path in sorted(files):
        if path != "/etc/mpi/hostfile":
            out.append(f"file:{path}")
    for rjob, fields in sorted((oracle.get("jobs") or {}).items()):
        out += job_differences(jobset, rjob, fields)
    return out


JOB_BACKOFF_DEFAULT = 6  # the API server's default of spec.backoffLimit


def job_differences(jobset: dict[str, Any], rjob: str, fields: dict[str, Any]) -> list[str]:
    """The v1 operator's Job ``rjob`` (the MPI Operator's launcher) against the Job the
    JobSet's replicated job of that name makes: its retries, deadline, TTL and
    suspension (the JobSet's suspend reaches its Jobs)."""
    mine = next(
        (r["template"]["spec"] for r in jobset["spec"]["replicatedJobs"] if r["name"] == rjob), {}
    )
    out = []
    theirs_backoff = fields.get("backoffLimit")
    if (JOB_BACKOFF_DEFAULT if theirs_backoff is None else theirs_backoff) != mine.get(
        "backoffLimit", JOB_BACKOFF_DEFAULT
    ):
        out.append(f"job:{rjob}:backoffLimit")
    for key in ("activeDeadlineSeconds", "ttlSecondsAfterFinished"):
        if fields.get(key) != mine.get(key):
            out.append(f"job:{rjob}:{key}")
    if bool(fields.get("suspend")) != bool(jobset["spec"].get("suspend")):
        out.append(f"job:{rjob}:suspend")
    return out


def _trainer_hostfile(jobset: dict[str, Any], name: str, migration: Migration) -> str:
    for obj in rendered(migration.objects, migration.runtime_files):
        if obj.get("kind") == "ConfigMap" and obj["metadata"]["name"].endswith("-mpi-hostfile"):
            return str(obj["data"]["hostfile"])
    return ""


def _supported_sorted(text: str) -> str:
    """``supported values: "b", "a"`` with the values sorted: the v1 webhook lists the
    managers of a Go set (``UnsortedList``), in random order."""
    import re

    def ordered(match: re.Match[str]) -> str:
        return "supported values: " + ", ".join(sorted(match.group(1).split(", ")))

    return re.sub(r'supported values: ("[^"]*"(?:, "[^"]*")*)', ordered, text)


def judge(case: Case, oracle: dict[str, Any] | None, result: Migration | InputError) -> Outcome:
    if isinstance(result, Migration) and not result.objects and result.reports[0].errors:
        errors = result.reports[0].errors
        return Outcome(
            case, case.expect == "refused", [f"refused: {d.code}: {d.message}" for d in errors]
        )
    v1_rejected = case.job["kind"] != "Job" and bool((oracle or {}).get("error"))
    if isinstance(result, InputError):
        if v1_rejected or case.expect == "rejected":
            ok = v1_rejected or case.job["kind"] == "Job"
            if case.apiserver and all(
                f"{p.field_path}: {p.message}" == case.apiserver for p in result.problems
            ):
                return Outcome(
                    case,
                    case.expect == "rejected",
                    [f"the API server rejects first: {p}" for p in result.problems],
                )
            if v1_rejected:
                # the same rejection: each of trainc's messages is one of the operator's
                v1_error = _supported_sorted(str((oracle or {}).get("error")))
                alien = [p for p in result.problems if _supported_sorted(p.message) not in v1_error]
                if alien:
                    return Outcome(
                        case,
                        False,
                        ["trainc rejects differently:", *map(str, alien), f"v1: {v1_error}"],
                    )
            return Outcome(
                case,
                ok and case.expect == "rejected",
                [f"both reject: {p}" for p in result.problems]
                + ([f"v1: {(oracle or {}).get('error')}"] if oracle else []),
            )
        return Outcome(
            case, False, ["trainc rejects a job v1 accepts:", *[str(p) for p in result.problems]]
        )
    if v1_rejected:
        return Outcome(
            case, False, [f"v1 rejects ({(oracle or {}).get('error')}) but trainc migrates it"]
        )
    report: JobReport = result.reports[0]
    if case.expect == "rejected":
        return Outcome(case, False, ["expected an input error"])
    if not result.objects:
        ok = bool(report.errors) and case.expect == "refused"
        return Outcome(case, ok, [f"refused: {d.code}" for d in report.errors])
    if case.expect == "refused":
        return Outcome(case, False, ["expected a refusal, got output"])
    try:
        diffs = differences(case, oracle or {}, result)
    except InputError as error:
        return Outcome(
            case,
            False,
            ["trainc render rejects the migrated objects:", *[str(p) for p in error.problems]],
        )
    unnamed = [d for d in diffs if not (report.covers(d) or report.covers(d.split("@")[0]))]
    return Outcome(
        case,
        not unnamed,
        [f"unnamed difference {d}" for d in unnamed]
        + [f"named: {d}" for d in diffs if d not in unnamed],
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--verbose", "-v", action="store_true")
    args = parser.parse_args(argv)
    cases = load_cases(args.only)
    oracle = run_oracle(cases)
    outcomes = [judge(c, oracle.get(c.name), migrate_case(c)) for c in cases]
    by_kind: dict[str, list[int]] = {}
    for outcome in outcomes:
        kind = _kind_label(outcome.case.job)
        counts = by_kind.setdefault(kind, [0, 0])
        counts[1] += 1
        counts[0] += outcome.equivalent
        if not outcome.equivalent or args.verbose:
            mark = "ok  " if outcome.equivalent else "FAIL"
            print(f"{mark} {outcome.case.name}: {outcome.case.description}")
            for line in outcome.detail:
                if args.verbose or not line.startswith("named:"):
                    print(f"       {line}")
    for kind, (good, total) in sorted(by_kind.items()):
        print(f"  {kind}: {good}/{total}")
    good = sum(o.equivalent for o in outcomes)
    print(f"migrate-conformance: {good}/{len(outcomes)} jobs equivalent")
    return 0 if good == len(outcomes) else 1


def _kind_label(job: dict[str, Any]) -> str:
    if job.get("apiVersion") == "kubeflow.org/v2beta1":
        return "MPIJob v2beta1"
    if job.get("kind") == "Job":
        return "Volcano Job"
    return str(job.get("kind"))


if __name__ == "__main__":
    sys.exit(main())
