"""The load stage end to end, with the real Trainer v2.3.0 CRDs from the upstream cache.

Expected messages are the API server's (checked against apiextensions-apiserver v0.36.2).
"""

from __future__ import annotations

import io
import sys
from pathlib import Path
from typing import Any

import pytest

import compiler.apiserver.crd_rules as crd_rules
from compiler.apiserver.crds import trainer_crds
from compiler.errors import InputError
from compiler.load.loader import LoadResult, load, load_collect, load_texts
from compiler.upstream.artifacts import upstream

FIXTURES = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "load"
GROUP = "trainer.kubeflow.org/v1alpha1"
NOT_CHECKED = f"Invalid value: null: {crd_rules.NOT_CHECKED}"  # a schema error stopped CEL


def load_one(text: str, name: str = "t.yaml") -> LoadResult:
    return load_texts([(name, text)])


def messages(*texts: str) -> list[str]:
    with pytest.raises(InputError) as error:
        load_texts([(f"f{i}.yaml", text) for i, text in enumerate(texts)])
    return [str(p) for p in error.value.problems]


def trainjob(spec: str, meta: str = "  name: job\n") -> str:
    return f"apiVersion: {GROUP}\nkind: TrainJob\nmetadata:\n{meta}spec:\n{spec}"


RUNTIME_HEAD = f"apiVersion: {GROUP}\nkind: ClusterTrainingRuntime\nmetadata:\n  name: rt\nspec:\n"
POD = """  template:
    spec:
      replicatedJobs:
        - name: node
          template:
            spec:
              template:
                spec:
                  containers:
                    - name: node
                      image: busybox
"""


# --- valid upstream inputs --------------------------------------------------------------


def upstream_files() -> list[str]:
    root = upstream().trainer_dir
    return [str(root / "manifests" / "base" / "runtimes"), str(root / "examples" / "yaml")]


def test_every_upstream_runtime_and_example_loads() -> None:
    result = load(upstream_files())
    kinds = {m.kind for m in result.objects}
    assert kinds == {"ClusterTrainingRuntime", "TrainingRuntime", "TrainJob"}
    assert len(result.objects) >= 15
    torch = next(m for m in result.objects if m.name == "torch-distributed")
    node = torch.data["spec"]["template"]["spec"]["replicatedJobs"][0]
    assert node["groupName"] == "default" and node["replicas"] == 1


# --- CRD defaults (spec §1.3) ---------------------------------------------------------------


def test_trainjob_defaults() -> None:
    job = load_one(trainjob("  runtimeRef:\n    name: torch-distributed\n")).objects[0]
    spec = job.data["spec"]
    assert spec["suspend"] is False
    assert spec["managedBy"] == "trainer.kubeflow.org/trainjob-controller"
    assert spec["runtimeRef"] == {
        "name": "torch-distributed",
        "apiGroup": "trainer.kubeflow.org",
        "kind": "ClusterTrainingRuntime",
    }
    assert job.data["metadata"]["namespace"] == "default"
    # defaulted nodes have no position of their own: they point at their parent
    assert str(job.locate(("spec", "runtimeRef", "kind"))) == "t.yaml:6:3"
    assert str(job.locate(("spec", "suspend"))) == "t.yaml:5:1"


def test_trainjob_defaults_only_where_the_parent_exists() -> None:
    text = trainjob(
        "  runtimeRef: {name: x}\n"
        "  initializer:\n    dataset: {secretRef: {}}\n    model: {storageUri: 'hf://m'}\n"
        "  trainer:\n    env:\n      - name: A\n        valueFrom: {secretKeyRef: {key: k}}\n"
    )
    spec = load_one(text).objects[0].data["spec"]
    assert spec["initializer"]["dataset"]["secretRef"] == {"name": ""}
    assert "secretRef" not in spec["initializer"]["model"]
    assert spec["trainer"]["env"][0]["valueFrom"]["secretKeyRef"] == {"key": "k", "name": ""}


