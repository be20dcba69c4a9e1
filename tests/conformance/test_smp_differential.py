"""Differential tests: strategic merge and the typed round trip against the real Go code.

``tests/conformance/smpcheck`` is a small Go program linked against k8s.io/apimachinery
v0.36.2, k8s.io/api v0.36.2, sigs.k8s.io/jobset v0.12.0 and the Trainer v2.3.0 API types.
It is built once per session into ``tests/conformance/smpcheck/bin`` and answers one JSON
request per line:

* ``smp``: ``strategicpatch.StrategicMergePatch(original, patch, <type>{})`` - the call
  the Trainer makes for runtimePatches (Go struct tags as the merge schema). Compared with
  :func:`compiler.kube.strategic_merge.strategic_merge` driven by the OpenAPI document.
* ``roundtrip``: ``json.Marshal(json.Unmarshal(value into <type>))``. Compared with
  :func:`compiler.kube.roundtrip.go_roundtrip` driven by ``typeinfo.json``.

Hypothesis generates JobSetSpec and PodSpec shapes (replicated jobs, containers, env,
volumes, volume mounts, ports, tolerations, affinity, node selectors, labels, finalizers,
image pull secrets) with directives, nulls, duplicate keys and type clashes; every Go
answer (result or error) must be matched. Set ``SMP_DIFF_SCALE`` to multiply the number
of examples.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler.errors import SetupError
from compiler.kube.strategic_merge import PatchError, strategic_merge
from compiler.upstream.openapi import SchemaNode, schema
from compiler.upstream.typeinfo import TypeInfo, TypeRef, typeinfo
from tests.go_oracle import Conversation, GoOracle, oracle_needed

ORACLE = GoOracle("smpcheck", Path(__file__).parent / "smpcheck", "smpcheck")
SCALE = max(1, int(os.environ.get("SMP_DIFF_SCALE", "1")))

COMPARED: Counter[str] = Counter()

SMP_TYPES = {
    "JobSetSpec": "jobset.v1alpha2.JobSetSpec",
    "PodSpec": "io.k8s.api.core.v1.PodSpec",
    "PodTemplateSpec": "io.k8s.api.core.v1.PodTemplateSpec",
}


class Smpcheck(Conversation):
    """The smpcheck process, counting what it compared by operation (and which errors)."""

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        answer = super().ask(request)
        COMPARED[request["op"] + ("/error" if "error" in answer else "")] += 1
        return answer


@pytest.fixture(scope="session")
def go() -> Iterator[Smpcheck]:
    """Build the Go harness once per session and keep it running."""
    with oracle_needed("the SMP/round-trip differential tests need Go: README"):
        binary = ORACLE.binary
    oracle = Smpcheck(binary, "smpcheck")
    yield oracle
    oracle.close()
    print(f"\nsmpcheck comparisons: {dict(sorted(COMPARED.items()))}")


@pytest.fixture(scope="session")
def upstream_ready() -> None:
    try:
        schema("jobset.v1alpha2.JobSetSpec")
        typeinfo()
    except SetupError as err:
        pytest.fail(f"upstream artifacts missing: `make setup` fetches them ({err})", pytrace=False)


def _schema(type_name: str) -> SchemaNode:
    return schema(SMP_TYPES[type_name])


def check_smp(go: Smpcheck, type_name: str, original: Any, patch: Any) -> None:
    """Go and Python must agree: same result, or both reject the patch."""
    answer = go.ask({"op": "smp", "type": type_name, "original": original, "patch": patch})
    try:
        mine: Any = strategic_merge(original, patch, _schema(type_name))
    except PatchError as err:
        assert "error" in answer, f"Python rejected ({err}); Go returned {answer.get('result')}"
        return
    assert "error" not in answer, f"Go rejected ({answer['error']}); Python returned {mine}"
    assert json.loads(json.dumps(mine)) == answer["result"]


# --------------------------------------------------------------------------- strategies

NAMES = st.sampled_from(["a", "b", "c", "d"])
TEXT = st.sampled_from(["", "x", "y", "z"])
PATHS = st.sampled_from(["/a", "/b", "/c", "/a/b"])
INTS = st.sampled_from([0, 1, 2, 80, 8080, -1])


def weighted(common: st.SearchStrategy[Any], rare: st.SearchStrategy[Any], one_in: int) -> Any:
    """``rare`` about once in ``one_in`` draws, else ``common``."""
    return st.integers(0, one_in - 1).flatmap(lambda i: rare if i == 0 else common)


class Shapes:
    """Strategies for originals (``patch=False``) and patches (``patch=True``)."""

    def __init__(self, patch: bool) -> None:
        self.patch = patch

    def val(self, strategy: st.SearchStrategy[Any]) -> Any:
        """In a patch, a value is sometimes ``null`` (delete the key)."""
        return weighted(strategy, st.none(), 12) if self.patch else strategy

    def obj(
        self,
        required: dict[str, Any],
        optional: dict[str, Any],
        *,
        directives: bool = False,
    ) -> Any:
        base = st.fixed_dictionaries(
            required, optional={k: self.val(v) for k, v in optional.items()}
        )
        if self.patch and directives:
            directive = st.sampled_from(["replace", "delete", "merge", "bogus"])
            with_directive = st.tuples(base, directive).map(lambda p: {**p[0], "$patch": p[1]})
            return weighted(base, with_directive, 15)
        return base

    def merge_list(self, item: Any, key: str, order_directive: bool = False) -> Any:
        """A list merged by ``key``; patches add ``$patch`` items now and then."""
        items = st.lists(item, max_size=3)
        if not self.patch:
            return items
        delete = st.fixed_dictionaries(
            {"$patch": st.just("delete"), key: NAMES if key == "name" else PATHS}
        )
        special = st.one_of(delete, st.just({"$patch": "replace"}))
        return items.flatmap(
            lambda xs: weighted(
                st.just(xs), st.lists(special, min_size=1, max_size=2).map(lambda s: xs + s), 6
            )
        )

    def keyed(self, key_strategy: Any, required: dict[str, Any], optional: dict[str, Any]) -> Any:
        """An item of a merge list: usually with its key, rarely without (an error)."""
        with_key = self.obj(required, optional)
        without = self.obj({}, optional)
        return weighted(with_key, without, 40)

    # ---------------------------------------------------------------- core/v1

    def env(self) -> Any:
        value_from = st.one_of(
            st.fixed_dictionaries({"fieldRef": st.fixed_dictionaries({"fieldPath": TEXT})}),
            st.fixed_dictionaries(
                {"secretKeyRef": st.fixed_dictionaries({"name": NAMES, "key": TEXT})}
            ),
        )
        return self.keyed(NAMES, {"name": NAMES}, {"value": TEXT, "valueFrom": value_from})

    def container(self) -> Any:
        port = self.keyed(
            INTS,
            {"containerPort": st.sampled_from([80, 8080, 9090])},
            {"name": TEXT, "protocol": st.sampled_from(["TCP", "UDP"]), "hostPort": INTS},
        )
        mount = self.keyed(PATHS, {"mountPath": PATHS}, {"name": NAMES, "readOnly": st.booleans()})
        security = self.obj(
            {},
            {
                "runAsUser": INTS,
                "privileged": st.booleans(),
                "capabilities": self.obj(
                    {}, {"add": st.lists(TEXT, max_size=2), "drop": st.lists(TEXT, max_size=2)}
                ),
            },
            directives=True,
        )
        resources = self.obj(
            {},
            {
                "limits": st.dictionaries(
                    st.sampled_from(["cpu", "memory"]), st.sampled_from(["1", "500m"]), max_size=2
                ),
                "requests": st.dictionaries(st.sampled_from(["cpu"]), st.just("1"), max_size=1),
            },
        )
        return self.keyed(
            NAMES,
            {"name": NAMES},
            {
                "image": TEXT,
                "command": st.lists(TEXT, max_size=2),
                "args": st.lists(TEXT, max_size=2),
                "env": self.merge_list(self.env(), "name"),
                "ports": self.merge_list(port, "containerPort"),
                "volumeMounts": self.merge_list(mount, "mountPath"),
                "securityContext": security,
                "resources": resources,
            },
        )

    def volume(self) -> Any:
        source: Any = st.one_of(
            st.fixed_dictionaries({"emptyDir": st.just({})}),
            st.fixed_dictionaries({"configMap": st.fixed_dictionaries({"name": NAMES})}),
            st.fixed_dictionaries({"secret": st.fixed_dictionaries({"secretName": NAMES})}),
        )
        base = st.tuples(st.fixed_dictionaries({"name": NAMES}), source).map(
            lambda p: {**p[0], **p[1]}
        )
        if not self.patch:
            return base

        def retain(item: dict[str, Any]) -> Any:
            keys = sorted(item)
            return st.lists(st.sampled_from([*keys, "emptyDir"]), max_size=3).map(
                lambda ks: {**item, "$retainKeys": ks}
            )

        return base.flatmap(lambda item: weighted(st.just(item), retain(item), 5))

    def affinity(self) -> Any:
        requirement = st.fixed_dictionaries(
            {"key": NAMES, "operator": st.just("In"), "values": st.lists(TEXT, max_size=2)}
        )
        term = st.fixed_dictionaries({"matchExpressions": st.lists(requirement, max_size=2)})
        node = self.obj(
            {},
            {
                "requiredDuringSchedulingIgnoredDuringExecution": self.obj(
                    {}, {"nodeSelectorTerms": st.lists(term, max_size=2)}
                ),
            },
            directives=True,
        )
        pod_term = st.fixed_dictionaries(
            {
                "weight": st.sampled_from([1, 50]),
                "podAffinityTerm": st.fixed_dictionaries(
                    {
                        "topologyKey": TEXT,
                        "labelSelector": st.fixed_dictionaries(
                            {"matchLabels": st.dictionaries(NAMES, TEXT, max_size=2)}
                        ),
                    }
                ),
            }
        )
        anti = self.obj(
            {}, {"preferredDuringSchedulingIgnoredDuringExecution": st.lists(pod_term, max_size=2)}
        )
        return self.obj({}, {"nodeAffinity": node, "podAntiAffinity": anti}, directives=True)

    def pod_spec(self) -> Any:
        toleration = self.obj(
            {},
            {
                "key": NAMES,
                "operator": st.sampled_from(["Exists", "Equal"]),
                "value": TEXT,
                "effect": TEXT,
            },
        )
        named = self.keyed(NAMES, {"name": NAMES}, {})
        security = self.obj(
            {},
            {
                "runAsUser": INTS,
                "runAsNonRoot": st.booleans(),
                "supplementalGroups": st.lists(INTS, max_size=2),
                "sysctls": st.lists(
                    st.fixed_dictionaries({"name": NAMES, "value": TEXT}), max_size=2
                ),
            },
            directives=True,
        )
        spec = self.obj(
            {},
            {
                "containers": self.merge_list(self.container(), "name"),
                "initContainers": self.merge_list(self.container(), "name"),
                "volumes": self.merge_list(self.volume(), "name"),
                "tolerations": st.lists(toleration, max_size=2),
                "affinity": self.affinity(),
                "nodeSelector": self.obj({}, {"a": TEXT, "b": TEXT, "c": TEXT}, directives=True),
                "imagePullSecrets": self.merge_list(named, "name"),
                "schedulingGates": self.merge_list(named, "name"),
                "serviceAccountName": TEXT,
                "terminationGracePeriodSeconds": INTS,
                "hostNetwork": st.booleans(),
                "securityContext": security,
            },
        )
        return self.with_directives(spec, ["containers", "volumes", "initContainers"])

    def metadata(self) -> Any:
        labels = self.obj({}, {"a": TEXT, "b": TEXT, "c": TEXT}, directives=True)
        meta = self.obj(
            {},
            {
                "labels": labels,
                "annotations": labels,
                "finalizers": st.lists(NAMES, max_size=4),
            },
        )
        if not self.patch:
            return meta
        deletion = st.lists(NAMES, max_size=2).map(
            lambda xs: {"$deleteFromPrimitiveList/finalizers": xs}
        )
        order = st.lists(NAMES, max_size=4, unique=True).map(
            lambda xs: {"$setElementOrder/finalizers": xs}
        )
        extra = st.one_of(deletion, order)

        def combine(m: dict[str, Any], e: dict[str, Any]) -> dict[str, Any]:
            if "$deleteFromPrimitiveList/finalizers" in e:
                # Go applies a list and its deletion list in random order.
                m = {k: v for k, v in m.items() if k != "finalizers"}
            return {**m, **e}

        return meta.flatmap(lambda m: weighted(st.just(m), extra.map(lambda e: combine(m, e)), 6))

    def pod_template(self) -> Any:
        return self.obj({}, {"metadata": self.metadata(), "spec": self.pod_spec()})

    def job_set_spec(self) -> Any:
        job_spec = self.obj(
            {},
            {
                "parallelism": INTS,
                "completions": INTS,
                "backoffLimit": INTS,
                "template": self.pod_template(),
            },
        )
        template = self.obj({}, {"metadata": self.metadata(), "spec": job_spec})
        depends = st.fixed_dictionaries(
            {"name": NAMES, "status": st.sampled_from(["Ready", "Complete"])}
        )
        job = self.keyed(
            NAMES,
            {"name": NAMES},
            {
                "replicas": INTS,
                "groupName": TEXT,
                "dependsOn": self.merge_list(depends, "name"),
                "template": template,
            },
        )
        spec = self.obj(
            {},
            {
                "replicatedJobs": self.merge_list(job, "name"),
                "suspend": st.booleans(),
                "network": self.obj({}, {"enableDNSHostnames": st.booleans(), "subdomain": TEXT}),
                "failurePolicy": self.obj({}, {"maxRestarts": INTS}),
            },
        )
        return self.with_directives(spec, ["replicatedJobs"])

    def with_directives(self, base: Any, order_fields: list[str]) -> Any:
        """Patches sometimes carry ``$setElementOrder/<field>`` for a merge list."""
        if not self.patch:
            return base

        def add_order(spec: dict[str, Any]) -> Any:
            field = st.sampled_from(order_fields)

            def for_field(f: str) -> Any:
                present = [
                    item["name"]
                    for item in spec.get(f) or []
                    if isinstance(item, dict) and "name" in item and "$patch" not in item
                ]
                names = st.lists(NAMES, max_size=2).map(
                    lambda extra: list(dict.fromkeys(present + extra))
                )
                return names.flatmap(st.permutations).map(
                    lambda ns: {**spec, f"$setElementOrder/{f}": [{"name": n} for n in ns]}
                )

            return field.flatmap(for_field)

        return base.flatmap(lambda spec: weighted(st.just(spec), add_order(spec), 5))


def with_noise(strategy: Any) -> Any:
    """Now and then an unknown field or a value of the wrong JSON type."""
    noises: list[dict[str, Any]] = [
        {"unknownField": {"x": 1}},
        {"unknownField": "s"},
        {"unknownList": [1, 2]},
        {"containers": {"not": "a list"}},
        {"hostNetwork": "yes"},
    ]
    noise = st.sampled_from(noises)
    return strategy.flatmap(lambda d: weighted(st.just(d), noise.map(lambda n: {**d, **n}), 25))


POD_ORIGINAL = with_noise(Shapes(False).pod_spec())
POD_PATCH = with_noise(Shapes(True).pod_spec())
JOBSET_ORIGINAL = Shapes(False).job_set_spec()
JOBSET_PATCH = Shapes(True).job_set_spec()
TEMPLATE_ORIGINAL = Shapes(False).pod_template()
TEMPLATE_PATCH = Shapes(True).pod_template()

SETTINGS = settings(
    max_examples=250 * SCALE,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


# --------------------------------------------------------------------------- SMP tests


@pytest.mark.usefixtures("upstream_ready")
class TestStrategicMergeDifferential:
    @SETTINGS
    @given(original=POD_ORIGINAL, patch=POD_PATCH)
    def test_pod_spec(self, go: Smpcheck, original: Any, patch: Any) -> None:
        check_smp(go, "PodSpec", original, patch)

    @SETTINGS
    @given(original=JOBSET_ORIGINAL, patch=JOBSET_PATCH)
    def test_job_set_spec(self, go: Smpcheck, original: Any, patch: Any) -> None:
        check_smp(go, "JobSetSpec", original, patch)

    @SETTINGS
    @given(original=TEMPLATE_ORIGINAL, patch=TEMPLATE_PATCH)
    def test_pod_template_spec(self, go: Smpcheck, original: Any, patch: Any) -> None:
        check_smp(go, "PodTemplateSpec", original, patch)

    @SETTINGS
    @given(
        original=st.lists(NAMES, max_size=6),
        patch=st.lists(NAMES, max_size=4),
        deletions=st.one_of(st.none(), st.lists(NAMES, max_size=3)),
        order=st.one_of(st.none(), st.lists(NAMES, max_size=5, unique=True)),
    )
    def test_finalizers(
        self,
        go: Smpcheck,
        original: list[str],
        patch: list[str],
        deletions: list[str] | None,
        order: list[str] | None,
    ) -> None:
        """Scalar merge lists, repeats included (apimachinery edits the original in place)."""
        # With both a list and its deletion list, Go's result depends on its random map
        # order (the first step decides whether the second may write into the original).
        meta_patch: dict[str, Any] = {}
        if deletions is not None:
            meta_patch["$deleteFromPrimitiveList/finalizers"] = deletions
        else:
            meta_patch["finalizers"] = patch
        if order is not None:
            meta_patch["$setElementOrder/finalizers"] = order
        check_smp(
            go,
            "PodTemplateSpec",
            {"metadata": {"finalizers": original}},
            {"metadata": meta_patch},
        )

    @SETTINGS
    @given(
        original=st.lists(st.fixed_dictionaries({"name": NAMES, "image": TEXT}), max_size=25),
        patch=st.lists(
            st.one_of(
                st.fixed_dictionaries({"name": NAMES, "image": TEXT}),
                st.fixed_dictionaries({"name": NAMES, "$patch": st.just("delete")}),
            ),
            max_size=4,
        ),
        order=st.one_of(st.none(), st.lists(NAMES, max_size=5, unique=True)),
    )
    def test_long_lists_and_order(
        self,
        go: Smpcheck,
        original: list[dict[str, Any]],
        patch: list[dict[str, Any]],
        order: list[str] | None,
    ) -> None:
        """Long lists with repeated keys (Go's stable sort runs past one block of 20)."""
        spec_patch: dict[str, Any] = {"containers": patch}
        if order is not None:
            spec_patch["$setElementOrder/containers"] = [{"name": n} for n in order]
        check_smp(go, "PodSpec", {"containers": original}, spec_patch)


WORKED_CASES: list[tuple[list[str], list[str]]] = [
    (["A", "B", "C"], ["B"]),
    (["A", "B"], ["C"]),
    (["A", "B"], ["A", "C"]),
    (["a", "b", "c"], ["c", "a"]),
    (["X", "Y"], ["X", "Z"]),
    (["initializer"], ["a", "b"]),
]


@pytest.mark.usefixtures("upstream_ready")
@pytest.mark.parametrize(("original", "patch"), WORKED_CASES)
def test_appendix_b_worked_cases(go: Smpcheck, original: list[str], patch: list[str]) -> None:
    check_smp(
        go,
        "PodSpec",
        {"volumes": [{"name": n, "emptyDir": {}} for n in original]},
        {"volumes": [{"name": n} for n in patch]},
    )


# --------------------------------------------------------------------------- round trip


def go_values(info: TypeInfo, t: TypeRef, depth: int, noisy: bool) -> Any:
    """JSON for a Go type: zero values, nulls, case-changed and unknown keys; when ``noisy``,
    now and then a value Go rejects (wrong JSON type, overflow, bad quantity or time)."""
    kind = t.kind

    def sub(ref: TypeRef | None, d: int) -> Any:
        assert ref is not None
        return go_values(info, ref, d, noisy)

    def rare(common: Any, bad: Any, one_in: int = 8) -> Any:
        return weighted(common, bad, one_in) if noisy else common

    if kind == "pointer":
        return weighted(sub(t.elem, depth), st.none(), 4)
    if kind == "struct":
        assert t.name is not None
        if depth <= 0:
            return st.sampled_from([{}, None])
        fields = info.struct(t.name).fields
        optional = {f.json: sub(f.type, depth - 1) for f in fields}
        # Go matches keys case-insensitively; a key given twice (in two spellings) is
        # decoded twice into the same field. Only scalar fields get both spellings:
        # for a list Go would reuse storage beyond its length, which is not modelled.
        optional.update({f.json.upper(): sub(f.type, depth - 1) for f in fields if _scalar(f.type)})
        optional["zzUnknown"] = st.sampled_from([1, "x", {"a": 1}])
        value = st.tuples(
            st.fixed_dictionaries({}, optional=optional),
            st.sampled_from([f.json for f in fields] or [""]),
        ).map(lambda p: _respell(*p))
        return rare(value, st.sampled_from([[], "x"]), 30)
    if kind in ("slice", "array"):
        items = st.lists(sub(t.elem, depth - 1), max_size=2)
        return weighted(items, st.none(), 5)
    if kind == "map":
        entries = st.dictionaries(
            st.sampled_from(["k1", "k2", "a/b"]), sub(t.elem, depth - 1), max_size=2
        )
        return weighted(entries, st.none(), 5)
    if kind == "bytes":
        return rare(
            st.sampled_from(["aGVsbG8=", "", "aGVs\nbG8="]), st.sampled_from(["aGVsbG8", "!!"])
        )
    if kind == "string":
        return rare(st.sampled_from(["", "a", "Ab", None]), st.sampled_from([1, True]))
    if kind == "bool":
        return rare(st.sampled_from([True, False, None]), st.sampled_from(["true", 0]))
    if kind in ("int", "uint"):
        common = st.sampled_from([0, 1, 2, 100, -1, None, 2**31 - 1])
        bad = st.sampled_from([2**31, -(2**31) - 1, 2**63, 1.5, 2.0, "1"])
        return rare(common, bad)
    if kind == "float":
        return st.sampled_from([0, 0.5, 1.5, 2])
    if kind == "interface":
        return st.sampled_from([None, 1, "a", {"x": [1, 2.5]}])
    if kind == "special":
        samples: dict[str, tuple[list[Any], list[Any]]] = {
            "resource.Quantity": (
                [
                    "1",
                    "1000m",
                    "0.5",
                    "2Gi",
                    "2048Mi",
                    2,
                    0.5,
                    1.5,
                    "0",
                    "0Gi",
                    "1e3",
                    " 1 ",
                    "1.500",
                    None,
                    0,
                ],
                ["bad", True, {"a": 1}, "1.5.5"],
            ),
            "intstr.IntOrString": (
                [0, 1, "a", "1", "", None],
                [2**31, 1.5, True, {"a": 1}],
            ),
            "metav1.Time": (
                [
                    "2024-01-01T10:00:00Z",
                    "2024-01-01T10:00:00.5+02:00",
                    "0001-01-01T00:00:00Z",
                    "2024-12-31T23:30:00-01:00",
                    None,
                ],
                ["2024-02-30T10:00:00Z", "2024-01-01 10:00:00Z", "2024-01-01T10:00:00", 5],
            ),
            "metav1.FieldsV1": ([None, {"f:a": {}}], [None]),
        }
        good_values, bad_values = samples[t.special or ""]
        return rare(st.sampled_from(good_values), st.sampled_from(bad_values))
    raise AssertionError(f"unexpected kind {kind}")


def _scalar(t: TypeRef) -> bool:
    while t.kind == "pointer" and t.elem is not None:
        t = t.elem
    return t.kind in ("string", "bool", "int", "uint", "float")


def _respell(value: dict[str, Any], key: str) -> dict[str, Any]:
    """Write ``key`` in capitals (Go still matches it), unless that spelling is taken."""
    if key in value and key.upper() not in value:
        value = {(k.upper() if k == key else k): v for k, v in value.items()}
    return value


ROUNDTRIP_TYPES = [
    ("io.k8s.api.core.v1.PodSpec", 4),
    ("io.k8s.api.core.v1.Container", 4),
    ("jobset.v1alpha2.JobSetSpec", 6),
    ("io.k8s.api.core.v1.Pod", 4),
    ("io.k8s.api.core.v1.Secret", 3),
    ("io.k8s.api.core.v1.ConfigMap", 3),
    ("io.k8s.api.batch.v1.Job", 4),
    ("trainer.v1alpha1.TrainJob", 5),
    ("trainer.v1alpha1.ClusterTrainingRuntime", 7),
    ("scheduling.v1alpha1.PodGroup", 4),
    ("scheduling.v1beta1.PodGroup", 4),
]


def _roundtrip_check(go: Smpcheck, type_name: str) -> Callable[[Any], None]:
    from compiler.kube.roundtrip import RoundTripError, go_roundtrip

    def check(value: Any) -> None:
        answer = go.ask({"op": "roundtrip", "type": type_name, "value": value})
        try:
            mine = go_roundtrip(value, type_name)
        except RoundTripError as err:
            assert "error" in answer, f"Python rejected ({err}); Go returned {answer.get('result')}"
            return
        assert "error" not in answer, f"Go rejected ({answer['error']}); Python returned {mine}"
        assert mine == answer["result"]

    return check


@pytest.mark.usefixtures("upstream_ready")
@pytest.mark.parametrize(("type_name", "depth"), ROUNDTRIP_TYPES)
def test_roundtrip_differential(go: Smpcheck, type_name: str, depth: int) -> None:
    info = typeinfo()
    check = _roundtrip_check(go, type_name)
    root = TypeRef(kind="struct", name=type_name)
    strategy = weighted(go_values(info, root, depth, False), go_values(info, root, depth, True), 4)

    @settings(
        max_examples=60 * SCALE,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(value=strategy)
    def run(value: Any) -> None:
        check(value)

    run()


@pytest.mark.usefixtures("upstream_ready")
@given(original=JOBSET_ORIGINAL, patch=JOBSET_PATCH)
@SETTINGS
def test_runtime_patch_pipeline(go: Smpcheck, original: Any, patch: Any) -> None:
    """The R-3.2 data path, each step against Go: the runtime's JobSetSpec and the
    patch's JobSetSpecPatch go through their Go types, are merged, and the result goes
    through JobSetSpec again."""
    from compiler.kube.roundtrip import RoundTripError, go_roundtrip

    spec_type, patch_type = SMP_TYPES["JobSetSpec"], "trainer.v1alpha1.JobSetSpecPatch"

    def both(op: dict[str, Any], mine: Callable[[], Any]) -> Any:
        answer = go.ask(op)
        try:
            value = mine()
        except (RoundTripError, PatchError) as err:
            assert "error" in answer, f"Python rejected ({err}); Go returned {answer}"
            return None
        assert "error" not in answer, f"Go rejected ({answer['error']}); Python returned {value}"
        assert json.loads(json.dumps(value)) == answer["result"]
        return value

    typed_original = both(
        {"op": "roundtrip", "type": spec_type, "value": original},
        lambda: go_roundtrip(original, spec_type),
    )
    typed_patch = both(
        {"op": "roundtrip", "type": patch_type, "value": patch},
        lambda: go_roundtrip(patch, patch_type),
    )
    if typed_original is None or typed_patch is None:
        return
    merged = both(
        {"op": "smp", "type": "JobSetSpec", "original": typed_original, "patch": typed_patch},
        lambda: strategic_merge(typed_original, typed_patch, _schema("JobSetSpec")),
    )
    if merged is not None:
        both(
            {"op": "roundtrip", "type": spec_type, "value": merged},
            lambda: go_roundtrip(merged, spec_type),
        )
