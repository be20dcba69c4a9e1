"""Where ``argocd generate`` finds the checkout it must not leave."""

from __future__ import annotations

from pathlib import Path

import pytest

from compiler.deliver.argocd import checkout_root

WORK = Path("/var/cmp/8d0c7a52-5f0e-4a57-9d43-2b4f6c1e9a11")


@pytest.mark.parametrize(
    ("cwd", "source", "root"),
    [
        (WORK / "apps" / "vision", "apps/vision", WORK),  # the whole repository was sent
        (WORK / "apps" / "vision", "./apps/vision/", WORK),
        (WORK, "", WORK),  # the app at the repository's root
        (WORK, ".", WORK),
        # manifest-generate-paths: only the folder holding the paths was sent, so the
        # working directory ends with a tail of the source path
        (WORK / "vision", "apps/vision", WORK),
        (WORK, "apps/vision", WORK),
        # nothing matches, or an odd path: the working directory, the narrowest answer
        (WORK / "elsewhere", "apps/vision", WORK / "elsewhere"),
        (WORK / "apps" / "vision", "../apps/vision", WORK / "apps" / "vision"),
    ],
)
def test_checkout_root_from_the_source_path(cwd: Path, source: str, root: Path) -> None:
    assert checkout_root(cwd, {"ARGOCD_APP_SOURCE_PATH": source}) == root


def test_by_hand_there_is_no_checkout_and_the_project_is_the_users() -> None:
    assert checkout_root(WORK, {}) is None
