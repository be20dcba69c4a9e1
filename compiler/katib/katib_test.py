"""compiler/katib: Katib's webhooks, its substitution, the trial plans."""

from __future__ import annotations

import copy
from typing import Any

from compiler.katib.experiment import KatibConfig, set_default, validate
from compiler.katib.trials import plan_trials, substitute, trial_name
from compiler.kube.gotext import go_json

CONFIG = KatibConfig({"random": "img", "grid": "img"}, {}, {"StdOut": "img"})


def experiment(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "apiVersion": "kubeflow.org/v1beta1",
        "kind": "Experiment",
        "metadata": {"name": "exp", "namespace": "ns"},
        "spec": {
            "maxTrialCount": 12,
            "objective": {"type": "minimize", "objectiveMetricName": "loss"},
            "algorithm": {"algorithmName": "random"},
            "parameters": [
                {
                    "name": "lr",
                    "parameterType": "double",
                    "feasibleSpace": {"min": "0.01", "max": "0.05"},
                },
                {
                    "name": "gpus",
                    "parameterType": "categorical",
                    "feasibleSpace": {"list": ["1", "two"]},
                },
            ],
            "trialTemplate": {
                "primaryContainerName": "node",
                "trialParameters": [
                    {"name": "lr", "reference": "lr"},
                    {"name": "gpus", "reference": "gpus"},
                    {"name": "me", "reference": "${trialSpec.Name}"},
                ],
                "trialSpec": {
                    "apiVersion": "trainer.kubeflow.org/v1alpha1",
                    "kind": "TrainJob",
                    "spec": {
                        "trainer": {
                            "command": ["--lr=${trialParameters.lr}", "--me=${trialParameters.me}"],
                            "resourcesPerNode": {"limits": {"gpu": "${trialParameters.gpus}"}},
                        }
                    },
                },
            },
        },
    }
    base["spec"].update(spec)
    return base


def test_go_json_is_go_encoding() -> None:
    assert (
        go_json({"b": 1.0, "a": "<&>", "c": 1e-7}) == '{"a":"\\u003c\\u0026\\u003e","b":1,"c":1e-7}'
    )


def test_trainjob_defaults() -> None:
    template = set_default(experiment())["spec"]["trialTemplate"]
    assert (
        template["successCondition"] == 'status.conditions.#(type=="Complete")#|#(status=="True")#'
    )
    assert template["failureCondition"] == 'status.conditions.#(type=="Failed")#|#(status=="True")#'
    assert template["primaryPodLabels"] == {
        "jobset.sigs.k8s.io/replicatedjob-name": "node",
        "batch.kubernetes.io/job-completion-index": "0",
    }
    assert set_default(experiment())["spec"]["parallelTrialCount"] == 3


def test_parallel_above_max_is_katibs_error() -> None:
    errors = validate(set_default(experiment(parallelTrialCount=20)), CONFIG, {})
    assert [e.text for e in errors] == [
        "spec.parallelTrialCount: Invalid value: 20: should be less than or equal to spec.maxTrialCount"
    ]
    assert errors[0].path == ("spec", "parallelTrialCount")


def test_unknown_placeholder_is_an_error() -> None:
    exp = experiment()
    exp["spec"]["trialTemplate"]["trialSpec"]["spec"]["trainer"]["image"] = (
        "${trialParameters.nope}"
    )
    texts = [e.text for e in validate(set_default(exp), CONFIG, {})]
    assert (
        len(texts) == 1
        and "parameters: [${trialParameters.nope}] in spec.trialTemplate" in texts[0]
    )


def test_substitution_is_text_with_metadata_references() -> None:
    exp = set_default(experiment())
    obj = substitute(exp, "exp-bcdfghjk", "ns", (("lr", "0.01"), ("gpus", "two")), {})
    assert obj["metadata"] == {"name": "exp-bcdfghjk", "namespace": "ns"}
    assert obj["spec"]["trainer"]["command"] == ["--lr=0.01", "--me=exp-bcdfghjk"]
    assert obj["spec"]["trainer"]["resourcesPerNode"]["limits"]["gpu"] == "two"


def test_grid_3x2_is_six_trials_and_capped() -> None:
    exp = experiment(algorithm={"algorithmName": "grid"})
    exp["spec"]["parameters"] = [
        {"name": "lr", "parameterType": "categorical", "feasibleSpace": {"list": ["a", "b", "c"]}},
        {"name": "gpus", "parameterType": "categorical", "feasibleSpace": {"list": ["1", "2"]}},
    ]
    plan = plan_trials(exp)
    assert len(plan.trials) == 6 and not plan.capped
    assert len({t.name for t in plan.trials}) == 6
    small = copy.deepcopy(exp)
    small["spec"]["maxTrialCount"] = 4
    capped = plan_trials(small)
    assert (len(capped.trials), capped.total, capped.capped) == (4, 6, True)


def test_corners_then_samples() -> None:
    plan = plan_trials(experiment())
    assert [t.label for t in plan.trials] == [
        "lr=0.01, gpus=1",
        "lr=0.05, gpus=1",
        "lr=0.01, gpus=two",
    ]
    assert all(t.why == "corner" for t in plan.trials)
    sampled = plan_trials(experiment(), samples=3, seed=1)
    assert sampled.trials[:3] == plan.trials
    assert plan_trials(experiment(), samples=3, seed=1) == sampled  # deterministic


def test_trial_name_has_katibs_shape() -> None:
    name = trial_name("exp", (("lr", "0.01"),))
    assert len(name) == len("exp") + 9 and name.startswith("exp-")
    assert set(name[4:]) <= set("bcdfghjklmnpqrstvwxz2456789")
    assert name == trial_name("exp", (("lr", "0.01"),))


def test_a_huge_grid_is_bounded() -> None:
    exp = experiment(algorithm={"algorithmName": "grid"})
    del exp["spec"]["maxTrialCount"]
    exp["spec"]["parameters"] = [
        {"name": "lr", "parameterType": "int", "feasibleSpace": {"min": "1", "max": "1000"}},
        {"name": "gpus", "parameterType": "int", "feasibleSpace": {"min": "1", "max": "1000"}},
    ]
    plan = plan_trials(exp)
    assert (len(plan.trials), plan.bounded, plan.capped) == (500, True, False)
    assert plan.total == 100_001  # counted up to the bound, not all 1,000,000


def test_pod_webhook_leaves_an_image_entrypoint_alone() -> None:
    """Without a command Katib reads the image's entrypoint from its registry: trainc
    leaves the command, says so, and still adds the sidecar."""
    from compiler.katib.injector import inject, trial_pods

    exp = set_default(
        {
            "metadata": {"name": "e", "namespace": "ns"},
            "spec": {
                "objective": {"type": "maximize", "objectiveMetricName": "acc"},
                "trialTemplate": {"primaryContainerName": "main"},
            },
        }
    )
    pod = {"metadata": {}, "spec": {"containers": [{"name": "main", "image": "acme/t:1"}]}}
    injected = inject(pod, trial_pods(exp, "e-bcdfghjk"))
    main, sidecar = injected.pod["spec"]["containers"]
    assert "command" not in main and sidecar["name"] == "metrics-logger-and-collector"
    assert injected.notes == [
        "Katib reads the entrypoint of image acme/t:1 from its registry to wrap container "
        "main: its command is left as is"
    ]
