"""trainc against the committed goldens (the oracle's facts). Needs only Python."""

from __future__ import annotations

import pytest

from tests.conformance import trainc_side
from tests.conformance.cases import Case, all_cases
from tests.conformance.compare import rejection_difference, trainc_error_difference
from tests.conformance.normalise import first_difference, normalise

CASES = all_cases()


def _case_id(case: Case) -> str:
    return case.name


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_golden_case(case: Case) -> None:
    kind, expected = case.expectation()
    actual = trainc_side.render(list(case.inputs), case.owner_uid)
    if kind == "trainc-error":
        difference = trainc_error_difference(case)
        assert difference is None, difference
        return
    if kind == "objects":
        assert actual.problems is None, "trainc rejects what upstream renders:\n" + "\n".join(
            str(p) for p in actual.problems or []
        )
        assert actual.objects is not None
        random_env = case.env_order_random
        difference = first_difference(
            normalise(expected, random_env), normalise(actual.objects, random_env)
        )
        assert difference is None, difference
    else:
        difference = rejection_difference(expected.get("errors", []), actual)
        assert difference is None, difference
