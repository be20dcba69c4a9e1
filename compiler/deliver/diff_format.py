"""A :class:`RenderDiff` as text (terminal) or Markdown (a pull-request comment).

Both group the changes cluster -> TrainJob -> object -> replicated job -> container,
in a fixed order (clusters, TrainJobs and objects sorted by name; within an object
the object-level fields first, then each replicated job, then its containers).
Field paths are shown relative to the group they are listed under, whose header
gives the path of the group itself. Markers: ``+`` added, ``-`` removed, ``~`` changed.

Markdown: a summary table (one row per TrainJob), the impact table, then one
collapsible ``<details>`` block per TrainJob.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator

from compiler.deliver.diff import (
    FieldChange,
    InputImpact,
    Key,
    ObjectChange,
    RenderDiff,
    Segment,
    TrainJobDiff,
    format_path,
    format_value,
)
from compiler.queue.assign import format_amount
from compiler.queue.impact import format_impact

__all__ = ["FORMATS", "render_markdown", "render_text"]

FORMATS = ("text", "markdown")
_MARK = {"added": "+", "removed": "-", "changed": "~"}
_MARKDOWN_VALUE_LIMIT = 300


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _headline(diff: RenderDiff) -> str:
    if not diff.changed:
        return f"no rendered output changes against {diff.base}"
    count = _plural(len(diff.trainjobs), "TrainJob")
    clusters = [c for c in diff.clusters if c]
    where = f" in {_plural(len(clusters), 'cluster')}" if clusters else ""
    return f"{count} with rendered output changes against {diff.base}{where}"


def _group_label(prefix: tuple[Segment, ...]) -> str:
    last = prefix[-1]
    assert isinstance(last, Key)
    kind = prefix[-2] if len(prefix) > 1 else ""
    if kind == "replicatedJobs":
        return f"replicated job {last.value}"
    if kind == "containers":
        return f"container {last.value}"
    return f"{kind} {last.value}"  # initContainers x, ephemeralContainers x


def _grouped(
    changes: list[FieldChange],
) -> Iterator[tuple[int, tuple[Segment, ...] | None, FieldChange | None]]:
    """(depth, group prefix to open or None, change or None) in display order."""
    groups: dict[tuple[Segment, ...], list[FieldChange]] = {}
    for change in changes:
        groups.setdefault(change.group_prefix(), []).append(change)
    opened: set[tuple[Segment, ...]] = {()}
    # Paths sharing a prefix sort together, so a group's subgroups follow it.
    for prefix in sorted(groups, key=format_path):
        ancestors = [prefix[: i + 1] for i, s in enumerate(prefix) if isinstance(s, Key)]
        for depth, ancestor in enumerate(ancestors):
            if ancestor not in opened:
                opened.add(ancestor)
                yield depth, ancestor, None
        for change in groups[prefix]:
            yield len(ancestors), None, change


def _group_path(group: tuple[Segment, ...]) -> str:
    """The group's path relative to its enclosing group."""
    parents = [i for i, s in enumerate(group[:-1]) if isinstance(s, Key)]
    return format_path(group[parents[-1] + 1 :] if parents else group)


def _relative(change: FieldChange) -> str:
    prefix = change.group_prefix()
    return format_path(change.path[len(prefix) :]) or format_path(change.path)


def _object_heading(obj: ObjectChange) -> str:
    return f"{obj.title} ({obj.api_version})"


def _impact_targets(impact: InputImpact, with_cluster: bool) -> str:
    if impact.trainjobs is None:
        return "not renderable on its own (see the TrainJobs above)"
    if not impact.trainjobs:
        return "no rendered output changes"
    return ", ".join(
        f"{cluster}: {ns}/{name}" if with_cluster and cluster else f"{ns}/{name}"
        for cluster, ns, name in impact.trainjobs
    )


def render_text(diff: RenderDiff) -> str:
    """The diff for a terminal; ends with a newline."""
    lines = [f"trainc diff: {_headline(diff)}"]
    with_cluster = any(t.cluster for t in diff.trainjobs)
    cluster: str | None = None
    for job in diff.trainjobs:
        indent = ""
        if with_cluster:
            if job.cluster != cluster:
                cluster = job.cluster
                lines += ["", f"cluster {cluster}"]
            indent = "  "
        elif cluster is None:
            cluster = job.cluster
            lines.append("")
        lines.append(f"{indent}TrainJob {job.namespace}/{job.name}: {job.status}")
        for obj in job.objects:
            lines.append(f"{indent}  {_MARK[obj.status]} {_object_heading(obj)}: {obj.status}")
            if obj.refused:
                lines.append(f"{indent}      ! apply refuses this change: {obj.refused}")
            for depth, group, change in _grouped(obj.fields):
                pad = indent + "      " + "  " * depth
                if group is not None:
                    lines.append(f"{pad}{_group_label(group)}  [{_group_path(group)}]")
                elif change is not None:
                    lines.append(pad + _text_change(change))
    if diff.impact is not None:
        lines += ["", "impact of changed inputs:"]
        if not diff.impact:
            lines.append("  no input files changed")
        for impact in diff.impact:
            lines.append(
                f"  {impact.path} ({impact.status}): {_impact_targets(impact, with_cluster)}"
            )
    if diff.quota:
        lines += ["", "quota impact (Kueue):"]
        for cluster, row in diff.quota:
            where = f"cluster {cluster}: " if cluster else ""
            lines.append(f"  {where}{format_impact([row])}")
    if diff.peaks:
        lines += ["", "peak at parallelTrialCount (Katib):"]
        for cluster, line in diff.peaks:
            where = f"cluster {cluster}: " if cluster else ""
            lines.append(f"  {where}{line}")
    return "\n".join(lines) + "\n"


