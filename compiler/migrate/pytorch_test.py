"""PyTorch translations (PyTorchJob, the Volcano pytorch plugin): master and workers
merge into node, the master first, so RANK is the completion index."""

from __future__ import annotations

from compiler.migrate.common import INDEX_FIELD
from compiler.migrate.conftest import Migrate

RANK = {"fieldRef": {"fieldPath": INDEX_FIELD}}

PYTORCHJOB = """apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: pt}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers: [{name: pytorch, image: pt, command: [python, t.py], resources: {limits: {cpu: 3}}}]
    Worker:
      replicas: 2
      template:
        spec:
          containers: [{name: pytorch, image: pt, command: [python, t.py], resources: {limits: {cpu: 3}}}]
"""


def test_pytorchjob_keeps_v1_variables(migrated: Migrate) -> None:
    result = migrated(PYTORCHJOB)
    trainer = result.objects["TrainJob"]["spec"]["trainer"]
    env = {e["name"]: e.get("value", e.get("valueFrom")) for e in trainer["env"]}
    assert env == {
        "PYTHONUNBUFFERED": "1",
        "MASTER_ADDR": "pt-node-0-0.pt",
        "MASTER_PORT": "23456",
        "WORLD_SIZE": "3",
        "RANK": RANK,
    }
    assert trainer["numNodes"] == 3


VOLCANO = """apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: vpt}
spec:
  queue: research
  plugins: {pytorch: ["--master=lead", "--port=1234"], svc: []}
  tasks:
    - name: lead
      replicas: 1
      template:
        spec:
          containers: [{name: lead, image: pt, command: [python, t.py]}]
    - name: worker
      replicas: 2
      template:
        spec:
          containers: [{name: worker, image: pt, command: [python, t.py]}]
"""


def test_volcano_pytorch_plugin(migrated: Migrate) -> None:
    result = migrated(VOLCANO)
    runtime = result.objects["TrainingRuntime"]
    assert runtime["spec"]["mlPolicy"] == {"numNodes": 3, "torch": {}}
    assert runtime["spec"]["podGroupPolicy"] == {"volcano": {}}
    annotations = runtime["spec"]["template"]["metadata"]["annotations"]
    assert annotations == {"scheduling.volcano.sh/queue-name": "research"}
    node = result.container("node")
    assert {"name": "pytorchjob-port", "containerPort": 1234} in node["ports"]
    pod = result.rjob("node")["template"]["spec"]["template"]["spec"]
    assert (pod["restartPolicy"], pod["schedulerName"]) == ("OnFailure", "volcano")
    trainer = result.objects["TrainJob"]["spec"]["trainer"]
    env = {e["name"]: e.get("value", e.get("valueFrom")) for e in trainer["env"]}
    assert env["MASTER_ADDR"] == "vpt-node-0-0.vpt"
    assert env["RANK"] == RANK
    assert env["VC_LEAD_HOSTS"] == "vpt-node-0-0.vpt"
    assert env["VC_WORKER_HOSTS"] == "vpt-node-0-1.vpt,vpt-node-0-2.vpt"


def test_volcano_master_of_two_pods_is_refused(migrated: Migrate) -> None:
    result = migrated(VOLCANO.replace("replicas: 1", "replicas: 2", 1))
    assert result.objects == {}
    assert "VOLCANO_EXTRA_TASK_UNSUPPORTED" in result.codes
