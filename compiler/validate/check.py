"""``trainc check``: load, render and validate; every problem becomes a :class:`Finding`.

:func:`check_paths` runs the whole pipeline and never stops at the first problem::

    load        rule "input" (a path or file that cannot be read, a duplicate object),
                "yaml" (not YAML, not a Kubernetes object), "crd-schema", "crd-cel"
    admission   rule "webhook" (runtime and TrainJob webhooks; deprecations are warnings),
                "resolve" (the runtime a TrainJob references)
    render      every TrainJob that admission lets through
    outputs     rule "output-schema": each rendered object against the CRD of its kind
                (JobSet from sigs.k8s.io/jobset, coscheduling PodGroup from
                sigs.k8s.io/scheduler-plugins, or the CRDs given with ``--schemas``):
                schema, defaults, ObjectMeta and CEL rules, as the API server's create
    policies    ValidatingAdmissionPolicies among the inputs
                (:mod:`compiler.validate.vap`, rule ``vap/<policy>``) and ``.cue`` files
                among the paths (:mod:`compiler.validate.cue`, rule ``cue/<file>``), on
                every input and output object the API server would admit

A finding about a rendered object (stage ``output``) is located at the input that
produced the field (:func:`compiler.validate.trace.locate_output`), never in output.

Nothing is written. :attr:`CheckResult.exit_code` is 2 when an input could not be read
as Kubernetes objects (rules ``input``, ``yaml``, ``policy``), else 1 when there is an
``error`` finding, else 0 (warnings and audit findings allowed).
"""

from __future__ import annotations

import copy
import importlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

from compiler.driver import (
    CompileResult,
    TrainJobSummary,
    compile_loaded,
    field_path_to_json_path,
)
from compiler.errors import (
    EXIT_INPUT_ERROR,
    EXIT_OK,
    EXIT_VIOLATIONS,
    ObjectRef,
    Problem,
    SetupError,
    TraincError,
)
from compiler.load.crds import (
    CrdInfo,
    CrdSet,
    admit,
    crds_with_schemas_from,
    load_crd,
    trainer_crds,
)
from compiler.load.discover import discover_collect
from compiler.load.loader import LoadResult, load_collect, load_previous
from compiler.load.manifest import Manifest
from compiler.render.framework import RenderOptions
from compiler.upstream.artifacts import DEFAULT_TRAINER_VERSION, upstream
from compiler.validate.crd_rules import NOT_CHECKED, check_rules
from compiler.validate.findings import Finding, PolicyObject, Severity
from compiler.validate.trace import locate_output

__all__ = [
    "INPUT_ERROR_RULES",
    "RULE_DESCRIPTIONS",
    "CheckOptions",
    "CheckResult",
    "check_paths",
    "output_crds",
]

# Findings that mean trainc could not read the inputs as intended: exit code 2.
INPUT_ERROR_RULES = frozenset({"input", "yaml", "policy", "overlay"})

# The built-in rules, for reports that describe them (SARIF ``tool.driver.rules``).
RULE_DESCRIPTIONS: dict[str, str] = {
    "input": "Every path exists and is readable; no two objects share a kind and name",
    "yaml": "Every document is YAML that Kubernetes reads, and a Kubernetes object",
    "crd-schema": "Trainer objects match the CRD schema (fields, types, formats, ObjectMeta)",
    "crd-cel": "Trainer objects pass the CRD's CEL validation rules (x-kubernetes-validations)",
    "webhook": "Trainer admission webhooks accept the runtimes and TrainJobs",
    "resolve": "The runtime each TrainJob references exists and is admitted",
    "output-schema": "Rendered JobSets and PodGroups match their CRDs (schema and CEL rules)",
    "policy": "Policies (ValidatingAdmissionPolicy, CUE) can be read and evaluated",
    "overlay": "The cluster's overlays can be read and applied",
    "scheduler": "The schedulers a job needs (coscheduling, Volcano, Kueue) run in the cluster",
    "project": "The project file is valid and its clusters declare the namespaces used",
}

