"""Pointing a rendered field back at the input that produced it."""

from __future__ import annotations

import doctest
from typing import Any

import compiler.provenance.locate as trace
from compiler.apiserver.manifest import Manifest
from compiler.load.loader import load_texts
from compiler.provenance.locate import locate_output

RUNTIME = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: rt
spec:
  template:
    spec:
      replicatedJobs:
        - name: init
          template:
            spec:
              template:
                spec:
                  containers:
                    - name: init
                      image: busybox
        - name: node
          template:
            spec:
              template:
                spec:
                  containers:
                    - name: node
                      image: base
"""
JOB = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: job
spec:
  runtimeRef:
    name: rt
  trainer:
    image: mine
"""


def _inputs() -> tuple[Manifest, Manifest]:
    loaded = load_texts([("rt.yaml", RUNTIME), ("job.yaml", JOB)])
    runtime, job = loaded.objects
    return job, runtime


def _jobset(images: tuple[str, str], order: tuple[str, str] = ("init", "node")) -> dict[str, Any]:
    jobs = {
        name: {
            "name": name,
            "template": {
                "spec": {
                    "template": {
                        "spec": {"containers": [{"name": name, "image": image, "env": []}]}
                    }
                }
            },
        }
        for name, image in zip(("init", "node"), images, strict=True)
    }
    return {"kind": "JobSet", "spec": {"replicatedJobs": [jobs[n] for n in order]}}


def test_doctests() -> None:
    assert doctest.testmod(trace).failed == 0


def test_same_field_same_value_in_the_runtime_matched_by_name() -> None:
    job, runtime = _inputs()
    jobset = _jobset(("busybox", "mine"), order=("node", "init"))  # reordered
    path = ("spec", "replicatedJobs", 1, "template", "spec", "template", "spec", "containers", 0)
    assert str(locate_output(jobset, (*path, "image"), job, runtime)) == "rt.yaml:16:23"


def test_value_set_by_the_trainjob_points_at_the_trainjob() -> None:
    job, runtime = _inputs()
    jobset = _jobset(("busybox", "mine"))
    path = ("spec", "replicatedJobs", 1, "template", "spec", "template", "spec", "containers", 0)
    assert str(locate_output(jobset, (*path, "image"), job, runtime)) == "job.yaml:9:5"


def test_field_render_added_points_at_the_nearest_written_input_node() -> None:
    job, runtime = _inputs()
    jobset = _jobset(("busybox", "mine"))
    path = ("spec", "replicatedJobs", 1, "template", "spec", "template", "spec", "containers", 0)
    # env is not in any input: the runtime's node container is what render filled in
    assert str(locate_output(jobset, (*path, "env"), job, runtime)) == "rt.yaml:23:23"


def test_nothing_matches_the_trainjob_is_named() -> None:
    job, runtime = _inputs()
    podgroup = {"kind": "PodGroup", "spec": {"minMember": 3}}
    assert str(locate_output(podgroup, ("spec", "minMember"), job, runtime)) == "job.yaml:1:1"
    assert str(locate_output(podgroup, ("spec", "minMember"), job, None)) == "job.yaml:1:1"
