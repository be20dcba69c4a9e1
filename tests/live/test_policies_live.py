"""trainc's ValidatingAdmissionPolicy decisions next to the real API server's.

The policies are installed in the live kube-apiserver (v1.34.4) and each object is
created there with a server-side dry run. The bindings only warn, so the API server
evaluates every policy and answers with one warning per failed validation: the same
texts trainc reports for the same object, no more and no fewer.

The cases are the engine faults trainc works around: a policy whose variables an
earlier policy's comprehension could overwrite when both ran as one program; ``optMap``
after an ``exists`` that stopped early; and a policy evaluated as one program, its
variables first read after such an ``exists``; ``transformMap`` and
``transformMapEntry``, run as lists of entries, and a key given twice. Every policy selects ConfigMaps of
this test's own namespace only, and is deleted at the end, so no other test meets it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from compiler.errors import Severity
from compiler.load.loader import load_texts
from compiler.policy.objects import PolicyObject
from compiler.policy.vap import PolicySet
from tests.live.controlplane import ApiError, Client, ControlPlane

NAMESPACE = "trainc-vap-live"
_VAP_PATH = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies"
_BINDING_PATH = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings"
_CONFIGMAPS = f"/api/v1/namespaces/{NAMESPACE}/configmaps"


def _policy(name: str, spec: str) -> str:
    return f"""\
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {{name: {name}}}
spec:
  failurePolicy: Fail
  matchConstraints:
    namespaceSelector: {{matchLabels: {{kubernetes.io/metadata.name: {NAMESPACE}}}}}
    resourceRules:
      - {{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}}
{spec}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {{name: {name}}}
spec: {{policyName: {name}, validationActions: [Warn]}}
"""


POLICIES = (
    _policy(
        "trainc-live-early-exit",
        """\
  validations:
    - expression: "!object.data.exists(k, ['a', 'b'].exists(x, ['c', 'd'].exists(y, k == x + y)))"
      message: a key joins two letters""",
    )
    + "---\n"
    + _policy(
        "trainc-live-sizes",
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
    - expression: "variables.first >= 3"
      messageExpression: "'name size ' + string(variables.first)\"""",
    )
    + "---\n"
    + _policy(
        "trainc-live-optional",
        """\
  matchConditions:  # evaluated expression by expression, as the API server does
    - {name: has-data, expression: "has(object.data)"}
  validations:
    - expression: >-
        !object.data.?list.orValue('').split(',').exists(x, x == 'a')
          || object.data.?b.optMap(v, v == 'yes').orValue(true)
      message: b must be yes when the list has a""",
    )
    + "---\n"
    + _policy(
        "trainc-live-fused",
        """\
  variables:
    - {name: listed, expression: "object.data.?list.orValue('').split(',')"}
    - {name: b, expression: "object.data.?b.orValue('')"}
    - {name: size, expression: "size(variables.listed)"}
  validations:
    - expression: "!object.data.?list.orValue('').split(',').exists(x, x == 'a') || true"
    - expression: "variables.b in ['', 'yes', 'maybe']"
      messageExpression: "'b is ' + variables.b + ', list of ' + string(variables.size)"
    - expression: "variables.listed.all(x, x != 'r')"
      messageExpression: "'r listed with b ' + variables.b\"""",
    )
    + "---\n"
    + _policy(
        "trainc-live-maps",
        """\
  validations:  # the first warns on every object: the map built, its size and an entry
    - expression: "object.data.transformMap(k, v, v + '!').all(k, v, v.endsWith('!')) && false"
      messageExpression: >-
        'n=' + string(size(object.data.transformMap(k, v, k != 'list', size(v)))) + ' '
        + string(object.data.transformMap(k, v, k != 'list', size(v)).?b.orValue(-1))
    - expression: "size(object.data.transformMapEntry(k, v, {v: k})) < 0"
      message: entries
    - expression: "[1, 2].transformMapEntry(i, x, {x % 2 == 0: i}) == {false: 0, true: 1}\"""",
    )
)


