"""PaddleJob parameter-server mode: replicated jobs master and node, each role's
variables in its own template."""

from __future__ import annotations

from compiler.migrate.conftest import Migrate

PS = """apiVersion: kubeflow.org/v1
kind: PaddleJob
metadata: {name: pd}
spec:
  paddleReplicaSpecs:
    Master:
      replicas: 2
      template:
        spec:
          containers:
            - name: paddle
              image: pd
              command: [python, m.py]
    Worker:
      replicas: 3
      template:
        spec:
          containers:
            - name: paddle
              image: pd
              command: [python, w.py]
"""


def test_parameter_server_mode(migrated: Migrate) -> None:
    result = migrated(PS)
    assert result.rjob("master")["template"]["spec"]["parallelism"] == 2
    common = {
        "PYTHONUNBUFFERED": "1",
        "PADDLE_JOB_ID": "pd",
        "PADDLE_NNODES": "5",
        "PADDLE_MASTER": "pd-master-0-0.pd:36543",
    }
    assert result.env("master") == {**common, "PADDLE_SERVER_NUM": "1"}
    assert result.env("node") == {**common, "PADDLE_TRAINER_NUM": "1"}
    assert result.objects["TrainJob"]["spec"]["trainer"] == {"numNodes": 3}
