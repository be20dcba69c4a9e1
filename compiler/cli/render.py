"""``trainc render``: the objects the Trainer controller would create, to files or stdout.

trainc render PATH... [-o DIR | -o -] [--owner-uid UID]
trainc render [--project FILE] [--cluster NAME] [-o DIR]   (trainc.yaml: every cluster)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from compiler.cli.common import (
    Commands,
    add_build_flags,
    build_plans,
    note,
    one_plan,
    report_problems,
    warn,
    write_atomically,
)
from compiler.errors import EXIT_OK, UsageError

if TYPE_CHECKING:
    from compiler.plan.stages import Build


def add_parser(commands: Commands) -> None:
    parser = commands.add_parser("render", help="render TrainJobs into JobSet, PodGroup, ...")
    add_build_flags(parser, owner_uid=True)
    parser.add_argument(
        "-o",
        "--output",
        default=None,
        metavar="DIR",
        help="output directory, replaced atomically; '-' writes one YAML stream to stdout "
        "(default with PATHs; with a project, its output folder)",
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="no summary lines")
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


def _secret_notes(build: Build) -> None:
    for requirement in build.secret_requirements:
        note(
            f"Secret {requirement.namespace}/{requirement.name} holds generated keys: "
            "not rendered (see requirements.yaml in an output folder)"
        )


def run_verb(args: argparse.Namespace) -> int:
    # Imported here, not at the top: every verb's parser is built on each start, and a
    # pre-commit hook or an Argo CD plugin pays for what the other verbs import.
    from compiler.emit.output import stream_text, write_directory, write_project
    from compiler.plan.stages import run

    plans = build_plans(args)
    project_mode = plans[0].cluster is not None
    builds = [run(plan) for plan in plans]
    for build in builds:
        for message in build.notes:
            note(message, build.plan.cluster_name)
        for warning in build.warnings:
            warn(warning, build.plan.cluster_name)
    report_problems(p for build in builds for p in build.problems)
    if args.emit == "trainjobs":
        if args.server_defaults:
            raise UsageError("trainc render: --server-defaults is for --emit resolved")
        from compiler.deliver.apply.plan import as_trainjobs

        builds = [as_trainjobs(build) for build in builds]
    objects = {
        id(build): build.stored_objects() if args.server_defaults else build.objects
        for build in builds
    }
    # Provenance is per cluster: refuse before anything is written.
    provenance = None
    if args.provenance:
        from compiler.deliver.explain import provenance_document, trace_result

        provenance = provenance_document(trace_result(one_plan_build(args, builds)))
    if args.output == "-" or (args.output is None and not project_mode):
        for build in builds:
            if project_mode:
                sys.stdout.write(f"# cluster: {build.plan.cluster_name}\n")
            sys.stdout.write(stream_text(objects[id(build)]))
            if not project_mode:
                _secret_notes(build)
        if provenance is not None:
            write_atomically(Path(args.provenance), provenance, "--provenance")
        return EXIT_OK
    if project_mode:
        target = plans[0].cluster
        assert target is not None
        output = Path(args.output) if args.output is not None else target.output
        by_cluster = {build.plan.cluster_name or "": build for build in builds}
        count = write_project(
            by_cluster, output, whole=args.cluster is None, stored=args.server_defaults
        )
    else:
        output = Path(args.output)
        build = builds[0]
        count = write_directory(objects[id(build)], output, build.secret_requirements)
    if provenance is not None:
        write_atomically(Path(args.provenance), provenance, "--provenance")
    if not args.quiet:
        _print_summary(builds, count, output, project_mode)
    return EXIT_OK


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
