"""A Katib Experiment (``kubeflow.org/v1beta1``) among the inputs, as Katib v0.19.0 takes it.

Found by kind among the objects the loader keeps as they are, like Kueue's objects: the
API server's create path with the pinned Experiment CRD (its schema keeps unknown fields,
so the metadata is what it checks), then Katib's defaulting webhook (``SetDefault``:
parallel trials, resume policy, metric strategies, success and failure conditions and
primary pod labels for Job, Kubeflow job and TrainJob trials, the metrics collector,
parameter distributions) and its validating webhook (``ValidateExperiment`` on create),
with Katib's messages. A trial template may come from a ConfigMap among the inputs.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from compiler.apiserver.yaml_source import parse_yaml
from compiler.errors import InputError
from compiler.katib.gojson import normalise_numbers
from compiler.kube.godecode import json_kind
from compiler.kube.gotext import go_json

__all__ = [
    "EXPERIMENT_API_VERSION",
    "KatibConfig",
    "KatibError",
    "go_text",
    "is_experiment",
    "katib_config",
    "set_default",
    "template_text",
    "validate",
]

EXPERIMENT_API_VERSION = "kubeflow.org/v1beta1"
KATIB_NAMESPACE = "kubeflow"  # where Katib's own katib-config ConfigMap lives
PARAM_FORMAT = "${trialParameters.%s}"
PARAM_REGEX = re.compile(r"\$\{trialParameters\..+?\}")
META_REGEX = re.compile(r"\$\{trialSpec\.(.+?)\}")
META_PARSE_REGEX = re.compile(r"(.+)\[(.+)]")
META_KEYS = ("Name", "Namespace", "Kind", "APIVersion", "Annotations", "Labels")
KUBEFLOW_JOB_KINDS = frozenset({"TFJob", "PyTorchJob", "XGBoostJob", "MPIJob", "TrainJob"})
_COMPLETE = 'status.conditions.#(type=="Complete")#|#(status=="True")#'
_SUCCEEDED = 'status.conditions.#(type=="Succeeded")#|#(status=="True")#'
_FAILED = 'status.conditions.#(type=="Failed")#|#(status=="True")#'
TRAINJOB_PRIMARY_POD_LABELS = {
    "jobset.sigs.k8s.io/replicatedjob-name": "node",
    "batch.kubernetes.io/job-completion-index": "0",
}
_NAME_MESSAGE = (
    "name must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name', or "
    "'abc-123', regex used for validation is '^[a-z]([-a-z0-9]*[a-z0-9])?)') and may not "
    "be longer than 40 characters. "
)


@dataclass(frozen=True)
class KatibError:
    """One of the validating webhook's field errors: ``path`` to locate it, ``text`` as Go
    prints it (``spec.maxTrialCount: Invalid value: 0: must be greater than 0``)."""

    path: tuple[str | int, ...]
    text: str


@dataclass(frozen=True)
class KatibConfig:
    """What the webhook reads from katib-config.yaml: name -> image."""

    suggestions: dict[str, str] = field(default_factory=dict)
    early_stoppings: dict[str, str] = field(default_factory=dict)
    collectors: dict[str, str] = field(default_factory=dict)


def parse_katib_config(text: str) -> KatibConfig:
    data = yaml.safe_load(text) or {}
    runtime = data.get("runtime") or {}

    def table(key: str, name: str) -> dict[str, str]:
        out: dict[str, str] = {}
        for entry in runtime.get(key) or []:
            out[str(entry.get(name, ""))] = str(entry.get("image") or "")
        return out

    return KatibConfig(
        table("suggestions", "algorithmName"),
        table("earlyStoppings", "algorithmName"),
        table("metricsCollectors", "kind"),
    )


@cache
def katib_config_text() -> str:
    from compiler.upstream.artifacts import katib_upstream

    return Path(katib_upstream().katib_config).read_text(encoding="utf-8")


def katib_config() -> KatibConfig:
    """The pinned release's standalone katib-config.yaml."""
    return parse_katib_config(katib_config_text())


def is_experiment(data: dict[str, Any]) -> bool:
    return data.get("apiVersion") == EXPERIMENT_API_VERSION and data.get("kind") == "Experiment"


def _spec(exp: dict[str, Any]) -> dict[str, Any]:
    spec = exp.get("spec")
    if not isinstance(spec, dict):
        spec = {}
        exp["spec"] = spec
    return spec


def _strategy(name: str, objective_type: Any) -> dict[str, str]:
    value = {"minimize": "min", "maximize": "max"}.get(str(objective_type), "latest")
    # an empty name is omitted (omitempty), as the stored object shows it
    return {"name": name, "value": value} if name else {"value": value}


