"""MkDocs hook: the parts of the manual that are facts of the code, written at build time.

A page holds a marker comment where a generated part goes; this hook replaces it, so the
part cannot drift from the code it describes:

    <!-- trainc:cli -->               every verb's usage and arguments, from the parsers
    <!-- trainc:rules -->             the built-in check rules (RULE_DESCRIPTIONS)
    <!-- trainc:trainer-versions -->  the emulated Kubeflow Trainer releases

A marker on a page that the hook does not know is an error, and so is a generated part
no page asks for (``mkdocs build --strict`` runs in ``make lint``). The generators are
plain functions, also used by ``tests/test_docs.py``.
"""

from __future__ import annotations

import argparse
import html
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

# the checkout this manual belongs to, whatever trainc the environment has installed
REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

MARKER = re.compile(r"<!-- trainc:([a-z-]+) -->")


def _subcommands(parser: argparse.ArgumentParser) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            yield from action.choices.items()


def commands(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], str, argparse.ArgumentParser]]:
    """Every command that does something, depth first: (words after ``trainc``, help, parser)."""
    helps = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
    for name, sub in _subcommands(parser):
        nested = list(_subcommands(sub))
        if not nested:
            yield (*path, name), helps.get(name, ""), sub
        yield from commands(sub, (*path, name))


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _code(text: str) -> str:
    """Inline code for a table cell: HTML, since a backslash-escaped ``|`` inside a
    Markdown code span would print its backslash."""
    escaped = html.escape(" ".join(text.split())).replace("|", "&#124;")
    return f"<code>{escaped}</code>"


def _argument_rows(parser: argparse.ArgumentParser) -> Iterator[str]:
    formatter = parser._get_formatter()
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction) or action.help == argparse.SUPPRESS:
            continue
        invocation = formatter._format_action_invocation(action)
        helptext = formatter._expand_help(action) if action.help else ""
        yield f"| {_code(invocation)} | {_cell(helptext)} |"


def cli_reference() -> str:
    """The reference of every verb, from ``compiler.cli.parser()``."""
    from compiler.cli import parser as trainc_parser

    top = trainc_parser()
    out: list[str] = []
    for words, summary, parser in commands(top):
        name = " ".join(("trainc", *words))
        usage = parser.format_usage().removeprefix("usage: ").strip()
        usage = re.sub(r"\s*\n\s*", " ", usage)
        out += [f"## `{name}`", ""]
        if summary:
            sentence = f"{summary[0].upper()}{summary[1:]}"
            out += [sentence if sentence.endswith(".") else f"{sentence}.", ""]
        if parser.description and parser.description != summary:
            out += [_cell(parser.description), ""]
        out += ["```text", usage, "```", ""]
        rows = list(_argument_rows(parser))
        if rows:
            out += ["| argument | meaning |", "| --- | --- |", *rows, ""]
    return "\n".join(out)


def rules_reference() -> str:
    """The built-in rules of ``trainc check`` as its reports describe them."""
    from compiler.model.check import RULE_DESCRIPTIONS

    rows = ["| rule | what it checks |", "| --- | --- |"]
    for rule, text in RULE_DESCRIPTIONS.items():
        rows.append(f"| `{rule}` | {_cell(text)} |")
    return "\n".join(rows) + "\n"


def trainer_versions() -> str:
    """The emulated Trainer releases, newest first, and the default."""
    from compiler.upstream.versions import DEFAULT_TRAINER_VERSION, TRAINER_VERSIONS

    listed = ", ".join(f"**{v}**" for v in reversed(TRAINER_VERSIONS))
    return (
        f"trainc emulates Kubeflow Trainer {listed}; the default is "
        f"**{DEFAULT_TRAINER_VERSION}** (`compiler/upstream/versions.py`, `TRAINER_VERSIONS`)."
    )


GENERATORS: dict[str, Callable[[], str]] = {
    "cli": cli_reference,
    "rules": rules_reference,
    "trainer-versions": trainer_versions,
}


def expand(markdown: str, where: str = "a page") -> str:
    """``markdown`` with every marker replaced by its generated part."""

    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in GENERATORS:
            raise ValueError(f"{where}: unknown generated part <!-- trainc:{name} -->")
        return GENERATORS[name]()

    return MARKER.sub(replace, markdown)


_USED: set[str] = set()


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    _USED.update(MARKER.findall(markdown))
    return expand(markdown, page.file.src_uri)


def on_post_build(**_: Any) -> None:
    unused = set(GENERATORS) - _USED
    _USED.clear()
    if unused:
        raise ValueError(f"generated parts no page shows: {sorted(unused)}")
