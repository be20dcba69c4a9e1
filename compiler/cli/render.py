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
from typing import TYPE_CHECKING, Any

from compiler.cli.common import (
    Commands,
    add_build_flags,
    add_jobs,
    build_plans,
    jobs_of,
    note,
    one_plan,
    prepared_file,
    report_problems,
    warn,
)
from compiler.errors import EXIT_OK, SetupError, UsageError, listing

if TYPE_CHECKING:
    from compiler.emit.incremental import BlobStore, PartBuild
    from compiler.plan.build_plan import BuildPlan
    from compiler.plan.compile import RenderedObject
    from compiler.plan.stages import Build


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
        choices=("jobs", "pods"),
        help="also write what each JobSet becomes in a cluster: its Jobs and headless Service "
        "(jobs), and the Pods the Job controller creates (pods); on stdout after each "
        "TrainJob's objects, with -o DIR into DIR.expanded/ (annotated trainc.dev/expanded: "
        "never applied); see the manual's 'Below the JobSet'",
    )
    add_jobs(parser)
    parser.add_argument(
        "--no-cache",
        action="store_true",
        help="render every TrainJob again (default: reuse what $TRAINC_CACHE/render holds "
        "for unchanged inputs; the output is the same either way)",
    )


def _secret_notes(build: Build) -> None:
    for requirement in build.secret_requirements:
        note(
            f"Secret {requirement.namespace}/{requirement.name} holds generated keys: "
            "not rendered (see requirements.yaml in an output folder)"
        )


class _Said:
    """Notes and warnings, not said again when a render starts over (the render cache
    pruned meanwhile: :func:`_run_parts`) and finds them again: each is said as often
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
    from compiler.emit.output import stream_text, write_directory, write_project
    from compiler.plan.stages import run

    plans = build_plans(args)
    project_mode = plans[0].cluster is not None
    if args.staged and (args.output == "-" or (args.output is None and not project_mode)):
        raise UsageError("trainc render: --staged compares an output folder with git's index")
    if args.expand and args.emit == "trainjobs":
        raise UsageError("trainc render: --expand is for --emit resolved")
    said = _Said()
    if args.emit == "resolved" and not args.provenance and not args.expand:
        done = _run_parts(args, plans, project_mode, said)
        if done is not None:
            return _staged(args, plans, done)
        said.start_over()
    builds = [run(plan) for plan in plans]
    for build in builds:
        for message in build.notes:
            said.note(message, build.plan.cluster_name)
        said.warn_all(build.warnings, build.plan.cluster_name)
    report_problems(p for build in builds for p in build.problems)
    for build in builds:
        _warn_if_empty(args, build.plan.cluster_name, len(build.summaries))
    if args.emit == "trainjobs":
        if args.server_defaults:
            raise UsageError("trainc render: --server-defaults is for --emit resolved")
        from compiler.deliver.apply.plan import as_trainjobs

        builds = [as_trainjobs(build) for build in builds]
    objects = {
        id(build): build.stored_objects() if args.server_defaults else build.objects
        for build in builds
    }
    expanded = {id(build): _expansion(build, args.expand) for build in builds if args.expand}
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
                    _secret_notes(build)
            if put_provenance is not None:
                put_provenance()
            return EXIT_OK
        if project_mode:
            target = plans[0].cluster
            assert target is not None
            output = Path(args.output) if args.output is not None else target.output
            by_cluster = {build.plan.cluster_name or "": build for build in builds}
            count = write_project(
                by_cluster, output, whole=args.cluster is None, stored=args.server_defaults
            )
            for build in builds if args.expand else ():
                folder = _expanded_folder(output) / (build.plan.cluster_name or "")
                written = write_directory(expanded[id(build)], folder)
                if not args.quiet:
                    note(f"{written} expanded objects ({args.expand}) written to {folder}")
        else:
            output = Path(args.output)
            build = builds[0]
            count = write_directory(objects[id(build)], output, build.secret_requirements)
            if args.expand:
                folder = _expanded_folder(output)
                written = write_directory(expanded[id(build)], folder)
                if not args.quiet:
                    note(f"{written} expanded objects ({args.expand}) written to {folder}")
        if put_provenance is not None:
            put_provenance()
    if not args.quiet:
        _print_summary(builds, count, output, project_mode)
    return _staged(args, plans, EXIT_OK)


def _expansion(build: Build, depth: str) -> list[RenderedObject]:
    """What each stored JobSet of ``build`` becomes (:func:`compiler.expand.expand`),
    each object marked as expanded (never to be applied)."""
    from compiler.emit.output import planned_files
    from compiler.expand import expand
    from compiler.expand.downstream import mark_expanded
    from compiler.plan.compile import RenderedObject

    out = []
    for output in build.outputs:
        data = output.stored
        if data is None or data.get("kind") != "JobSet":
            continue  # a JobSet the server refuses is a problem reported already
        summary = output.summary
        for obj in expand([data], "pods" if depth == "pods" else "jobs"):
            out.append(RenderedObject(summary.namespace, summary.name, mark_expanded(obj, depth)))
    planned_files(out)  # two objects on one path: refused before anything is written
    return out


def _expanded_stream(objects: list[RenderedObject], expansion: list[RenderedObject]) -> str:
    """The stream of ``objects`` with each TrainJob's expansion right after its objects."""
    from compiler.emit.output import planned_files
    from compiler.emit.yaml_text import dump_documents

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
    return dump_documents(documents)


