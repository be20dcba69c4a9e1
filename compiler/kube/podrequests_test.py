"""Unit tests for compiler.kube.podrequests (R-3.10, R-10.2) with upstream's own numbers."""

from __future__ import annotations

import doctest
from typing import Any

import compiler.kube.podrequests as podrequests
from compiler.kube.podrequests import (
    after_podgroup_build,
    pod_requests,
    resource_list,
    sum_requests,
)
from compiler.kube.quantity import Format, Quantity


def printed(reqs: dict[str, Quantity]) -> dict[str, str]:
    return {name: value.canonical() for name, value in reqs.items()}


def container(requests: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    c: dict[str, Any] = {"name": "c", **extra}
    if requests is not None:
        c["resources"] = {"requests": requests}
    return c


def rl(**values: str) -> dict[str, Quantity]:
    return {name.replace("_", "-"): Quantity.parse(v) for name, v in values.items()}


# --- pod_requests -----------------------------------------------------------------------------


def test_containers_are_summed_and_limits_ignored() -> None:
    spec = {
        "containers": [
            container({"cpu": "500m", "memory": "1Gi"}),
            container({"cpu": 1, "memory": "512Mi"}),
            {"name": "gpu", "resources": {"limits": {"nvidia.com/gpu": 2}}},
        ]
    }
    assert printed(pod_requests(spec)) == {"cpu": "1500m", "memory": "1536Mi"}


def test_init_containers_and_sidecars() -> None:
    spec = {
        "containers": [container({"cpu": "1", "memory": "1Gi"})],
        "initContainers": [
            container({"cpu": "2"}),  # alone: 2
            container({"cpu": "500m", "memory": "1Gi"}, restartPolicy="Always"),
            container({"cpu": "2", "memory": "100Mi"}),  # 2 + sidecar 500m = 2500m
            container({"memory": "2Gi"}, restartPolicy="Always"),
        ],
    }
    # regular 1 + sidecars 500m = 1500m < 2500m; memory 1Gi + 1Gi + 2Gi = 4Gi > init 1124Mi
    assert printed(pod_requests(spec)) == {"cpu": "2500m", "memory": "4Gi"}


def test_non_always_restart_policy_is_a_regular_init_container() -> None:
    spec = {
        "containers": [container({"cpu": "1"})],
        "initContainers": [container({"cpu": "3"}, restartPolicy="OnFailure")],
    }
    assert printed(pod_requests(spec)) == {"cpu": "3"}


def test_pod_level_requests_replace_supported_names_only() -> None:
    spec = {
        "containers": [container({"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": 1})],
        "resources": {"requests": {"cpu": "4", "hugepages-2Mi": "2Mi", "nvidia.com/gpu": 8}},
    }
    assert printed(pod_requests(spec)) == {
        "cpu": "4",
        "hugepages-2Mi": "2Mi",
        "memory": "1Gi",
        "nvidia.com/gpu": "1",
    }


def test_pod_level_requests_without_a_supported_name_are_ignored() -> None:
    spec = {
        "containers": [container({"cpu": "1"})],
        "resources": {"requests": {"nvidia.com/gpu": 8}},
    }
    assert printed(pod_requests(spec)) == {"cpu": "1"}


def test_overhead_is_added() -> None:
    spec = {
        "containers": [container({"cpu": "1"})],
        "overhead": {"cpu": "250m", "memory": "120Mi"},
    }
    assert printed(pod_requests(spec)) == {"cpu": "1250m", "memory": "120Mi"}


def test_empty_pod() -> None:
    assert pod_requests({}) == {}
    assert pod_requests({"containers": [container()]}) == {}


def test_first_value_keeps_its_text_until_arithmetic() -> None:
    # Go deep-copies the first value, cached string included.
    assert printed(pod_requests({"containers": [container({"cpu": "1.500"})]})) == {"cpu": "1.500"}


def test_resource_list_accepts_yaml_scalars_and_drops_nulls() -> None:
    assert printed(resource_list({"cpu": 0.5, "memory": "1Gi", "x": None})) == {
        "cpu": "500m",
        "memory": "1Gi",
    }


# --- sum_requests ------------------------------------------------------------------------------


def test_coscheduling_upstream_minresources() -> None:
    # coscheduling_test: node x2 {500m, 1Gi} -> {1, 2Gi}; with dataset-initializer x1
    # {250m, 512Mi} -> {1.25, 2.5Gi}
    node = (rl(cpu="500m", memory="1Gi"), 2)
    assert printed(sum_requests([node])) == {"cpu": "1", "memory": "2Gi"}
    init = (rl(cpu="250m", memory="512Mi"), 1)
    assert printed(sum_requests([node, init])) == {"cpu": "1250m", "memory": "2560Mi"}
    assert sum_requests([node, init])["cpu"] == Quantity.parse("1.25")


def test_volcano_upstream_minresources() -> None:
    # volcano_test: 300m/1Gi x1 + 500m/0.5Gi x4 -> 2300m/3Gi
    per = [(rl(cpu="300m", memory="1Gi"), 1), (rl(cpu="500m", memory="0.5Gi"), 4)]
    assert printed(sum_requests(per)) == {"cpu": "2300m", "memory": "3Gi"}


def test_framework_upstream_102_replicas() -> None:
    # framework_test: two initializers and 100 nodes, 1 CPU and 4Gi each -> 102 / 408Gi
    each = rl(cpu="1", memory="4Gi")
    assert printed(sum_requests([(each, 1), (each, 1), (each, 100)])) == {
        "cpu": "102",
        "memory": "408Gi",
    }
    assert printed(sum_requests([(rl(memory="4Gi"), 102)])) == {"memory": "408Gi"}


def test_sum_format_comes_from_the_first_podset_with_the_resource() -> None:
    binary_first = sum_requests([(rl(memory="2Gi"), 1), (rl(memory="4G"), 1)])
    assert binary_first["memory"].canonical() == "6003402Ki"
    decimal_first = sum_requests([(rl(memory="4G"), 1), (rl(memory="2Gi"), 1)])
    assert decimal_first["memory"].canonical() == "6147483648"
    # a zero addend (count 0) leaves the total zero, so the next PodSet's format wins
    skipped = sum_requests([(rl(memory="4G"), 0), (rl(memory="2Gi"), 1)])
    assert skipped["memory"].format is Format.BINARY_SI


def test_sum_of_nothing_is_empty() -> None:
    assert sum_requests([]) == {}
    assert sum_requests([({}, 3)]) == {}


def test_second_podgroup_sees_multiplied_big_values() -> None:
    per = [(rl(cpu="500m", memory="0.5Gi"), 4)]
    first = sum_requests(per)
    second = sum_requests(after_podgroup_build(per))
    assert printed(first) == {"cpu": "2", "memory": "2Gi"}
    # 0.5Gi is an inf.Dec in Go and is multiplied in place; 500m is int64 and is not
    assert printed(second) == {"cpu": "2", "memory": "8Gi"}


def test_doctests() -> None:
    result = doctest.testmod(podrequests, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
    assert result.attempted > 0
