"""Strategic merge patch: apimachinery's behaviour, case by case.

Every expected value here was produced by apimachinery v0.36.2 itself (via
tests/conformance/smpcheck); tests/conformance/test_smp_differential.py compares
generated cases against it.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from compiler.errors import SetupError
from compiler.kube.strategic_merge import PatchError, UnknownFieldError, strategic_merge
from compiler.upstream.openapi import OpenAPIDocument, SchemaNode, schema


@pytest.fixture(scope="module")
def pod_spec() -> SchemaNode:
    try:
        return schema("io.k8s.api.core.v1.PodSpec")
    except SetupError as err:
        pytest.fail(f"upstream artifacts missing: `make setup` fetches them ({err})", pytrace=False)


@pytest.fixture(scope="module")
def job_set_spec() -> SchemaNode:
    try:
        return schema("jobset.v1alpha2.JobSetSpec")
    except SetupError as err:
        pytest.fail(f"upstream artifacts missing: `make setup` fetches them ({err})", pytrace=False)


@pytest.fixture(scope="module")
def pod_template() -> SchemaNode:
    try:
        return schema("io.k8s.api.core.v1.PodTemplateSpec")
    except SetupError as err:
        pytest.fail(f"upstream artifacts missing: `make setup` fetches them ({err})", pytrace=False)


def names(items: list[dict[str, Any]]) -> list[str]:
    return [item["name"] for item in items]


# --------------------------------------------------------------------------- list order


@pytest.mark.parametrize(
    ("original", "patch", "expected"),
    [
        (["A", "B", "C"], ["B"], ["A", "B", "C"]),
        (["A", "B"], ["C"], ["C", "A", "B"]),
        (["A", "B"], ["A", "C"], ["A", "C", "B"]),
        (["a", "b", "c"], ["c", "a"], ["b", "c", "a"]),
        (["initializer"], ["a", "b"], ["a", "b", "initializer"]),
        (["a", "b", "c", "d"], ["d", "b"], ["a", "c", "d", "b"]),
        ([], ["a"], ["a"]),
    ],
)
def test_merge_list_order(
    pod_spec: SchemaNode, original: list[str], patch: list[str], expected: list[str]
) -> None:
    """Appendix B worked cases: patch items in patch order, original-only items slotted in."""
    merged = strategic_merge(
        {"volumes": [{"name": n, "emptyDir": {}} for n in original]},
        {"volumes": [{"name": n} for n in patch]},
        pod_spec,
    )
    assert names(merged["volumes"]) == expected


def test_env_merges_by_name_and_keeps_both_sources(pod_spec: SchemaNode) -> None:
    """R-3.2: runtime env [X, Y] + patch env [X', Z] -> [X', Z, Y]; sources accumulate."""
    original = {
        "containers": [
            {
                "name": "node",
                "env": [
                    {"name": "X", "valueFrom": {"fieldRef": {"fieldPath": "a"}}},
                    {"name": "Y", "value": "2"},
                ],
            }
        ]
    }
    patch = {"containers": [{"name": "node", "env": [{"name": "X", "value": "v"}, {"name": "Z"}]}]}
    merged = strategic_merge(original, patch, pod_spec)
    assert merged["containers"][0]["env"] == [
        {"name": "X", "valueFrom": {"fieldRef": {"fieldPath": "a"}}, "value": "v"},
        {"name": "Z"},
        {"name": "Y", "value": "2"},
    ]


def test_volume_mounts_merge_by_mount_path(pod_spec: SchemaNode) -> None:
    original = {
        "containers": [
            {
                "name": "c",
                "volumeMounts": [
                    {"name": "a", "mountPath": "/x"},
                    {"name": "b", "mountPath": "/y"},
                ],
            }
        ]
    }
    patch = {"containers": [{"name": "c", "volumeMounts": [{"name": "a", "mountPath": "/y"}]}]}
    merged = strategic_merge(original, patch, pod_spec)
    assert merged["containers"][0]["volumeMounts"] == [
        {"name": "a", "mountPath": "/x"},
        {"name": "a", "mountPath": "/y"},
    ]


def test_replace_lists(pod_spec: SchemaNode) -> None:
    """tolerations, affinity terms and command have no merge strategy: replaced wholesale."""
    term = {"matchExpressions": [{"key": "a", "operator": "In", "values": ["x"]}]}
    original = {
        "tolerations": [{"key": "a", "operator": "Exists"}],
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [term]}}},
        "containers": [{"name": "c", "command": ["a", "b"]}],
    }  # fmt: skip
    new_term = {"matchExpressions": [{"key": "b", "operator": "In", "values": ["y"]}]}
    patch = {
        "tolerations": [{"key": "b", "operator": "Exists"}],
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [new_term]}}},
        "containers": [{"name": "c", "command": ["z"]}],
    }  # fmt: skip
    merged = strategic_merge(original, patch, pod_spec)
    assert merged["tolerations"] == [{"key": "b", "operator": "Exists"}]
    required = merged["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert required["nodeSelectorTerms"] == [new_term]
    assert merged["containers"][0]["command"] == ["z"]


def test_maps_merge_and_null_deletes(pod_template: SchemaNode) -> None:
    merged = strategic_merge(
        {"metadata": {"labels": {"x": "1", "y": "2"}}, "spec": {"serviceAccountName": "a"}},
        {"metadata": {"labels": {"y": None, "z": "3"}}, "spec": {"serviceAccountName": None}},
        pod_template,
    )
    assert merged == {"metadata": {"labels": {"x": "1", "z": "3"}}, "spec": {}}


def test_scalar_merge_list_is_a_union(pod_template: SchemaNode) -> None:
    merged = strategic_merge(
        {"metadata": {"finalizers": ["a", "b"]}},
        {"metadata": {"finalizers": ["c", "a"]}},
        pod_template,
    )
    assert merged["metadata"]["finalizers"] == ["c", "a", "b"]


def test_scalar_union_with_repeats_follows_go_storage_reuse(pod_template: SchemaNode) -> None:
    """Go appends the patch into the original's spare room and then edits it in place."""

    def run(original: list[str], patch: list[str]) -> list[str]:
        merged = strategic_merge(
            {"metadata": {"finalizers": original}},
            {"metadata": {"finalizers": patch}},
            pod_template,
        )
        result: list[str] = merged["metadata"]["finalizers"]
        return result

    assert run(["a", "a", "b"], ["c"]) == ["a", "c", "b"]  # room for 4: shared storage
    assert run(["a", "a", "b"], ["c", "d"]) == ["c", "d", "a", "b"]  # no room: a copy


