from __future__ import annotations

from typing import Any

import pytest

from compiler.expand.jobset_webhook import (
    NULL_BY_PATCH,
    default_jobset,
    denial,
    patch_may_add_null,
    patched,
    validate_create,
    validate_update,
)


def _jobset(name: str = "demo", completions: int = 2, **spec: Any) -> dict[str, Any]:
    node = {
        "name": "node",
        "groupName": "default",
        "replicas": 1,
        "template": {
            "spec": {
                "completions": completions,
                "parallelism": completions,
                "template": {"spec": {"containers": [{"name": "node", "image": "x:1"}]}},
            }
        },
    }
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": name, "namespace": "ns"},
        "spec": {"replicatedJobs": [node], **spec},
    }


def _texts(jobset: dict[str, Any]) -> list[str]:
    return [str(e) for e in validate_create(default_jobset(jobset))]


def test_defaults() -> None:
    spec = default_jobset(_jobset(failurePolicy={"rules": [{"action": "FailJobSet"}]}))["spec"]
    assert spec["successPolicy"] == {"operator": "All"}
    assert spec["startupPolicy"] == {"startupPolicyOrder": "AnyOrder"}
    assert spec["network"] == {"enableDNSHostnames": True, "publishNotReadyAddresses": True}
    assert spec["failurePolicy"]["rules"][0]["name"] == "failurePolicyRule0"
    job = spec["replicatedJobs"][0]["template"]["spec"]
    assert job["completionMode"] == "Indexed"
    assert job["template"]["spec"]["restartPolicy"] == "OnFailure"


