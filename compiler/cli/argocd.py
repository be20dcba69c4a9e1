"""``trainc argocd generate``: the Argo CD Config Management Plugin's generate command.

The sidecar (``integrations/argocd/plugin.yaml``) runs it in ``<checkout>/<source.path>``
with the Application's parameters and environment. It prints exactly what
``trainc render --cluster NAME -o -`` prints for that cluster (a ``# cluster:`` comment,
then the YAML stream), after running everything ``trainc check`` runs (policies too), so
a violation fails the sync instead of deploying::

    trainc argocd generate [--cluster NAME] [--delivery resolved|trainjobs] [--project FILE]

Where each setting comes from, first found wins:

    cluster    --cluster, PARAM_CLUSTER, ARGOCD_APP_PARAMETERS (name "cluster"),
               ARGOCD_ENV_TRAINC_CLUSTER, else the project's only cluster
    delivery   --delivery, PARAM_DELIVERY, ARGOCD_APP_PARAMETERS (name "delivery"),
               ARGOCD_ENV_TRAINC_DELIVERY, else the cluster's ``delivery`` in trainc.yaml
               (default resolved); trainjobs is ``render --emit trainjobs``
    project    --project, PARAM_PROJECT, ..., else the nearest trainc.yaml upwards

Contract with Argo CD: stdout holds the objects and nothing else, written once at the
end; on any problem stdout stays empty, stderr holds one screen (at most
:data:`SCREEN_LINES` lines) and the exit code is non-zero (2 input or usage error, 1
policy violation); an empty result is refused (with prune on, Argo CD would delete every
object of the Application). Nothing is written into the checkout; no network and no
writable home are needed (the CRD cache is best effort); a large repo on several cores
keeps its objects in a temporary blob store in the temporary folder meanwhile.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from compiler.cli.common import Commands
from compiler.errors import (
    EXIT_INPUT_ERROR,
    EXIT_OK,
    EXIT_VIOLATIONS,
    Finding,
    Severity,
    TraincError,
    UsageError,
)

if TYPE_CHECKING:
    from compiler.plan.build_plan import BuildPlan
    from compiler.plan.check import CheckResult

DELIVERIES = ("resolved", "trainjobs")
SCREEN_LINES = 40
ENV_PREFIX = "ARGOCD_ENV_TRAINC_"


def add_parser(commands: Commands) -> None:
    parser = commands.add_parser(
        "argocd",
        help="Argo CD Config Management Plugin entry point (generate)",
        description="Print what `trainc render --cluster NAME -o -` prints, for an Argo CD "
        "sidecar; settings from flags, PARAM_*, ARGOCD_APP_PARAMETERS or "
        "ARGOCD_ENV_TRAINC_*. Exit codes: 0 objects printed, 1 policy violations, "
        "2 input or usage error (stdout empty).",
    )
    parser.add_argument("action", choices=("generate",), help="the plugin command to run")
    parser.add_argument("--cluster", metavar="NAME", help="the cluster of trainc.yaml")
    parser.add_argument(
        "--delivery",
        choices=DELIVERIES,
        help="resolved objects (JobSet, PodGroup, ...) or the TrainJobs and runtimes "
        "(`render --emit trainjobs`)",
    )
    parser.add_argument("--project", metavar="FILE", type=Path, help="the project file")


# --- settings -----------------------------------------------------------------------------


def _escaped(name: str) -> str:
    """Argo CD's parameter env name: ``PARAM_`` and the name, non-alphanumerics as ``_``,
    upper case (``reposerver/repository/repository.go``)."""
    return "PARAM_" + "".join(c if c.isalnum() else "_" for c in name).upper()


def _parameters(environ: dict[str, str]) -> dict[str, str]:
    """``ARGOCD_APP_PARAMETERS``: ``[{"name": ..., "string": ...}, ...]``."""
    text = environ.get("ARGOCD_APP_PARAMETERS")
    if not text:
        return {}
    try:
        items = json.loads(text)
    except ValueError:
        raise UsageError("ARGOCD_APP_PARAMETERS is not JSON") from None
    out: dict[str, str] = {}
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and isinstance(item.get("string"), str):
            out[str(item.get("name"))] = item["string"]
    return out


def setting(name: str, flag: str | None, environ: dict[str, str]) -> str | None:
    """The value of setting ``name``: flag, PARAM_*, ARGOCD_APP_PARAMETERS, ARGOCD_ENV_*.

    >>> setting("cluster", None, {"PARAM_CLUSTER": "prod", "ARGOCD_ENV_TRAINC_CLUSTER": "x"})
    'prod'
    >>> setting("cluster", None, {"ARGOCD_APP_PARAMETERS": '[{"name":"cluster","string":"a"}]'})
    'a'
    >>> setting("delivery", None, {"ARGOCD_ENV_TRAINC_DELIVERY": "trainjobs"})
    'trainjobs'
    """
    for value in (
        flag,
        environ.get(_escaped(name)),
        _parameters(environ).get(name),
        environ.get(ENV_PREFIX + name.upper()),
    ):
        if value:
            return value
    return None


# --- the result ---------------------------------------------------------------------------


def _line(finding: Finding) -> str:
    parts = [str(finding.location)] if finding.location is not None else []
    if finding.object is not None:
        parts.append(str(finding.object))
    if finding.field_path:
        parts.append(finding.field_path)
    parts.append(f"{finding.message} [{finding.rule}]")
    return ": ".join(parts)


def one_screen(header: str, lines: list[str], limit: int = SCREEN_LINES) -> str:
    """``header`` and at most ``limit`` lines, each cut to 300 characters.

    >>> print(one_screen("failed", ["a", "b", "c"], limit=2), end="")
    trainc: failed
      a
      b
      ... and 1 more (run `trainc check` for the full report)
    """
    shown = [f"  {line if len(line) <= 300 else line[:297] + '...'}" for line in lines[:limit]]
    if len(lines) > limit:
        shown.append(
            f"  ... and {len(lines) - limit} more (run `trainc check` for the full report)"
        )
    return "\n".join([f"trainc: {header}", *shown]) + "\n"


def generate(args: argparse.Namespace, environ: dict[str, str]) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of ``generate``; stdout is empty unless the code is 0."""
    from compiler.emit.output import stream_text
    from compiler.plan.build_plan import plans_for_project, select_project
    from compiler.plan.check import check_plans

    project_flag = setting("project", str(args.project) if args.project else None, environ)
    project = select_project("argocd generate", Path(project_flag) if project_flag else None)
    cluster = setting("cluster", args.cluster, environ)
    if cluster is None:
        if len(project.cluster_names) != 1:
            raise UsageError(
                f"argocd generate: {project.path} defines clusters "
                f"{', '.join(project.cluster_names)}: set the plugin parameter `cluster` "
                "(or env TRAINC_CLUSTER in the Application's plugin.env)"
            )
        cluster = project.cluster_names[0]
    delivery = setting("delivery", args.delivery, environ) or str(
        getattr(project.cluster(cluster), "delivery", "resolved")
    )
    if delivery not in DELIVERIES:
        raise UsageError(
            f"argocd generate: delivery {delivery!r} is not one of {', '.join(DELIVERIES)}"
        )
    plans = plans_for_project(project, [cluster])
    if delivery == "resolved":
        by_chunks = _generate_by_chunks(plans[0], cluster)
        if by_chunks is not None:
            return by_chunks
    result = check_plans(plans)
    build = result.builds[0]
    if build.problems:  # what `trainc render` refuses: exit 2, as render does
        header = f"cluster {cluster}: {len(build.problems)} input errors; nothing generated"
        return EXIT_INPUT_ERROR, "", one_screen(header, [str(p) for p in build.problems])
    refused = _policy_errors(cluster, result)
    if refused is not None:
        return refused
    if delivery == "trainjobs":
        from compiler.deliver.apply.plan import as_trainjobs

        build = as_trainjobs(build)
    if not build.objects:
        return _refuse_empty(cluster)
    return EXIT_OK, f"# cluster: {cluster}\n" + stream_text(build.objects), ""


