"""``trainc argocd generate`` on hostile repositories, as the cmp-server runs it: the
checkout unpacked in a fresh folder beside other applications' checkouts, the command
run in ``<checkout>/<source path>`` with the repo server's environment. Every way of
naming a path outside the checkout is refused (exit 2, stdout empty), and neither the
planted TrainJob's secret nor the content of any outside file reaches stdout or stderr.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from tests.gitops.support import TRAINJOB, base_env, write_project
from tests.gitops.test_argocd import DEADLINE, NO_NETWORK, plugin

SECRET = "s3cr3t-planted-by-another-app"
APP = "apps/vision"

PLANTED = TRAINJOB.format(name="planted") + (
    f"    env:\n      - name: TOKEN\n        value: {SECRET}\n"
)
PATCH = f"spec:\n  trainer:\n    env:\n      - name: TOKEN\n        value: {SECRET}\n"


def _planted(scratch: Path) -> Path:
    """Another application's checkout beside ours: a TrainJob with a secret, a project
    file that renders it, a patch that adds it."""
    other = scratch / "0b8e4c6a-other-app"
    write_project(other)
    (other / "jobs" / "planted.yaml").write_text(PLANTED)
    (other / "only").mkdir()
    (other / "only" / "planted.yaml").write_text(PLANTED)
    (other / "patch.yaml").write_text(PATCH)
    # a project file that renders the planted job wherever it is read from
    text = (other / "trainc.yaml").read_text()
    (other / "planted.trainc.yaml").write_text(
        text.replace("runtimes/", f"{other}/runtimes/")
        .replace('"jobs/**/*.yaml"', f'"{other}/only/"')
        .replace("policies/", f"{other}/policies/")
    )
    return other


def _generate(checkout: Path, app: str = APP, **env: str) -> subprocess.CompletedProcess[bytes]:
    environment = base_env(
        ARGOCD_APP_NAME="vision-training",
        ARGOCD_APP_NAMESPACE="vision",
        ARGOCD_APP_REVISION="0123456789abcdef0123456789abcdef01234567",
        ARGOCD_APP_SOURCE_REPO_URL="https://git.example.com/ml/jobs.git",
        ARGOCD_APP_SOURCE_PATH=app,
        ARGOCD_APP_SOURCE_TARGET_REVISION="main",
        PARAM_CLUSTER="production",
        **env,
    )
    return subprocess.run(
        [*NO_NETWORK, *plugin()["spec"]["generate"]["command"]],
        cwd=checkout / app,
        env=environment,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=DEADLINE,
        check=False,
    )


def _add_job_entry(project: Path, entry: str) -> None:
    path = project / "trainc.yaml"
    path.write_text(path.read_text().replace('"jobs/**/*.yaml"]', f'"jobs/**/*.yaml", "{entry}"]'))


def _overlay_patch(project: Path, patch_path: str) -> None:
    (project / "overlays").mkdir()
    (project / "overlays" / "o.yaml").write_text(
        "apiVersion: trainc.dev/v1alpha1\nkind: Overlay\nmetadata: {name: o}\nlayer: cluster\n"
        f"patches:\n  - target: {{kind: TrainJob}}\n    path: {patch_path}\n"
    )
    path = project / "trainc.yaml"
    path.write_text(
        path.read_text().replace(
            "schedulers: [coscheduling]\n",
            "schedulers: [coscheduling]\n    overlays: [overlays/]\n",
        )
    )


Hostile = Callable[[Path, Path], dict[str, str]]  # (project, other) -> extra env


def _relative(project: Path, other: Path) -> dict[str, str]:
    _add_job_entry(project, "../../../0b8e4c6a-other-app/jobs/planted.yaml")
    return {}


def _absolute(project: Path, other: Path) -> dict[str, str]:
    _add_job_entry(project, str(other / "jobs" / "planted.yaml"))
    return {}


def _absolute_glob(project: Path, other: Path) -> dict[str, str]:
    _add_job_entry(project, f"{other.parent}/**/only/planted.yaml")
    return {}


def _parent_glob(project: Path, other: Path) -> dict[str, str]:
    _add_job_entry(project, "../../../**/only/*.yaml")
    return {}


def _linked_file(project: Path, other: Path) -> dict[str, str]:
    (project / "jobs" / "linked.yaml").symlink_to(other / "jobs" / "planted.yaml")
    return {}


def _linked_folder(project: Path, other: Path) -> dict[str, str]:
    (project / "jobs" / "more").symlink_to("../../../../0b8e4c6a-other-app/only")
    return {}


def _linked_project(project: Path, other: Path) -> dict[str, str]:
    (project / "trainc.yaml").unlink()
    (project / "trainc.yaml").symlink_to(other / "planted.trainc.yaml")
    return {}


def _project_parameter(project: Path, other: Path) -> dict[str, str]:
    return {"PARAM_PROJECT": "../../../0b8e4c6a-other-app/trainc.yaml"}


def _project_parameter_json(project: Path, other: Path) -> dict[str, str]:
    value = str(other / "trainc.yaml")
    return {"ARGOCD_APP_PARAMETERS": f'[{{"name": "project", "string": "{value}"}}]'}


def _overlay_patch_path(project: Path, other: Path) -> dict[str, str]:
    _overlay_patch(project, "../../../../0b8e4c6a-other-app/patch.yaml")
    return {}


def _project_found_above(project: Path, other: Path) -> dict[str, str]:
    # no trainc.yaml in the app: the nearest one upwards must not be looked for above
    # the checkout (the cmp-server's checkout has no .git to stop the walk)
    (project / "trainc.yaml").unlink()
    (other.parent / "trainc.yaml").write_text((other / "planted.trainc.yaml").read_text())
    return {}


HOSTILE: dict[str, Hostile] = {
    "relative": _relative,
    "absolute": _absolute,
    "absolute glob": _absolute_glob,
    "parent glob": _parent_glob,
    "linked file": _linked_file,
    "linked folder": _linked_folder,
    "linked project file": _linked_project,
    "project parameter": _project_parameter,
    "project parameter (json)": _project_parameter_json,
    "overlay patch path": _overlay_patch_path,
    "project found above the checkout": _project_found_above,
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_generate_refuses_every_path_outside_the_checkout(tmp_path: Path, case: str) -> None:
    scratch = tmp_path / "cmp-server"
    other = _planted(scratch)
    checkout = scratch / "6f1d2c3b-this-app"
    project = write_project(checkout / APP)
    env = HOSTILE[case](project, other)
    process = _generate(checkout, **env)
    stderr = process.stderr.decode()
    assert process.returncode == 2, stderr
    assert process.stdout == b""
    assert SECRET not in stderr
    assert "Traceback" not in stderr
    if case != "project found above the checkout":
        assert "outside the checkout /" in stderr, stderr  # a long line is cut at 500
    else:
        assert "no trainc.yaml found" in stderr, stderr
    if case.startswith("project parameter"):  # the setting it came from is named
        named = "PARAM_PROJECT" if case == "project parameter" else "ARGOCD_APP_PARAMETERS"
        assert f"argocd generate: {named}" in stderr, stderr


def test_generate_errors_do_not_say_whether_an_outside_path_exists(tmp_path: Path) -> None:
    scratch = tmp_path / "cmp-server"
    other = _planted(scratch)
    checkout = scratch / "6f1d2c3b-this-app"
    project = write_project(checkout / APP)
    answers = []
    for name in ("planted.yaml", "absent.yaml"):
        (project / "jobs" / "linked.yaml").unlink(missing_ok=True)
        (project / "jobs" / "linked.yaml").symlink_to(other / "jobs" / name)
        answers.append(_generate(checkout))
        answers.append(_generate(checkout, PARAM_PROJECT=f"../../../0b8e4c6a-other-app/{name}"))
    assert [a.returncode for a in answers] == [2, 2, 2, 2]
    assert answers[0].stderr == answers[2].stderr
    assert answers[1].stderr == answers[3].stderr.replace(b"absent.yaml", b"planted.yaml")


def test_generate_in_a_monorepo_reads_shared_folders_of_the_checkout(tmp_path: Path) -> None:
    checkout = tmp_path / "cmp-server" / "6f1d2c3b-this-app"
    project = write_project(checkout / APP)
    shared = checkout / "shared" / "jobs"
    shared.mkdir(parents=True)
    (shared / "shared.yaml").write_text(TRAINJOB.format(name="shared"))
    (project / "jobs" / "linked.yaml").symlink_to("../../../shared/jobs/shared.yaml")
    _add_job_entry(project, "../../shared/jobs/")
    process = _generate(checkout)
    assert process.returncode == 0, process.stderr.decode()
    objects = [d for d in yaml.safe_load_all(process.stdout) if d]
    jobsets = [d["metadata"]["name"] for d in objects if d["kind"] == "JobSet"]
    assert jobsets == ["job-0", "job-1", "shared"]  # the link reaches the same file: once
