"""The Argo CD Config Management Plugin's contract: settings, the checkout, ``generate``.

The sidecar (``integrations/argocd/plugin.yaml``) runs ``trainc argocd generate`` (the
verb, :mod:`compiler.cli.argocd`) in ``<checkout>/<source.path>``
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
               (relative to the source path, never outside the checkout)

Contract with Argo CD: stdout holds the objects and nothing else, written once at the
end; on any problem stdout stays empty, stderr holds one screen (at most
:data:`SCREEN_LINES` lines) and the exit code is non-zero (2 input or usage error, 1
policy violation); an empty result is refused (with prune on, Argo CD would delete every
object of the Application). Nothing is written into the checkout; no network and no
writable home are needed (the CRD cache is best effort); a large repo on several cores
keeps its objects in a temporary blob store in the temporary folder meanwhile.

The repository is not trusted: the project file, the ``project`` parameter and every
path they name must stay inside the checkout the repo server gave the plugin
(:func:`checkout_root`), symbolic links followed; anything else is an input error
(exit 2) that names the path and reads nothing outside (:mod:`compiler.load.confine`).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from compiler.errors import (
    EXIT_INPUT_ERROR,
    EXIT_OK,
    EXIT_VIOLATIONS,
    Finding,
    InputError,
    Severity,
    SourceLocation,
    TraincError,
    UsageError,
    clip,
    escape_text,
    listing,
)
from compiler.load.confine import Outside, Root
from compiler.model.plan import DELIVERIES

if TYPE_CHECKING:
    from compiler.model.check import CheckResult
    from compiler.model.plan import BuildPlan

SCREEN_LINES = 40
SCREEN_WIDTH = 500  # characters of one line; longer ones lose their middle (clip)
ENV_PREFIX = "ARGOCD_ENV_TRAINC_"


# --- settings -----------------------------------------------------------------------------

PARAMETERS_ENV = "ARGOCD_APP_PARAMETERS"
SETTINGS = ("cluster", "delivery", "project")


def _escaped(name: str) -> str:
    """Argo CD's parameter env name: ``PARAM_`` and the name in upper case, every
    character but ``A-Z0-9_`` as ``_`` (``ApplicationSourcePluginParameters.Environ``)."""
    return "PARAM_" + re.sub("[^A-Z0-9_]", "_", name.upper())


def _bad_parameters(what: str) -> UsageError:
    return UsageError(f"argocd generate: {PARAMETERS_ENV}: {what}")


def _json_kind(value: object) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    return "null" if value is None else f"a {type(value).__name__}"


def _parameters(environ: dict[str, str]) -> dict[str, str]:
    """``ARGOCD_APP_PARAMETERS``, the string parameters by name, checked strictly.

    Argo CD marshals the Application's ``plugin.parameters`` there: a JSON array of
    objects with a ``name`` and one of ``string``, ``map`` (string values) or ``array``
    (strings). This plugin announces three string parameters (:data:`SETTINGS`); anything
    else (another shape, another name, a name twice, a map or an array) is a usage error
    naming the variable, never a traceback (deep nesting included).

    >>> _parameters({PARAMETERS_ENV: '[{"name": "cluster", "string": "prod"}]'})
    {'cluster': 'prod'}
    """
    text = environ.get(PARAMETERS_ENV)
    if not text:
        return {}
    try:
        items = json.loads(text)
    except RecursionError:
        raise _bad_parameters("nested too deeply (an array of parameter objects)") from None
    except ValueError as error:
        reason = error.msg if isinstance(error, json.JSONDecodeError) else "bad text"
        raise _bad_parameters(f"not JSON ({reason})") from None
    if not isinstance(items, list):
        raise _bad_parameters(f"an array of parameter objects, not {_json_kind(items)}")
    out: dict[str, str] = {}
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise _bad_parameters(f"item {index}: a parameter object, not {_json_kind(item)}")
        unknown = sorted(set(item) - {"name", "string", "map", "array"})
        if unknown:
            raise _bad_parameters(f"item {index}: unknown key {clip(repr(unknown[0]), 100)}")
        name = item.get("name")
        if not isinstance(name, str) or not name:
            raise _bad_parameters(f"item {index}: name must be a non-empty string")
        shown = clip(repr(name), 100)
        if name not in SETTINGS:
            known = ", ".join(SETTINGS)
            raise _bad_parameters(f"unknown parameter {shown} (this plugin's: {known})")
        if name in out:
            raise _bad_parameters(f"parameter {shown} given twice")
        if "map" in item or "array" in item:
            raise _bad_parameters(f"parameter {shown} takes a string, not a map or an array")
        value = item.get("string")
        if value is None and "string" not in item:
            continue  # a name without a value: not set
        if not isinstance(value, str):
            raise _bad_parameters(f"parameter {shown}: string must be a string")
        out[name] = value
    return out


def setting_and_source(
    name: str, flag: str | None, environ: dict[str, str]
) -> tuple[str, str] | tuple[None, None]:
    """The value of setting ``name`` and where it came from (what an error names)."""
    for value, source in (
        (flag, f"--{name}"),
        (environ.get(_escaped(name)), _escaped(name)),
        (_parameters(environ).get(name), f"{PARAMETERS_ENV} (parameter {name})"),
        (environ.get(ENV_PREFIX + name.upper()), ENV_PREFIX + name.upper()),
    ):
        if value:
            if "\x00" in value:
                raise UsageError(f"argocd generate: {source}: a NUL character in the value")
            return value, source
    return None, None


def setting(name: str, flag: str | None, environ: dict[str, str]) -> str | None:
    """The value of setting ``name``: flag, PARAM_*, ARGOCD_APP_PARAMETERS, ARGOCD_ENV_*.

    >>> setting("cluster", None, {"PARAM_CLUSTER": "prod", "ARGOCD_ENV_TRAINC_CLUSTER": "x"})
    'prod'
    >>> setting("cluster", None, {"ARGOCD_APP_PARAMETERS": '[{"name":"cluster","string":"a"}]'})
    'a'
    >>> setting("delivery", None, {"ARGOCD_ENV_TRAINC_DELIVERY": "trainjobs"})
    'trainjobs'
    """
    return setting_and_source(name, flag, environ)[0]


def checkout_root(cwd: Path, environ: dict[str, str]) -> Path | None:
    """The checkout the repo server gave the plugin, from the working directory and
    ``ARGOCD_APP_SOURCE_PATH``; None when run by hand (no such variable): then the
    command line is the user's, as for ``trainc render --project``.

    The cmp-server unpacks the tree the repo server sent into a fresh folder and runs
    the command in ``<that folder>/<app path relative to the tree's root>``
    (``cmpserver/plugin/plugin.go``); the tree is the repository, or, with the
    manifest-generate-paths annotation, the folder holding every path it names, so the
    relative path is the source path or a tail of it (``reposerver/repository``). The
    root is the working directory less the longest tail of the source path it ends
    with; the working directory itself when none matches or the source path is empty
    or odd (``..``).
    """
    source = environ.get("ARGOCD_APP_SOURCE_PATH")
    if source is None:
        return None
    parts = [p for p in source.split("/") if p not in ("", ".")]
    if ".." in parts:
        return cwd
    here = cwd.parts
    for length in range(min(len(parts), len(here) - 1), 0, -1):
        if list(here[-length:]) == parts[-length:]:
            return Path(*here[:-length])
    return cwd


def _project_in_checkout(root: Path | None, given: str | None, source: str | None) -> Path | None:
    """The ``project`` setting, checked to stay inside the checkout before anything is
    read; an error names the setting it came from (``PARAM_PROJECT``, ...)."""
    if given is None or root is None:
        return None if given is None else Path(given)
    try:
        Root.at(root, "the checkout").resolve(given)
    except Outside as outside:
        message = (
            f"argocd generate: {source or '--project'}: the project file "
            f"{clip(repr(given), 200)} {outside}"
        )
        raise InputError.single(message) from None
    return Path(given)


# --- the result ---------------------------------------------------------------------------


def _line(finding: Finding) -> str:
    parts = [str(finding.location)] if finding.location is not None else []
    if finding.object is not None:
        parts.append(str(finding.object))
    if finding.field_path:
        parts.append(finding.field_path)
    parts.append(f"{finding.message} [{finding.rule}]")
    return ": ".join(parts)


def _named_by(error: InputError, source: str) -> InputError:
    """``error`` with each problem about the project file as a whole (it cannot be read)
    said of the setting that named the file, first: a long name is cut, not the setting."""
    return InputError(
        [
            replace(
                p,
                message=f"{source}: project file {clip(str(p.location), 200)}: {p.message}",
                location=None,
            )
            if p.location is not None and p.location.line == 0
            else p
            for p in error.problems
        ]
    )


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def one_screen(header: str, lines: Iterable[str], limit: int = SCREEN_LINES) -> str:
    """``header`` and at most ``limit`` lines (:func:`compiler.errors.listing`), each cut
    to :data:`SCREEN_WIDTH` characters, the header too.

    >>> print(one_screen("failed", ["a", "b", "c"], limit=2), end="")
    trainc: failed
      a
      b
      ... and 1 more (run `trainc check` for the full report)
    """
    shown = listing(
        lines, limit, " (run `trainc check` for the full report)", line_limit=SCREEN_WIDTH
    )
    body = [f"trainc: {clip(escape_text(header), SCREEN_WIDTH)}", *(f"  {x}" for x in shown)]
    return "\n".join(body) + "\n"


class Flags(NamedTuple):
    """``generate``'s command line flags (None: not given)."""

    cluster: str | None = None
    delivery: str | None = None
    project: Path | None = None


