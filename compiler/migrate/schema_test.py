"""A v1 job the API server would have refused is an input error (exit 2) at file:line:col,
in the API server's words, never a traceback nor a coerced value (issue 25 finding 4,
issue 29 point 8)."""

from __future__ import annotations

from pathlib import Path

import pytest

from compiler.cli import main
from compiler.migrate.schema import plain

ROOT = Path(__file__).resolve().parents[2]
TF = (ROOT / "tests" / "migrate" / "cases" / "tf-workers-shim" / "job.yaml").read_text()
VOLCANO = (ROOT / "tests" / "migrate" / "cases" / "volcano-tensorflow" / "job.yaml").read_text()
MPI = (ROOT / "tests" / "migrate" / "cases" / "mpi-v2beta1-pi" / "job.yaml").read_text()


def _nested(depth: int) -> str:
    return TF.replace("  runPolicy:\n", "  runPolicy:\n    x: " + "[" * depth + "]" * depth + "\n")


def _integer(field: str, kind: str) -> str:
    return f'{field}: Invalid value: "{kind}": {field} in body must be of type integer: "{kind}"'


WORKER = "spec.tfReplicaSpecs.Worker"
CASES = {
    "replicas-string": (
        TF.replace("replicas: 3", 'replicas: "3"'),
        "11:7: TFJob ml/multi-worker: " + _integer(f"{WORKER}.replicas", "string"),
    ),
    "replicas-word": (
        TF.replace("replicas: 3", "replicas: two"),
        "11:7: TFJob ml/multi-worker: " + _integer(f"{WORKER}.replicas", "string"),
    ),
    "replicas-fraction": (
        TF.replace("replicas: 3", "replicas: 2.5"),
        f'11:7: TFJob ml/multi-worker: {WORKER}.replicas: Invalid value: "float64": '
        f'{WORKER}.replicas in body must be of type int32: "float64"',
    ),
    "template-string": (
        TF.replace(
            "      template:\n        spec:", "      template: pod\n      x:\n        spec:"
        ),
        f'13:7: TFJob ml/multi-worker: {WORKER}.template: Invalid value: "string": '
        f'{WORKER}.template in body must be of type object: "string"',
    ),
    "container-string": (
        TF.replace(
            "            - name: tensorflow\n", "            - tensorflow\n            - name: t\n"
        ),
        f"16:15: TFJob ml/multi-worker: {WORKER}.template.spec.containers[0]: "
        'Invalid value: "string"',
    ),
    "run-policy-string": (
        TF.replace("  runPolicy:\n    cleanPodPolicy: None\n", "  runPolicy: None\n"),
        '7:3: TFJob ml/multi-worker: spec.runPolicy: Invalid value: "string": '
        'spec.runPolicy in body must be of type object: "string"',
    ),
    "metadata-number": (
        TF.replace("metadata:\n  name: multi-worker\n  namespace: ml\n", "metadata: 5\n"),
        "3:1: TFJob default/: TFJob in version "
        '"v1" cannot be handled as a TFJob: json: cannot unmarshal number into Go value of '
        "type v1.ObjectMeta",
    ),
    "port-infinite": (
        TF.replace(
            "              command:",
            "              ports: [{containerPort: .inf}]\n              command:",
        ),
        f"{WORKER}.template.spec.containers[0].ports[0].containerPort: Invalid value:",
    ),
    "volcano-replicas-string": (
        VOLCANO.replace("replicas: 2", 'replicas: "2"'),
        "17:7: Job default/vctf: " + _integer("spec.tasks[1].replicas", "string"),
    ),
    "mpi-slots-string": (
        MPI.replace("slotsPerWorker: 1", 'slotsPerWorker: "1"'),
        _integer("spec.slotsPerWorker", "string"),
    ),
    "nested-200": (_nested(200), "8:106: nested more than 100 levels deep"),
    "nested-3000": (_nested(3000), "8:106: nested more than 100 levels deep"),
    "scalar-document": (TF + "---\nfoo\n", "27:1: a Kubernetes object must be a YAML mapping"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_refused_by_the_v1_api_server(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text, expected = CASES[name]
    assert text not in (TF, VOLCANO, MPI)  # the mutation applied
    path = tmp_path / "job.yaml"
    path.write_text(text, encoding="utf-8")
    assert main(["migrate", str(path), "-o", str(tmp_path / "out")]) == 2
    _, err = capsys.readouterr()
    lines = err.splitlines()
    assert lines, err
    assert all(line.startswith(f"{path}:") for line in lines), err
    assert any(expected in line for line in lines), err
    assert not (tmp_path / "out").exists()


def test_the_seeds_are_valid(tmp_path: Path) -> None:
    """The unchanged jobs pass the check (the mutations above are what fails)."""
    for index, text in enumerate((TF, VOLCANO, MPI)):
        path = tmp_path / f"{index}.yaml"
        path.write_text(text, encoding="utf-8")
        assert main(["migrate", str(path), "-o", str(tmp_path / f"out{index}")]) in (0, 1)


def test_plain_copies_without_recursion() -> None:
    deep: list[object] = []
    node = deep
    for _ in range(5000):
        node.append([])
        node = node[0]  # type: ignore[assignment]
    copied, depth = plain({"a": deep})["a"], 0
    while copied:
        copied, depth = copied[0], depth + 1
    assert depth == 5000
    assert type(plain({"n": True})["n"]) is bool


def test_a_runtime_offered_for_reuse_is_checked_against_its_crd(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runtime = tmp_path / "runtime.yaml"
    runtime.write_text(
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: ClusterTrainingRuntime\n"
        "metadata: {name: a}\nspec: {template: 5, mlPolicy: []}\n"
    )
    job = tmp_path / "job.yaml"
    job.write_text(TF)
    assert main(["migrate", str(runtime), str(job), "-o", "-"]) == 2
    _, err = capsys.readouterr()
    assert (
        f'{runtime}:4:8: ClusterTrainingRuntime a: spec.template: Invalid value: "integer": '
        'spec.template in body must be of type object: "integer"'
    ) in err.splitlines()
