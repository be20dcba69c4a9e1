"""trainc's Workloads and admissibility verdicts against the pinned Kueue release's own
code (tests/kueue/oracle): every golden case, with a queue label added to a copy of its
TrainJob, through Kueue's TrainJob integration (Trainer v2.2.0 inside Kueue) and its
JobSet integration (the JobSet trainc renders); and a seeded fuzz of queue setups through
the flavor assigner. Each test ends with 0 differences."""

from __future__ import annotations

import copy
import os
import random
from pathlib import Path
from typing import Any

import pytest

from compiler.apiserver.crds import trainer_crds
from compiler.apiserver.manifest import Manifest, SourceMap
from compiler.errors import InputError
from compiler.load.loader import load
from compiler.queue.assign import assign_flavors, quota_tree
from compiler.queue.delivery import for_jobset_integration
from compiler.queue.objects import QueueSetup, queue_setup
from compiler.queue.verdict import QUEUE_LABEL
from compiler.queue.workload import PodSet, jobset_workload, total_requests, trainjob_workload
from compiler.upstream.versions import KUEUE_TRAINER_VERSIONS, KUEUE_VERSION
from tests.conformance.cases import all_cases
from tests.conformance.trainc_side import render
from tests.go_oracle import oracle_needed
from tests.kueue import oracle
from tests.kueue.fuzz import random_podsets, random_setup

KUEUE_TRAINER = KUEUE_TRAINER_VERSIONS[KUEUE_VERSION]
FUZZ_CASES = int(os.environ.get("KUEUE_FUZZ_CASES", "300"))
FUZZ_SEED = int(os.environ.get("KUEUE_FUZZ_SEED", "20261127"))


@pytest.fixture(scope="module", autouse=True)
def built() -> None:
    with oracle_needed("`make kueue-oracle` builds it"):
        oracle.oracle_binary()


def _manifests(objects: list[dict[str, Any]]) -> list[Manifest]:
    return [Manifest(o, SourceMap("<fuzz>", {})) for o in objects]


def _setup_objects(rng: random.Random, namespace: str) -> list[dict[str, Any]]:
    """LimitRange defaults, a RuntimeClass with overhead and Kueue's resources settings,
    each present or not."""
    objects: list[dict[str, Any]] = []
    if rng.random() < 0.6:
        item: dict[str, Any] = {"type": "Container"}
        if rng.random() < 0.7:
            item["default"] = {"cpu": rng.choice(["1", "250m"]), "nvidia.com/gpu": 1}
        if rng.random() < 0.7:
            item["defaultRequest"] = {"memory": rng.choice(["512Mi", "1Gi"])}
        objects.append(
            {
                "apiVersion": "v1",
                "kind": "LimitRange",
                "metadata": {"name": "defaults", "namespace": namespace},
                "spec": {"limits": [item]},
            }
        )
    objects.append(
        {
            "apiVersion": "node.k8s.io/v1",
            "kind": "RuntimeClass",
            "metadata": {"name": "kata"},
            "handler": "kata",
            "overhead": {"podFixed": {"cpu": "250m", "memory": "160Mi"}},
        }
    )
    if rng.random() < 0.5:
        objects.append(
            {
                "apiVersion": "config.kueue.x-k8s.io/v1beta2",
                "kind": "Configuration",
                "resources": {
                    "excludeResourcePrefixes": ["example.com/"],
                    "transformations": [
                        {
                            "input": "nvidia.com/gpu",
                            "strategy": rng.choice(["Retain", "Replace"]),
                            "outputs": {
                                "example.org/gpu-units": "2",
                                "example.org/gpu-memory": "40Gi",
                            },
                        }
                    ],
                },
            }
        )
    return objects


def _oracle_setup(objects: list[dict[str, Any]]) -> dict[str, Any]:
    setup: dict[str, Any] = {
        "limitRanges": [o for o in objects if o["kind"] == "LimitRange"],
        "runtimeClasses": [o for o in objects if o["kind"] == "RuntimeClass"],
        "resourceFlavors": [o for o in objects if o["kind"] == "ResourceFlavor"],
        "clusterQueues": [o for o in objects if o["kind"] == "ClusterQueue"],
        "cohorts": [o for o in objects if o["kind"] == "Cohort"],
    }
    for o in objects:
        if o["kind"] == "Configuration":
            setup["resources"] = o["resources"]
    return setup


