"""Upsert and env re-encoding, with the cases upstream pins in pkg/apply/apply_test.go."""

from __future__ import annotations

from compiler.render.upsert import reencode_env, upsert_env, upsert_ports, upsert_volume_mounts


def test_upsert_env_replaces_in_place_and_appends_new() -> None:
    env = [{"name": "X", "value": "1"}, {"name": "Y", "value": "2"}]
    upsert_env(
        env,
        [{"name": "X", "valueFrom": {"fieldRef": {"fieldPath": "a"}}}, {"name": "Z", "value": "3"}],
    )
    assert env == [
        {"name": "X", "valueFrom": {"fieldRef": {"fieldPath": "a"}}},
        {"name": "Y", "value": "2"},
        {"name": "Z", "value": "3"},
    ]


def test_upsert_port_two_unnamed_ports_count_as_the_same() -> None:
    # apply_test.go TestUpsertPort "insert new port": unnamed 8080 + unnamed 9090 -> only 9090.
    ports = [{"containerPort": 8080}]
    upsert_ports(ports, [{"containerPort": 9090}])
    assert ports == [{"containerPort": 9090}]


def test_upsert_port_named_ports_append() -> None:
    ports = [{"name": "http", "containerPort": 8080}]
    upsert_ports(ports, [{"containerPort": 29500}])
    assert ports == [{"name": "http", "containerPort": 8080}, {"containerPort": 29500}]


def test_volume_mounts_match_on_mount_path_not_name() -> None:
    mounts = [{"name": "a", "mountPath": "/data"}]
    upsert_volume_mounts(
        mounts, [{"name": "b", "mountPath": "/data"}, {"name": "a", "mountPath": "/x"}]
    )
    assert mounts == [{"name": "b", "mountPath": "/data"}, {"name": "a", "mountPath": "/x"}]


def test_reencode_env_writes_empty_value() -> None:
    assert reencode_env({"name": "X"}) == {"name": "X", "value": ""}


def test_reencode_env_drops_field_ref_api_version() -> None:
    env = {
        "name": "N",
        "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}},
    }
    assert reencode_env(env) == {
        "name": "N",
        "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}},
    }


def test_reencode_env_resource_field_ref_always_has_divisor() -> None:
    env = {"name": "C", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu"}}}
    assert reencode_env(env) == {
        "name": "C",
        "valueFrom": {
            "resourceFieldRef": {"containerName": "", "resource": "limits.cpu", "divisor": "0"}
        },
    }


def test_reencode_env_key_refs_keep_optional_only_when_set() -> None:
    env = {"name": "S", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k", "optional": False}}}
    assert reencode_env(env)["valueFrom"] == {
        "secretKeyRef": {"key": "k", "name": "s", "optional": False}
    }
    env = {"name": "M", "valueFrom": {"configMapKeyRef": {"name": "m", "key": "k"}}}
    assert reencode_env(env)["valueFrom"] == {"configMapKeyRef": {"key": "k", "name": "m"}}


def test_reencode_env_drops_unknown_sources() -> None:
    env = {"name": "F", "valueFrom": {"fileKeyRef": {"path": "p", "key": "k", "volumeName": "v"}}}
    assert reencode_env(env) == {"name": "F", "valueFrom": {}}
