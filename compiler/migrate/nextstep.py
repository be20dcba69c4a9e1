"""What ``render`` needs besides ``migrate``'s output (issue 29 point 7).

A TrainJob that reuses a runtime references it without a copy in the output: an
upstream ClusterTrainingRuntime (``torch-distributed``) is the Trainer release's, which
the cluster installs with the release, and a runtime among the inputs is the user's
file. ``trainc render migrated/`` alone then refuses the TrainJob (runtime not found),
so each such job's report says which file to add, and ``migrate`` ends with the command
that renders its output. The runtime is not copied into the output: ``trainc apply``
of the folder would then apply the release's ClusterTrainingRuntime as well, taking
over an object the Trainer installation owns (and replacing another release's).
"""

from __future__ import annotations

import shlex

from compiler.migrate.report import Diagnostic
from compiler.migrate.runtimes import Candidate
from compiler.resolve.release_runtimes import RUNTIMES_FOLDER

__all__ = ["render_command", "reused_runtime_note"]


def reused_runtime_note(chosen: Candidate, version: str) -> Diagnostic:
    """The report's note that the reused runtime ``chosen`` is not in the output."""
    what = f"{chosen.kind} {chosen.name}"
    if chosen.origin.startswith("upstream "):
        file = f"{RUNTIMES_FOLDER}/{chosen.origin.removeprefix('upstream ')}"
        message = (
            f"{what} is the Trainer {version} release's (kubeflow/trainer {file}), which the "
            "cluster installs with the release: it is not written to the output, and render "
            "and check need it among their inputs"
        )
        # the release and the file, not trainc's copy of it: that path is this
        # install's (a committed report would change between machines); migrate's
        # closing note, for this terminal, names the copy (render_command)
        workaround = (
            f"add {file} of the release the cluster runs to the runtimes trainc reads "
            f"(trainc.yaml inputs.runtimes, or a PATH); trainc carries the Trainer "
            f"{version} release's {file}, and migrate's closing render command names it"
        )
    else:
        message = (
            f"{what} is among the inputs ({chosen.path}): it is not written to the output, "
            "and render and check need it among their inputs"
        )
        workaround = f"render the output with {chosen.path}"
    return Diagnostic(
        "RUNTIME_NOT_WRITTEN",
        "info",
        "",
        message,
        target_path="TrainJob.spec.runtimeRef",
        action="translated",
        workaround=workaround,
    )


def render_command(output: str, runtime_files: list[str]) -> str:
    """The note that says how to render ``output`` when its TrainJobs reuse runtimes
    that are not in it, or "" when they reuse none."""
    if not runtime_files:
        return ""
    target = "FILE" if output == "-" else output  # the YAML written to stdout, saved
    command = " ".join(shlex.quote(p) for p in ["trainc", "render", target, *runtime_files])
    return (
        "the migrated TrainJobs reuse runtimes that are not in the output (RUNTIME_NOT_WRITTEN "
        f"in the report); render it with them: {command}"
    )
