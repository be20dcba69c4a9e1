"""Whether the Trainer release the output is for (``migrate --trainer``) takes a job's
migrated objects.

Each release has its own TrainJob and runtime schema (docs/trainer-versions.md): a v1
JAXJob becomes a runtime with ``mlPolicy.jax``, which Trainer v2.1.0 does not have, and
``runPolicy.activeDeadlineSeconds`` becomes ``TrainJob.spec.activeDeadlineSeconds``,
which v2.1.0 lacks too. The migrated objects are loaded as ``trainc render`` loads them
for a cluster of that release (its CRDs: schema, unknown fields, CEL rules; v2.0.0's
webhook rule that a TrainJob name is a DNS-1035 label); what the release refuses is an error of the job's report, and the job is not written: there is
no fallback that keeps what the v1 job did.

    >>> from ruamel.yaml.comments import CommentedMap
    >>> from compiler.migrate.common import Options
    >>> from compiler.migrate.report import JobReport, ObjectId
    >>> job = CommentedMap(apiVersion="trainer.kubeflow.org/v1alpha1", kind="TrainJob",
    ...     metadata={"name": "j"}, spec={"runtimeRef": {"name": "r"}, "activeDeadlineSeconds": 60})
    >>> report = JobReport(ObjectId("kubeflow.org/v1", "PyTorchJob", "default", "j"), "j.yaml")
    >>> release_takes([job], Options(trainer_version="v2.1.0"), report)
    False
    >>> report.errors[0].code, report.errors[0].target_path
    ('REFUSED_BY_RELEASE', 'TrainJob spec.activeDeadlineSeconds')
"""

from __future__ import annotations

import io
import re
from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq

from compiler.errors import Problem
from compiler.migrate.common import Options
from compiler.migrate.report import Diagnostic, JobReport
from compiler.migrate.source import round_trip
from compiler.resolve.names import name_problems
from compiler.upstream.names import TRAINJOB_KIND
from compiler.upstream.versions import TRAINER_VERSIONS, version_key

__all__ = ["release_takes"]


def release_takes(
    objects: list[CommentedMap],
    options: Options,
    report: JobReport,
    source: CommentedMap | None = None,
) -> bool:
    """Whether Trainer ``options.trainer_version`` loads ``objects``; each refusal is
    added to ``report`` as an error, at the field of the v1 job ``source`` it came from
    and with the releases that take it (none: the v1 job must change)."""
    version = options.trainer_version
    problems = _refusals(objects, options.namespace, version)
    later = (
        {
            v: {_key(p) for p in _refusals(objects, options.namespace, v)}
            for v in TRAINER_VERSIONS
            if version_key(v) > version_key(version)
        }
        if problems
        else {}
    )
    for problem in problems:
        kind = problem.object.kind if problem.object is not None else "object"
        field = str(problem.field_path or "")
        field = "" if field == "<nil>" else field  # the API server's path of a root rule
        source_path = _source_path(objects, kind, field, source, report)
        report.add(
            Diagnostic(
                "REFUSED_BY_RELEASE",
                "error",
                source_path,
                f"Trainer {version} refuses the migrated {kind}: {problem.message}",
                target_path=f"{kind} {field}".strip(),
                action="rejected",
                workaround=_workaround(_key(problem), later, source_path, problem.message),
                covers=("*",),
            )
        )
    return not problems


def _refusals(objects: list[CommentedMap], namespace: str, version: str) -> list[Problem]:
    """What Trainer ``version`` refuses of ``objects``, as ``render --trainer`` loads them."""
    from compiler.apiserver.crds import trainer_crds
    from compiler.load.loader import load_texts_collect

    texts: list[tuple[str, str | bytes]] = []
    for index, obj in enumerate(objects):
        out = io.StringIO()
        round_trip().dump(obj, out)
        texts.append((f"<migrated {index}>", out.getvalue()))
    loaded, problems = load_texts_collect(texts, namespace, trainer_crds(version))
    for manifest in loaded.objects:  # v2.0.0's webhook: a TrainJob name is a DNS-1035 label
        if manifest.kind == TRAINJOB_KIND:
            problems += name_problems(manifest, version)
    return problems


