"""``trainc apply`` of JobSets for Kueue's JobSet integration against the real API server.

Kueue v0.17.0 admits a JobSet with a JSON merge patch (``clientutil.Patch``, no field
manager given, so the API server names the manager after Kueue's user agent, ``kueue``):
``spec.suspend: false`` plus the flavor's node selector and tolerations in each pod
template. The "Kueue" here sends that patch; a later ``trainc apply`` of the unchanged
repo must leave all of it alone.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.live.apply_support import JOBSETS, admin, runtime, trainc, write
from tests.live.controlplane import ControlPlane

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

QUEUE = "kueue.x-k8s.io/queue-name"


def _project(tmp_path: Path, ns: str) -> Path:
    trainjob = (
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\n"
        f"metadata:\n  name: a\n  namespace: {ns}\n  labels: {{{QUEUE}: research}}\n"
        "spec:\n  runtimeRef: {name: rt, kind: TrainingRuntime}\n"
        "  trainer:\n    numNodes: 1\n"
    )
    # the runtime's own toleration: Kueue adds the flavor's to it, and a toleration
    # list is atomic, so the whole list becomes Kueue's
    pod = "                spec:\n"
    own = pod + "                  tolerations: [{key: spot, operator: Exists}]\n"
    text = runtime(ns).replace(pod, own, 1)
    assert own in text
    write(tmp_path / "inputs", {"runtime.yaml": text, "a.yaml": trainjob})
    project = tmp_path / "trainc.yaml"
    project.write_text(
        "inputs:\n  runtimes: [inputs/runtime.yaml]\n  jobs: [inputs/a.yaml]\n"
        "clusters:\n"
        f"  - name: batch\n    defaultNamespace: {ns}\n    namespaces: [{{name: {ns}}}]\n"
        "    schedulers: [kueue]\n    kueue: {jobSets: true}\n"
    )
    return project


def _admit(client: object, path: str) -> None:
    """What Kueue's startJob sends: the whole modified object as a merge patch."""
    live = client.get(path)  # type: ignore[attr-defined]
    live["spec"]["suspend"] = False
    for job in live["spec"]["replicatedJobs"]:
        pod = job["template"]["spec"]["template"]["spec"]
        pod.setdefault("nodeSelector", {})["cloud.example/flavor"] = "a100"
        pod["tolerations"] = [*pod.get("tolerations", []), {"key": "gpu", "operator": "Exists"}]
    patch = {
        "metadata": {"resourceVersion": live["metadata"]["resourceVersion"]},
        "spec": {"suspend": False, "replicatedJobs": live["spec"]["replicatedJobs"]},
    }
    code, answer = client.raw(  # type: ignore[attr-defined]
        "PATCH", path, patch, {"fieldManager": "kueue"}, "application/merge-patch+json"
    )
    assert code == 200, answer


def test_apply_again_leaves_kueues_admission_alone(
    control_plane: ControlPlane, tmp_path: Path
) -> None:
    ns = f"kueue-{os.getpid()}"
    project = _project(tmp_path, ns)
    argv = ("apply", "--project", project, "--cluster", "batch")
    argv += ("--kubeconfig", str(control_plane.kubeconfig))
    with admin(control_plane) as client:
        first = trainc(*argv)
        assert first.code == 0, first.out + first.err
        path = JOBSETS.format(ns=ns) + "/a"
        created = client.get(path)
        assert created["spec"]["suspend"] is True
        assert created["metadata"]["labels"][QUEUE] == "research"
        _admit(client, path)

        diff = trainc(*argv, "--diff")
        assert diff.code == 0, diff.out + diff.err
        assert "suspend" not in diff.out and "tolerations" not in diff.out, diff.out

        again = trainc(*argv)
        assert again.code == 0, again.out + again.err
        assert again.status_of(f"JobSet {ns}/a") == "unchanged"
        live = client.get(path)
        assert live["spec"]["suspend"] is False  # not re-suspended, not removed
        pod = live["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
        assert pod["nodeSelector"]["cloud.example/flavor"] == "a100"
        assert pod["tolerations"] == [
            {"key": "spot", "operator": "Exists"},
            {"key": "gpu", "operator": "Exists"},
        ]

        # a forced apply takes over nothing Kueue set either
        forced = trainc(*argv, "--force-conflicts")
        assert forced.code == 0, forced.out + forced.err
        assert client.get(path)["spec"]["suspend"] is False


def test_apply_before_admission_keeps_it_suspended(
    control_plane: ControlPlane, tmp_path: Path
) -> None:
    ns = f"kueue-wait-{os.getpid()}"
    project = _project(tmp_path, ns)
    argv = ("apply", "--project", project, "--cluster", "batch")
    argv += ("--kubeconfig", str(control_plane.kubeconfig))
    with admin(control_plane) as client:
        assert trainc(*argv).code == 0
        again = trainc(*argv)
        assert again.code == 0, again.out + again.err
        assert again.status_of(f"JobSet {ns}/a") == "unchanged"
        live = client.get(JOBSETS.format(ns=ns) + "/a")
        assert live["spec"]["suspend"] is True
        owners = [m for m in live["metadata"]["managedFields"] if "f:suspend" in str(m)]
        assert [m["manager"] for m in owners] == ["trainc"]
