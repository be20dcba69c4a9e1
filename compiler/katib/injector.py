"""Katib's pod webhook (``mutator.pod.katib.kubeflow.org``, Katib v0.19.0
``pkg/webhook/v1beta1/pod``) on the Pods of one trial.

Which Pods: the webhook is registered for Pod creation in namespaces labelled
``katib.kubeflow.org/metrics-collector-injection: enabled`` (Katib's validating webhook
refuses an Experiment in any other namespace), and acts on a Pod one of whose owners,
followed up the chain, is a Trial (Pod -> Job -> JobSet -> TrainJob -> Trial). Every Pod
of a trial's TrainJob is one of them. On each it:

* merges the Trial's labels (the Experiment's labels, ``katib.kubeflow.org/experiment``)
  and ``katib.kubeflow.org/trial`` into the Pod's labels;
* appends ``KATIB_TRIAL_NAME`` (from the trial label) to the env of the primary container
  (``trialTemplate.primaryContainerName``), and refuses the Pod when it has none.

Only on the primary Pod (the Pod carrying every ``primaryPodLabels`` pair; every Pod when
there are none) and unless the collector is ``Push``:

* the metrics-collector sidecar: the ``customCollector`` container for ``Custom``, else
  the katib-config.yaml entry of the collector kind (image, pull policy and resources as
  Katib's config defaulting fills them) with the collector's arguments;
* with ``suggestion_trial_dir`` among the algorithm settings, the suggestion's volume
  mounted in the primary container;
* ``shareProcessNamespace: true``; the ``metrics-volume`` emptyDir mounted in the sidecar
  and the primary container at the metrics file's folder;
* for ``StdOut``, ``File`` and ``TensorFlowEvent``, the primary container's command wrapped
  in ``sh -c`` (output redirected to the metrics file for ``StdOut``), marking completion.

Left out: early-stopping rules (the suggestion computes them in the cluster from earlier
trials' metrics; the Pods shown are those of a trial without rules), and the image's own
entrypoint when the primary container sets no command (Katib reads it from the image
registry: :class:`Injected` says so and the command is left as it is).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import yaml

from compiler.kube.quantity import Quantity, QuantityError

__all__ = [
    "Injected",
    "InjectionRefused",
    "TrialPods",
    "collector_configs",
    "inject",
    "trial_pods",
]

WEBHOOK = "mutator.pod.katib.kubeflow.org"
EXPERIMENT_LABEL = "katib.kubeflow.org/experiment"
TRIAL_LABEL = "katib.kubeflow.org/trial"
TRIAL_ENV = "KATIB_TRIAL_NAME"
DB_MANAGER = "katib-db-manager.kubeflow:6789"  # GetDBManagerAddr with Katib's defaults
DEFAULT_METRICS_FILE = "/var/log/katib/metrics.log"
METRICS_VOLUME = "metrics-volume"
SUGGESTION_VOLUME = "suggestion-volume"
SUGGESTION_DIR_SETTING = "suggestion_trial_dir"
WRAPPED_KINDS = ("StdOut", "TensorFlowEvent", "File")
# katib-config defaulting (pkg/apis/config/v1beta1/defaults.go)
_PULL_POLICIES = ("Always", "IfNotPresent", "Never")
_DEFAULT_REQUESTS = {"cpu": "50m", "memory": "10Mi", "ephemeral-storage": "500Mi"}
_DEFAULT_LIMITS = {"cpu": "500m", "memory": "100Mi", "ephemeral-storage": "5Gi"}


class InjectionRefused(Exception):
    """The webhook refuses the Pod (its message, as the API server words it)."""


@dataclass(frozen=True)
class CollectorConfig:
    """One ``runtime.metricsCollectors`` entry of katib-config.yaml, defaulted."""

    image: str
    pull_policy: str
    resources: dict[str, Any]
    wait_all_processes: bool | None


@dataclass(frozen=True)
class TrialPods:
    """What the webhook reads from the Trial (made by Katib's controller from the
    defaulted Experiment) and its Suggestion."""

    name: str
    namespace: str
    labels: dict[str, str]
    primary_pod_labels: dict[str, str] | None
    primary_container: str
    collector: dict[str, Any]  # spec.metricsCollectorSpec
    objective: dict[str, Any]
    algorithm: dict[str, Any]
    experiment: str


@dataclass
class Injected:
    """The mutated Pod, and what trainc could not emulate on it."""

    pod: dict[str, Any]
    notes: list[str] = field(default_factory=list)


def trial_pods(experiment: Mapping[str, Any], trial_name: str) -> TrialPods:
    """The Trial Katib's controller makes for ``trial_name`` of the defaulted
    ``experiment`` (``getTrialInstance``), as far as the pod webhook reads it."""
    meta = experiment.get("metadata") or {}
    spec = experiment.get("spec") or {}
    template = spec.get("trialTemplate") or {}
    labels = {str(k): str(v) for k, v in (meta.get("labels") or {}).items()}
    labels[EXPERIMENT_LABEL] = str(meta.get("name", ""))
    primary = template.get("primaryPodLabels")
    return TrialPods(
        name=trial_name,
        namespace=str(meta.get("namespace") or "default"),
        labels=labels,
        primary_pod_labels=dict(primary) if primary is not None else None,
        primary_container=str(template.get("primaryContainerName") or ""),
        collector=dict(spec.get("metricsCollectorSpec") or {}),
        objective=dict(spec.get("objective") or {}),
        algorithm=dict(spec.get("algorithm") or {}),
        experiment=str(meta.get("name", "")),
    )


def _quantity_text(value: Any) -> str | None:
    try:
        return str(Quantity.parse(str(value)))
    except QuantityError:
        return None


def _resources(configured: Any) -> dict[str, Any]:
    """``setResourceRequirements``: the default requests and limits where the config has
    none (or zero), a negative cpu, memory or ephemeral-storage removed."""
    configured = configured if isinstance(configured, dict) else {}
    out: dict[str, Any] = {}
    for key, defaults in (("limits", _DEFAULT_LIMITS), ("requests", _DEFAULT_REQUESTS)):
        given = configured.get(key) if isinstance(configured.get(key), dict) else {}
        values: dict[str, str] = {}
        for name, value in given.items():
            text = _quantity_text(value)
            if text is not None:
                values[str(name)] = text
        for name, default in defaults.items():
            value = values.get(name)
            if value is None or Quantity.parse(value).is_zero():
                values[name] = default
            elif Quantity.parse(value).sign() < 0:
                del values[name]
        out[key] = dict(sorted(values.items()))
    for key in ("claims",):
        if configured.get(key) is not None:
            out[key] = copy.deepcopy(configured[key])
    return out


def collector_configs(text: str) -> dict[str, CollectorConfig]:
    """The metrics collector entries of a katib-config.yaml, by kind (the last of a kind
    wins, as in ``GetMetricsCollectorConfigData``)."""
    data = yaml.safe_load(text) or {}
    out: dict[str, CollectorConfig] = {}
    for entry in (data.get("runtime") or {}).get("metricsCollectors") or []:
        if not isinstance(entry, dict):
            continue
        policy = str(entry.get("imagePullPolicy") or "")
        wait = entry.get("waitAllProcesses")
        out[str(entry.get("kind", ""))] = CollectorConfig(
            image=str(entry.get("image") or ""),
            pull_policy=policy if policy in _PULL_POLICIES else "IfNotPresent",
            resources=_resources(entry.get("resources")),
            wait_all_processes=wait if isinstance(wait, bool) else None,
        )
    return out


@cache
def _pinned_collectors() -> dict[str, CollectorConfig]:
    from compiler.katib.experiment import katib_config_text

    return collector_configs(katib_config_text())


# --- Go's path/filepath on Linux -----------------------------------------------------


def go_clean(path: str) -> str:
    """``filepath.Clean``.

    >>> [go_clean(p) for p in ("//a//b/", "a/../..", "", "/var/log/katib/")]
    ['/a/b', '..', '.', '/var/log/katib']
    """
    if path == "":
        return "."
    rooted = path.startswith("/")
    parts: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if parts and parts[-1] != "..":
                parts.pop()
            elif not rooted:
                parts.append("..")
            continue
        parts.append(part)
    text = "/".join(parts)
    return ("/" + text) if rooted else (text or ".")


def go_dir(path: str) -> str:
    """``filepath.Dir``: all but the last element, cleaned.

    >>> [go_dir(p) for p in ("/var/log/katib/metrics.log", "/a/b/", "x", "/")]
    ['/var/log/katib', '/a/b', '.', '/']
    """
    return go_clean(path[: path.rfind("/") + 1])


def go_join(*parts: str) -> str:
    """``filepath.Join``: the non-empty parts joined by ``/``, cleaned."""
    kept = [p for p in parts if p]
    return go_clean("/".join(kept)) if kept else ""


# --- the webhook ---------------------------------------------------------------------


def _primary_index(pod: dict[str, Any], name: str) -> int:
    for i, container in enumerate(pod["spec"].get("containers") or []):
        if isinstance(container, dict) and container.get("name") == name:
            return i
    return -1


def _is_primary(labels: Mapping[str, Any], primary: Mapping[str, Any]) -> bool:
    return all(k in labels and labels[k] == v for k, v in primary.items())


def _mount_path(collector: dict[str, Any]) -> tuple[str, str]:
    """``getMountPath``: the metrics path and its kind (``File``/``Directory``/"")."""
    kind = (collector.get("collector") or {}).get("kind")
    fs = (collector.get("source") or {}).get("fileSystemPath")
    if kind == "StdOut":
        return DEFAULT_METRICS_FILE, "File"
    if kind == "File":
        return str((fs or {}).get("path") or ""), "File"
    if kind == "TensorFlowEvent":
        return str((fs or {}).get("path") or ""), "Directory"
    if kind == "Custom" and isinstance(fs, dict):
        return str(fs.get("path") or ""), str(fs.get("kind") or "")
    return "", ""


def _collector_args(trial: TrialPods, config: CollectorConfig) -> list[str]:
    """``getMetricsCollectorArgs`` for a trial without early-stopping rules."""
    collector = trial.collector
    kind = (collector.get("collector") or {}).get("kind")
    source = collector.get("source") if isinstance(collector.get("source"), dict) else None
    metrics = ";".join(
        [
            str(trial.objective.get("objectiveMetricName") or ""),
            *map(str, trial.objective.get("additionalMetricNames") or []),
        ]
    )
    args = ["-t", trial.name, "-m", metrics, "-o-type", str(trial.objective.get("type") or "")]
    args += ["-s-db", DB_MANAGER]
    path, _ = _mount_path(collector)
    if path:
        args += ["-path", path]
    formats = ((source or {}).get("filter") or {}).get("metricsFormat") or []
    if formats:
        args += ["-f", ";".join(map(str, formats))]
    if kind == "File" and source is not None and isinstance(source.get("fileSystemPath"), dict):
        args += ["-format", str(source["fileSystemPath"].get("format") or "")]
    if kind == "StdOut":
        args += ["-format", "TEXT"]
    if config.wait_all_processes is not None:
        args += ["-w", "true" if config.wait_all_processes else "false"]
    return args


def _sidecar(trial: TrialPods, configs: Mapping[str, CollectorConfig]) -> dict[str, Any]:
    collector = trial.collector.get("collector") or {}
    kind = str(collector.get("kind") or "")
    if kind == "Custom":
        return copy.deepcopy(collector.get("customCollector") or {})
    config = configs.get(kind)
    if config is None:
        raise InjectionRefused(
            f"failed to find metrics collector config for kind: {kind} in ConfigMap: katib-config"
        )
    if not config.image.strip():
        raise InjectionRefused(
            f"required value for image configuration of metrics collector kind: {kind}"
        )
    name = "metrics-logger-and-collector" if kind in ("StdOut", "File") else "metrics-collector"
    return {
        "name": name,
        "image": config.image,
        "args": _collector_args(trial, config),
        "resources": copy.deepcopy(config.resources),
        "imagePullPolicy": config.pull_policy,
    }


def _mount(container: dict[str, Any], mount: dict[str, Any]) -> None:
    container["volumeMounts"] = [*(container.get("volumeMounts") or []), mount]


def _suggestion_volume(pod: dict[str, Any], trial: TrialPods, primary: int) -> None:
    """``mutateSuggestionVolume``: the suggestion's PVC at ``suggestion_trial_dir``."""
    settings = trial.algorithm.get("algorithmSettings") or []
    path = next(
        (
            str(s.get("value"))
            for s in settings
            if isinstance(s, dict) and s.get("name") == SUGGESTION_DIR_SETTING and s.get("value")
        ),
        "",
    )
    if not path:
        return
    claim = f"{trial.experiment}-{trial.algorithm.get('algorithmName') or ''}"
    mount = {
        "name": SUGGESTION_VOLUME,
        "mountPath": path,
        "subPath": go_join(trial.experiment, trial.name),
    }
    _mount(pod["spec"]["containers"][primary], mount)
    volume = {"name": SUGGESTION_VOLUME, "persistentVolumeClaim": {"claimName": claim}}
    pod["spec"]["volumes"] = [*(pod["spec"].get("volumes") or []), volume]


