"""trainc's expansion below the JobSet against the upstream code, field for field.

For every golden case's JobSet and every mutated one (tests/pods/cases.py), stored as
the API server stores it (JobSet CRD defaults):

* the JobSet webhooks' verdict and message (jobset oracle) equal trainc's;
* the defaulted JobSet, the Jobs and the Service the JobSet controller creates
  (jobset oracle) equal trainc's;
* the Jobs and Services as the API server stores them and the Pods the Job controller
  creates, through the built-in admission plugins (kube oracle), then through the JobSet
  Pod webhook (jobset oracle, ``pods``), equal trainc's.

Ignored: ``status`` (Go writes an empty one), ``generation`` (set by the Job strategy;
trainc writes no server-set metadata) and the three fields of the Service IP allocator,
which the oracle does not run (the live control plane does).
"""

from __future__ import annotations

import copy
import os
from typing import Any

import pytest

from compiler.expand import JobSetRefused, _crd_defaults, admit_jobset, webhook_defaults
from compiler.expand.apiserver import create_job, create_pod, create_service
from compiler.expand.job_controller import job_pods
from compiler.expand.jobset_controller import construct_jobs, headless_service, never_created
from compiler.expand.jobset_webhook import invalid_message
from compiler.expand.pod_webhook import mutate_pod
from compiler.render.info import json_copy
from tests.go_oracle import oracle_needed
from tests.pods.cases import golden_jobsets, mutated_jobsets, random_jobsets
from tests.pods.oracle import (
    jobset_oracle,
    kube_oracle,
    oracle_binary,
    pod_webhook_oracle,
)

_ALLOCATED = ("clusterIPs", "ipFamilies", "ipFamilyPolicy")
# random JobSets beside the written cases (tests/pods/cases.py): cases nobody chose
RANDOM_SEED = int(os.environ.get("TRAINC_PODS_SEED", "27"))
RANDOM_CASES = int(os.environ.get("TRAINC_PODS_RANDOM", "100"))


def _diff(path: str, ours: Any, theirs: Any, out: list[str]) -> None:
    if isinstance(ours, dict) and isinstance(theirs, dict):
        for key in sorted(set(ours) | set(theirs)):
            _diff(f"{path}.{key}", ours.get(key, "<absent>"), theirs.get(key, "<absent>"), out)
    elif isinstance(ours, list) and isinstance(theirs, list) and len(ours) == len(theirs):
        for index, (a, b) in enumerate(zip(ours, theirs, strict=True)):
            _diff(f"{path}[{index}]", a, b, out)
    elif ours != theirs:
        out.append(f"{path}: trainc {ours!r} != oracle {theirs!r}")


def _without_status(answer: dict[str, Any]) -> dict[str, Any]:
    """The oracles' objects without ``status``: Go writes an empty one, no one creates it."""
    for key in ("defaulted", "jobs", "services", "pods", "webhooked"):
        value = answer.get(key)
        for obj in value if isinstance(value, list) else [value] if value else []:
            obj.pop("status", None)
    return answer


_RJOB = "jobset.sigs.k8s.io/replicatedjob-name"


def _created_only(answer: dict[str, Any], never: set[str]) -> None:
    """The oracle lifts ``dependsOn`` to build every Job in one reconcile; the Jobs of a
    replicated job the success policy finishes the JobSet before (trainc's
    ``never_created``, held to the live control plane by golden
    success-policy-before-dependent-job) are not created: left out here too."""
    for key in ("jobs", "pods", "webhooked"):
        if isinstance(answer.get(key), list):
            answer[key] = [
                o
                for o in answer[key]
                if (o["metadata"].get("labels") or {}).get(_RJOB) not in never
            ]


