"""The Argo CD Config Management Plugin: ``plugin.yaml`` and ``trainc argocd generate``
run as the sidecar runs it (a temporary copy of the repository, cwd the app path, the
repo-server's environment, stdin closed, a deadline, no network), and once through
Argo CD's own ``cmpserver/plugin`` package (a Go wrapper built from the module proxy)."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
import yaml

from tests.gitops.support import ARGOCD, base_env, trainc, tree_digest, write_project

DEADLINE = 60  # the repo-server's default exec timeout


def _can_unshare() -> bool:
    try:
        return subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode == 0
    except OSError:
        return False


NO_NETWORK = ["unshare", "-n"] if _can_unshare() else []


def plugin() -> dict:  # type: ignore[type-arg]
    return yaml.safe_load((ARGOCD / "plugin.yaml").read_text())


def sidecar_generate(
    repo: Path, app_path: str, timeout: float = DEADLINE, **env: str
) -> tuple[subprocess.CompletedProcess[bytes], dict[str, str], dict[str, str]]:
    """Run plugin.yaml's generate command as the cmp-server does; returns the process and
    the digests of the temporary checkout before and after."""
    with tempfile.TemporaryDirectory() as scratch:
        checkout = Path(scratch) / "repo"
        shutil.copytree(repo, checkout, ignore=shutil.ignore_patterns(".git"))
        before = tree_digest(checkout)
        environment = base_env(
            ARGOCD_APP_NAME="vision-training",
            ARGOCD_APP_NAMESPACE="vision",
            ARGOCD_APP_REVISION="0123456789abcdef0123456789abcdef01234567",
            ARGOCD_APP_REVISION_SHORT="0123456",
            ARGOCD_APP_SOURCE_REPO_URL="https://git.example.com/ml/jobs.git",
            ARGOCD_APP_SOURCE_PATH=app_path,
            ARGOCD_APP_SOURCE_TARGET_REVISION="main",
            KUBE_VERSION="1.34.4",
            KUBE_API_VERSIONS="v1,apps/v1,batch/v1,jobset.x-k8s.io/v1alpha2",
            **env,
        )
        process = subprocess.run(
            [*NO_NETWORK, *plugin()["spec"]["generate"]["command"]],
            cwd=checkout / app_path,
            env=environment,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            check=False,
        )
        return process, before, tree_digest(checkout)


def rendered(project: Path, cluster: str) -> bytes:
    process = trainc("render", "--cluster", cluster, "-o", "-", cwd=project)
    assert process.returncode == 0, process.stderr.decode()
    return process.stdout


def test_plugin_yaml_is_what_the_sidecar_reads() -> None:
    config = plugin()
    assert config["apiVersion"] == "argoproj.io/v1alpha1"
    assert config["kind"] == "ConfigManagementPlugin"
    assert config["metadata"]["name"] == "trainc"
    assert config["spec"]["generate"]["command"] == ["trainc", "argocd", "generate"]
    assert config["spec"]["discover"] == {"fileName": "./trainc.yaml"}
    names = [p["name"] for p in config["spec"]["parameters"]["static"]]
    assert names == ["cluster", "delivery", "project"]
    # the ConfigMap copy is the same file
    configmap = yaml.safe_load((ARGOCD / "plugin-configmap.yaml").read_text())
    assert yaml.safe_load(configmap["data"]["plugin.yaml"]) == config
    patch = yaml.safe_load((ARGOCD / "sidecar-patch.yaml").read_text())
    [container] = patch["spec"]["template"]["spec"]["containers"]
    assert container["securityContext"]["runAsUser"] == 999
    dockerfile = (ARGOCD / "Dockerfile").read_text()
    assert "USER 999" in dockerfile and "install-cue.sh" in dockerfile


def test_generate_prints_exactly_render_for_the_cluster(tmp_path: Path) -> None:
    project = write_project(tmp_path / "repo" / "apps" / "vision")
    process, before, after = sidecar_generate(
        tmp_path / "repo", "apps/vision", PARAM_CLUSTER="staging"
    )
    assert process.returncode == 0, process.stderr.decode()
    assert process.stdout == rendered(project, "staging")
    assert process.stdout.startswith(b"# cluster: staging\napiVersion: ")
    assert before == after  # nothing written into the checkout
    kinds = [d["kind"] for d in yaml.safe_load_all(process.stdout)]
    assert kinds.count("JobSet") == 2


def test_generate_takes_parameters_json_and_application_env(tmp_path: Path) -> None:
    project = write_project(tmp_path / "repo")
    parameters = json.dumps([{"name": "cluster", "string": "production"}])
    by_json, _, _ = sidecar_generate(tmp_path / "repo", ".", ARGOCD_APP_PARAMETERS=parameters)
    by_env, _, _ = sidecar_generate(tmp_path / "repo", ".", ARGOCD_ENV_TRAINC_CLUSTER="production")
    expected = rendered(project, "production")
    assert by_json.returncode == by_env.returncode == 0
    assert by_json.stdout == by_env.stdout == expected
    # the parameter wins over the Application's env
    both, _, _ = sidecar_generate(
        tmp_path / "repo", ".", PARAM_CLUSTER="staging", ARGOCD_ENV_TRAINC_CLUSTER="production"
    )
    assert both.stdout == rendered(project, "staging")


def test_generate_with_sync_hints_matches_render(tmp_path: Path) -> None:
    hints = "      syncWaves: true\n      serverSideApply: true\n      immutableChange: replace\n"
    project = write_project(tmp_path / "repo", gitops=hints)
    process, _, _ = sidecar_generate(tmp_path / "repo", ".", PARAM_CLUSTER="production")
    assert process.returncode == 0, process.stderr.decode()
    assert process.stdout == rendered(project, "production")
    waves = {
        d["kind"]: d["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"]
        for d in yaml.safe_load_all(process.stdout)
    }
    assert waves == {"PodGroup": "-1", "JobSet": "0"}


def _assert_failed(process: subprocess.CompletedProcess[bytes], code: int) -> str:
    assert process.returncode == code, process.stderr.decode()
    assert process.stdout == b""
    message = process.stderr.decode()
    assert message.startswith("trainc: ")
    assert len(message.splitlines()) <= 42  # one screen
    assert "Traceback" not in message
    return message


def test_generate_fails_on_a_bad_trainjob_with_file_and_line(tmp_path: Path) -> None:
    write_project(tmp_path / "repo")
    job = tmp_path / "repo" / "jobs" / "job-1.yaml"
    job.write_text(job.read_text().replace("numNodes: 2", "numNodes: two"))
    process, before, after = sidecar_generate(tmp_path / "repo", ".", PARAM_CLUSTER="production")
    message = _assert_failed(process, 2)
    assert "jobs/job-1.yaml:11:5" in message and "numNodes" in message
    assert before == after


def test_generate_fails_on_a_policy_violation(tmp_path: Path) -> None:
    write_project(tmp_path / "repo")
    job = tmp_path / "repo" / "jobs" / "job-0.yaml"
    job.write_text(job.read_text().replace(", cost-center: cv-job-0", ""))
    process, _, _ = sidecar_generate(tmp_path / "repo", ".", PARAM_CLUSTER="production")
    message = _assert_failed(process, 1)
    assert "policy violations" in message
    assert "needs the labels team and cost-center; missing: cost-center" in message


def test_generate_refuses_an_empty_result(tmp_path: Path) -> None:
    write_project(tmp_path / "repo", jobs=0)
    (tmp_path / "repo" / "jobs" / "none.yaml").write_text("# no TrainJob yet\n")
    process, _, _ = sidecar_generate(tmp_path / "repo", ".", PARAM_CLUSTER="production")
    message = _assert_failed(process, 2)
    assert "refusing an empty result" in message


def test_generate_needs_a_cluster_when_there_are_several(tmp_path: Path) -> None:
    write_project(tmp_path / "repo")
    process, _, _ = sidecar_generate(tmp_path / "repo", ".")
    message = _assert_failed(process, 2)
    assert "set the plugin parameter `cluster`" in message
    unknown, _, _ = sidecar_generate(tmp_path / "repo", ".", PARAM_CLUSTER="nope")
    assert "unknown cluster 'nope'" in _assert_failed(unknown, 2)


def test_generate_delivery_trainjobs_is_render_emit_trainjobs(tmp_path: Path) -> None:
    project = write_project(tmp_path / "repo")
    process, _, _ = sidecar_generate(
        tmp_path / "repo", ".", PARAM_CLUSTER="production", PARAM_DELIVERY="trainjobs"
    )
    emit = trainc(
        "render", "--cluster", "production", "-o", "-", "--emit", "trainjobs", cwd=project
    )
    if emit.returncode == 2 and b"--emit" in emit.stderr:
        # before the apply branch: a clear refusal, nothing on stdout
        assert "render --emit trainjobs" in _assert_failed(process, 2)
        return
    assert process.returncode == 0, process.stderr.decode()
    assert process.stdout == emit.stdout


# --- through Argo CD's own cmpserver/plugin package --------------------------------------

WRAPPER = Path(__file__).parent / "cmpwrapper"


@pytest.fixture(scope="session")
def cmpwrapper() -> Path:
    """The Go wrapper around argo-cd v3's cmpserver/plugin, built once into the cache."""
    if shutil.which("go") is None:
        pytest.fail(
            "Go is not installed: cannot build the argo-cd cmpserver wrapper (Go is a prerequisite: README)",
            pytrace=False,
        )
    import hashlib

    from compiler.upstream.artifacts import cache_root

    digest = hashlib.sha256(
        b"".join((WRAPPER / n).read_bytes() for n in ("go.mod", "go.sum", "main.go"))
    ).hexdigest()[:16]
    binary = cache_root() / f"cmpwrapper-{digest}" / "cmpwrapper"
    if not binary.is_file():
        binary.parent.mkdir(parents=True, exist_ok=True)
        try:
            build = subprocess.run(
                ["go", "build", "-o", str(binary), "."],
                cwd=WRAPPER,
                capture_output=True,
                text=True,
                timeout=1500,
                check=False,
            )
        except subprocess.TimeoutExpired:
            pytest.fail("building the argo-cd cmpserver wrapper took over 25 minutes")
        if build.returncode != 0:
            pytest.fail(f"cannot build the argo-cd cmpserver wrapper: {build.stderr[-500:]}")
    return binary


