"""CRD validation rules that call the Kubernetes CEL libraries, next to the real API server.

A small CRD of our own (``Gadget``) whose rules use ``quantity``, ``isURL``/``url``,
``isCIDR``/``cidr``/``ip``, ``isSorted``, ``isSemver``/``semver``, ``format`` and
``find`` is installed in the live kube-apiserver (v1.34.4). Each object is created
with a server-side dry run; the API server's causes must be trainc's errors for the
same object, text for text (``compiler.apiserver.crd_rules`` runs CRD rules on the
engine with the Kubernetes libraries). The CRD is deleted at the end.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from compiler.apiserver.crd_rules import check_rules
from compiler.apiserver.crds import admit, load_crd, trainer_crds
from tests.live.controlplane import Client, ControlPlane

CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.trainc.example
spec:
  group: trainc.example
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget, listKind: GadgetList}
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties:
                memory: {type: string, maxLength: 20}
                endpoint: {type: string, maxLength: 100}
                network: {type: string, maxLength: 50}
                tags: {type: array, maxItems: 10, items: {type: string, maxLength: 20}}
                version: {type: string, maxLength: 20}
                host: {type: string, maxLength: 63}
              x-kubernetes-validations:
                - rule: "!has(self.memory) || quantity(self.memory).isLessThan(quantity('1Gi'))"
                  message: memory must be below 1Gi
                - rule: >-
                    !has(self.endpoint)
                    || (isURL(self.endpoint) && url(self.endpoint).getScheme() == 'https')
                  messageExpression: "'endpoint ' + self.endpoint + ' is not an https URL'"
                - rule: >-
                    !has(self.network)
                    || (isCIDR(self.network) && cidr(self.network).containsIP(ip('10.0.0.1')))
                  message: network must hold 10.0.0.1
                - rule: "!has(self.tags) || self.tags.isSorted()"
                  message: tags must be sorted
                - rule: >-
                    !has(self.version)
                    || (isSemver(self.version) && semver(self.version).isGreaterThan(semver('1.0.0')))
                  message: version must be above 1.0.0
                - rule: "!has(self.host) || !format.dns1123Label().validate(self.host).hasValue()"
                  messageExpression: "'host ' + self.host + ' is not a DNS label'"
                - rule: "!has(self.memory) || self.memory.find('[0-9]+') != ''"
                  message: memory needs a number
"""

SPECS: list[dict[str, Any]] = [
    {
        "memory": "512Mi",
        "endpoint": "https://a.example/x",
        "network": "10.0.0.0/8",
        "tags": ["a", "b"],
        "version": "1.2.0",
        "host": "ok",
    },
    {
        "memory": "2Gi",
        "endpoint": "http://a.example",
        "network": "192.168.0.0/16",
        "tags": ["b", "a"],
        "version": "0.9.0",
        "host": "Bad_Host",
    },
    {"memory": "abc"},  # quantity() fails: a runtime error, then find() finds no number
    {"endpoint": "not a url"},
    {"version": "v1"},
    {"memory": "1023Mi", "tags": [], "network": "10.0.0.1/32"},
]
_PATH = "/apis/trainc.example/v1/namespaces/default/gadgets"
_CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def _gadget(index: int, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "trainc.example/v1",
        "kind": "Gadget",
        "metadata": {"name": f"gadget-{index}", "namespace": "default"},
        "spec": copy.deepcopy(spec),  # admit() works in place
    }


@pytest.fixture
def installed(control_plane: ControlPlane) -> Iterator[Client]:
    client = control_plane.client()
    document = yaml.safe_load(CRD)
    name = document["metadata"]["name"]
    try:
        client.request("POST", _CRDS, document)
        deadline = time.monotonic() + 60
        while True:  # served once a dry-run create answers other than 404
            code, _ = client.raw("POST", _PATH, _gadget(0, {}), {"dryRun": "All"})
            if code != 404:
                break
            if time.monotonic() > deadline:
                raise AssertionError("the API server never served the Gadget CRD")
            time.sleep(0.2)
        yield client
    finally:
        client.raw("DELETE", f"{_CRDS}/{name}")
        client.close()


def _api_server_errors(client: Client, obj: dict[str, Any]) -> list[str]:
    code, answer = client.raw("POST", _PATH, obj, {"dryRun": "All"})
    if code == 201:
        return []
    assert code == 422, answer
    causes = answer["details"]["causes"]
    return [f"{c.get('field') or '<nil>'}: {c['message']}" for c in causes]


def _trainc_errors(tmp_path: Path) -> list[list[str]]:
    """trainc's errors for each of SPECS created as a Gadget, as the API server words them."""
    path = tmp_path / "gadget.yaml"
    path.write_text(CRD)
    [info] = load_crd(path)
    crds = trainer_crds()
    out = []
    for index, spec in enumerate(SPECS):
        obj = _gadget(index, spec)
        found = admit(obj, info, crds)
        errors = [*found, *check_rules(obj, info, found, kubernetes=(1, 34))]
        out.append([f"{e.field or '<nil>'}: {e.message}" for e in errors])
    return out


def test_crd_rules_with_the_kubernetes_libraries_are_the_api_servers(
    installed: Client, tmp_path: Path
) -> None:
    answers = [_api_server_errors(installed, _gadget(i, s)) for i, s in enumerate(SPECS)]
    assert _trainc_errors(tmp_path) == answers
    assert answers == ANSWERS  # the recorded answers below are still the API server's


# The API server v1.34.4's answers for SPECS (the live test above compares them afresh):
# the same texts without a control plane.
ANSWERS: list[list[str]] = [
    [],
    [
        'spec: Invalid value: "object": memory must be below 1Gi',
        'spec: Invalid value: "object": endpoint http://a.example is not an https URL',
        'spec: Invalid value: "object": network must hold 10.0.0.1',
        'spec: Invalid value: "object": tags must be sorted',
        'spec: Invalid value: "object": version must be above 1.0.0',
        'spec: Invalid value: "object": host Bad_Host is not a DNS label',
    ],
    [
        'spec: Invalid value: "object": quantities must match the regular expression'
        " '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$' evaluating rule: memory must be"
        " below 1Gi",
        'spec: Invalid value: "object": memory needs a number',
    ],
    ['spec: Invalid value: "object": endpoint not a url is not an https URL'],
    ['spec: Invalid value: "object": version must be above 1.0.0'],
    [],
]


def test_crd_rules_with_the_kubernetes_libraries_as_recorded(tmp_path: Path) -> None:
    assert _trainc_errors(tmp_path) == ANSWERS
