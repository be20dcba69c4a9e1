"""``trainc render``: the objects the Trainer controller would create, to files or stdout.

trainc render PATH... [-o DIR | -o -] [--owner-uid UID]
trainc render [--project FILE] [--cluster NAME] [-o DIR]   (trainc.yaml: every cluster)
trainc render -q --staged   (the pre-commit hook: exit 1 when the output folder differs from
                             git's index: see compiler/deliver/staged.py)
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Iterable
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING

from compiler.cli.common import (
    Commands,
    add_build_flags,
    add_jobs,
    add_no_cache,
    build_plans,
    how_to_run,
    note,
    one_plan,
    prepared_file,
    report_problems,
    warn,
)
from compiler.errors import EXIT_OK, UsageError, listing

if TYPE_CHECKING:
    from compiler.model.build import Build
    from compiler.model.objects import RenderedObject
    from compiler.model.plan import BuildPlan
    from compiler.plan.driver import Rendered
    from compiler.render.info import SecretRequirement


def add_parser(commands: Commands) -> None:
    parser = commands.add_parser("render", help="render TrainJobs into JobSet, PodGroup, ...")
    add_build_flags(parser, owner_uid=True)
    parser.add_argument(
        "-o",
        "--output",
        default=None,
        metavar="DIR",
        help="output directory, replaced atomically (or, when the render cache knows it and "
        "few files change, those files replaced one by one); '-' writes one YAML stream to "
        "stdout (default with PATHs; with a project, its output folder)",
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="no summary lines")
    parser.add_argument(
        "--staged",
        action="store_true",
        help="after writing, exit 1 when the output folder differs from the git index (new, "
        "changed or removed files not staged): the commit would lack what trainc renders; "
        "for the pre-commit hook",
    )
    parser.add_argument(
        "--server-defaults",
        action="store_true",
        help="write objects as the API server stores them, their CRDs' defaults applied (to "
        "compare with `kubectl get -o yaml`); off by default: the controller's own objects",
    )
    parser.add_argument(
        "--emit",
        choices=("resolved", "trainjobs"),
        default="resolved",
        help="trainjobs: the policy-mutated runtimes and TrainJobs (after overlays and "
        "admission, validated as for resolved) instead of the objects the controller makes",
    )
    parser.add_argument(
        "--provenance",
        metavar="FILE",
        help="also write where every output field came from, as JSON, to FILE",
    )
    parser.add_argument(
        "--expand",
        type=_expand_depths,
        metavar="trials,jobs|pods",
        help="also write what each JobSet becomes in a cluster: its Jobs and headless Service "
        "(jobs), and the Pods the Job controller creates (pods); trials: each planned Katib "
        "trial's TrainJob and its objects, after its Experiment; a comma list (trials,pods); "
        "on stdout after each TrainJob's objects, with -o DIR into DIR.expanded/ (annotated "
        "trainc.dev/expanded: never applied); see the manual's 'Below the JobSet'",
    )
    add_jobs(parser)
    add_no_cache(
        parser,
        "render every TrainJob again (default: reuse what $TRAINC_CACHE/render holds "
        "for unchanged inputs; the output is the same either way)",
    )


_DEPTHS = ("trials", "jobs", "pods")


def _expand_depths(value: str) -> tuple[str, ...]:
    """``--expand``'s comma list, in a fixed order (``pods`` includes ``jobs``)."""
    given = {v.strip() for v in value.split(",")}
    unknown = sorted(given - set(_DEPTHS))
    if unknown or not given:
        raise argparse.ArgumentTypeError(
            f"{', '.join(unknown) or value!r}: not one of {', '.join(_DEPTHS)} "
            "(a comma list, for example trials,pods)"
        )
    return tuple(d for d in _DEPTHS if d in given and not (d == "jobs" and "pods" in given))


def _secret_notes(requirements: Iterable[SecretRequirement]) -> None:
    for requirement in requirements:
        note(
            f"Secret {requirement.namespace}/{requirement.name} holds generated keys: "
            "not rendered (see requirements.yaml in an output folder)"
        )


class _Said:
    """Notes and warnings, not said again when a render starts over (the render cache
    pruned meanwhile: :func:`compiler.plan.driver.render`) and finds them again: each is said as often
    as the attempt that said it most often."""

    def __init__(self) -> None:
        self._before: Counter[tuple[str, str, str | None]] = Counter()
        self._now: Counter[tuple[str, str, str | None]] = Counter()

    def start_over(self) -> None:
        self._before, self._now = self._before | self._now, Counter()

    def note(self, message: object, cluster: str | None = None) -> None:
        if self._new("note", message, cluster):
            note(message, cluster)

    def warn(self, message: object, cluster: str | None = None) -> None:
        if self._new("warning", message, cluster):
            warn(message, cluster)

    def warn_all(self, warnings: Iterable[object], cluster: str | None = None) -> None:
        """Each warning as :func:`~compiler.cli.common.warn_all` bounds the list."""
        for line in listing((str(w) for w in warnings), what=" warnings"):
            self.warn(line, cluster)

    def _new(self, kind: str, message: object, cluster: str | None) -> bool:
        key = (kind, str(message), cluster)
        self._now[key] += 1
        return self._now[key] > self._before[key]