def _configmap(name: str, data: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "data": data,
    }


# (object, the policy it shows installed): the API server has loaded a policy once it
# denies that policy's probe
PROBES = [
    (_configmap("probe-joined", {"bd": "1"}), "trainc-live-early-exit"),
    (_configmap("pr", {}), "trainc-live-sizes"),
    (_configmap("probe-optional", {"list": "a", "b": "no"}), "trainc-live-optional"),
    (_configmap("probe-fused", {"b": "no"}), "trainc-live-fused"),
    (_configmap("probe-maps", {}), "trainc-live-maps"),
]
OBJECTS = [
    _configmap("plain", {"zz": "1"}),
    _configmap("joined", {"ac": "1"}),
    _configmap("ok", {"list": "a", "b": "yes"}),
    _configmap("fine", {"list": "a,q", "b": "yes"}),
    _configmap("no-b", {"list": "q,a,r"}),
    _configmap("b-wrong", {"list": "a,b", "b": "maybe"}),
    _configmap("no-list", {"b": "maybe"}),
    _configmap("joined-too", {"x": "1", "ad": "2", "list": "r,a", "b": "yes"}),
    _configmap("b-no", {"list": "q,a", "b": "no"}),
    _configmap("r-listed", {"list": "a,r", "b": "no"}),
    _configmap("same-values", {"x": "1", "y": "1"}),  # transformMapEntry: a key twice
]


def _warnings(client: Client, obj: dict[str, Any]) -> list[str]:
    """The API server's warnings on a dry-run create of ``obj`` (which it allows)."""
    found: list[str] = []
    code, answer = client.raw("POST", _CONFIGMAPS, obj, {"dryRun": "All"}, warnings=found)
    assert code == 201, answer
    return sorted(found)


@pytest.fixture
def installed(control_plane: ControlPlane) -> Iterator[Client]:
    client = control_plane.client()
    documents = [d for d in yaml.safe_load_all(POLICIES) if d]
    try:
        try:
            client.request("POST", "/api/v1/namespaces", {"metadata": {"name": NAMESPACE}})
        except ApiError as error:
            if error.code != 409:
                raise
        for document in documents:
            client.request("POST", _path(document), document)
        deadline = time.monotonic() + 60
        for probe, policy in PROBES:
            while not any(f"'{policy}'" in w for w in _warnings(client, probe)):
                if time.monotonic() > deadline:
                    raise AssertionError(f"the API server never applied {policy}")
                time.sleep(0.2)
        yield client
    finally:
        for document in reversed(documents):
            client.raw("DELETE", f"{_path(document)}/{document['metadata']['name']}")
        client.close()


def _path(document: dict[str, Any]) -> str:
    return _VAP_PATH if document["kind"] == "ValidatingAdmissionPolicy" else _BINDING_PATH


def test_policy_decisions_are_the_api_servers(installed: Client) -> None:
    policies = PolicySet.from_manifests(load_texts([("policies.yaml", POLICIES)]).others)
    objects = load_texts([("objects.yaml", yaml.safe_dump_all(OBJECTS))]).others
    checked = [PolicyObject(m.data, m) for m in objects]
    namespaces = {NAMESPACE: {"kubernetes.io/metadata.name": NAMESPACE}}
    warned: dict[str, list[str]] = {obj["metadata"]["name"]: [] for obj in OBJECTS}
    for finding in policies.evaluate(checked, namespaces):
        assert finding.severity is Severity.WARNING and finding.object is not None
        warned[finding.object.name].append(finding.message)
    fine = [w for w in warned["fine"] if "'trainc-live-maps'" not in w]  # it warns on all
    assert warned["joined"] and warned["b-wrong"] and not fine  # the cases hold
    assert any("insert failed: key 1 already exists" in w for w in warned["same-values"])
    for obj in OBJECTS:
        name = obj["metadata"]["name"]
        assert _warnings(installed, obj) == sorted(warned[name]), name
