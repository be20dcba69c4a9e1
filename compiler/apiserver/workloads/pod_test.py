"""Pod spec rules whose shape is surprising; each was checked against the Go oracle."""

from __future__ import annotations

from typing import Any

from compiler.apiserver.workloads import validate_pod


def pod(**spec: Any) -> dict[str, Any]:
    containers = spec.pop("containers", [{"name": "c", "image": "i"}])
    return {"metadata": {"name": "p"}, "spec": {"containers": containers, **spec}}


def texts(obj: dict[str, Any]) -> list[str]:
    return [str(e) for e in validate_pod(obj)]


def test_sub_path_errors_name_no_index() -> None:
    mounts = [{"name": "v", "mountPath": "/v", "subPath": "/abs"}]
    obj = pod(
        containers=[{"name": "c", "image": "i", "volumeMounts": mounts}], volumes=[{"name": "v"}]
    )
    assert texts(obj) == [
        'spec.containers[0].volumeMounts.subPath: Invalid value: "/abs": must be a relative path'
    ]
    # ... but the error is found at the mount's own subPath, to locate it in a file
    (error,) = validate_pod(obj)
    assert error.path == ("spec", "containers", 0, "volumeMounts", 0, "subPath")


def test_init_container_host_ports_are_checked_one_container_at_a_time() -> None:
    port = {"containerPort": 80, "hostPort": 80}
    obj = pod(
        initContainers=[
            {"name": "a", "image": "i", "ports": [port]},
            {"name": "b", "image": "i", "ports": [port, port]},
        ]
    )
    assert texts(obj) == ['spec.initContainers[0].ports[1].hostPort: Duplicate value: "TCP//80"']


def test_requests_are_rounded_up_to_a_milli_unit() -> None:
    resources = {"requests": {"cpu": "100u"}, "limits": {"cpu": "0"}}
    obj = pod(containers=[{"name": "c", "image": "i", "resources": resources}])
    assert texts(obj) == [
        'spec.containers[0].resources.requests: Invalid value: "1m": must be less than or'
        " equal to cpu limit of 0"
    ]


def test_a_regular_containers_restart_policy_is_dropped_not_refused() -> None:
    obj = pod(containers=[{"name": "c", "image": "i", "restartPolicy": "Always"}])
    assert texts(obj) == []


def test_hugepages_need_cpu_or_memory() -> None:
    resources = {"limits": {"hugepages-2Mi": "2Mi"}}
    obj = pod(containers=[{"name": "c", "image": "i", "resources": resources}])
    assert texts(obj) == [
        "spec.containers[0].resources: Forbidden: HugePages require cpu or memory"
    ]


def test_a_toleration_value_joins_its_reasons() -> None:
    obj = pod(tolerations=[{"key": "k", "value": "-" + "x" * 63}])
    (text,) = texts(obj)
    assert (
        text.startswith('spec.tolerations[0].operator: Invalid value: "-xxx')
        and ": must be no more than 63 characters;a valid label must" in text
    )


def test_host_network_needs_equal_host_ports_in_a_pod() -> None:
    obj = pod(
        hostNetwork=True,
        containers=[{"name": "c", "image": "i", "ports": [{"containerPort": 80, "hostPort": 81}]}],
    )
    assert texts(obj) == [
        "spec.containers[0].ports[0].hostPort: Invalid value: 81: must match `containerPort`"
        " when `hostNetwork` is true"
    ]
    obj["spec"]["containers"][0]["ports"][0].pop("hostPort")
    assert texts(obj) == []  # defaulted to the container port


def test_pod_level_requests_cover_the_containers_and_sidecars() -> None:
    sidecar: dict[str, Any] = {"name": "s", "image": "i", "restartPolicy": "Always"}
    sidecar["resources"] = {"requests": {"cpu": "1"}}
    main = {"name": "c", "image": "i", "resources": {"requests": {"cpu": "2"}}}
    obj = pod(containers=[main], initContainers=[sidecar], resources={"requests": {"cpu": "2"}})
    assert texts(obj) == [
        'spec.resources.requests[cpu]: Invalid value: "2": must be greater than or equal to'
        " aggregate container requests of 3"
    ]


