"""The typed JSON round trip (R-3.6). Expected values were produced by Go's encoding/json
(tests/conformance/smpcheck); tests/conformance/test_smp_differential.py compares
generated values against it."""

from __future__ import annotations

from typing import Any

import pytest

from compiler.errors import SetupError
from compiler.kube.roundtrip import RoundTripError, go_roundtrip
from compiler.upstream.typeinfo import typeinfo

POD_SPEC = "io.k8s.api.core.v1.PodSpec"
CONTAINER = "io.k8s.api.core.v1.Container"
JOBSET_SPEC = "jobset.v1alpha2.JobSetSpec"


@pytest.fixture(scope="module", autouse=True)
def _typeinfo() -> None:
    try:
        typeinfo()
    except SetupError as err:
        pytest.fail(f"upstream artifacts missing: `make setup` fetches them ({err})", pytrace=False)


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


# --------------------------------------------------------------------------- compiled path
#
# go_roundtrip runs compiled converters and leaves what they cannot vouch for to the
# reference interpreter (_Reference, the plain decode-then-encode). Both must agree on
# every value: the same result, or the same error with the same path.


def _outcome(run: Any) -> tuple[Any, ...]:
    try:
        return ("ok", run())
    except Exception as err:  # the error itself is compared
        return ("error", type(err), str(err), getattr(err, "path", None))


def _agree(value: Any, type_name: str, info: Any = None) -> tuple[Any, ...]:
    from compiler.kube.roundtrip import _Reference

    reference = _Reference(info or typeinfo())
    compiled = _outcome(lambda: go_roundtrip(value, type_name, info=info))
    assert compiled == _outcome(lambda: reference.roundtrip(value, type_name)), value
    return compiled


class _Int(int):
    """YAML loaders return int subclasses (hex, octal)."""


def _random_value(info: Any, t: Any, depth: int, rnd: Any) -> Any:
    """JSON for a Go type, with the shapes the compiled path leaves to the reference now
    and then: wrong types, keys matched twice, non-dict mappings, tuples, non-JSON data."""
    from types import MappingProxyType

    if rnd.random() < 0.04:
        return rnd.choice([None, "x", 1, -(2**70), 1.5, True, [], {}, {1, 2}, (1,)])
    kind = t.kind
    if kind == "pointer":
        return None if rnd.random() < 0.2 else _random_value(info, t.elem, depth, rnd)
    if kind == "struct":
        if depth <= 0:
            return rnd.choice([{}, None])
        fields = info.struct(t.name).fields
        out: dict[Any, Any] = {}
        for f in rnd.sample(fields, min(len(fields), rnd.randint(0, 6))):
            key = f.json.upper() if rnd.random() < 0.1 else f.json
            out[key] = _random_value(info, f.type, depth - 1, rnd)
            if rnd.random() < 0.05:  # the same field again, in another spelling
                out[f.json.capitalize()] = _random_value(info, f.type, depth - 1, rnd)
        if rnd.random() < 0.1:
            out[rnd.choice(["zzUnknown", 7])] = {"a": 1}
        return MappingProxyType(out) if rnd.random() < 0.05 else out
    if kind in ("slice", "array"):
        items = [_random_value(info, t.elem, depth - 1, rnd) for _ in range(rnd.randint(0, 2))]
        return tuple(items) if rnd.random() < 0.1 else items
    if kind == "map":
        keys = rnd.sample(["k1", "k2", "a/b", "B"], rnd.randint(0, 3))
        return {k: _random_value(info, t.elem, depth - 1, rnd) for k in keys}
    samples: dict[str, list[Any]] = {
        "bytes": ["aGVsbG8=", "", "aGVs\nbG8=", "aGVsbG8", "é"],
        "string": ["", "a", "Ab", None],
        "bool": [True, False, None],
        "int": [0, 1, -1, None, 2**31 - 1, 2**31, 2**63, _Int(5), 2.0],
        "float": [0, 0.5, -0.0, 1e300, 2**1030],
        "interface": [None, 1, "a", {"x": [1, 2.5]}],
        "resource.Quantity": ["1", "1000m", "2Gi", 2, 0.5, "0Gi", " 1 ", None, 0, "bad", 2.0],
        "intstr.IntOrString": [0, 1, "a", "", None, 2**31, _Int(3)],
        "metav1.Time": ["2024-01-01T10:00:00Z", "0001-01-01T00:00:00Z", None, "yesterday"],
        "metav1.FieldsV1": [None, {"f:a": {}}, [1]],
        "runtime.RawExtension": [None, {"a": [1]}, "x"],
    }
    pool = samples.get(t.special or ("int" if kind == "uint" else kind), [None])
    return rnd.choice(pool)


ROUNDTRIP_TYPES = [
    POD_SPEC,
    CONTAINER,
    JOBSET_SPEC,
    "trainer.v1alpha1.JobSetSpecPatch",
    "io.k8s.api.core.v1.Pod",
    "io.k8s.api.core.v1.Secret",
    "io.k8s.api.batch.v1.Job",
    "trainer.v1alpha1.TrainJob",
    "trainer.v1alpha1.ClusterTrainingRuntime",
]


@pytest.mark.parametrize("type_name", ROUNDTRIP_TYPES)
def test_compiled_path_agrees_with_reference(type_name: str) -> None:
    import random

    from compiler.upstream.typeinfo import TypeRef

    info = typeinfo()
    rnd = random.Random(type_name)
    root = TypeRef(kind="struct", name=type_name)
    results = [_agree(_random_value(info, root, 6, rnd), type_name) for _ in range(300)]
    assert sum(r[0] == "ok" for r in results) > 30


