"""ValidatingAdmissionPolicy offline: every feature, allowed and denied, from YAML fixtures.

The objects (tests/fixtures/vap/objects.yaml): TrainJob ``small`` (team-a, 2 nodes, 4
GPUs each, 64Gi, image ``registry.example.com/train:v1.2.3``, label ``tier: gold``),
TrainJob ``huge`` (team-b, 64 nodes, 8 GPUs each, 1.5Ti, ``docker.io/...:latest``) and
the cluster-scoped ClusterTrainingRuntime ``torch-distributed`` (``tier: gold``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import compiler.policy.vap as vap
from compiler.apiserver.manifest import Manifest, SourceMap
from compiler.errors import Finding, InputError, Severity, SourceLocation
from compiler.load.loader import load_texts
from compiler.policy.objects import PolicyObject
from compiler.policy.vap import PolicySet, resource_of

FIXTURES = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "vap"
NAMESPACES = {
    "team-a": {"kubernetes.io/metadata.name": "team-a"},
    "team-b": {"kubernetes.io/metadata.name": "team-b", "env": "prod"},
}


def _load(*names: str) -> tuple[PolicySet, list[PolicyObject]]:
    paths = [FIXTURES / "objects.yaml", *(FIXTURES / n for n in names)]
    loaded = load_texts([(p.name, p.read_text()) for p in paths])
    return PolicySet.from_manifests(loaded.others), [
        PolicyObject(m.data, m) for m in loaded.objects
    ]


def _run(*names: str) -> list[Finding]:
    policies, objects = _load(*names)
    return policies.evaluate(objects, NAMESPACES)


def _hits(findings: list[Finding]) -> set[tuple[str, str]]:
    """(object name, policy) of every finding."""
    return {(f.object.name if f.object else "", f.rule.removeprefix("vap/")) for f in findings}


def _only(findings: list[Finding], obj: str, policy: str) -> list[Finding]:
    return [
        f
        for f in findings
        if f.object is not None and f.object.name == obj and f.rule == f"vap/{policy}"
    ]


# --- matching ---------------------------------------------------------------------------------


def test_match_constraints() -> None:
    hits = _hits(_run("match.yaml"))
    expected = {
        # wildcards match everything
        ("small", "all-wildcards"),
        ("huge", "all-wildcards"),
        ("torch-distributed", "all-wildcards"),
        # "trainjobs/*" matches the main resource too; "trainjobs/status" does not
        ("small", "subresource-star"),
        ("huge", "subresource-star"),
        # scope
        ("torch-distributed", "cluster-scope"),
        ("small", "namespaced-scope"),
        ("huge", "namespaced-scope"),
        # excludeResourceRules (a kind, and a name) and resourceNames
        ("huge", "exclude-runtimes"),
        ("huge", "resource-names"),
        # namespaceSelector: team-b is env=prod; a cluster-scoped object is not filtered
        ("huge", "prod-namespaces"),
        ("torch-distributed", "prod-namespaces"),
        # objectSelector
        ("small", "gold-objects"),
        ("torch-distributed", "gold-objects"),
        ("huge", "not-gold"),
    }
    assert hits == expected


def test_operations_other_than_create_never_match() -> None:
    assert not any(p == "update-only" for _, p in _hits(_run("match.yaml")))


def test_binding_match_resources_narrow_the_policy() -> None:
    findings = _run("binding-match.yaml")
    by_binding = {(f.object.name if f.object else "", dict(f.details)["binding"]) for f in findings}
    assert by_binding == {
        ("small", "team-a-only"),  # team-a and a TrainJob
        ("small", "unbounded"),
        ("huge", "unbounded"),
        ("torch-distributed", "unbounded"),
    }


def test_namespace_absent_from_the_map_has_no_labels() -> None:
    policies, objects = _load("binding-match.yaml")
    findings = policies.evaluate(objects, {})
    assert not [f for f in findings if dict(f.details)["binding"] == "team-a-only"]


def test_output_objects_and_their_location() -> None:
    policies, objects = _load("match.yaml")
    job = next(o for o in objects if o.data["metadata"]["name"] == "huge")
    jobset = {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": "huge", "namespace": "team-b"},
        "spec": {"replicatedJobs": [{"name": "node", "replicas": 64}]},
    }
    allowed = json.loads(json.dumps(jobset))
    allowed["metadata"]["name"] = "ok"
    allowed["spec"]["replicatedJobs"][0]["replicas"] = 1
    outputs = [
        PolicyObject(jobset, job.origin, stage="output"),
        PolicyObject(allowed, job.origin, stage="output"),
    ]
    findings = _only(policies.evaluate(outputs, NAMESPACES), "huge", "jobsets")
    assert len(findings) == 1
    finding = findings[0]
    assert finding.stage == "output"
    assert finding.field_path == "spec.replicatedJobs"
    assert finding.location == job.origin.locate(())  # no locator: the TrainJob
    assert finding.details[-1] == ("renderedFrom", "TrainJob team-b/huge")
    assert not _only(policies.evaluate(outputs, NAMESPACES), "ok", "jobsets")
    # with a locator, the input place of the field, asked with the fieldPath as a path
    asked: list[tuple[str, tuple[str | int, ...]]] = []
    there = SourceLocation("runtime.yaml", 40, 9)

    def locate(output: PolicyObject, path: tuple[str | int, ...]) -> SourceLocation:
        asked.append((output.data["metadata"]["name"], path))
        return there

    [located] = _only(policies.evaluate(outputs, NAMESPACES, locate), "huge", "jobsets")
    assert located.location == there
    assert asked == [("huge", ("spec", "replicatedJobs"))]
    assert located._replace(location=finding.location) == finding


def test_output_findings_end_with_the_trainjob_after_their_annotations() -> None:
    """An output's finding has the details the same object has as an input (reason,
    binding, actions, failure annotation, audit annotations), then ``renderedFrom``."""
    policies, objects = _load("actions.yaml")
    outputs = [
        PolicyObject(o.data, o.origin, stage="output")
        for o in objects
        if o.data["metadata"]["name"] in ("huge", "small")
    ]
    inputs = [o for o in objects if o.data["metadata"]["name"] in ("huge", "small")]
    as_inputs = _only(policies.evaluate(inputs, NAMESPACES), "huge", "latest-tag")
    as_inputs += _only(policies.evaluate(inputs, NAMESPACES), "small", "latest-tag")
    as_outputs = _only(policies.evaluate(outputs, NAMESPACES), "huge", "latest-tag")
    as_outputs += _only(policies.evaluate(outputs, NAMESPACES), "small", "latest-tag")
    assert len(as_outputs) == len(as_inputs) == 4  # three bindings on huge, audit-only on small
    for found, expected in zip(as_outputs, as_inputs, strict=True):
        name = found.object.name if found.object else ""
        rendered = ("renderedFrom", f"TrainJob {found.object.namespace}/{name}")  # type: ignore[union-attr]
        assert found.details == (*expected.details, rendered)
        assert found._replace(details=(), stage="input") == expected._replace(details=())
    assert [k for k, _ in as_outputs[-1].details] == ["latest-tag/image", "renderedFrom"]


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (
            {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob"},
            ("trainer.kubeflow.org", "v1alpha1", "trainjobs", True),
        ),
        (
            {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "ClusterTrainingRuntime"},
            ("trainer.kubeflow.org", "v1alpha1", "clustertrainingruntimes", False),
        ),
        (
            {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet"},
            ("jobset.x-k8s.io", "v1alpha2", "jobsets", True),
        ),
        (
            {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup"},
            ("scheduling.x-k8s.io", "v1alpha1", "podgroups", True),
        ),
        (
            {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup"},
            ("scheduling.volcano.sh", "v1beta1", "podgroups", True),
        ),
        ({"apiVersion": "v1", "kind": "ConfigMap"}, ("", "v1", "configmaps", True)),
        ({"apiVersion": "v1", "kind": "Secret"}, ("", "v1", "secrets", True)),
    ],
)
def test_resources(data: dict[str, str], expected: tuple[str, str, str, bool]) -> None:
    resource = resource_of(data)
    assert (resource.group, resource.version, resource.resource, resource.namespaced) == expected


# --- the validation and its message ------------------------------------------------------------


def test_deny_with_message_expression_reason_and_field_path() -> None:
    findings = _run("basic-policy.yaml")
    assert _hits(findings) == {("huge", "max-nodes")}
    finding = findings[0]
    assert finding.severity is Severity.ERROR
    assert finding.message == (
        "ValidatingAdmissionPolicy 'max-nodes' with binding 'max-nodes-binding' denied request:"
        " numNodes 64 exceeds 16"
    )
    assert finding.field_path == "spec.trainer.numNodes"
    assert finding.location is not None
    assert finding.location.file == "objects.yaml" and finding.location.line == 28
    assert dict(finding.details)["reason"] == "Forbidden"
    assert finding.stage == "input"


def test_message_fallbacks() -> None:
    findings = _only(_run("actions.yaml"), "huge", "no-message")
    # messageExpression gave "", no message: the trimmed expression
    assert [f.message.split("denied request: ")[1] for f in findings] == [
        "failed expression: object.spec.trainer.numNodes < 10"
    ]
    assert dict(findings[0].details)["reason"] == "Invalid"


# --- validationActions and failurePolicy ------------------------------------------------------


def test_validation_actions() -> None:
    findings = _only(_run("actions.yaml"), "huge", "latest-tag")
    by_binding = {dict(f.details)["binding"]: f for f in findings}
    assert set(by_binding) == {"warn", "audit", "deny-audit"}
    warn, audit, both = by_binding["warn"], by_binding["audit"], by_binding["deny-audit"]
    assert warn.severity is Severity.WARNING
    assert warn.message == (
        "Validation failed for ValidatingAdmissionPolicy 'latest-tag' with binding 'warn':"
        " images must be pinned"
    )
    assert audit.severity is Severity.AUDIT
    failure = json.loads(
        dict(audit.details)["validation.policy.admission.k8s.io/validation_failure"]
    )
    assert failure == [
        {
            "message": "images must be pinned",
            "policy": "latest-tag",
            "binding": "audit",
            "expressionIndex": 0,
            "validationActions": ["Audit"],
        }
    ]
    # one decision with Deny and Audit: one finding, the strongest severity, both effects
    assert both.severity is Severity.ERROR
    assert both.message.endswith("denied request: images must be pinned")
    assert dict(both.details)["validationActions"] == "Deny,Audit"
    assert "validation.policy.admission.k8s.io/validation_failure" in dict(both.details)
    assert not _only(_run("actions.yaml"), "small", "runtime-error-fail")


def test_audit_annotations() -> None:
    findings = _run("actions.yaml")
    small = _only(findings, "small", "latest-tag")
    assert len(small) == 1 and small[0].severity is Severity.AUDIT
    assert dict(small[0].details) == {"latest-tag/image": "registry.example.com/train:v1.2.3"}
    # the null-valued annotation is not published; failing findings carry the annotation
    for finding in _only(findings, "huge", "latest-tag"):
        assert dict(finding.details)["latest-tag/image"] == "docker.io/library/train:latest"
        assert "latest-tag/nothing" not in dict(finding.details)


def test_failure_policy_on_runtime_errors() -> None:
    findings = _run("actions.yaml")
    fail = _only(findings, "huge", "runtime-error-fail")
    assert [f.message for f in fail] == [
        "ValidatingAdmissionPolicy 'runtime-error-fail' with binding 'runtime-error-fail'"
        " denied request: expression 'object.metadata.name == 'small' ||"
        " object.spec.missing.value > 0' resulted in error: no such key: missing"
    ]
    assert not _only(findings, "huge", "runtime-error-ignore")


# --- params ------------------------------------------------------------------------------------


def test_params_by_name_in_the_object_namespace() -> None:
    findings = _run("params.yaml")
    by_name = [f for f in findings if dict(f.details)["binding"] == "by-name"]
    assert [(f.object.name if f.object else "", f.message.split(": ", 1)[1]) for f in by_name] == [
        ("huge", "numNodes must be at most 32 (limits)")
    ]


def test_params_by_selector_evaluate_once_per_param() -> None:
    findings = _run("params.yaml")
    selected = [f for f in findings if dict(f.details)["binding"] == "by-selector"]
    # strict (maxNodes 1) fails both jobs; lenient passes; the unlabelled one is not selected
    assert sorted((f.object.name if f.object else "", f.severity) for f in selected) == [
        ("huge", Severity.WARNING),
        ("small", Severity.WARNING),
    ]
    assert all(f.message.endswith("numNodes must be at most 1 (strict)") for f in selected)


def test_params_not_found() -> None:
    findings = _run("params.yaml")
    missing = [f for f in findings if dict(f.details)["binding"] == "missing-deny"]
    assert {f.object.name if f.object else "" for f in missing} == {"small", "huge"}
    # a configuration error denies whatever the binding's actions (here Audit)
    assert all(f.severity is Severity.ERROR for f in missing)
    assert missing[0].message == (
        "ValidatingAdmissionPolicy 'node-limit' with binding 'missing-deny' denied request:"
        " failed to configure binding: no params found for policy binding with `Deny`"
        " parameterNotFoundAction"
    )
    assert not [f for f in findings if dict(f.details)["binding"] == "missing-allow"]


def test_cluster_scoped_param_kind() -> None:
    findings = _run("params.yaml")
    registries = [f for f in findings if dict(f.details)["binding"] == "registries"]
    assert [
        (f.object.name if f.object else "", f.message.split(": ", 1)[1]) for f in registries
    ] == [("huge", "image registry not in approved")]
    bad = [f for f in findings if dict(f.details)["binding"] == "registries-bad-namespace"]
    assert {f.object.name if f.object else "" for f in bad} == {"small", "huge"}
    assert bad[0].message.endswith(
        "failed to configure binding: paramRef.namespace must not be provided for a"
        " cluster-scoped `paramKind`"
    )


# --- matchConditions and variables --------------------------------------------------------------


def test_match_conditions_and_variables() -> None:
    findings = _run("conditions-variables.yaml")
    budget = [f for f in findings if f.rule == "vap/gpu-budget"]
    # small is exempt by a matchCondition; the unused broken variable is never evaluated
    assert [(f.object.name if f.object else "", f.message.split(": ", 1)[1]) for f in budget] == [
        ("huge", "requests 512 GPUs, the budget is 64")
    ]


def test_a_failing_variable_surfaces_where_it_is_used() -> None:
    findings = [
        f for f in _run("conditions-variables.yaml") if f.rule == "vap/uses-broken-variable"
    ]
    assert {f.object.name if f.object else "" for f in findings} == {"small", "huge"}
    assert findings[0].message.endswith(
        "expression 'variables.broken == 1' resulted in error: composited variable \"broken\""
        " fails to evaluate: no such key: noSuchField"
    )


def test_match_condition_errors_follow_the_failure_policy() -> None:
    findings = _run("conditions-variables.yaml")
    fail = [f for f in findings if f.rule == "vap/condition-error-fail"]
    assert [
        (f.object.name if f.object else "", f.message.split("denied request: ")[1]) for f in fail
    ] == [
        (
            "torch-distributed",
            "expression 'object.spec.noSuchField == 1' resulted in error: no such key: noSuchField",
        )
    ]
    assert not [f for f in findings if f.rule == "vap/condition-error-ignore"]


# --- request, namespaceObject, oldObject -------------------------------------------------------


def test_request_and_namespace_object() -> None:
    findings = _run("request.yaml")
    # every shape check passes; only the env=prod namespace rule denies (team-b)
    assert [(f.object.name if f.object else "", f.message.split(": ", 1)[1]) for f in findings] == [
        ("huge", "no jobs in team-b, it is labelled env=prod")
    ]


# --- the Kubernetes libraries in policies -------------------------------------------------------


def test_library_policies() -> None:
    findings = _run("libraries.yaml")
    messages = sorted(
        (f.object.name if f.object else "", f.message.split("denied request: ")[1])
        for f in findings
    )
    assert messages == [
        ("huge", "memory must be a whole number of bytes Go can hold as an integer"),
        ("huge", "memory per node must be at most 1Ti, is 1.649267441664e+12"),
        ("huge", "registry docker.io is not allowed"),
        ("huge", "tag latest is not a release above 1.0.0"),
    ]


# --- policies trainc rejects ---------------------------------------------------------------------


def _problems(name: str) -> list[str]:
    path = FIXTURES / "invalid" / name
    loaded = load_texts([(path.name, path.read_text())])
    with pytest.raises(InputError) as raised:
        PolicySet.from_manifests(loaded.others)
    return [str(p) for p in raised.value.problems]


def test_compile_errors_point_at_the_expression() -> None:
    problems = _problems("compile-error.yaml")
    assert len(problems) == 5
    assert problems[0].startswith(
        "compile-error.yaml:9:7: ValidatingAdmissionPolicy broken:"
        " spec.validations[0].expression: compilation failed: ERROR: <input>:1:32: Syntax error"
    )
    assert problems[1] == (
        "compile-error.yaml:10:7: ValidatingAdmissionPolicy broken:"
        " spec.validations[1].expression: must evaluate to bool but got dyn"
    )
    assert (
        "found no matching overload for 'isLessThan' applied to '(kubernetes.Quantity, int)'"
        in problems[2]
    )
    assert problems[3].endswith(
        "spec.validations[2].messageExpression: must evaluate to string but got int"
    )
    assert "undefined field 'undefined'" in problems[4]


def test_authorizer_is_not_supported() -> None:
    (problem,) = _problems("authorizer.yaml")
    assert problem.startswith(
        "authorizer.yaml:9:7: ValidatingAdmissionPolicy needs-authz:"
        " spec.validations[0].expression: authorizer is not supported offline"
    )


def test_structure_errors() -> None:
    problems = _problems("structure.yaml")
    assert any("spec.matchConstraints: Required value" in p for p in problems)
    assert any('validationActions[2]: Unsupported value: "Explode"' in p for p in problems)
    assert any("must not contain both Deny and Warn" in p for p in problems)
    assert any(
        "namespaceSelector.matchExpressions[0].values: must be specified" in p for p in problems
    )


def test_no_policies_no_findings() -> None:
    policies, objects = _load()
    assert policies.evaluate(objects, NAMESPACES) == []


def test_programs_are_compiled_once() -> None:
    policies, objects = _load("basic-policy.yaml")
    program = policies.policies[0].validations[0].expr.program
    policies.evaluate(objects, NAMESPACES)
    policies.evaluate(objects, NAMESPACES)
    assert policies.policies[0].validations[0].expr.program is program


# --- the inlined and fused programs give what the one-expression-at-a-time path gives ----

_FIXTURE_POLICIES = [
    "actions.yaml",
    "basic-policy.yaml",
    "binding-match.yaml",
    "conditions-variables.yaml",
    "libraries.yaml",
    "match.yaml",
    "params.yaml",
    "request.yaml",
]


@pytest.mark.parametrize("name", _FIXTURE_POLICIES)
def test_inlined_evaluation_equals_one_expression_at_a_time(name: str) -> None:
    """Variables computed inside each program and validations fused into one program
    (one activation per object, params in slots) give the same findings, texts and
    order as binding each variable's value into a new activation (the slow path, kept
    for errors)."""
    fast, objects = _load(name)
    slow, _ = _load(name)
    for policy in slow.policies:
        policy.inlined = False
    expected = slow.evaluate(objects, NAMESPACES)
    assert expected  # every fixture denies something
    assert fast.evaluate(objects, NAMESPACES) == expected


def test_shipped_policies_take_the_fused_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each shipped policy evaluates in one program per object, never the slow way."""
    root = Path(__file__).resolve().parents[2]
    paths = sorted(root.glob("policies/*/policy.yaml")) + sorted(
        root.glob("policies/*/params.yaml")
    )
    loaded = load_texts([(p.name, p.read_text()) for p in [FIXTURES / "objects.yaml", *paths]])
    policies = PolicySet.from_manifests(loaded.others)
    assert len(policies.policies) == 8
    assert all(p.fused for p in policies.policies)

    def slow(*_: object) -> None:
        raise AssertionError("a shipped policy was evaluated one expression at a time")

    monkeypatch.setattr(vap, "_evaluate_in", slow)
    objects = [PolicyObject(m.data, m) for m in loaded.objects]
    findings = policies.evaluate(objects, NAMESPACES)
    # the TrainJobs lack the team and cost-center labels
    assert {
        f.object.name for f in findings if f.rule == "vap/trainc-required-labels" and f.object
    } == {"small", "huge"}


