"""What every verb shares: the argument parser, the flags that say what to build, and
how results reach the terminal or a file."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

from compiler.errors import (
    EXIT_INPUT_ERROR,
    EXIT_OK,
    EXIT_VIOLATIONS,
    InputError,
    Problem,
    SetupError,
    UsageError,
    listing,
)
from compiler.model.plan import BuildPlan
from compiler.plan.build_plan import plan_for_paths, plans_for_project, select_project

if TYPE_CHECKING:
    from compiler.deliver.apply.client import Connection
    from compiler.deliver.apply.plan import ApplyPlan
    from compiler.plan.driver import Run


class Parser(argparse.ArgumentParser):
    """argparse with trainc's usage-error exit code (2) and message prefix."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        sys.stderr.write(f"trainc: error: {message}\n")
        raise SystemExit(EXIT_INPUT_ERROR)


# The sub-command table every verb adds its parser to (a string: argparse's class is not
# subscriptable at run time).
Commands: TypeAlias = "argparse._SubParsersAction[Parser]"


# --- flags ------------------------------------------------------------------------------


def add_paths(parser: argparse.ArgumentParser, what: str = "files or directories") -> None:
    parser.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help=f"{what} ('-' for stdin); none: the project's clusters (trainc.yaml)",
    )


def add_namespace(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--namespace", default="default", help="namespace of objects that set none")


def add_schemas(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--schemas",
        metavar="DIR",
        type=Path,
        help="CRDs exported from your cluster, used instead of the pinned ones (Trainer, "
        "JobSet, PodGroup), kind by kind",
    )


def _kubernetes_version(text: str) -> tuple[int, int]:
    from compiler.apiserver.crds import parse_kubernetes_version

    try:
        return parse_kubernetes_version(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def add_kubernetes(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--kubernetes",
        metavar="VERSION",
        type=_kubernetes_version,
        default=None,
        help="the Kubernetes version of the target API server, for its exact message texts "
        "(default: v1.34, or the project cluster's `kubernetes`)",
    )


def add_trainer(parser: argparse.ArgumentParser) -> None:
    from compiler.upstream.versions import TRAINER_VERSIONS

    parser.add_argument(
        "--trainer",
        metavar="VERSION",
        choices=TRAINER_VERSIONS,
        default=None,
        help="the Kubeflow Trainer release to emulate, one of "
        + ", ".join(TRAINER_VERSIONS)
        + " (default: v2.3.0, or the project cluster's `trainer`)",
    )


def add_owner_uid(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--owner-uid",
        metavar="UID",
        help="add the controller's ownerReference to the TrainJob with this UID (for comparison)",
    )


def add_project(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--project",
        metavar="FILE",
        type=Path,
        help="the project file (default: the nearest trainc.yaml from here up to the repo root)",
    )
    parser.add_argument(
        "--cluster",
        metavar="NAME",
        action="append",
        help="only this cluster of the project (repeatable; default: every cluster)",
    )
    parser.add_argument(
        "--strict",
        action="store_true",
        help="an overlay patch whose target matches nothing is an error, not a warning",
    )


def add_build_flags(parser: argparse.ArgumentParser, *, owner_uid: bool = False) -> None:
    """The flags that say what a verb builds: PATHs or the project, and its options."""
    add_paths(parser)
    add_namespace(parser)
    add_schemas(parser)
    add_kubernetes(parser)
    add_trainer(parser)
    if owner_uid:
        add_owner_uid(parser)
    add_project(parser)


def _jobs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of processes >= 1, not {text!r}")
    return value


def add_jobs(parser: argparse.ArgumentParser) -> None:
    """``-j N``: worker processes (default: the cores this process may use)."""
    parser.add_argument(
        "-j",
        "--jobs",
        type=_jobs,
        default=None,
        metavar="N",
        help="render in N processes (default: the cores available); the output is the "
        "same for every N",
    )


def add_no_cache(parser: argparse.ArgumentParser, help: str) -> None:
    """``--no-cache``: run without the render cache (``help`` says what that redoes)."""
    parser.add_argument("--no-cache", action="store_true", help=help)


def how_to_run(args: argparse.Namespace) -> Run:
    """How the driver may run the chain for this command line (``-j``, ``--no-cache``)."""
    from compiler.plan.driver import Run

    return Run(getattr(args, "jobs", None), cache=not getattr(args, "no_cache", False))


# --- the build plan of a command line ---------------------------------------------------


def build_plans(
    args: argparse.Namespace, previous: Iterable[Path] | None = None
) -> list[BuildPlan]:
    """The plans of a command line: one for PATHs, one per cluster of the project."""
    owner_uid = getattr(args, "owner_uid", None)
    trainer = getattr(args, "trainer", None)
    if args.paths:
        if args.project is not None or args.cluster:
            raise UsageError(f"trainc {args.command}: --project and --cluster take no PATHs")
        return _with_katib_samples(
            args,
            [
                plan_for_paths(
                    args.paths,
                    default_namespace=args.namespace,
                    schemas=args.schemas,
                    owner_uid=owner_uid,
                    strict=args.strict,
                    previous=None if previous is None else list(previous),
                    **({} if args.kubernetes is None else {"kubernetes": args.kubernetes}),
                    **({} if trainer is None else {"trainer_version": trainer}),
                )
            ],
        )
    plans = plans_for_project(
        select_project(args.command, args.project),  # a UsageError if there is none
        args.cluster,
        schemas=args.schemas,
        owner_uid=owner_uid,
        strict=args.strict,
    )
    if args.kubernetes is not None:  # the flag wins over the project file
        plans = [replace(plan, kubernetes=args.kubernetes) for plan in plans]
    if trainer is not None:  # likewise
        plans = [plan.for_trainer(trainer) for plan in plans]
    return _with_katib_samples(args, plans)


def _with_katib_samples(args: argparse.Namespace, plans: list[BuildPlan]) -> list[BuildPlan]:
    """``check --trials N --seed S``: each plan samples N Katib trials with seed S."""
    samples = getattr(args, "trials", None)
    if not samples:
        return plans
    return [replace(plan, katib_samples=(samples, args.seed)) for plan in plans]


def one_plan(args: argparse.Namespace, plans: list[BuildPlan]) -> BuildPlan:
    """The single plan a per-cluster verb needs (``--cluster NAME`` with several)."""
    if len(plans) != 1:
        known = ", ".join(p.cluster_name or "" for p in plans)
        raise UsageError(
            f"trainc {args.command}: this works on one cluster at a time: give one "
            f"--cluster NAME (clusters: {known})"
        )
    return plans[0]


# --- output -----------------------------------------------------------------------------


def report_problems(problems: Iterable[Problem]) -> None:
    """Raise one InputError with every problem, if any (one line per distinct message:
    several clusters often find the same problem in the same input)."""
    unique = list({str(p): p for p in problems}.values())
    if unique:
        raise InputError(unique)


def warn(message: object, cluster: str | None = None) -> None:
    where = f"{cluster}: " if cluster else ""
    sys.stderr.write(f"trainc: warning: {where}{message}\n")


def warn_all(warnings: Iterable[object], cluster: str | None = None) -> None:
    """Each warning on a line of its own, at most :data:`MAX_LISTED` (:func:`listing`)."""
    for line in listing((str(w) for w in warnings), what=" warnings"):
        warn(line, cluster)


def note(message: object, cluster: str | None = None) -> None:
    where = f"{cluster}: " if cluster else ""
    sys.stderr.write(f"trainc: note: {where}{message}\n")


def write_atomically(path: Path, text: str | Iterable[str], flag: str = "--output") -> None:
    """Replace ``path`` with ``text`` (a string, or its pieces) in one rename (a report,
    so mode 0644)."""
    with prepared_file(path, text, flag) as put_in_place:
        put_in_place()


@contextmanager
def prepared_file(
    path: Path, text: str | Iterable[str], flag: str = "--output"
) -> Iterator[Callable[[], None]]:
    """``text`` written beside ``path`` now, and put in place (one rename) by the function
    given; removed if that is not called. For a verb with several outputs: each one is
    written before any is put in place, so a report file that cannot be written (a
    missing folder) stops the run before the output folder changes, and nothing is left
    half-written."""
    if path.is_dir():
        raise SetupError(f"{flag}: cannot write {path}: it is a folder")
    temporary: str | None = None
    try:
        with tempfile.NamedTemporaryFile(
            "w", encoding="utf-8", dir=path.parent, prefix=f".{path.name}.", delete=False
        ) as out:
            temporary = out.name
            if isinstance(text, str):
                out.write(text)
            else:
                out.writelines(text)
        os.chmod(temporary, 0o644)  # a report, not a secret (the temporary file is 0600)
    except OSError as error:
        if temporary is not None:
            Path(temporary).unlink(missing_ok=True)
        raise SetupError(f"{flag}: cannot write {path}: {error.strerror or error}") from None
    placed = False

    def put_in_place() -> None:
        nonlocal placed
        try:
            os.replace(str(temporary), path)
        except OSError as error:
            raise SetupError(f"{flag}: cannot write {path}: {error.strerror or error}") from None
        placed = True

    try:
        yield put_in_place
    finally:
        if not placed:
            Path(temporary).unlink(missing_ok=True)


@contextmanager
def previous_inputs(value: str | None, paths: list[str]) -> Iterator[list[Path] | None]:
    """``--previous``: a folder as given, or the same PATHs in a checkout of a git revision."""
    if value is None:
        yield None
        return
    if Path(value).is_dir():
        yield [Path(value)]
        return
    from compiler.deliver.git_revision import base_worktree, git_toplevel, resolve_commit

    root = git_toplevel(Path.cwd())
    try:
        commit = resolve_commit(root, value)
    except InputError:
        raise InputError.single(
            f"--previous {value}: neither a folder nor a commit of {root}"
        ) from None
    relative = []
    for path in (p for p in paths if p != "-"):
        try:
            relative.append(Path(path).resolve().relative_to(root))
        except ValueError:
            raise InputError.single(
                f"--previous {value}: {path} is outside the git work tree {root}"
            ) from None
    with base_worktree(root, commit) as tree:
        yield [tree / r for r in relative if (tree / r).exists()]


# --- the cluster a verb talks to (apply, diff --live) -------------------------------------


def add_cluster_flags(parser: argparse.ArgumentParser) -> None:
    """Which cluster, as kubectl says it (shared with ``trainc diff --live``)."""
    parser.add_argument(
        "--kubeconfig",
        type=Path,
        metavar="FILE",
        help="kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)",
    )
    parser.add_argument("--context", metavar="NAME", help="kubeconfig context (default: current)")
    parser.add_argument(
        "--field-manager",
        default="trainc",
        metavar="NAME",
        help="server-side apply field manager (default: trainc)",
    )


def live_diff_verb(args: argparse.Namespace) -> int:
    """``trainc diff --live``: as ``trainc apply --diff``."""
    args.timeout, args.emit = 60.0, None
    connection, to_apply, _ = connect_and_plan(args)
    try:
        return live_diff_out(args, connection, to_apply)
    finally:
        connection.close()


def connect_and_plan(args: argparse.Namespace) -> tuple[Connection, ApplyPlan, str | None]:
    """The connection, and what to apply: rendered as ``trainc render`` would."""
    # Imported here: see compiler/cli/render.py.
    from compiler.deliver.apply.client import connect
    from compiler.deliver.apply.plan import apply_plan
    from compiler.plan.driver import render_whole
    from compiler.plan.queues import with_delivery

    connection = connect(args.kubeconfig, args.context, args.namespace, args.timeout)
    try:
        args.namespace = connection.namespace
        args.strict = getattr(args, "strict", False)
        # the delivery apply pushes judges the queue checks (compiler.plan.queues)
        plan = with_delivery(one_plan(args, build_plans(args)), args.emit)
        [build] = render_whole([plan])
        for message in build.notes:
            note(message, plan.cluster_name)
        warn_all(build.warnings, plan.cluster_name)
        report_problems(build.problems)
        wanted = args.emit or (plan.cluster.delivery if plan.cluster is not None else None)
        to_apply = apply_plan(build, "trainjobs" if wanted == "trainjobs" else "resolved")
    except BaseException:
        connection.close()
        raise
    connection.set_timeout(args.timeout)  # the deadline counts from the first request
    return connection, to_apply, plan.cluster_name


def live_diff_out(args: argparse.Namespace, connection: Connection, to_apply: ApplyPlan) -> int:
    """What an apply would change in the cluster, written as ``trainc diff`` writes it."""
    from compiler.deliver.apply.live_diff import live_diff
    from compiler.deliver.diff_format import render_markdown, render_text

    result = live_diff(connection, to_apply, args.field_manager)
    text = render_markdown(result) if args.format == "markdown" else render_text(result)
    if args.command == "diff" and args.output is not None:
        write_atomically(Path(args.output), text)
    else:
        sys.stdout.write(text)
    return EXIT_VIOLATIONS if result.changed else EXIT_OK