def _expanded_folder(output: Path) -> Path:
    """Where ``--expand`` writes: beside the output folder, never inside one a GitOps
    tool syncs."""
    return output.with_name(f"{output.name}.expanded")


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


def _run_parts(
    args: argparse.Namespace, plans: list[BuildPlan], project_mode: bool, said: _Said
) -> int | None:
    """Render chunk by chunk (:mod:`compiler.emit.incremental`): cached, in ``-j``
    processes, the objects streamed; None when a plan must be rendered whole."""
    from compiler.emit.incremental import forget, writable_render_cache
    from compiler.emit.output import MissingBlob

    cache = None if args.no_cache else writable_render_cache()
    try:
        for _ in range(2):
            try:
                return _run_parts_with(args, plans, project_mode, cache, said)
            except MissingBlob:
                assert cache is not None
                forget(cache)  # the cache was pruned: render into it again
                said.start_over()
    except OSError:
        # the blob store cannot be written (a full disk): render whole, which needs no
        # store and says plainly if the output itself cannot be written
        return None
    return None  # pruned again meanwhile: render whole, which needs no cache


def _run_parts_with(
    args: argparse.Namespace,
    plans: list[BuildPlan],
    project_mode: bool,
    cache: Path | None,
    said: _Said,
) -> int | None:
    from compiler.emit.incremental import blob_store, run_parts
    from compiler.emit.output import MissingBlob

    to_stdout = args.output == "-" or (args.output is None and not project_mode)
    output = None
    if not to_stdout:
        cluster = plans[0].cluster
        output = Path(args.output) if args.output is not None else None
        output = output or (cluster.output if cluster is not None else None)
    near = None if output is None else output.resolve().parent
    with blob_store(cache, near) as store:
        parts: list[PartBuild] = []
        for plan in plans:
            part = run_parts(
                plan,
                jobs=jobs_of(args),
                cache=cache,
                store=store,
                stored=args.server_defaults,
                files=not to_stdout,
            )
            if part is None:
                return None
            parts.append(part)
        for part in parts:
            for message in part.notes:
                said.note(message, part.plan.cluster_name)
            said.warn_all(part.warnings, part.plan.cluster_name)
            _warn_if_empty(args, part.plan.cluster_name, len(part.summaries))
        if to_stdout:
            missing = next((o for p in parts for o in p.objects if not store.has(o.digest)), None)
            if missing is not None:  # found before the first byte is written
                raise MissingBlob(store.path(missing.digest))
            _stream_parts(parts, store, project_mode, args.server_defaults)
            return EXIT_OK
        assert output is not None
        records = None if cache is None else cache / "trees"
        count = _write_parts(args, parts, store, output, project_mode, records)
    if not args.quiet:
        _print_part_summary(parts, count, output, project_mode)
    return EXIT_OK