def _key(problem: Problem) -> tuple[str, str]:
    """A refusal, whatever the release's wording: the object kind and the field."""
    return (problem.object.kind if problem.object else "", str(problem.field_path or ""))


def _workaround(
    key: tuple[str, str], later: dict[str, set[tuple[str, str]]], source_path: str, message: str
) -> str:
    """The newer releases that take the field, or what to change when none does."""
    taking = [v for v, refused in later.items() if key not in refused]
    if taking and all(
        key not in later[v] for v in later if version_key(v) >= version_key(taking[0])
    ):
        return (
            f"Trainer {taking[0]} and later take it: migrate for the release the cluster runs "
            f"(--trainer), or upgrade the cluster to {taking[0]} or later first"
        )
    where = f"{source_path} in the v1 job" if source_path not in ("", "kind") else "the v1 job"
    text = (
        f"no Trainer release trainc emulates ({TRAINER_VERSIONS[0]} to {TRAINER_VERSIONS[-1]}) "
        f"takes it: change {where}"
    )
    if "unknown field" in message and ".template." in f"{source_path}.":
        text += (
            " (a pod template has only metadata and spec, in the v1 CRD too: its API server "
            "dropped this field, or refused the job under strict field validation; remove it)"
        )
    return text


_STEP = re.compile(r"\[(\d+)\]|([^.\[\]]+)")


def _source_path(
    objects: list[CommentedMap],
    kind: str,
    field: str,
    source: CommentedMap | None,
    report: JobReport,
) -> str:
    """The v1 field a refused field came from: the migrated node at ``field`` (or the
    nearest above it) still has its place in the v1 file (it was copied from there), so
    the v1 path at that place; else a mapping to it; else ``kind`` (the job as a whole)."""
    place = _place([o for o in objects if o.get("kind") == kind], field)
    if place is not None and source is not None:
        found = _path_at(source, place)
        if found:
            return found
    target = f"{kind}.{field}"
    for mapping in report.mappings:
        mapped = mapping.target_path.split(" (")[0]
        if mapped and (target == mapped or target.startswith((mapped + ".", mapped + "["))):
            return mapping.source_path
    return "kind"


def _place(objects: list[CommentedMap], field: str) -> tuple[int, int] | None:
    """Where in its file the deepest copied node on ``field`` was written (line, col)."""
    steps: list[str | int] = [int(i) if i else name for i, name in _STEP.findall(field)]
    place: tuple[int, int] | None = None
    for obj in objects[:1]:
        node: Any = obj
        for step in steps:
            inside = (isinstance(node, CommentedMap) and step in node) or (
                isinstance(node, CommentedSeq) and isinstance(step, int) and step < len(node)
            )
            if not inside:
                break
            where = _written_at(node, step)
            if where:
                place = where
            node = node[step]
    return place


def _path_at(root: CommentedMap, place: tuple[int, int]) -> str:
    """The path (the report's notation: ``spec.xgbReplicaSpecs[Master].template``) of
    the key or item written at ``place`` in ``root``, found without recursion."""
    stack: list[tuple[Any, str, str]] = [(root, "", "")]
    while stack:
        node, path, parent_key = stack.pop()
        if isinstance(node, CommentedMap):
            for key, value in node.items():
                step = f"[{key}]" if parent_key.endswith("ReplicaSpecs") else f".{key}"
                child = (path + step).lstrip(".")
                where = _written_at(node, key)
                if where == place:
                    return child
                stack.append((value, child, str(key)))
        elif isinstance(node, CommentedSeq):
            for index, value in enumerate(node):
                where = _written_at(node, index)
                if where == place:
                    return f"{path}[{index}]"
                stack.append((value, f"{path}[{index}]", ""))
    return ""


def _written_at(node: CommentedMap | CommentedSeq, key: Any) -> tuple[int, int] | None:
    """Where ``key`` of ``node`` was read from (0-based line, column), if it was read."""
    where = (getattr(node.lc, "data", None) or {}).get(key)
    return (where[0], where[1]) if where else None
