"""The ``trainc`` command line.

    trainc render PATH... [-o DIR | -o -] [--owner-uid UID]
    trainc render [--project FILE] [--cluster NAME] [-o DIR]   (trainc.yaml: every cluster)
    trainc check PATH... [--format text|json|sarif|junit] [--output FILE]
    trainc explain PATH... --object OBJECT FIELDPATH   (where a field came from)
    trainc explain [--project FILE] [--cluster NAME] --object OBJECT FIELDPATH
    trainc policy test DIR...
    trainc diff --base REV [PATH...] [--format text|markdown] [--output FILE] [--exit-code]
    trainc check [PATH...] --rendered [DIR]   (exit 1 when the rendered tree is stale)

Exit codes: 0 success, 1 policy violations, 2 input or usage error.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from compiler import __version__
from compiler.errors import EXIT_INPUT_ERROR, EXIT_OK, InputError, SetupError, TraincError

REPORT_FORMATS = ("text", "json", "sarif", "junit")


class UsageError(TraincError):
    """A command line that cannot work as given (exit code 2)."""


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
        "paths",
        nargs="*",
        metavar="PATH",
        help="files or directories ('-' for stdin); none: the project's clusters (trainc.yaml)",
    )
    render.add_argument(
        "-o",
        "--output",
        default=None,
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
    render.add_argument(
        "--provenance",
        metavar="FILE",
        help="also write where every output field came from, as JSON, to FILE",
    )
    _project_arguments(render)

    check = commands.add_parser(
        "check",
        help="load, render and validate; report findings (writes nothing but --output)",
        description="Exit codes: 0 no errors (warnings allowed), 1 violations, "
        "2 input or usage error.",
    )
    check.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="files or directories ('-' for stdin); none: the project's clusters (trainc.yaml)",
    )
    check.add_argument(
        "--format",
        choices=REPORT_FORMATS,
        default="text",
        help="report format (default: text)",
    )
    check.add_argument(
        "--output",
        metavar="FILE",
        help="write the report to FILE (replaced atomically) instead of standard output",
    )
    check.add_argument(
        "--schemas",
        metavar="DIR",
        type=Path,
        help="CRDs exported from your cluster, used instead of the pinned ones (Trainer, "
        "JobSet, PodGroup)",
    )
    check.add_argument("--namespace", default="default", help="namespace of objects that set none")
    check.add_argument(
        "--previous",
        metavar="DIR|REV",
        help="the inputs at a previous revision — a folder, or a git revision whose checkout "
        "of the same PATHs is used: objects found there are checked as updates, so immutable "
        "fields (the CRDs' transition rules) are enforced before a GitOps sync fails",
    )
    _project_arguments(check)
    check.add_argument(
        "--rendered",
        nargs="?",
        const="",
        metavar="DIR",
        help="also fail (exit 1) when the committed rendered tree DIR is stale (default: the "
        "project's output folder, or 'rendered' with PATHs); for pre-commit and CI",
    )

    diff = commands.add_parser(
        "diff",
        help="what a change does to the rendered output, against a git revision",
        description="Renders revision REV (in a temporary git worktree) and the working "
        "tree, and prints per-field changes by cluster, TrainJob, replicated job and "
        "container, and which TrainJobs each changed input affects. Exit codes: 0 (with "
        "--exit-code: no changes), 1 changes with --exit-code, 2 input or usage error.",
    )
    diff.add_argument(
        "--base", required=True, metavar="REV", help="the git revision to compare with"
    )
    diff.add_argument(
        "paths", nargs="*", metavar="PATH", help="files or directories; none: the project"
    )
    diff.add_argument("--format", choices=("text", "markdown"), default="text")
    diff.add_argument("--output", metavar="FILE", help="write the diff to FILE (atomically)")
    diff.add_argument("--exit-code", action="store_true", help="exit 1 when the output changes")
    diff.add_argument("--no-impact", action="store_true", help="skip the per-input impact section")
    diff.add_argument("--schemas", metavar="DIR", type=Path, help="CRDs exported from your cluster")
    diff.add_argument("--namespace", default="default", help="namespace of objects that set none")
    _project_arguments(diff)

    explain = commands.add_parser(
        "explain",
        help="where an output field came from: input file:line, layer, what it overrode",
    )
    explain.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="files or directories; none: the project (trainc.yaml), with its overlays",
    )
    explain.add_argument(
        "--object",
        nargs=2,
        required=True,
        metavar=("OBJECT", "FIELDPATH"),
        help="e.g. JobSet/team-a/resnet 'spec.replicatedJobs[name=node].template.spec"
        ".parallelism' ('.' for every field)",
    )
    explain.add_argument("--owner-uid", metavar="UID", help="as for render")
    explain.add_argument(
        "--namespace", default="default", help="namespace of objects that set none"
    )
    _project_arguments(explain)

    policy = commands.add_parser("policy", help="policy library tools")
    policy_commands = policy.add_subparsers(dest="policy_command", required=True)
    policy_test = policy_commands.add_parser(
        "test", help="run policy test cases (PolicyTest files); exit 1 if one fails"
    )
    policy_test.add_argument("paths", nargs="+", metavar="DIR", help="test files or folders")
    return parser


def _project_arguments(parser: argparse.ArgumentParser) -> None:
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


@contextmanager
def _previous_inputs(value: str | None, paths: list[str]) -> Iterator[list[Path] | None]:
    """``--previous``: a folder as given, or the same PATHs in a checkout of a git revision."""
    if value is None:
        yield None
        return
    if Path(value).is_dir():
        yield [Path(value)]
        return
    from compiler.deliver.git_revision import base_worktree, repo_root, resolve_commit

    root = repo_root(Path.cwd())
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


def _project(args: argparse.Namespace) -> Any:
    """The project of a command given no paths (an InputError/usage error if none)."""
    from compiler.project import find_project, load_project

    path = args.project if args.project is not None else find_project(Path.cwd())
    if path is None:
        raise UsageError(
            f"trainc {args.command}: no PATH given and no trainc.yaml found from "
            f"{Path.cwd()} up to the repository root (give PATHs or --project FILE)"
        )
    return load_project(path)


def _project_provenance(args: argparse.Namespace, project: Any) -> dict[str, Any]:
    """Field provenance of one cluster of the project (``--cluster``, needed when the
    project has several), its overlays layered in."""
    from compiler.errors import InputError
    from compiler.project.build import cluster_overlays, render_cluster
    from compiler.provenance.explain import trace_result
    from compiler.render.framework import RenderOptions

    names = args.cluster or []
    if len(names) > 1 or (not names and len(project.clusters) != 1):
        known = ", ".join(c.name for c in project.clusters)
        raise UsageError(
            f"trainc {args.command}: provenance is per cluster: give one --cluster NAME "
            f"(clusters: {known})"
        )
    cluster = project.cluster(names[0]) if names else project.clusters[0]
    options = RenderOptions(owner_uid=args.owner_uid)
    result = render_cluster(project, cluster, options)
    if result.problems:
        raise InputError(result.problems)
    overlays, originals = cluster_overlays(project, cluster)
    return trace_result(result.result, options, overlays, originals)


def _render_project(args: argparse.Namespace) -> int:
    from compiler.emit.output import stream_text
    from compiler.errors import InputError
    from compiler.project.build import render_project, write_project
    from compiler.render.framework import RenderOptions

    project = _project(args)
    results = render_project(
        project, args.cluster, RenderOptions(owner_uid=args.owner_uid), args.strict
    )
    problems: dict[str, Any] = {}
    for name, result in results.items():
        for note in result.notes:
            sys.stderr.write(f"trainc: note: {name}: {note}\n")
        for warning in result.warnings:
            sys.stderr.write(f"trainc: warning: {name}: {warning}\n")
        for problem in result.problems:
            problems.setdefault(str(problem), problem)
    if problems:
        raise InputError(list(problems.values()))
    # Provenance first (it may refuse, e.g. several clusters), written after the output.
    provenance = None
    if args.provenance:
        from compiler.provenance.explain import provenance_document

        provenance = provenance_document(_project_provenance(args, project))
    if args.output == "-":
        for name, result in results.items():
            sys.stdout.write(f"# cluster: {name}\n{stream_text(result.objects)}")
        if provenance is not None:
            _write_atomically(Path(args.provenance), provenance, "--provenance")
        return EXIT_OK
    output = Path(args.output) if args.output is not None else project.output
    count = write_project(results, output, whole=args.cluster is None)
    if provenance is not None:
        _write_atomically(Path(args.provenance), provenance, "--provenance")
    if not args.quiet:
        for name, result in results.items():
            for summary in result.summaries:
                print(f"{name}: {summary.line()}")
        jobs = sum(len(r.summaries) for r in results.values())
        print(
            f"trainc: {count} objects for {jobs} TrainJobs in {len(results)} clusters "
            f"written to {output}"
        )
    return EXIT_OK


def _render(args: argparse.Namespace) -> int:
    if not args.paths:
        return _render_project(args)
    if args.project is not None or args.cluster:
        raise UsageError("trainc render: --project and --cluster take no PATHs")
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
    if args.provenance:
        from compiler.provenance.explain import provenance_document, trace_result

        traced = trace_result(result, RenderOptions(owner_uid=args.owner_uid))
        _write_atomically(Path(args.provenance), provenance_document(traced), "--provenance")
    if args.output in (None, "-"):
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


def _write_atomically(path: Path, text: str, flag: str = "--output") -> None:
    import os
    import tempfile

    temporary: str | None = None
    try:
        with tempfile.NamedTemporaryFile(
            "w", encoding="utf-8", dir=path.parent, prefix=f".{path.name}.", delete=False
        ) as out:
            temporary = out.name
            out.write(text)
        os.chmod(temporary, 0o644)  # a report, not a secret (the temporary file is 0600)
        os.replace(temporary, path)
    except OSError as error:
        if temporary is not None:
            Path(temporary).unlink(missing_ok=True)
        raise SetupError(f"{flag}: cannot write {path}: {error.strerror or error}") from None


def _check(args: argparse.Namespace) -> int:
    from compiler.validate.check import CheckOptions, check_paths

    if not args.paths:
        from compiler.project.build import check_project

        result = check_project(_project(args), args.cluster, args.schemas, args.strict)
    elif args.project is not None or args.cluster:
        raise UsageError("trainc check: --project and --cluster take no PATHs")
    else:
        options = CheckOptions(default_namespace=args.namespace, schemas=args.schemas)
        with _previous_inputs(args.previous, args.paths) as previous:
            result = check_paths(args.paths, dataclasses.replace(options, previous=previous))
    if args.format == "json":
        from compiler.emit.report_json import render_json as report
    elif args.format == "sarif":
        from compiler.emit.report_sarif import render_sarif as report
    elif args.format == "junit":
        from compiler.emit.report_junit import render_junit as report
    else:
        from compiler.emit.report_text import render_text as report
    text = report(result)
    if args.output is None:
        sys.stdout.write(text)
    else:
        _write_atomically(Path(args.output), text)
    if args.output is not None or args.format != "text":
        for note in result.notes:
            sys.stderr.write(f"trainc: note: {note}\n")
        sys.stderr.write(f"trainc: {result.summary()}\n")
    return result.exit_code


def _explain(args: argparse.Namespace) -> int:
    from compiler.driver import compile_paths
    from compiler.provenance.explain import explain, trace_result
    from compiler.render.framework import RenderOptions

    if not args.paths:
        traced = _project_provenance(args, _project(args))
        sys.stdout.write(explain(traced, *args.object))
        return EXIT_OK
    if args.project is not None or args.cluster:
        raise UsageError("trainc explain: --project and --cluster take no PATHs")
    options = RenderOptions(owner_uid=args.owner_uid)
    result = compile_paths(args.paths, options, args.namespace)
    sys.stdout.write(explain(trace_result(result, options), *args.object))
    return EXIT_OK


def _diff(args: argparse.Namespace) -> int:
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
    )
    text = render_markdown(result) if args.format == "markdown" else render_text(result)
    if args.output is None:
        sys.stdout.write(text)
    else:
        _write_atomically(Path(args.output), text)
    return 1 if args.exit_code and result.changed else EXIT_OK


def _check_rendered(args: argparse.Namespace) -> int:
    from compiler.deliver.stale import check_rendered

    code = _check(args)
    report = check_rendered(
        args.paths,
        Path(args.rendered) if args.rendered else None,
        args.namespace,
        args.schemas,
        args.project,
        args.cluster,
    )
    machine = args.output is None and args.format != "text"
    (sys.stderr if machine else sys.stdout).write(report.text())
    return max(code, report.exit_code)


def tune_gc() -> None:
    """Fewer cyclic collections: a run builds many short-lived JSON trees with no cycles,
    and the default thresholds make the collector walk a growing heap over and over
    (about 15% of a 10,000-TrainJob render)."""
    gc.freeze()
    gc.set_threshold(100_000, 50, 100)


def main(argv: list[str] | None = None) -> int:
    tune_gc()
    args = _parser().parse_args(argv)
    try:
        if args.command == "render":
            return _render(args)
        if args.command == "check" and args.rendered is not None:
            return _check_rendered(args)
        if args.command == "diff":
            return _diff(args)
        if args.command == "check":
            return _check(args)
        if args.command == "explain":
            return _explain(args)
        if args.command == "policy":
            from compiler.validate.policy_test_runner import main as policy_test

            return policy_test(args.paths)
    except TraincError as error:
        for line in str(error).splitlines():
            sys.stderr.write(f"{line}\n")
        return error.exit_code
    except KeyboardInterrupt:
        return 130
    return EXIT_INPUT_ERROR


if __name__ == "__main__":
    raise SystemExit(main())