def test_runtime_defaults() -> None:
    text = RUNTIME_HEAD + (
        "  podGroupPolicy:\n    coscheduling: {}\n"
        "  mlPolicy:\n    mpi: {}\n"
        + POD
        + "                      ports: [{containerPort: 29500}]\n"
        + "      failurePolicy: {}\n"
    )
    spec = load_one(text).objects[0].data["spec"]
    assert spec["podGroupPolicy"]["coscheduling"] == {"scheduleTimeoutSeconds": 60}
    assert spec["mlPolicy"]["mpi"] == {
        "mpiImplementation": "OpenMPI",
        "numProcPerNode": 1,
        "runLauncherAsNode": False,
        "sshAuthMountPath": "/root/.ssh",
    }
    job = spec["template"]["spec"]["replicatedJobs"][0]
    assert job["groupName"] == "default" and job["replicas"] == 1
    container = job["template"]["spec"]["template"]["spec"]["containers"][0]
    assert container["ports"] == [{"containerPort": 29500, "protocol": "TCP"}]
    assert spec["template"]["spec"]["failurePolicy"] == {"restartStrategy": "Recreate"}
    volcano = load_one(
        RUNTIME_HEAD + "  podGroupPolicy:\n    volcano: {networkTopology: {}}\n" + POD
    )
    topology = volcano.objects[0].data["spec"]["podGroupPolicy"]["volcano"]["networkTopology"]
    assert topology == {"highestTierAllowed": 1, "mode": "hard"}


# --- strictness: unknown fields at several depths ---------------------------------------


def test_unknown_fields_at_several_depths() -> None:
    assert messages((FIXTURES / "bad-runtime.yaml").read_text()) == [
        f"f0.yaml:1:1: ClusterTrainingRuntime bad-runtime: <nil>: {NOT_CHECKED}",
        "f0.yaml:5:3: ClusterTrainingRuntime bad-runtime: metadata.namespace: Forbidden: not allowed on this type",
        'f0.yaml:9:7: ClusterTrainingRuntime bad-runtime: spec.mlPolicy.mpi.mpiImplementation: Unsupported value: "Intel": supported values: "OpenMPI", ""',
        "f0.yaml:22:23: ClusterTrainingRuntime bad-runtime: "
        "spec.template.spec.replicatedJobs[0].template.spec.template.spec.containers[0].resourcez: "
        'ClusterTrainingRuntime in version "v1alpha1" cannot be handled as a ClusterTrainingRuntime: '
        'strict decoding error: unknown field "spec.template.spec.replicatedJobs[0].template.spec.template.spec.containers[0].resourcez"',
    ]


def test_bad_trainjob_reports_everything_at_once() -> None:
    found = messages((FIXTURES / "bad-job.yaml").read_text())
    assert found == [
        f"f0.yaml:1:1: TrainJob default/bad: <nil>: {NOT_CHECKED}",
        # the API server's strict decoding error lists every unknown field, at the first
        'f0.yaml:6:3: TrainJob default/bad: metadata.bogusMeta: TrainJob in version "v1alpha1" '
        'cannot be handled as a TrainJob: strict decoding error: unknown field "metadata.bogusMeta", '
        'unknown field "spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[0].template.spec.template.spec.hostNetwork", '
        'unknown field "spec.trainer.numNodez"',
        'f0.yaml:10:3: TrainJob default/bad: spec.suspend: Invalid value: "string": spec.suspend in body must be of type boolean: "string"',
        'f0.yaml:12:5: TrainJob default/bad: spec.trainer.numNodes: Invalid value: "string": spec.trainer.numNodes in body must be of type integer: "string"',
        'f0.yaml:13:5: TrainJob default/bad: spec.trainer.numNodez: unknown field "spec.trainer.numNodez"',
        'f0.yaml:16:9: TrainJob default/bad: spec.trainer.resourcesPerNode.limits.cpu: Invalid value: "number": spec.trainer.resourcesPerNode.limits.cpu in body must be of type integer,string: "number"',
        'f0.yaml:16:9: TrainJob default/bad: <nil>: Invalid value: "": "spec.trainer.resourcesPerNode.limits.cpu" must validate at least one schema (anyOf)',
        'f0.yaml:16:9: TrainJob default/bad: spec.trainer.resourcesPerNode.limits.cpu: Invalid value: "number": spec.trainer.resourcesPerNode.limits.cpu in body must be of type integer: "number"',
        'f0.yaml:16:9: TrainJob default/bad: <nil>: Invalid value: "": Checked value must be of type integer (default format) in spec.trainer.resourcesPerNode.limits.cpu',
        "f0.yaml:29:25: TrainJob default/bad: "
        "spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[0].template.spec.template.spec.hostNetwork: "
        "unknown field "
        '"spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[0].template.spec.template.spec.hostNetwork"',
    ]