def set_default(experiment: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``experiment`` with Katib's defaulting webhook applied (``SetDefault``)."""
    exp = copy.deepcopy(experiment)
    spec = _spec(exp)
    if spec.get("parallelTrialCount") is None:
        spec["parallelTrialCount"] = 3
    if not spec.get("resumePolicy"):
        spec["resumePolicy"] = "Never"
    objective = spec.get("objective")
    if isinstance(objective, dict):
        name = str(objective.get("objectiveMetricName") or "")
        strategies = list(objective.get("metricStrategies") or [])
        named = {str(s.get("name", "")) for s in strategies if isinstance(s, dict)}
        if name not in named:
            strategies.append(_strategy(name, objective.get("type")))
        others = named - {name}
        for metric in objective.get("additionalMetricNames") or []:
            if metric not in others:
                strategies.append(_strategy(str(metric), objective.get("type")))
        objective["metricStrategies"] = strategies
    template = spec.get("trialTemplate")
    if isinstance(template, dict) and isinstance(template.get("trialSpec"), dict):
        kind = template["trialSpec"].get("kind")
        if kind == "Job":
            template["successCondition"] = template.get("successCondition") or _COMPLETE
            template["failureCondition"] = template.get("failureCondition") or _FAILED
        elif kind in KUBEFLOW_JOB_KINDS:
            success = _COMPLETE if kind == "TrainJob" else _SUCCEEDED
            template["successCondition"] = template.get("successCondition") or success
            template["failureCondition"] = template.get("failureCondition") or _FAILED
            if not template.get("primaryPodLabels"):
                template["primaryPodLabels"] = (
                    dict(TRAINJOB_PRIMARY_POD_LABELS)
                    if kind == "TrainJob"
                    else {"training.kubeflow.org/job-role": "master"}
                )
    collector_spec = spec.get("metricsCollectorSpec")
    if not isinstance(collector_spec, dict):
        collector_spec = spec["metricsCollectorSpec"] = {}
    if not isinstance(collector_spec.get("collector"), dict):
        collector_spec["collector"] = {"kind": "StdOut"}
    kind = collector_spec["collector"].get("kind")
    source = collector_spec.get("source")
    if kind in ("PrometheusMetric", "File", "TensorFlowEvent") and not isinstance(source, dict):
        source = collector_spec["source"] = {}
    if kind == "PrometheusMetric" and isinstance(source, dict):
        http = source.setdefault("httpGet", {})
        http["path"] = http.get("path") or "/metrics"
        if http.get("port") in (None, 0, "0", ""):
            http["port"] = 8080
    elif kind in ("File", "TensorFlowEvent") and isinstance(source, dict):
        path = source.get("fileSystemPath")
        if not isinstance(path, dict):
            path = source["fileSystemPath"] = {}
        if kind == "File":
            path["kind"] = path.get("kind") or "File"
            path["path"] = path.get("path") or "/var/log/katib/metrics.log"
            path["format"] = path.get("format") or "TEXT"
        else:
            path["kind"] = path.get("kind") or "Directory"
            path["path"] = path.get("path") or "/var/log/katib/tfevent/"
    for parameter in spec.get("parameters") or []:
        if isinstance(parameter, dict):
            space = parameter.setdefault("feasibleSpace", {})
            if isinstance(space, dict) and not space.get("distribution"):
                space["distribution"] = "uniform"
    return exp


def go_text(value: Any) -> str:
    """A field error's bad value as Go prints it (strings quoted, numbers as is, other
    values as JSON)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return go_json(value)
    if isinstance(value, str):
        return (
            go_json(value).replace("\\u003c", "<").replace("\\u003e", ">").replace("\\u0026", "&")
        )
    return go_json(value)


def _invalid(path: tuple[str | int, ...], value: Any, detail: str) -> KatibError:
    return KatibError(path, f"{_field(path)}: Invalid value: {go_text(value)}: {detail}")


def _required(path: tuple[str | int, ...], detail: str) -> KatibError:
    return KatibError(path, f"{_field(path)}: Required value: {detail}")


def _field(path: tuple[str | int, ...]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


def _go_params(parameters: list[Any]) -> str:
    """``%v`` of ``[]ParameterSpec``."""
    items = []
    for p in parameters:
        p = p if isinstance(p, dict) else {}
        s = p.get("feasibleSpace") or {}
        listed = " ".join(str(v) for v in s.get("list") or [])
        items.append(
            f"{{{p.get('name', '')} {p.get('parameterType', '')} {{{s.get('max', '')} "
            f"{s.get('min', '')} [{listed}] {s.get('step', '')} {s.get('distribution', '')}}}}}"
        )
    return "[" + " ".join(items) + "]"


def _go_trial_params(parameters: list[Any]) -> str:
    """``%v`` of ``[]TrialParameterSpec``."""
    items = []
    for p in parameters:
        p = p if isinstance(p, dict) else {}
        items.append(f"{{{p.get('name', '')} {p.get('description', '')} {p.get('reference', '')}}}")
    return "[" + " ".join(items) + "]"


def _go_map(data: dict[str, Any]) -> str:
    return "map[" + " ".join(f"{k}:{data[k]}" for k in sorted(data)) + "]"


class TemplateError(Exception):
    """GetTrialTemplate's error, in Katib's words."""


def template_text(
    experiment: dict[str, Any], config_maps: dict[tuple[str, str], dict[str, Any]]
) -> str:
    """GetTrialTemplate: the trial template as text (the inline trialSpec in Go's JSON, or
    the ConfigMap entry as written)."""
    source = _spec(experiment).get("trialTemplate") or {}
    if isinstance(source.get("trialSpec"), dict):
        # Unstructured.MarshalJSON: Go's encoder ends its text with a newline
        return go_json(normalise_numbers(source["trialSpec"])) + "\n"
    ref = source.get("configMap") or {}
    name, namespace = str(ref.get("configMapName", "")), str(ref.get("configMapNamespace", ""))
    config_map = config_maps.get((namespace, name))
    if config_map is None:
        raise TemplateError(f'configMap not found: configmaps "{name}" not found')
    data = {str(k): str(v) for k, v in (config_map.get("data") or {}).items()}
    path = str(ref.get("templatePath", ""))
    if path not in data:
        raise TemplateError(
            f"unable to find trial template in ConfigMap: TemplatePath: {path}, "
            f"ConfigMap: {_go_map(data)}"
        )
    return data[path]


def is_meta_key(reference: str) -> bool:
    match = META_REGEX.search(reference)
    if not match:
        return False
    key = match.group(1)
    if key in META_KEYS:
        return True
    sub = META_PARSE_REGEX.search(key)
    return sub is not None and sub.group(1) in META_KEYS


def decode_template(text: str) -> dict[str, Any]:
    """ConvertStringToUnstructured: JSON or YAML text -> an object (numbers as Kubernetes'
    decoder keeps them); ValueError when it is neither or not an object."""
    # the YAMLOrJSONDecoder reads JSON when the text starts with "{" (the inline template)
    if text.lstrip().startswith("{"):
        data = json.loads(text)
    else:
        # sigs.k8s.io/yaml's reading of YAML (1e3 a number, yes a bool), as the API server's
        try:
            documents = parse_yaml(text, "<trial template>")
        except InputError as error:
            raise ValueError(str(error)) from None
        data = documents[0].data if documents else None
    if not isinstance(data, dict):
        raise ValueError("Object 'Kind' is missing")
    return dict(normalise_numbers(data))


def validate(
    experiment: dict[str, Any],
    config: KatibConfig,
    config_maps: dict[tuple[str, str], dict[str, Any]],
) -> list[KatibError]:
    """Katib's validating webhook on create, for a defaulted Experiment."""
    errors: list[KatibError] = []
    metadata = experiment.get("metadata")
    name = str((metadata if isinstance(metadata, dict) else {}).get("name") or "")
    if not re.match(r"[a-z]", name) or len(name) > 40:
        errors.append(_invalid(("metadata", "name"), name, _NAME_MESSAGE))
    spec = _spec(experiment)
    failed, most, parallel = (
        spec.get("maxFailedTrialCount"),
        spec.get("maxTrialCount"),
        spec.get("parallelTrialCount"),
    )
    if failed is not None and failed < 0:
        errors.append(
            _invalid(("spec", "maxFailedTrialCount"), failed, "should not be less than 0")
        )
    if most is not None and most <= 0:
        errors.append(_invalid(("spec", "maxTrialCount"), most, "must be greater than 0"))
    if parallel is not None and parallel <= 0:
        errors.append(_invalid(("spec", "parallelTrialCount"), parallel, "must be greater than 0"))
    if failed is not None and most is not None and failed > most:
        errors.append(
            _invalid(
                ("spec", "maxFailedTrialCount"),
                failed,
                "should be less than or equal to spec.maxTrialCount",
            )
        )
    if parallel is not None and most is not None and parallel > most:
        errors.append(
            _invalid(
                ("spec", "parallelTrialCount"),
                parallel,
                "should be less than or equal to spec.maxTrialCount",
            )
        )
    objective_errors = _objective(spec.get("objective"))
    if objective_errors:
        return errors + objective_errors
    errors += _algorithm(spec.get("algorithm"), config)
    errors += _early_stopping(spec.get("earlyStopping"), config)
    resume = spec.get("resumePolicy") or ""
    if resume not in ("", "Never", "LongRunning", "FromVolume"):
        errors.append(_invalid(("spec", "resumePolicy"), resume, "invalid ResumePolicyType"))
    errors += _trial_template(experiment, config_maps)
    parameters = spec.get("parameters") or []
    if not parameters and spec.get("nasConfig") is None:
        errors.append(_required(("spec",), "spec.parameters or spec.nasConfig must be specified"))
    if parameters and spec.get("nasConfig") is not None:
        # Katib prints its typed spec as JSON (Go's field order); trainc prints the spec's
        errors.append(
            KatibError(
                ("spec",),
                f"spec: Invalid value: {go_json(_go_struct(spec, 'ExperimentSpec'), sort_keys=False)}"
                ": only one of spec.parameters and spec.nasConfig can be specified",
            )
        )
    if parameters:
        errors += _parameters(parameters)
    errors += _collector(spec.get("metricsCollectorSpec") or {}, config)
    return errors


def _objective(objective: Any) -> list[KatibError]:
    path: tuple[str | int, ...] = ("spec", "objective")
    if not isinstance(objective, dict):
        return [_required(path, "must be specified")]
    errors = []
    kind = objective.get("type") or ""
    if kind not in ("minimize", "maximize"):
        errors.append(_invalid((*path, "type"), kind, "must be minimize or maximize"))
    metric = objective.get("objectiveMetricName") or ""
    if not metric:
        errors.append(_required((*path, "objectiveMetricName"), "must be specified"))
    additional = objective.get("additionalMetricNames")
    if metric in (additional or []):
        errors.append(
            _invalid(
                (*path, "additionalMetricNames"),
                additional,
                "should not contain spec.objective.objectiveMetricName",
            )
        )
    return errors


def _algorithm(algorithm: Any, config: KatibConfig) -> list[KatibError]:
    path: tuple[str | int, ...] = ("spec", "algorithm")
    if not isinstance(algorithm, dict):
        return [_required(path, "must be specified")]
    errors = []
    name = str(algorithm.get("algorithmName") or "")
    if not name:
        errors.append(_required((*path, "algorithmName"), "must be specified"))
    problem = _config_lookup(
        config.suggestions, name, "suggestion config for algorithm", "algorithm name"
    )
    if problem:
        errors.append(
            _invalid(
                (*path, "algorithmName"),
                name,
                f"unable to get Suggestion config data for algorithm {name}: {problem}",
            )
        )
    return errors


def _config_lookup(table: dict[str, str], name: str, what: str, image_what: str) -> str:
    if name not in table:
        return f"failed to find {what}: {name} in ConfigMap: katib-config"
    if not table[name].strip():
        return f"required value for image configuration of {image_what}: {name}"
    return ""


def _early_stopping(early: Any, config: KatibConfig) -> list[KatibError]:
    if not isinstance(early, dict):
        return []
    path: tuple[str | int, ...] = ("spec", "earlyStopping", "algorithmName")
    errors = []
    name = str(early.get("algorithmName") or "")
    if not name:
        errors.append(_required(path, "must be specified"))
    problem = _config_lookup(
        config.early_stoppings, name, "early stopping config for algorithm", "algorithm name"
    )
    if problem:
        errors.append(
            _invalid(
                path,
                name,
                f"unable to get EarlyStopping config data for algorithm {name}: {problem}",
            )
        )
    return errors


def _parameters(parameters: list[Any]) -> list[KatibError]:
    errors = []
    for i, param in enumerate(parameters):
        param = param if isinstance(param, dict) else {}
        path: tuple[str | int, ...] = ("spec", "parameters", i)
        kind = param.get("parameterType") or ""
        if kind not in ("int", "double", "categorical", "discrete", "unknown"):
            errors.append(
                _invalid((*path, "parameterType"), kind, f"parameterType: {kind} is not supported")
            )
        space = param.get("feasibleSpace") or {}
        dist = space.get("distribution") or ""
        if dist and dist not in ("uniform", "logUniform", "normal", "logNormal", "unknown"):
            errors.append(
                _invalid(
                    (*path, "feasibleSpace", "distribution"),
                    dist,
                    f"distribution: {dist} is not supported",
                )
            )
        if not any(space.get(k) for k in ("max", "min", "list", "step", "distribution")):
            errors.append(_required((*path, "feasibleSpace"), "feasibleSpace must be specified"))
        elif kind in ("double", "int"):
            if space.get("list"):
                errors.append(
                    _invalid(
                        (*path, "feasibleSpace", "list"),
                        space["list"],
                        f"feasibleSpace.list is not supported for parameterType: {kind}",
                    )
                )
            if not space.get("max") or not space.get("min"):
                errors.append(
                    _required(
                        (*path, "feasibleSpace", "max"),
                        "feasibleSpace.max or feasibleSpace.min must be specified for "
                        f"parameterType: {kind}",
                    )
                )
        elif kind in ("categorical", "discrete") and (
            space.get("max") or space.get("min") or space.get("step")
        ):
            # Go marshals the FeasibleSpace struct in its field order
            shown = ",".join(
                f"{go_json(k)}:{go_json(space[k])}"
                for k in ("max", "min", "list", "step", "distribution")
                if space.get(k)
            )
            errors.append(
                KatibError(
                    (*path, "feasibleSpace"),
                    f"{_field((*path, 'feasibleSpace'))}: Invalid value: {{{shown}}}: "
                    "feasibleSpace .max, .min and .step is not supported for parameterType: "
                    f"{kind}",
                )
            )
    return errors


def _trial_template(
    experiment: dict[str, Any], config_maps: dict[tuple[str, str], dict[str, Any]]
) -> list[KatibError]:
    """The trial template's checks, in the webhook's order; the first failing step ends them."""
    path: tuple[str | int, ...] = ("spec", "trialTemplate")
    spec = _spec(experiment)
    template = spec.get("trialTemplate")
    if not isinstance(template, dict):
        return [_required(path, "must be specified")]
    errors = _trial_conditions(path, template)
    trial_parameters = template.get("trialParameters")
    if trial_parameters is None:
        return [*errors, _required((*path, "trialParameters"), "must be specified")]
    source_error = _trial_source(path, template)
    if source_error is not None:
        return [*errors, source_error]
    try:
        text = template_text(experiment, config_maps)
    except TemplateError as error:
        return [*errors, _invalid(path, "", f"unable to parse spec.trialTemplate: {error}")]
    parameter_errors, substituted = _trial_parameters(path, spec, trial_parameters, text)
    errors.extend(parameter_errors)
    if substituted is None:
        return errors
    return [*errors, *_trial_run_spec(path, substituted, trial_parameters)]


def _trial_conditions(path: tuple[str | int, ...], template: dict[str, Any]) -> list[KatibError]:
    """The primary container and the success and failure conditions are required."""
    errors = []
    if not template.get("primaryContainerName"):
        errors.append(_required((*path, "primaryContainerName"), "must be specified"))
    if not template.get("successCondition") or not template.get("failureCondition"):
        errors.append(_required(path, "successCondition and failureCondition must be specified"))
    return errors


def _trial_source(path: tuple[str | int, ...], template: dict[str, Any]) -> KatibError | None:
    """Exactly one of an inline trial spec and a complete ConfigMap reference."""
    inline, config_map = template.get("trialSpec"), template.get("configMap")
    if inline is None and config_map is None:
        return _required(
            (*path, "TrialSource"),
            "spec.trialTemplate.trialSpec or spec.trialTemplate.configMap must be specified",
        )
    if inline is not None and config_map is not None:
        return _required(
            path,
            "only one of spec.trialTemplate.trialSpec or spec.trialTemplate.configMap can "
            "be specified",
        )
    if isinstance(config_map, dict) and not all(
        config_map.get(k) for k in ("configMapName", "configMapNamespace", "templatePath")
    ):
        return _required(
            (*path, "configMap"),
            "configMapName, configMapNamespace and templatePath must be specified",
        )
    return None


def _trial_parameters(
    path: tuple[str | int, ...], spec: dict[str, Any], trial_parameters: Any, text: str
) -> tuple[list[KatibError], str | None]:
    """Each trial parameter checked and substituted into the template text.

    Returns the errors and the substituted text, or None for the text when a parameter's
    placeholder is missing (the webhook stops there).
    """
    names = {str(p.get("name")) for p in spec.get("parameters") or [] if isinstance(p, dict)}
    errors = []
    seen_names: set[str] = set()
    seen_refs: set[str] = set()
    tp_path = (*path, "trialParameters")
    for i, param in enumerate(trial_parameters):
        param = param if isinstance(param, dict) else {}
        pname, ref = str(param.get("name") or ""), str(param.get("reference") or "")
        problem = _trial_parameter_identity(
            (*tp_path, i), pname, ref, seen_names, seen_refs, trial_parameters
        )
        if problem is not None:
            errors.append(problem)
            continue
        seen_names.add(pname)
        seen_refs.add(ref)
        if names and not is_meta_key(ref) and ref not in names:
            errors.append(
                _invalid(
                    (*tp_path, i, "reference"),
                    ref,
                    f"parameter reference {ref} does not exist in spec.parameters: "
                    f"{_go_params(spec.get('parameters') or [])}",
                )
            )
        placeholder = PARAM_FORMAT % pname
        if placeholder not in text:
            errors.append(
                _invalid(
                    (*tp_path, i, "name"),
                    pname,
                    f"parameter name: {pname} in spec.trialParameters not found in "
                    f"spec.trialTemplate: {text}",
                )
            )
            return errors, None
        text = text.replace(placeholder, "test-value")
    return errors, text


def _trial_parameter_identity(
    path: tuple[str | int, ...],
    pname: str,
    ref: str,
    seen_names: set[str],
    seen_refs: set[str],
    trial_parameters: Any,
) -> KatibError | None:
    """A trial parameter's name and reference: present, brace-free, not seen before."""
    if not pname or not ref or "{" in pname or "}" in pname:
        return _invalid(
            path, "", "name and reference must be specified and name must not contain '{' or '}'"
        )
    shown = _go_trial_params(trial_parameters)
    if pname in seen_names:
        return _invalid(
            (*path, "name"),
            pname,
            f"parameter name {pname} can't be duplicated in "
            f"spec.trialTemplate.trialParameters: {shown}",
        )
    if ref in seen_refs:
        return _invalid(
            (*path, "reference"),
            ref,
            f"parameter reference {ref} can't be duplicated in "
            f"spec.trialTemplate.trialParameters: {shown}",
        )
    return None


def _trial_run_spec(
    path: tuple[str | int, ...], text: str, trial_parameters: Any
) -> list[KatibError]:
    """The substituted template: no placeholder left, decodable, no name, a kind."""
    errors = []
    left = PARAM_REGEX.findall(text)
    if left:
        errors.append(
            _invalid(
                path,
                "",
                f"parameters: [{' '.join(left)}] in spec.trialTemplate not found in "
                f"spec.trialParameters: {_go_trial_params(trial_parameters)}",
            )
        )
    try:
        run_spec = decode_template(text)
    except (ValueError, yaml.YAMLError):
        return [
            *errors,
            _invalid(path, "", f"unable to convert spec.trialTemplate: {text} to unstructured"),
        ]
    meta = run_spec.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    if meta.get("name") or meta.get("namespace"):
        errors.append(
            _invalid(
                path,
                "",
                "metadata.name and metadata.namespace in spec.trialTemplate must be omitted",
            )
        )
    if not run_spec.get("apiVersion") or not run_spec.get("kind"):
        errors.append(
            _required(path, "APIVersion and Kind in spec.trialTemplate must be specified")
        )
    from compiler.katib.batchjob import batch_job_problem  # it reads the Go type facts

    problem = batch_job_problem(run_spec)
    if problem is not None:
        errors.append(_invalid(path, "", f"invalid spec.trialTemplate: {problem}"))
    return errors


def _collector(spec: dict[str, Any], config: KatibConfig) -> list[KatibError]:
    path: tuple[str | int, ...] = ("spec", "metricsCollectorSpec")
    collector = spec.get("collector") or {}
    kind = str(collector.get("kind") or "")
    errors = _collector_config(kind, config, path)
    if kind in ("Push", "StdOut"):
        return errors
    return [*errors, *_collector_source(kind, collector, spec.get("source"), path)]


def _collector_config(
    kind: str, config: KatibConfig, path: tuple[str | int, ...]
) -> list[KatibError]:
    """A collector kind Katib injects must have its config in katib-config."""
    if kind not in ("StdOut", "TensorFlowEvent", "File", "PrometheusMetric"):
        return []
    problem = _config_lookup(
        config.collectors, kind, "metrics collector config for kind", "metrics collector kind"
    )
    if not problem:
        return []
    return [
        _invalid(
            (*path, "collector", "kind"), kind, f"GetMetricsCollectorConfigData failed: {problem}"
        )
    ]


def _collector_source(
    kind: str, collector: dict[str, Any], source: Any, path: tuple[str | int, ...]
) -> list[KatibError]:
    """The metrics source each collector kind needs."""
    source = source if isinstance(source, dict) else None
    fs = (
        source.get("fileSystemPath")
        if source and isinstance(source.get("fileSystemPath"), dict)
        else None
    )
    src_path = (*path, "source")
    if kind == "File":
        return _file_source(source, fs or {}, src_path)
    if kind == "TensorFlowEvent":
        return _event_source(fs or {}, src_path)
    if kind == "PrometheusMetric":
        return _prometheus_source(kind, source, src_path)
    if kind == "Custom":
        if collector.get("customCollector") is None:
            return [
                _required(
                    (*path, "collector", "customCollector"),
                    f"metrics collector kind: {kind} is required",
                )
            ]
        return []
    return [_invalid((*path, "collector", "kind"), kind, f"invalid metrics collector kind: {kind}")]


def _file_source(
    source: dict[str, Any] | None, fs: dict[str, Any], src_path: tuple[str | int, ...]
) -> list[KatibError]:
    errors = []
    if not fs or fs.get("kind") != "File" or not str(fs.get("path", "")).startswith("/"):
        errors.append(
            _required(
                (*src_path, "fileSystemPath", "path"),
                "file path where metrics file exists is required",
            )
        )
    fmt = fs.get("format") or ""
    if fmt not in ("TEXT", "JSON"):
        errors.append(
            _required(
                (*src_path, "fileSystemPath", "format"),
                "format of metrics file is required for metrics collector",
            )
        )
    if fmt == "JSON" and source and source.get("filter") is not None:
        errors.append(
            _invalid(
                (*src_path, "filter"), "", "filter must be nil when format of metrics file is json"
            )
        )
    return errors


def _event_source(fs: dict[str, Any], src_path: tuple[str | int, ...]) -> list[KatibError]:
    errors = []
    if fs.get("kind") != "Directory" or not str(fs.get("path", "")).startswith("/"):
        errors.append(
            _required(
                src_path,
                "directory path where tensorflow event files exist is required by "
                ".spec.metricsCollectorSpec.source.fileSystemPath.path",
            )
        )
    if fs.get("format"):
        errors.append(
            _invalid((*src_path, "fileSystemPath", "format"), fs["format"], "must be empty")
        )
    return errors


def _prometheus_source(
    kind: str, source: dict[str, Any] | None, src_path: tuple[str | int, ...]
) -> list[KatibError]:
    errors = []
    http = (source or {}).get("httpGet") or {}
    port = http.get("port")
    if not (
        (isinstance(port, int) and port > 0)
        or (isinstance(port, str) and port.isdigit() and int(port) > 0)
    ):
        errors.append(
            _invalid(
                (*src_path, "httpGet", "port"),
                str(port),
                f"must be a positive integer value for metrics collector kind: {kind}",
            )
        )
    if not str(http.get("path", "")).startswith("/"):
        errors.append(
            _invalid(
                (*src_path, "httpGet", "path"),
                str(http.get("path", "")),
                f"path is invalid for metrics collector kind: {kind}",
            )
        )
    return errors


# Katib's Go structs in field order, as json.Marshal writes them (every field omitempty):
# "s" a string, "b" a bool, "i*"/"f*" a pointer to a number (an explicit 0 kept), "[s]" a
# string list, "m" a string map, "raw" an Unstructured (keys sorted), ("*", T) a pointer
# to the struct T, ("", T) a struct (never omitted), ("[]", T) a list of T, ("go", T) a
# Kubernetes type T (typeinfo).
_GO_STRUCTS: dict[str, list[tuple[str, Any]]] = {
    "ExperimentSpec": [
        ("parameters", ("[]", "ParameterSpec")),
        ("objective", ("*", "ObjectiveSpec")),
        ("algorithm", ("*", "AlgorithmSpec")),
        ("earlyStopping", ("*", "AlgorithmSpec")),
        ("trialTemplate", ("*", "TrialTemplate")),
        ("parallelTrialCount", "i*"),
        ("maxTrialCount", "i*"),
        ("maxFailedTrialCount", "i*"),
        ("metricsCollectorSpec", ("*", "MetricsCollectorSpec")),
        ("nasConfig", ("*", "NasConfig")),
        ("resumePolicy", "s"),
    ],
    "ParameterSpec": [
        ("name", "s"),
        ("parameterType", "s"),
        ("feasibleSpace", ("", "FeasibleSpace")),
    ],
    "FeasibleSpace": [
        ("max", "s"),
        ("min", "s"),
        ("list", "[s]"),
        ("step", "s"),
        ("distribution", "s"),
    ],
    "ObjectiveSpec": [
        ("type", "s"),
        ("goal", "f*"),
        ("objectiveMetricName", "s"),
        ("additionalMetricNames", "[s]"),
        ("metricStrategies", ("[]", "Setting")),
    ],
    "AlgorithmSpec": [("algorithmName", "s"), ("algorithmSettings", ("[]", "Setting"))],
    "Setting": [("name", "s"), ("value", "s")],
    "TrialTemplate": [
        ("retain", "b"),
        ("trialSpec", "raw"),
        ("configMap", ("*", "ConfigMapSource")),
        ("trialParameters", ("[]", "TrialParameterSpec")),
        ("primaryPodLabels", "m"),
        ("primaryContainerName", "s"),
        ("successCondition", "s"),
        ("failureCondition", "s"),
    ],
    "ConfigMapSource": [
        ("configMapName", "s"),
        ("configMapNamespace", "s"),
        ("templatePath", "s"),
    ],
    "TrialParameterSpec": [("name", "s"), ("description", "s"), ("reference", "s")],
    "MetricsCollectorSpec": [
        ("source", ("*", "SourceSpec")),
        ("collector", ("*", "CollectorSpec")),
    ],
    "SourceSpec": [
        ("httpGet", ("go", "io.k8s.api.core.v1.HTTPGetAction")),
        ("fileSystemPath", ("*", "FileSystemPath")),
        ("filter", ("*", "FilterSpec")),
    ],
    "FilterSpec": [("metricsFormat", "[s]")],
    "FileSystemPath": [("path", "s"), ("kind", "s"), ("format", "s")],
    "CollectorSpec": [
        ("kind", "s"),
        ("customCollector", ("go", "io.k8s.api.core.v1.Container")),
    ],
    "NasConfig": [
        ("graphConfig", ("", "GraphConfig")),
        ("operations", ("[]", "Operation")),
    ],
    "GraphConfig": [("numLayers", "i*"), ("inputSizes", "[i]"), ("outputSizes", "[i]")],
    "Operation": [("operationType", "s"), ("parameters", ("[]", "ParameterSpec"))],
}


def _keys_sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _keys_sorted(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_keys_sorted(v) for v in value]
    return value


def _go_struct(value: Any, name: str) -> dict[str, Any]:
    """``value`` as ``json.Marshal`` writes Katib's struct ``name`` (decoded already)."""
    from compiler.kube.roundtrip import go_roundtrip

    value = value if isinstance(value, dict) else {}
    out: dict[str, Any] = {}
    for key, kind in _GO_STRUCTS[name]:
        item = value.get(key)
        if isinstance(kind, tuple):
            how, inner = kind
            if how == "":
                out[key] = _go_struct(item, inner)
            elif item is None or (how == "[]" and not item):
                continue
            elif how == "*":
                out[key] = _go_struct(item, inner)
            elif how == "[]":
                out[key] = [_go_struct(i, inner) for i in item]
            else:
                out[key] = go_roundtrip(item, inner)
        elif kind in ("i*", "f*"):
            if item is not None:
                out[key] = item
        elif kind == "raw":
            if item is not None:
                out[key] = _keys_sorted(item)  # a Go map
        elif item:  # omitempty: "", false, an empty list or map
            out[key] = dict(sorted(item.items())) if kind == "m" else item
    return out


# The shape of the Experiment fields trainc reads, as Katib's Go types decode them: "s" a
# string, "t:Name" a named string type, "i" an int32, "b" a bool, "m" a string map;
# ("Name", {...}) a struct of Katib's API; a one-element list a list of that. A
# value of another JSON type fails Go's decoding, so Katib's webhook refuses the
# Experiment before validating it (encoding/json's UnmarshalTypeError text).
_STR_LIST = ["s"]
_SETTING = {"name": "s", "value": "s"}
_SHAPE: tuple[str, dict[str, Any]] = (
    "ExperimentSpec",
    {
        "parallelTrialCount": "i",
        "maxTrialCount": "i",
        "maxFailedTrialCount": "i",
        "resumePolicy": "t:ResumePolicyType",
        "objective": (
            "ObjectiveSpec",
            {
                "type": "t:ObjectiveType",
                "objectiveMetricName": "s",
                "additionalMetricNames": _STR_LIST,
                "metricStrategies": [
                    ("MetricStrategy", {"name": "s", "value": "t:MetricStrategyType"})
                ],
            },
        ),
        "algorithm": (
            "AlgorithmSpec",
            {"algorithmName": "s", "algorithmSettings": [("AlgorithmSetting", _SETTING)]},
        ),
        "earlyStopping": (
            "EarlyStoppingSpec",
            {"algorithmName": "s", "algorithmSettings": [("EarlyStoppingSetting", _SETTING)]},
        ),
        "parameters": [
            (
                "ParameterSpec",
                {
                    "name": "s",
                    "parameterType": "t:ParameterType",
                    "feasibleSpace": (
                        "FeasibleSpace",
                        {
                            "max": "s",
                            "min": "s",
                            "list": _STR_LIST,
                            "step": "s",
                            "distribution": "t:Distribution",
                        },
                    ),
                },
            )
        ],
        "trialTemplate": (
            "TrialTemplate",
            {
                "retain": "b",
                "configMap": (
                    "ConfigMapSource",
                    {"configMapName": "s", "configMapNamespace": "s", "templatePath": "s"},
                ),
                "trialParameters": [
                    ("TrialParameterSpec", {"name": "s", "description": "s", "reference": "s"})
                ],
                "primaryPodLabels": "m",
                "primaryContainerName": "s",
                "successCondition": "s",
                "failureCondition": "s",
            },
        ),
    },
)
_PARAMETER = _SHAPE[1]["parameters"][0]
_SHAPE[1]["nasConfig"] = (
    "NasConfig",
    {
        "graphConfig": (
            "GraphConfig",
            {"numLayers": "i", "inputSizes": ["i"], "outputSizes": ["i"]},
        ),
        "operations": [("Operation", {"operationType": "s", "parameters": [_PARAMETER]})],
    },
)
_GO_TYPES = {"s": "string", "i": "int32", "b": "bool", "m": "map[string]string"}


def _go_type(shape: Any) -> str:
    if isinstance(shape, str) and shape.startswith("t:"):  # a named string type
        return f"v1beta1.{shape[2:]}"
    if isinstance(shape, tuple):
        return f"v1beta1.{shape[0]}"
    if isinstance(shape, list):
        return "[]" + _go_type(shape[0])
    return _GO_TYPES[shape]


def _shape_problem(
    value: Any, shape: Any, path: tuple[str | int, ...], struct: str
) -> KatibError | None:
    if value is None:
        return None  # null decodes as the zero value
    if isinstance(shape, tuple):
        name, fields = shape
        if not isinstance(value, dict):
            return _cannot(value, shape, path, struct)
        # Go's decoder reports the first mismatch in the text's order
        for key, item in value.items():
            if key not in fields:
                continue
            found = _shape_problem(item, fields[key], (*path, key), name)
            if found is not None:
                return found
        return None
    if isinstance(shape, list):
        if not isinstance(value, list):
            return _cannot(value, shape, path, struct)
        for index, item in enumerate(value):
            found = _shape_problem(item, shape[0], (*path, index), struct)
            if found is not None:
                return found
        return None
    if shape.startswith("t:"):
        return None if isinstance(value, str) else _cannot(value, shape, path, struct)
    ok = {
        "s": isinstance(value, str),
        "i": isinstance(value, int) and not isinstance(value, bool) and -(2**31) <= value < 2**31,
        "b": isinstance(value, bool),
        "m": isinstance(value, dict) and all(isinstance(v, str) for v in value.values()),
    }[shape]
    if shape == "m" and isinstance(value, dict) and not ok:
        key = next(k for k, v in value.items() if not isinstance(v, str))
        return _cannot(value[key], "s", (*path, key), struct, map_value=True)
    return None if ok else _cannot(value, shape, path, struct)


def _cannot(
    value: Any, shape: Any, path: tuple[str | int, ...], struct: str, map_value: bool = False
) -> KatibError:
    where = ".".join(str(p) for p in (path[:-1] if map_value else path) if not isinstance(p, int))
    kind = json_kind(value)
    if shape == "i" and isinstance(value, int | float) and not isinstance(value, bool):
        kind += " " + json.dumps(value)  # a number that is no int32: Go names the literal
    return KatibError(
        path,
        f"json: cannot unmarshal {kind} into Go struct field {struct}.{where} of type "
        f"{_go_type(shape)}",
    )


def decode_problem(experiment: dict[str, Any]) -> KatibError | None:
    """Why Katib's webhook cannot decode the Experiment into its Go type (it then rejects
    it), or None: a field of the wrong JSON type, an inline trialSpec without a kind."""
    spec = experiment.get("spec")
    if spec is None:
        return None
    if not isinstance(spec, dict):
        return _shape_problem(spec, _SHAPE, ("spec",), "Experiment")
    # the trialSpec's own decoder (Unstructured) fails at once, before any type mismatch
    # Go's decoder has put aside
    template = spec.get("trialTemplate")
    inline = template.get("trialSpec") if isinstance(template, dict) else None
    if inline is not None and not isinstance(inline, dict):
        return KatibError(("spec", "trialTemplate", "trialSpec"), "the trialSpec is not an object")
    if isinstance(inline, dict) and not (
        isinstance(inline.get("kind"), str) and isinstance(inline.get("apiVersion", ""), str)
    ):
        return KatibError(
            ("spec", "trialTemplate", "trialSpec"),
            "Object 'Kind' or 'apiVersion' of the trialSpec is not a string",
        )
    if isinstance(inline, dict) and not inline.get("kind"):
        return KatibError(
            ("spec", "trialTemplate", "trialSpec"), "Object 'Kind' is missing in the trialSpec"
        )
    return _shape_problem(spec, _SHAPE, ("spec",), "Experiment")