def test_replicated_jobs_merge_by_name(job_set_spec: SchemaNode) -> None:
    original = {"replicatedJobs": [{"name": "init"}, {"name": "node", "replicas": 1}]}
    patch = {
        "replicatedJobs": [
            {
                "name": "node",
                "template": {"spec": {"template": {"spec": {"serviceAccountName": "s"}}}},
            }
        ]
    }
    merged = strategic_merge(original, patch, job_set_spec)
    assert merged["replicatedJobs"][1] == {
        "name": "node",
        "replicas": 1,
        "template": {"spec": {"template": {"spec": {"serviceAccountName": "s"}}}},
    }


# --------------------------------------------------------------------------- directives


def test_list_item_delete_and_replace(pod_spec: SchemaNode) -> None:
    containers = [{"name": "a"}, {"name": "b"}, {"name": "c"}]
    merged = strategic_merge(
        {"containers": containers}, {"containers": [{"name": "b", "$patch": "delete"}]}, pod_spec
    )
    assert names(merged["containers"]) == ["a", "c"]
    merged = strategic_merge(
        {"containers": containers}, {"containers": [{"$patch": "replace"}, {"name": "d"}]}, pod_spec
    )
    assert merged["containers"] == [{"name": "d"}]


def test_map_directives(pod_spec: SchemaNode) -> None:
    original = {"nodeSelector": {"a": "1"}, "affinity": {"nodeAffinity": {}}}
    merged = strategic_merge(
        original,
        {"nodeSelector": {"$patch": "replace", "b": "2"}, "affinity": {"$patch": "delete"}},
        pod_spec,
    )
    assert merged == {"nodeSelector": {"b": "2"}, "affinity": {}}
    # Deleting a map the original lacks leaves no trace.
    assert strategic_merge({}, {"affinity": {"$patch": "delete"}}, pod_spec) == {}


