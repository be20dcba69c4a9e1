"""A flow-style v1 job (``containers: [{...}]``) migrates: the values trainc adds or
keeps in its flow collections (``PADDLE_MASTER=host:port``, ``image: repo:tag``) are
written so that the readers take them (trainc's, libyaml's, kubectl's goyaml)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from compiler.apiserver.yaml_source import parse_yaml
from compiler.cli import main

PADDLE = """\
apiVersion: kubeflow.org/v1
kind: PaddleJob
metadata: {name: paddle-ps, namespace: default}
spec:
  paddleReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers: [{name: paddle, image: "paddle:2.6", env: [{name: FOO, value: bar}]}]
    Worker:
      replicas: 2
      template:
        spec:
          containers: [{name: paddle, image: "paddle:2.6", env: [{name: FOO, value: bar}]}]
"""

PYTORCH = """\
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: torch-flow, namespace: default}
spec:
  pytorchReplicaSpecs:
    Worker:
      replicas: 2
      template:
        spec:
          containers: [{name: pytorch, image: registry.example:5000/torch:2, command: [torchrun, train.py]}]
"""


def _migrated(tmp_path: Path, text: str, capsys: pytest.CaptureFixture[str]) -> list[Any]:
    job = tmp_path / "job.yaml"
    job.write_text(text, encoding="utf-8")
    code = main(["migrate", str(job), "-o", "-"])
    captured = capsys.readouterr()
    assert "invalid YAML" not in captured.err, captured.err
    assert code == 0, captured.err
    return [document.data for document in parse_yaml(captured.out, "migrated.yaml")]


def _containers(runtime: Any) -> list[Any]:
    assert runtime["kind"] == "TrainingRuntime"
    jobs = runtime["spec"]["template"]["spec"]["replicatedJobs"]
    return [c for job in jobs for c in job["template"]["spec"]["template"]["spec"]["containers"]]


def test_a_flow_style_paddle_job_gets_its_master_address(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runtime, _ = _migrated(tmp_path, PADDLE, capsys)
    containers = _containers(runtime)
    assert len(containers) == 2
    for container in containers:
        assert container["image"] == "paddle:2.6"
        env = {e["name"]: e["value"] for e in container["env"]}
        assert env["FOO"] == "bar"
        assert env["PADDLE_MASTER"] == "paddle-ps-master-0-0.paddle-ps:36543"


def test_a_flow_style_pytorch_job_keeps_its_plain_image(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``image: repo:5000/torch:2`` unquoted in a flow mapping is valid YAML 1.2 and
    goyaml v2 reads it; the output keeps the string, quoted."""
    runtime, _ = _migrated(tmp_path, PYTORCH, capsys)
    [container] = _containers(runtime)
    assert container["image"] == "registry.example:5000/torch:2"
    assert container["command"] == ["torchrun", "train.py"]
