"""Build the distribution (``make dist``) and install it as a user would: a fresh virtual
environment, the wheels from the dist folder and their dependencies from PyPI (or pip's
cache), no Go on PATH, an empty home, no trainc cache."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# PATH of the installed runs: the system's, without Go (it lives in /usr/local/go)
SYSTEM_PATH = "/usr/bin:/bin"


@dataclass(frozen=True)
class Dist:
    folder: Path
    trainc_wheel: Path
    data_wheel: Path
    sdist: Path


def build_dist(folder: Path) -> Dist:
    """``make dist DIST=folder``: the data wheel, trainc's wheel and sdist."""
    done = subprocess.run(
        ["make", "--no-print-directory", "dist", f"DIST={folder}"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    [trainc_wheel] = folder.glob("trainc-*.whl")
    [data_wheel] = folder.glob("trainc_upstream-*.whl")
    [sdist] = folder.glob("trainc-*.tar.gz")
    return Dist(folder, trainc_wheel, data_wheel, sdist)


def user_env(home: Path, **extra: str) -> dict[str, str]:
    """A user's environment: no Go, an empty home, nothing of the checkout or its cache.

    pip keeps this machine's settings (certificates, its cache, via PIP_CACHE_DIR) so
    the dependencies come from PyPI or pip's cache as for any pip install."""
    pip_cache = subprocess.run(
        [sys.executable, "-m", "pip", "cache", "dir"], capture_output=True, text=True, check=False
    ).stdout.strip()
    env = {
        key: value
        for key, value in os.environ.items()
        if key.startswith(("PIP_", "LANG", "LC_", "SSL_", "REQUESTS_"))
    }
    env.update(PATH=SYSTEM_PATH, HOME=str(home), PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("PIP_FIND_LINKS", None)
    if pip_cache:
        env["PIP_CACHE_DIR"] = pip_cache
    env.update(extra)
    assert shutil.which("go", path=env["PATH"]) is None, "Go is on the user's PATH"
    return env


def install(dist: Dist, venv: Path, home: Path) -> Path:
    """A fresh virtual environment with the two wheels; its ``bin`` folder."""
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    done = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "-q",
            str(dist.trainc_wheel),
            str(dist.data_wheel),
        ],
        env=user_env(home),
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return venv / "bin"
