"""The manual (README.md, docs/, mkdocs.yml) against the code it describes.

The generated parts (``docs/hooks/reference.py``) come from the code itself; these tests
hold the hand-written parts that name code facts to them: the emulated Trainer releases
(one list, ``TRAINER_VERSIONS``), the oracle builds of the Makefile, the rule names, and
the README's links. ``mkdocs build --strict`` (in ``make lint``) checks the docs' links.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import shlex
import shutil
import subprocess
from pathlib import Path
from types import ModuleType

import pytest

from compiler.cli import VERBS
from compiler.cli import parser as trainc_parser
from compiler.model.check import RULE_DESCRIPTIONS
from compiler.upstream.versions import DEFAULT_TRAINER_VERSION, TRAINER_VERSIONS
from tests.conformance.oracle import BUILDS
from tests.support import trainc_process

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"


def _hook() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_reference", DOCS / "hooks" / "reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _pages() -> dict[str, str]:
    return {
        path.relative_to(DOCS).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted(DOCS.rglob("*.md"))
    }


# --- generated parts ------------------------------------------------------------------


def _options(parser: argparse.ArgumentParser) -> list[str]:
    return [
        option
        for action in parser._actions
        if not isinstance(action, argparse._HelpAction | argparse._SubParsersAction)
        for option in action.option_strings
    ]


def test_the_cli_reference_has_every_command_and_option() -> None:
    hook = _hook()
    page = hook.cli_reference()
    commands = list(hook.commands(trainc_parser()))
    names = {" ".join(words) for words, _, _ in commands}
    assert {words[0] for words, _, _ in commands} == set(VERBS)
    assert "policy test" in names
    for words, _, parser in commands:
        section = page.split(f"## `trainc {' '.join(words)}`\n", 1)[1].split("\n## ", 1)[0]
        for option in _options(parser):
            assert re.search(rf"<code>[^<]*{re.escape(option)}\b", section), (words, option)


def test_every_marker_is_known_and_every_generated_part_is_shown() -> None:
    hook = _hook()
    used = {name for text in _pages().values() for name in hook.MARKER.findall(text)}
    assert used == set(hook.GENERATORS)
    with pytest.raises(ValueError, match="unknown generated part"):
        hook.expand("<!-- trainc:nothing -->")


def test_the_rule_table_is_the_registry() -> None:
    table = _hook().rules_reference()
    assert re.findall(r"^\| `([^`]+)` \|", table, re.M) == list(RULE_DESCRIPTIONS)


def _sources() -> str:
    return "\n".join(
        path.read_text(encoding="utf-8")
        for path in (REPO / "compiler").rglob("*.py")
        if not path.name.endswith("_test.py")
    )


def test_rules_the_manual_names_are_described_rules_of_the_code() -> None:
    """Every rule docs/reference/rules.md names in its prose is in RULE_DESCRIPTIONS (so the
    generated table describes it) and is a rule name the code gives (a renamed rule fails)."""
    page = (DOCS / "reference" / "rules.md").read_text(encoding="utf-8")
    prose = page.split("<!-- trainc:rules -->", 1)[1].split("## Policies", 1)[0]
    named = set(re.findall(r"`([a-z0-9-]+)`", prose))
    assert {"lock", "extension", "gitops", "downstream", "kueue", "katib"} <= named
    sources = _sources()
    for rule in named:
        assert rule in RULE_DESCRIPTIONS, rule
        assert f'"{rule}"' in sources, f"no rule {rule!r} in compiler/"


# --- the emulated Trainer releases: one list ----------------------------------------------


def _makefile() -> str:
    return (REPO / "Makefile").read_text(encoding="utf-8")


def test_the_makefile_builds_the_oracle_of_every_release_as_the_tests_do() -> None:
    """Each `go build` of the conformance oracle in the Makefile is the build of BUILDS
    (the same module list, tags and binary), one per emulated release, and `make oracle`
    builds them all."""
    makefile = _makefile()
    builds = re.findall(r"^\tcd \$\(ORACLE_DIR\) && go build (.*?)-o bin/(\S+) \.$", makefile, re.M)
    made = {binary: tuple(flags.replace("-tags ", "-tags=").split()) for flags, binary in builds}
    assert made == {binary: flags for flags, binary in BUILDS.values()}
    assert set(BUILDS) == set(TRAINER_VERSIONS)
    variables = dict(re.findall(r"^(ORACLE\w*) := (\S+)$", makefile, re.M))
    prerequisites = re.search(r"^oracle: (.*)$", makefile, re.M)
    assert prerequisites is not None
    targets = {
        variables[name].replace("$(ORACLE_DIR)", "tests/conformance/oracle")
        for name in re.findall(r"\$\((\w+)\)", prerequisites.group(1))
    }
    assert targets == {f"tests/conformance/oracle/bin/{binary}" for _, binary in BUILDS.values()}
    newest = re.search(r"^TRAINER_VERSION := (\S+)$", makefile, re.M)
    assert newest is not None and newest.group(1) == DEFAULT_TRAINER_VERSION


def test_the_readme_names_the_emulated_releases() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    match = re.search(r"It emulates Kubeflow Trainer (.*?), per cluster", readme, re.S)
    assert match is not None
    assert re.findall(r"\*\*(v[0-9.]+)\*\*", match.group(1)) == list(reversed(TRAINER_VERSIONS))


def test_the_manual_names_no_release_it_does_not_know() -> None:
    """A Trainer release named anywhere in the manual is one trainc emulates (or an older
    Training Operator / MPI Operator version, which are v1.x and v0.x)."""
    texts = {"README.md": (REPO / "README.md").read_text(encoding="utf-8"), **_pages()}
    for name, text in texts.items():
        for version in re.findall(r"\bv2\.\d+\.\d+\b", text):
            assert version in TRAINER_VERSIONS, (name, version)


# --- the README -----------------------------------------------------------------------


def test_the_readme_is_a_landing_page_with_working_links() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 400
    assert "## The two commands of a fresh machine" in readme
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", readme)
    assert len(links) > 20
    for link in links:
        if "://" not in link:
            assert (REPO / link).is_file(), link


# Where the manual lists releases by hand: (file, the text before the list, the list's end,
# which releases it must name).
HAND_LISTS = [
    ("docs/trainer-versions.md", "**Emulated: ", ".**", TRAINER_VERSIONS),
    (
        "docs/reference/trainc-yaml.md",
        "the Trainer release it runs: ",
        " (default",
        TRAINER_VERSIONS,
    ),
    ("docs/contributing/architecture.md", "for an older\n", ");", TRAINER_VERSIONS[:-1]),
]


@pytest.mark.parametrize(("name", "before", "after", "releases"), HAND_LISTS)
def test_hand_written_release_lists_name_every_release(
    name: str, before: str, after: str, releases: tuple[str, ...]
) -> None:
    text = (REPO / name).read_text(encoding="utf-8")
    assert before in text, name
    listed = text.split(before, 1)[1].split(after, 1)[0]
    assert tuple(re.findall(r"v2\.\d+\.\d+", listed)) == releases, (name, listed)


def test_the_fetch_script_takes_the_newest_release_from_the_same_list() -> None:
    """tests/test_trainer_versions.py checks ALL_VERSIONS; the newest (fetched with
    upstream/go.mod rather than a versions/ module list) is the default release too."""
    script = (REPO / "scripts" / "fetch-upstream.sh").read_text(encoding="utf-8")
    newest = re.search(r"^NEWEST_VERSION=(\S+)$", script, re.M)
    assert newest is not None
    assert newest.group(1) == DEFAULT_TRAINER_VERSION == TRAINER_VERSIONS[-1]


# --- the tour: what the README and Getting started show is what trainc prints ----------


def _sessions(text: str) -> list[tuple[str, list[str]]]:
    """The ``$ command`` lines of the page's shell blocks and the output under each."""
    sessions: list[tuple[str, list[str]]] = []
    for block in re.findall(r"```sh\n(.*?)```", text, re.S):
        lines = block.splitlines()
        if not lines or not lines[0].startswith("$ "):
            continue
        for line in lines:
            if line.startswith("$ "):
                sessions.append((line[2:], []))
            elif sessions[-1][0].endswith("\\"):
                sessions[-1] = (sessions[-1][0][:-1] + line.strip(), sessions[-1][1])
            else:
                sessions[-1][1].append(line)
    return sessions