def _queued_case(case_inputs: list[Path]) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The case's TrainJob (a queue label added) and its runtime, as Kueue's Trainer
    release admits them; None when that release refuses them."""
    try:
        loaded = load([str(p) for p in case_inputs], crds=trainer_crds(KUEUE_TRAINER))
    except InputError:
        return None
    jobs = loaded.of_kind("TrainJob")
    if len(jobs) != 1:
        return None
    job = copy.deepcopy(jobs[0].data)
    job["metadata"].setdefault("labels", {})[QUEUE_LABEL] = "research"
    ref = job["spec"]["runtimeRef"]
    for runtime in loaded.objects:
        if runtime.kind == ref.get("kind") and runtime.name == ref.get("name"):
            return job, runtime.data
    return None


def _ours(podsets: list[Any]) -> list[tuple[str, int, dict[str, int]]]:
    return [(p.name, p.count, dict(p.requests)) for p in podsets]


def _theirs(answer: dict[str, Any]) -> list[tuple[str, int, dict[str, int]]]:
    return [(p["name"], p["count"], dict(p["requests"] or {})) for p in answer.get("podSets") or []]


def test_golden_workloads_through_the_trainjob_integration() -> None:
    compared = 0
    differences: list[Any] = []
    requests: list[dict[str, Any]] = []
    ours: list[Any] = []
    for case in all_cases(KUEUE_TRAINER):
        if case.expectation()[0] != "objects":
            continue  # a TrainJob or runtime the Trainer refuses never reaches Kueue
        found = _queued_case(list(case.inputs))
        if found is None:
            continue
        job, runtime = found
        rng = random.Random(case.name)
        objects = _setup_objects(rng, job["metadata"]["namespace"])
        setup, problems = queue_setup(_manifests(copy.deepcopy(objects)))
        assert problems == []
        mine, errors = trainjob_workload(job, runtime["spec"], setup, KUEUE_TRAINER)
        requests.append(
            {"op": "trainjob", "trainJob": job, "runtime": runtime, "setup": _oracle_setup(objects)}
        )
        ours.append((case.name, _ours(mine), errors))
    answers = oracle.ask(requests)
    for (name, mine, errors), answer in zip(ours, answers, strict=True):
        if answer.get("error") or errors:
            if not (answer.get("error") and errors):
                differences.append((name, mine, errors, answer))
            continue
        compared += 1
        if mine != _theirs(answer):
            differences.append((name, mine, _theirs(answer)))
    for difference in differences:
        print("DIFF", str(difference)[:600])
    print(f"kueue-conformance (TrainJob integration): {compared} golden cases, "
          f"{len(differences)} differences")  # fmt: skip
    assert compared > 50
    assert differences[:3] == []


def test_golden_workloads_through_the_jobset_integration() -> None:
    compared = 0
    differences: list[Any] = []
    requests: list[dict[str, Any]] = []
    ours: list[Any] = []
    for case in all_cases():
        if case.expectation()[0] != "objects":
            continue
        rendered = render(list(case.inputs), case.owner_uid)
        jobsets = [o for o in rendered.objects or [] if o.get("kind") == "JobSet"]
        if len(jobsets) != 1:
            continue
        jobset = copy.deepcopy(jobsets[0])
        namespace = jobset["metadata"].get("namespace") or "default"
        rng = random.Random(case.name)
        objects = _setup_objects(rng, namespace)
        if rng.random() < 0.5:  # some pods run with a RuntimeClass: its overhead counts
            for rjob in jobset["spec"]["replicatedJobs"]:
                rjob["template"]["spec"]["template"]["spec"]["runtimeClassName"] = "kata"
        setup, problems = queue_setup(_manifests(copy.deepcopy(objects)))
        assert problems == []
        ours.append((case.name, _ours(jobset_workload(jobset, setup))))
        requests.append({"op": "jobset", "jobSet": jobset, "setup": _oracle_setup(objects)})
    answers = oracle.ask(requests)
    for (name, mine), answer in zip(ours, answers, strict=True):
        compared += 1
        if answer.get("error") or mine != _theirs(answer):
            differences.append((name, mine, answer.get("error") or _theirs(answer)))
    print(f"kueue-conformance (JobSet integration): {compared} golden cases, "
          f"{len(differences)} differences")  # fmt: skip
    assert compared > 50
    assert differences[:3] == []


def test_kueue_manages_the_jobsets_of_the_opt_in_and_not_the_resolved_ones() -> None:
    """Kueue's JobSet integration code, asked about every golden JobSet: as rendered
    (resolved) it names no queue and Kueue would not suspend it, so it starts outside
    every quota;
    made for the integration (:func:`for_jobset_integration`) it names the queue, is
    delivered suspended, would be suspended on create, and passes Kueue's validation."""
    requests: list[dict[str, Any]] = []
    for case in all_cases():
        if case.expectation()[0] != "objects":
            continue
        rendered = render(list(case.inputs), case.owner_uid)
        for jobset in [o for o in rendered.objects or [] if o.get("kind") == "JobSet"]:
            # resolved delivery renders no owner (no TrainJob exists): as `trainc render`
            jobset = copy.deepcopy(jobset)
            jobset["metadata"].pop("ownerReferences", None)
            queued = for_jobset_integration(jobset, {QUEUE_LABEL: "research"})
            requests += [{"op": "managed", "jobSet": jobset}, {"op": "managed", "jobSet": queued}]
    answers = oracle.ask(requests)
    differences = []
    for resolved, queued in zip(answers[::2], answers[1::2], strict=True):
        if resolved.get("shouldSuspend"):
            differences.append(("resolved: Kueue would suspend it", resolved))
        # (a resolved JobSet is suspended only when its TrainJob is)
        if resolved.get("queueName") or resolved.get("error"):
            differences.append(("resolved", resolved))
        if queued != {"queueName": "research", "suspended": True, "shouldSuspend": True}:
            differences.append(("queued", queued))
    print(f"kueue-conformance (JobSet integration manages): {len(answers) // 2} JobSets, "
          f"{len(differences)} differences")  # fmt: skip
    assert len(answers) > 100
    assert differences[:3] == []