def _policy_errors(cluster: str, result: CheckResult) -> tuple[int, str, str] | None:
    errors = [f for f in result.findings if f.severity is Severity.ERROR]
    if not errors:
        return None
    code = max(result.exit_code, EXIT_VIOLATIONS)
    what = "policy violations" if code == EXIT_VIOLATIONS else "policy errors"
    header = f"cluster {cluster}: {len(errors)} {what}; nothing generated"
    return code, "", one_screen(header, [_line(f) for f in errors])


def _refuse_empty(cluster: str) -> tuple[int, str, str]:
    return (
        EXIT_INPUT_ERROR,
        "",
        one_screen(
            f"cluster {cluster}: no objects to generate; refusing an empty result "
            "(with prune on, Argo CD would delete every object of the Application)",
            [],
        ),
    )


def _generate_by_chunks(plan: BuildPlan, cluster: str) -> tuple[int, str, str] | None:
    """``generate`` by chunks, as ``check -j`` does it: each chunk of job files checked in
    a worker process, its rendered objects put in a temporary blob store as it is done,
    so a large repo needs memory for a chunk, not for every object; None when the plan
    must be checked whole (one chunk, a render error, one core: see
    :mod:`compiler.emit.check_parts`). The answer is the whole way's, byte for byte
    (tests/gitops/test_argocd.py)."""
    from compiler.emit.incremental import default_jobs

    jobs = default_jobs()
    if jobs < 2:
        return None  # chunks only cost on one core
    from compiler.emit.output import MissingBlob

    try:
        return _check_and_stream(plan, cluster, jobs)
    except (OSError, MissingBlob):
        # no writable temporary folder for the blobs, or a blob removed from it
        # meanwhile: the whole way needs none
        return None


def _check_and_stream(plan: BuildPlan, cluster: str, jobs: int) -> tuple[int, str, str] | None:
    from compiler.emit.check_parts import check_and_store_parts
    from compiler.emit.incremental import ObjectFile, blob_store
    from compiler.plan.check import check_plans

    rendered: list[list[ObjectFile]] = []
    with blob_store(None, None) as store:

        def check_one(one: BuildPlan) -> CheckResult:
            checked = check_and_store_parts(one, jobs, store)
            if checked is None:
                raise _Whole
            rendered.append(checked[1])
            return checked[0]

        try:
            result = check_plans([plan], check_one=check_one)
        except _Whole:
            return None
        refused = _policy_errors(cluster, result)
        if refused is not None:
            return refused
        [objects] = rendered
        if not objects:
            return _refuse_empty(cluster)
        stream = "---\n".join(store.read(o.digest).decode("utf-8") for o in objects)
    return EXIT_OK, f"# cluster: {cluster}\n{stream}", ""


class _Whole(Exception):
    """The plan cannot be checked by chunks."""


def run_verb(args: argparse.Namespace) -> int:
    try:
        code, out, err = generate(args, dict(os.environ))
    except TraincError as error:
        lines = str(error).splitlines() or ["error"]
        header, rest = (lines[0], []) if len(lines) == 1 else ("cannot generate", lines)
        code, out, err = error.exit_code, "", one_screen(header, rest)
    if err:
        sys.stderr.write(err)
    if out:
        sys.stdout.write(out)
        sys.stdout.flush()
    return code
