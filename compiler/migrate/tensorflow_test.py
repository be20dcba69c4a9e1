"""TensorFlow translations (TFJob and the Volcano tensorflow plugin): the TF_CONFIG a
pod sees is what the shim exports when run, per role and completion index."""

from __future__ import annotations

import json
import subprocess
from typing import Any

from compiler.migrate.conftest import Migrate


def tf_config(container: dict[str, Any], index: int) -> dict[str, Any]:
    """Run the container's wrapped command with /bin/sh, the original command replaced
    by one that prints TF_CONFIG."""
    command = container["command"]
    assert command[:2] == ["/bin/sh", "-c"]
    shown = subprocess.run(
        [*command[:3], "sh", "-c", 'printf %s "$TF_CONFIG"'],
        env={"JOB_COMPLETION_INDEX": str(index), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
        timeout=10,
    ).stdout
    return json.loads(shown)  # type: ignore[no-any-return]


def tfjob(replicas: str) -> str:
    return f"""apiVersion: kubeflow.org/v1
kind: TFJob
metadata: {{name: tf, namespace: ml}}
spec:
  tfReplicaSpecs:
{replicas}"""


def role(name: str, count: int) -> str:
    return f"""    {name}:
      replicas: {count}
      template:
        spec:
          containers: [{{name: tensorflow, image: tf, command: [python, {name.lower()}.py]}}]
"""


def test_workers_only_get_the_shim_with_their_index(migrated: Migrate) -> None:
    result = migrated(tfjob(role("Worker", 3)))
    container = result.container("node")
    assert container["command"][3:] == ["python", "worker.py"]
    assert tf_config(container, 2) == {
        "cluster": {"worker": [f"tf-node-0-{i}.tf:2222" for i in range(3)]},
        "task": {"type": "worker", "index": 2},
        "environment": "cloud",
    }
    assert result.objects["TrainJob"]["spec"]["trainer"]["numNodes"] == 3


def test_roles_become_replicated_jobs_with_one_cluster(migrated: Migrate) -> None:
    result = migrated(tfjob(role("PS", 2) + role("Worker", 2) + role("Chief", 1)))
    assert [
        j["name"]
        for j in result.objects["TrainingRuntime"]["spec"]["template"]["spec"]["replicatedJobs"]
    ] == ["node", "chief", "ps"]
    assert result.rjob("ps")["template"]["spec"]["parallelism"] == 2
    config = tf_config(result.container("ps"), 1)
    assert config["task"] == {"type": "ps", "index": 1}
    assert config["cluster"] == {
        "chief": ["tf-chief-0-0.tf:2222"],
        "ps": ["tf-ps-0-0.tf:2222", "tf-ps-0-1.tf:2222"],
        "worker": ["tf-node-0-0.tf:2222", "tf-node-0-1.tf:2222"],
    }
    success = result.objects["TrainingRuntime"]["spec"]["template"]["spec"]["successPolicy"]
    assert success == {"operator": "All", "targetReplicatedJobs": ["chief"]}


def test_a_role_without_a_command_is_refused(migrated: Migrate) -> None:
    text = tfjob(role("PS", 1) + role("Worker", 2)).replace(", command: [python, ps.py]", "")
    result = migrated(text)
    assert result.objects == {}
    assert "TF_CONFIG_NEEDS_COMMAND" in result.codes


VOLCANO = """apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: vtf}
spec:
  plugins: {tensorflow: ["--port=3000", "--ps=params"], env: []}
  tasks:
    - name: params
      replicas: 1
      template:
        spec:
          containers: [{name: params, image: tf, command: [python, ps.py]}]
    - name: worker
      replicas: 2
      template:
        spec:
          restartPolicy: Never
          containers: [{name: worker, image: tf, command: [python, w.py]}]
"""


def test_volcano_plugin_shim_has_no_environment(migrated: Migrate) -> None:
    result = migrated(VOLCANO)
    config = tf_config(result.container("node"), 1)
    assert config == {
        "cluster": {
            "ps": ["vtf-ps-0-0.vtf:3000"],
            "worker": ["vtf-node-0-0.vtf:3000", "vtf-node-0-1.vtf:3000"],
        },
        "task": {"type": "worker", "index": 1},
    }
    env = result.env("ps")
    assert env["VC_WORKER_HOSTS"] == "vtf-node-0-0.vtf,vtf-node-0-1.vtf"
    assert env["VC_PARAMS_NUM"] == "1"
    assert "VK_TASK_INDEX" in env  # the env plugin: the completion index per task
    assert result.container("ps")["name"] == "node"
    assert result.rjob("node")["template"]["spec"]["backoffLimit"] == 2147483647