_VAP_GROUP = "admissionregistration.k8s.io/"
_VAP_KINDS = ("ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding")
_NAMESPACE_LABEL = "kubernetes.io/metadata.name"


@dataclass(frozen=True)
class CheckOptions:
    default_namespace: str = "default"
    schemas: Path | None = None  # --schemas DIR: CRDs exported from a cluster
    render: RenderOptions | None = None
    trainer_version: str = DEFAULT_TRAINER_VERSION
    # a project's cluster (compiler.project): its declared namespaces with their labels,
    # for namespaceSelector, and compile_loaded with the cluster's overlays and checks
    namespaces: Mapping[str, Mapping[str, str]] | None = None
    compile: (
        Callable[
            [LoadResult, list[Problem], RenderOptions | None, str],
            tuple[CompileResult, list[Problem]],
        ]
        | None
    ) = None
    # --previous: the inputs as a previous revision had them (files or folders); an object
    # found there makes this an update, so the CRDs' transition rules (oldSelf) run.
    previous: list[Path] | None = None


@dataclass
class CheckResult:
    """Every finding (sorted by place), the objects checked, and the source texts."""

    findings: list[Finding]
    objects: list[PolicyObject] = field(default_factory=list)  # inputs, then outputs
    texts: dict[str, str] = field(default_factory=dict)  # source text by display name
    policy_files: list[str] = field(default_factory=list)  # .cue files found
    notes: list[str] = field(default_factory=list)  # checks skipped, and why

    def count(self, severity: Severity) -> int:
        return sum(1 for f in self.findings if f.severity is severity)

    @property
    def input_error(self) -> bool:
        return any(
            f.rule in INPUT_ERROR_RULES and f.severity is Severity.ERROR for f in self.findings
        )

    @property
    def exit_code(self) -> int:
        if self.input_error:
            return EXIT_INPUT_ERROR
        if self.count(Severity.ERROR):
            return EXIT_VIOLATIONS
        return EXIT_OK

    def summary(self) -> str:
        """``2 errors, 1 warning, 0 audit``."""
        errors, warnings = self.count(Severity.ERROR), self.count(Severity.WARNING)
        return (
            f"{errors} error{'' if errors == 1 else 's'}, "
            f"{warnings} warning{'' if warnings == 1 else 's'}, "
            f"{self.count(Severity.AUDIT)} audit"
        )


# --- output CRDs ------------------------------------------------------------------------


@cache
def _pinned_output_crds(version: str) -> dict[tuple[str, str], CrdInfo]:
    out: dict[tuple[str, str], CrdInfo] = {}
    for path in upstream(version).output_crd_paths():
        for info in load_crd(path):
            out.setdefault((info.group, info.kind), info)
    return out


def output_crds(crds: CrdSet, version: str = DEFAULT_TRAINER_VERSION) -> CrdSet:
    """The pinned CRDs of the rendered kinds, replaced kind by kind by those in ``crds``.

    ``crds`` holds the Trainer CRDs plus whatever ``--schemas DIR`` gave (a JobSet CRD
    exported from the cluster wins over the pinned one).
    """
    return CrdSet({**_pinned_output_crds(version), **crds.crds}, crds.object_meta)


def _crd_name(crd: CrdInfo) -> str:
    return f"{crd.plural}.{crd.group}/{crd.version}"


def _output_ref(data: dict[str, Any]) -> ObjectRef:
    metadata = data.get("metadata") or {}
    return ObjectRef(
        str(data.get("kind", "")), str(metadata.get("name", "")), metadata.get("namespace")
    )


