"""What rendered objects become in a cluster, below each JobSet and in each Katib trial:
``render --expand trials,jobs|pods`` and ``diff --expand jobs|pods``.

:func:`build_expansion` is what ``render`` writes beside a :class:`~compiler.model.build.Build`'s
objects (each object marked expanded, never to be applied); :func:`renders_expanded` is
what ``diff`` compares on both sides. Both go through :func:`compiler.expand.expand`.
The chain below the JobSet and Katib are imported inside the functions: a render that
expands nothing never imports them (tests/test_startup.py).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compiler.model.objects import RenderedObject

if TYPE_CHECKING:
    from compiler.expand import Depth
    from compiler.katib.inputs import TrialJob
    from compiler.model.build import Build
    from compiler.model.objects import AdmittedOutput

__all__ = [
    "build_expansion",
    "expanded_folder",
    "interleaved",
    "jobsets_expanded",
    "renders_expanded",
    "trial_expansion",
]


def _depth(depth: str) -> Depth:
    return "pods" if depth == "pods" else "jobs"


def build_expansion(
    build: Build,
    depths: Sequence[str],
    stored: bool,
    note: Callable[[str], object] = lambda _: None,
) -> list[RenderedObject]:
    """What each stored JobSet of ``build`` becomes at the depth among ``depths`` (``jobs``
    or ``pods``), and with ``trials`` each Katib trial's TrainJob and its objects
    (``stored``: as the server stores them), filed under its Experiment; each object
    marked as expanded. What trainc could not emulate of a trial goes to ``note``.
    Two objects on one path are refused (:class:`~compiler.errors.InputError`)."""
    from compiler.emit.output import planned_files

    depth = next((d for d in depths if d != "trials"), None)
    # the PriorityClasses among the inputs are the cluster's (a Pod's priority, its label)
    classes = [m.data for m in build.loaded.others if m.kind == "PriorityClass"]
    out = [] if depth is None else jobsets_expanded(build.outputs, depth, classes)
    if "trials" in depths:
        for trial in build.katib_trials:
            out += trial_expansion(build, trial, depth, stored, classes, note)
    planned_files(out)  # two objects on one path: refused before anything is written
    return out


def trial_expansion(
    build: Build,
    trial: TrialJob,
    depth: str | None,
    stored: bool,
    classes: list[dict[str, Any]],
    note: Callable[[str], object] = lambda _: None,
) -> list[RenderedObject]:
    """One Katib trial of ``build``: its TrainJob, its objects (``stored``: as the server
    stores them) and, at ``depth``, what its JobSet becomes with Katib's pod webhook on
    its Pods; all filed under the trial's Experiment and marked ``trials``."""
    from compiler.expand.downstream import mark_expanded
    from compiler.plan.katib import trial_pods_injected

    experiment = trial.experiment
    owner = (experiment.namespace or build.plan.default_namespace, experiment.name)
    key = (trial.manifest.namespace or "", trial.manifest.name)
    outputs = [o for o in build.trial_outputs if (o.summary.namespace, o.summary.name) == key]
    objects = [copy.deepcopy(trial.manifest.data)]
    objects += [
        copy.deepcopy(o.stored if stored and o.stored is not None else o.rendered.data)
        for o in outputs
    ]
    expanded = [e.data for e in jobsets_expanded(outputs, depth, classes)] if depth else []
    if depth == "pods":  # Katib's pod webhook on the trial's Pods
        expanded, notes = trial_pods_injected(trial, build.plan.default_namespace, expanded)
        for text in notes:
            note(text)
    objects += expanded
    return [RenderedObject(*owner, mark_expanded(obj, "trials")) for obj in objects]


def jobsets_expanded(
    outputs: Sequence[AdmittedOutput], depth: str, classes: Sequence[dict[str, Any]] = ()
) -> list[RenderedObject]:
    """What each stored JobSet among ``outputs`` becomes at ``depth`` on a cluster with
    the PriorityClasses ``classes``, filed under its TrainJob and marked expanded."""
    from compiler.expand import expand
    from compiler.expand.downstream import mark_expanded

    out = []
    for output in outputs:
        data = output.stored
        if data is None or data.get("kind") != "JobSet":
            continue  # a JobSet the server refuses is a problem reported already
        summary = output.summary
        for obj in expand([*classes, data], _depth(depth)):
            out.append(RenderedObject(summary.namespace, summary.name, mark_expanded(obj, depth)))
    return out


def renders_expanded(
    renders: Mapping[str, Sequence[RenderedObject]], depth: str
) -> dict[str, list[RenderedObject]]:
    """``renders`` (cluster -> objects) with what each JobSet becomes in a cluster right
    after it, at ``depth`` (``jobs``: the Jobs and the headless Service; ``pods``: and
    the Pods), so a diff shows the Jobs and Pods a change adds, removes or changes.
    Nothing is marked (it is compared, not written). A JobSet the JobSet webhook
    refuses adds nothing (the render reports the refusal where it checks below the
    JobSet)."""
    from compiler.expand import DEPTHS, JobSetRefused, expand

    assert depth in DEPTHS, depth
    out: dict[str, list[RenderedObject]] = {}
    for cluster, objects in renders.items():
        expanded = out.setdefault(cluster, [])
        for obj in objects:
            expanded.append(obj)
            if obj.data.get("kind") != "JobSet":
                continue
            try:
                below = expand([obj.data], _depth(depth))
            except JobSetRefused:
                continue
            expanded += [
                RenderedObject(obj.trainjob_namespace, obj.trainjob_name, data) for data in below
            ]
    return out


def interleaved(
    objects: Sequence[RenderedObject], expansion: Sequence[RenderedObject]
) -> list[dict[str, Any]]:
    """The documents of ``objects`` in stream order, each TrainJob's expansion right after
    its own objects (an expansion whose TrainJob has no object here is left out)."""
    from compiler.emit.output import planned_files

    after: dict[tuple[str, str], list[RenderedObject]] = {}
    for obj in expansion:
        after.setdefault((obj.trainjob_namespace, obj.trainjob_name), []).append(obj)
    ordered = [obj for _, obj in planned_files(objects, files=False)]  # grouped by TrainJob
    documents: list[dict[str, Any]] = []
    for index, obj in enumerate(ordered):
        documents.append(obj.data)
        key = (obj.trainjob_namespace, obj.trainjob_name)
        following = ordered[index + 1] if index + 1 < len(ordered) else None
        if following is None or (following.trainjob_namespace, following.trainjob_name) != key:
            documents.extend(e.data for e in after.pop(key, []))
    return documents


def expanded_folder(output: Path) -> Path:
    """Where ``render --expand -o DIR`` writes: beside the output folder, never inside one
    a GitOps tool syncs."""
    return output.with_name(f"{output.name}.expanded")
