"""trainc's Job and Pod validation against kube-apiserver v1.34.4's own code.

``tests/pods/validate`` is a Go program running the API server's create path for a Job
or a Pod (decode with defaults, the registry strategy, the common metadata checks). It is
built once per session (``go build`` caches; the first build compiles k8s.io/kubernetes:
minutes). A few hundred fuzz cases with a fixed seed must agree with it, and so must the
rows of issue 27's table, whose exact messages are also asserted without Go in
``compiler/apiserver/workloads/workloads_test.py``.
"""

from __future__ import annotations

from typing import Any

import pytest

from compiler.apiserver.workloads import invalid_message, validate_job
from compiler.apiserver.workloads.workloads_test import TABLE, table_job
from tests.go_oracle import oracle_needed
from tests.pods import validate_fuzz

CASES = 300
SEED = 27


@pytest.fixture(scope="session")
def oracle() -> None:
    with oracle_needed("`make pods-validate-oracle` builds it"):
        validate_fuzz.ORACLE.binary  # noqa: B018 - built here, once per session


def test_fuzz_cases_agree_with_the_api_server(oracle: None, tmp_path: Any) -> None:
    batch = list(validate_fuzz.cases(CASES, SEED))
    outcome = validate_fuzz.compare(batch, tmp_path)
    differing = sorted(p.name for p in tmp_path.iterdir())
    assert (outcome.verdict_differences, outcome.message_differences) == (0, 0), differing
    assert outcome.decode_errors == 0, differing
    refused = sum(1 for case in batch if validate_fuzz.trainc_verdict(case)[0])
    assert 0.3 * CASES < refused < CASES  # the cases exercise both verdicts


@pytest.mark.parametrize("row", list(TABLE), ids=list(TABLE))
def test_table_rows_are_the_api_servers_words(oracle: None, row: str) -> None:
    job = table_job(row)
    case = validate_fuzz.Case(0, "Job", [row], job)
    (answer,) = validate_fuzz.go_verdicts([case])
    ours = invalid_message("Job", job["metadata"]["name"], validate_job(job))
    assert ours == answer["message"]
    assert TABLE[row] in ours


def test_every_golden_cases_jobs_and_pods_are_judged_as_the_api_server_does(
    oracle: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every golden case's rendered objects, expanded to the Jobs and Pods the controllers
    create (compiler.expand, pods-expand's half of issue 27), through both sides: the Pods
    as sent, before the Pod strategy's PrepareForCreate, which both sides run."""
    import json
    from pathlib import Path

    import yaml

    import compiler.expand as expand_module

    monkeypatch.setattr(expand_module, "prepare_pod", lambda pod: pod)
    root = Path(__file__).resolve().parents[2] / "golden"
    objects: list[dict[str, Any]] = []
    for expected in sorted(root.glob("*/expected.yaml")):
        docs = [d for d in yaml.safe_load_all(expected.read_text()) if isinstance(d, dict)]
        try:
            expanded = expand_module.expand(docs, "pods")
        except expand_module.JobSetRefused:
            continue
        objects += [o for o in expanded if o.get("kind") in ("Job", "Pod")]
    assert len(objects) > 300
    batch = [validate_fuzz.Case(i, o["kind"], [], o) for i, o in enumerate(objects)]
    differing = []
    for case, answer in zip(batch, validate_fuzz.go_verdicts(batch), strict=True):
        message, texts = validate_fuzz.trainc_verdict(case)
        go_texts = [e["text"] for e in answer["errors"]]
        if bool(message) != bool(answer["message"]) or sorted(set(texts)) != sorted(set(go_texts)):
            differing.append((case.obj["metadata"]["name"], message, answer["message"]))
    assert differing == [], json.dumps(differing[:3], indent=1)
