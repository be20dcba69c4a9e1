"""``trainc diff --between-versions OLD NEW``: the repo as it stands, on two Trainer releases.

Every plan (PATHs, or each cluster of the project) is built twice, once emulating
Trainer OLD and once NEW, whatever release the project names for the cluster: what a
platform team wants to know before upgrading. Two kinds of difference:

* *verdicts*: a TrainJob rendered on one release and rejected (webhook, schema,
  controller) or left alone (``spec.managedBy``) on the other;
* *objects*: the per-field changes of the objects both releases create, by cluster,
  TrainJob, object, replicated job and container (:mod:`compiler.deliver.diff`).

A problem that is no TrainJob's (a runtime the schema refuses, a file that is no
Kubernetes object) and that both releases report is an input error, as for any other
verb (exit 2); one only a release reports is listed with the verdicts.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from compiler.deliver.diff import RenderDiff, Renders, diff_renders
from compiler.deliver.diff_format import render_markdown, render_text
from compiler.errors import InputError, sorted_problems
from compiler.model.build import Build
from compiler.model.objects import RenderedObject
from compiler.model.plan import BuildPlan
from compiler.plan.driver import render_whole
from compiler.upstream.names import TRAINJOB_KIND

__all__ = ["Verdict", "VersionDiff", "diff_between_versions", "render_version_diff"]

TrainJobKey = tuple[str, str, str]  # cluster, namespace, name


@dataclass(frozen=True)
class Verdict:
    """A TrainJob whose fate differs: ``rendered``, ``rejected: ...`` or ``skipped (...)``."""

    cluster: str
    namespace: str
    name: str
    old: str
    new: str


@dataclass
class VersionDiff:
    old: str
    new: str
    verdicts: list[Verdict]
    objects: RenderDiff

    @property
    def changed(self) -> bool:
        return bool(self.verdicts) or self.objects.changed


def trainjob_verdicts(build: Build) -> dict[tuple[str, str], str]:
    """What happens to each TrainJob of ``build``: rendered, rejected (first problem), skipped."""
    verdicts: dict[tuple[str, str], str] = {}
    for summary in build.summaries:
        key = (summary.namespace, summary.name)
        verdicts[key] = f"skipped ({summary.skipped})" if summary.skipped else "rendered"
    for problem in build.problems:
        ref = problem.object
        if ref is None or ref.kind != TRAINJOB_KIND:
            continue
        key = (ref.namespace or build.plan.default_namespace, ref.name)
        if not verdicts.get(key, "").startswith("rejected"):
            where = f"{problem.field_path}: " if problem.field_path else ""
            verdicts[key] = f"rejected: {where}{problem.message}"
    return verdicts


def _other_problems(build: Build) -> dict[str, str]:
    """Problems about anything but a TrainJob: object (or place) -> first message."""
    found: dict[str, str] = {}
    for problem in build.problems:
        if problem.object is not None and problem.object.kind == TRAINJOB_KIND:
            continue
        subject = str(problem.object) if problem.object is not None else str(problem.location)
        where = f"{problem.field_path}: " if problem.field_path else ""
        found.setdefault(subject, f"rejected: {where}{problem.message}")
    return found


def _changed_verdicts(cluster: str, old: Build, new: Build) -> list[Verdict]:
    before, after = trainjob_verdicts(old), trainjob_verdicts(new)
    changed = []
    old_other, new_other = _other_problems(old), _other_problems(new)
    both = [
        p
        for p in old.problems
        if (p.object is None or p.object.kind != TRAINJOB_KIND)
        and str(p.object if p.object is not None else p.location) in new_other
    ]
    if both:  # inputs broken on either release: nothing to compare
        raise InputError(sorted_problems(both))
    for subject in sorted(set(old_other) | set(new_other)):
        was, now = old_other.get(subject, "admitted"), new_other.get(subject, "admitted")
        changed.append(Verdict(cluster, "", subject, was, now))
    for key in sorted(set(before) | set(after)):
        was, now = before.get(key, "absent"), after.get(key, "absent")
        if was != now:
            changed.append(Verdict(cluster, key[0], key[1], was, now))
    return changed


def diff_between_versions(plans: Iterable[BuildPlan], old: str, new: str) -> VersionDiff:
    """Build each plan on Trainer ``old`` and on ``new``; what differs."""
    before: dict[str, list[RenderedObject]] = {}
    after: dict[str, list[RenderedObject]] = {}
    verdicts: list[Verdict] = []
    for plan in plans:
        cluster = plan.cluster_name or ""
        old_build, new_build = render_whole([plan.for_trainer(old), plan.for_trainer(new)])
        verdicts += _changed_verdicts(cluster, old_build, new_build)
        before[cluster], after[cluster] = old_build.objects, new_build.objects
    base: Renders = before
    head: Renders = after
    return VersionDiff(old, new, verdicts, diff_renders(base, head, f"Trainer {old}"))


def _headline(diff: VersionDiff) -> str:
    if not diff.changed:
        return f"no TrainJob renders differently on Trainer {diff.old} and {diff.new}"
    jobs = {(t.cluster, t.namespace, t.name) for t in diff.objects.trainjobs}
    jobs |= {(v.cluster, v.namespace, v.name) for v in diff.verdicts if v.namespace}
    count = len(jobs)
    return (
        f"{count} TrainJob{'' if count == 1 else 's'} render differently on Trainer "
        f"{diff.old} and {diff.new}"
    )


def _subject(verdict: Verdict) -> str:
    """``TrainJob ns/name``, or the other object a verdict is about (namespace empty)."""
    if not verdict.namespace:
        return verdict.name
    return f"TrainJob {verdict.namespace}/{verdict.name}"


def _verdict_line(verdict: Verdict, old: str, new: str) -> list[str]:
    where = f"{verdict.cluster}: " if verdict.cluster else ""
    return [
        f"  {where}{_subject(verdict)}",
        f"    {old}: {verdict.old}",
        f"    {new}: {verdict.new}",
    ]


def render_version_diff(diff: VersionDiff, markdown: bool = False) -> str:
    """The diff as text (or a Markdown comment): headline, verdicts, then object changes."""
    if markdown:
        out = [f"### trainc: Trainer {diff.old} -> {diff.new}", "", _headline(diff) + ".", ""]
        if diff.verdicts:
            out += [f"| TrainJob | {diff.old} | {diff.new} |", "| --- | --- | --- |"]
            for v in diff.verdicts:
                name = f"{v.cluster}: {_subject(v)}" if v.cluster else _subject(v)
                cells = [f"`{name}`", v.old, v.new]
                out.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
            out.append("")
        if diff.objects.changed:
            out.append(render_markdown(diff.objects))
        return "\n".join(out).rstrip("\n") + "\n"
    lines = [f"trainc diff: {_headline(diff)}"]
    if diff.verdicts:
        lines += ["", "verdicts that differ:"]
        for verdict in diff.verdicts:
            lines += _verdict_line(verdict, diff.old, diff.new)
    if diff.objects.changed:
        body = render_text(diff.objects).splitlines()[1:]  # its own headline dropped
        lines += ["", f"objects (- Trainer {diff.old}, + Trainer {diff.new}):", *body[1:]]
    return "\n".join(lines) + "\n"
