"""``trainc render --staged``: does the git index hold the tree trainc just wrote?

The pre-commit hook re-renders into the working tree. pre-commit itself only notices a
hook's changes to files git already tracks, so a new rendered file (a new TrainJob's
JobSet) would pass unstaged and the commit would lack it. After the render, git is
asked how the output folder differs from the index, which is what the commit will
hold: new files (untracked, not ignored), changed files and removed ones. git's own
view is used, not a hash of ours, so its ignore rules, line-ending filters and the
index a hook is given (``GIT_INDEX_FILE``, kept) all apply.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from compiler.errors import EXIT_OK, EXIT_VIOLATIONS, SetupError, UsageError

__all__ = ["StagedReport", "staged_differences"]

# git ls-files -t tags: R removed, C changed (a removed file is listed as changed too),
# ? untracked
_TAGS = {"?": "new", "C": "changed", "R": "removed"}
GIT_TIMEOUT = 120.0  # seconds; listing one folder of the index


@dataclass
class StagedReport:
    directory: str
    new: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)

    @property
    def differs(self) -> bool:
        return bool(self.new or self.changed or self.removed)

    @property
    def exit_code(self) -> int:
        return EXIT_VIOLATIONS if self.differs else EXIT_OK

    def text(self) -> str:
        if not self.differs:
            return f"trainc: {self.directory} matches what is staged\n"
        lines = [
            f"trainc: {self.directory} differs from what is staged: the commit would not "
            "hold what trainc renders"
        ]
        lines += [f"  new (not staged):     {p}" for p in self.new]
        lines += [f"  changed (not staged): {p}" for p in self.changed]
        lines += [f"  removed (not staged): {p}" for p in self.removed]
        fix = f"git add -A -- {shlex.quote(self.directory)}"
        lines.append(f"stage the rendered tree and commit again: {fix}")
        return "\n".join(lines) + "\n"


def staged_differences(directory: Path) -> StagedReport:
    """How the files under ``directory`` (in the current git work tree) differ from the
    index; paths as git prints them, relative to the current directory."""
    display = os.path.relpath(directory)
    try:
        done = subprocess.run(
            ["git", "ls-files", "-z", "-t", "-m", "-d", "-o", "--exclude-standard", "--", display],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            encoding="utf-8",
            errors="surrogateescape",
            timeout=GIT_TIMEOUT,
            check=False,
        )
    except FileNotFoundError:
        raise SetupError("trainc render --staged needs git on PATH") from None
    except subprocess.TimeoutExpired:
        raise SetupError(
            f"trainc render --staged: git ls-files did not answer in {GIT_TIMEOUT:.0f} s"
        ) from None
    if done.returncode != 0:
        detail = done.stderr.strip().splitlines()
        raise UsageError(
            f"trainc render --staged: {display} is not in a git work tree "
            f"({detail[-1] if detail else 'git ls-files failed'})"
        )
    tagged: dict[str, str] = {}
    for entry in done.stdout.split("\0"):
        tag, _, path = entry.partition(" ")
        kind = _TAGS.get(tag)
        if kind is None or not path:
            continue
        if tagged.get(path) != "removed":  # removed wins over the "changed" line it also gets
            tagged[path] = kind

    def of(kind: str) -> list[str]:
        return sorted(path for path, found in tagged.items() if found == kind)

    return StagedReport(display, of("new"), of("changed"), of("removed"))