def test_defaults_keep_what_is_set() -> None:
    jobset = _jobset(network={"enableDNSHostnames": False})
    jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["restartPolicy"] = (
        "Never"
    )
    spec = default_jobset(jobset)["spec"]
    assert spec["network"]["enableDNSHostnames"] is False
    assert (
        spec["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["restartPolicy"]
        == "Never"
    )


def test_pod_names_of_48_characters_pass_and_49_fail() -> None:
    # <name>-node-0-1-abcde: 15 characters added to the name
    assert _texts(_jobset("a" * 48)) == []
    assert _texts(_jobset("a" * 49)) == [
        f'spec.replicatedJobs[0].name: Invalid value: "{"a" * 49}-node-0": JobSet name is too '
        "long, pod names generated for this JobSet will exceed 63 characters"
    ]


def test_job_names_at_63_characters() -> None:
    texts = _texts(_jobset("a" * 63))
    assert [t.split(": ")[-1] for t in texts] == [
        "JobSet name is too long, job names generated for this JobSet will exceed 63 characters",
        "JobSet name is too long, pod names generated for this JobSet will exceed 63 characters",
    ]


def test_subdomain_and_references() -> None:
    jobset = _jobset(
        network={"subdomain": "Bad_Sub"},
        successPolicy={"operator": "All", "targetReplicatedJobs": ["ghost"]},
    )
    jobset["spec"]["replicatedJobs"][0]["dependsOn"] = [{"name": "node", "status": "Ready"}]
    texts = _texts(jobset)
    assert texts[0] == "<nil>: Internal error: DependsOn can't be set for the first ReplicatedJob"
    assert texts[1].startswith(
        'spec.network.subdomain: Invalid value: "Bad_Sub": a lowercase RFC 1123 subdomain'
    )
    assert texts[2].startswith('spec.network.subdomain: Invalid value: "Bad_Sub": a DNS-1035 label')
    assert texts[-1] == (
        "<nil>: Internal error: invalid replicatedJob name 'ghost' does not appear in "
        ".spec.ReplicatedJobs"
    )


def test_failure_policy_rules() -> None:
    rules = [
        {"name": "9x", "action": "FailJobSet", "onJobFailureReasons": ["Nope"]},
        {"name": "d", "action": "FailJobSet", "targetReplicatedJobs": ["ghost"]},
        {"name": "d", "action": "FailJobSet"},
    ]
    texts = _texts(_jobset(failurePolicy={"rules": rules}))
    assert any("invalid failure policy rule name '9x'" in t for t in texts)
    assert any("invalid job failure reason 'Nope'" in t for t in texts)
    assert any("'ghost' in failure policy does not appear" in t for t in texts)
    assert texts[-1].endswith("rules with indices [1 2] all have the same name 'd'")


def test_denial_aggregates_as_the_api_server() -> None:
    errors = validate_create(default_jobset(_jobset("a" * 63)))
    message = denial("a" * 63, errors)
    assert message.startswith(
        f'admission webhook "vjobset.kb.io" denied the request: JobSet.jobset.x-k8s.io "{"a" * 63}" '
        "is invalid: [spec.replicatedJobs[0].name: "
    )
    assert message.endswith("will exceed 63 characters]")
    single = denial("x", errors[:1])
    assert "is invalid: spec.replicatedJobs[0].name" in single and not single.endswith("]")


def test_update_keeps_replicated_jobs_unless_suspended() -> None:
    old = default_jobset(_jobset())
    new = default_jobset(_jobset(completions=3))
    assert [e.field for e in validate_update(old, new)] == ["spec.replicatedJobs"]
    changed = default_jobset(_jobset())
    pod = changed["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    pod["spec"]["nodeSelector"] = {"pool": "a"}
    assert validate_update(old, changed) != []
    changed["spec"]["suspend"] = True
    assert validate_update(old, changed) == []


def test_patch_keeps_what_only_the_round_trip_drops() -> None:
    raw = {"spec": {"env": [{"name": "A", "value": ""}], "cpu": "1000m"}}
    original = {"spec": {"env": [{"name": "A"}], "cpu": "1"}}
    defaulted = {"spec": {"env": [{"name": "A"}], "cpu": "1", "network": {"x": True}}}
    assert patched(raw, original, defaulted) == {
        "spec": {"env": [{"name": "A", "value": ""}], "cpu": "1", "network": {"x": True}}
    }
    assert patched(raw, original, original) == raw


def test_an_unmounted_claim_prints_the_replicated_jobs_as_go_marshals_them() -> None:
    # validateReplicatedJobsVolumeClaims: field.Invalid(spec.replicatedJobs, rJobs, ...)
    # prints the []ReplicatedJob with json.Marshal: fields in Go's declaration order
    jobset = _jobset(volumeClaimPolicies=[{"templates": [{"metadata": {"name": "data"}}]}])
    job = jobset["spec"]["replicatedJobs"][0]["template"]["spec"]
    job["template"]["spec"]["containers"][0] = {"image": "x:1", "command": ["t"], "name": "node"}
    jobset["spec"]["replicatedJobs"][0]["template"]["spec"] = dict(reversed(list(job.items())))
    (text,) = [t for t in _texts(jobset) if "matching volumeMount" in t]
    assert text.startswith('spec.replicatedJobs: Invalid value: [{"name":"node","groupName":')
    assert '"spec":{"parallelism":2,"completions":2,' in text
    assert '"containers":[{"name":"node","image":"x:1","command":["t"]' in text


def _nulls_the_patch_may_write() -> set[str]:
    """From the Go types and the JobSet schema: each optional, non-nullable field that
    Go encodes when absent (no omitempty; a struct always) as a value the schema
    refuses: null, or a struct holding such a null. Dotted, list items left out."""
    from compiler.apiserver.structural import Schema, _validate_full
    from compiler.expand import _jobset_schema
    from compiler.kube.roundtrip import go_roundtrip
    from compiler.upstream.typeinfo import TypeRef, typeinfo

    info = typeinfo()
    found: set[str] = set()
    seen: set[tuple[str, int]] = set()

    def element(t: TypeRef, s: Schema | None) -> tuple[TypeRef, Schema | None]:
        while s is not None and t.elem is not None and t.kind in ("pointer", "slice", "map"):
            s = s if t.kind == "pointer" else (s.items if t.kind == "slice" else s.additional)
            t = t.elem
        return t, s

    def walk(name: str, s: Schema | None, path: str) -> None:
        if s is None or (name, id(s)) in seen or info.get(name).kind != "struct":
            return
        seen.add((name, id(s)))
        for f in info.get(name).fields:
            child = s.properties.get(f.json)
            inner, inner_schema = element(f.type, child)
            if inner.kind == "struct" and inner.name:
                walk(inner.name, inner_schema, f"{path}.{f.json}")
            if child is None or f.json in s.required or f.omitzero:
                continue
            if f.omitempty and f.type.kind != "struct":
                continue
            if f.type.kind == "struct":
                zero: Any = go_roundtrip({}, str(f.type.name))
            elif f.type.kind in ("slice", "map", "pointer") and not child.has_default:
                zero = None
            else:
                continue  # "", 0, false: none refused where the schema has them optional
            errors: list[Any] = []
            _validate_full(child, zero, (), errors)
            if errors:
                found.add(f"{path}.{f.json}")

    walk("jobset.v1alpha2.JobSet", _jobset_schema(), "")
    return found


def test_the_nulls_the_patch_may_write_are_all_checked_for() -> None:
    # a new JobSet or Kubernetes release with another such field fails here
    listed = {"." + ".".join(str(p) for p in pattern if p != "*") for pattern in NULL_BY_PATCH}
    assert _nulls_the_patch_may_write() == listed


def _along(pattern: tuple[str | int, ...], last: Any) -> Any:
    """An object that has ``pattern``'s path ("*": a list of one), ``last`` at its end."""
    if not pattern:
        return last
    inner = _along(pattern[1:], last)
    return [inner] if pattern[0] == "*" else {pattern[0]: inner}


@pytest.mark.parametrize("pattern", NULL_BY_PATCH)
def test_patch_may_add_null_exactly_where_such_a_field_is_absent(
    pattern: tuple[str | int, ...],
) -> None:
    *parent, key = pattern
    assert patch_may_add_null(_along(tuple(parent), {"other": 1}))
    assert not patch_may_add_null(_along(tuple(parent), {key: {}}))
    assert not patch_may_add_null(_jobset())
