"""``trainc check``: load, render and validate; report findings, write nothing else.

    trainc check PATH... [--format text|json|sarif|junit] [--output FILE] [--previous DIR|REV]
    trainc check [--project FILE] [--cluster NAME]        (trainc.yaml: every cluster)
    trainc check [PATH...] --rendered [DIR]               (also: is the rendered tree stale?)

Exit codes: 0 no errors (warnings allowed), 1 violations, 2 input or usage error.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable
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
    previous_inputs,
    write_atomically,
)
from compiler.errors import UsageError

if TYPE_CHECKING:
    from compiler.model.check import CheckResult

FORMATS = ("text", "json", "sarif", "junit")


def _report(format: str) -> Callable[[CheckResult], Iterable[str]]:
    """The report writer of ``format``: the text in pieces, written one after another."""
    if format == "json":
        from compiler.emit.report_json import json_chunks

        return json_chunks
    if format == "sarif":
        from compiler.emit.report_sarif import render_sarif

        return lambda result: (render_sarif(result),)
    if format == "junit":
        from compiler.emit.report_junit import render_junit

        return lambda result: (render_junit(result),)
    from compiler.emit.report_text import text_chunks

    return text_chunks


def add_parser(commands: Commands) -> None:
    parser = commands.add_parser(
        "check",
        help="load, render and validate; report findings (writes nothing but --output)",
        description="Exit codes: 0 no errors (warnings allowed), 1 violations, "
        "2 input or usage error.",
    )
    add_build_flags(parser)
    parser.add_argument(
        "--format", choices=FORMATS, default="text", help="report format (default: text)"
    )
    parser.add_argument(
        "--output",
        metavar="FILE",
        help="write the report to FILE (replaced atomically) instead of standard output",
    )
    parser.add_argument(
        "--previous",
        metavar="DIR|REV",
        help="the inputs at a previous revision — a folder, or a git revision whose checkout "
        "of the same PATHs is used: objects found there are checked as updates, so immutable "
        "fields (the CRDs' transition rules) are enforced before a GitOps sync fails",
    )
    parser.add_argument(
        "--rendered",
        nargs="?",
        const="",
        metavar="DIR",
        help="also fail (exit 1) when the committed rendered tree DIR is stale (default: the "
        "project's output folder, or 'rendered' with PATHs); for pre-commit and CI",
    )
    parser.add_argument(
        "--trials",
        type=_trials,
        default=0,
        metavar="N",
        help="Katib Experiments: also check N seeded random trials besides the corners "
        "(default: 0; see docs/integrations/katib.md)",
    )
    parser.add_argument(
        "--seed", type=int, default=0, metavar="S", help="the seed of --trials (default: 0)"
    )
    add_jobs(parser)
    add_no_cache(
        parser,
        "check every TrainJob again (default with -j above 1: reuse the findings "
        "$TRAINC_CACHE/render holds for unchanged chunks; the report is the same either way)",
    )


def _trials(text: str) -> int:
    """``--trials N``: 0 to MAX_TRIALS."""
    from compiler.katib.trials import MAX_TRIALS

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 <= value <= MAX_TRIALS:
        raise argparse.ArgumentTypeError(f"must be between 0 and {MAX_TRIALS}")
    return value


def run_verb(args: argparse.Namespace) -> int:
    # Imported here: see compiler/cli/render.py.
    from compiler.plan import driver

    if args.previous is not None and not args.paths:
        raise UsageError("trainc check: --previous takes PATHs")
    how = how_to_run(args)
    with previous_inputs(args.previous, args.paths) as previous:
        # --rendered compares the whole build's objects with the committed tree
        result = driver.check(build_plans(args, previous), how, whole=args.rendered is not None)
    report = _report(args.format)(result)
    if args.output is None:
        sys.stdout.writelines(report)
    else:
        write_atomically(Path(args.output), report)
    if args.output is not None or args.format != "text":
        for message in result.notes:
            note(message)
        sys.stderr.write(f"trainc: {result.summary()}\n")
    code = result.exit_code
    if args.rendered is None:
        return code
    return max(code, _check_rendered(args, result))


def _check_rendered(args: argparse.Namespace, result: CheckResult) -> int:
    """``--rendered``: compare what the check rendered with the committed tree."""
    from compiler.deliver.stale import check_rendered

    cluster = result.builds[0].plan.cluster if result.builds else None
    if args.rendered:
        directory = Path(args.rendered)
    elif cluster is not None:
        directory = cluster.output
    else:
        directory = Path("rendered")
    report = check_rendered(result.builds, directory, whole=args.cluster is None)
    machine = args.output is None and args.format != "text"
    (sys.stderr if machine else sys.stdout).write(report.text())
    return report.exit_code
