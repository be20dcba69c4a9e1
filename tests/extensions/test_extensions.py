"""The extensions end to end: enabling per cluster, check/render/explain, trainjobs delivery,
and ``make extension-conformance`` against the v1 operators' code."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.extensions import conformance
from tests.test_cli import EXAMPLE, trainc

PROJECT = """\
inputs:
  runtimes: [runtimes/]
  jobs: [jobs/]
clusters:
  - name: prod
    defaultNamespace: team
    extensions: [{extensions}]
"""

RUNTIME = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata:
  name: elastic
  namespace: team
  annotations:
    trainc.dev/extensions: elastic-torch,yunikorn
    elastic-torch.trainc.dev/min-nodes: "2"
    elastic-torch.trainc.dev/max-nodes: "{max_nodes}"
    yunikorn.trainc.dev/queue: root.ml
spec:
  mlPolicy:
    numNodes: 1
    torch: {{}}
  template:
    spec:
      replicatedJobs:
        - name: node
          template:
            metadata:
              labels:
                trainer.kubeflow.org/trainjob-ancestor-step: trainer
            spec:
              template:
                spec:
                  containers:
                    - name: node
                      image: acme/pt:2
                      resources:
                        requests: {{cpu: "2", memory: 8Gi}}
"""

TRAINJOB = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: resnet
  namespace: team
spec:
  runtimeRef:
    kind: TrainingRuntime
    name: elastic
  trainer:
    numNodes: 3