def test_runtime_templates_take_the_compiled_path(monkeypatch: pytest.MonkeyPatch) -> None:
    from ruamel.yaml import YAML

    from compiler.kube.roundtrip import _Reference
    from compiler.upstream.artifacts import upstream

    yaml = YAML(typ="safe", pure=True)
    templates = [
        doc["spec"]["template"]["spec"]
        for path in sorted(upstream().path("manifests/base/runtimes").rglob("*.yaml"))
        for doc in yaml.load_all(path.read_text())
        if doc and str(doc.get("kind", "")).endswith("TrainingRuntime")
    ]
    assert templates
    expected = [_Reference(typeinfo()).roundtrip(t, JOBSET_SPEC) for t in templates]

    def no_fallback(self: Any, value: Any, type_name: str) -> Any:
        raise AssertionError("fell back to the reference")

    monkeypatch.setattr(_Reference, "roundtrip", no_fallback)
    assert [go_roundtrip(t, JOBSET_SPEC) for t in templates] == expected


def test_results_share_no_containers() -> None:
    first = go_roundtrip({"containers": [{"name": "a"}]}, POD_SPEC)
    first["containers"][0]["resources"]["limits"] = {"cpu": "1"}
    assert go_roundtrip({"containers": [{"name": "a"}]}, POD_SPEC) == {
        "containers": [{"name": "a", "resources": {}}]
    }
    empty = go_roundtrip(None, "io.k8s.api.core.v1.PodTemplateSpec")
    empty["spec"]["containers"] = []
    assert go_roundtrip({}, "io.k8s.api.core.v1.PodTemplateSpec") == {
        "metadata": {},
        "spec": {"containers": None},
    }


def test_key_matched_twice_merges_like_go() -> None:
    # The second spelling decodes into the first value: list elements are reused.
    spec = {"containers": [{"name": "a", "image": "i"}], "Containers": [{"name": "b"}]}
    out = _agree(spec, POD_SPEC)
    assert out == ("ok", {"containers": [{"name": "b", "image": "i", "resources": {}}]})


def _synthetic_info() -> Any:
    """Kinds the Trainer types do not use: floats, unsigned, arrays, interfaces, bytes,
    embedded pointers, ',string', omitzero structs, int-keyed maps, unknown kinds."""
    from compiler.upstream.typeinfo import TypeInfo

    def f(name: str, kind: dict[str, Any], **flags: Any) -> dict[str, Any]:
        return {"json": name, "goName": name.title(), "type": kind, **flags}

    string = {"kind": "string"}
    inner = {"kind": "struct", "name": "t.Inner"}
    fields = [
        f("f32", {"kind": "float", "bits": 32}, omitempty=True),
        f("f64", {"kind": "float", "bits": 64}),
        f("u8", {"kind": "uint", "bits": 8}, omitempty=True),
        f("arr", {"kind": "array", "len": 2, "elem": {"kind": "int", "bits": 16}}),
        f("any", {"kind": "interface", "empty": True}, omitempty=True),
        f("iface", {"kind": "interface", "empty": False}),
        f("raw", {"kind": "bytes"}),
        f("byInt", {"kind": "map", "key": {"kind": "int", "bits": 64}, "elem": string}),
        f("inner", inner, omitzero=True),
        f("ptrInner", {"kind": "pointer", "elem": inner}, omitzero=True),
        f("count", {"kind": "int", "bits": 64}, quoted=True, omitempty=True),
    ]
    return TypeInfo(
        {
            "version": 1,
            "roots": {},
            "types": {
                "t.Outer": {"goType": "Outer", "kind": "struct", "fields": fields},
                "t.Inner": {"goType": "Inner", "kind": "struct", "fields": [f("a", string)]},
                "t.Embeds": {
                    "goType": "Embeds",
                    "kind": "struct",
                    "fields": [f("x", string, embedded=["Inner"], embeddedPointer=True)],
                },
                "t.Odd": {
                    "goType": "Odd",
                    "kind": "struct",
                    "fields": [f("c", {"kind": "chan"}, omitempty=True), f("s", string)],
                },
            },
        }
    )


@pytest.mark.parametrize(
    "value",
    [
        {},
        None,
        {"f32": 0.1, "f64": 2.0, "u8": 255, "arr": [1], "any": {"a": [1, 2]}, "raw": "aGk="},
        {"f32": 1e-50, "u8": 0, "arr": [1, 2, 3], "any": None, "inner": {"a": ""}},
        {"f32": 1e40},
        {"u8": 256},
        {"u8": -1},
        {"arr": [1, 2**15]},
        {"iface": None, "byInt": None},
        {"iface": 1},
        {"byInt": {"1": "a"}},
        {"inner": {"a": "x"}, "ptrInner": {}},
        {"ptrInner": None, "INNER": {"A": "y"}},
        {"count": 1},
        {"count": None},
        {"F64": 1, "f64": 2},
    ],
)
def test_compiled_path_on_rare_kinds(value: Any) -> None:
    _agree(value, "t.Outer", _synthetic_info())


@pytest.mark.parametrize("value", [{}, None, {"x": "a"}, {"s": "a"}, {"c": 1}, []])
def test_structs_left_to_the_reference(value: Any) -> None:
    info = _synthetic_info()
    _agree(value, "t.Embeds", info)
    _agree(value, "t.Odd", info)