def _metrics_volume(pod: dict[str, Any], path: str, kind: str, sidecar: str, primary: str) -> None:
    """``mutateMetricsCollectorVolume``: an emptyDir at the metrics folder, mounted in the
    sidecar and the primary container."""
    folder = go_dir(path) if kind == "File" else path
    for container in pod["spec"]["containers"]:
        if container.get("name") in (sidecar, primary):
            _mount(container, {"name": METRICS_VOLUME, "mountPath": folder})
    volume = {"name": METRICS_VOLUME, "emptyDir": {}}
    pod["spec"]["volumes"] = [*(pod["spec"].get("volumes") or []), volume]


def _wrap(pod: dict[str, Any], trial: TrialPods, index: int, path: str, kind: str) -> str | None:
    """``wrapWorkerContainer``: the primary container's command run by ``sh -c``, its
    completion marked in ``$$$$.pid`` beside the metrics. A note instead when the command
    is the image's (Katib reads it from the registry)."""
    container = pod["spec"]["containers"][index]
    if not container.get("command"):
        return (
            f"Katib reads the entrypoint of image {container.get('image', '')!s} from its "
            f"registry to wrap container {trial.primary_container}: its command is left as is"
        )
    words = [str(w) for w in container["command"]] + [str(w) for w in container.get("args") or []]
    command = ["sh", "-c"]
    if words[0] in ("sh", "bash"):
        if len(words) < 2:
            raise InjectionRefused("panic: runtime error: index out of range [1] with length 1")
        if words[1] == "-c":
            command, words = words[:2], words[2:]
    if (trial.collector.get("collector") or {}).get("kind") == "StdOut":
        words.append(f"1>{path} 2>&1")
    folder = go_dir(path) if kind == "File" else path
    words += ["&&", f"echo completed > {go_join(folder, '$$$$.pid')}"]
    container["command"] = command
    container["args"] = [" ".join(words)]
    return None


