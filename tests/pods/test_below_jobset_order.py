"""What the JobSet controller reports and creates, in its order of evaluation (JobSet
v0.12.0, ``reconcile``): every refused replica's Job in one event; nothing created, so
nothing refused, after the success policy has finished the JobSet. The inputs are
golden cases found by the live pod-depth fuzzer (golden/<case>/case.yaml says what the
real controllers did)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from compiler.expand import expand
from compiler.expand.jobset_controller import never_created
from compiler.expand.jobset_webhook import default_jobset
from tests.conformance import trainc_side
from tests.conformance.cases import REPO
from tests.support import trainc_main

GOLDEN = REPO / "golden"


def _inputs(case: str) -> list[str]:
    return [str(GOLDEN / case / name) for name in ("runtime.yaml", "trainjob.yaml")]


def test_every_refused_replica_is_in_the_one_joined_event(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, _ = trainc_main(capsys, "render", *_inputs("replicas-refused-jobs-joined"), "-o", "-")
    assert code == 2
    build = trainc_side.build([Path(p) for p in _inputs("replicas-refused-jobs-joined")], "uid")
    [event] = [p for p in build.problems if p.field_path is None]
    # one problem: the replicas' lines joined as errors.Join joins them, by index, the
    # hint after the last
    jobs = event.message.split("\n")
    assert [line.split('"')[1] for line in jobs] == ["job-evaluator-0", "job-evaluator-1"]
    invalid = (
        "is invalid: [spec.template.spec.containers[0].env[0].valueFrom.resourceFieldRef."
        'resource: Unsupported value: "limits.nvidia.com/gpu"'
    )
    assert all(invalid in line for line in jobs)
    assert jobs[1].endswith("(the API server refuses the Jobs the JobSet controller would create)")
    # each field error once, at the runtime's line, not once per replica
    fields = [p for p in build.problems if p.field_path is not None]
    assert len(fields) == 2
    assert {str(p.object) for p in fields} == {"Job default/job-evaluator-0"}
    assert {Path(p.location.file).name for p in fields if p.location} == {"runtime.yaml"}


def test_a_job_after_the_success_policy_finished_the_jobset_is_never_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    inputs = _inputs("success-policy-before-dependent-job")
    code, _, err = trainc_main(capsys, "render", *inputs, "-o", str(tmp_path / "out"))
    assert code == 0, err
    assert "creation failed" not in err
    [warning] = [line for line in err.splitlines() if "warning" in line]
    assert (
        "runtime.yaml:85:9: JobSet fz-8-126/llm-ft: spec.replicatedJobs[1].dependsOn: " in warning
    )
    assert 'replicated job "node" never runs: it waits for "model-initializer"' in warning


def _jobset(policy: dict[str, Any], *depends: tuple[str, str, str]) -> dict[str, Any]:
    names = ["init", "prep", "node", "eval"]
    rjobs: list[dict[str, Any]] = [{"name": name} for name in names]
    for rjob in rjobs:
        rjob["template"] = {"spec": {"template": {"spec": {"containers": [{"name": "c"}]}}}}
    for name, needed, status in depends:
        rjobs[names.index(name)].setdefault("dependsOn", []).append(
            {"name": needed, "status": status}
        )
    return default_jobset(
        {"metadata": {"name": "js"}, "spec": {"replicatedJobs": rjobs, "successPolicy": policy}}
    )


@pytest.mark.parametrize(
    ("policy", "depends", "never"),
    [
        # Any with no targets: any completed Job finishes the JobSet
        ({"operator": "Any"}, [("node", "init", "Complete")], {"node": "init"}),
        # what depends on a job never created is never created either, whatever the status
        (
            {"operator": "Any"},
            [("node", "init", "Complete"), ("eval", "node", "Ready")],
            {"node": "init", "eval": "init"},
        ),
        # a Ready dependency has not completed: no finish is certain
        ({"operator": "Any"}, [("node", "init", "Ready")], {}),
        # Any with targets that the completed job is not among
        ({"operator": "Any", "targetReplicatedJobs": ["node"]}, [("node", "init", "Complete")], {}),
        # All: every target completed before node is created, transitively
        (
            {"operator": "All", "targetReplicatedJobs": ["init", "prep"]},
            [("prep", "init", "Complete"), ("node", "prep", "Complete")],
            {"node": "init"},
        ),
        ({"operator": "All", "targetReplicatedJobs": ["node"]}, [("node", "init", "Complete")], {}),
        # the webhook's default success policy: All, every replicated job a target
        ({}, [("node", "init", "Complete")], {}),
    ],
)
def test_never_created(
    policy: dict[str, Any], depends: list[tuple[str, str, str]], never: dict[str, str]
) -> None:
    assert never_created(_jobset(policy, *depends)) == never


def test_expand_leaves_out_the_jobs_never_created() -> None:
    rendered = GOLDEN / "success-policy-before-dependent-job" / "expected.yaml"
    objects = [d for d in yaml.safe_load_all(rendered.read_text()) if d]
    made = expand(objects, "pods")
    assert [
        (o["kind"], o["metadata"].get("name", o["metadata"].get("generateName"))) for o in made
    ] == [
        ("Job", "llm-ft-model-initializer-0"),
        ("Service", "llm-ft"),
        ("Pod", "llm-ft-model-initializer-0-0-00000"),  # the random suffix's placeholder
    ]


NULL_RUNTIME = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: plain-rt
spec:
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
                  image: acme/x:1
                volumes:
                - name: v
{volume}
"""
NULL_TRAINJOB = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: t
spec:
  runtimeRef:
    name: plain-rt
"""
PROJECTED = "                  projected: {}"
DATA_SOURCE = """\
                  ephemeral:
                    volumeClaimTemplate:
                      spec:
                        accessModes: [ReadWriteOnce]
                        resources:
                          requests:
                            storage: 1Gi
                        dataSource:
                          kind: PersistentVolumeClaim
                          name: seed"""
VOLUME = "spec.replicatedJobs[0].template.spec.template.spec.volumes[0]"


@pytest.mark.parametrize(
    ("volume", "field", "kind", "line"),
    [
        (PROJECTED, f"{VOLUME}.projected.sources", "array", 22),
        (
            DATA_SOURCE,
            f"{VOLUME}.ephemeral.volumeClaimTemplate.spec.dataSource.apiGroup",
            "string",
            29,
        ),
    ],
)
def test_a_null_the_mutating_webhook_writes_into_a_valid_jobset_is_refused(
    tmp_path: Path, volume: str, field: str, kind: str, line: int
) -> None:
    # the JobSet is valid as the Trainer sends it; JobSet's mutating webhook's patch adds
    # the field as Go encodes it absent (null), which the schema refuses (words of
    # kube-apiserver v1.34.4 with JobSet v0.12.0's webhooks, tests/live, 2026-11-28)
    (tmp_path / "runtime.yaml").write_text(NULL_RUNTIME.format(volume=volume))
    (tmp_path / "trainjob.yaml").write_text(NULL_TRAINJOB)
    build = trainc_side.build([tmp_path / "runtime.yaml", tmp_path / "trainjob.yaml"], "uid")
    null = f'Invalid value: "null": {field} in body must be of type {kind}: "null"'
    [finding, event] = sorted(build.problems, key=lambda p: p.field_path is None)
    assert (finding.field_path, finding.message) == (field, null)
    assert finding.location is not None and finding.location.line == line
    assert event.message.startswith(
        f'TrainJob resources reconciliation failed: JobSet.jobset.x-k8s.io "t" is invalid: '
        f"[{field}: {null}, <nil>: Invalid value: null: some validation rules were not checked"
    )
