"""Every golden case rendered live by the oracle and by trainc, on every emulated Trainer
release it applies to (each release's oracle build); skipped where Go is missing."""

from __future__ import annotations

import pytest

from compiler.upstream.versions import TRAINER_VERSIONS
from tests.conformance import oracle
from tests.conformance.cases import Case, all_cases
from tests.conformance.compare import compare_case
from tests.go_oracle import oracle_needed

CASES = [case for version in TRAINER_VERSIONS for case in all_cases(version)]


@pytest.fixture(scope="session")
def oracle_built() -> None:
    with oracle_needed("`make oracle` builds it; `make test` runs it first"):
        for version in TRAINER_VERSIONS:
            oracle.oracle_binary(version)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.version}/{c.name}")
def test_trainc_matches_oracle(case: Case, oracle_built: None) -> None:
    difference = compare_case(case)
    assert difference is None, difference
