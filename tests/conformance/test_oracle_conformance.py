"""Every golden case rendered live by the oracle and by trainc; skipped where Go is missing."""

from __future__ import annotations

import pytest

from tests.conformance import oracle
from tests.conformance.cases import Case, all_cases
from tests.conformance.compare import compare_case

CASES = all_cases()


@pytest.fixture(scope="session")
def oracle_built() -> None:
    try:
        oracle.oracle_binary()
    except oracle.OracleUnavailable as reason:
        pytest.skip(str(reason))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_trainc_matches_oracle(case: Case, oracle_built: None) -> None:
    difference = compare_case(case)
    assert difference is None, difference
