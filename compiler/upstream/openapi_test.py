"""The OpenAPI navigation, and agreement between its merge metadata and the Go struct tags."""

from __future__ import annotations

import pytest

from compiler.errors import SetupError
from compiler.upstream.openapi import (
    OpenAPIDocument,
    SchemaNode,
    load_document,
    openapi_document,
    schema,
)
from compiler.upstream.typeinfo import typeinfo


@pytest.fixture(scope="module")
def document() -> OpenAPIDocument:
    try:
        return openapi_document()
    except SetupError as err:
        pytest.fail(f"upstream artifacts missing: `make setup` fetches them ({err})", pytrace=False)


def test_loaded_once(document: OpenAPIDocument) -> None:
    assert openapi_document() is document
    assert load_document(__import__("pathlib").Path(document.source)) is document


def test_property_metadata(document: OpenAPIDocument) -> None:
    spec = document.node("io.k8s.api.core.v1.PodSpec")
    volumes = spec.property("volumes")
    assert volumes is not None
    assert volumes.patch_strategies == {"merge", "retainKeys"}
    assert volumes.patch_strategy_list == ("merge", "retainKeys")
    assert volumes.patch_merge_key == "name"
    assert volumes.list_type == "map"
    assert volumes.list_map_keys == ("name",)
    items = volumes.items()
    assert items is not None and items.name == "io.k8s.api.core.v1.Volume"
    assert items.patch_strategies == frozenset()

    tolerations = spec.property("tolerations")
    assert tolerations is not None
    assert tolerations.patch_strategies == frozenset()
    assert tolerations.patch_merge_key is None
    assert tolerations.list_type == "atomic"


def test_merge_keys_in_scope(document: OpenAPIDocument) -> None:
    """Appendix B, item 3: the merge keys the runtimePatches touch."""
    container = document.node("io.k8s.api.core.v1.Container")
    expected = {"env": "name", "ports": "containerPort", "volumeMounts": "mountPath"}
    for field, key in expected.items():
        node = container.property(field)
        assert node is not None and node.patch_merge_key == key
        assert "merge" in node.patch_strategies
    for field in ("command", "args", "envFrom"):
        node = container.property(field)
        assert node is not None and not node.patch_strategies
    jobset = document.node("jobset.v1alpha2.JobSetSpec")
    assert jobset.at("replicatedJobs").patch_merge_key == "name"
    assert jobset.at("replicatedJobs", "[]", "dependsOn").patch_merge_key == "name"
    finalizers = document.node("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta").at("finalizers")
    assert finalizers.patch_strategies == {"merge"} and finalizers.patch_merge_key is None


def test_resolution_and_navigation(document: OpenAPIDocument) -> None:
    spec = document.node("jobset.v1alpha2.JobSetSpec")
    pod = spec.at("replicatedJobs", "[]", "template", "spec", "template", "spec")
    assert pod.name == "io.k8s.api.core.v1.PodSpec"
    assert pod.type == "object"
    labels = pod.at("containers", "[]", "resources", "limits")
    assert labels.type == "object"
    quantity = labels.additional_properties()
    assert quantity is not None and quantity.name == "io.k8s.apimachinery.pkg.api.resource.Quantity"
    assert quantity.type is None  # oneOf string/number
    assert spec.property("nope") is None
    assert labels.property("cpu") is None  # a map declares no properties
    assert pod.items() is None and pod.additional_properties() is None
    with pytest.raises(KeyError, match="no path"):
        spec.at("replicatedJobs", "nope")
    with pytest.raises(KeyError):
        document.node("no.such.Type")


def test_schemaless_and_from_raw(document: OpenAPIDocument) -> None:
    free = SchemaNode.schemaless()
    assert free.is_schemaless
    assert free.property("x") is free and free.items() is free
    assert free.additional_properties() is free
    assert free.patch_strategies == frozenset() and free.name is None

    raw = SchemaNode.from_raw(
        {"properties": {"c": {"$ref": "#/components/schemas/io.k8s.api.core.v1.Container"}}},
        document,
    )
    child = raw.property("c")
    assert child is not None and child.name == "io.k8s.api.core.v1.Container"
    assert not raw.is_schemaless


def test_schema_shortcut(document: OpenAPIDocument) -> None:
    assert (
        schema("io.k8s.api.core.v1.PodSpec").raw is document.schemas["io.k8s.api.core.v1.PodSpec"]
    )


def test_openapi_metadata_matches_go_struct_tags(document: OpenAPIDocument) -> None:
    """apimachinery (as the Trainer calls it) reads Go struct tags; trainc reads OpenAPI.

    For every type both describe, the field sets and the patch strategy / merge key agree.
    """
    compared = 0
    for name, go_type in typeinfo().types.items():
        if go_type.kind != "struct" or name not in document.schemas:
            continue
        node = document.node(name)
        assert set(node.properties) == {f.json for f in go_type.fields}, name
        for f in go_type.fields:
            prop = node.property(f.json)
            assert prop is not None
            assert ",".join(prop.patch_strategy_list) == (f.patch_strategy or ""), (name, f.json)
            assert prop.patch_merge_key == f.patch_merge_key, (name, f.json)
            compared += 1
    assert compared > 800