def generate(flags: Flags, environ: dict[str, str]) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of ``generate`` given its flags and environment;
    stdout is empty unless the code is 0."""
    from compiler.emit.output import stream_text
    from compiler.plan import driver
    from compiler.plan.build_plan import plans_for_project, select_project
    from compiler.plan.queues import with_delivery

    _parameters(environ)  # checked whole, whichever setting is asked first
    root = checkout_root(Path(os.getcwd()), environ)
    project_setting, source = setting_and_source(
        "project", str(flags.project) if flags.project else None, environ
    )
    try:
        given = _project_in_checkout(root, project_setting, source)
        project = select_project("argocd generate", given, root=root)
    except InputError as error:
        if source is None:
            raise
        raise _named_by(error, source) from None
    cluster, source = setting_and_source("cluster", flags.cluster, environ)
    if cluster is not None and cluster not in project.cluster_names:
        known = ", ".join(project.cluster_names)
        raise InputError.single(
            f"unknown cluster {clip(repr(cluster), 200)} given by {source} (the project "
            f"defines: {known})",
            project.locate(("clusters",)),
            field_path="clusters",
        )
    if cluster is None:
        if len(project.cluster_names) != 1:
            raise UsageError(
                f"argocd generate: {project.path} defines clusters "
                f"{', '.join(project.cluster_names)}: set the plugin parameter `cluster` "
                "(or env TRAINC_CLUSTER in the Application's plugin.env)"
            )
        cluster = project.cluster_names[0]
    delivery, source = setting_and_source("delivery", flags.delivery, environ)
    if delivery is None:
        delivery, source = (
            str(getattr(project.cluster(cluster), "delivery", None) or "resolved"),
            "trainc.yaml",
        )
    if delivery not in DELIVERIES:
        raise UsageError(
            f"argocd generate: {source}: delivery {clip(repr(delivery), 200)} is not one of "
            f"{', '.join(DELIVERIES)}"
        )
    # the delivery that goes out judges the queue checks (compiler.plan.queues)
    [plan] = [with_delivery(p, delivery) for p in plans_for_project(project, [cluster])]
    # the objects of the TrainJobs themselves are made of the whole build
    generated = driver.check_and_render(plan, whole=delivery != "resolved")
    result = generated.result
    if generated.stream is not None:  # by chunks: a render error made it whole
        refused = _policy_errors(cluster, result)
        if refused is not None:
            return refused
        if not generated.stream:
            return _refuse_empty(plan, cluster)
        return EXIT_OK, f"# cluster: {cluster}\n{generated.stream}", ""
    build = result.builds[0]
    if build.problems:  # what `trainc render` refuses: exit 2, as render does
        count = len(build.problems)
        header = f"cluster {cluster}: {_plural(count, 'input error')}; nothing generated"
        return EXIT_INPUT_ERROR, "", one_screen(header, (str(p) for p in build.problems))
    refused = _policy_errors(cluster, result)
    if refused is not None:
        return refused
    if delivery == "trainjobs":
        from compiler.deliver.apply.plan import as_trainjobs

        build = as_trainjobs(build)
    if not build.objects:
        return _refuse_empty(build.plan, cluster)
    return EXIT_OK, f"# cluster: {cluster}\n" + stream_text(build.objects), ""


def _policy_errors(cluster: str, result: CheckResult) -> tuple[int, str, str] | None:
    errors = [f for f in result.findings if f.severity is Severity.ERROR]
    if not errors:
        return None
    code = max(result.exit_code, EXIT_VIOLATIONS)
    what = "policy violations" if code == EXIT_VIOLATIONS else "policy errors"
    header = f"cluster {cluster}: {len(errors)} {what}; nothing generated"
    return code, "", one_screen(header, (_line(f) for f in errors))


def _refuse_empty(plan: BuildPlan, cluster: str) -> tuple[int, str, str]:
    where = f"{SourceLocation(str(plan.cluster.project_file))}: " if plan.cluster else ""
    return (
        EXIT_INPUT_ERROR,
        "",
        one_screen(
            f"{where}cluster {cluster}: no objects to generate; refusing an empty result "
            "(with prune on, Argo CD would delete every object of the Application)",
            [],
        ),
    )


def answer(flags: Flags, environ: dict[str, str]) -> tuple[int, str, str]:
    """:func:`generate`, and any error said as the contract wants it: one screen on
    stderr, nothing on stdout, the error's exit code."""
    try:
        return generate(flags, environ)
    except TraincError as error:
        lines = (
            [str(p) for p in error.problems] if isinstance(error, InputError) else error.lines()
        ) or ["error"]
        header, rest = (lines[0], []) if len(lines) == 1 else ("cannot generate", lines)
        return error.exit_code, "", one_screen(header, rest)