def test_retain_keys(pod_spec: SchemaNode) -> None:
    merged = strategic_merge(
        {"volumes": [{"name": "v", "emptyDir": {}}]},
        {
            "volumes": [
                {"name": "v", "configMap": {"name": "m"}, "$retainKeys": ["name", "configMap"]}
            ]
        },
        pod_spec,
    )
    assert merged == {"volumes": [{"name": "v", "configMap": {"name": "m"}}]}
    with pytest.raises(PatchError, match="not listed in \\$retainKeys"):
        strategic_merge(
            {"volumes": [{"name": "v"}]},
            {"volumes": [{"name": "v", "configMap": {}, "$retainKeys": ["configMap"]}]},
            pod_spec,
        )


def test_delete_from_primitive_list_and_set_element_order(pod_template: SchemaNode) -> None:
    original = {"metadata": {"finalizers": ["a", "b", "c"]}}
    merged = strategic_merge(
        original, {"metadata": {"$deleteFromPrimitiveList/finalizers": ["b"]}}, pod_template
    )
    assert merged["metadata"]["finalizers"] == ["a", "c"]
    merged = strategic_merge(
        original, {"metadata": {"$setElementOrder/finalizers": ["c", "a", "b"]}}, pod_template
    )
    assert merged["metadata"]["finalizers"] == ["c", "a", "b"]


def test_set_element_order_for_maps(pod_spec: SchemaNode) -> None:
    merged = strategic_merge(
        {"containers": [{"name": "a"}, {"name": "b"}, {"name": "c"}]},
        {
            "containers": [{"name": "a", "$patch": "delete"}, {"name": "d"}],
            "$setElementOrder/containers": [{"name": "d"}, {"name": "c"}],
        },
        pod_spec,
    )
    assert names(merged["containers"]) == ["b", "d", "c"]


def test_new_items_are_taken_as_written(pod_spec: SchemaNode) -> None:
    """apimachinery keeps nulls and directives inside an item it adds to a merge list."""
    merged = strategic_merge(
        {"containers": [{"name": "a"}]},
        {"containers": [{"name": "b", "env": None, "ports": [{"$patch": "delete"}]}]},
        pod_spec,
    )
    assert merged["containers"] == [
        {"name": "b", "env": None, "ports": [{"$patch": "delete"}]},
        {"name": "a"},
    ]
    # ... while a new map field is cleaned.
    merged = strategic_merge(
        {}, {"affinity": {"nodeAffinity": None, "x": {"$patch": "delete"}}}, pod_spec
    )
    assert merged == {"affinity": {}}


# --------------------------------------------------------------------------- errors, purity


@pytest.mark.parametrize(
    ("original", "patch", "message"),
    [
        ({"containers": [{"name": "a"}]}, {"containers": [{"image": "x"}]}, "merge key 'name'"),
        ({"containers": [{"name": "a"}]}, {"containers": [{"$patch": "merge"}]}, "not supported"),
        ({"nodeSelector": {}}, {"nodeSelector": {"$patch": "bogus"}}, "unknown \\$patch"),
        ({"containers": [None]}, {"containers": [{"name": "b"}]}, "starts with null"),
        ({}, {"$setElementOrder": []}, "malformed directive"),
        (
            {"containers": [{"name": "a"}]},
            {"containers": [{"name": "a"}], "$setElementOrder/containers": [{"name": "b"}]},
            "setElementOrder",
        ),
        ({"x": {"a": 1}}, {"x": {"b": 2}}, "unknown field 'x'"),
    ],
)
def test_errors(
    pod_spec: SchemaNode, original: dict[str, Any], patch: dict[str, Any], message: str
) -> None:
    with pytest.raises(PatchError, match=message):
        strategic_merge(original, patch, pod_spec)