def test_generate_through_argocd_cmpserver_plugin(tmp_path: Path, cmpwrapper: Path) -> None:
    project = write_project(tmp_path / "repo" / "apps" / "vision")
    config = tmp_path / "config"
    config.mkdir()
    shutil.copy(ARGOCD / "plugin.yaml", config / "plugin.yaml")
    env = {**base_env(), "ARGOCD_CMP_WORKDIR": str(tmp_path / "work")}
    (tmp_path / "work").mkdir()

    def run(*entries: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(cmpwrapper), str(config), str(tmp_path / "repo"), "apps/vision", "60", *entries],
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    good = run("PARAM_CLUSTER=production", "ARGOCD_APP_NAME=vision")
    assert good.returncode == 0, good.stderr
    manifests = [json.loads(m) for m in json.loads(good.stdout)]
    expected = list(yaml.safe_load_all(rendered(project, "production")))
    assert manifests == expected
    bad = run()  # several clusters, no parameter: Argo CD reports the command's stderr
    assert bad.returncode == 1
    assert "set the plugin parameter `cluster`" in bad.stderr


@pytest.mark.parametrize("case", ["clean", "policy violation", "input error"])
def test_generate_by_chunks_answers_as_the_whole_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    """A repo of many job files is checked by chunks in worker processes (as check -j),
    the objects kept in a blob store; the answer is the whole way's, byte for byte."""
    import argparse

    from compiler.deliver import argocd
    from compiler.plan import check_chunks as check_parts
    from compiler.plan import chunks as incremental

    project = write_project(tmp_path / "repo", jobs=12)
    if case == "policy violation":
        job = project / "jobs" / "job-3.yaml"
        job.write_text(job.read_text().replace(", cost-center: cv-job-3", ""))
    if case == "input error":
        job = project / "jobs" / "job-5.yaml"
        job.write_text(job.read_text().replace("numNodes: 2", "numNodes: two"))
    monkeypatch.setattr(check_parts, "CHECK_CHUNK_JOBS", 3)
    args = argparse.Namespace(cluster="production", delivery=None, project=project / "trainc.yaml")
    chunked: list[object] = []
    real = check_parts.check_and_store_parts

    def check_and_store_parts(*a: object, **k: object) -> object:
        checked = real(*a, **k)  # type: ignore[arg-type]
        chunked.append(checked)
        return checked

    monkeypatch.setattr(check_parts, "check_and_store_parts", check_and_store_parts)
    answers = []
    for cores in (2, 1):  # by chunks, then whole
        monkeypatch.setattr(incremental, "default_jobs", lambda: cores)  # noqa: B023
        flags = argocd.Flags(args.cluster, args.delivery, args.project)
        answers.append(argocd.generate(flags, {}))
    assert answers[0] == answers[1]
    code, out, err = answers[0]
    if case == "clean":
        assert code == 0 and out.startswith("# cluster: production\napiVersion: "), err
        assert out.count("kind: JobSet") == 12
    else:
        assert code == (1 if case == "policy violation" else 2) and out == ""
    # an input error is found in a chunk: it is checked whole, for the whole message
    assert [c is not None for c in chunked] == [case != "input error"]
