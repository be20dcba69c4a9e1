"""The shortcuts of render's check below the JobSet give the verdict of the long way.

``render`` takes its verdict below each JobSet (compiler/expand/downstream.py) without
the controllers' Go round trips, on a few Jobs and Pods that stand for all
(:func:`representatives`), validating in place, with valid pod specs remembered by
:func:`~compiler.apiserver.workloads.pod.verdict_key`; only a refusal is worked out again
the long way (each object exactly as the controllers send it). These tests hold the
shortcuts to the long way, on the golden, written and random JobSets of tests/pods/cases.py
and on the Job and Pod validation fuzz (tests/pods/validate_fuzz.py) with its mutations
applied to golden pod templates.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Iterator
from typing import Any

from compiler.apiserver.workloads import pod as pod_validation
from compiler.apiserver.workloads import validate_job, validate_pod
from compiler.apiserver.workloads.names import dns1123_label
from compiler.expand import _crd_defaults, webhook_errors
from compiler.expand.downstream import _first_refused, representatives, workload_checks
from compiler.expand.jobset_webhook import default_jobset
from compiler.render.info import json_copy
from tests.pods import validate_fuzz
from tests.pods.cases import golden_jobsets, mutated_jobsets, random_jobsets

Obj = dict[str, Any]


def _other_names(obj: Any) -> int:
    """``obj`` changed, in place, where :func:`verdict_key` keeps less than the value:
    each non-empty env value, the object a secret, configMap or claim volume names (also
    in projected sources, which the key keeps), each valid hostname and subdomain; how
    many changed."""
    changed = 0
    if isinstance(obj, dict):
        for key in ("hostname", "subdomain"):
            value = obj.get(key)
            if isinstance(value, str) and value and not dns1123_label(value):
                obj[key] = "another-valid-label-0" if value != "another-valid-label-0" else "b"
                changed += 1
        for var in obj.get("env") or [] if isinstance(obj.get("env"), list) else []:
            if isinstance(var, dict) and isinstance(var.get("value"), str) and var["value"]:
                var["value"] = var["value"] + "-other"
                changed += 1
        for kind, key in (("secret", "secretName"), ("configMap", "name")):
            source = obj.get(kind)
            if isinstance(source, dict) and isinstance(source.get(key), str) and source[key]:
                source[key] = source[key] + "-other"
                changed += 1
        claim = obj.get("persistentVolumeClaim")
        if isinstance(claim, dict) and isinstance(claim.get("claimName"), str):
            claim["claimName"] = claim["claimName"] + "-other" if claim["claimName"] else ""
            changed += 1
        for value in obj.values():
            changed += _other_names(value)
    elif isinstance(obj, list):
        for value in obj:
            changed += _other_names(value)
    return changed


def _verdict(kind: str, obj: Obj) -> list[str] | str:
    validate = validate_job if kind == "Job" else validate_pod
    try:
        return [str(e) for e in validate(copy.deepcopy(obj))]
    except Exception as err:  # a decode error or panic is a verdict too
        return f"{type(err).__name__}: {err}"


def test_a_valid_spec_remembered_is_the_verdict_of_every_spec_it_stands_for() -> None:
    """A spec found valid stands for those with other env values, hostname or subdomain
    (valid ones): each fuzz case is judged after its variant primed the memory, as alone."""
    primed = 0
    for case in validate_fuzz.cases(1500, seed=2711):
        pod_validation.forget_valid_specs()
        alone = _verdict(case.kind, case.obj)
        variant = copy.deepcopy(case.obj)
        if not _other_names(variant):
            continue
        pod_validation.forget_valid_specs()
        if _verdict(case.kind, variant) == []:
            primed += 1
        assert _verdict(case.kind, case.obj) == alone, (case.number, case.families)
    assert primed > 200  # the memory was used, not only asked


def _pod(env: list[Obj], hostname: str = "demo-node-0-0") -> Obj:
    container = {"name": "c", "image": "busybox:1", "env": env}
    return {
        "metadata": {"name": "demo-node-0-0-abcde", "namespace": "default"},
        "spec": {"restartPolicy": "Never", "hostname": hostname, "containers": [container]},
    }


def test_what_the_checks_read_of_those_values_is_kept() -> None:
    """An empty env value beside ``valueFrom`` is valid, a non-empty one is not; an
    invalid hostname is refused after a valid one was remembered."""
    field = {"fieldRef": {"fieldPath": "metadata.name"}}
    pod_validation.forget_valid_specs()
    assert validate_pod(_pod([{"name": "A", "value": "", "valueFrom": field}])) == []
    [error] = validate_pod(_pod([{"name": "A", "value": "v", "valueFrom": field}]))
    assert "may not be specified when `value` is not empty" in str(error)
    assert validate_pod(_pod([])) == []
    [error] = validate_pod(_pod([], hostname="Demo_0"))
    assert str(error).startswith('spec.hostname: Invalid value: "Demo_0"')
    for secret in ("demo-ssh", ""):
        pod = _pod([])
        pod["spec"]["volumes"] = [{"name": "ssh", "secret": {"secretName": secret}}]
        errors = [str(e) for e in validate_pod(pod)]
        assert errors == ([] if secret else ["spec.volumes[0].secret.secretName: Required value"])


def test_representatives_are_the_first_index_of_each_length() -> None:
    assert representatives(0) == []
    assert representatives(10) == [0]
    assert representatives(11) == [0, 10]
    assert representatives(2, leader=True) == [0, 1]
    assert representatives(1001) == [0, 10, 100, 1000]


def _fuzzed_jobsets(count: int, seed: int) -> Iterator[tuple[str, Obj]]:
    """Golden JobSets with the validation fuzz's mutations applied to a replicated job's
    Job template (the families that apply to a Job)."""
    rng = random.Random(seed)
    golden = list(golden_jobsets())
    families = [f for f, (_, kinds) in validate_fuzz.FAMILIES.items() if "Job" in kinds]
    for number in range(count):
        name, jobset = rng.choice(golden)
        jobset = copy.deepcopy(jobset)
        rjobs = jobset["spec"]["replicatedJobs"]
        rjob = rng.choice(rjobs)
        rjob["replicas"] = rng.choice([1, 1, 2, 12])
        template = rjob.setdefault("template", {})
        job_spec = template.setdefault("spec", {})
        job_spec.setdefault("template", {}).setdefault("metadata", {}).setdefault("labels", {})
        job_spec["template"].setdefault("spec", {}).setdefault("containers", [])
        job = {"metadata": {"name": f"{name}-x"}, "spec": job_spec}
        chosen = rng.sample(families, rng.choice([1, 1, 2]))
        for family in chosen:
            validate_fuzz.FAMILIES[family][0](rng, job, "Job")
        template["spec"] = job["spec"]
        yield f"{name} #{number} {'+'.join(chosen)}", jobset


def _all_jobsets() -> Iterator[tuple[str, Obj]]:
    yield from golden_jobsets()
    yield from mutated_jobsets()
    yield from random_jobsets(27, 60)
    yield from _fuzzed_jobsets(300, 2712)


def _first(admitted: Obj, rjob: Obj, typed: bool) -> tuple[str, str] | None:
    replicas = rjob.get("replicas", 1)
    remember = pod_validation.verdict_key
    if typed:  # the long way: no memory at all
        pod_validation.verdict_key = lambda spec: None  # type: ignore[assignment]
    try:
        found = _first_refused(admitted, rjob, replicas, workload_checks(), typed=typed)
    except Exception as err:  # what the long way raises, render raises
        return ("raises", type(err).__name__)
    finally:
        pod_validation.verdict_key = remember
    if found is None:
        return None
    kind, obj, _ = found
    return (kind, str(obj["metadata"].get("name")))


def test_the_verdict_without_round_trips_is_the_verdict_with_them() -> None:
    """Untyped, in place, with the memory of valid specs kept across all cases (render's
    verdict) against each object exactly as sent, without that memory (the long way): the
    same first refusal."""
    pod_validation.forget_valid_specs()
    judged = refused = 0
    for name, jobset in _all_jobsets():
        stored = _crd_defaults(json_copy(jobset))
        if webhook_errors(stored):
            continue  # the JobSet never gets to the controller
        admitted = default_jobset(stored)
        for rjob in admitted["spec"].get("replicatedJobs") or []:
            if not isinstance(rjob.get("replicas", 1), int) or rjob.get("replicas", 1) < 1:
                continue
            shortcut = _first(admitted, rjob, False)
            exact = _first(admitted, rjob, True)
            assert shortcut == exact, (name, rjob.get("name"))
            judged += 1
            refused += exact is not None
    assert judged > 700 and refused > 100, (judged, refused)