def test_variables_whose_plain_values_differ_are_not_inlined() -> None:
    """A uint (or timestamp, optional...) variable would not read back the same from its
    plain value, which the slow path binds: such a policy keeps the slow path."""
    text = """\
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: unsigned}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: ["*"], apiVersions: ["*"], operations: ["*"], resources: ["*"]}]
  variables:
    - {name: count, expression: "uint(1)"}
  validations:
    - {expression: "type(variables.count) == uint"}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: unsigned}
spec: {policyName: unsigned, validationActions: [Deny]}
"""
    objects_path = FIXTURES / "objects.yaml"
    loaded = load_texts([(objects_path.name, objects_path.read_text()), ("p.yaml", text)])
    policies = PolicySet.from_manifests(loaded.others)
    assert not policies.policies[0].inlined
    assert policies.policies[0].validations[0].expr.lets is None


def _configmap_policy(name: str, body: str) -> str:
    return f"""\
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {{name: {name}}}
spec:
  matchConstraints:
    resourceRules:
      - {{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}}
{body}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {{name: {name}}}
spec: {{policyName: {name}, validationActions: [Deny]}}
"""


def test_a_policy_after_one_whose_comprehension_stopped_early() -> None:
    """Two policies on one object: the first one's nested ``exists`` stops at the key
    ``ac``; the second one's variables still read their own values. The sizes of
    ``joined``/``team-a``/its data are 6, 6 and 1, so only ``name size`` denies there;
    the Go evaluator of k8s.io/apiserver (``tests/bench/vapbench``) counts the same
    three denials. (Evaluated as one program, the engine read ``joined``'s variables
    from the first policy's comprehension and denied ``sizes 6 6 1`` as well.)"""
    early = _configmap_policy(
        "early-exit",
        """\
  validations:
    - expression: "!object.data.exists(k, ['a', 'b'].exists(x, ['c', 'd'].exists(y, k == x + y)))"
      message: a key joins two letters""",
    )
    sizes = _configmap_policy(
        "sizes",
        """\
  variables:
    - {name: first, expression: "size(object.metadata.name)"}
    - {name: second, expression: "size(object.metadata.namespace)"}
    - {name: third, expression: "size(object.data)"}
  validations:
    - expression: "variables.first + variables.second + variables.third < 100"
      messageExpression: >-
        'sizes ' + string(variables.first) + ' ' + string(variables.second) + ' '
        + string(variables.third)
    - expression: "variables.first == 3"
      messageExpression: "'name size ' + string(variables.first)\"""",
    )
    objects = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: plain, namespace: team-a}