def _validate_output(
    data: dict[str, Any], summary: TrainJobSummary, crds: CrdSet, notes: set[str]
) -> tuple[dict[str, Any] | None, list[Finding]]:
    """The object as the API server would store it (None if rejected), and the findings."""
    api_version, kind = str(data.get("apiVersion", "")), str(data.get("kind", ""))
    if "/" not in api_version:  # core kinds (ConfigMap, Secret): no CRD
        return data, []
    crd = crds.get(api_version, kind)
    if crd is None:
        notes.add(
            f"{kind} {api_version} outputs are not validated: no CRD for it is pinned "
            "(pass one with --schemas DIR)"
        )
        return data, []
    stored = copy.deepcopy(data)
    schema_errors = admit(stored, crd, crds)
    # The "some validation rules were not checked" error repeats the schema errors.
    cel_errors = [
        e for e in check_rules(stored, crd, schema_errors) if not e.detail.endswith(NOT_CHECKED)
    ]
    trainjob = summary.trainjob
    assert trainjob is not None
    findings = []
    for check, errors in (("schema", schema_errors), ("cel", cel_errors)):
        for error in errors:
            findings.append(
                Finding(
                    "output-schema",
                    Severity.ERROR,
                    error.detail,
                    _output_ref(data),
                    error.field,
                    locate_output(data, error.path, trainjob, summary.runtime),
                    stage="output",
                    details=(
                        ("check", check),
                        ("crd", _crd_name(crd)),
                        ("renderedFrom", str(trainjob.ref)),
                    ),
                )
            )
    return (None if findings else stored), findings


# --- policies ---------------------------------------------------------------------------


def _optional_module(name: str, what: str, notes: list[str]) -> Any:
    """``compiler.validate.<name>``, or None with a note when it is not part of this build."""
    module_name = f"compiler.validate.{name}"
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if error.name != module_name:
            raise
        notes.append(f"{what} skipped: {module_name} is not available in this build")
        return None


def _policy_problem_findings(error: TraincError, rule: str) -> list[Finding]:
    problems: list[Problem] = list(getattr(error, "problems", None) or [])
    if not problems:
        return [Finding("policy", Severity.ERROR, f"{rule}: {error}")]
    return [Finding.of_problem(p, "policy") for p in problems]


def _namespaces(
    loaded_others: Iterable[Manifest],
    objects: Iterable[PolicyObject],
    declared: Mapping[str, Mapping[str, str]] | None = None,
) -> dict[str, dict[str, str]]:
    """Namespace labels: from Namespace inputs (then a project's ``declared`` ones), else
    the one label the API server sets."""
    out: dict[str, dict[str, str]] = {}
    for name, labels in (declared or {}).items():
        out[name] = {**labels, _NAMESPACE_LABEL: name}
    for manifest in loaded_others:
        if manifest.kind == "Namespace" and manifest.api_version == "v1" and manifest.name:
            labels = (manifest.data.get("metadata") or {}).get("labels") or {}
            out[manifest.name] = {
                **{str(k): str(v) for k, v in labels.items()},
                _NAMESPACE_LABEL: manifest.name,
            }
    for obj in objects:
        namespace = (obj.data.get("metadata") or {}).get("namespace")
        if isinstance(namespace, str) and namespace and namespace not in out:
            out[namespace] = {_NAMESPACE_LABEL: namespace}
    return dict(sorted(out.items()))


def _vap_findings(
    others: list[Manifest],
    objects: list[PolicyObject],
    notes: list[str],
    declared: Mapping[str, Mapping[str, str]] | None = None,
) -> list[Finding]:
    if not any(m.api_version.startswith(_VAP_GROUP) and m.kind in _VAP_KINDS for m in others):
        return []
    vap = _optional_module("vap", "ValidatingAdmissionPolicy checks", notes)
    if vap is None:
        return []
    try:
        policies = vap.PolicySet.from_manifests(others)
        found: list[Finding] = list(
            policies.evaluate(objects, _namespaces(others, objects, declared))
        )
    except SetupError:
        raise
    except TraincError as error:
        return _policy_problem_findings(error, "ValidatingAdmissionPolicy")
    return found


def _cue_findings(
    files: list[Path], objects: list[PolicyObject], notes: list[str]
) -> list[Finding]:
    if not files:
        return []
    cue = _optional_module("cue", "CUE policies", notes)
    if cue is None:
        return []
    try:
        return list(cue.run_cue(files, objects))
    except cue.CueUnavailable as error:
        if isinstance(error, TraincError):
            raise
        raise SetupError(f"cannot check the CUE policies: {error}") from None
    except SetupError:
        raise
    except TraincError as error:
        return _policy_problem_findings(error, "CUE")


