"""A fast subset of ``make migrate-conformance`` against the v1 operators' own code
(the Go harness); skipped with a reason when Go is missing."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.migrate import conformance

SUBSET = [
    "pytorch-spec-worked-example",
    "pytorch-elastic-range",
    "pytorch-gang-volcano",
    "pytorch-lowercase-keys",
    "tf-workers-shim",
    "mpi-v1-pi",
    "mpi-v2beta1-pi",
    "mpi-v2beta1-deadline",
    "xgboost-upstream-iris",
    "paddle-collective",
    "jax-worker4",
    "volcano-pytorch-worked-example",
    "mxjob-unsupported",
]


@pytest.fixture(scope="module")
def oracle() -> None:
    if shutil.which("go") is None:
        pytest.fail(
            "Go is not installed: the v1 operators' harness cannot be built (Go is a prerequisite: README)",
            pytrace=False,
        )
    built = subprocess.run(
        ["make", "-s", "migrate-oracle"],
        cwd=conformance.HERE.parents[1],
        capture_output=True,
        text=True,
    )
    if built.returncode != 0:
        pytest.fail(
            f"the harness does not build (module proxy unreachable?): {built.stderr[-500:]}"
        )


def test_subset_is_equivalent(oracle: None) -> None:
    cases = conformance.load_cases(SUBSET)
    answers = conformance.run_oracle(cases)
    outcomes = [
        conformance.judge(c, answers.get(c.name), conformance.migrate_case(c)) for c in cases
    ]
    failed = {o.case.name: o.detail for o in outcomes if not o.equivalent}
    assert not failed


def test_a_real_difference_is_caught(oracle: None) -> None:
    """The comparison has teeth: without the compat env, MASTER_ADDR & co are missing in
    the v2 pods, and a report that does not name them fails the case."""
    from compiler.migrate import Options

    [case] = conformance.load_cases(["pytorch-spec-worked-example"])
    case.options = Options(compat_env=True)
    result = conformance.migrate_case(case)
    assert not isinstance(result, Exception)
    for obj in result.objects:
        if obj["kind"] == "TrainJob":
            del obj["spec"]["trainer"]["env"]
    outcome = conformance.judge(case, conformance.run_oracle([case])[case.name], result)
    assert not outcome.equivalent
    assert any("env:main:MASTER_ADDR" in line for line in outcome.detail)


def test_closing_line(oracle: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert conformance.main(["--only", "jax-worker4", "jax-master-type"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "migrate-conformance: 2/2 jobs equivalent"
