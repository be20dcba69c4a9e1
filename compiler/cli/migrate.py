"""``trainc migrate``: Training Operator v1 jobs, MPI Operator MPIJobs and Volcano Jobs
into TrainJobs (and a dedicated runtime where none fits), with a report per job.

trainc migrate PATH... [-o DIR | -o -] [--report FILE] [--report-format text|json]
    [--no-compat-env] [--v1-gang-scheduler none|volcano|NAME] [--allow-lossy]
    [--merge-template worker|master] [--namespace NS] [--trainer VERSION]

Exit codes: 0 every job migrated, 1 a job has an error in its report (not written;
``--allow-lossy`` writes the documented fallback), 2 input error (the v1 webhook's
rejection, at file:line:col).
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING

from compiler.cli.common import Commands, note, prepared_file
from compiler.errors import EXIT_OK, EXIT_VIOLATIONS, MAX_LISTED, SetupError, UsageError, clip
from compiler.upstream.versions import DEFAULT_TRAINER_VERSION, TRAINER_VERSIONS

if TYPE_CHECKING:
    from ruamel.yaml.comments import CommentedMap

    from compiler.migrate.report import JobReport

MARKER = ".trainc-migrate"


def add_parser(commands: Commands) -> None:
    parser = commands.add_parser(
        "migrate", help="turn v1 jobs (PyTorchJob, TFJob, MPIJob, ...) into TrainJobs"
    )
    parser.add_argument(
        "paths", nargs="+", metavar="PATH", help="files or directories ('-' for stdin)"
    )
    parser.add_argument(
        "-o",
        "--output",
        default="-",
        metavar="DIR",
        help="output directory, replaced atomically; '-' (default) writes one YAML stream to stdout",
    )
    parser.add_argument(
        "--report", metavar="FILE", help="write the report to FILE (default: stderr)"
    )
    parser.add_argument("--report-format", choices=("text", "json"), default="text")
    parser.add_argument("--namespace", default="default", help="namespace of jobs that set none")
    parser.add_argument(
        "--trainer",
        choices=TRAINER_VERSIONS,
        default=DEFAULT_TRAINER_VERSION,
        metavar="VERSION",
        help="the Trainer release the TrainJobs are for (default %(default)s; one of "
        f"{', '.join(TRAINER_VERSIONS)}): its upstream runtimes are reused, and a job "
        "that release cannot take is an error of the report",
    )
    parser.add_argument(
        "--no-compat-env",
        dest="compat_env",
        action="store_false",
        help="do not add the v1 variables (MASTER_ADDR, WORLD_SIZE, RANK, TF_CONFIG, ...)",
    )
    parser.add_argument(
        "--v1-gang-scheduler",
        default="none",
        metavar="NAME",
        help="the v1 operator's --gang-scheduler-name: none (default), volcano or a scheduler-plugins scheduler name",
    )
    parser.add_argument(
        "--allow-lossy",
        action="store_true",
        help="write the documented fallback for jobs with errors (they become warnings)",
    )
    parser.add_argument(
        "--merge-template",
        choices=("worker", "master"),
        default="",
        help="when Master and Worker templates differ, use this one",
    )


def run_verb(args: argparse.Namespace) -> int:
    from compiler.migrate import Options, migrate_paths
    from compiler.migrate.nextstep import render_command
    from compiler.migrate.report import reports_json, reports_text

    options = Options(
        trainer_version=args.trainer,
        namespace=args.namespace,
        compat_env=args.compat_env,
        gang_scheduler=args.v1_gang_scheduler,
        allow_lossy=args.allow_lossy,
        merge_template=args.merge_template,
    )
    result = migrate_paths(args.paths, options)
    report = (
        (reports_json if args.report_format == "json" else reports_text)(result.reports)
        if args.report
        else ""
    )
    files = documents(result.objects)
    with ExitStack() as outputs:
        # The report file is written first, beside its place, and put there last: a
        # folder it cannot be written to stops the run before the output changes.
        put_report = (
            outputs.enter_context(prepared_file(Path(args.report), report, "--report"))
            if args.report
            else None
        )
        if put_report is None:
            sys.stderr.write(_screen_report(result.reports, args.report_format))
        if args.output == "-":
            sys.stdout.write("---\n".join(files.values()))
        else:
            write_tree(Path(args.output), files)
        if put_report is not None:
            put_report()
    if command := render_command(args.output, result.runtime_files):
        note(command)
    return EXIT_VIOLATIONS if result.has_errors else EXIT_OK


def _screen_report(reports: list[JobReport], report_format: str) -> str:
    """The report for standard error: the first :data:`MAX_LISTED` jobs' (the JSON one
    whole: it is for a program), every line cut (:func:`compiler.errors.clip`);
    ``--report FILE`` has them all."""
    from compiler.migrate.report import reports_json, reports_text

    if report_format == "json":
        return reports_json(reports)
    text = reports_text(reports[:MAX_LISTED])
    lines = [clip(line) for line in text.removesuffix("\n").split("\n")] if text else []
    if len(reports) > MAX_LISTED:
        more = len(reports) - MAX_LISTED
        lines += ["", f"... and {more} more job reports (--report FILE writes them all)"]
    return "".join(f"{line}\n" for line in lines)


def dump(obj: object) -> str:
    from compiler.migrate.source import round_trip

    out = io.StringIO()
    round_trip().dump(obj, out)
    return out.getvalue()


def documents(objects: list[CommentedMap]) -> dict[str, str]:
    """One file per migrated job: ``<namespace>/<name>.yaml`` with its runtime (if any)
    and its TrainJob, in that order."""
    files: dict[str, list[str]] = {}
    for obj in objects:
        meta = obj["metadata"]
        files.setdefault(f"{meta['namespace']}/{meta['name']}.yaml", []).append(dump(obj))
    return {name: "---\n".join(parts) for name, parts in sorted(files.items())}


def write_tree(output: Path, files: dict[str, str]) -> None:
    if output.exists() and any(output.iterdir()) and not (output / MARKER).exists():
        raise UsageError(
            f"-o {output}: not empty and not written by trainc migrate; refusing to replace it"
        )
    staging: Path | None = None
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{output.name}.", dir=output.parent))
        for name, text in files.items():
            path = staging / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        (staging / MARKER).write_text("", encoding="utf-8")
        if output.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{output.name}.old.", dir=output.parent))
            os.replace(output, old / "tree")
            os.replace(staging, output)
            shutil.rmtree(old)
        else:
            os.replace(staging, output)
    except OSError as error:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
        where = error.filename or output
        raise SetupError(
            f"-o {output}: cannot write {where}: {error.strerror or error} "
            "(the previous output is left as it was)"
        ) from None
