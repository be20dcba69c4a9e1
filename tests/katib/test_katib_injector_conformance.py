"""trainc's emulation of Katib's pod webhook (compiler/katib/injector.py) against Katib
v0.19.0's own ``SidecarInjector`` (tests/katib/oracle: ``MutationRequired`` then
``Mutate`` on the same Pod, its owners Job -> JobSet -> TrainJob -> Trial in a fake
cluster): every collector kind, primary and other Pods, command shapes, labels, the
suggestion volume, a Pod without the primary container. Closing line:
``katib-conformance: X/Y identical (pod webhook)``."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from compiler.katib.experiment import katib_config_text, set_default
from compiler.katib.injector import InjectionRefused, inject, trial_pods
from compiler.kube.roundtrip import go_roundtrip
from tests.go_oracle import oracle_needed
from tests.katib import oracle
from tests.katib.cases import example

TRIAL = "torch-distributed-example-bcdf2456"
PRIMARY = {
    "jobset.sigs.k8s.io/replicatedjob-name": "node",
    "batch.kubernetes.io/job-completion-index": "0",
}
COMMAND = ["python3", "/opt/pytorch-mnist/mnist.py", "--epochs=1", "--lr=0.01"]


@pytest.fixture(scope="module", autouse=True)
def built() -> None:
    with oracle_needed("`make katib-oracle` builds it"):
        oracle.oracle_binary()


def _container(name: str = "node", **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "image": "docker.io/kubeflowkatib/pytorch-mnist:v1"}
    out["command"] = list(COMMAND)
    out.update(extra)
    return {k: v for k, v in out.items() if v is not None}


def _pod(
    containers: list[dict[str, Any]] | None = None,
    labels: dict[str, str] | None = None,
    job: str = f"{TRIAL}-node-0",
    **spec: Any,
) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{job}-0-abcde",
            "namespace": "kubeflow",
            "labels": dict(PRIMARY if labels is None else labels),
            "ownerReferences": [
                {
                    "apiVersion": "batch/v1",
                    "kind": "Job",
                    "name": job,
                    "uid": "uid-job",
                    "controller": True,
                }
            ],
        },
        "spec": {"containers": containers or [_container()], **spec},
    }


def _collector(spec: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    def change(exp: dict[str, Any]) -> None:
        exp["spec"]["metricsCollectorSpec"] = copy.deepcopy(spec)

    return change


def _set(path: tuple[str, ...], value: Any) -> Callable[[dict[str, Any]], None]:
    def change(exp: dict[str, Any]) -> None:
        node = exp
        for key in path[:-1]:
            node = node.setdefault(key, {})
        node[path[-1]] = copy.deepcopy(value)

    return change


def _keep(exp: dict[str, Any]) -> None:
    pass


FILTER = {"metricsFormat": ["([\\w|-]+)\\s*=\\s*([+-]?\\d*(\\.\\d+)?([Ee][+-]?\\d+)?)"]}
CUSTOM = {"name": "my-collector", "image": "acme/collector:1", "args": ["--dir", "/out"]}


def cases() -> list[tuple[str, Callable[[dict[str, Any]], None], dict[str, Any]]]:
    """(name, change to Katib's example Experiment, the Pod)."""
    worker = {**PRIMARY, "batch.kubernetes.io/job-completion-index": "1"}
    return [
        ("stdout-primary", _keep, _pod()),
        ("stdout-worker", _keep, _pod(labels=worker)),
        ("stdout-no-labels", _keep, _pod(labels={})),
        ("stdout-second-container", _keep, _pod([_container("helper"), _container()])),
        ("stdout-sh-c", _keep, _pod([_container(command=["sh", "-c", "python3 x.py --lr=1"])])),
        ("stdout-bash-c-args", _keep, _pod([_container(command=["bash"], args=["-c", "train"])])),
        ("stdout-bash-no-c", _keep, _pod([_container(command=["bash", "run.sh"])])),
        (
            "stdout-command-args",
            _keep,
            _pod([_container(command=["torchrun"], args=["t.py", "--x=1"])]),
        ),
        (
            "stdout-existing-volumes",
            _keep,
            _pod(
                [
                    _container(
                        volumeMounts=[{"name": "data", "mountPath": "/data"}],
                        env=[{"name": "A", "value": "1"}],
                    )
                ],
                volumes=[{"name": "data", "emptyDir": {}}],
            ),
        ),
        ("stdout-missing-primary", _keep, _pod([_container("launcher")], labels=worker)),
        ("stdout-missing-primary-on-primary", _keep, _pod([_container("launcher")])),
        (
            "labels",
            _set(("metadata", "labels"), {"team": "vision", "katib.kubeflow.org/trial": "x"}),
            _pod(),
        ),
        (
            "additional-metrics",
            _set(("spec", "objective", "additionalMetricNames"), ["accuracy", "f1"]),
            _pod(),
        ),
        ("maximize", _set(("spec", "objective", "type"), "maximize"), _pod()),
        (
            "primary-pod-labels-custom",
            _set(
                ("spec", "trialTemplate", "primaryPodLabels"),
                {"jobset.sigs.k8s.io/replicatedjob-name": "node"},
            ),
            _pod(labels=worker),
        ),
        (
            "suggestion-dir",
            _set(
                ("spec", "algorithm", "algorithmSettings"),
                [{"name": "suggestion_trial_dir", "value": "/var/log/katib/checkpoints/"}],
            ),
            _pod(),
        ),
        (
            "file-text-filter",
            _collector(
                {
                    "collector": {"kind": "File"},
                    "source": {
                        "fileSystemPath": {
                            "path": "/opt/out/metrics.txt",
                            "kind": "File",
                            "format": "TEXT",
                        },
                        "filter": FILTER,
                    },
                }
            ),
            _pod(),
        ),
        (
            "file-json",
            _collector(
                {
                    "collector": {"kind": "File"},
                    "source": {
                        "fileSystemPath": {
                            "path": "/var/log/m.json",
                            "kind": "File",
                            "format": "JSON",
                        }
                    },
                }
            ),
            _pod(),
        ),
        ("file-default", _collector({"collector": {"kind": "File"}}), _pod()),
        ("file-worker", _collector({"collector": {"kind": "File"}}), _pod(labels=worker)),
        ("tfevent-default", _collector({"collector": {"kind": "TensorFlowEvent"}}), _pod()),
        (
            "tfevent-path",
            _collector(
                {
                    "collector": {"kind": "TensorFlowEvent"},
                    "source": {"fileSystemPath": {"path": "/train/logs", "kind": "Directory"}},
                }
            ),
            _pod([_container(command=["sh", "-c", "python3 tf.py"])]),
        ),
        (
            "custom-directory",
            _collector(
                {
                    "collector": {"kind": "Custom", "customCollector": CUSTOM},
                    "source": {"fileSystemPath": {"path": "/out", "kind": "Directory"}},
                }
            ),
            _pod(),
        ),
        (
            "custom-file",
            _collector(
                {
                    "collector": {"kind": "Custom", "customCollector": CUSTOM},
                    "source": {
                        "fileSystemPath": {"path": "/out/m.log", "kind": "File"},
                        "filter": FILTER,
                    },
                }
            ),
            _pod(),
        ),
        (
            "custom-no-source",
            _collector({"collector": {"kind": "Custom", "customCollector": CUSTOM}}),
            _pod(),
        ),
        ("push-primary", _collector({"collector": {"kind": "Push"}}), _pod()),
        ("push-worker", _collector({"collector": {"kind": "Push"}}), _pod(labels=worker)),
    ]


def _trainc(exp: dict[str, Any], pod: dict[str, Any]) -> dict[str, Any]:
    try:
        injected = inject(pod, trial_pods(set_default(exp), TRIAL))
    except InjectionRefused as refused:
        return {"error": str(refused)}
    return {"pod": injected.pod}


def _same(ours: dict[str, Any], theirs: dict[str, Any]) -> str | None:
    """None when both agree; else what differs."""
    if not theirs.get("required"):
        return f"Katib's webhook does not select the Pod: {theirs}"
    if "error" in ours or "error" in theirs:
        # Katib prints the Pod's containers as Go values; trainc names them
        cut = " in mutated pod containers"
        a, b = (str(side.get("error", "")).split(cut)[0] for side in (ours, theirs))
        return None if a == b and a else f"{ours.get('error')} != {theirs.get('error')}"
    a = go_roundtrip(ours["pod"], "io.k8s.api.core.v1.Pod")
    b = go_roundtrip(theirs["pod"], "io.k8s.api.core.v1.Pod")
    return (
        None
        if a == b
        else f"\n  trainc {a['spec']}\n  katib  {b['spec']}\n  {a['metadata']}\n  {b['metadata']}"
    )


def test_pod_webhook_identical() -> None:
    named = cases()
    requests, ours = [], []
    for _, change, pod in named:
        exp = example()
        change(exp)
        ours.append(_trainc(exp, pod))
        requests.append(
            {
                "inject": {
                    "experiment": exp,
                    "trial": TRIAL,
                    "pod": pod,
                    "katibConfig": katib_config_text(),
                }
            }
        )
    answers = oracle.ask(requests)
    differences = []
    for (name, _, _), mine, theirs in zip(named, ours, answers, strict=True):
        problem = _same(mine, theirs)
        if problem:
            differences.append(f"{name}: {problem}")
    print(
        f"\nkatib-conformance: {len(named) - len(differences)}/{len(named)} identical (pod webhook)"
    )
    assert not differences, "\n".join(differences)
