"""``trainc diff``: what a change does to the rendered output, against a git revision.

trainc diff --base REV [PATH...] [--expand jobs|pods] [--format text|markdown] [--output FILE]
            [--exit-code]
trainc diff --live [PATH...] [--kubeconfig FILE] [--context NAME]   (against the cluster)
trainc diff --between-versions OLD NEW [PATH...]   (the same inputs on two Trainer releases)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from compiler.cli.common import (
    Commands,
    add_build_flags,
    add_cluster_flags,
    live_diff_verb,
    write_atomically,
)
from compiler.errors import EXIT_OK, EXIT_VIOLATIONS, UsageError


def add_parser(commands: Commands) -> None:
    parser = commands.add_parser(
        "diff",
        help="what a change does to the rendered output, against a git revision",
        description="Renders revision REV (in a temporary git worktree) and the working "
        "tree, and prints per-field changes by cluster, TrainJob, replicated job and "
        "container, and which TrainJobs each changed input affects. Exit codes: 0 (with "
        "--exit-code: no changes), 1 changes with --exit-code, 2 input or usage error.",
    )
    against = parser.add_mutually_exclusive_group(required=True)
    against.add_argument("--base", metavar="REV", help="the git revision to compare with")
    against.add_argument(
        "--live",
        action="store_true",
        help="compare with the live objects of the kubeconfig's cluster instead, as "
        "'trainc apply --diff' (exit 0 no changes, 1 changes, 2 errors)",
    )
    against.add_argument(
        "--between-versions",
        nargs=2,
        metavar=("OLD", "NEW"),
        help="render the inputs as they stand on Trainer release OLD and on NEW (each "
        "cluster of the project on both, whatever its `trainer`) and print which "
        "TrainJobs render differently or get another verdict: before an upgrade",
    )
    add_build_flags(parser)
    add_cluster_flags(parser)
    parser.add_argument("--format", choices=("text", "markdown"), default="text")
    parser.add_argument("--output", metavar="FILE", help="write the diff to FILE (atomically)")
    parser.add_argument("--exit-code", action="store_true", help="exit 1 when the output changes")
    parser.add_argument(
        "--no-impact", action="store_true", help="skip the per-input impact section"
    )
    parser.add_argument(
        "--expand",
        choices=("jobs", "pods"),
        help="with --base, compare below each JobSet too: the Jobs and headless Service "
        "the JobSet controller creates (jobs), and the Pods the Job controller creates "
        "(pods), as 'trainc render --expand' writes them",
    )


def run_verb(args: argparse.Namespace) -> int:
    if args.expand is not None and not args.base:
        raise UsageError("trainc diff: --expand applies to --base only")
    if args.between_versions:
        return _between_versions(args)
    if args.live:
        return live_diff_verb(args)
    # Imported here: see compiler/cli/render.py.
    from compiler.deliver.diff_format import render_markdown, render_text
    from compiler.deliver.git_revision import diff_against

    result = diff_against(
        args.base,
        args.paths,
        namespace=args.namespace,
        schemas=args.schemas,
        impact=not args.no_impact,
        project_file=args.project,
        clusters=args.cluster,
        expand=args.expand,
    )
    text = render_markdown(result) if args.format == "markdown" else render_text(result)
    if args.output is None:
        sys.stdout.write(text)
    else:
        write_atomically(Path(args.output), text)
    return EXIT_VIOLATIONS if args.exit_code and result.changed else EXIT_OK


def _between_versions(args: argparse.Namespace) -> int:
    from compiler.cli.common import build_plans
    from compiler.deliver.version_diff import diff_between_versions, render_version_diff
    from compiler.upstream.versions import TRAINER_VERSIONS

    old, new = args.between_versions
    for version in (old, new):
        if version not in TRAINER_VERSIONS:
            raise UsageError(
                f"trainc diff --between-versions: {version!r} is not an emulated Trainer "
                f"release (one of {', '.join(TRAINER_VERSIONS)})"
            )
    if args.trainer is not None:
        raise UsageError("trainc diff --between-versions: --trainer does not apply")
    result = diff_between_versions(build_plans(args), old, new)
    text = render_version_diff(result, markdown=args.format == "markdown")
    if args.output is None:
        sys.stdout.write(text)
    else:
        write_atomically(Path(args.output), text)
    return EXIT_VIOLATIONS if args.exit_code and result.changed else EXIT_OK