def test_pod_level_limits_default_the_pods_requests() -> None:
    main = {"name": "c", "image": "i", "resources": {"requests": {"cpu": "2"}}}
    obj = pod(containers=[main], resources={"limits": {"cpu": "1", "nvidia.com/gpu": "1"}})
    # requests default to the containers' cpu (2) which exceeds the pod's limit of 1
    assert texts(obj) == [
        'spec.resources.limits[nvidia.com/gpu]: Unsupported value: "nvidia.com/gpu":'
        ' supported values: "cpu", "hugepages-", "memory"',
        'spec.resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1',
    ]


def test_privilege_escalation_off_with_privileged_or_sys_admin_shows_the_internal_struct() -> None:
    # the value is the internal core.SecurityContext as JSON: Go field names, field order
    context = {
        "capabilities": {"add": ["CAP_SYS_ADMIN"], "drop": []},
        "allowPrivilegeEscalation": False,
        "seLinuxOptions": {"level": "s0"},
        "seccompProfile": {"type": "RuntimeDefault"},
        "runAsUser": 5,
        "privileged": True,
    }
    shown = (
        '{"Capabilities":{"Add":["CAP_SYS_ADMIN"],"Drop":[]},"Privileged":true,'
        '"SELinuxOptions":{"User":"","Role":"","Type":"","Level":"s0"},"WindowsOptions":null,'
        '"RunAsUser":5,"RunAsGroup":null,"RunAsNonRoot":null,"ReadOnlyRootFilesystem":null,'
        '"AllowPrivilegeEscalation":false,"ProcMount":null,'
        '"SeccompProfile":{"Type":"RuntimeDefault","LocalhostProfile":null},"AppArmorProfile":null}'
    )
    obj = pod(containers=[{"name": "c", "image": "i", "securityContext": context}])
    at = "spec.containers[0].securityContext: Invalid value: "
    assert texts(obj) == [
        at + shown + ": cannot set `allowPrivilegeEscalation` to false and `privileged` to true",
        at + shown + ": cannot set `allowPrivilegeEscalation` to false and `capabilities.Add`"
        " CAP_SYS_ADMIN",
    ]
    # "SYS_ADMIN" is not the capability the rule looks for; escalation allowed: no rule
    context = {"capabilities": {"add": ["SYS_ADMIN"]}, "allowPrivilegeEscalation": False}
    assert texts(pod(containers=[{"name": "c", "image": "i", "securityContext": context}])) == []
    context = {"privileged": True, "allowPrivilegeEscalation": True}
    assert texts(pod(containers=[{"name": "c", "image": "i", "securityContext": context}])) == []


def test_bidirectional_mount_propagation_needs_a_privileged_container() -> None:
    mounts = [{"name": "v", "mountPath": "/v", "mountPropagation": "Bidirectional"}]
    plain = {"name": "c", "image": "i", "volumeMounts": mounts}
    obj = pod(containers=[plain], volumes=[{"name": "v"}])
    assert texts(obj) == [
        "spec.containers[0].volumeMounts.mountPropagation: Forbidden: Bidirectional mount"
        " propagation is available only to privileged containers"
    ]
    (error,) = validate_pod(obj)  # found at the mount's own field
    assert error.path == ("spec", "containers", 0, "volumeMounts", 0, "mountPropagation")
    privileged = {**plain, "securityContext": {"privileged": True}}
    assert texts(pod(containers=[privileged], volumes=[{"name": "v"}])) == []