def test_yaml_11_booleans_are_booleans() -> None:
    # `suspend: yes` is what kubectl sends as true; `suspend: "yes"` is a string (see above)
    job = load_one(trainjob("  runtimeRef: {name: x}\n  suspend: yes\n")).objects[0]
    assert job.data["spec"]["suspend"] is True


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("4", True),
        ("500m", True),
        ("8Gi", True),
        ("2", True),
        ("1.5", False),
        ("'1.5'", True),
        ("abc", False),
    ],
)
def test_int_or_string_quantities(value: str, ok: bool) -> None:
    text = trainjob(
        f"  runtimeRef: {{name: x}}\n  trainer:\n    resourcesPerNode:\n      limits: {{cpu: {value}}}\n"
    )
    if ok:
        limits = load_one(text).objects[0].data["spec"]["trainer"]["resourcesPerNode"]["limits"]
        assert limits["cpu"] in (4, 2, "500m", "8Gi", "1.5", "4")
    else:
        assert all("limits.cpu" in m for m in messages(text) if not m.endswith(NOT_CHECKED))


def test_int_or_string_ports_in_the_pod_template() -> None:
    probe = "                      readinessProbe: {httpGet: {port: http}}\n"
    probe += "                      livenessProbe: {tcpSocket: {port: 8080}}\n"
    container = load_one(RUNTIME_HEAD + POD + probe).objects[0].data["spec"]["template"]["spec"]
    container = container["replicatedJobs"][0]["template"]["spec"]["template"]["spec"][
        "containers"
    ][0]
    assert container["readinessProbe"]["httpGet"]["port"] == "http"
    assert container["livenessProbe"]["tcpSocket"]["port"] == 8080


def test_list_map_keys_must_be_unique() -> None:
    text = trainjob(
        "  runtimeRef: {name: x}\n  trainer:\n    env:\n      - {name: A, value: '1'}\n      - {name: A}\n"
    )
    assert messages(text) == [
        'f0.yaml:10:9: TrainJob default/job: spec.trainer.env[1]: Duplicate value: {"name":"A"}'
    ]


# --- metadata ---------------------------------------------------------------------------


def test_metadata_rules() -> None:
    assert messages(trainjob("  runtimeRef: {name: x}\n", meta="  labels: {a: b}\n")) == [
        f"f0.yaml:1:1: TrainJob default/(unnamed): <nil>: {NOT_CHECKED}",
        "f0.yaml:3:1: TrainJob default/(unnamed): metadata.name: Required value: name or generateName is required",
    ]
    # the CRD's CEL rule on the name runs too (a bad name does not stop CEL)
    cel, message = messages(trainjob("  runtimeRef: {name: x}\n", meta="  name: Bad_Name\n"))
    assert cel == (
        "f0.yaml:1:1: TrainJob default/Bad_Name: "
        '<nil>: Invalid value: "object": metadata.name must match RFC 1035 DNS label format'
    )
    assert message.startswith(
        'f0.yaml:4:3: TrainJob default/Bad_Name: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain'
    )
    [message] = messages(
        trainjob("  runtimeRef: {name: x}\n", meta="  name: j\n  namespace: Team.A\n")
    )
    assert 'metadata.namespace: Invalid value: "Team.A": a lowercase RFC 1123 label' in message


def test_metadata_type_errors_stop_the_object_like_a_decode_error() -> None:
    text = trainjob(
        "  runtimeRef: {name: x}\n  bogus: 1\n", meta="  name: j\n  labels:\n    version: 1\n"
    )
    assert messages(text) == [
        'f0.yaml:6:5: TrainJob default/j: TrainJob in version "v1alpha1" cannot be handled as a TrainJob: '
        "json: cannot unmarshal number into Go struct field ObjectMeta.labels of type string"
    ]


def test_namespace_is_defaulted_for_namespaced_kinds_only() -> None:
    result = load_texts(
        [("t.yaml", trainjob("  runtimeRef: {name: x}\n") + "---\n" + RUNTIME_HEAD + POD)],
        default_namespace="ml",
    )
    assert [m.namespace for m in result.objects] == ["ml", None]


def test_trainjob_status_is_dropped_on_create() -> None:
    text = trainjob("  runtimeRef: {name: x}\n") + "status:\n  conditions: []\n"
    assert "status" not in load_one(text).objects[0].data


# --- recognising objects -----------------------------------------------------------------


