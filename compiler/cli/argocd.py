"""``trainc argocd generate``: the Argo CD Config Management Plugin's generate command.

    trainc argocd generate [--cluster NAME] [--delivery resolved|trainjobs] [--project FILE]

The contract with Argo CD (where each setting comes from, what stdout and stderr hold,
the checkout it must not leave) is :mod:`compiler.deliver.argocd`; this verb parses the
flags, runs it with the process's environment and writes its answer.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from compiler.cli.common import Commands
from compiler.model.plan import DELIVERIES


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


def run_verb(args: argparse.Namespace) -> int:
    # Imported here: see compiler/cli/render.py.
    from compiler.deliver.argocd import Flags, answer

    flags = Flags(args.cluster, args.delivery, args.project)
    code, out, err = answer(flags, dict(os.environ))
    if err:
        sys.stderr.write(err)
    if out:
        sys.stdout.write(out)
        sys.stdout.flush()
    return code
