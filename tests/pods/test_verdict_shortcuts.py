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
import json
import random
from collections.abc import Callable, Iterator, Mapping
from typing import Any, cast

from compiler.apiserver.manifest import Manifest, SourceMap
from compiler.apiserver.workloads import pod as pod_validation
from compiler.apiserver.workloads import validate_job, validate_pod
from compiler.apiserver.workloads.names import dns1123_label
from compiler.expand import _crd_defaults, downstream, webhook_errors
from compiler.expand.downstream import (
    _first_refused,
    downstream_problems,
    forget_outcomes,
    outcome_key,
    representatives,
    workload_checks,
)
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


# --- the memory of JobSets below which nothing is refused (downstream.outcome_key) ---

_TRAINJOB = Manifest(
    {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "metadata": {"name": "t"}},
    SourceMap("trainjob.yaml", {}),
)
_NEWEST = "v2.3.0"
_ROTATE = str.maketrans(
    "abcdefghijklmnopqrstuvwxyz0123456789", "bcdefghijklmnopqrstuvwxyza1234567890"
)


def _problems(jobset: Obj) -> list[str]:
    """``render``'s problems below ``jobset`` (as the API server stores it)."""
    stored = _crd_defaults(json_copy(jobset))
    try:
        found = downstream_problems(stored, json_copy(jobset), _TRAINJOB, None, _NEWEST)
    except Exception as err:  # what the long way raises, render raises
        return [f"{type(err).__name__}: {err}"]
    return [repr(p) for p in found]


def _renamed(jobset: Obj, name: str) -> Obj:
    """``jobset`` with every occurrence of its name replaced by ``name`` (as another
    TrainJob of one template)."""
    old = jobset["metadata"]["name"]
    return cast(Obj, json.loads(json.dumps(jobset).replace(old, name)))


def _env_values(jobset: Obj, value: Callable[[Obj], str | None]) -> Obj:
    """``jobset`` with each env var's value ``value(var)`` (None: as it is)."""
    out = copy.deepcopy(jobset)
    for rjob in out["spec"].get("replicatedJobs") or []:
        spec = ((rjob.get("template") or {}).get("spec") or {}).get("template") or {}
        for key in ("containers", "initContainers"):
            for container in (spec.get("spec") or {}).get(key) or []:
                for var in container.get("env") or []:
                    if isinstance(var, dict) and (new := value(var)) is not None:
                        var["value"] = new
    return out


def _other_value(var: Obj) -> str | None:
    value = var.get("value")
    return value + "-other" if isinstance(value, str) and value else None


def _beside_value_from(value: str) -> Callable[[Obj], str | None]:
    return lambda var: value if var.get("valueFrom") is not None else None


def _in_namespace(jobset: Obj, namespace: str) -> Obj:
    out = copy.deepcopy(jobset)
    out["metadata"]["namespace"] = namespace
    return out


def _node_selector(jobset: Obj, value: str) -> Obj:
    """``jobset`` with a nodeSelector ``pool: value`` in each pod template."""
    out = copy.deepcopy(jobset)
    for rjob in out["spec"].get("replicatedJobs") or []:
        template = ((rjob.get("template") or {}).get("spec") or {}).get("template")
        if isinstance(template, dict) and isinstance(template.get("spec"), dict):
            template["spec"]["nodeSelector"] = {
                **(template["spec"].get("nodeSelector") or {}),
                "pool": value,
            }
    return out


def _family(name: str, jobset: Obj) -> Iterator[tuple[str, Obj]]:
    """``jobset`` and other JobSets of its template: where the key keeps less than the
    value (another name of the same shape, other env values), and where a check reads
    more than a key may forget (a name one character longer or shorter, or of another
    shape; an env value empty or not beside ``valueFrom``; a volume named
    ``kube-api-access-...``); in other namespaces (of the same shape, longer, too long,
    invalid); with nodeSelector values valid and not."""
    old = str(jobset["metadata"]["name"])
    yield name, jobset
    yield f"{name} same shape", _renamed(jobset, old.translate(_ROTATE))
    yield f"{name} env values", _env_values(jobset, _other_value)
    yield f"{name} longer", _renamed(jobset, old + "x")
    if len(old) > 1:
        yield f"{name} shorter", _renamed(jobset, old[:-1])
    yield f"{name} digit first", _renamed(jobset, "0" + old[1:])
    yield f"{name} upper case", _renamed(jobset, old[:1].upper() + old[1:])
    if len(old) > 3:
        yield f"{name} hyphens", _renamed(jobset, old[:-2] + "--")
    yield f"{name} empty beside valueFrom", _env_values(jobset, _beside_value_from(""))
    yield f"{name} value beside valueFrom", _env_values(jobset, _beside_value_from("v"))
    namespace = str(jobset["metadata"].get("namespace") or "default")
    for label, other in (
        ("same shape", namespace.translate(_ROTATE)),
        ("longer", namespace + "x"),
        ("of 64 characters", "n" * 64),
        ("ending in -", namespace + "-"),
    ):
        yield f"{name} namespace {label}", _in_namespace(jobset, other)
    for label, value in (("gpu-a", "gpu-a"), ("gpu-b", "gpu-b"), ("bad", "-bad-")):
        yield f"{name} nodeSelector {label}", _node_selector(jobset, value)
    token = _renamed(jobset, old.translate(_ROTATE))
    for rjob in token["spec"].get("replicatedJobs") or []:
        spec = rjob["template"]["spec"]["template"].setdefault("spec", {})
        volumes = spec.get("volumes")
        if isinstance(volumes, list) and volumes and isinstance(volumes[0], dict):
            volumes[0]["name"] = "kube-api-access-" + str(volumes[0].get("name"))
            yield f"{name} token volume", token
            break


