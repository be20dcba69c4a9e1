"""``trainc check``: load, render and validate; every problem becomes a :class:`Finding`.

:func:`check` runs the render chain with the policy files loaded too, then the
validation stages (:data:`CHECK_STAGES`), and never stops at the first problem::

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
                (:mod:`compiler.policy.vap`, rule ``vap/<policy>``) and ``.cue`` files
                among the paths (:mod:`compiler.policy.cue`, rule ``cue/<file>``), on
                every input and output object the API server would admit

A finding about a rendered object (stage ``output``) is located at the input that
produced the field (:func:`compiler.provenance.locate.locate_output`), never in output.

Nothing is written. :attr:`CheckResult.exit_code` is 2 whenever ``trainc render`` would
exit 2 on the same inputs (any error of the render chain: rules ``input``, ``yaml``,
``crd-schema``, ``crd-cel``, ``webhook``, ``resolve``, ``render``, ``overlay``,
``lock``, ``output-schema``, ``scheduler``, ``project``) or a policy cannot be read
(``policy``); else 1 when there is an ``error`` finding of a policy (``vap/...``,
``cue/...``); else 0 (warnings and audit findings allowed).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from compiler.apiserver.manifest import Manifest, parse_field_path
from compiler.apiserver.yaml_source import read_source
from compiler.errors import (
    Finding,
    InputError,
    JsonPath,
    Problem,
    SetupError,
    Severity,
    SourceLocation,
    TraincError,
    UsageError,
    finding_order,
)
from compiler.load.discover import discover_collect
from compiler.model.build import Build, Stage
from compiler.model.check import CheckResult
from compiler.model.plan import BuildPlan
from compiler.plan.build_plan import plan_for_paths
from compiler.plan.katib import katib_relabel, katib_relabel_findings
from compiler.plan.queues import check_queues
from compiler.plan.stages import RENDER_STAGES, load_with_policies, run
from compiler.policy.cue import CueUnavailable, run_cue
from compiler.policy.objects import PolicyObject
from compiler.policy.vap import PolicySet
from compiler.provenance.locate import locate_output

__all__ = [
    "CHECK_STAGES",
    "check",
    "check_paths",
    "check_plans",
]

_VAP_GROUP = "admissionregistration.k8s.io/"
_VAP_KINDS = ("ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding")
_NAMESPACE_LABEL = "kubernetes.io/metadata.name"


# --- policies ---------------------------------------------------------------------------


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
    try:
        policies = PolicySet.from_manifests(others)
        found: list[Finding] = list(
            policies.evaluate(objects, _namespaces(others, objects, declared), _locate_output)
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
    try:
        return list(run_cue(files, objects))
    except CueUnavailable as error:
        if isinstance(error, TraincError):
            raise
        raise SetupError(f"cannot check the CUE policies: {error}") from None
    except (SetupError, UsageError):  # the machine or the command line, not a policy
        raise
    except TraincError as error:
        return _policy_problem_findings(error, "CUE")


def _locate_output(output: PolicyObject, path: JsonPath) -> SourceLocation:
    """The input that produced field ``path`` of ``output``."""
    return locate_output(output.data, path, output.origin, output.extra.get("runtime"))


def _relocate_outputs(findings: list[Finding], outputs: list[PolicyObject]) -> list[Finding]:
    """Point each CUE finding on an output at the input that produced its field (a
    ValidatingAdmissionPolicy places its own as it makes them, by :func:`_locate_output`)."""
    if not any(finding.stage == "output" for finding in findings):
        return findings
    by_ref: dict[tuple[str, str, Any], PolicyObject] = {}
    for output in outputs:  # keyed as PolicyObject.ref, without making each ref
        metadata = output.data.get("metadata") or {}
        key = (str(output.data.get("kind", "")), str(metadata.get("name", "")))
        by_ref[(*key, metadata.get("namespace"))] = output
    origins: dict[int, tuple[str, str]] = {}  # ("renderedFrom", input) by id of the output
    out = []
    for finding in findings:
        ref = finding.object
        target = by_ref.get((ref.kind, ref.name, ref.namespace)) if ref is not None else None
        if finding.stage != "output" or target is None:
            out.append(finding)
            continue
        if finding.field_path:
            location = _locate_output(target, parse_field_path(finding.field_path))
        else:
            location = finding.location or target.origin.locate(())
        origin = origins.get(id(target))
        if origin is None:
            origin = origins[id(target)] = ("renderedFrom", str(target.origin.ref))
        details = finding.details if origin in finding.details else (*finding.details, origin)
        out.append(
            Finding(
                finding.rule,
                finding.severity,
                finding.message,
                finding.object,
                finding.field_path,
                location,
                finding.stage,
                details,
            )
        )
    return out


# --- the check --------------------------------------------------------------------------


def _decode(text: str | bytes) -> str:
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    return text.removeprefix("\ufeff")


# --- the check stages -------------------------------------------------------------------


def findings_of_problems(build: Build) -> None:
    """Every problem of load, admission, render and overlays as a finding.

    Reads ``problems``, ``warnings``; adds ``findings``."""
    build.findings += [Finding.of_problem(p, p.rule or "input") for p in build.problems]
    build.findings += [
        Finding.of_problem(w, w.rule or "webhook", Severity.WARNING) for w in build.warnings
    ]


def policy_objects(build: Build) -> None:
    """What policies see: every input as loaded, then every output as the API server
    stores it (what it refuses, no policy sees).

    Reads ``loaded``, ``outputs``; adds ``checked``."""
    loaded = build.loaded
    build.checked = [PolicyObject(m.data, m) for m in [*loaded.objects, *loaded.others]]
    for output in build.outputs:
        trainjob = output.summary.trainjob
        if output.stored is not None and trainjob is not None:
            build.checked.append(
                PolicyObject(
                    output.stored,
                    trainjob,
                    stage="output",
                    extra={"runtime": output.summary.runtime},
                )
            )


def _outputs(build: Build) -> list[PolicyObject]:
    return [o for o in build.checked if o.stage == "output"]


def evaluate_policies(build: Build) -> None:
    """ValidatingAdmissionPolicies among the loaded objects, on every checked object.

    Reads ``loaded``, ``checked``, ``plan.cluster``; adds ``findings``."""
    declared = build.plan.cluster.namespaces if build.plan.cluster is not None else None
    # findings about outputs are placed at their inputs as they are made
    build.findings += _vap_findings(build.loaded.others, build.checked, build.notes, declared)


def _cue_files(build: Build) -> list[Path]:
    sources, _ = discover_collect([*build.plan.inputs, *build.plan.policies])
    return [s.path for s in sources if s.kind == "cue" and s.path is not None]


def evaluate_cue(build: Build) -> None:
    """``.cue`` files among the inputs and policies, by the pinned ``cue`` CLI.

    Reads ``plan``, ``checked``; adds ``findings``."""
    found = _cue_findings(_cue_files(build), build.checked, build.notes)
    build.findings.extend(_relocate_outputs(found, _outputs(build)))


CHECK_STAGES: tuple[Stage, ...] = (
    load_with_policies,
    *RENDER_STAGES[1:-1],  # katib_outputs last: the policies check the trials' objects
    check_queues,
    katib_relabel,
    findings_of_problems,
    policy_objects,
    evaluate_policies,
    evaluate_cue,
    katib_relabel_findings,
    RENDER_STAGES[-1],  # katib_outputs: what is delivered (argocd generate) is render's
)


def _texts(build: Build) -> tuple[dict[str, str], list[str]]:
    """Source texts by display name (for reports that quote a line), and the .cue files."""
    texts = {name: _decode(text) for name, text in build.loaded.texts.items()}
    sources, _ = discover_collect([*build.plan.inputs, *build.plan.policies])
    cue = [s for s in sources if s.kind == "cue"]
    for source in cue:
        if source.path is not None:
            try:
                text = _decode(read_source(source.path))
                texts[source.display] = texts[str(source.path)] = text
            except InputError:
                pass
    return texts, [str(s.display) for s in cue]


def check(plan: BuildPlan, stages: tuple[Stage, ...] = CHECK_STAGES) -> CheckResult:
    """Check one plan; see the module docstring.

    Raises :class:`SetupError` only for what the machine or the command line lacks (the
    upstream cache, a ``--schemas`` directory, the ``cue`` CLI); everything about the
    inputs is a finding.
    """
    build = run(plan, stages)
    texts, cue_files = _texts(build)
    return CheckResult(
        sorted(build.findings, key=finding_order),
        build.checked,
        texts,
        cue_files,
        sorted(set(build.notes)),
        [build],
        render_failed=bool(build.problems),
    )


def check_paths(paths: list[str], **options: Any) -> CheckResult:
    """Check everything under ``paths`` (``-`` is stdin); ``options`` as for
    :func:`~compiler.plan.build_plan.plan_for_paths`."""
    return check(plan_for_paths(paths, **options))


def check_plans(
    plans: list[BuildPlan],
    stages: tuple[Stage, ...] = CHECK_STAGES,
    check_one: Callable[[BuildPlan], CheckResult] | None = None,
) -> CheckResult:
    """Every plan checked (by ``check_one``, default :func:`check` with ``stages``),
    merged into one result.

    With several clusters, a finding found the same way in several of them is reported
    once; its ``cluster`` detail names them all (``production, staging``).
    """
    if check_one is None:

        def check_one(plan: BuildPlan) -> CheckResult:
            return check(plan, stages)

    if len(plans) == 1 and plans[0].cluster is None:
        return check_one(plans[0])
    merged: dict[Finding, list[str]] = {}
    combined = CheckResult([])
    notes: set[str] = set()
    policy_files: dict[str, None] = {}
    for plan in plans:
        result = check_one(plan)
        for finding in result.findings:
            merged.setdefault(finding, []).append(plan.cluster_name or "")
        combined.objects.extend(result.objects)
        combined.texts.update(result.texts)
        combined.builds.extend(result.builds)
        combined.render_failed |= result.render_failed
        notes.update(result.notes)
        policy_files.update(dict.fromkeys(result.policy_files))
    combined.findings = sorted(
        (
            finding._replace(details=(*finding.details, ("cluster", ", ".join(names))))
            for finding, names in merged.items()
        ),
        key=finding_order,
    )
    combined.notes = sorted(notes)
    combined.policy_files = list(policy_files)
    return combined