def test_error_path_points_into_the_patch(pod_spec: SchemaNode) -> None:
    with pytest.raises(PatchError) as info:
        strategic_merge(
            {"containers": [{"name": "a", "env": [{"name": "x"}]}]},
            {"containers": [{"name": "a", "env": [{"value": "1"}]}]},
            pod_spec,
        )
    assert info.value.path == ("containers", 0, "env", 0)


def test_unknown_fields_merge_option(pod_spec: SchemaNode) -> None:
    original = {"x": {"a": 1, "l": [1]}, "nodeSelector": {"k": "v"}}
    patch = {"x": {"b": 2, "l": [2]}}
    with pytest.raises(UnknownFieldError):
        strategic_merge(original, patch, pod_spec)
    merged = strategic_merge(original, patch, pod_spec, unknown_fields="merge")
    assert merged == {"x": {"a": 1, "l": [2], "b": 2}, "nodeSelector": {"k": "v"}}
    # Scalars and new keys never need the schema.
    assert strategic_merge({"x": 1}, {"x": 2, "y": [1]}, pod_spec) == {"x": 2, "y": [1]}


def test_inputs_are_not_mutated(pod_spec: SchemaNode) -> None:
    original = {
        "containers": [{"name": "a", "env": [{"name": "X"}]}],
        "volumes": [{"name": "v", "emptyDir": {}}],
        "nodeSelector": {"a": "1"},
    }
    patch = {
        "containers": [{"name": "b"}, {"name": "a", "env": [{"name": "Y", "value": None}]}],
        "volumes": [{"name": "v", "$retainKeys": ["name"]}],
        "nodeSelector": {"a": None},
        "$setElementOrder/containers": [{"name": "b"}, {"name": "a"}],
    }
    before = copy.deepcopy((original, patch))
    merged = strategic_merge(original, patch, pod_spec)
    assert (original, patch) == before
    merged["containers"][0]["name"] = "changed"
    assert (original, patch) == before


def test_custom_schema_from_raw(pod_spec: SchemaNode) -> None:
    """A merge schema built in code, like the Trainer's resourceRequirementsPatchMeta."""
    document = pod_spec.document
    assert isinstance(document, OpenAPIDocument)
    claims_by_name = SchemaNode.from_raw(
        {
            "properties": {
                "limits": {"type": "object", "additionalProperties": {"type": "string"}},
                "claims": {
                    "type": "array",
                    "items": {"$ref": "#/components/schemas/io.k8s.api.core.v1.ResourceClaim"},
                    "x-kubernetes-patch-strategy": "merge",
                    "x-kubernetes-patch-merge-key": "name",
                },
            }
        },
        document,
    )
    merged = strategic_merge(
        {"limits": {"cpu": "1"}, "claims": [{"name": "a"}]},
        {"limits": {"memory": "1Gi"}, "claims": [{"name": "b", "request": "r"}]},
        claims_by_name,
    )
    assert merged == {
        "limits": {"cpu": "1", "memory": "1Gi"},
        "claims": [{"name": "b", "request": "r"}, {"name": "a"}],
    }


def test_rejects_non_objects(pod_spec: SchemaNode) -> None:
    with pytest.raises(PatchError, match="JSON object"):
        strategic_merge({}, [], pod_spec)  # type: ignore[arg-type]
    with pytest.raises(PatchError, match="not JSON data"):
        strategic_merge({}, {"a": {1, 2}}, pod_spec)
