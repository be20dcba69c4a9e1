"""The ``trainc`` command line: one module per verb, each with its own arguments.

    trainc render PATH... [-o DIR | -o -] [--owner-uid UID]
    trainc render [--project FILE] [--cluster NAME] [-o DIR]   (trainc.yaml: every cluster)
    trainc check PATH... [--format text|json|sarif|junit] [--output FILE]
    trainc check [PATH...] --rendered [DIR]   (exit 1 when the rendered tree is stale)
    trainc explain PATH... --object OBJECT FIELDPATH   (where a field came from)
    trainc diff --base REV [PATH...] [--format text|markdown] [--output FILE] [--exit-code]
    trainc diff --live [PATH...] | --between-versions OLD NEW [PATH...]
    trainc policy test DIR...
    trainc migrate PATH... [-o DIR | -o -] [--report FILE]   (v1 jobs -> TrainJobs)
    trainc apply PATH... [--dry-run=server] [--diff] [--prune] [--wait]   (server-side apply)
    trainc argocd generate [--cluster NAME] [--delivery resolved|trainjobs]   (Argo CD CMP)

docs/reference/cli.md is generated from these parsers when the manual is built.
A verb module has ``add_parser(commands)`` and ``run_verb(args) -> int``: it parses,
turns its command line into build plans (:func:`compiler.cli.common.build_plans`), calls
the driver (:mod:`compiler.plan.driver`) and hands the result to a writer
(:mod:`compiler.emit`) or a delivery step (:mod:`compiler.deliver`). Flags two verbs
share are in :mod:`compiler.cli.common`; no verb imports another. A new verb is a module
here and a line in :data:`VERBS`.

Exit codes: 0 success, 1 policy violations, 2 input or usage error; 130 interrupted
(Ctrl-C), 143 stopped by ``SIGTERM``, 141 when standard output is closed before
everything is written (128 + the signal, what a shell reports for a process a signal
ends). ``SIGTERM`` unwinds as Ctrl-C does, so what trainc started (a ``cue`` process,
worker processes, a staging folder) is stopped and removed before it exits.
"""

from __future__ import annotations

import argparse
import gc
import io
import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Protocol

from compiler import __version__
from compiler.cli import apply, argocd, check, diff, explain, migrate, policy, render
from compiler.cli.common import Commands, Parser
from compiler.errors import TraincError
from compiler.upstream.artifacts import describe
from compiler.upstream.versions import TRAINER_VERSIONS

EXIT_INTERRUPTED = 130  # 128 + SIGINT
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE
EXIT_TERMINATED = 143  # 128 + SIGTERM


class Verb(Protocol):
    """What a verb module provides (mypy checks each module in :data:`VERBS` against it)."""

    def add_parser(self, commands: Commands) -> None: ...

    def run_verb(self, args: argparse.Namespace) -> int: ...


VERBS: dict[str, Verb] = {
    "render": render,
    "check": check,
    "diff": diff,
    "explain": explain,
    "policy": policy,
    "apply": apply,
    "migrate": migrate,
    "argocd": argocd,
}


def version_text() -> str:
    """trainc's version, then what its upstream artifacts were built from."""
    return "\n".join([f"trainc {__version__}", *describe(TRAINER_VERSIONS)]) + "\n"


class VersionAction(argparse.Action):
    """``--version``: reads the artifacts' manifests only when asked."""

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        sys.stdout.write(version_text())
        parser.exit()


def parser() -> argparse.ArgumentParser:
    out = Parser(
        prog="trainc",
        description="compile Kubeflow Trainer v2 TrainJobs and runtimes into the objects "
        "the controller creates",
    )
    out.add_argument(
        "--version",
        action=VersionAction,
        nargs=0,
        help="show trainc's version and the emulated Trainer releases' module versions",
    )
    commands = out.add_subparsers(dest="command", required=True, parser_class=Parser)
    for verb in VERBS.values():
        verb.add_parser(commands)
    return out


def tune_gc() -> None:
    """Fewer cyclic collections: a run builds many short-lived JSON trees with no cycles,
    and the default thresholds make the collector walk a growing heap over and over
    (about 15% of a 10,000-TrainJob render)."""
    gc.freeze()
    gc.set_threshold(100_000, 50, 100)


def utf8_streams() -> None:
    """Standard output and error in UTF-8 whatever the locale (a POSIX locale would
    otherwise make a non-ASCII name in a manifest or a message a UnicodeEncodeError)."""
    for stream, errors in ((sys.stdout, "strict"), (sys.stderr, "backslashreplace")):
        if isinstance(stream, io.TextIOWrapper) and stream.encoding.lower() not in (
            "utf-8",
            "utf8",
        ):
            stream.reconfigure(encoding="utf-8", errors=errors)


class Terminated(BaseException):
    """``SIGTERM`` arrived (Argo CD stopping a plugin command, ``kill``): raised where
    trainc is, to unwind like Ctrl-C (a BaseException, so no ``except Exception``
    swallows it)."""


@contextmanager
def terminate_unwinds() -> Iterator[None]:
    """While the verb runs, ``SIGTERM`` raises :class:`Terminated` in this process, once
    (a second one, sent while it cleans up, would break that off). Processes forked
    meanwhile end by the signal, as without the handler (``-j`` workers reset it: see
    :func:`compiler.plan.chunks.map_chunks`). ``SIGKILL`` still ends trainc at once."""
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may set handlers (a test calling main() in a thread)
        return
    main_pid = os.getpid()
    raised = False

    def on_terminate(signum: int, frame: FrameType | None) -> None:
        nonlocal raised
        if os.getpid() != main_pid:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)
            return
        if not raised:
            raised = True
            raise Terminated

    previous = signal.signal(signal.SIGTERM, on_terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def main(argv: list[str] | None = None) -> int:
    tune_gc()
    utf8_streams()
    args = parser().parse_args(argv)
    try:
        with terminate_unwinds():
            return VERBS[args.command].run_verb(args)
    except TraincError as error:
        sys.stderr.writelines(f"{line}\n" for line in error.lines())
        return error.exit_code
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except Terminated:
        return EXIT_TERMINATED
    except BrokenPipeError:
        # the reader went away (``trainc check | head``): stop quietly, as a process
        # SIGPIPE ends, and keep Python from failing again on the final flush
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return EXIT_BROKEN_PIPE
