"""The live pod-depth fuzzer (tests/live/fuzz_pods.py): its signatures and case handling,
a few seeds through the real control plane with no difference, and a planted emulation
bug that it finds and writes as a reproduction."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conformance.cases import load_case
from tests.live import fuzz_pods
from tests.live.controlplane import ControlPlane

_EVENT = (
    'job "{job}" creation failed with error: Job.batch "{job}" is invalid: '
    "spec.template.spec.containers[0].resources.limits: Required value"
)


def _missing(missing: list[str], said: list[str]) -> str:
    return "\n".join(["recorded, not in trainc's output:", *missing, "trainc:", *said])


def test_shape_masks_names_values_and_indices() -> None:
    one = fuzz_pods.shape(
        'Pod fz-1-0/job-node-0-0-<random>: .spec.containers[1].env[0].value: expected "a", got "b"',
        ["job", "fz-1-0"],
    )
    two = fuzz_pods.shape(
        'Pod fz-9-3/llm-node-0-2-<random>: .spec.containers[0].env[2].value: expected "x", got "y"',
        ["llm", "fz-9-3"],
    )
    assert one == two == "Pod <object>: .spec.containers[].env[].value: expected"
    one, two = (
        fuzz_pods.shape(f"trainc rejects: /tmp/{d}/trainjob.yaml:4:3: TrainJob x/job", ["job"])
        for d in ("a1", "b2")
    )
    assert one == two == "trainc rejects: trainjob.yaml:N:N: TrainJob <object>"
    other = fuzz_pods.shape("Job a/b: .spec.x: missing (expected 1)", [])
    assert other == "Job <object>: .spec.x: missing"


def test_the_last_replica_standing_for_the_others_is_one_signature() -> None:
    said = [_EVENT.format(job="job-node-1") + " (the API server refuses the Job ...)"]
    same = _missing([_EVENT.format(job="job-node-0")], said)
    assert fuzz_pods.only_last_replica(same)
    other_job = _missing([_EVENT.format(job="job-launcher-0")], said)
    assert not fuzz_pods.only_last_replica(other_job)
    other_message = _missing([_EVENT.format(job="job-node-0").replace("Required", "Bad")], said)
    assert not fuzz_pods.only_last_replica(other_message)


def test_cases_are_drawn_again_from_the_seed_and_moved_to_their_namespace(
    tmp_path: Path,
) -> None:
    first = fuzz_pods.draw_cases(6, 11)
    assert [c.files for c in first] == [c.files for c in fuzz_pods.draw_cases(6, 11)]
    case = fuzz_pods.in_namespace(first[-1], "fz-11-5")
    fuzz_pods.write_case(tmp_path, case, "a test")
    loaded = load_case(tmp_path)
    assert loaded is not None and loaded.inputs
    for path in loaded.inputs:
        for doc in yaml.safe_load_all(path.read_text()):
            if doc and doc["kind"] in ("TrainJob", "TrainingRuntime"):
                assert doc["metadata"]["namespace"].startswith("fz-11-5")


@pytest.mark.parametrize(("seed", "count"), [(4, 5), (3, 6)])
def test_seeds_agree_with_the_live_controllers(
    pods_plane: ControlPlane, tmp_path: Path, seed: int, count: int
) -> None:
    fuzzer = fuzz_pods.fuzz(count, seed, tmp_path, plane=pods_plane, log=lambda _: None)
    assert fuzzer.examples == count
    assert fuzzer.known == {}, fuzzer.known


def test_a_planted_emulation_bug_is_found_and_written(
    pods_plane: ControlPlane, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from compiler.expand import expand

    def buggy(objects: list[dict[str, Any]], depth: str) -> list[dict[str, Any]]:
        assert depth == "pods"
        out = expand(objects, "pods")
        for obj in out:
            if obj.get("kind") == "Pod":
                obj["spec"]["hostname"] = "wrong"
        return out

    monkeypatch.setattr(fuzz_pods, "load_expand", lambda: buggy)
    lines: list[str] = []
    fuzzer = fuzz_pods.fuzz(2, 4, tmp_path, plane=pods_plane, reduce_seconds=0, log=lines.append)
    assert list(fuzzer.known) == ["pod depth: Pod <object>: .spec.hostname: expected"]
    (written,) = fuzzer.written.values()
    assert (written / "case.yaml").is_file() and (written / "diff.txt").is_file()
    assert any(line.startswith("DIFF") for line in lines)


def test_a_jobset_refused_after_the_trainers_other_objects_is_a_creation_failure() -> None:
    from tests.live.conformance_live import LiveAnswer, _jobset_refused

    def owned(kind: str, name: str, owner: str) -> dict[str, Any]:
        refs = [{"kind": "TrainJob", "name": owner}]
        return {
            "kind": kind,
            "metadata": {"name": name, "namespace": "ns", "ownerReferences": refs},
        }

    denied = (
        'TrainJob resources reconciliation failed: admission webhook "vjobset.kb.io" denied '
        'the request: JobSet.jobset.x-k8s.io "job" is invalid: ...'
    )
    failed = [{"trainJob": "ns/job", "events": [denied]}]
    config_map = owned("ConfigMap", "job-flux", "job")
    live = LiveAnswer(objects=[config_map, owned("JobSet", "b", "b")], creation_failures=failed)
    assert _jobset_refused(live)  # another TrainJob's JobSet was created
    # a created JobSet whose later update was denied: not a refused create
    live.objects.append(owned("JobSet", "job", "job"))
    assert not _jobset_refused(live)
    # the server-side apply's own refusal (a list-map key twice) after a PodGroup
    typed = "TrainJob resources reconciliation failed: failed to create typed patch object"
    applied = LiveAnswer(
        objects=[owned("PodGroup", "job", "job")],
        creation_failures=[{"trainJob": "ns/job", "events": [typed]}],
    )
    assert _jobset_refused(applied)
    assert not _jobset_refused(LiveAnswer(objects=[config_map]))


def _pod(index: str, topology: str = "cloud.google.com/gke-nodepool") -> dict[str, Any]:
    annotations = {
        "jobset.sigs.k8s.io/jobset-name": "job",
        "alpha.jobset.sigs.k8s.io/exclusive-topology": topology,
        "batch.kubernetes.io/job-completion-index": index,
    }
    spec = {"nodeSelector": {"pool": "cpu"}}
    return {"kind": "Pod", "metadata": {"annotations": annotations}, "spec": spec}


def test_followers_of_a_leader_on_the_fake_node_get_its_topology() -> None:
    from tests.live.workloads import FOLLOWER_WAITING, follow_the_leader, is_follower

    leader, follower = _pod("0"), _pod("1")
    assert not is_follower(leader) and is_follower(follower)
    out = follow_the_leader([leader, follower])
    assert out[0] == leader
    selector = {"pool": "cpu", "cloud.google.com/gke-nodepool": "trainc-fake-pool"}
    assert out[1]["spec"]["nodeSelector"] == selector
    assert follower["spec"]["nodeSelector"] == {"pool": "cpu"}  # not changed in place
    strategy = _pod("1")
    strategy["metadata"]["annotations"]["alpha.jobset.sigs.k8s.io/node-selector-strategy"] = "t"
    assert follow_the_leader([strategy]) == [strategy]
    # the pod webhook's refusals of a follower before its leader is bound: its own words
    refused = "leader pod not yet scheduled, not creating follower pod. this is an expected"
    assert any(f in refused for f in FOLLOWER_WAITING)


def test_the_jobset_controllers_refused_jobs_are_read_from_its_log(tmp_path: Path) -> None:
    # its events miss some: a note over 1024 bytes is not stored, and a later refusal of
    # the same JobSet only counts up the first event's series
    import json

    from tests.live.workloads import logged_creation_failures

    jobset = {"metadata": {"name": "job", "namespace": "fz", "uid": "u1"}}
    long_error = _EVENT.format(job="job-node-0") + ", " + "x" * 1024
    short_error = _EVENT.format(job="job-launcher-0")

    def line(error: str, uid: str) -> str:
        fields = {"controller": "jobset", "jobSetUID": uid, "error": error}
        return f"2026-11-28T04:52:43Z\tERROR\tcreating jobs\t{json.dumps(fields)}\n"

    log = tmp_path / "jobset.log"
    log.write_text("before the case\n" + line(long_error, "u1") + line(short_error, "u1") * 2)
    assert logged_creation_failures(log, 0, [jobset]) == [
        f"JobSet fz/job: JobCreationFailed: {short_error}",
        f"JobSet fz/job: JobCreationFailed: {long_error}",
    ]
    # another JobSet's is not this case's, nor one logged before the case began, nor a
    # create that lost a race with the controller's own, nor another error
    raced = 'job "job-node-0" creation failed with error: jobs.batch "x" already exists'
    log.write_text(line(long_error, "u2") + line(raced, "u1") + line("conflict", "u1"))
    assert logged_creation_failures(log, 0, [jobset]) == []
    log.write_text(line(long_error, "u1"))
    assert logged_creation_failures(log, log.stat().st_size, [jobset]) == []


def test_controllers_that_did_not_finish_are_inconclusive() -> None:
    from tests.live.conformance_live import LiveAnswer, Verdict
    from tests.live.workloads import Workloads

    live = LiveAnswer(workloads=Workloads(timed_out=["1/2 Jobs, 1/1 Services, 1/1 Pods"]))
    verdict = Verdict("c", "objects", True, True, None, 0.0, live, None, None)
    verdict.pods_identical = False
    verdict.pods_difference = "trainc refuses below the JobSet, the cluster did not ...\nshort"
    found = fuzz_pods.finding_of(verdict, fuzz_pods.draw_cases(1, 0)[0])
    assert found is not None and found.signature == fuzz_pods.TIMED_OUT
    live.workloads = Workloads(timed_out=["1/2 Jobs, ...; JobSet fz/c: Completed"])
    found = fuzz_pods.finding_of(verdict, fuzz_pods.draw_cases(1, 0)[0])
    assert found is not None and found.signature == fuzz_pods.JOBSET_FINISHED
    live.workloads = Workloads()  # finished: a difference
    found = fuzz_pods.finding_of(verdict, fuzz_pods.draw_cases(1, 0)[0])
    assert found is not None and found.signature.startswith("pod depth: trainc refuses")


def test_a_trainjob_the_controller_panics_on_agrees_with_trainc_refusing_it() -> None:
    from tests.live.conformance_live import LiveAnswer, Verdict

    live = LiveAnswer(trainjob_uids={"ns/a": "u"})
    verdict = Verdict("c", "objects", False, False, "the cluster admits it", 0.0, live, ["x"], None)
    panic = '{"level":"error","msg":"Observed a panic","controller":"trainjob_controller"}'
    assert fuzz_pods.nothing_but_a_panic(verdict, panic)
    assert not fuzz_pods.nothing_but_a_panic(verdict, "")
    live.objects.append({"kind": "JobSet"})
    assert not fuzz_pods.nothing_but_a_panic(verdict, panic)


def test_workloads_of_another_trainjob_are_not_compared_when_trainc_refuses_all() -> None:
    from tests.live.conformance_live import LiveAnswer, pods_difference
    from tests.live.workloads import Workloads

    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "b"}}
    live = LiveAnswer(workloads=Workloads(objects=[service]))
    assert pods_difference(live, None, lambda objects, depth: [], False) is not None
    live.creation_failures = [{"trainJob": "ns/a", "events": ["refused"]}]
    assert pods_difference(live, None, lambda objects, depth: [], False) is None


def test_a_refusal_does_not_end_the_wait_while_a_dependent_job_is_still_to_come() -> None:
    from tests.live.workloads import waiting_dependents

    rjobs = [
        {"name": "init", "replicas": 1},
        {"name": "node", "replicas": 1, "dependsOn": [{"name": "init", "status": "Complete"}]},
        {"name": "evaluator", "replicas": 1},
    ]
    jobset = {"metadata": {"uid": "js", "name": "js"}, "spec": {"replicatedJobs": rjobs}}

    def job(rjob: str) -> dict[str, Any]:
        labels = {"jobset.sigs.k8s.io/replicatedjob-name": rjob}
        return {"metadata": {"labels": labels, "ownerReferences": [{"uid": "js"}]}}

    # the evaluator refused, init created: node comes once init completes
    assert waiting_dependents([jobset], [job("init")])
    refused = 'JobSet ns/js: JobCreationFailed: job "js-node-0" creation failed with error: x'
    assert not waiting_dependents([jobset], [job("init")], [refused])
    assert not waiting_dependents([jobset], [])  # init itself not created yet
    assert not waiting_dependents([jobset], [job("init"), job("node")])
    jobset["spec"]["suspend"] = True  # a suspended JobSet creates no dependent Job
    assert not waiting_dependents([jobset], [job("init")])


def test_trainc_checking_the_dependent_jobs_of_a_suspended_jobset_is_one_signature() -> None:
    from tests.live.conformance_live import LiveAnswer, Verdict

    rjobs = [{"name": "init"}, {"name": "node", "dependsOn": [{"name": "init"}]}]
    jobset = {"metadata": {"name": "job"}, "spec": {"suspend": True, "replicatedJobs": rjobs}}
    live = LiveAnswer(stored_jobsets=[jobset])
    verdict = Verdict("c", "objects", True, True, None, 0.0, live, None, None)
    verdict.pods_identical = False
    verdict.pods_difference = (
        "trainc refuses below the JobSet, the cluster did not (no downstream.yaml):\n"
        + _EVENT.format(job="job-node-0")
    )
    assert fuzz_pods.only_suspended_dependents(verdict)
    found = fuzz_pods.finding_of(verdict, fuzz_pods.draw_cases(1, 0)[0])
    assert found is not None and found.signature == fuzz_pods.SUSPENDED_DEPENDENT
    verdict.pods_difference += "\n" + _EVENT.format(job="job-init-0")
    assert not fuzz_pods.only_suspended_dependents(verdict)  # init is created suspended
    jobset["spec"]["suspend"] = False
    verdict.pods_difference = verdict.pods_difference.rsplit("\n", 1)[0]
    assert not fuzz_pods.only_suspended_dependents(verdict)


def test_the_open_differences_are_known_by_their_signatures(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "diff.txt").write_text("signature: pod depth: x\ndifference: ...\n")
    (tmp_path / "last-replica-only").mkdir()
    found = fuzz_pods.open_differences(tmp_path)
    assert found == {
        "pod depth: x": tmp_path / "a",
        fuzz_pods.LAST_REPLICA: tmp_path / "last-replica-only",
    }
    # the committed ones: each folder's own signature at least
    committed = fuzz_pods.open_differences(fuzz_pods.OPEN)
    folders = [d for d in fuzz_pods.OPEN.iterdir() if (d / "diff.txt").is_file()]
    assert set(folders) <= set(committed.values())


def test_an_error_past_the_cut_of_the_trainers_event_is_a_harness_limit() -> None:
    from tests.live.conformance_live import LiveAnswer, Verdict

    cut = "TrainJob resources reconciliation failed: admission webhook ... [a, b, c ..."
    live = LiveAnswer(creation_failures=[{"trainJob": "ns/t", "events": [cut]}])
    verdict = Verdict("c", "creation-failure", True, True, None, 0.0, live, None, None)
    verdict.pods_identical = False
    verdict.pods_difference = (
        "trainc refuses what the cluster did not report:\nInternal error: spec will lead to x"
    )
    found = fuzz_pods.finding_of(verdict, fuzz_pods.draw_cases(1, 0)[0])
    assert found is not None and found.signature == fuzz_pods.EVENT_CUT
    live.creation_failures = [{"trainJob": "ns/t", "events": [cut.removesuffix(" ...")]}]
    assert not fuzz_pods.beyond_the_cut(verdict)  # whole: a difference
    live.creation_failures = [{"trainJob": "ns/t", "events": [cut]}]
    verdict.pods_difference += "\n" + _EVENT.format(job="t-node-0")
    assert not fuzz_pods.beyond_the_cut(verdict)  # a refused Job is never past the cut


def test_a_later_reconciles_failure_of_a_created_jobset_is_not_an_unsaid_message() -> None:
    from tests.live.conformance_live import LiveAnswer, Verdict

    immutable = (
        'TrainJob resources reconciliation failed: JobSet.jobset.x-k8s.io "b" is invalid: '
        'spec.volumeClaimPolicies: Invalid value: "array": Value is immutable'
    )
    refs = [{"kind": "TrainJob", "name": "b"}]
    jobset = {
        "kind": "JobSet",
        "metadata": {"name": "b", "namespace": "ns", "ownerReferences": refs},
    }
    live = LiveAnswer(
        objects=[jobset],
        rejections=[{"object": "TrainJob ns/a", "code": 403, "message": "denied: x"}],
        creation_failures=[{"trainJob": "ns/b", "events": [immutable]}],
    )
    verdict = Verdict("c", "errors", False, False, "x", 0.0, live, ["denied: x"], None)
    assert fuzz_pods.unsaid_findings(verdict) == []
    live.objects = []  # no JobSet: the create failed, and trainc must say why
    assert fuzz_pods.unsaid_findings(verdict) != []