def _admitted(objects: list[dict[str, Any]]) -> tuple[QueueSetup, list[dict[str, Any]]] | None:
    manifests = _manifests(copy.deepcopy(objects))
    setup, problems = queue_setup(manifests)
    if problems:
        return None  # the API server would refuse the setup: nothing to admit into
    return setup, [m.data for m in manifests]


def test_fuzz_of_queue_setups_for_the_verdict() -> None:
    rng = random.Random(FUZZ_SEED)
    cases: list[Any] = []
    requests: list[dict[str, Any]] = []
    while len(cases) < FUZZ_CASES:
        objects, queue = random_setup(rng)
        admitted = _admitted(objects)
        if admitted is None:
            continue
        setup, data = admitted
        podsets = random_podsets(rng)
        workload = total_requests(
            [PodSet(p["name"], p["count"], p["template"]) for p in podsets], setup.resources
        )
        verdict = assign_flavors(workload, queue, setup, quota_tree(setup))
        cases.append((objects, podsets, verdict.fits))
        requests.append(
            {
                "op": "assign",
                "podSets": podsets,
                "clusterQueue": queue,
                "setup": _oracle_setup(data),
            }
        )
    answers = oracle.ask(requests)
    differences = [
        (objects, podsets, fits, answer)
        for (objects, podsets, fits), answer in zip(cases, answers, strict=True)
        if answer.get("error") or answer.get("inactive") or fits != (answer.get("mode") == "Fit")
    ]
    fitting = sum(1 for _, _, fits in cases if fits)
    print(f"kueue-conformance (flavor assignment): {len(cases)} setups ({fitting} fit), "
          f"seed {FUZZ_SEED}, {len(differences)} differences")  # fmt: skip
    assert 0 < fitting < len(cases)
    assert differences[:3] == []
