"""The apply order and what each delivery mode sends."""

from __future__ import annotations

from pathlib import Path

from compiler.deliver.apply.plan import apply_plan
from compiler.model.build import Build
from compiler.plan.build_plan import plan_for_paths
from compiler.plan.stages import run

RUNTIME = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata: {name: rt, namespace: ns}
spec:
  mlPolicy: {numNodes: 1, mpi: {numProcPerNode: 1, mpiImplementation: OpenMPI}}
  template:
    spec:
      replicatedJobs:
        - name: launcher
          template:
            metadata:
              labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}
            spec:
              template:
                spec:
                  containers: [{name: node, image: "mpi:1"}]
        - name: node
          template:
            spec:
              template:
                spec:
                  containers: [{name: node, image: "mpi:1"}]
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: job, namespace: ns}
spec:
  runtimeRef: {name: rt, kind: TrainingRuntime}
"""


def _build(tmp_path: Path) -> Build:
    (tmp_path / "in.yaml").write_text(RUNTIME)
    build = run(plan_for_paths([str(tmp_path)]))
    assert not build.problems
    return build


def test_resolved_order_and_secret_owned_by_its_jobset(tmp_path: Path) -> None:
    plan = apply_plan(_build(tmp_path))
    assert [d.title for d in plan.objects] == ["ConfigMap ns/job-mpi-hostfile", "JobSet ns/job"]
    (secret,) = plan.secrets
    assert (secret.title, secret.jobset) == ("Secret ns/job-mpi-ssh-auth", "job")
    assert plan.skipped == []


def test_trainjobs_delivery_sends_runtime_then_trainjob(tmp_path: Path) -> None:
    plan = apply_plan(_build(tmp_path), "trainjobs")
    assert [d.title for d in plan.objects] == ["TrainingRuntime ns/rt", "TrainJob ns/job"]
    assert plan.secrets == []
    assert [t for t, _ in plan.skipped] == ["Secret ns/job-mpi-ssh-auth"]