def _trainc(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return trainc_process(*args, cwd=cwd)


@pytest.mark.parametrize("page", ["README.md", "docs/getting-started.md"])
def test_the_tour_prints_what_the_page_shows(page: str, tmp_path: Path) -> None:
    text = (REPO / page).read_text(encoding="utf-8")
    shutil.copytree(REPO / "example", tmp_path / "example")
    sessions = [(c, out) for c, out in _sessions(text) if c.startswith("trainc ")]
    assert [shlex.split(c)[1] for c, _ in sessions] == ["render", "check", "explain"]
    for command, expected in sessions:
        result = _trainc(shlex.split(command)[1:], tmp_path)
        assert result.returncode == 0, (command, result.stderr)
        assert (result.stdout + result.stderr).splitlines() == expected, command
    # the broken TrainJob: exit 2, the messages shown, the output folder left as it was
    before = sorted(p.name for p in (tmp_path / "out").rglob("*"))
    job = tmp_path / "example" / "jobs" / "smoke.yaml"
    job.write_text(job.read_text(encoding="utf-8").replace("numNodes: 2", "numNodes: two"))
    shown = re.search(r"```text\n(example/jobs/smoke\.yaml:.*?)```", text, re.S)
    assert shown is not None
    result = _trainc(["render", "example/", "-o", "out"], tmp_path)
    assert result.returncode == 2
    assert result.stderr.splitlines() == shown.group(1).splitlines()
    assert sorted(p.name for p in (tmp_path / "out").rglob("*")) == before
