"""``make conformance-fuzz``: random runtimes + TrainJobs through trainc and the oracle, compared.

    python -m tests.conformance.fuzz --count N [--seed S] [--out conformance-out] [--trainer V]

N examples on every emulated Trainer release (``--trainer``, repeatable, limits them),
each against that release's oracle build; reproductions go to ``<out>/<release>/``.

Hypothesis draws the inputs (tests/conformance/strategies.py); trainc runs in-process, the
oracle as one ``oracle serve`` process. Both answers are compared exactly as ``make
conformance`` compares a golden case (normalise.py, compare.rejection_difference).

Collecting distinct differences. Hypothesis stops generating at the first failure and
then shrinks it, so the run is a loop of rounds, each a Hypothesis run (its own seed,
derived from S and the round) with ``max_examples`` = the examples still to run:

* every difference gets a *signature* (which object and field path, indices dropped, or
  which verdicts and rejected field paths); the property raises, with an exception class
  of its own per signature, only for a signature no earlier round has reduced;
* the first such failure ends the round's generation; Hypothesis then shrinks it (it only
  accepts smaller examples failing with the same signature), replays the minimal one, and
  that example becomes ``<out>/<hash>/``: a golden case folder (case.yaml + inputs, ready
  to be moved to golden/) plus diff.txt;
* the signature is now known: later rounds count it and move on.

A new signature seen while shrinking another one is kept aside (the smallest example
found); unless a later round reduces it with Hypothesis, it is reduced at the end by
:func:`reduce_case` (drop mapping keys and list items, one at a time, while the
difference keeps its signature) and written then.

Output: a progress line every 100 examples, one line per distinct difference, and
``conformance-fuzz v2.3.0: N cases, D differences`` per release. Exit 0 when every D
is 0, else 1.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings

from compiler.upstream.versions import DEFAULT_TRAINER_VERSION, TRAINER_VERSIONS
from tests.conformance import oracle, trainc_side
from tests.conformance.compare import compare_answers
from tests.conformance.normalise import first_difference, normalise, rejection_fields
from tests.conformance.strategies import FuzzCase, cases, dump

REPO = Path(__file__).resolve().parents[2]


@dataclass
class Finding:
    """One difference between the two answers."""

    signature: str
    detail: str
    report: str  # both answers, for diff.txt


def _shape(path: str) -> str:
    return re.sub(r"\[\d+\]", "[]", path)


def _object_key(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    kind = f"{obj.get('apiVersion')} {obj.get('kind')}"
    name = str(meta.get("name", ""))
    # Names are per TrainJob; keep only the part plugins append (-mpi-hostfile, ...).
    return f"{kind} {name}"


def _object_signature(
    expected: list[dict[str, Any]], actual: list[dict[str, Any]], job: str
) -> str | None:
    def keyed(objs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
        return {_object_key(o): o for o in objs}

    exp, act = keyed(expected), keyed(actual)

    def generic(key: str) -> str:
        return key.replace(job, "<job>") if job else key

    for key in sorted(set(exp) | set(act)):
        if key not in act:
            return f"trainc misses object {generic(key)}"
        if key not in exp:
            return f"trainc adds object {generic(key)}"
        found = first_difference(exp[key], act[key])
        if found:
            path, _, rest = found.partition(": ")
            if rest.startswith("missing"):
                what = "missing in trainc"
            elif rest.startswith("unexpected"):
                what = "only in trainc"
            elif re.match(r"expected \d+ items", rest):
                what = "list length"
            else:
                what = "value"
            return f"{generic(key).split(' ', 1)[1]} {_shape(path)}: {what}"
    return None


def _problems_text(answer: trainc_side.TraincAnswer) -> str:
    return "\n".join(str(p) for p in answer.problems or [])


def _answers_report(
    expected: oracle.OracleAnswer, actual: trainc_side.TraincAnswer, env_random: bool
) -> str:
    parts = []
    if expected.objects is not None:
        parts.append(
            "# oracle: objects (normalised)\n" + dump(normalise(expected.objects, env_random))
        )
    elif expected.panic is not None:
        parts.append("# oracle: upstream code panicked\n" + expected.panic)
    else:
        parts.append("# oracle: rejected\n" + json.dumps(expected.rejection, indent=2))
    if actual.objects is not None:
        parts.append(
            "# trainc: objects (normalised)\n" + dump(normalise(actual.objects, env_random))
        )
    else:
        parts.append("# trainc: rejected\n" + _problems_text(actual))
    return "\n\n".join(parts) + "\n"


def classify(
    expected: oracle.OracleAnswer, actual: trainc_side.TraincAnswer, env_random: bool, job: str
) -> Finding | None:
    """None when both agree, else the difference and its signature."""
    if expected.panic is not None:
        # Upstream crashed on the input: the controller creates nothing; trainc must refuse.
        if actual.objects is None:
            return None
        first = expected.panic.splitlines()[0] if expected.panic else "panic"
        return Finding(
            "upstream panics, trainc renders",
            f"upstream panics ({first}), trainc renders",
            _answers_report(expected, actual, env_random),
        )
    found = compare_answers(expected, actual, env_random)
    if found is None:
        return None
    detail: str = found
    report = _answers_report(expected, actual, env_random)
    if expected.objects is not None and actual.objects is not None:
        signature = _object_signature(
            normalise(expected.objects, env_random), normalise(actual.objects, env_random), job
        )
        return Finding(signature or "objects differ", detail, report)
    if expected.objects is not None:
        fields = sorted({_shape(p.field_path or "") for p in actual.problems or []})
        return Finding(f"upstream renders, trainc rejects at {fields}", detail, report)
    errors = (expected.rejection or {}).get("errors", [])
    upstream_fields = sorted({_shape(f) for f in rejection_fields(errors)})
    if actual.objects is not None:
        return Finding(f"upstream rejects at {upstream_fields}, trainc renders", detail, report)
    if detail.startswith("a problem without a source line"):
        return Finding("trainc problem without a source line", detail, report)
    trainc_fields = sorted({_shape(p.field_path or "") for p in actual.problems or []})
    missing = sorted(set(upstream_fields) - set(trainc_fields))
    return Finding(f"both reject; trainc lacks fields {missing}", detail, report)


@dataclass
class Fuzzer:
    server: oracle.OracleServer
    workdir: Path
    out: Path
    log: Callable[[str], None] = print
    version: str = DEFAULT_TRAINER_VERSION  # the Trainer release both sides emulate
    examples: int = 0
    rendered: int = 0  # generated examples upstream rendered (the rest it rejected)
    total: int = 0
    started: float = field(default_factory=time.monotonic)
    known: dict[str, int] = field(default_factory=dict)  # reduced signature -> occurrences
    written: dict[str, Path] = field(default_factory=dict)
    byproducts: dict[str, tuple[FuzzCase, Finding]] = field(default_factory=dict)
    # per round
    target: str | None = None
    last: tuple[FuzzCase, Finding] | None = None
    _classes: dict[str, type[AssertionError]] = field(default_factory=dict)

    def run_case(self, case: FuzzCase) -> Finding | None:
        directory = Path(tempfile.mkdtemp(dir=self.workdir))
        try:
            paths = []
            for name, text in case.files:
                (directory / name).write_text(text)
                paths.append(directory / name)
            first_job = next(yaml.safe_load_all(case.files[-1][1]), None) or {}
            job = str(first_job.get("metadata", {}).get("name", ""))
            try:
                expected = self.server.render_documents(
                    [t for _, t in case.files], case.owner_uid, [n for n, _ in case.files]
                )
            except Exception as error:
                first = str(error).splitlines()[0] if str(error) else ""
                return Finding(
                    f"oracle error: {type(error).__name__}", f"oracle error: {first}", str(error)
                )
            if self.target is None and expected.objects is not None:
                self.rendered += 1
            try:
                actual = trainc_side.render(paths, case.owner_uid, self.version)
            except Exception as error:
                frame = traceback.extract_tb(error.__traceback__)[-1]
                where = f"{Path(frame.filename).name}:{frame.lineno}"
                return Finding(
                    f"trainc crashes: {type(error).__name__} at {where}",
                    f"trainc raised {type(error).__name__}: {error}",
                    traceback.format_exc(),
                )
            return classify(expected, actual, case.env_order_random, job)
        finally:
            shutil.rmtree(directory, ignore_errors=True)

    @property
    def server_restarts(self) -> int:
        return max(self.server.starts - 1, 0)

    def _error(self, signature: str) -> type[AssertionError]:
        if signature not in self._classes:
            digest = hashlib.sha1(signature.encode()).hexdigest()[:10]
            self._classes[signature] = type(f"Difference_{digest}", (AssertionError,), {})
        return self._classes[signature]

    def check(self, case: FuzzCase) -> None:
        """The Hypothesis property."""
        generating = self.target is None
        if generating:
            self.examples += 1
            if self.examples % 100 == 0:
                self.progress()
        finding = self.run_case(case)
        if finding is None:
            return
        signature = finding.signature
        if signature in self.known:
            if generating:
                self.known[signature] += 1
            return
        if generating:
            self.target = signature  # Hypothesis now shrinks this one
        if signature == self.target:
            self.last = (case, finding)
            raise self._error(signature)(signature)
        # Another new difference met while shrinking: keep the smallest example.
        kept = self.byproducts.get(signature)
        if kept is None or case.size() < kept[0].size():
            self.byproducts[signature] = (case, finding)

    def progress(self) -> None:
        elapsed = time.monotonic() - self.started
        self.log(
            f"conformance-fuzz {self.version}: {self.examples}/{self.total} examples, "
            f"{len(self.known)} differences so far ({elapsed:.0f} s)"
        )

    def run(self, count: int, base_seed: int) -> None:
        self.total = count
        round_number = 0
        while self.examples < count:
            before = self.examples
            self.target, self.last = None, None
            round_seed = base_seed * 1_000_003 + round_number
            round_number += 1
            try:
                self._round(round_seed, count - self.examples)
            except AssertionError as error:
                if (
                    self.target is None
                    or self.last is None
                    or not isinstance(error, self._error(self.target))
                ):
                    raise
                case, finding = self.last
                self.known[self.target] = 1
                self.byproducts.pop(self.target, None)
                self.record(case, finding, shrunk=True)
                continue
            if self.examples == before:
                break  # Hypothesis generated nothing more
        for signature, (case, finding) in sorted(self.byproducts.items()):
            if signature not in self.known:
                self.known[signature] = 1
                case, finding = reduce_case(case, finding, self.run_case)
                self.record(case, finding, shrunk=False)

    def _round(self, round_seed: int, remaining: int) -> None:
        @seed(round_seed)
        @settings(
            max_examples=remaining,
            database=None,
            deadline=None,
            derandomize=False,
            phases=(Phase.explicit, Phase.generate, Phase.shrink),
            report_multiple_bugs=False,
            suppress_health_check=list(HealthCheck),
            verbosity=Verbosity.quiet,
            print_blob=False,
        )
        @given(cases(self.version))
        def property_(case: FuzzCase) -> None:
            self.check(case)

        property_()

    def record(self, case: FuzzCase, finding: Finding, shrunk: bool) -> Path:
        digest = hashlib.sha1(
            "".join(t for _, t in case.files).encode() + case.owner_uid.encode()
        ).hexdigest()[:12]
        directory = self.out / digest
        directory.mkdir(parents=True, exist_ok=True)
        for name, text in case.files:
            (directory / name).write_text(text)
        if shrunk:
            description = f"{case.description}. Difference: {finding.signature}."
        else:
            description = (
                "Found by the differential fuzzer while shrinking another difference, then "
                f"reduced key by key. Difference: {finding.signature}."
            )
        case_yaml = {
            "description": description,
            "inputs": [n for n, _ in case.files],
            "ownerUID": case.owner_uid,
        }
        (directory / "case.yaml").write_text(dump([case_yaml]))
        (directory / "diff.txt").write_text(
            f"signature: {finding.signature}\ndifference: {finding.detail}\n\n{finding.report}"
        )
        self.written[finding.signature] = directory
        shown = directory.relative_to(REPO) if directory.is_relative_to(REPO) else directory
        self.log(f"DIFF  {shown}: {finding.signature}")
        return directory


_KEEP = {("apiVersion",), ("kind",), ("metadata",), ("metadata", "name")}


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every mapping key and list item below ``value``, outermost first."""
    out: list[tuple[Any, ...]] = []
    items = (
        value.items()
        if isinstance(value, dict)
        else enumerate(value)
        if isinstance(value, list)
        else []
    )
    for key, item in items:
        out.append((*prefix, key))
        out.extend(_paths(item, (*prefix, key)))
    return out


