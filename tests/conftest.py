"""Fixtures shared by tests of several folders."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.dist.support import Dist, build_dist


@pytest.fixture(scope="session")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Dist:
    """``make dist`` once per session, into a temporary folder."""
    return build_dist(tmp_path_factory.mktemp("dist"))


@pytest.fixture(scope="session")
def dist_folder(dist: Dist) -> Path:
    return dist.folder