def _memo_jobsets() -> Iterator[tuple[str, Obj]]:
    for name, jobset in _all_jobsets():
        meta = jobset.get("metadata")
        if isinstance(meta, dict) and isinstance(meta.get("name"), str) and meta["name"]:
            yield name, jobset


Key = Callable[[Mapping[str, Any], Mapping[str, Any]], Any]


def _counterexample(key: Key) -> str | None:
    """Two JobSets of one template (:func:`_family`) with one ``key`` of which one is
    refused below and the other not (the memory would answer one with the other's
    verdict); None if there are none."""
    checks = workload_checks()
    for name, jobset in _memo_jobsets():
        refused: dict[Any, tuple[str, bool]] = {}
        for label, member in _family(name, jobset):
            found = key(_crd_defaults(json_copy(member)), checks)
            if found is None:
                continue
            forget_outcomes()  # the long way
            verdict = bool(_problems(member))
            first = refused.setdefault(found, (label, verdict))
            if first[1] != verdict:
                return f"{first[0]} / {label}"
    return None


def test_two_jobsets_with_one_key_get_one_verdict() -> None:
    """The key keeps every input a check reads: no JobSet and variant of it (renamed,
    other env values, a token volume) share a key and differ in being refused."""
    assert _counterexample(outcome_key) is None


def _weakened(forget: str) -> Key:
    """:func:`outcome_key` that forgets an input a check reads: the name's shape, the
    namespace's, whether an env value is empty, or the nodeSelector values' shape."""

    def key(stored: Mapping[str, Any], checks: Mapping[str, Any]) -> Any:
        if forget == "env":
            stored = _env_values(cast(Obj, stored), lambda var: "x" if "value" in var else None)
        if forget == "nodeSelector":
            stored = _node_selector(cast(Obj, stored), "x")
        found = outcome_key(stored, checks)
        if found is None:
            return None
        data, shapes, checked = found
        if forget == "name shape":
            return (data, shapes[1:], checked)
        if forget == "namespace shape":
            return (data, shapes[:1], checked)
        return found

    return key


def test_the_key_check_fails_on_a_key_that_forgets_an_input() -> None:
    """:func:`test_two_jobsets_with_one_key_get_one_verdict` can fail: each weakened key
    has a counterexample among the families."""
    for forget in ("name shape", "namespace shape", "env", "nodeSelector"):
        assert _counterexample(_weakened(forget)) is not None, forget


def test_the_memory_gives_the_verdict_of_the_long_way() -> None:
    """Each JobSet's problems with the memory primed by another of its template
    (another name of the same shape, other env values) are those worked out with no
    memory."""
    remembered = judged = 0
    checks = workload_checks()
    for name, jobset in _memo_jobsets():
        forget_outcomes()
        alone = _problems(jobset)
        key = outcome_key(_crd_defaults(json_copy(jobset)), checks)
        for label, other in list(_family(name, jobset))[1:3]:
            forget_outcomes()
            _problems(other)
            remembered += key is not None and key in downstream._NOTHING_REFUSED
            assert _problems(jobset) == alone, label
            judged += 1
    forget_outcomes()
    assert judged > 1000 and remembered > 300, (judged, remembered)


def _with_label_keys(jobset: Obj) -> Obj:
    """``jobset`` with, in each pod template, a label whose value holds the name and a pod
    anti-affinity term and a spread constraint whose ``matchLabelKeys`` name it and the
    controllers' name labels: the Pod strategy merges those values into the selectors."""
    out = copy.deepcopy(jobset)
    name = str(out["metadata"]["name"])
    keys = ["app", "jobset.sigs.k8s.io/jobset-name", "batch.kubernetes.io/job-name"]
    for rjob in out["spec"].get("replicatedJobs") or []:
        template = rjob["template"]["spec"]["template"]
        template.setdefault("metadata", {}).setdefault("labels", {})["app"] = f"{name}-app"
        spec = template.setdefault("spec", {})
        term = {"labelSelector": {}, "topologyKey": "zone", "matchLabelKeys": keys}
        term["mismatchLabelKeys"] = ["jobset.sigs.k8s.io/replicatedjob-name"]
        spec["affinity"] = {
            "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
        }
        spread = {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}
        spec["topologySpreadConstraints"] = [
            {**spread, "labelSelector": {}, "matchLabelKeys": keys}
        ]
    return out


def test_label_values_merged_by_match_label_keys_are_keyed() -> None:
    """The selectors the Pod strategy fills from the Pod's labels (names, a template
    label holding the name) are judged as the key says: no two of a family share a key
    and differ in being refused, and some are remembered."""
    checks = workload_checks()
    remembered = 0
    for name, jobset in list(golden_jobsets())[:8]:
        refused: dict[Any, tuple[str, bool]] = {}
        for label, member in _family(name, _with_label_keys(jobset)):
            found = outcome_key(_crd_defaults(json_copy(member)), checks)
            if found is None:
                continue
            forget_outcomes()
            verdict = bool(_problems(member))
            first = refused.setdefault(found, (label, verdict))
            assert first[1] == verdict, f"{first[0]} / {label}"
            remembered += label != first[0]
    forget_outcomes()
    assert remembered > 8
