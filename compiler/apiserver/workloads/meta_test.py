"""Label selectors: validity and matching as Go builds them."""

from __future__ import annotations

from compiler.apiserver.workloads.meta import labels, selector_errors, selector_matches


def test_selector_matching() -> None:
    assert selector_matches(None, {"a": "b"}) is False  # a nil selector matches nothing
    assert selector_matches({}, {"a": "b"}) is True
    selector = {
        "matchLabels": {"a": "b"},
        "matchExpressions": [{"key": "c", "operator": "NotIn", "values": ["d"]}],
    }
    assert selector_matches(selector, {"a": "b"}) is True
    assert selector_matches(selector, {"a": "b", "c": "d"}) is False


def test_a_selector_go_cannot_build_matches_unknown() -> None:
    # any bad requirement, even after one that already fails, and the caller skips its check
    selector = {"matchLabels": {"a": "b"}, "matchExpressions": [{"key": "c", "operator": "Gt"}]}
    assert selector_matches(selector, {}) is None
    assert [str(e) for e in selector_errors(selector, ("s",))] == [
        's.matchExpressions[0].operator: Invalid value: "Gt": not a valid selector operator'
    ]


def test_label_maps_report_in_key_order() -> None:
    errors = labels({"z": "bad value", "a": "bad value"}, ("l",))
    assert [e.value for e in errors] == ["bad value", "bad value"]
    assert len(errors) == 2


def test_owner_references_name_the_list_and_print_in_go_field_order() -> None:
    from compiler.apiserver.workloads.meta import owner_references

    refs = [
        {
            "uid": "u",
            "name": "a",
            "kind": "JobSet",
            "apiVersion": "jobset.x-k8s.io/v1alpha2",
            "controller": True,
        },
        {
            "uid": "v",
            "name": "b",
            "kind": "JobSet",
            "apiVersion": "jobset.x-k8s.io/v1alpha2",
            "controller": True,
        },
        {"apiVersion": "x/y/z", "kind": "K", "name": "c"},
    ]
    assert [str(e) for e in owner_references(refs, ("metadata", "ownerReferences"))] == [
        'metadata.ownerReferences: Invalid value: [{"apiVersion":"jobset.x-k8s.io/v1alpha2",'
        '"kind":"JobSet","name":"a","uid":"u","controller":true},{"apiVersion":'
        '"jobset.x-k8s.io/v1alpha2","kind":"JobSet","name":"b","uid":"v","controller":true},'
        '{"apiVersion":"x/y/z","kind":"K","name":"c","uid":""}]: Only one reference can have'
        ' Controller set to true. Found "true" in references for JobSet/a and JobSet/b',
        'metadata.ownerReferences.apiVersion: Invalid value: "x/y/z": version must not be empty',
        'metadata.ownerReferences.uid: Invalid value: "": must not be empty',
    ]
