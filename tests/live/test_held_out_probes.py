"""The held-out probes of the live fuzzer (tests/conformance/strategies.py ``HELD_OUT``)
against kube-apiserver v1.34.4's own Job and Pod validation (the Go program of
``tests/pods/validate``), without a cluster: each probe on a Job as the JobSet controller
makes it and on a Pod as the Job controller makes it, with and without a volume of the
name the mount probes use. trainc must give the same verdict and the same words, so
that the live fuzzer's probes find the rules trainc lacks, not the ones it has."""

from __future__ import annotations

import random
import shutil
import subprocess
from typing import Any

import pytest

from tests.conformance.strategies import HELD_OUT, _apply
from tests.pods import validate_fuzz


@pytest.fixture(scope="module")
def oracle() -> None:
    go_tool = shutil.which("go")
    if go_tool is None:
        pytest.fail("`go` is not on PATH (a prerequisite: README)", pytrace=False)
    build = subprocess.run(
        [go_tool, "build", "-o", "bin/validate", "."],
        cwd=validate_fuzz.HARNESS_DIR,
        capture_output=True,
        text=True,
        check=False,
        timeout=3600,
    )
    if build.returncode != 0:
        pytest.fail(f"building {validate_fuzz.HARNESS_DIR} failed:\n{build.stderr}")


def _cases() -> list[validate_fuzz.Case]:
    cases: list[validate_fuzz.Case] = []
    for family, where, key, value in HELD_OUT:
        for kind in ("Job", "Pod"):
            for with_volume in (False, True):
                rng = random.Random(len(cases))
                obj = validate_fuzz.base_job(rng) if kind == "Job" else validate_fuzz.base_pod(rng)
                spec: dict[str, Any] = (
                    obj["spec"]["template"]["spec"] if kind == "Job" else obj["spec"]
                )
                _apply(spec["containers"][0] if where == "container" else spec, key, value)
                if with_volume:
                    spec["volumes"] = [*(spec.get("volumes") or []), {"name": "held"}]
                label = f"{family} {key} {value!r:.60}"
                cases.append(validate_fuzz.Case(len(cases), kind, [label], obj))
    return cases


def test_every_probe_is_judged_as_the_api_server_does(oracle: None) -> None:
    cases = _cases()
    differing = []
    refused = 0
    for case, answer in zip(cases, validate_fuzz.go_verdicts(cases), strict=True):
        assert not answer.get("decodeError"), (case.families, answer)
        message, texts = validate_fuzz.trainc_verdict(case)
        refused += bool(message)
        go_message = answer["message"]
        go_texts = [e["text"] for e in answer["errors"]]
        if message != go_message and not validate_fuzz.same_message(
            case.kind, texts, go_message, go_texts
        ):
            differing.append(
                f"{case.kind} {case.families[0]}:\n  go: {go_message}\n  us: {message}"
            )
    assert differing == [], "\n".join(differing[:10])
    assert len(cases) > 500 and 0.3 * len(cases) < refused < len(cases)