data: {zz: "1"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: joined, namespace: team-a}
data: {ac: "1"}
"""
    loaded = load_texts([("policies.yaml", early + "---\n" + sizes), ("objects.yaml", objects)])
    policies = PolicySet.from_manifests(loaded.others)
    checked = [PolicyObject(m.data, m) for m in loaded.others if m.kind == "ConfigMap"]
    found = policies.evaluate(checked, NAMESPACES)
    assert [(f.object.name if f.object else "", f.message.rpartition(": ")[2]) for f in found] == [
        ("plain", "name size 5"),
        ("joined", "a key joins two letters"),
        ("joined", "name size 6"),
    ]


def test_map_building_macros_as_the_api_server_evaluates_them() -> None:
    """transformMap and transformMapEntry, which the engine cannot run as written, give
    the API server v1.34's decisions and texts (its warnings for the same policy and
    objects, in tests/live/test_policies_live.py): a key given twice is an error."""
    text = _configmap_policy(
        "maps",
        """\
  validations:
    - expression: "object.data.transformMap(k, v, v + '!').all(k, v, v.endsWith('!')) && false"
      messageExpression: >-
        'n=' + string(size(object.data.transformMap(k, v, k != 'x', size(v)))) + ' '
        + string(object.data.transformMap(k, v, k != 'x', size(v)).?a.orValue(-1))
    - expression: "size(object.data.transformMapEntry(k, v, {v: k})) < 0"
      message: entries
    - expression: "[1, 2].transformMapEntry(i, x, {x % 2 == 0: i}) == {false: 0, true: 1}\"""",
    )
    policies = PolicySet.from_manifests(load_texts([("maps.yaml", text)]).others)
    objects = [
        {"a": "1", "b": "1"},
        {"a": "x", "b": "y"},
        {"x": "a", "y": "a"},
    ]
    configmaps = [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"c{i}"}, "data": data}
        for i, data in enumerate(objects)
    ]
    checked = [PolicyObject(c, Manifest(c, SourceMap("configmaps.yaml"))) for c in configmaps]
    found = policies.evaluate(checked, NAMESPACES)
    duplicate = (
        "expression 'size(object.data.transformMapEntry(k, v, {v: k})) < 0' resulted in error"
    )
    assert [
        (f.object.name if f.object else "", f.message.partition("denied request: ")[2])
        for f in found
    ] == [
        ("c0", "n=2 1"),
        ("c0", f"{duplicate}: insert failed: key 1 already exists"),
        ("c1", "n=2 1"),
        ("c1", "entries"),
        ("c2", "n=1 -1"),
        ("c2", f"{duplicate}: insert failed: key a already exists"),
    ]
