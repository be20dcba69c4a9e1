"""``make conformance-live-fuzz N=...``: random runtimes + TrainJobs through the live control
plane down to the Pods, compared with trainc.

    python -m tests.live.fuzz_pods --count N [--seed S] [--out DIR] [--timeout T]

Hypothesis draws N cases (tests/conformance/strategies.py :func:`pod_cases`: the Trainer
fuzzer's runtimes and TrainJobs plus pod-depth features), generation only: a live case
costs seconds, so Hypothesis's own shrinking (hundreds of runs) is out of reach. Each case
gets a namespace of its own (``fz-<seed>-<n>``) and goes through the control plane of
tests/live/controlplane.py (Trainer, JobSet manager with its webhooks,
kube-controller-manager), and is compared exactly as ``make conformance-live`` compares a
golden case (:func:`tests.live.conformance_live.compare`): the Trainer's objects with
``trainc render``, then the Jobs, Services and Pods (or the refusals below the JobSet)
with ``compiler.expand``'s ``--expand pods``.

Every difference gets a *signature* (which side, which object kind and field path with
indices and names masked, or the shape of the refusal message); the first case of a new
signature is reduced greedily (tests/conformance/fuzz.py :func:`reduce_case`: drop one
key or list item at a time while the signature holds, within a time budget) and written
to ``<out>/<hash>/`` as a golden-style case folder (case.yaml + inputs, no expectation)
with ``diff.txt``.

Closing line: ``conformance-live-fuzz: N cases, D distinct differences``; exit 0 when D
is 0, else 1.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings

from compiler.upstream.artifacts import cache_root
from compiler.upstream.versions import DEFAULT_TRAINER_VERSION
from tests.conformance.cases import REPO, load_case
from tests.conformance.fuzz import _KEEP, Finding, _paths, _without
from tests.conformance.strategies import FuzzCase, dump, pod_cases
from tests.live.conformance_live import Expand, Verdict, clean, compare, load_expand
from tests.live.conformance_live import _message_report as message_report
from tests.live.controlplane import ApiError, Client, ControlPlane, Json, build, start

NAMESPACED = ("TrainJob", "TrainingRuntime")


def draw_cases(count: int, base_seed: int) -> list[FuzzCase]:
    """``count`` cases drawn by Hypothesis from ``base_seed`` (the same seed, the same cases)."""
    drawn: list[FuzzCase] = []

    @seed(base_seed)
    @settings(
        max_examples=count,
        database=None,
        deadline=None,
        phases=(Phase.generate,),
        suppress_health_check=list(HealthCheck),
        verbosity=Verbosity.quiet,
    )
    @given(pod_cases())
    def collect(case: FuzzCase) -> None:
        drawn.append(case)

    collect()
    return drawn[:count]


def in_namespace(case: FuzzCase, namespace: str) -> FuzzCase:
    """``case`` with its TrainJobs and TrainingRuntimes in ``namespace`` (one that was in
    another namespace than the TrainJob's goes to ``<namespace>-other``)."""
    files = []
    for name, text in case.files:
        documents = [d for d in yaml.safe_load_all(text) if d]
        for doc in documents:
            if doc.get("kind") not in NAMESPACED:
                continue
            metadata = doc.setdefault("metadata", {})
            own = metadata.get("namespace")
            elsewhere = doc.get("kind") == "TrainingRuntime" and own == "elsewhere"
            metadata["namespace"] = f"{namespace}-other" if elsewhere else namespace
        files.append((name, dump(documents)))
    return FuzzCase(files, case.owner_uid, case.features, case.env_order_random)


_FILE = re.compile(r"\S*/([\w.-]+\.ya?ml)\b")  # a case's temporary folder
_QUOTED = re.compile(r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'")
_INDEX = re.compile(r"\[\d+\]")
_NUMBER = re.compile(r"\b\d+\b")
_OBJECT = re.compile(r"\b(Job|Pod|Service|JobSet|TrainJob) [\w.-]+/[\w.<>-]+")
_VALUE = re.compile(r": (expected|missing|unexpected|only|got)\b.*$")


def shape(text: str, names: list[str]) -> str:
    """A difference with what varies between cases masked: the case's names, object
    names, quoted values, numbers, list indices; a field difference keeps its path and
    what kind of difference it is."""
    line = _FILE.sub(r"\1", " ".join(text.split()))
    line = _OBJECT.sub(lambda m: f"{m.group(1)} <object>", line)
    for name in sorted(names, key=len, reverse=True):
        if name:  # as a whole word: a TrainJob "job" is not the "job" of "jobset"
            line = re.sub(rf"(?<![\w]){re.escape(name)}(?![a-z0-9])", "<name>", line)
    found = _VALUE.search(line)
    if found and found.group(1) in ("expected", "got") and " items" in line[found.start() :]:
        line = line[: found.start()] + ": list length"
    elif found:
        line = line[: found.start()] + f": {found.group(1)}"
    line = _QUOTED.sub('"…"', line)
    line = _INDEX.sub("[]", line)
    return _NUMBER.sub("N", line)[:200]


def case_names(case: FuzzCase) -> list[str]:
    """The names a difference message may carry: TrainJobs, runtimes, namespaces."""
    names: list[str] = []
    for _, text in case.files:
        for doc in yaml.safe_load_all(text):
            metadata = (doc or {}).get("metadata") or {}
            names += [str(metadata.get("name", "")), str(metadata.get("namespace", ""))]
    return [n for n in names if n]


def finding_of(verdict: Verdict, case: FuzzCase) -> Finding | None:
    """None when the cluster and trainc agree at both depths; else the difference."""
    names = case_names(case)
    if not verdict.identical:
        detail = verdict.difference or verdict.kind
        return Finding(f"trainer depth: {shape(detail, names)}", detail, report(verdict))
    if verdict.pods_identical is False:
        detail = verdict.pods_difference or ""
        created = verdict.live.workloads
        if created is not None and created.timed_out and not created.failures:
            if "JobSet " in created.timed_out[0]:  # finished: it will create no more Jobs
                return Finding(JOBSET_FINISHED, detail, report(verdict))
            return Finding(TIMED_OUT, f"{detail} ({created.timed_out[0]})", report(verdict))
        if only_last_replica(detail):
            return Finding(LAST_REPLICA, detail, report(verdict))
        if only_suspended_dependents(verdict):
            return Finding(SUSPENDED_DEPENDENT, detail, report(verdict))
        if beyond_the_cut(verdict):
            return Finding(EVENT_CUT, detail, report(verdict))
        return Finding(f"pod depth: {shape(detail, names)}", detail, report(verdict))
    unsaid = unsaid_findings(verdict)
    if unsaid:
        detail = "the cluster says, trainc does not word for word: " + unsaid[0]
        return Finding(f"message: {shape(unsaid[0], names)}", detail, report(verdict))
    return None


def unsaid_findings(verdict: Verdict) -> list[str]:
    """The real refusals (the API server's or a webhook's on an input, the Trainer's
    creation-failure event) trainc does not say word for word, as conformance-live's
    errors.json judges them, where trainc refuses the inputs too. (Where trainc renders,
    a JobSet webhook's denial is among its downstream problems, which the pod depth
    compares with the events.)"""
    if verdict.live.rejections or verdict.live.creation_failures:
        if verdict.trainc_problems is None:
            return []
        found = message_report(verdict)
        texts = [f for r in found["rejections"] for f in r["findings"]]
        # a TrainJob whose JobSet exists failed a later reconcile (the JobSet webhook's
        # volumeClaimPolicies default, then the Trainer's apply of an immutable list:
        # tests/live/README.md), not the create trainc judges
        created = {_owner(o) for o in verdict.live.objects if o.get("kind") == "JobSet"}
        texts += [f["finding"] for f in found["creationFailures"] if f["trainJob"] not in created]
        return [str(f["text"]) for f in texts if not f["inTrainc"]]
    return []


def _owner(obj: Json) -> str:
    """``namespace/name`` of the TrainJob owning ``obj``."""
    meta = obj.get("metadata") or {}
    for ref in meta.get("ownerReferences") or []:
        if ref.get("kind") == "TrainJob":
            return f"{meta.get('namespace', 'default')}/{ref.get('name')}"
    return ""


JOBSET_FINISHED = (
    "pod depth: the JobSet finished (its success or failure policy met) before the JobSet "
    "controller created every Job; trainc still expands and checks them all"
)
TIMED_OUT = (
    "harness limit: the controllers did not finish within --timeout and reported nothing "
    "(inconclusive; run the reproduction with a longer --timeout)"
)
LAST_REPLICA = (
    "pod depth: trainc reports the API server's refusal of the last Job of a replicated "
    "job only; the JobSet controller's event lists every replica's"
)
_MISSING = "recorded, not in trainc's output:"
_JOB_INDEX = re.compile(r'(job "|Job\.batch ")([^"]*-)\d+"')


def only_last_replica(detail: str) -> bool:
    """Whether every refusal line trainc lacks is one it says for another replica of the
    same replicated job (the Job names differing only in their index)."""
    if not detail.startswith(_MISSING) or "\ntrainc:\n" not in detail:
        return False
    missing, said = detail.removeprefix(_MISSING).split("\ntrainc:\n", 1)

    def masked(line: str) -> str:
        return _JOB_INDEX.sub(r'\1\2<index>"', line)

    said_lines = [masked(line) for line in said.splitlines() if line]
    lines = [line for line in missing.splitlines() if line]
    return bool(lines) and all(
        any(s.startswith(masked(line)) for s in said_lines) for line in lines
    )


EVENT_CUT = (
    "harness limit: the Trainer cuts its TrainJobResourcesCreationFailed event at 950 "
    "characters (' ...'); an error of the JobSet webhook's denial that trainc also says on "
    "its own, past the cut, cannot be checked against it"
)


def beyond_the_cut(verdict: Verdict) -> bool:
    """Whether the only thing trainc says that the cluster did not is past the cut of a
    Trainer event (trainc's own copy of the event is cut the same way, and matched)."""
    detail = verdict.pods_difference or ""
    if not detail.startswith("trainc refuses what the cluster did not report:"):
        return False
    extras = [line for line in detail.splitlines()[1:] if line]
    events = [e for f in verdict.live.creation_failures for e in f["events"]]
    return (
        bool(extras)
        and any(e.endswith(" ...") for e in events)
        and not any(
            _REFUSED_JOB.match(line) or line.startswith(("Error creating:", "TrainJob "))
            for line in extras
        )
    )


SUSPENDED_DEPENDENT = (
    "pod depth: trainc checks the Jobs of a replicated job that dependsOn another in a "
    "suspended JobSet; the JobSet controller creates none of them until it is resumed"
)
_TRAINC_EXTRA = (
    "trainc refuses below the JobSet, the cluster did not (no downstream.yaml):",
    "trainc refuses what the cluster did not report:",
)
_REFUSED_JOB = re.compile(r'^job "([^"]+)" creation failed with error: ')


def only_suspended_dependents(verdict: Verdict) -> bool:
    """Whether every refusal trainc says and the cluster did not is of a Job of a
    replicated job that ``dependsOn`` another, in a suspended JobSet (the JobSet
    controller skips those while suspended: tests/live/workloads.py expected_jobs)."""
    detail = verdict.pods_difference or ""
    if not detail.startswith(_TRAINC_EXTRA):
        return False
    waiting = {
        f"{jobset['metadata']['name']}-{rjob.get('name')}-"
        for jobset in verdict.live.stored_jobsets
        if (jobset.get("spec") or {}).get("suspend")
        for rjob in (jobset.get("spec") or {}).get("replicatedJobs") or []
        if rjob.get("dependsOn")
    }
    jobs = [m.group(1) for m in map(_REFUSED_JOB.match, detail.splitlines()[1:]) if m]
    return bool(jobs) and all(
        any(j.startswith(w) and j[len(w) :].isdigit() for w in waiting) for j in jobs
    )


_PANIC = '"msg":"Observed a panic","controller":"trainjob_controller"'


def _read_from(path: Path, offset: int) -> str:
    with path.open("rb") as handle:
        handle.seek(offset)
        return handle.read().decode(errors="replace")


def nothing_but_a_panic(verdict: Verdict, controller_log: str) -> bool:
    """Whether trainc refuses a TrainJob the cluster admitted and the Trainer controller
    then panicked on (``controller_log``: its log since the case began), creating nothing
    and reporting no event: what trainc's refusal says (e.g. a Flux TrainJob without
    ``numNodes``, a nil pointer the Flux plugin dereferences)."""
    live = verdict.live
    return (
        not verdict.identical
        and verdict.trainc_problems is not None
        and not live.objects
        and not live.creation_failures
        and not live.rejections
        and bool(live.trainjob_uids)
        and _PANIC in controller_log
    )


def outcome(verdict: Verdict) -> str:
    """What the cluster did with a case, for the closing summary."""
    live = verdict.live
    created = live.workloads
    if live.rejections:
        return "refused by the API server or a webhook"
    if live.creation_failures:
        return "refused at the JobSet (the Trainer's creation failed)"
    if created is not None and created.failures:
        return "refused below the JobSet (a Job or Pod)"
    pods = sum(1 for o in created.objects if o.get("kind") == "Pod") if created else 0
    return "down to the Pods" if pods else "admitted, no Pods (suspended, managed elsewhere)"


def report(verdict: Verdict) -> str:
    """What the cluster did, for diff.txt."""
    live = verdict.live
    parts = [f"kind: {verdict.kind}"]
    if verdict.difference:
        parts.append(f"trainc vs live: {verdict.difference}")
    if verdict.pods_difference:
        parts.append(f"expand vs live Jobs, Services, Pods: {verdict.pods_difference}")
    if live.rejections:
        parts.append("live rejections:\n" + yaml.safe_dump(live.rejections, sort_keys=False))
    if live.creation_failures:
        parts.append("live creation failures:\n" + yaml.safe_dump(live.creation_failures))
    if live.workloads is not None and live.workloads.failures:
        parts.append("refused below the JobSet:\n" + "\n".join(live.workloads.failures))
    if verdict.trainc_problems:
        parts.append("trainc:\n" + "\n".join(verdict.trainc_problems))
    return "\n\n".join(parts) + "\n"


OPEN = REPO / "tests" / "live" / "fixtures" / "fuzz-pods"
# signatures of an open difference other than its diff.txt's: where trainc refuses too
# (a message difference, not a verdict one), or named after the reproduction was written
_ALSO_OPEN = {
    LAST_REPLICA: "last-replica-only",
    (
        "message: failed to create typed patch object (<name>/<name>; jobset.x-k8s.io/v1alpha2, "
        'Kind=JobSet): .spec.replicatedJobs[name="…"].template.spec.template.spec.containers'
        '[name="…"].ports: duplicate entries for'
    ): "ssa-duplicate-list-map-key",
}


def open_differences(folder: Path) -> dict[str, Path]:
    """The signatures of the reproductions in ``folder`` (each ``diff.txt``'s first line)."""
    found: dict[str, Path] = {}
    for signature, name in _ALSO_OPEN.items():  # the same difference, seen another way
        if (folder / name).is_dir():
            found[signature] = folder / name
    for diff in sorted(folder.glob("*/diff.txt")):
        first = diff.read_text().split("\n", 1)[0]
        if first.startswith("signature: "):
            found[first.removeprefix("signature: ")] = diff.parent
    return found


@dataclass
class LiveFuzzer:
    plane: ControlPlane
    client: Client
    expand: Expand
    workdir: Path
    out: Path
    timeout: float = 20.0
    reduce_seconds: float = 240.0
    log: Callable[[str], None] = print
    examples: int = 0
    known: dict[str, int] = field(default_factory=dict)  # signature -> occurrences
    written: dict[str, Path] = field(default_factory=dict)
    started: float = field(default_factory=time.monotonic)
    runs: int = 0
    reducing: bool = False
    # what the harness cannot show (not differences): signature -> occurrences
    limits: dict[str, int] = field(default_factory=dict)
    # per drawn case (reductions not counted): what the cluster did with it
    outcomes: dict[str, int] = field(default_factory=dict)
    # the open differences reduced before: signature -> their reproduction
    open: dict[str, Path] = field(default_factory=lambda: open_differences(OPEN))

    def run_case(self, case: FuzzCase) -> Finding | None:
        """One case on the cluster (cleaned first) against trainc."""
        self.runs += 1
        directory = Path(tempfile.mkdtemp(dir=self.workdir))
        try:
            write_case(directory, case, "generated")
            loaded = load_case(directory)
            assert loaded is not None
            controller = self.plane.controller
            log = controller.log if controller is not None else None
            try:
                clean(self.client)
                offset = log.stat().st_size if log is not None and log.exists() else 0
                verdict = compare(
                    self.client,
                    loaded,
                    self.timeout,
                    self.plane.audit_log,
                    True,
                    self.expand,
                    self.plane.jobset_log,
                )
                if log is not None and nothing_but_a_panic(verdict, _read_from(log, offset)):
                    return None  # the controller panicked and created nothing: trainc's refusal
            except (ApiError, OSError, RuntimeError) as error:
                # the harness's own failure (e.g. the cluster does not come clean): counted
                # apart, never reduced
                self.log(f"harness error on case {self.examples}: {error}")
                return Finding(f"harness error: {type(error).__name__}", str(error), str(error))
            except Exception as error:  # trainc's crash is a finding, not the end of the run
                return Finding(
                    f"crash: {type(error).__name__}", f"{type(error).__name__}: {error}", ""
                )
            if not self.reducing:
                self.outcomes[outcome(verdict)] = self.outcomes.get(outcome(verdict), 0) + 1
            return finding_of(verdict, case)
        finally:
            shutil.rmtree(directory, ignore_errors=True)

    def check(self, case: FuzzCase) -> None:
        self.examples += 1
        finding = self.run_case(case)
        if finding is None:
            return
        if finding.signature.startswith(("harness limit", "harness error")):
            self.limits[finding.signature] = self.limits.get(finding.signature, 0) + 1
            return
        if finding.signature in self.known:
            self.known[finding.signature] += 1
            return
        self.known[finding.signature] = 1
        if finding.signature in self.open:
            # reduced before (tests/live/fixtures/fuzz-pods): counted, not reduced again
            self.written[finding.signature] = self.open[finding.signature]
            self.log(f"OPEN  case {self.examples}: {finding.signature}")
            return
        self.log(f"NEW   case {self.examples}: {finding.signature}; reducing")
        deadline = time.monotonic() + self.reduce_seconds

        def bounded(candidate: FuzzCase) -> Finding | None:
            return self.run_case(candidate) if time.monotonic() < deadline else None

        self.reducing = True
        try:
            small, small_finding = reduce(case, finding, bounded)
        finally:
            self.reducing = False
        self.record(small, small_finding)

    def record(self, case: FuzzCase, finding: Finding) -> Path:
        digest = hashlib.sha1(
            "".join(t for _, t in case.files).encode() + case.owner_uid.encode()
        ).hexdigest()[:12]
        directory = self.out / digest
        description = (
            "Found by the live pod-depth fuzzer (tests/live/fuzz_pods.py), reduced key by "
            f"key: {', '.join(case.features)}. Difference: {finding.signature}."
        )
        write_case(directory, case, description)
        (directory / "diff.txt").write_text(
            f"signature: {finding.signature}\ndifference: {finding.detail}\n\n{finding.report}"
        )
        self.written[finding.signature] = directory
        shown = directory.relative_to(REPO) if directory.is_relative_to(REPO) else directory
        self.log(f"DIFF  {shown}: {finding.signature}")
        return directory

    def run(self, cases: list[FuzzCase], base_seed: int) -> None:
        for index, case in enumerate(cases):
            self.check(in_namespace(case, f"fz-{base_seed}-{index}"))
            if self.examples % 10 == 0:
                elapsed = time.monotonic() - self.started
                self.log(
                    f"conformance-live-fuzz: {self.examples}/{len(cases)} cases, "
                    f"{len(self.known)} distinct differences so far ({elapsed:.0f} s)"
                )
                sys.stdout.flush()


def reduce(
    case: FuzzCase, finding: Finding, run: Callable[[FuzzCase], Finding | None]
) -> tuple[FuzzCase, Finding]:
    """Drop one mapping key or list item at a time, outermost first, while the difference
    keeps its signature. Unlike tests/conformance/fuzz.py's reduce_case, a removal that
    lost the signature is not tried again after a later one succeeded (a live run costs
    seconds; list indices shift, so this is a heuristic). Ends when no removal keeps the
    signature; ``run`` answers None once its time is up."""
    docs = [[d for d in yaml.safe_load_all(text) if d] for _, text in case.files]
    failed: set[tuple[int, int, tuple[object, ...]]] = set()
    improved = True
    while improved:
        improved = False
        for f, file_docs in enumerate(docs):
            for d, doc in enumerate(file_docs):
                for path in _paths(doc):
                    key = (f, d, path)
                    if path in _KEEP or key in failed:
                        continue
                    candidate_docs = [list(x) for x in docs]
                    candidate_docs[f][d] = _without(doc, path)
                    candidate = FuzzCase(
                        [(n, dump(candidate_docs[i])) for i, (n, _) in enumerate(case.files)],
                        case.owner_uid,
                        case.features,
                        case.env_order_random,
                    )
                    found = run(candidate)
                    if found is not None and found.signature == finding.signature:
                        docs, case, finding, improved = candidate_docs, candidate, found, True
                        break
                    failed.add(key)
                if improved:
                    break
            if improved:
                break
    return case, finding


def write_case(directory: Path, case: FuzzCase, description: str) -> None:
    """``case`` as a golden case folder (case.yaml and its inputs, no expectation)."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in case.files:
        (directory / name).write_text(text)
    case_yaml = {
        "description": description,
        "inputs": [n for n, _ in case.files],
        "ownerUID": case.owner_uid,
        "versions": [DEFAULT_TRAINER_VERSION],
    }
    (directory / "case.yaml").write_text(dump([case_yaml]))


def fuzz(
    count: int,
    base_seed: int,
    out: Path,
    timeout: float = 20.0,
    reduce_seconds: float = 240.0,
    plane: ControlPlane | None = None,
    log: Callable[[str], None] = print,
) -> LiveFuzzer:
    """Run ``count`` cases on ``plane`` (or on one started here, with the pod controllers)."""
    expand = load_expand()
    if expand is None:
        raise RuntimeError("compiler.expand is not importable")
    cases = draw_cases(count, base_seed)
    out.mkdir(parents=True, exist_ok=True)
    own = plane is None
    if plane is None:
        plane = start(build(), trainer=True, pods=True)
    client = plane.client()
    try:
        with tempfile.TemporaryDirectory(prefix="trainc-live-fuzz-") as work:
            fuzzer = LiveFuzzer(
                plane, client, expand, Path(work), out, timeout, reduce_seconds, log
            )
            fuzzer.run(cases, base_seed)
        clean(client)
    finally:
        client.close()
        if own:
            plane.stop()
    return fuzzer


def read_case(directory: Path) -> FuzzCase:
    """A case folder written by :func:`write_case` (or a golden-style one) as a case."""
    meta = yaml.safe_load((directory / "case.yaml").read_text())
    files = [(name, (directory / name).read_text()) for name in meta["inputs"]]
    return FuzzCase(files, str(meta["ownerUID"]), [], False)


def replay(directories: list[Path], timeout: float, out: Path) -> int:
    """Each reproduction once through a control plane of its own: ``same`` (no
    difference) or the difference's signature, the case written again under ``out``
    with its diff.txt; exit 1 when any differs."""
    expand = load_expand()
    if expand is None:
        raise RuntimeError("compiler.expand is not importable")
    plane = start(build(), trainer=True, pods=True)
    client = plane.client()
    differing = 0
    try:
        with tempfile.TemporaryDirectory(prefix="trainc-live-fuzz-") as work:
            fuzzer = LiveFuzzer(plane, client, expand, Path(work), out, timeout)
            for directory in (d for d in directories if d.is_dir()):
                found = fuzzer.run_case(read_case(directory))
                differing += found is not None
                print(f"{directory}: {'same' if found is None else found.signature}")
                if found is not None:
                    print(f"  {found.detail[:2000]}")
                    fuzzer.record(read_case(directory), found)
    finally:
        client.close()
        plane.stop()
    return 1 if differing else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.live.fuzz_pods", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--count", type=int, default=20, help="cases to draw (default 20)")
    parser.add_argument("--seed", type=int, default=0, help="the same seed, the same cases")
    parser.add_argument(
        "--out",
        type=Path,
        default=REPO / "conformance-out" / "live-fuzz",
        help="where reproductions go",
    )
    parser.add_argument(
        "--timeout", type=float, default=20.0, help="seconds to wait for the controllers"
    )
    parser.add_argument(
        "--reduce-seconds",
        type=float,
        default=240.0,
        help="time spent reducing each new difference (default 240)",
    )
    parser.add_argument(
        "--replay",
        type=Path,
        nargs="+",
        metavar="DIR",
        help="run these reproductions (case folders) once each instead, and say what differs",
    )
    args = parser.parse_args(argv)
    if (cache_root() / "upstream").is_dir():
        os.environ.setdefault("TRAINC_CACHE", str(cache_root()))
    if args.replay:
        return replay(args.replay, args.timeout, args.out)
    began = time.monotonic()
    fuzzer = fuzz(args.count, args.seed, args.out, args.timeout, args.reduce_seconds)
    for what, number in sorted(fuzzer.outcomes.items()):
        print(f"  {number:4d} cases {what}")
    for signature, occurrences in sorted(fuzzer.limits.items()):
        print(f"  {occurrences:4d}x {signature}")
    for signature, occurrences in sorted(fuzzer.known.items()):
        print(f"  {occurrences:4d}x {signature}  ({fuzzer.written.get(signature, '-')})")
    print(
        f"{time.monotonic() - began:.0f}s, {fuzzer.runs} live runs (reductions included); "
        f"reproductions in {args.out}"
    )
    print(
        f"conformance-live-fuzz: {fuzzer.examples} cases, {len(fuzzer.known)} distinct differences"
    )
    return 0 if not fuzzer.known else 1


if __name__ == "__main__":
    sys.exit(main())
