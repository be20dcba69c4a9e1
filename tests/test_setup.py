"""`make setup` installs everything a test needs, so `make test` on a fresh machine skips
nothing but what cannot run there: the venv follows pyproject.toml's content, and every
skip left in the suite is one of the few listed here, each with why setup cannot help."""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# (file, the skip's reason as written): what setup cannot provide
ALLOWED_SKIPS = {
    # root may write into a read-only folder: the permission error cannot be provoked
    ("tests/test_hardening.py", "root writes into read-only folders"),
    # kubectl itself: not `go install`-able (scripts/install-kubectl.sh installs the
    # standalone kustomize, enough for every other test, when kubectl is missing)
    ("tests/live/test_apply.py", "kubectl is not on PATH"),
    # only when the test it reads from is deselected (-k): under `make test` it runs
    ("tests/live/test_apply.py", "the required-Secret test did not run"),
}

_SKIP = re.compile(r"pytest\.skip\(\s*(.*?)\s*\)$|skipif\(.*reason=(.*?)\)|importorskip\((.*?)\)")


def _skips() -> set[tuple[str, str]]:
    found = set()
    for path in sorted([*REPO.glob("tests/**/*.py"), *REPO.glob("compiler/**/*.py")]):
        if path.name == "test_setup.py":
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            match = _SKIP.search(line.strip())
            if match:
                reason = next(g for g in match.groups() if g is not None)
                found.add((path.relative_to(REPO).as_posix(), reason.strip("\"'")))
    return found


def test_every_skip_is_one_setup_cannot_prevent() -> None:
    assert _skips() <= ALLOWED_SKIPS


def _make(folder: Path) -> str:
    done = subprocess.run(
        ["make", "-n", ".venv/.installed"],
        cwd=folder,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return done.stdout


def test_the_venv_is_installed_again_when_pyproject_changes_whatever_the_file_times(
    tmp_path: Path,
) -> None:
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy(REPO / name, tmp_path / name)
    stamp = tmp_path / ".venv" / ".installed"
    stamp.parent.mkdir()
    # a venv made from another pyproject.toml, its stamp newer than this one (a copied or
    # cached .venv): installed again
    stamp.write_text("an older pyproject.toml\n")
    assert "pip install -q -e '.[dev]'" in _make(tmp_path)
    # made from this very pyproject.toml: nothing to do
    digest = hashlib.sha256((tmp_path / "pyproject.toml").read_bytes()).hexdigest()
    stamp.write_text(digest + "\n")
    assert "pip install" not in _make(tmp_path)
