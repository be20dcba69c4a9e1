"""The Argo CD health scripts for JobSet and TrainJob, run by a real Lua interpreter
(lupa's Lua 5.4; Argo CD runs gopher-lua 5.1, and the scripts use only what both have)
on status samples shaped as the upstream types write them: JobSet v0.12.0
(``sigs.k8s.io/jobset`` api/jobset/v1alpha2, reasons from pkg/constants) and TrainJob
in Kubeflow Trainer v2.3.0 (pkg/apis/trainer/v1alpha1/trainjob_types.go)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import lupa  # a dev extra: `make setup` installs it
import pytest
import yaml

from tests.gitops.support import ARGOCD

HEALTH = ARGOCD / "health"
JOBSET = HEALTH / "jobset.x-k8s.io_JobSet.lua"
TRAINJOB = HEALTH / "trainer.kubeflow.org_TrainJob.lua"


def health(script: Path, obj: dict[str, Any]) -> dict[str, str]:
    """Run ``script`` with ``obj`` as Argo CD does: a global ``obj``, a table returned."""
    runtime = lupa.LuaRuntime(unpack_returned_tuples=True)
    runtime.globals().obj = _to_lua(runtime, obj)
    result = runtime.execute(script.read_text())
    return {"status": str(result["status"]), "message": str(result["message"])}


def _to_lua(runtime: Any, value: Any) -> Any:
    if isinstance(value, dict):
        return runtime.table_from({k: _to_lua(runtime, v) for k, v in value.items()})
    if isinstance(value, list):
        return runtime.table_from([_to_lua(runtime, v) for v in value])
    return value


def condition(kind: str, status: str, reason: str, message: str) -> dict[str, str]:
    return {
        "type": kind,
        "status": status,
        "reason": reason,
        "message": message,
        "lastTransitionTime": "2026-11-25T10:00:00Z",
    }


# JobSet v0.12.0: conditions Completed/Failed/Suspended/StartupPolicy*, terminalState.
JOBSET_SAMPLES = {
    "no status yet": ({}, "Progressing"),
    "running": (
        {
            "status": {
                "restarts": 0,
                "replicatedJobsStatus": [
                    {
                        "name": "node",
                        "ready": 2,
                        "succeeded": 0,
                        "failed": 0,
                        "active": 2,
                        "suspended": 0,
                    }
                ],
                "conditions": [
                    condition(
                        "StartupPolicyCompleted",
                        "True",
                        "InOrderStartupPolicyCompleted",
                        "in order startup policy has completed",
                    ),
                    condition("Suspended", "False", "ResumeJobs", "jobset is resumed"),
                ],
            }
        },
        "Progressing",
    ),
    "completed": (
        {
            "status": {
                "terminalState": "Completed",
                "conditions": [
                    condition(
                        "Completed", "True", "AllJobsCompleted", "jobset completed successfully"
                    )
                ],
            }
        },
        "Healthy",
    ),
    "failed": (
        {
            "status": {
                "terminalState": "Failed",
                "conditions": [
                    condition(
                        "Failed",
                        "True",
                        "FailedJobs",
                        "jobset failed due to one or more job failures",
                    )
                ],
            }
        },
        "Degraded",
    ),
    "failed after max restarts": (
        {
            "status": {
                "restarts": 3,
                "conditions": [
                    condition(
                        "Failed",
                        "True",
                        "ReachedMaxRestarts",
                        "jobset failed due to reaching max number of restarts",
                    )
                ],
            }
        },
        "Degraded",
    ),
    "suspended (Kueue)": (
        {
            "spec": {"suspend": True},
            "status": {
                "conditions": [
                    condition("Suspended", "True", "SuspendedJobs", "jobset is suspended")
                ]
            },
        },
        "Suspended",
    ),
}

# TrainJob, Trainer v2.3.0: conditions Suspended (Suspended/Resumed), Complete, Failed;
# the jobset plugin copies the JobSet's Completed/Failed condition (type renamed, reason
# and message kept: pkg/runtime/framework/plugins/jobset/jobset.go), the controller
# sets Failed with DeadlineExceeded itself.
TRAINJOB_SAMPLES = {
    "created": ({"spec": {"runtimeRef": {"name": "torch"}}}, "Progressing"),
    "resumed and running": (
        {
            "status": {
                "conditions": [condition("Suspended", "False", "Resumed", "TrainJob is resumed")],
                "jobsStatus": [
                    {
                        "name": "node",
                        "ready": 2,
                        "succeeded": 0,
                        "failed": 0,
                        "active": 2,
                        "suspended": 0,
                    }
                ],
            }
        },
        "Progressing",
    ),
    "complete": (
        {
            "status": {
                "conditions": [
                    condition(
                        "Complete", "True", "AllJobsCompleted", "jobset completed successfully"
                    )
                ]
            }
        },
        "Healthy",
    ),
    "failed": (
        {
            "status": {
                "conditions": [
                    condition(
                        "Failed",
                        "True",
                        "FailedJobs",
                        "jobset failed due to one or more job failures",
                    )
                ]
            }
        },
        "Degraded",
    ),
    "deadline exceeded": (
        {
            "status": {
                "conditions": [
                    condition(
                        "Failed",
                        "True",
                        "DeadlineExceeded",
                        "TrainJob exceeded its activeDeadlineSeconds",
                    )
                ]
            }
        },
        "Degraded",
    ),
    "suspended": (
        {
            "spec": {"suspend": True},
            "status": {
                "conditions": [condition("Suspended", "True", "Suspended", "TrainJob is suspended")]
            },
        },
        "Suspended",
    ),
}


@pytest.mark.parametrize("name", list(JOBSET_SAMPLES))
def test_jobset_health(name: str) -> None:
    obj, expected = JOBSET_SAMPLES[name]
    result = health(JOBSET, {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", **obj})
    assert result["status"] == expected
    assert result["message"]


@pytest.mark.parametrize("name", list(TRAINJOB_SAMPLES))
def test_trainjob_health(name: str) -> None:
    obj, expected = TRAINJOB_SAMPLES[name]
    kind = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob"}
    result = health(TRAINJOB, {**kind, **obj})
    assert result["status"] == expected
    assert result["message"]


def test_messages_come_from_the_conditions() -> None:
    obj, _ = JOBSET_SAMPLES["failed after max restarts"]
    assert health(JOBSET, obj)["message"] == "jobset failed due to reaching max number of restarts"
    obj, _ = JOBSET_SAMPLES["running"]
    assert health(JOBSET, obj)["message"] == "JobSet running: 2 jobs ready, 2 active, 0 restarts"


def test_condition_names_are_the_upstream_ones() -> None:
    """The condition types and reasons the samples use are upstream's constants."""
    from compiler.upstream.artifacts import upstream

    trainer = upstream().trainer_dir
    types = (trainer / "pkg/apis/trainer/v1alpha1/trainjob_types.go").read_text()
    for constant in ('"Suspended"', '"Complete"', '"Failed"', '"Resumed"', '"DeadlineExceeded"'):
        assert constant in types
    manifest = json.loads((upstream().typeinfo_path.parent / "manifest.json").read_text())
    jobset_crd = Path(manifest["outputCrds"]["jobsets.jobset.x-k8s.io"])
    jobset = jobset_crd.parents[4]
    assert jobset.name == "jobset@v0.12.0"
    jobset_types = (jobset / "api/jobset/v1alpha2/jobset_types.go").read_text()
    for constant in ('"Completed"', '"Failed"', '"Suspended"', '"RestartingJobSet"'):
        assert constant in jobset_types
    constants = (jobset / "pkg/constants/constants.go").read_text()
    for constant in (
        '"AllJobsCompleted"',
        '"FailedJobs"',
        '"ReachedMaxRestarts"',
        '"SuspendedJobs"',
        '"ResumeJobs"',
    ):
        assert constant in constants


def test_argocd_cm_snippet_holds_the_scripts() -> None:
    configmap = yaml.safe_load((ARGOCD / "argocd-cm-health.yaml").read_text())
    data = configmap["data"]
    assert data["resource.customizations.health.jobset.x-k8s.io_JobSet"] == JOBSET.read_text()
    assert (
        data["resource.customizations.health.trainer.kubeflow.org_TrainJob"] == TRAINJOB.read_text()
    )
