from __future__ import annotations

from typing import Any

from compiler.deliver.diff import (
    MISSING,
    changed_trainjobs,
    diff_renders,
    diff_values,
    format_path,
    format_value,
)
from compiler.model.objects import RenderedObject


def _jobset(name: str, image: str, extra_env: list[dict[str, Any]] | None = None) -> RenderedObject:
    env: list[dict[str, Any]] = [{"name": "A", "value": "1"}, *(extra_env or [])]
    container = {"name": "node", "image": image, "env": env}
    data = {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": name, "namespace": "ns", "labels": {"a.b/c": "x"}},
        "spec": {
            "replicatedJobs": [
                {
                    "name": "node",
                    "template": {"spec": {"template": {"spec": {"containers": [container]}}}},
                }
            ]
        },
    }
    return RenderedObject("ns", name, data)


def test_merge_keyed_lists_are_matched_by_key_not_index() -> None:
    old = {"containers": [{"name": "a", "image": "1"}, {"name": "b", "image": "1"}]}
    new = {"containers": [{"name": "z", "image": "0"}, *old["containers"]]}
    changes = diff_values(old, new)
    assert [(format_path(c.path), c.op) for c in changes] == [("containers[name=z]", "added")]


def test_volume_mounts_by_mount_path_and_ports_by_container_port() -> None:
    old = {"volumeMounts": [{"mountPath": "/a", "name": "x"}], "ports": [{"containerPort": 80}]}
    new = {
        "volumeMounts": [{"mountPath": "/b", "name": "y"}, {"mountPath": "/a", "name": "z"}],
        "ports": [{"containerPort": 81}, {"containerPort": 80, "name": "http"}],
    }
    paths = [(format_path(c.path), c.op) for c in diff_values(old, new)]
    assert paths == [
        ("ports[containerPort=80].name", "added"),
        ("ports[containerPort=81]", "added"),
        ("volumeMounts[mountPath=/a].name", "changed"),
        ("volumeMounts[mountPath=/b]", "added"),
    ]


def test_scalar_lists_are_one_value_and_keys_with_dots_are_quoted() -> None:
    changes = diff_values({"args": ["a"], "labels": {"x.io/y": "1"}}, {"args": ["a", "b"]})
    assert [(format_path(c.path), c.old, c.new) for c in changes] == [
        ("args", ["a"], ["a", "b"]),
        ("labels", {"x.io/y": "1"}, MISSING),
    ]
    assert format_path(("metadata", "labels", "x.io/y")) == "metadata.labels['x.io/y']"
    assert format_value("true") == '"true"' and format_value("abc") == "abc"
    assert format_value(MISSING) == "(absent)"


def test_changes_know_their_replicated_job_and_container() -> None:
    old = _jobset("j", "img:1")
    new = _jobset("j", "img:2", [{"name": "B", "value": "2"}])
    diff = diff_renders({"": [old]}, {"": [new]})
    [job] = diff.trainjobs
    assert (job.namespace, job.name, job.status) == ("ns", "j", "changed")
    fields = job.objects[0].fields
    assert [(f.replicated_job, f.container, format_path(f.path[-2:])) for f in fields] == [
        ("node", "node", "env[name=B]"),
        ("node", "node", "[name=node].image"),
    ]


def test_added_removed_and_unchanged_trainjobs_by_cluster() -> None:
    a, b = _jobset("a", "i:1"), _jobset("b", "i:1")
    diff = diff_renders({"prod": [a], "dev": [a]}, {"prod": [a, b], "dev": []})
    assert [(t.cluster, t.name, t.status) for t in diff.trainjobs] == [
        ("dev", "a", "removed"),
        ("prod", "b", "added"),
    ]
    assert changed_trainjobs({"prod": [a]}, {"prod": [a, b]}) == [("prod", "ns", "b")]
    assert not diff_renders({"": [a]}, {"": [a]}).changed