def _containers_text(pod: Mapping[str, Any]) -> str:
    names = [str(c.get("name", "")) for c in pod["spec"].get("containers") or []]
    return "[" + " ".join("{" + n + " ...}" for n in names) + "]"


def inject(
    pod: Mapping[str, Any],
    trial: TrialPods,
    configs: Mapping[str, CollectorConfig] | None = None,
) -> Injected:
    """The webhook's ``Mutate`` on a Pod of ``trial`` (a copy; the API server's
    re-defaulting after the patch is the caller's). Raises :class:`InjectionRefused`."""
    configs = _pinned_collectors() if configs is None else configs
    out = copy.deepcopy(dict(pod))
    meta = out.setdefault("metadata", {})
    spec = out.setdefault("spec", {})
    spec.setdefault("containers", [])
    labels = dict(meta.get("labels") or {})
    labels.update(trial.labels)
    labels[TRIAL_LABEL] = trial.name
    meta["labels"] = labels
    index = _primary_index(out, trial.primary_container)
    if index < 0:
        raise InjectionRefused(
            f"Unable to find primary container {trial.primary_container} in mutated pod "
            f"containers {_containers_text(out)}"
        )
    primary = spec["containers"][index]
    env = {
        "name": TRIAL_ENV,
        "valueFrom": {"fieldRef": {"fieldPath": f"metadata.labels['{TRIAL_LABEL}']"}},
    }
    primary["env"] = [*(primary.get("env") or []), env]
    result = Injected(out)
    if trial.primary_pod_labels is not None and not _is_primary(
        pod.get("metadata", {}).get("labels") or {}, trial.primary_pod_labels
    ):
        return result
    kind = (trial.collector.get("collector") or {}).get("kind")
    if kind == "Push":
        return result
    sidecar = _sidecar(trial, configs)
    spec["containers"].append(sidecar)
    _suggestion_volume(out, trial, index)
    spec["shareProcessNamespace"] = True
    path, path_kind = _mount_path(trial.collector)
    if path:
        _metrics_volume(out, path, path_kind, str(sidecar.get("name", "")), trial.primary_container)
    if kind in WRAPPED_KINDS:
        note = _wrap(out, trial, index, path, path_kind)
        if note:
            result.notes.append(note)
    return result