def run_verb(args: argparse.Namespace) -> int:
    # Imported here, not at the top: every verb's parser is built on each start, and a
    # pre-commit hook or an Argo CD plugin pays for what the other verbs import.
    from compiler.plan import driver

    plans = build_plans(args)
    project_mode = plans[0].cluster is not None
    to_stdout = args.output == "-" or (args.output is None and not project_mode)
    if args.staged and to_stdout:
        raise UsageError("trainc render: --staged compares an output folder with git's index")
    if args.expand and args.emit == "trainjobs":
        raise UsageError("trainc render: --expand is for --emit resolved")
    output = None
    if not to_stdout:
        cluster = plans[0].cluster
        output = Path(args.output) if args.output is not None else None
        output = output or (cluster.output if cluster is not None else None)
    said = _Said()

    def write(rendered: driver.Rendered) -> int:
        said.start_over()  # a render started over: say again only what is new
        if rendered.parts is not None:
            return _write_parts_of(args, rendered, output, project_mode, said)
        assert rendered.builds is not None
        return _write_builds(args, rendered.builds, project_mode, said)

    # the whole builds, for what only they have: the TrainJobs themselves, provenance,
    # the stored JobSets --expand expands
    whole = args.emit != "resolved" or bool(args.provenance) or bool(args.expand)
    near = None if output is None else output.resolve().parent
    code = driver.render(
        plans,
        how_to_run(args),
        write,
        whole=whole,
        stored=args.server_defaults,
        files=not to_stdout,
        near=near,
    )
    return _staged(args, plans, code)


def _write_builds(
    args: argparse.Namespace, builds: list[Build], project_mode: bool, said: _Said
) -> int:
    """Write the whole builds: their objects as a stream or a tree, and the summary."""
    from compiler.emit.output import stream_text, write_directory, write_project

    for build in builds:
        for message in build.notes:
            said.note(message, build.plan.cluster_name)
        said.warn_all(build.warnings, build.plan.cluster_name)
    report_problems(p for build in builds for p in build.problems)
    for build in builds:
        _warn_if_empty(args, build.plan.cluster_name, len(build.summaries) + len(build.passed))
    if args.emit == "trainjobs":
        if args.server_defaults:
            raise UsageError("trainc render: --server-defaults is for --emit resolved")
        from compiler.deliver.apply.plan import as_trainjobs

        builds = [as_trainjobs(build) for build in builds]
    objects = {
        id(build): build.stored_objects() if args.server_defaults else build.objects
        for build in builds
    }
    expanded = {}
    if args.expand:
        from compiler.plan.expansion import build_expansion

        expanded = {
            id(build): build_expansion(build, args.expand, args.server_defaults, note)
            for build in builds
        }
    # Provenance is per cluster: refuse before anything is written.
    provenance = None
    if args.provenance:
        from compiler.deliver.explain import provenance_document, trace_result

        provenance = provenance_document(trace_result(one_plan_build(args, builds)))
    with ExitStack() as outputs:
        # The provenance file is written first, beside its place, and put there last:
        # a folder it cannot be written to stops the run before the objects are written.
        put_provenance = (
            outputs.enter_context(prepared_file(Path(args.provenance), provenance, "--provenance"))
            if provenance is not None
            else None
        )
        if args.output == "-" or (args.output is None and not project_mode):
            for build in builds:
                if project_mode:
                    sys.stdout.write(f"# cluster: {build.plan.cluster_name}\n")
                if args.expand:
                    sys.stdout.write(_expanded_stream(objects[id(build)], expanded[id(build)]))
                else:
                    sys.stdout.write(stream_text(objects[id(build)]))
                if not project_mode:
                    _secret_notes(build.secret_requirements)
            if put_provenance is not None:
                put_provenance()
            return EXIT_OK
        if project_mode:
            target = builds[0].plan.cluster
            assert target is not None
            output = Path(args.output) if args.output is not None else target.output
            by_cluster = {build.plan.cluster_name or "": build for build in builds}
            count = write_project(
                by_cluster, output, whole=args.cluster is None, stored=args.server_defaults
            )
            for build in builds if args.expand else ():
                _write_expansion(args, expanded[id(build)], output, build.plan.cluster_name)
        else:
            output = Path(args.output)
            build = builds[0]
            count = write_directory(objects[id(build)], output, build.secret_requirements)
            if args.expand:
                _write_expansion(args, expanded[id(build)], output)
        if put_provenance is not None:
            put_provenance()
    if not args.quiet:
        lines = [(b.plan.cluster_name, [s.line() for s in b.summaries]) for b in builds]
        _print_summary(lines, count, output, project_mode)
    return EXIT_OK