def test_other_kinds_are_kept_aside_unchanged() -> None:
    result = load([str(FIXTURES / "tree")])
    assert [(m.kind, m.namespace, m.name) for m in result.objects] == [
        ("TrainingRuntime", "team-a", "small"),
        ("TrainJob", "team-a", "uses-small"),
        ("TrainJob", "default", "default-ns"),
    ]
    [policy] = result.others
    assert policy.kind == "ValidatingAdmissionPolicy"
    assert policy.data["metadata"] == {"name": "max-nodes"}  # not defaulted
    assert str(policy.locate(("spec", "validations", 0, "expression"))).endswith("policy.yaml:13:7")


def test_documents_that_are_not_objects() -> None:
    assert messages(
        "- a\n- b\n", "kind: TrainJob\n", f"apiVersion: {GROUP}\nkind: TrainingJob\n"
    ) == [
        "f0.yaml:1:1: a Kubernetes object must be a YAML mapping",
        "f1.yaml:1:1: not a Kubernetes object: apiVersion must be set (a non-empty string)",
        'f2.yaml:2:1: TrainingJob (unnamed): no matches for kind "TrainingJob" in version "trainer.kubeflow.org/v1alpha1"',
    ]


def test_v1_list_is_expanded() -> None:
    text = f"apiVersion: v1\nkind: List\nitems:\n  - apiVersion: {GROUP}\n    kind: TrainJob\n    metadata: {{name: a}}\n    spec: {{runtimeRef: {{name: x}}}}\n"
    [job] = load_one(text).objects
    assert job.name == "a"
    assert str(job.locate(("metadata", "name"))) == "t.yaml:6:16"


def test_duplicate_objects_name_both_places() -> None:
    job = trainjob("  runtimeRef: {name: x}\n")
    assert messages(job, "# other file\n" + job) == [
        "f1.yaml:5:3: TrainJob default/job: duplicate object: TrainJob 'job' is also defined at f0.yaml:4:3"
    ]
    # same name in another namespace is fine
    other = trainjob("  runtimeRef: {name: x}\n", meta="  name: job\n  namespace: b\n")
    assert len(load_texts([("a.yaml", job), ("b.yaml", other)]).objects) == 2


def test_all_problems_of_all_files_are_collected_and_sorted() -> None:
    with pytest.raises(InputError) as error:
        load(
            [
                str(FIXTURES / "bad-runtime.yaml"),
                str(FIXTURES / "bad-job.yaml"),
                str(FIXTURES / "missing.yaml"),
            ]
        )
    locations = [p.location for p in error.value.problems]
    assert len(locations) == 15  # 12 schema problems, 2 "not checked", the missing file
    assert locations == sorted(locations, key=lambda loc: (loc.file, loc.line, loc.column))  # type: ignore[union-attr]
    assert (
        str(error.value.problems[-1]) == f"{FIXTURES / 'missing.yaml'}: no such file or directory"
    )
    assert error.value.exit_code == 2


def test_yaml_errors_are_input_errors() -> None:
    assert messages("a: [\n", trainjob("  runtimeRef: {name: x}\n  suspend: 1\n"))[0].startswith(
        "f0.yaml:2:1: invalid YAML"
    )


def test_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    stream = io.TextIOWrapper(io.BytesIO(trainjob("  runtimeRef: {name: x}\n").encode()))
    monkeypatch.setattr(sys, "stdin", stream)
    [job] = load(["-"]).objects
    assert str(job.locate(("metadata", "name"))) == "<stdin>:4:3"


def test_crds_are_compiled_once() -> None:
    assert trainer_crds() is trainer_crds()
    crd = trainer_crds().get(GROUP, "ClusterTrainingRuntime")
    assert crd is not None and not crd.namespaced and not crd.status_subresource
    job = trainer_crds().get(GROUP, "TrainJob")
    assert job is not None and job.namespaced and job.status_subresource


def _walk(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + sum(_walk(v) for v in value.values())
    if isinstance(value, list):
        return 1 + sum(_walk(v) for v in value)
    return 1


def test_loading_is_deterministic() -> None:
    first = load(upstream_files())
    second = load(upstream_files())
    assert [m.data for m in first.objects] == [m.data for m in second.objects]
    assert sum(_walk(m.data) for m in first.objects) > 500


def test_load_collect_returns_problems_and_keeps_rejected_objects_apart() -> None:
    result, problems = load_collect([str(FIXTURES / "bad-runtime.yaml"), str(FIXTURES / "tree")])
    assert [m.name for m in result.rejected] == ["bad-runtime"]
    assert "bad-runtime" not in [m.name for m in result.objects]
    assert len(result.objects) == 3
    assert problems[0].message == NOT_CHECKED  # then the 3 schema problems
    assert len(problems) == 4
