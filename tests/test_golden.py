"""trainc against the committed goldens (the oracle's facts). Needs only Python."""

from __future__ import annotations

import pytest

from compiler.upstream.versions import TRAINER_VERSIONS
from tests.conformance import downstream, trainc_side
from tests.conformance.cases import Case, all_cases, message_key
from tests.conformance.compare import rejection_difference, trainc_error_difference
from tests.conformance.normalise import first_difference, normalise

CASES = all_cases()
# every case on every emulated Trainer release it applies to
VERSIONED_CASES = [case for version in TRAINER_VERSIONS for case in all_cases(version)]


def _case_id(case: Case) -> str:
    return case.name


def _versioned_id(case: Case) -> str:
    return f"{case.version}/{case.name}"


def test_older_releases_have_at_least_40_cases() -> None:
    for version in TRAINER_VERSIONS:
        assert len(all_cases(version)) >= 40, version


@pytest.mark.parametrize("case", VERSIONED_CASES, ids=_versioned_id)
def test_golden_case(case: Case) -> None:
    kind, expected = case.expectation()
    actual = trainc_side.render(list(case.inputs), case.owner_uid, case.version)
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
        # below the Trainer's objects: what the real controllers refused (downstream.yaml)
        difference = downstream.downstream_difference(
            downstream.read(case.downstream_path), actual.downstream, actual.objects
        )
        assert difference is None, difference
        unlocated = [p for p in actual.downstream if p.location is None or p.location.line <= 0]
        assert unlocated == [], unlocated
    else:
        difference = rejection_difference(expected.get("errors", []), actual)
        assert difference is None, difference


LIVE_CASES = [case for case in CASES if case.live_messages]


def test_downstream_goldens_sit_beside_trainer_objects() -> None:
    """A downstream.yaml records refusals below objects the Trainer created: never beside
    an error golden, never on a release trainc does not check below the JobSet, and never
    empty (the recording removes it where the controllers created everything)."""
    from compiler.expand.downstream import BELOW_THE_JOBSET

    for case in VERSIONED_CASES:
        refusals = downstream.read(case.downstream_path)
        if refusals is None:
            continue
        assert case.expected_objects_path.exists(), case.downstream_path
        assert BELOW_THE_JOBSET.on(case.version), case.downstream_path
        assert refusals, case.downstream_path


def test_every_error_golden_records_the_real_messages() -> None:
    rejected = [case.name for case in CASES if case.expected_errors_path.exists()]
    assert sorted(case.name for case in LIVE_CASES) == sorted(rejected)


@pytest.mark.parametrize("case", LIVE_CASES, ids=_case_id)
def test_messages_are_the_real_servers_word_for_word(case: Case) -> None:
    """Each message the real control plane gave for this case is in trainc's output,
    word for word (trainc may add its location before and a hint after)."""
    actual = trainc_side.render(list(case.inputs), case.owner_uid)
    lines = [
        message_key(f"{p.field_path}: {p.message}" if p.field_path else p.message)
        for p in actual.problems or []
    ]
    missing = [m for m in case.live_messages if not any(m in line for line in lines)]
    assert missing == [], "\n".join(["not in trainc's output:", *missing, "trainc:", *lines])


def _server_defaults_comparable(case: Case) -> bool:
    """Object cases whose stored form trainc can compute: no Volcano PodGroup (its CRD is
    not pinned) and no generated Secret (a requirement, not rendered)."""
    kind, expected = case.expectation()
    return kind == "objects" and not any(
        obj.get("kind") == "Secret" or obj.get("apiVersion", "").startswith("scheduling.volcano")
        for obj in expected
    )


@pytest.mark.parametrize("case", [c for c in CASES if _server_defaults_comparable(c)], ids=_case_id)
def test_server_defaults_are_what_the_api_server_stores(case: Case) -> None:
    """``render --server-defaults`` writes what the API server stores: the golden with
    the defaults kube-apiserver v1.34.4 applied on create (tests/live/conformance_live.py
    SERVER_DEFAULTS, read back from the live control plane)."""
    from tests.live.conformance_live import with_server_defaults

    _, expected = case.expectation()
    build = trainc_side.build(list(case.inputs), case.owner_uid)
    # the refusals below the JobSet are the golden's downstream.yaml (test_golden_case)
    assert [p for p in build.problems if not downstream.is_downstream(p)] == []
    difference = downstream.downstream_difference(
        downstream.read(case.downstream_path), build.problems, expected
    )
    assert difference is None, difference
    stored = [o.data for o in build.stored_objects()]
    random_env = case.env_order_random
    difference = first_difference(
        normalise(with_server_defaults(expected), random_env), normalise(stored, random_env)
    )
    assert difference is None, difference
