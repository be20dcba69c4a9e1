"""``make conformance``: render every golden case with trainc and with the oracle, compare,
on every emulated Trainer release the case applies to (each release's own oracle build).

Prints one line per case and release, and closes with one line per release,
``conformance v2.2.0: X/Y cases identical``. A rejected case is identical when both
reject and name the same field paths; an accepted case's refusals below the JobSet
(trainc's downstream rules) must be those the real controllers reported
(``downstream.yaml``, tests.conformance.downstream). ``--trainer VERSION`` (repeatable)
limits the releases.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from compiler.upstream.versions import TRAINER_VERSIONS
from tests.conformance import oracle, trainc_side
from tests.conformance.cases import Case, all_cases
from tests.conformance.downstream import downstream_difference
from tests.conformance.downstream import read as read_downstream
from tests.conformance.normalise import first_difference, normalise, rejection_fields

TYPED_PATCH = "failed to create typed patch object"


def compare_case(case: Case) -> str | None:
    """None when identical, else what differs."""
    if case.expect_trainc_error is not None:
        return trainc_error_difference(case)
    expected = oracle.render(list(case.inputs), case.owner_uid, case.version)
    actual = trainc_side.render(list(case.inputs), case.owner_uid, case.version)
    difference = compare_answers(expected, actual, case.env_order_random)
    if difference is None and expected.objects is not None:
        # below the Trainer's objects, which the oracle does not reach: the real
        # controllers' refusals, recorded live in downstream.yaml
        difference = downstream_difference(
            read_downstream(case.downstream_path), actual.downstream, actual.objects or []
        )
    return difference


def compare_answers(
    expected: oracle.OracleAnswer, actual: trainc_side.TraincAnswer, env_order_random: bool = False
) -> str | None:
    if expected.objects is not None:
        if actual.objects is None:
            problems = "; ".join(str(p) for p in actual.problems or [])
            return f"oracle renders, trainc rejects: {problems}"
        return first_difference(
            normalise(expected.objects, env_order_random),
            normalise(actual.objects, env_order_random),
        )
    return rejection_difference((expected.rejection or {}).get("errors", []), actual)


def rejection_difference(
    expected_errors: list[dict[str, Any]], actual: trainc_side.TraincAnswer
) -> str | None:
    """Both reject, trainc names every field upstream names, and every problem has a source line."""
    if actual.objects is not None:
        messages = "; ".join(str(e.get("message", "")) for e in expected_errors)
        return f"upstream rejects ({messages}), trainc renders"
    problems = actual.problems or []
    expected_fields = rejection_fields(expected_errors)
    actual_fields = {"" if p.field_path in (None, "<nil>") else p.field_path for p in problems}
    missing = expected_fields - actual_fields
    if any(TYPED_PATCH in p.message for p in problems):
        # The oracle creates the Trainer's objects without server-side apply. The API
        # server's apply refuses a duplicate list-map key while it builds the typed
        # patch, before the schema's other errors (golden apply-duplicate-port-key,
        # checked live): trainc names only those keys, each among upstream's fields.
        missing = (actual_fields - {""}) - expected_fields
    if missing:
        return f"field paths differ: upstream {sorted(expected_fields)}, trainc {sorted(actual_fields)}"
    for problem in problems:
        if problem.location is None or problem.location.line <= 0:
            return f"a problem without a source line: {problem}"
    return None


def trainc_error_difference(case: Case) -> str | None:
    """For input upstream cannot read: trainc must reject it at the recorded place."""
    expected = case.expect_trainc_error or {}
    actual = trainc_side.render(list(case.inputs), case.owner_uid, case.version)
    if actual.problems is None:
        return "trainc renders input that cannot be read"
    for problem in actual.problems:
        location = problem.location
        if (
            location is not None
            and location.line == expected.get("line")
            and location.column == expected.get("column")
            and str(expected.get("contains", "")) in problem.message
        ):
            return None
    return "no problem at the expected place: " + "; ".join(str(p) for p in actual.problems)


def compare_version(version: str) -> tuple[int, int]:
    """Every case of Trainer ``version``, one line each; (identical, total)."""
    cases = all_cases(version)
    identical = 0
    for case in cases:
        try:
            difference = compare_case(case)
        except Exception as error:  # a crash is a difference to report, not a stop
            difference = f"error: {type(error).__name__}: {error}"
        if difference is None:
            identical += 1
            print(f"ok    {version} {case.name}")
        else:
            print(f"DIFF  {version} {case.name}: {difference}")
    return identical, len(cases)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.conformance.compare")
    parser.add_argument("--trainer", action="append", choices=TRAINER_VERSIONS)
    args = parser.parse_args(argv)
    versions = args.trainer or list(TRAINER_VERSIONS)
    totals = {version: compare_version(version) for version in versions}
    for version, (identical, total) in totals.items():
        print(f"conformance {version}: {identical}/{total} cases identical")
    return 0 if all(identical == total for identical, total in totals.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
