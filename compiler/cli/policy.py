"""``trainc policy test``: run the allow/deny cases of a policy library.

trainc policy test DIR...
"""

from __future__ import annotations

import argparse

from compiler.cli.common import Commands


def add_parser(commands: Commands) -> None:
    parser = commands.add_parser("policy", help="policy library tools")
    policy_commands = parser.add_subparsers(dest="policy_command", required=True)
    test = policy_commands.add_parser(
        "test", help="run policy test cases (PolicyTest files); exit 1 if one fails"
    )
    test.add_argument("paths", nargs="+", metavar="DIR", help="test files or folders")


def run_verb(args: argparse.Namespace) -> int:
    from compiler.plan.policy_testing import main as run_policy_tests  # see cli/render.py

    return run_policy_tests(args.paths)