def _relocate_outputs(findings: list[Finding], outputs: list[PolicyObject]) -> list[Finding]:
    """Point each policy finding on an output at the input that produced its field."""
    by_ref = {(o.ref.kind, o.ref.name, o.ref.namespace): o for o in outputs}
    out = []
    for finding in findings:
        ref = finding.object
        target = by_ref.get((ref.kind, ref.name, ref.namespace)) if ref is not None else None
        if finding.stage != "output" or target is None:
            out.append(finding)
            continue
        runtime = target.extra.get("runtime")
        if finding.field_path:
            path = field_path_to_json_path(finding.field_path)
            location = locate_output(target.data, path, target.origin, runtime)
        else:
            location = finding.location or target.origin.locate(())
        origin = ("renderedFrom", str(target.origin.ref))
        details = finding.details if origin in finding.details else (*finding.details, origin)
        out.append(replace(finding, location=location, details=details))
    return out


# --- the check --------------------------------------------------------------------------


def _order(finding: Finding) -> tuple[Any, ...]:
    location = finding.location
    where = (
        (1, "", 0, 0) if location is None else (0, location.file, location.line, location.column)
    )
    return (*where, finding.stage, finding.rule, str(finding.object or ""), finding.message)


def _decode(text: str | bytes) -> str:
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    return text.removeprefix("\ufeff")


def check_paths(paths: list[str], options: CheckOptions | None = None) -> CheckResult:
    """Check everything under ``paths`` (``-`` is stdin); see the module docstring.

    Raises :class:`SetupError` only for what the machine or the command line lacks (the
    upstream cache, a ``--schemas`` directory, the ``cue`` CLI); everything about the
    inputs is a finding.
    """
    options = options or CheckOptions()
    crds = (
        crds_with_schemas_from(options.schemas, options.trainer_version)
        if options.schemas is not None
        else trainer_crds(options.trainer_version)
    )
    previous = (
        load_previous([str(p) for p in options.previous], options.default_namespace, crds)
        if options.previous is not None
        else None
    )
    loaded, load_problems = load_collect(paths, options.default_namespace, crds, previous)
    compile_fn = options.compile or compile_loaded
    compiled, problems = compile_fn(
        loaded, load_problems, options.render, options.default_namespace
    )
    findings = [Finding.of_problem(p, p.rule or "input") for p in problems]
    findings += [
        Finding.of_problem(w, w.rule or "webhook", Severity.WARNING) for w in compiled.warnings
    ]
    loaded = compiled.loaded or loaded  # as the compile step left it (input overlays)
    inputs = [PolicyObject(m.data, m) for m in [*loaded.objects, *loaded.others]]
    outputs: list[PolicyObject] = []
    notes: set[str] = set()
    targets = output_crds(crds, options.trainer_version)
    for summary in compiled.summaries:
        if summary.trainjob is None:
            continue
        for rendered in summary.objects:
            stored, found = _validate_output(rendered.data, summary, targets, notes)
            findings.extend(found)
            if stored is not None:  # what the API server rejects, no policy sees
                outputs.append(
                    PolicyObject(
                        stored,
                        summary.trainjob,
                        stage="output",
                        extra={"runtime": summary.runtime},
                    )
                )
    notes_list = sorted(notes)
    objects = [*inputs, *outputs]
    sources, _ = discover_collect(paths)
    cue_files = [s.path for s in sources if s.kind == "cue" and s.path is not None]
    policy_findings = _vap_findings(loaded.others, objects, notes_list, options.namespaces)
    policy_findings += _cue_findings(cue_files, objects, notes_list)
    findings.extend(_relocate_outputs(policy_findings, outputs))
    texts = {name: _decode(text) for name, text in loaded.texts.items()}
    for source in sources:
        if source.kind == "cue" and source.path is not None:
            try:  # for reports that quote a policy's line
                text = _decode(source.path.read_bytes())
                texts[source.display] = texts[str(source.path)] = text
            except OSError:
                pass
    return CheckResult(
        sorted(findings, key=_order),
        objects,
        texts,
        [str(s.display) for s in sources if s.kind == "cue"],
        notes_list,
    )