def _expanded_stream(objects: list[RenderedObject], expansion: list[RenderedObject]) -> str:
    """The stream of ``objects`` with each TrainJob's expansion right after its objects."""
    from compiler.emit.yaml_text import dump_documents
    from compiler.plan.expansion import interleaved

    return dump_documents(interleaved(objects, expansion))


def _write_expansion(
    args: argparse.Namespace,
    expansion: list[RenderedObject],
    output: Path,
    cluster: str | None = None,
) -> None:
    """Write ``expansion`` beside the output folder (a project's: by cluster)."""
    from compiler.emit.output import write_directory
    from compiler.plan.expansion import expanded_folder

    folder = expanded_folder(output)
    if cluster is not None:
        folder = folder / cluster
    written = write_directory(expansion, folder)
    if not args.quiet:
        note(f"{written} expanded objects ({','.join(args.expand)}) written to {folder}")


def _warn_if_empty(args: argparse.Namespace, cluster: str | None, jobs: int) -> None:
    """Say so when there is nothing to render: an empty or mistyped folder would
    otherwise exit 0 with no output and no word (exit 0 still: no input is wrong)."""
    if jobs == 0:
        where = ", ".join(args.paths) if args.paths else "the project's inputs"
        warn(f"no TrainJob in {where}: nothing to render", cluster)


def _staged(args: argparse.Namespace, plans: list[BuildPlan], code: int) -> int:
    """``--staged``: after a render into a folder, compare the folder with git's index."""
    if not args.staged or code != EXIT_OK:
        return code
    from compiler.deliver.staged import staged_differences

    cluster = plans[0].cluster
    output = Path(args.output) if args.output is not None else None
    output = output or (cluster.output if cluster is not None else None)
    assert output is not None  # refused before the render: see run_verb
    report = staged_differences(output)
    if report.differs:
        sys.stderr.write(report.text())
    return report.exit_code


def _write_parts_of(
    args: argparse.Namespace,
    rendered: Rendered,
    output: Path | None,
    project_mode: bool,
    said: _Said,
) -> int:
    """Write a render by chunks (:mod:`compiler.plan.chunks`): the objects streamed from
    their blobs, or an output tree linked to them (updated in place from the cache)."""
    from compiler.emit.output import MissingBlob

    parts, store, cache = rendered.parts, rendered.store, rendered.cache
    assert parts is not None and store is not None
    for part in parts:
        for message in part.notes:
            said.note(message, part.plan.cluster_name)
        said.warn_all(part.warnings, part.plan.cluster_name)
        _warn_if_empty(args, part.plan.cluster_name, len(part.summaries))
    if output is None:
        missing = next((o for p in parts for o in p.objects if not store.has(o.digest)), None)
        if missing is not None:  # found before the first byte is written
            raise MissingBlob(store.path(missing.digest))
        _stream_parts(rendered, project_mode)
        return EXIT_OK
    from compiler.emit import tree

    records = None if cache is None else cache / "trees"
    count = tree.write_parts(parts, store, output, project_mode, args.cluster is None, records)
    if not args.quiet:
        lines = [(p.plan.cluster_name, [s.line for s in p.summaries]) for p in parts]
        _print_summary(lines, count, output, project_mode)
    return EXIT_OK


def _stream_parts(rendered: Rendered, project_mode: bool) -> None:
    """The objects of each part as one YAML stream, in stream order, one blob at a time
    (one pruned meanwhile made again: :meth:`~compiler.plan.driver.Rendered.blob`)."""
    assert rendered.parts is not None
    for part in rendered.parts:
        if project_mode:
            sys.stdout.write(f"# cluster: {part.plan.cluster_name}\n")
        for index, obj in enumerate(part.objects):
            if index:
                sys.stdout.write("---\n")
            sys.stdout.write(rendered.blob(part, obj.digest).decode("utf-8"))
        if not project_mode:
            _secret_notes(part.secret_requirements)


def one_plan_build(args: argparse.Namespace, builds: list[Build]) -> Build:
    one_plan(args, [b.plan for b in builds])
    return builds[0]


def _print_summary(
    lines: list[tuple[str | None, list[str]]], count: int, output: Path, project_mode: bool
) -> None:
    """Each TrainJob's summary line (by cluster: ``lines`` holds each cluster's name and
    lines), then the count of what was written."""
    jobs = sum(len(cluster_lines) for _, cluster_lines in lines)
    if not project_mode:
        for line in lines[0][1]:
            print(line)
        print(f"trainc: {count} objects for {jobs} TrainJobs written to {output}")
        return
    for cluster, cluster_lines in lines:
        for line in cluster_lines:
            print(f"{cluster}: {line}")
    print(
        f"trainc: {count} objects for {jobs} TrainJobs in {len(lines)} clusters written to {output}"
    )
