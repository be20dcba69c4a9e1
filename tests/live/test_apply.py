"""``trainc apply`` against the real kube-apiserver of the live control plane.

No JobSet controller runs: JobSet status is patched through the status subresource for
``--wait``; no kube-controller-manager runs, so nothing is garbage-collected.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest
import yaml

from compiler.deliver.apply.applyset import (
    CONTAINS_GROUP_KINDS,
    ID_LABEL,
    PART_OF_LABEL,
    applyset_id,
)
from tests.conformance.cases import all_cases
from tests.live import controlplane
from tests.live.apply_support import (
    JOBSETS,
    OUTPUTS,
    SECRETS,
    admin,
    get,
    names,
    new_namespace,
    runtime,
    trainc,
    trainjob,
    write,
)
from tests.live.controlplane import ControlPlane, free_port

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _tree(tmp_path: Path, ns: str, jobs: tuple[str, ...] = ("a", "b"), **kw: object) -> Path:
    files = {"runtime.yaml": runtime(ns, **kw)}  # type: ignore[arg-type]
    files.update({f"{j}.yaml": trainjob(ns, j) for j in jobs})
    return write(tmp_path / "inputs", files)


def _kc(plane: ControlPlane) -> tuple[str, str]:
    return ("--kubeconfig", str(plane.kubeconfig))


# --- create, unchanged, configure ---------------------------------------------------


def test_create_then_unchanged_without_writes(control_plane: ControlPlane, tmp_path: Path) -> None:
    with admin(control_plane) as client:
        ns = new_namespace(client)
        tree = _tree(tmp_path, ns)
        first = trainc("apply", tree, *_kc(control_plane))
        assert first.code == 0, first.err
        assert first.status_of(f"JobSet {ns}/a") == "created"
        assert first.status_of(f"JobSet {ns}/b") == "created"
        assert "2 changed" in first.out
        assert names(client, JOBSETS.format(ns=ns)) == ["a", "b"]
        live = client.get(JOBSETS.format(ns=ns) + "/a")
        managers = {m["manager"] for m in live["metadata"]["managedFields"]}
        assert managers == {"trainc"}

        second = trainc("apply", tree, *_kc(control_plane))
        assert second.code == 0, second.err
        assert "trainc apply: 0 changed" in second.out
        assert second.status_of(f"JobSet {ns}/a") == "unchanged"
        assert second.writes == []  # compared first: no write reached the server
        again = client.get(JOBSETS.format(ns=ns) + "/a")
        assert again["metadata"]["resourceVersion"] == live["metadata"]["resourceVersion"]


def test_object_made_by_someone_else_is_adopted_once(
    control_plane: ControlPlane, tmp_path: Path
) -> None:
    with admin(control_plane) as client:
        ns = new_namespace(client)
        tree = _tree(tmp_path, ns, jobs=("a",))
        jobset = yaml.safe_load(trainc("render", tree, "-o", "-").out)
        client.request("POST", JOBSETS.format(ns=ns), jobset)  # a plain create, no apply
        adopted = trainc("apply", tree, *_kc(control_plane))
        assert adopted.status_of(f"JobSet {ns}/a") == "configured"
        live = client.get(JOBSETS.format(ns=ns) + "/a")
        assert "trainc" in {m["manager"] for m in live["metadata"]["managedFields"]}
        again = trainc("apply", tree, *_kc(control_plane))
        assert again.status_of(f"JobSet {ns}/a") == "unchanged" and again.writes == []


def test_label_change_is_configured(control_plane: ControlPlane, tmp_path: Path) -> None:
    with admin(control_plane) as client:
        ns = new_namespace(client)
        tree = _tree(tmp_path, ns, jobs=("a",))
        assert trainc("apply", tree, *_kc(control_plane)).code == 0
        _tree(tmp_path, ns, jobs=("a",), label="b")
        result = trainc("apply", tree, *_kc(control_plane))
        assert result.code == 0, result.err
        assert result.status_of(f"JobSet {ns}/a") == "configured"
        assert "1 changed" in result.out
        live = client.get(JOBSETS.format(ns=ns) + "/a")
        assert live["metadata"]["labels"]["team"] == "b"


def test_conflict_names_manager_and_fields_then_force(
    control_plane: ControlPlane, tmp_path: Path
) -> None:
    with admin(control_plane) as client:
        ns = new_namespace(client)
        tree = _tree(tmp_path, ns, jobs=("a",))
        assert trainc("apply", tree, *_kc(control_plane)).code == 0
        patch = {
            "apiVersion": "jobset.x-k8s.io/v1alpha2",
            "kind": "JobSet",
            "metadata": {"name": "a", "namespace": ns, "labels": {"team": "theirs"}},
        }
        code, answer = client.raw(
            "PATCH",
            JOBSETS.format(ns=ns) + "/a",
            patch,
            {"fieldManager": "other-tool", "force": "true"},
            content_type="application/apply-patch+yaml",
        )
        assert code == 200, answer
        refused = trainc("apply", tree, *_kc(control_plane))
        assert refused.code == 2
        line = next(x for x in refused.out.splitlines() if x.startswith(f"JobSet {ns}/a"))
        assert "failed" in line and '"other-tool"' in line and ".metadata.labels.team" in line
        assert client.get(JOBSETS.format(ns=ns) + "/a")["metadata"]["labels"]["team"] == "theirs"

        forced = trainc("apply", tree, "--force-conflicts", *_kc(control_plane))
        assert forced.code == 0, forced.out
        assert forced.status_of(f"JobSet {ns}/a") == "configured"
        assert client.get(JOBSETS.format(ns=ns) + "/a")["metadata"]["labels"]["team"] == "a"


# --- immutable fields -------------------------------------------------------------


def test_immutable_change_refused_then_recreate(
    control_plane: ControlPlane, tmp_path: Path
) -> None:
    with admin(control_plane) as client:
        ns = new_namespace(client)
        tree = _tree(tmp_path, ns, jobs=("a",))
        assert trainc("apply", tree, *_kc(control_plane)).code == 0
        before = client.get(JOBSETS.format(ns=ns) + "/a")
        (tree / "a.yaml").write_text(trainjob(ns, "a", args=("--steps=2",)))

        refused = trainc("apply", tree, *_kc(control_plane))
        assert refused.code == 2
        line = next(x for x in refused.out.splitlines() if x.startswith(f"JobSet {ns}/a"))
        assert "immutable fields changed" in line
        assert (
            "spec.replicatedJobs[name=node].template.spec.template.spec.containers[name=node].args"
            in line
        )
        assert refused.writes == []
        assert (
            client.get(JOBSETS.format(ns=ns) + "/a")["metadata"]["uid"] == before["metadata"]["uid"]
        )

        recreated = trainc("apply", tree, "--recreate", *_kc(control_plane))
        assert recreated.code == 0, recreated.out
        assert recreated.status_of(f"JobSet {ns}/a") == "recreated"
        after = client.get(JOBSETS.format(ns=ns) + "/a")
        assert after["metadata"]["uid"] != before["metadata"]["uid"]
        container = after["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
        assert container["containers"][0]["args"] == ["--steps=2"]


def test_recreate_help_says_destructive() -> None:
    result = trainc("apply", "--help")
    assert "DESTRUCTIVE" in result.out


# --- dry run and diff ---------------------------------------------------------------


def test_dry_run_writes_nothing(control_plane: ControlPlane, tmp_path: Path) -> None:
    with admin(control_plane) as client:
        ns = new_namespace(client)
        tree = _tree(tmp_path, ns, mpi=True)
        result = trainc("apply", tree, "--dry-run=server", *_kc(control_plane))
        assert result.code == 0, result.out + result.err
        assert result.status_of(f"JobSet {ns}/a") == "created"
        assert "(server dry run)" in result.out
        assert result.status_of(f"Secret {ns}/a-mpi-ssh-auth") == "created"
        assert result.writes  # sent, each with dryRun=All
        assert all("dryRun=All" in url for _, url in result.writes)
        assert names(client, JOBSETS.format(ns=ns)) == []
        assert names(client, f"/api/v1/namespaces/{ns}/configmaps") == []
        assert names(client, SECRETS.format(ns=ns)) == []


def test_diff_against_live(control_plane: ControlPlane, tmp_path: Path) -> None:
    with admin(control_plane) as client:
        ns = new_namespace(client)
        tree = _tree(tmp_path, ns, jobs=("a",))
        added = trainc("apply", tree, "--diff", *_kc(control_plane))
        assert added.code == 1
        assert f"+ JobSet {ns}/a" in added.out
        assert trainc("apply", tree, *_kc(control_plane)).code == 0
        same = trainc("apply", tree, "--diff", *_kc(control_plane))
        assert same.code == 0, same.out
        assert "no rendered output changes against live" in same.out
        _tree(tmp_path, ns, jobs=("a",), label="c")
        changed = trainc("apply", tree, "--diff", *_kc(control_plane))
        assert changed.code == 1
        assert "~ metadata.labels.team: a -> c" in changed.out
        assert changed.writes == []
        assert client.get(JOBSETS.format(ns=ns) + "/a")["metadata"]["labels"]["team"] == "a"
        verb = trainc("diff", "--live", tree, *_kc(control_plane))
        assert verb.code == 1 and verb.out == changed.out


# --- required Secrets ----------------------------------------------------------------


def test_required_secret_created_once_never_overwritten(
    control_plane: ControlPlane, tmp_path: Path
) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    with admin(control_plane) as client:
        ns = new_namespace(client)
        tree = _tree(tmp_path, ns, jobs=("a", "b"), mpi=True)
        # b's Secret exists already (made by someone else): it is left alone
        client.request(
            "POST",
            SECRETS.format(ns=ns),
            {
                "metadata": {"name": "b-mpi-ssh-auth"},
                "type": "kubernetes.io/ssh-auth",
                "data": {"ssh-privatekey": base64.b64encode(b"theirs").decode()},
            },
        )
        first = trainc("apply", tree, *_kc(control_plane))
        assert first.code == 0, first.out + first.err
        assert first.status_of(f"Secret {ns}/a-mpi-ssh-auth") == "created"
        assert first.status_of(f"Secret {ns}/b-mpi-ssh-auth") == "unchanged"
        secret = client.get(SECRETS.format(ns=ns) + "/a-mpi-ssh-auth")
        assert secret["type"] == "kubernetes.io/ssh-auth"
        assert secret["immutable"] is True
        assert sorted(secret["data"]) == ["ssh-privatekey", "ssh-publickey"]
        private_pem = base64.b64decode(secret["data"]["ssh-privatekey"])
        assert private_pem.startswith(b"-----BEGIN EC PRIVATE KEY-----")
        key = serialization.load_pem_private_key(private_pem, None)
        assert isinstance(key, ec.EllipticCurvePrivateKey) and key.curve.name == "secp521r1"
        public = base64.b64decode(secret["data"]["ssh-publickey"])
        assert public.startswith(b"ecdsa-sha2-nistp521 ") and public.endswith(b"\n")
        assert public.rstrip(b"\n") == key.public_key().public_bytes(
            serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH
        )
        jobset = client.get(JOBSETS.format(ns=ns) + "/a")
        (owner,) = secret["metadata"]["ownerReferences"]
        assert (owner["kind"], owner["name"], owner["uid"]) == (
            "JobSet",
            "a",
            jobset["metadata"]["uid"],
        )
        theirs = client.get(SECRETS.format(ns=ns) + "/b-mpi-ssh-auth")
        assert base64.b64decode(theirs["data"]["ssh-privatekey"]) == b"theirs"

        second = trainc("apply", tree, *_kc(control_plane))
        assert second.code == 0
        assert second.status_of(f"Secret {ns}/a-mpi-ssh-auth") == "unchanged"
        assert second.writes == []
        again = client.get(SECRETS.format(ns=ns) + "/a-mpi-ssh-auth")
        assert again["data"] == secret["data"]
        _SECRETS_SEEN.extend(
            [secret["data"]["ssh-privatekey"], private_pem.decode(), public.decode().split()[1]]
        )


_SECRETS_SEEN: list[str] = []


# --- prune and ApplySet ---------------------------------------------------------------


def _kubectl() -> str | None:
    return shutil.which("kubectl")


def test_prune_only_what_trainc_applied(control_plane: ControlPlane, tmp_path: Path) -> None:
    with admin(control_plane) as client:
        ns = new_namespace(client)
        tree = _tree(tmp_path, ns, jobs=("a", "b"))
        kc = _kc(control_plane)
        first = trainc("apply", tree, "--prune", "--applyset", "set", "-n", ns, *kc)
        assert first.code == 0, first.out + first.err
        set_id = applyset_id("set", ns)
        parent = client.get(SECRETS.format(ns=ns) + "/set")
        assert parent["metadata"]["labels"][ID_LABEL] == set_id
        assert parent["metadata"]["annotations"][CONTAINS_GROUP_KINDS] == "JobSet.jobset.x-k8s.io"
        assert parent["metadata"]["annotations"]["applyset.kubernetes.io/tooling"].startswith(
            "trainc/v"
        )
        members = names(client, JOBSETS.format(ns=ns), labelSelector=f"{PART_OF_LABEL}={set_id}")
        assert members == ["a", "b"]
        # a JobSet trainc did not apply, wearing the label anyway: never pruned
        foreign = yaml.safe_load(trainc("render", tree, "-o", "-").out.split("---")[0])
        foreign["metadata"]["name"] = "foreign"
        foreign["metadata"]["labels"][PART_OF_LABEL] = set_id
        client.request("POST", JOBSETS.format(ns=ns), foreign)

        (tree / "b.yaml").unlink()
        pruned = trainc("apply", tree, "--prune", "--applyset", "set", "-n", ns, *kc)
        assert pruned.code == 0, pruned.out + pruned.err
        assert pruned.status_of(f"JobSet {ns}/b") == "pruned"
        assert pruned.status_of(f"JobSet {ns}/a") == "unchanged"
        assert names(client, JOBSETS.format(ns=ns)) == ["a", "foreign"]
        again = trainc("apply", tree, "--prune", "--applyset", "set", "-n", ns, *kc)
        assert "0 changed" in again.out

        kubectl = _kubectl()
        if kubectl is None:
            pytest.skip("kubectl is not on PATH")
        # kubectl sees the same members of the same ApplySet
        seen = subprocess.run(
            [
                kubectl,
                "--kubeconfig",
                str(control_plane.kubeconfig),
                "get",
                "jobsets",
                "-n",
                ns,
                "-l",
                f"{PART_OF_LABEL}={set_id}",
                "-o",
                "name",
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        assert sorted(seen) == ["jobset.jobset.x-k8s.io/a", "jobset.jobset.x-k8s.io/foreign"]


def test_kubectl_applyset_agrees_with_trainc(control_plane: ControlPlane, tmp_path: Path) -> None:
    """kubectl makes an ApplySet of the same tree: same id, same group-kinds, same members;
    and trainc refuses to change an ApplySet kubectl manages."""
    kubectl = _kubectl()
    if kubectl is None:
        pytest.skip("kubectl is not on PATH")
    with admin(control_plane) as client:
        ns = new_namespace(client)
        tree = _tree(tmp_path, ns, jobs=("a", "b"))
        rendered = tmp_path / "rendered.yaml"
        rendered.write_text(trainc("render", tree, "-o", "-").out)
        env = {**os.environ, "KUBECTL_APPLYSET": "true"}
        done = subprocess.run(
            [
                kubectl,
                "--kubeconfig",
                str(control_plane.kubeconfig),
                "apply",
                "--server-side",
                "--prune",
                "--applyset=kset",
                "-n",
                ns,
                "-f",
                str(rendered),
            ],
            capture_output=True,
            text=True,
            env=env,
        )
        assert done.returncode == 0, done.stderr
        parent = client.get(SECRETS.format(ns=ns) + "/kset")
        assert parent["metadata"]["labels"][ID_LABEL] == applyset_id("kset", ns)
        assert parent["metadata"]["annotations"][CONTAINS_GROUP_KINDS] == "JobSet.jobset.x-k8s.io"
        members = names(
            client,
            JOBSETS.format(ns=ns),
            labelSelector=f"{PART_OF_LABEL}={applyset_id('kset', ns)}",
        )
        assert members == ["a", "b"]
        refused = trainc(
            "apply", tree, "--prune", "--applyset", "kset", "-n", ns, *_kc(control_plane)
        )
        assert refused.code == 2
        assert "managed by 'kubectl/" in refused.err


# --- wait ---------------------------------------------------------------------------------


def test_wait_reports_progress_until_started(control_plane: ControlPlane, tmp_path: Path) -> None:
    with admin(control_plane) as client:
        ns = new_namespace(client)
        tree = _tree(tmp_path, ns, jobs=("a",))

        def patch_status() -> None:
            with admin(control_plane) as other:
                path = JOBSETS.format(ns=ns) + "/a"
                deadline = time.monotonic() + 20
                while get(other, path) is None and time.monotonic() < deadline:
                    time.sleep(0.1)
                time.sleep(1.0)
                status = {
                    "status": {
                        "replicatedJobsStatus": [
                            {
                                "name": "node",
                                "ready": 0,
                                "active": 1,
                                "succeeded": 0,
                                "failed": 0,
                                "suspended": 0,
                            }
                        ]
                    }
                }
                other.raw(
                    "PATCH", path + "/status", status, content_type="application/merge-patch+json"
                )

        thread = threading.Thread(target=patch_status)
        thread.start()
        result = trainc("apply", tree, "--wait", "--timeout", "30", *_kc(control_plane))
        thread.join()
        assert result.code == 0, result.out + result.err
        assert (
            f"JobSet {ns}/a: waiting: replicated jobs ready 0/1, active 0, failed 0" in result.out
        )
        assert (
            f"JobSet {ns}/a: started: replicated jobs ready 0/1, active 1, failed 0" in result.out
        )


def test_wait_times_out(control_plane: ControlPlane, tmp_path: Path) -> None:
    with admin(control_plane) as client:
        ns = new_namespace(client)
        tree = _tree(tmp_path, ns, jobs=("a",))
        result = trainc("apply", tree, "--wait", "--timeout", "2", *_kc(control_plane))
        assert result.code == 2
        assert "--wait: timed out after 2s" in result.err


# --- errors ---------------------------------------------------------------------------


def _kubeconfig(path: Path, server: str, ca: Path, token: str) -> Path:
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "c",
                "clusters": [
                    {"name": "c", "cluster": {"server": server, "certificate-authority": str(ca)}}
                ],
                "users": [{"name": "u", "user": {"token": token}}],
                "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
            }
        )
    )
    return path


def test_bad_kubeconfig_is_exit_2(tmp_path: Path) -> None:
    tree = _tree(tmp_path, "default", jobs=("a",))
    bad = tmp_path / "bad"
    bad.write_text("this: [is not a kubeconfig\n")
    result = trainc("apply", tree, "--kubeconfig", bad)
    assert result.code == 2
    assert "kubeconfig" in result.err and "Traceback" not in result.err
    missing = trainc("apply", tree, "--kubeconfig", tmp_path / "nope")
    assert missing.code == 2 and "no kubeconfig found" in missing.err
    no_context = trainc(
        "apply",
        tree,
        "--kubeconfig",
        _kubeconfig(tmp_path / "kc", "https://127.0.0.1:1", tmp_path / "ca", "t"),
        "--context",
        "absent",
    )
    assert no_context.code == 2 and "absent" in no_context.err


def test_unreachable_server_is_exit_2(control_plane: ControlPlane, tmp_path: Path) -> None:
    tree = _tree(tmp_path, "default", jobs=("a",))
    kc = _kubeconfig(
        tmp_path / "kc", f"https://127.0.0.1:{free_port()}", control_plane.pki.ca_cert, "t"
    )
    began = time.monotonic()
    result = trainc("apply", tree, "--kubeconfig", kc, "--timeout", "2")
    assert result.code == 2
    assert "did not answer" in result.err and "before the timeout" in result.err
    assert time.monotonic() - began < 15


def test_untrusted_server_certificate_is_exit_2(
    control_plane: ControlPlane, tmp_path: Path
) -> None:
    tree = _tree(tmp_path, "default", jobs=("a",))
    kc = tmp_path / "kc"
    _kubeconfig(kc, control_plane.url, control_plane.pki.ca_cert, control_plane.admin_token)
    config = yaml.safe_load(kc.read_text())
    del config["clusters"][0]["cluster"]["certificate-authority"]  # system CAs: not ours
    kc.write_text(yaml.safe_dump(config))
    result = trainc("apply", tree, "--kubeconfig", kc, "--timeout", "2")
    assert result.code == 2
    assert "TLS" in result.err and "Traceback" not in result.err


def test_forbidden_is_exit_2(control_plane: ControlPlane, tmp_path: Path) -> None:
    tree = _tree(tmp_path, "default", jobs=("a",))
    kc = _kubeconfig(
        tmp_path / "kc", control_plane.url, control_plane.pki.ca_cert, control_plane.limited_token
    )
    result = trainc("apply", tree, "--kubeconfig", kc)
    assert result.code == 2
    assert "forbidden" in result.err and "trainc-limited" in result.err
    refused = _kubeconfig(tmp_path / "kc2", control_plane.url, control_plane.pki.ca_cert, "wrong")
    result = trainc("apply", tree, "--kubeconfig", refused)
    assert result.code == 2 and "401 Unauthorized" in result.err


# --- interrupted and resumed ------------------------------------------------------------


def test_server_killed_mid_apply_then_rerun_completes(tmp_path: Path) -> None:
    try:
        plane = controlplane.start()  # a private control plane: this test kills its server
    except controlplane.ControlPlaneUnavailable as error:
        pytest.fail(f"no live control plane (`make test` builds it first): {error}", pytrace=False)
    try:
        with admin(plane) as client:
            ns = new_namespace(client)
        tree = _tree(tmp_path, ns, jobs=tuple(f"j{i:02d}" for i in range(20)))
        apiserver = next(p for p in plane.processes if p.name == "kube-apiserver")
        from compiler.deliver.apply import client as apply_client

        original = apply_client.Connection._send
        patches = 0

        def killing_send(self: apply_client.Connection, method: str, *rest: object) -> object:
            nonlocal patches
            if method == "PATCH":
                patches += 1
                if patches == 8:
                    apiserver.stop()
            return original(self, method, *rest)  # type: ignore[arg-type]

        with pytest.MonkeyPatch.context() as patcher:
            patcher.setattr(apply_client.Connection, "_send", killing_send)
            broken = trainc("apply", tree, "--timeout", "3", "--kubeconfig", plane.kubeconfig)
        assert broken.code == 2
        assert "did not answer" in broken.err
        assert "applied (7): " in broken.err
        assert "not applied (13): " in broken.err and f"JobSet {ns}/j07" in broken.err
        assert f"JobSet {ns}/j16, ... and 3 more" in broken.err  # ten names at most
        # the server comes back on the same port; the rerun completes
        restarted = controlplane._spawn("kube-apiserver", list(apiserver.popen.args), plane.workdir)  # type: ignore[arg-type]
        plane.processes.append(restarted)
        with admin(plane) as client:
            controlplane._wait(
                "kube-apiserver /readyz",
                lambda: client.raw("GET", "/readyz")[0] == 200,
                restarted,
                60,
            )
            rerun = trainc("apply", tree, "--kubeconfig", plane.kubeconfig)
            assert rerun.code == 0, rerun.out + rerun.err
            assert rerun.status_of(f"JobSet {ns}/j00") == "unchanged"
            assert rerun.status_of(f"JobSet {ns}/j19") == "created"
            assert "13 changed" in rerun.out
            assert len(names(client, JOBSETS.format(ns=ns))) == 20
    finally:
        plane.stop()


# --- trainjobs delivery ----------------------------------------------------------------


def test_emit_trainjobs_applies_runtimes_then_trainjobs(
    control_plane: ControlPlane, tmp_path: Path
) -> None:
    with admin(control_plane) as client:
        ns = new_namespace(client)
        tree = _tree(tmp_path, ns, jobs=("a",), mpi=True)
        result = trainc("apply", tree, "--emit", "trainjobs", *_kc(control_plane))
        assert result.code == 0, result.out + result.err
        lines = [
            x
            for x in result.out.splitlines()
            if x.startswith(("TrainingRuntime", "TrainJob", "Secret"))
        ]
        assert lines[0] == f"TrainingRuntime {ns}/rt created"
        assert lines[1] == f"TrainJob {ns}/a created"
        assert lines[2].startswith(f"Secret {ns}/a-mpi-ssh-auth skipped")
        assert get(client, f"/apis/trainer.kubeflow.org/v1alpha1/namespaces/{ns}/trainjobs/a")
        again = trainc("apply", tree, "--emit", "trainjobs", *_kc(control_plane))
        assert "0 changed" in again.out and again.writes == []


def test_project_namespaces_first_and_per_cluster_delivery(
    control_plane: ControlPlane, tmp_path: Path
) -> None:
    with admin(control_plane) as client:
        ns = f"proj-{os.getpid()}"
        inputs = _tree(tmp_path, ns, jobs=("a",))
        project = tmp_path / "trainc.yaml"
        project.write_text(
            "inputs:\n  runtimes: [inputs/runtime.yaml]\n  jobs: [inputs/a.yaml]\n"
            "clusters:\n"
            f"  - name: one\n    defaultNamespace: {ns}\n"
            f"    namespaces: [{{name: {ns}, labels: {{team: vision}}}}]\n"
            f"  - name: two\n    delivery: trainjobs\n"
            f"    namespaces: [{{name: {ns}}}]\n"
        )
        assert inputs.is_dir()
        result = trainc(
            "apply", "--project", project, "--cluster", "one", "-o", "json", *_kc(control_plane)
        )
        assert result.code == 0, result.out + result.err
        document = json.loads(result.out)
        assert [o["object"] for o in document["objects"]] == [f"Namespace {ns}", f"JobSet {ns}/a"]
        assert document["counts"]["created"] == 2 and document["changed"] == 2
        assert client.get(f"/api/v1/namespaces/{ns}")["metadata"]["labels"]["team"] == "vision"
        two = trainc("apply", "--project", project, "--cluster", "two", *_kc(control_plane))
        assert two.code == 0, two.out + two.err
        assert two.status_of(f"TrainJob {ns}/a") == "created"
        assert two.status_of(f"TrainingRuntime {ns}/rt") == "created"
        several = trainc("apply", "--project", project, *_kc(control_plane))
        assert several.code == 2 and "one cluster at a time" in several.err


def test_wait_failed_jobset_is_exit_1(control_plane: ControlPlane, tmp_path: Path) -> None:
    with admin(control_plane) as client:
        ns = new_namespace(client)
        tree = _tree(tmp_path, ns, jobs=("a",))
        assert trainc("apply", tree, *_kc(control_plane)).code == 0
        now = "2026-01-01T00:00:00Z"
        status = {
            "status": {
                "conditions": [
                    {
                        "type": "Failed",
                        "status": "True",
                        "reason": "FailedJobs",
                        "message": "boom",
                        "lastTransitionTime": now,
                    }
                ]
            }
        }
        code, answer = client.raw(
            "PATCH",
            JOBSETS.format(ns=ns) + "/a/status",
            status,
            content_type="application/merge-patch+json",
        )
        assert code == 200, answer
        result = trainc("apply", tree, "--wait", "--timeout", "10", *_kc(control_plane))
        assert result.code == 1
        assert f"JobSet {ns}/a: failed: replicated jobs ready 0/1" in result.out


# --- every golden through the real API server --------------------------------------------


def test_every_rendered_golden_accepted_with_server_dry_run(control_plane: ControlPlane) -> None:
    # A case whose Jobs the real cluster refuses (downstream.yaml) renders with exit 2:
    # there is nothing to apply, and the golden test compares its refusals.
    cases = [
        c
        for c in all_cases()
        if c.expected_objects_path.exists() and not c.downstream_path.exists()
    ]
    assert len(cases) > 100
    failures = []
    with admin(control_plane) as client:
        for case in cases:
            for doc in yaml.safe_load_all(case.expected_objects_path.read_text()):
                namespace = ((doc or {}).get("metadata") or {}).get("namespace")
                if namespace and get(client, f"/api/v1/namespaces/{namespace}") is None:
                    client.request("POST", "/api/v1/namespaces", {"metadata": {"name": namespace}})
            result = trainc(
                "apply", *case.inputs, "--dry-run=server", "-o", "json", *_kc(control_plane)
            )
            if result.code != 0:
                failures.append(f"{case.name}: {result.code} {result.out}{result.err}")
                continue
            document = json.loads(result.out)
            assert document["dryRun"] is True
            assert document["counts"]["failed"] == 0
    assert not failures, "\n".join(failures)


# --- no key material anywhere -------------------------------------------------------------


def _read(path: Path) -> bytes | None:
    try:
        if path.is_file() and path.stat().st_size < 50_000_000:
            return path.read_bytes()
    except OSError:
        pass
    return None


def test_zz_no_key_material_in_any_output_log_or_file(
    control_plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Runs last in this file: every output of the tests above, the control plane's logs
    and work folder (not etcd's data: the cluster's store is where a Secret belongs),
    every test's temporary folder and the repository's tree, against the key material
    the required-Secret test created."""
    if not _SECRETS_SEEN:
        pytest.skip("the required-Secret test did not run")
    needles = [
        s for value in _SECRETS_SEEN for s in value.splitlines() if len(s) > 20 and "-----" not in s
    ]
    assert needles
    for text in OUTPUTS:
        for needle in needles:
            assert needle not in text
    roots = [control_plane.workdir, Path.cwd(), tmp_path_factory.getbasetemp()]
    scanned = 0
    for root in roots:
        for path in root.rglob("*"):
            if ".git" in path.parts or "etcd-data" in path.parts:
                continue
            data = _read(path)
            if data is None:
                continue
            scanned += 1
            for needle in needles:
                assert needle.encode() not in data, f"key material in {path}"
    assert scanned > 100