def _without(value: Any, path: tuple[Any, ...]) -> Any:
    if len(path) == 1:
        if isinstance(value, dict):
            return {k: v for k, v in value.items() if k != path[0]}
        return [v for i, v in enumerate(value) if i != path[0]]
    if isinstance(value, dict):
        return {**value, path[0]: _without(value[path[0]], path[1:])}
    return [_without(v, path[1:]) if i == path[0] else v for i, v in enumerate(value)]


def reduce_case(
    case: FuzzCase, finding: Finding, run: Callable[[FuzzCase], Finding | None], budget: int = 400
) -> tuple[FuzzCase, Finding]:
    """Greedy reduction: drop one key or list item at a time while the signature holds."""
    docs = [list(yaml.safe_load_all(text)) for _, text in case.files]
    tries = 0
    improved = True
    while improved and tries < budget:
        improved = False
        for f, file_docs in enumerate(docs):
            for d, doc in enumerate(file_docs):
                for path in _paths(doc):
                    if path in _KEEP or tries >= budget:
                        continue
                    try:
                        smaller = _without(doc, path)
                    except (KeyError, IndexError, TypeError):
                        continue  # an earlier removal changed the tree
                    candidate_docs = [list(x) for x in docs]
                    candidate_docs[f][d] = smaller
                    candidate = FuzzCase(
                        files=[(n, dump(candidate_docs[i])) for i, (n, _) in enumerate(case.files)],
                        owner_uid=case.owner_uid,
                        features=case.features,
                        env_order_random=case.env_order_random,
                    )
                    tries += 1
                    found = run(candidate)
                    if found is not None and found.signature == finding.signature:
                        docs, case, finding, improved = candidate_docs, candidate, found, True
                        break
                if improved:
                    break
            if improved:
                break
    return case, finding