def _text_change(change: FieldChange) -> str:
    path = _relative(change)
    if change.op == "added":
        return f"+ {path}: {format_value(change.new)}"
    if change.op == "removed":
        return f"- {path}: {format_value(change.old)}"
    return f"~ {path}: {format_value(change.old)} -> {format_value(change.new)}"


# --- Markdown ---------------------------------------------------------------------------


def _code(text: str) -> str:
    """An inline code span that holds any text (backticks included)."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _md_value(value: object) -> str:
    text = format_value(value)
    if len(text) > _MARKDOWN_VALUE_LIMIT:
        text = text[: _MARKDOWN_VALUE_LIMIT - 1] + "…"
    return _code(text)


def _md_change(change: FieldChange) -> str:
    path = _code(_relative(change))
    if change.op == "added":
        return f"added {path}: {_md_value(change.new)}"
    if change.op == "removed":
        return f"removed {path}: {_md_value(change.old)}"
    return f"{path}: {_md_value(change.old)} → {_md_value(change.new)}"


def _objects_cell(job: TrainJobDiff) -> str:
    return ", ".join(f"{o.kind} {_MARK[o.status]}" for o in job.objects)


def _job_name(job: TrainJobDiff) -> str:
    return f"{job.namespace}/{job.name}"


def render_markdown(diff: RenderDiff) -> str:
    """The diff as a pull-request comment; ends with a newline."""
    with_cluster = any(t.cluster for t in diff.trainjobs) or any(
        c for i in diff.impact or () for c, _, _ in i.trainjobs or ()
    )
    out = [f"### trainc: rendered output against {_code(diff.base)}", ""]
    if not diff.changed:
        out += ["No rendered output changes.", ""]
    else:
        out += [_headline(diff).replace(f"against {diff.base}", "").strip() + ".", ""]
        head = ["Cluster"] if with_cluster else []
        out.append("| " + " | ".join([*head, "TrainJob", "Change", "Objects", "Fields"]) + " |")
        out.append("|" + " --- |" * (len(head) + 4))
        for job in diff.trainjobs:
            cells = [_code(job.cluster)] if with_cluster else []
            cells += [
                _code(_job_name(job)),
                job.status,
                _cell(_objects_cell(job)),
                str(job.field_count),
            ]
            out.append("| " + " | ".join(_cell(c) for c in cells) + " |")
        out.append("")
    if diff.impact is not None:
        out += ["#### Impact of changed inputs", ""]
        if not diff.impact:
            out += ["No input files changed.", ""]
        else:
            out.append("| Input | Change | TrainJobs whose output changes |")
            out.append("| --- | --- | --- |")
            for impact in diff.impact:
                if impact.trainjobs is None:
                    targets = "_not renderable on its own_"
                elif not impact.trainjobs:
                    targets = "none"
                else:
                    targets = ", ".join(
                        _code(f"{c}: {n}/{m}" if with_cluster and c else f"{n}/{m}")
                        for c, n, m in impact.trainjobs
                    )
                out.append(f"| {_cell(_code(impact.path))} | {impact.status} | {_cell(targets)} |")
            out.append("")
    out += _md_quota(diff)
    out += _md_peaks(diff)
    for job in diff.trainjobs:
        out += _md_details(job, with_cluster)
    return "\n".join(out).rstrip("\n") + "\n"


def _md_quota(diff: RenderDiff) -> list[str]:
    """Kueue's quota impact: one row per cluster, ClusterQueue and resource."""
    if not diff.quota:
        return []
    out = ["#### Quota impact (Kueue)", ""]
    out.append("| Cluster | ClusterQueue | Resource | Before | After | Nominal |")
    out.append("| --- | --- | --- | --- | --- | --- |")
    for cluster, row in diff.quota:
        amounts = (format_amount(row.resource, v) for v in (row.before, row.after, row.nominal))
        cells = [_code(cluster) if cluster else "", _code(row.cluster_queue), _code(row.resource)]
        out.append("| " + " | ".join(_cell(c) for c in [*cells, *amounts]) + " |")
    return [*out, ""]


def _md_peaks(diff: RenderDiff) -> list[str]:
    """Katib: each Experiment whose peak at parallelTrialCount changes."""
    if not diff.peaks:
        return []
    out = ["#### Peak at parallelTrialCount (Katib)", ""]
    for cluster, line in diff.peaks:
        where = f"{_code(cluster)}: " if cluster else ""
        out.append(f"- {where}{_cell(line)}")
    return [*out, ""]


def _md_details(job: TrainJobDiff, with_cluster: bool) -> list[str]:
    where = f"<code>{html.escape(job.cluster)}</code> · " if with_cluster and job.cluster else ""
    summary = (
        f"{where}<code>{html.escape(_job_name(job))}</code> — {job.status}, "
        f"{_plural(job.field_count, 'field')}"
    )
    out = ["<details>", f"<summary>{summary}</summary>", ""]
    for obj in job.objects:
        out.append(
            f"**{obj.kind} {_code(obj.title.split(' ', 1)[1])}** "
            f"({_code(obj.api_version)}) — {obj.status}"
        )
        out.append("")
        if obj.refused:
            out += [f"> **apply refuses this change**: {_cell(obj.refused)}", ""]
        for depth, group, change in _grouped(obj.fields):
            pad = "  " * depth
            if group is not None:
                label = _group_label(group)
                kind, name = label.rsplit(" ", 1)
                out.append(f"{pad}- {kind} {_code(name)}")
            elif change is not None:
                out.append(f"{pad}- {_md_change(change)}")
        out.append("")
    out += ["</details>", ""]
    return out
