"""``trainc apply``: render, then push the objects to a cluster with server-side apply.

trainc apply PATH... [--kubeconfig FILE] [--context NAME] [--namespace NS]
trainc apply [--project FILE] --cluster NAME          (one project cluster)
    [--field-manager NAME] [--force-conflicts] [--dry-run=server] [--diff]
    [--prune|--no-prune [--applyset NAME]] [--recreate] [--wait] [--timeout SECONDS]
    [--emit resolved|trainjobs] [-o text|json]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import TYPE_CHECKING

from compiler.cli.common import (
    Commands,
    add_cluster_flags,
    add_kubernetes,
    add_owner_uid,
    add_paths,
    add_project,
    add_schemas,
    connect_and_plan,
    live_diff_out,
    note,
)
from compiler.errors import EXIT_INPUT_ERROR, EXIT_OK, EXIT_VIOLATIONS, UsageError

if TYPE_CHECKING:
    from compiler.deliver.apply.client import Connection
    from compiler.deliver.apply.plan import ApplyPlan


def add_parser(commands: Commands) -> None:
    parser = commands.add_parser(
        "apply",
        help="render, then server-side apply the objects to the current kubeconfig cluster",
        description="Renders like 'trainc render' (PATHs, or one project cluster) and applies "
        "every object with server-side apply, in order: the project's Namespaces, "
        "ConfigMaps, PodGroups, JobSets, then the required Secrets (generated keys, created "
        "only if absent); with --emit trainjobs, runtimes then TrainJobs. One line per "
        "object (created, configured, recreated, unchanged, pruned, skipped, failed), "
        "counts at the end. Exit codes: 0 applied, 1 with --diff: changes (or with --wait: "
        "a JobSet failed), 2 errors (input, cluster, a refused object, timeout).",
    )
    add_paths(parser)
    add_schemas(parser)
    add_kubernetes(parser)
    add_owner_uid(parser)
    add_project(parser)
    add_cluster_flags(parser)
    parser.add_argument(
        "-n",
        "--namespace",
        default=None,
        help="namespace of objects that set none, and of the ApplySet parent (default: the "
        "context's namespace, else 'default')",
    )
    parser.add_argument(
        "--force-conflicts",
        action="store_true",
        help="take over fields another field manager owns, as kubectl does",
    )
    parser.add_argument(
        "--dry-run",
        choices=("server", "none"),
        default="none",
        help="server: send everything with dryRun=All and report what would happen",
    )
    parser.add_argument(
        "--diff",
        action="store_true",
        help="print per-field changes between the live and the desired objects, write "
        "nothing (exit 0 no changes, 1 changes, 2 errors)",
    )
    parser.add_argument(
        "--format", choices=("text", "markdown"), default="text", help="--diff format"
    )
    parser.add_argument(
        "--prune",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="delete objects this ApplySet applied before and no longer renders (never "
        "objects trainc did not apply); default: the project cluster's applyset.prune "
        "(trainc.yaml), else no",
    )
    parser.add_argument(
        "--applyset",
        metavar="NAME",
        help="the ApplySet parent Secret's name (default: the project cluster's "
        "applyset.name, else trainc, or trainc-<cluster>)",
    )
    parser.add_argument(
        "--recreate",
        action="store_true",
        help="DESTRUCTIVE: a JobSet whose immutable fields changed is deleted (its jobs and "
        "pods with it) and created again; without it such a change is refused",
    )
    parser.add_argument(
        "--wait", action="store_true", help="wait until each applied JobSet has started (or failed)"
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="for retries while the API server is away, and for --wait (default: 60)",
    )
    parser.add_argument(
        "--emit",
        choices=("resolved", "trainjobs"),
        default=None,
        help="resolved: the JobSets, PodGroups, ConfigMaps (default); trainjobs: the "
        "policy-mutated runtimes and TrainJobs, for clusters running the Trainer "
        "controller (default: the project cluster's 'delivery')",
    )
    parser.add_argument(
        "-o",
        "--output",
        choices=("text", "json"),
        default="text",
        help="json: one document with every outcome and the counts",
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="no per-object lines")


def run_verb(args: argparse.Namespace) -> int:
    if not args.timeout > 0 or math.isinf(args.timeout):
        raise UsageError("trainc apply: --timeout must be a positive number of seconds")
    if args.applyset is not None and args.prune is False:
        raise UsageError("trainc apply: --applyset goes with --prune")
    connection, to_apply, cluster = connect_and_plan(args)
    try:
        if args.diff:
            return live_diff_out(args, connection, to_apply)
        return _apply(args, connection, to_apply, cluster)
    finally:
        connection.close()


def _apply(
    args: argparse.Namespace, connection: Connection, to_apply: ApplyPlan, cluster: str | None
) -> int:
    from compiler.deliver.apply.applyset import choose_applyset
    from compiler.deliver.apply.run import ApplyOptions, Outcome, apply
    from compiler.deliver.apply.wait import wait_for_jobsets

    dry_run = args.dry_run == "server"
    applyset = choose_applyset(
        args.prune, args.applyset, to_apply.applyset, cluster, connection.namespace
    )
    options = ApplyOptions(
        field_manager=args.field_manager,
        force_conflicts=args.force_conflicts,
        dry_run=dry_run,
        recreate=args.recreate,
        applyset=None if applyset is None else applyset.name,
        applyset_namespace=connection.namespace if applyset is None else applyset.namespace,
        prune=applyset is not None and applyset.prune,
    )
    text = args.output == "text"

    def progress(outcome: Outcome) -> None:
        if text and not args.quiet:
            print(outcome.line(dry_run), flush=True)

    report = apply(connection, to_apply, options, progress)
    for message in report.notes:
        note(message, cluster)
    counts = report.counts()
    states: dict[str, str] = {}
    wait_errors: dict[str, str] = {}
    if args.wait and not dry_run and not report.applied_jobsets:
        # with --emit trainjobs the Trainer controller makes the JobSets later
        note("--wait: no JobSet was applied: nothing to wait for", cluster)
    if args.wait and not dry_run and report.applied_jobsets:
        states = wait_for_jobsets(
            connection,
            sorted(set(report.applied_jobsets)),
            args.timeout,
            lambda line: print(line, flush=True) if text else None,
            errors=wait_errors,
        )
    if text:
        shown = ", ".join(
            f"{counts[s]} {s}"
            for s in counts
            if counts[s] or s in ("created", "configured", "unchanged")
        )
        where = f" ({cluster})" if cluster else ""
        mode = " (server dry run: nothing was written)" if dry_run else ""
        print(f"trainc apply{where}: {report.changed} changed: {shown}{mode}")
    else:
        document = {
            "dryRun": dry_run,
            "changed": report.changed,
            "counts": counts,
            "objects": [
                {
                    "object": o.title,
                    "status": o.status,
                    **({"detail": o.detail} if o.detail else {}),
                }
                for o in report.outcomes
            ],
            **({"wait": states} if args.wait else {}),
        }
        print(json.dumps(document, indent=2, sort_keys=True))
    if report.failed:
        return EXIT_INPUT_ERROR
    for key, reason in sorted(wait_errors.items()):
        sys.stderr.write(f"trainc: error: --wait: JobSet {key}: {reason}\n")
    if wait_errors:
        return EXIT_INPUT_ERROR
    code, message = wait_outcome(states, args.timeout)
    if message:
        sys.stderr.write(f"trainc: error: {message}\n")
    return code


def wait_outcome(states: dict[str, str], timeout: float) -> tuple[int, str]:
    """``--wait``'s exit code and error line from each JobSet's final state.

    The timeout is said whenever a JobSet is still waiting, also when another failed
    (exit 1 then, as documented; 2 for a timeout alone).

    >>> wait_outcome({"a/x": "started", "a/y": "waiting", "a/z": "failed"}, 60)
    (1, '--wait: timed out after 60s: 1 of 3 JobSets not started: a/y')
    """
    from compiler.deliver.apply.run import some_names

    waiting = sorted(key for key, state in states.items() if state == "waiting")
    message = (
        f"--wait: timed out after {timeout:g}s: {len(waiting)} of {len(states)} JobSets "
        f"not started: {some_names(waiting)}"
        if waiting
        else ""
    )
    if any(state == "failed" for state in states.values()):
        return EXIT_VIOLATIONS, message
    return (EXIT_INPUT_ERROR if waiting else EXIT_OK), message