"""


def project(tmp_path: Path, extensions: str, max_nodes: str = "4") -> Path:
    (tmp_path / "runtimes").mkdir()
    (tmp_path / "jobs").mkdir()
    (tmp_path / "trainc.yaml").write_text(PROJECT.format(extensions=extensions))
    (tmp_path / "runtimes" / "elastic.yaml").write_text(RUNTIME.format(max_nodes=max_nodes))
    (tmp_path / "jobs" / "resnet.yaml").write_text(TRAINJOB)
    return tmp_path


def jobset(stdout: str) -> dict[str, object]:
    docs = [d for d in yaml.safe_load_all(stdout) if d]
    found: dict[str, object] = next(d for d in docs if d["kind"] == "JobSet")
    return found


def test_enabled_extensions_render(tmp_path: Path) -> None:
    root = project(tmp_path, "elastic-torch, yunikorn")
    result = trainc("render", "--cluster", "prod", "-o", "-", cwd=root)
    assert result.returncode == 0, result.stderr
    spec = jobset(result.stdout)["spec"]
    pod = spec["replicatedJobs"][0]["template"]["spec"]["template"]  # type: ignore[index]
    env = {e["name"]: e.get("value") for e in pod["spec"]["containers"][0]["env"]}
    assert env["PET_NNODES"] == "2:4"
    assert env["PET_RDZV_ENDPOINT"] == "resnet-node-0-0.resnet:29500"
    assert "PET_NODE_RANK" not in env and "PET_MASTER_ADDR" not in env
    assert pod["spec"]["schedulerName"] == "yunikorn"
    assert pod["metadata"]["labels"]["queue"] == "root.ml"
    assert '"minMember":3' in pod["metadata"]["annotations"]["yunikorn.apache.org/task-groups"]


def test_a_cluster_that_does_not_enable_it_is_an_error_at_the_annotation(tmp_path: Path) -> None:
    root = project(tmp_path, "elastic-torch")
    result = trainc("render", "--cluster", "prod", "-o", "-", cwd=root)
    assert result.returncode == 2
    assert (
        "runtimes/elastic.yaml:7:5: TrainingRuntime team/elastic: "
        "metadata.annotations[trainc.dev/extensions]: extension yunikorn is not enabled"
    ) in result.stderr
    check = trainc("check", "--cluster", "prod", "--format", "json", cwd=root)
    assert check.returncode == 2
    assert '"rule": "extension"' in check.stdout


def test_with_paths_no_extension_is_enabled(tmp_path: Path) -> None:
    root = project(tmp_path, "elastic-torch, yunikorn")
    result = trainc("render", str(root / "runtimes"), str(root / "jobs"), "-o", "-", cwd=root)
    assert result.returncode == 2
    assert "with PATHs none is" in result.stderr


def test_check_locates_a_bad_parameter_and_a_bad_num_nodes(tmp_path: Path) -> None:
    root = project(tmp_path, "elastic-torch, yunikorn", max_nodes="x")
    result = trainc("render", "--cluster", "prod", "-o", "-", cwd=root)
    assert result.returncode == 2
    assert (
        "runtimes/elastic.yaml:9:5: TrainingRuntime team/elastic: "
        "metadata.annotations[elastic-torch.trainc.dev/max-nodes]: extension elastic-torch "
        "parameter max-nodes: 'x' is not an integer"
    ) in result.stdout + result.stderr
    check = trainc("check", "--cluster", "prod", cwd=root)
    assert check.returncode == 2
    assert "error[extension]" in check.stdout and "elastic.yaml:9:5" in check.stdout
    (root / "runtimes" / "elastic.yaml").write_text(RUNTIME.format(max_nodes="2"))
    result = trainc("render", "--cluster", "prod", "-o", "-", cwd=root)
    assert result.returncode == 2
    assert (
        "jobs/resnet.yaml:11:5: TrainJob team/resnet: spec.trainer.numNodes: Invalid value: 3: "
        "extension elastic-torch: must be within [2, 2] (min-nodes, max-nodes)"
    ) in result.stdout + result.stderr


def test_trainjobs_delivery_refuses_an_extension_runtime(tmp_path: Path) -> None:
    root = project(tmp_path, "elastic-torch, yunikorn")
    result = trainc("render", "--cluster", "prod", "--emit", "trainjobs", "-o", "-", cwd=root)
    assert result.returncode == 2
    assert "declares trainc extension(s) elastic-torch, yunikorn: only trainc renders them" in (
        result.stderr
    )
    assert result.stdout == ""
    text = (root / "trainc.yaml").read_text()
    (root / "trainc.yaml").write_text(text + "    delivery: trainjobs\n")
    check = trainc("check", "--cluster", "prod", cwd=root)
    assert check.returncode == 2
    assert "error[extension]" in check.stdout and "only trainc renders them" in check.stdout


def test_explain_credits_the_extension(tmp_path: Path) -> None:
    root = project(tmp_path, "elastic-torch, yunikorn")
    field = (
        "spec.replicatedJobs[name=node].template.spec.template.spec."
        "containers[name=node].env[name=PET_NNODES].value"
    )
    result = trainc(
        "explain", "--cluster", "prod", "--object", "JobSet/team/resnet", field, cwd=root
    )
    assert result.returncode == 0, result.stderr
    assert "plugin extension elastic-torch" in result.stdout
    assert "elastic-torch.trainc.dev/min-nodes" in result.stdout


def test_upstream_output_is_unchanged_when_extensions_are_enabled(tmp_path: Path) -> None:
    """Runtimes that declare nothing render the same bytes in a cluster enabling every one."""
    names = ", ".join((*conformance.ALL_EXTENSIONS, "yunikorn"))
    outputs = []
    for label, extra in (("off", ""), ("on", f"    extensions: [{names}]\n")):
        root = tmp_path / label
        shutil.copytree(
            EXAMPLE.parent,
            root,
            ignore=shutil.ignore_patterns(
                ".venv", ".git", "golden", "tests", "compiler", "rendered"
            ),
        )
        (root / ".git").mkdir()  # one repository: example/ names ../overlays
        project_file = root / "example" / "trainc.yaml"
        text = project_file.read_text()
        project_file.write_text(
            text.replace("    trainer: v2.3.0\n", "    trainer: v2.3.0\n" + extra)
        )
        result = trainc("render", "--cluster", "production", "-o", "-", cwd=root / "example")
        assert result.returncode == 0, result.stderr
        outputs.append(result.stdout)
    assert outputs[0] == outputs[1]
    assert "kind: JobSet" in outputs[0]


@pytest.fixture(scope="module")
def oracle() -> None:
    if not conformance.ORACLE.exists():
        if shutil.which("go") is None:
            pytest.fail(
                "Go is not installed: the v1 operators' harness cannot be built (Go is a prerequisite: README)",
                pytrace=False,
            )
        built = subprocess.run(
            ["make", "-s", "migrate-oracle"], cwd=conformance.ROOT, capture_output=True, text=True
        )
        if built.returncode != 0:
            pytest.fail(f"the v1 operators' harness does not build: {built.stderr[-500:]}")


def test_extension_conformance(oracle: None) -> None:
    cases = conformance.all_cases()
    assert len(cases) >= 40
    assert sum(case.expect_error for case in cases) >= 5
    results = conformance.check(cases)
    assert [(case.id, found) for case, found in results if found] == []


def test_the_worked_examples_render_clean() -> None:
    """``examples/extensions`` (the README's worked examples): check is clean."""
    root = conformance.ROOT / "examples" / "extensions"
    result = trainc("check", "--cluster", "hpc", cwd=root)
    assert result.returncode == 0, result.stdout + result.stderr
    rendered = trainc("render", "--cluster", "hpc", "-o", "-", cwd=root)
    assert "I_MPI_PERHOST" in rendered.stdout and "HYDRA_HOST_FILE" in rendered.stdout
    assert "yunikorn.apache.org/task-groups" in rendered.stdout