def _stream_parts(
    parts: list[PartBuild], store: BlobStore, project_mode: bool, stored: bool
) -> None:
    """The objects of each part as one YAML stream, in stream order, one blob at a time."""
    again: dict[int, dict[str, bytes]] = {}  # blobs made again, by part (see _blob)
    for part in parts:
        if project_mode:
            sys.stdout.write(f"# cluster: {part.plan.cluster_name}\n")
        for index, obj in enumerate(part.objects):
            if index:
                sys.stdout.write("---\n")
            sys.stdout.write(_blob(store, part, obj.digest, stored, again).decode("utf-8"))
        if not project_mode:
            for requirement in part.secret_requirements:
                note(
                    f"Secret {requirement.namespace}/{requirement.name} holds generated keys: "
                    "not rendered (see requirements.yaml in an output folder)"
                )


def _blob(
    store: BlobStore,
    part: PartBuild,
    digest: str,
    stored: bool,
    again: dict[int, dict[str, bytes]],
) -> bytes:
    """A blob of the stream. One pruned since its chunk was rendered (the render cache
    removed mid-run, once part of the stream is written) is a cache miss: the part's
    plan is rendered again, whole, and its digest names the same bytes."""
    from compiler.emit.incremental import rendered_blobs
    from compiler.emit.output import MissingBlob

    try:
        return store.read(digest)
    except MissingBlob:
        pass
    blobs = again.get(id(part))
    if blobs is None:
        blobs = again[id(part)] = rendered_blobs(part.plan, stored)
    if digest not in blobs:
        raise SetupError(
            f"the render cache lost {store.path(digest)} during the run, and rendering "
            "again did not make it (are the inputs changing meanwhile?); run again"
        )
    return blobs[digest]


def _write_parts(
    args: argparse.Namespace,
    parts: list[PartBuild],
    store: BlobStore,
    output: Path,
    project_mode: bool,
    records: Path | None,
) -> int:
    """Write the parts' trees; ``records``: where the render cache keeps what each output
    tree holds, so that a tree can be updated in place (:mod:`compiler.emit.tree`)."""
    from compiler.emit.kustomization import cluster_extra_files
    from compiler.emit.tree import ClusterFiles, write_files, write_project_files

    def files_of(part: PartBuild) -> list[tuple[str, str]]:
        return [(obj.relative_path, store.path(obj.digest)) for obj in part.objects]

    if not project_mode:
        return write_files(files_of(parts[0]), output, parts[0].requirements_text(), None, records)
    clusters: dict[str, ClusterFiles] = {}
    for part in parts:
        files = files_of(part)
        extra = cluster_extra_files(part.plan.cluster, (relative for relative, _ in files))
        clusters[part.plan.cluster_name or ""] = (files, part.requirements_text(), extra)
    return write_project_files(clusters, output, whole=args.cluster is None, records=records)


def _print_part_summary(
    parts: list[PartBuild], count: int, output: Path, project_mode: bool
) -> None:
    jobs = sum(len(part.summaries) for part in parts)
    if not project_mode:
        for summary in parts[0].summaries:
            print(summary.line)
        print(f"trainc: {count} objects for {jobs} TrainJobs written to {output}")
        return
    for part in parts:
        for summary in part.summaries:
            print(f"{part.plan.cluster_name}: {summary.line}")
    print(
        f"trainc: {count} objects for {jobs} TrainJobs in {len(parts)} clusters written to {output}"
    )


def one_plan_build(args: argparse.Namespace, builds: list[Build]) -> Build:
    one_plan(args, [b.plan for b in builds])
    return builds[0]


def _print_summary(builds: list[Build], count: int, output: Path, project_mode: bool) -> None:
    jobs = sum(len(build.summaries) for build in builds)
    if not project_mode:
        for summary in builds[0].summaries:
            print(summary.line())
        print(f"trainc: {count} objects for {jobs} TrainJobs written to {output}")
        return
    for build in builds:
        for summary in build.summaries:
            print(f"{build.plan.cluster_name}: {summary.line()}")
    print(
        f"trainc: {count} objects for {jobs} TrainJobs in {len(builds)} clusters "
        f"written to {output}"
    )
