"""patched_jobset_spec computes once per (runtime, patches) pair and hands out copies."""

from __future__ import annotations

from typing import Any

from compiler.render.runtime_info import patched_jobset_spec


def _runtime_spec() -> dict[str, Any]:
    container = {"name": "node", "image": "busybox"}
    pod = {"template": {"spec": {"containers": [container]}}}
    return {"replicatedJobs": [{"name": "node", "template": {"spec": pod}}]}


def _patch(selector: dict[str, str]) -> dict[str, Any]:
    pod = {"template": {"spec": {"nodeSelector": selector}}}
    jobs = [{"name": "node", "template": {"spec": pod}}]
    return {"trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": jobs}}}}


def _node_selector(spec: dict[str, Any]) -> Any:
    return spec["replicatedJobs"][0]["template"]["spec"]["template"]["spec"].get("nodeSelector")


def test_each_caller_gets_its_own_copy() -> None:
    runtime = _runtime_spec()
    first = patched_jobset_spec(runtime, [_patch({"pool": "a"})])
    _node_selector(first)["pool"] = "changed by a plugin"
    second = patched_jobset_spec(runtime, [_patch({"pool": "a"})])
    assert _node_selector(second) == {"pool": "a"}
    assert first is not second


def test_different_patches_or_runtimes_are_not_confused() -> None:
    runtime = _runtime_spec()
    assert _node_selector(patched_jobset_spec(runtime, [_patch({"pool": "a"})])) == {"pool": "a"}
    assert _node_selector(patched_jobset_spec(runtime, [_patch({"pool": "b"})])) == {"pool": "b"}
    assert _node_selector(patched_jobset_spec(runtime, [])) is None
    other = _runtime_spec()
    other["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["nodeSelector"] = {"x": "y"}
    assert _node_selector(patched_jobset_spec(other, [])) == {"x": "y"}
