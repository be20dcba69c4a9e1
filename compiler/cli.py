"""The ``trainc`` command line.

    trainc render PATH... [-o DIR | -o -] [--owner-uid UID]

Exit codes: 0 success, 1 policy violations, 2 input or usage error.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from compiler import __version__
from compiler.errors import EXIT_INPUT_ERROR, EXIT_OK, TraincError


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        sys.stderr.write(f"trainc: error: {message}\n")
        raise SystemExit(EXIT_INPUT_ERROR)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="trainc", description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--version", action="version", version=f"trainc {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    render = commands.add_parser("render", help="render TrainJobs into JobSet, PodGroup, ...")
    render.add_argument(
        "paths", nargs="+", metavar="PATH", help="files or directories ('-' for stdin)"
    )
    render.add_argument(
        "-o",
        "--output",
        default="-",
        metavar="DIR",
        help="output directory, replaced atomically; '-' writes one YAML stream to stdout (default)",
    )
    render.add_argument(
        "--owner-uid",
        metavar="UID",
        help="add the controller's ownerReference to the TrainJob with this UID (for comparison)",
    )
    render.add_argument("--namespace", default="default", help="namespace of objects that set none")
    render.add_argument(
        "--schemas",
        metavar="DIR",
        type=Path,
        help="CRDs exported from your cluster, used instead of the pinned v2.3.0 ones",
    )
    render.add_argument("-q", "--quiet", action="store_true", help="no summary lines")
    return parser


def _render(args: argparse.Namespace) -> int:
    from compiler.driver import compile_paths
    from compiler.emit.output import stream_text, write_directory
    from compiler.load.crds import crds_with_schemas_from
    from compiler.render.framework import RenderOptions

    crds = crds_with_schemas_from(args.schemas) if args.schemas else None
    result = compile_paths(
        args.paths, RenderOptions(owner_uid=args.owner_uid), args.namespace, crds
    )
    for warning in result.warnings:
        sys.stderr.write(f"trainc: warning: {warning}\n")
    if args.output == "-":
        sys.stdout.write(stream_text(result.objects))
        for requirement in result.secret_requirements:
            sys.stderr.write(
                f"trainc: note: Secret {requirement.namespace}/{requirement.name} "
                "holds generated keys: not rendered, created by `trainc apply`\n"
            )
        return EXIT_OK
    count = write_directory(result.objects, Path(args.output), result.secret_requirements)
    if not args.quiet:
        for summary in result.summaries:
            print(summary.line())
        print(
            f"trainc: {count} objects for {len(result.summaries)} TrainJobs written to {args.output}"
        )
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "render":
            return _render(args)
    except TraincError as error:
        for line in str(error).splitlines():
            sys.stderr.write(f"{line}\n")
        return error.exit_code
    except KeyboardInterrupt:
        return 130
    return EXIT_INPUT_ERROR


if __name__ == "__main__":
    raise SystemExit(main())