def fuzz(
    count: int,
    base_seed: int,
    out: Path,
    log: Callable[[str], None] = print,
    version: str = DEFAULT_TRAINER_VERSION,
) -> Fuzzer:
    out.mkdir(parents=True, exist_ok=True)
    with (
        oracle.OracleServer(version=version) as server,
        tempfile.TemporaryDirectory(prefix="trainc-fuzz-") as work,
    ):
        fuzzer = Fuzzer(server=server, workdir=Path(work), out=out, log=log, version=version)
        fuzzer.run(count, base_seed)
    return fuzzer


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.conformance.fuzz", description=__doc__.splitlines()[0]
    )
    parser.add_argument(
        "--count", type=int, default=1000, help="examples to generate (default 1000)"
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="base seed; the same seed gives the same run"
    )
    parser.add_argument(
        "--out", type=Path, default=REPO / "conformance-out", help="where reproductions go"
    )
    parser.add_argument(
        "--trainer",
        action="append",
        choices=TRAINER_VERSIONS,
        help="only this Trainer release (repeatable; default: every emulated release)",
    )
    args = parser.parse_args(argv)
    versions = args.trainer or list(TRAINER_VERSIONS)
    try:
        for version in versions:
            oracle.oracle_binary(version)
    except oracle.OracleUnavailable as reason:
        print(f"conformance-fuzz: {reason}", file=sys.stderr)
        return 2
    closing = []
    for version in versions:
        fuzzer = fuzz(args.count, args.seed, args.out / version, version=version)
        differences = len(fuzzer.written)
        elapsed = time.monotonic() - fuzzer.started
        print(
            f"conformance-fuzz {version}: {elapsed:.1f} s, {fuzzer.server_restarts} oracle "
            f"restarts, {fuzzer.rendered} of the examples rendered by upstream"
        )
        closing.append((version, fuzzer.examples, differences))
    for version, examples, differences in closing:
        print(f"conformance-fuzz {version}: {examples} cases, {differences} differences")
    return 0 if all(differences == 0 for _, _, differences in closing) else 1


if __name__ == "__main__":
    sys.exit(main())
