"""The typed JSON round trip (R-3.6). Expected values were produced by Go's encoding/json
(tests/conformance/smpcheck); tests/conformance/test_smp_differential.py compares
generated values against it."""

from __future__ import annotations

from typing import Any

import pytest

from compiler.errors import SetupError

pytest.importorskip("compiler.render.quantity")

from compiler.render.roundtrip import RoundTripError, go_roundtrip
from compiler.upstream.typeinfo import typeinfo

POD_SPEC = "io.k8s.api.core.v1.PodSpec"
CONTAINER = "io.k8s.api.core.v1.Container"
JOBSET_SPEC = "jobset.v1alpha2.JobSetSpec"


@pytest.fixture(scope="module", autouse=True)
def _typeinfo() -> None:
    try:
        typeinfo()
    except SetupError as err:
        pytest.skip(f"upstream artifacts missing ({err})")


def test_omitempty_drops_zero_scalars_but_pointers_keep_them() -> None:
    spec = {
        "replicatedJobs": [
            {
                "name": "node",
                "replicas": 0,
                "template": {"spec": {"parallelism": 0, "backoffLimit": 0, "template": {}}},
            }
        ],
        "suspend": False,
        "failurePolicy": {"maxRestarts": 0},
    }
    assert go_roundtrip(spec, JOBSET_SPEC) == {
        "replicatedJobs": [
            {
                "name": "node",
                "template": {
                    "metadata": {},
                    "spec": {
                        "parallelism": 0,
                        "backoffLimit": 0,
                        "template": {"metadata": {}, "spec": {"containers": None}},
                    },
                },
            }
        ],
        "suspend": False,
        "failurePolicy": {},
    }


def test_container_defaults_and_empty_structs() -> None:
    container = {
        "name": "a",
        "env": [{"name": "X", "value": ""}],
        "ports": [{"containerPort": 80, "hostPort": 0}],
        "command": [],
        "stdin": False,
    }
    assert go_roundtrip(container, CONTAINER) == {
        "name": "a",
        "ports": [{"containerPort": 80}],
        "env": [{"name": "X"}],
        "resources": {},
    }


def test_pod_metadata_and_time() -> None:
    pod = {
        "metadata": {"Name": "x", "creationTimestamp": "2024-01-01T10:00:00.5+02:00"},
        "spec": {"hostNetwork": False, "overhead": {"cpu": 1.5, "mem": "1e3"}},
        "unknown": {"dropped": True},
    }
    assert go_roundtrip(pod, "io.k8s.api.core.v1.Pod") == {
        "metadata": {"name": "x", "creationTimestamp": "2024-01-01T08:00:00Z"},
        "spec": {"containers": None, "overhead": {"cpu": "1500m", "mem": "1e3"}},
        "status": {},
    }
    # A zero creationTimestamp is dropped (omitzero), not printed as null.
    assert go_roundtrip({"metadata": {"creationTimestamp": None}}, "io.k8s.api.core.v1.Pod") == {
        "metadata": {},
        "spec": {"containers": None},
        "status": {},
    }


def test_quantities_int_or_string_and_null() -> None:
    spec = {
        "containers": [
            {
                "name": "c",
                "resources": {"limits": {"cpu": "1000m", "memory": "2048Mi", "gpu": 2, "x": None}},
                "livenessProbe": {"httpGet": {"port": None}, "tcpSocket": {"port": "http"}},
            }
        ]
    }
    assert go_roundtrip(spec, POD_SPEC) == {
        "containers": [
            {
                "name": "c",
                "resources": {"limits": {"cpu": "1", "gpu": "2", "memory": "2Gi", "x": "0"}},
                "livenessProbe": {"httpGet": {"port": 0}, "tcpSocket": {"port": "http"}},
            }
        ]
    }


def test_map_keys_sorted_and_field_order() -> None:
    out = go_roundtrip({"nodeSelector": {"b": "1", "a": "2"}, "containers": []}, POD_SPEC)
    assert list(out) == ["containers", "nodeSelector"]
    assert list(out["nodeSelector"]) == ["a", "b"]


def test_bytes() -> None:
    out = go_roundtrip({"data": {"a": "aGVs\nbG8="}}, "io.k8s.api.core.v1.Secret")
    assert out == {"metadata": {}, "data": {"a": "aGVsbG8="}}


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"containers": [{"name": 1}]}, "cannot unmarshal number"),
        ({"terminationGracePeriodSeconds": 1.5}, "cannot unmarshal number"),
        ({"containers": [{"name": "a", "ports": [{"containerPort": 2**31}]}]}, "overflows"),
        ({"containers": {}}, "cannot unmarshal object"),
        ({"overhead": {"cpu": "lots"}}, "quantities must match"),
        ({"containers": [{"name": "a", "livenessProbe": {"httpGet": {"port": 1.5}}}]}, "int-or"),
    ],
)
def test_errors(value: dict[str, Any], message: str) -> None:
    with pytest.raises(RoundTripError, match=message):
        go_roundtrip(value, POD_SPEC)


def test_error_path() -> None:
    with pytest.raises(RoundTripError) as info:
        go_roundtrip({"containers": [{"name": "a", "env": [{"name": 5}]}]}, POD_SPEC)
    assert info.value.path == ("containers", 0, "env", 0, "name")


def test_bad_secret_data_and_time() -> None:
    with pytest.raises(RoundTripError, match="base64"):
        go_roundtrip({"data": {"a": "aGVsbG8"}}, "io.k8s.api.core.v1.Secret")
    with pytest.raises(RoundTripError, match="RFC 3339"):
        go_roundtrip({"metadata": {"creationTimestamp": "yesterday"}}, "io.k8s.api.core.v1.Pod")


def test_unknown_type() -> None:
    with pytest.raises(KeyError):
        go_roundtrip({}, "io.k8s.api.core.v1.Nope")