def test_resize_policies_each_resource_once_and_not_restarting_in_a_never_pod() -> None:
    policies = [
        {"resourceName": "cpu", "restartPolicy": "RestartContainer"},
        {"resourceName": "gpu", "restartPolicy": "Sometimes"},
        {"resourceName": "cpu", "restartPolicy": "NotRequired"},
    ]
    obj = pod(containers=[{"name": "c", "image": "i", "resizePolicy": policies}])
    at = "spec.containers[0].resizePolicy"
    assert texts(obj) == [
        f'{at}: Unsupported value: "gpu": supported values: "cpu", "memory"',
        f'{at}: Unsupported value: "Sometimes": supported values: "NotRequired",'
        ' "RestartContainer"',
        f'{at}[2]: Duplicate value: "cpu"',
    ]
    never = pod(containers=[{"name": "c", "image": "i", "resizePolicy": policies[:1]}])
    never["spec"]["restartPolicy"] = "Never"
    assert texts(never) == [
        f"{at}: Invalid value: \"RestartContainer\": must be 'NotRequired' when `restartPolicy`"
        " is 'Never'"
    ]


def test_nfs_and_csi_volume_sources() -> None:
    obj = pod(volumes=[{"name": "v", "nfs": {"server": "s", "path": "data"}}])
    assert texts(obj) == [
        'spec.volumes[0].nfs.path: Invalid value: "data": must be an absolute path'
    ]
    csi = {"driver": "a" * 64 + ".com", "nodePublishSecretRef": {"name": "Bad_Name"}}
    got = texts(pod(volumes=[{"name": "v", "csi": csi}]))
    # the driver's name is checked lowercased; a bad secret name is reported at csi.name
    assert got[0] == "spec.volumes[0].csi.driver: Too long: may not be more than 63 bytes"
    assert got[1].startswith('spec.volumes[0].csi.name: Invalid value: "Bad_Name": a lowercase')
    assert len(got) == 2
    assert texts(pod(volumes=[{"name": "v", "csi": {"driver": "Example.COM"}}])) == []


def test_the_supplemental_groups_and_selinux_change_policies() -> None:
    context = {"supplementalGroupsPolicy": "Weird", "seLinuxChangePolicy": "MountOption"}
    assert texts(pod(securityContext=context)) == [
        'spec.securityContext.supplementalGroupsPolicy: Unsupported value: "Weird": supported'
        ' values: "Merge", "Strict"',
        # a new Pod under v1.34's default gates (SELinuxMount off): Recursive only
        'spec.securityContext.seLinuxChangePolicy: Unsupported value: "MountOption": supported'
        ' values: "Recursive"',
    ]
    context = {"supplementalGroupsPolicy": "Strict", "seLinuxChangePolicy": "Recursive"}
    assert texts(pod(securityContext=context)) == []


def test_match_label_keys_merged_into_the_selector_and_found_twice() -> None:
    # a Pod whose selector got {app, In, [x]} from matchLabelKeys (Pod strategy) on top
    # of a written app label: the key is found a second time, at the key's index
    selector = {
        "matchLabels": {"app": "x"},
        "matchExpressions": [{"key": "app", "operator": "In", "values": ["x"]}],
    }
    term = {
        "labelSelector": selector,
        "topologyKey": "zone",
        "matchLabelKeys": ["other", "app"],
        "mismatchLabelKeys": ["other", "Bad Key"],
    }
    obj = pod(affinity={"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}})
    at = "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
    assert texts(obj) == [
        f'{at}.mismatchLabelKeys[1]: Invalid value: "Bad Key": name part must consist of '
        "alphanumeric characters, '-', '_' or '.', and must start and end with an "
        "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used "
        "for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        f'{at}[1]: Invalid value: "app": exists in both matchLabelKeys and labelSelector',
        f'{at}.matchLabelKeys[0]: Invalid value: "other": exists in both matchLabelKeys '
        "and mismatchLabelKeys",
    ]


def test_label_keys_without_a_selector_are_forbidden() -> None:
    spread = {
        "maxSkew": 1,
        "topologyKey": "zone",
        "whenUnsatisfiable": "DoNotSchedule",
        "matchLabelKeys": ["app"],
    }
    assert texts(pod(topologySpreadConstraints=[spread])) == [
        "spec.topologySpreadConstraints[0].matchLabelKeys: Forbidden: must not be specified "
        "when labelSelector is not set"
    ]