def _trainc(stored: dict[str, Any]) -> dict[str, Any]:
    """trainc's answers at each step the oracles see."""
    defaulted = webhook_defaults(stored)
    try:
        admitted = admit_jobset(stored)
    except JobSetRefused as refused:
        return {"allowed": False, "message": invalid_message(refused.name, refused.errors)}
    jobs = construct_jobs(admitted)
    service = headless_service(admitted)
    services = [] if service is None else [service]
    stored_jobs = [create_job(copy.deepcopy(job)) for job in jobs]
    pods = [
        create_pod(pod, ordinal)
        for job in stored_jobs
        for ordinal, pod in enumerate(job_pods(job))
        if job["spec"]["completionMode"] == "NonIndexed"
    ] + [
        create_pod(pod)
        for job in stored_jobs
        for pod in job_pods(job)
        if job["spec"]["completionMode"] != "NonIndexed"
    ]
    return {
        "allowed": True,
        "defaulted": defaulted,
        "jobs": sorted(jobs, key=lambda o: o["metadata"]["name"]),
        "services": services,
        "stored_jobs": sorted(stored_jobs, key=lambda o: o["metadata"]["name"]),
        "stored_services": [create_service(copy.deepcopy(s)) for s in services],
        "pods": sorted(pods, key=lambda o: o["metadata"]["name"]),
        "webhooked": sorted(
            (mutate_pod(copy.deepcopy(p)) for p in pods), key=lambda o: o["metadata"]["name"]
        ),
    }


@pytest.fixture(scope="module")
def comparison() -> dict[str, list[str]]:
    with oracle_needed("`make pods-oracle` builds it"):
        oracle_binary("jobset")
        oracle_binary("kube")
    cases = [*golden_jobsets(), *mutated_jobsets(), *random_jobsets(RANDOM_SEED, RANDOM_CASES)]
    stored = [_crd_defaults(json_copy(jobset)) for _, jobset in cases]
    answers = [_without_status(a) for a in jobset_oracle(stored)]
    allowed = [i for i, a in enumerate(answers) if a["allowed"]]
    kube = kube_oracle(
        [{"jobs": answers[i]["jobs"], "services": answers[i]["services"]} for i in allowed]
    )
    kube_by_case = dict(zip(allowed, map(_without_status, kube), strict=True))
    all_pods = [pod for answer in kube for pod in answer["pods"]]
    webhooked = iter(pod_webhook_oracle(all_pods))
    for answer in kube:
        answer["webhooked"] = [next(webhooked) for _ in answer["pods"]]
        _without_status(answer)
    report: dict[str, list[str]] = {}
    for index, ((name, _), jobset) in enumerate(zip(cases, stored, strict=True)):
        ours, theirs = _trainc(jobset), answers[index]
        if ours["allowed"]:
            never = set(never_created(ours["defaulted"]))
            _created_only(theirs, never)
            _created_only(kube_by_case[index], never)
        diffs: list[str] = []
        if ours["allowed"] != theirs["allowed"]:
            diffs.append(f"verdict: trainc {ours} != oracle {theirs.get('message')}")
        elif not ours["allowed"]:
            _diff("message", ours["message"], theirs["message"], diffs)
        else:
            _diff("defaulted", ours["defaulted"], theirs["defaulted"], diffs)
            _diff("jobs", ours["jobs"], theirs["jobs"], diffs)
            _diff("services", ours["services"], theirs["services"], diffs)
            k = kube_by_case[index]
            diffs.extend(f"kube oracle: {e}" for e in k.get("errors") or [])
            for job in k["jobs"]:
                job["metadata"].pop("generation", None)
            for service in ours["stored_services"]:
                for key in _ALLOCATED:
                    service["spec"].pop(key, None)
            _diff("stored_jobs", ours["stored_jobs"], k["jobs"], diffs)
            _diff("stored_services", ours["stored_services"], k["services"], diffs)
            _diff("pods", ours["pods"], k["pods"], diffs)
            _diff("webhooked", ours["webhooked"], k["webhooked"], diffs)
        report[name] = diffs
    return report


def test_every_case_is_identical_to_the_oracle(comparison: dict[str, list[str]]) -> None:
    different = {name: diffs for name, diffs in comparison.items() if diffs}
    identical = len(comparison) - len(different)
    print(f"expand-oracle: {identical}/{len(comparison)} cases identical")
    shown = "\n".join(f"{name}:\n  " + "\n  ".join(d[:8]) for name, d in sorted(different.items()))
    assert not different, f"{len(different)} cases differ:\n{shown}"


def test_the_cases_reach_both_verdicts(comparison: dict[str, list[str]]) -> None:
    """The mutations include refused JobSets, so the messages are compared too."""
    refused = [
        name
        for name, jobset in mutated_jobsets()
        if _trainc(_crd_defaults(json_copy(jobset)))["allowed"] is False
    ]
    assert {"mutated:name-49", "mutated:name-63", "mutated:depends-on-dangling"} <= set(refused)
    assert "mutated:name-48" not in refused
    assert comparison  # the oracles ran
