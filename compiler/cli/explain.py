"""``trainc explain``: where an output field came from — input file:line, layer, what it
overrode.

    trainc explain PATH... --object OBJECT FIELDPATH
    trainc explain [--project FILE] [--cluster NAME] --object OBJECT FIELDPATH
"""

from __future__ import annotations

import argparse
import sys

from compiler.cli.common import Commands, add_build_flags, build_plans, one_plan
from compiler.errors import EXIT_OK


def add_parser(commands: Commands) -> None:
    parser = commands.add_parser(
        "explain",
        help="where an output field came from: input file:line, layer, what it overrode",
    )
    add_build_flags(parser, owner_uid=True)
    parser.add_argument(
        "--object",
        nargs=2,
        required=True,
        metavar=("OBJECT", "FIELDPATH"),
        help="e.g. JobSet/team-a/resnet 'spec.replicatedJobs[name=node].template.spec"
        ".parallelism' ('.' for every field)",
    )


def run_verb(args: argparse.Namespace) -> int:
    # Imported here: see compiler/cli/render.py.
    from compiler.deliver.explain import explain, trace_result
    from compiler.plan.driver import render_whole

    [build] = render_whole([one_plan(args, build_plans(args))])
    build.raise_problems()
    sys.stdout.write(explain(trace_result(build), *args.object))
    return EXIT_OK
