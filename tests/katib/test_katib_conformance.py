"""trainc's Katib emulation against the pinned Katib release's own code (tests/katib/oracle):
the defaulting webhook, the validating webhook's verdict (every message, in order) and each
planned trial's substituted object (its bytes), over Katib's TrainJob example shape and its
variants and a seeded fuzz. Closing line: ``katib-conformance: X/Y identical``."""

from __future__ import annotations

import os
from typing import Any

import pytest

from compiler.katib.experiment import (
    decode_problem,
    katib_config,
    katib_config_text,
    set_default,
    validate,
)
from compiler.katib.trials import SubstitutionError, plan_trials, serialised, substitute
from tests.go_oracle import oracle_needed
from tests.katib import oracle
from tests.katib.cases import CONFIG_MAPS, cases, fuzz_cases

FUZZ_CASES = int(os.environ.get("KATIB_FUZZ_CASES", "200"))
FUZZ_SEED = int(os.environ.get("KATIB_FUZZ_SEED", "20261128"))
_CONFIG_MAPS = {(c["metadata"]["namespace"], c["metadata"]["name"]): c for c in CONFIG_MAPS}


@pytest.fixture(scope="module", autouse=True)
def built() -> None:
    with oracle_needed("`make katib-oracle` builds it"):
        oracle.oracle_binary()


def _defaults(exp: dict[str, Any]) -> dict[str, Any]:
    """What the defaulting webhook sets, to compare."""
    spec = exp.get("spec") or {}
    template = spec.get("trialTemplate") or {}
    return {
        "parallelTrialCount": spec.get("parallelTrialCount"),
        "resumePolicy": spec.get("resumePolicy"),
        "metricStrategies": (spec.get("objective") or {}).get("metricStrategies"),
        "successCondition": template.get("successCondition"),
        "failureCondition": template.get("failureCondition"),
        "primaryPodLabels": template.get("primaryPodLabels"),
        "metricsCollectorSpec": spec.get("metricsCollectorSpec"),
        "distributions": [
            (p.get("feasibleSpace") or {}).get("distribution") for p in spec.get("parameters") or []
        ],
    }


def _trainc(exp: dict[str, Any]) -> tuple[dict[str, Any], list[str], list[Any], list[str]]:
    if decode_problem(exp):
        return {}, [], [], []
    defaulted = set_default(exp)
    errors = [e.text for e in validate(set_default(exp), katib_config(), _CONFIG_MAPS)]
    plan = plan_trials(defaulted, samples=2, seed=7)
    if errors:  # a rejected Experiment makes no trials
        return _defaults(defaulted), errors, [], []
    trials, texts = [], []
    namespace = str(defaulted["metadata"].get("namespace") or "")
    for trial in plan.trials:
        trials.append(
            {
                "name": trial.name,
                "assignments": [{"name": k, "value": v} for k, v in trial.assignments],
            }
        )
        try:
            obj = substitute(defaulted, trial.name, namespace, trial.assignments, _CONFIG_MAPS)
            texts.append(serialised(obj))
        except SubstitutionError as error:
            texts.append(f"error: {error}".split(":")[0])
    return _defaults(defaulted), errors, trials, texts


def _compare(named: list[tuple[str, dict[str, Any]]]) -> tuple[int, list[str]]:
    sides = [(name, exp, _trainc(exp)) for name, exp in named]
    requests = [
        {
            "experiment": exp,
            "configMaps": CONFIG_MAPS,
            "katibConfig": katib_config_text(),
            "trials": t[2],
        }
        for _, exp, t in sides
    ]
    answers = oracle.ask(requests)
    same, differences = 0, []
    for (name, exp, (defaults, errors, _, texts)), answer in zip(sides, answers, strict=True):
        ours_decode = decode_problem(exp)
        if answer.get("decodeError") or ours_decode:
            # both refuse to decode, for the same reason (Katib's text names the whole body)
            if ours_decode and answer.get("decodeError", "").startswith(
                ours_decode.text.split(" in ")[0]
            ):
                same += 1
            else:
                differences.append(f"{name}: decode {ours_decode} != {answer.get('decodeError')}")
            continue
        theirs = [t.get("spec", "error") for t in answer["trials"]]
        ours = [t if not t.startswith("error") else "error" for t in texts]
        problems = []
        if _defaults(answer["defaulted"]) != defaults:
            problems.append(f"defaults: {defaults} != {_defaults(answer['defaulted'])}")
        if answer["errors"] != errors:
            problems.append(f"errors:\n  trainc {errors}\n  katib  {answer['errors']}")
        if theirs != ours:
            diff = [(a, b) for a, b in zip(ours, theirs, strict=False) if a != b][:1]
            diff = diff or [(f"{len(ours)} trials", f"{len(theirs)} trials")]
            problems.append(f"trials: {diff}")
        if problems:
            differences.append(f"{name}: " + "; ".join(problems))
        else:
            same += 1
    return same, differences


def test_cases_identical() -> None:
    named = cases()
    assert len(named) >= 60
    same, differences = _compare(named)
    print(f"\nkatib-conformance: {same}/{len(named)} identical (cases)")
    assert not differences, "\n".join(differences)


def test_fuzz_identical() -> None:
    named = fuzz_cases(FUZZ_CASES, FUZZ_SEED)
    same, differences = _compare(named)
    print(f"\nkatib-conformance: {same}/{len(named)} identical (fuzz, seed {FUZZ_SEED})")
    assert not differences, "\n".join(differences[:10])
