"""``trainc apply`` on first use, against the real kube-apiserver (issue 29, points 3 and 4):
a server dry run on a cluster whose namespaces do not exist yet, an admission webhook
that denies one TrainJob, and ApplySet membership that a plain apply keeps."""

from __future__ import annotations

import base64
import json
import os
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from compiler.deliver.apply.applyset import ID_LABEL, PART_OF_LABEL, applyset_id
from tests.live.apply_support import (
    JOBSETS,
    admin,
    get,
    names,
    new_namespace,
    runtime,
    trainc,
    write,
)
from tests.live.apply_support import trainjob as trainjob_text
from tests.live.controlplane import ControlPlane

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

TRAINJOBS = "/apis/trainer.kubeflow.org/v1alpha1/namespaces/{ns}/trainjobs"
WEBHOOKS = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"


def _kc(plane: ControlPlane) -> tuple[str, str]:
    return ("--kubeconfig", str(plane.kubeconfig))


def _project(tmp_path: Path, ns: str, jobs: tuple[str, ...], cluster_extra: str = "") -> Path:
    files = {"runtime.yaml": runtime(ns)}
    files.update({f"{j}.yaml": trainjob_text(ns, j) for j in jobs})
    write(tmp_path / "inputs", files)
    project = tmp_path / "trainc.yaml"
    project.write_text(
        "inputs:\n  runtimes: [inputs/runtime.yaml]\n  jobs: ['inputs/[a-z]*.yaml']\n"
        "clusters:\n"
        f"  - name: one\n    defaultNamespace: {ns}\n"
        f"    namespaces: [{{name: {ns}, labels: {{team: vision}}}}]\n" + cluster_extra
    )
    return project


def _fresh(prefix: str) -> str:
    return f"{prefix}-{os.getpid()}-{next(_counter)}"


_counter = iter(range(10**6))


# --- point 4: a server dry run before the namespace exists ----------------------------------


def test_dry_run_on_a_fresh_cluster_is_not_a_failure(
    control_plane: ControlPlane, tmp_path: Path
) -> None:
    with admin(control_plane) as client:
        ns = _fresh("fresh")
        project = _project(tmp_path, ns, ("a", "b"))
        argv = ("apply", "--project", project, "--cluster", "one", *_kc(control_plane))
        dry = trainc(*argv, "--dry-run=server")
        assert dry.code == 0, dry.out + dry.err
        assert dry.status_of(f"Namespace {ns}") == "created"
        assert dry.status_of(f"JobSet {ns}/a") == "unchecked"
        assert f"namespace {ns} does not exist yet" in dry.out
        assert "failed" not in dry.out
        assert dry.out.splitlines()[-1] == (
            "trainc apply (one): 1 changed: 1 created, 0 configured, 0 unchanged, "
            "2 unchecked (server dry run: nothing was written)"
        )
        assert get(client, f"/api/v1/namespaces/{ns}") is None  # nothing written
        # the real apply of the same tree is accepted, and a dry run then checks all
        real = trainc(*argv)
        assert real.code == 0, real.out + real.err
        assert names(client, JOBSETS.format(ns=ns)) == ["a", "b"]
        again = trainc(*argv, "--dry-run=server", "--prune")
        assert again.code == 0, again.out + again.err
        assert "unchecked" not in again.out


def test_dry_run_with_prune_and_a_parent_in_a_new_namespace(
    control_plane: ControlPlane, tmp_path: Path
) -> None:
    with admin(control_plane) as client:
        ns = _fresh("fresh-set")
        project = _project(tmp_path, ns, ("a",))
        argv = ("apply", "--project", project, "--cluster", "one", "--prune", "-n", ns)
        dry = trainc(*argv, "--dry-run=server", *_kc(control_plane))
        assert dry.code == 0, dry.out + dry.err
        assert get(client, f"/api/v1/namespaces/{ns}") is None
        # and for real: the parent's namespace is made before the parent
        real = trainc(*argv, *_kc(control_plane))
        assert real.code == 0, real.out + real.err
        assert get(client, f"/api/v1/namespaces/{ns}/secrets/trainc-one") is not None


# --- point 4: an admission webhook denies one TrainJob --------------------------------------


class _Deny(BaseHTTPRequestHandler):
    """A validating webhook that denies as controller-runtime webhooks deny (allowed:
    false, code 403): TrainJobs named ``deny-*``, and, as the Trainer's TrainJob webhook
    does, TrainJobs whose TrainingRuntime does not exist (asked of the API server)."""

    plane: ControlPlane

    def do_POST(self) -> None:
        review = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        request = review["request"]
        trainjob = request["object"]
        name = request["name"] or trainjob["metadata"]["name"]
        message = ""
        if name.startswith("deny-"):
            message = "spec.trainer.numNodes: Invalid value: 1: not on this cluster"
        else:
            runtime = trainjob["spec"]["runtimeRef"]["name"]
            path = f"/apis/trainer.kubeflow.org/v1alpha1/namespaces/{request['namespace']}"
            with admin(self.plane) as client:
                if get(client, f"{path}/trainingruntimes/{runtime}") is None:
                    message = (
                        f'spec.runtimeRef: Invalid value: {{"name":"{runtime}"}}: '
                        f'trainingruntimes.trainer.kubeflow.org "{runtime}" not found: '
                        "specified trainingRuntime must be created before the TrainJob is created"
                    )
        response: dict[str, Any] = {"uid": request["uid"], "allowed": not message}
        if message:
            response["status"] = {"code": 403, "reason": "Forbidden", "message": message}
        body = json.dumps({**review, "response": response}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def _denying_webhook(plane: ControlPlane, ns: str) -> Iterator[None]:
    key, crt = plane.pki.issue(f"deny-{ns}", "deny-webhook", server=True, client=False)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(crt, key)
    handler = type("Handler", (_Deny,), {"plane": plane})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1})
    thread.daemon = True
    thread.start()
    name = f"deny-{ns}"
    configuration = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": name},
        "webhooks": [
            {
                "name": "deny.trainc.test",
                "admissionReviewVersions": ["v1"],
                "sideEffects": "None",
                "failurePolicy": "Fail",
                "timeoutSeconds": 5,
                "clientConfig": {
                    "url": f"https://127.0.0.1:{server.server_address[1]}/validate",
                    "caBundle": base64.b64encode(plane.pki.ca_cert.read_bytes()).decode(),
                },
                "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": ns}},
                "rules": [
                    {
                        "apiGroups": ["trainer.kubeflow.org"],
                        "apiVersions": ["v1alpha1"],
                        "operations": ["CREATE", "UPDATE"],
                        "resources": ["trainjobs"],
                    }
                ],
            }
        ],
    }
    with admin(plane) as client:
        client.request("POST", WEBHOOKS, configuration)
        try:
            yield
        finally:
            client.request("DELETE", f"{WEBHOOKS}/{name}")
            server.shutdown()
            server.server_close()


def test_a_webhook_denial_of_one_trainjob_applies_the_others(
    control_plane: ControlPlane, tmp_path: Path
) -> None:
    with admin(control_plane) as client:
        ns = new_namespace(client, "webhook")
        files = {"runtime.yaml": runtime(ns)}
        files.update({f"{j}.yaml": trainjob_text(ns, j) for j in ("a", "deny-b", "c")})
        tree = write(tmp_path / "inputs", files)
        with _denying_webhook(control_plane, ns):
            result = trainc("apply", tree, "--emit", "trainjobs", *_kc(control_plane))
        assert result.code == 2, result.out + result.err
        assert result.status_of(f"TrainJob {ns}/deny-b") == "failed"
        assert 'admission webhook "deny.trainc.test" denied the request' in result.out
        assert result.status_of(f"TrainJob {ns}/a") == "created"
        assert result.status_of(f"TrainJob {ns}/c") == "created"
        assert result.out.splitlines()[-1] == (
            "trainc apply: 3 changed: 3 created, 0 configured, 0 unchanged, 1 failed"
        )
        assert names(client, TRAINJOBS.format(ns=ns)) == ["a", "c"]


# --- point 3: every apply carries the ApplySet membership -----------------------------------


def _member_of(client: Any, ns: str, name: str) -> str | None:
    found = get(client, JOBSETS.format(ns=ns) + f"/{name}")
    assert found is not None, name
    labels: dict[str, str] = found["metadata"].get("labels") or {}
    return labels.get(PART_OF_LABEL)


def test_prune_plain_apply_prune_removes_the_dropped_job(
    control_plane: ControlPlane, tmp_path: Path
) -> None:
    with admin(control_plane) as client:
        ns = new_namespace(client, "member")
        files = {"runtime.yaml": runtime(ns), "a.yaml": trainjob_text(ns, "a")}
        files["b.yaml"] = trainjob_text(ns, "b")
        tree = write(tmp_path / "inputs", files)
        prune = ("apply", tree, "--prune", "--applyset", "set", "-n", ns, *_kc(control_plane))
        set_id = applyset_id("set", ns)
        first = trainc(*prune)
        assert first.code == 0, first.out + first.err
        plain = trainc("apply", tree, "-n", ns, *_kc(control_plane))
        assert plain.code == 0, plain.out + plain.err
        assert "0 changed" in plain.out and plain.writes == []
        assert _member_of(client, ns, "a") == set_id and _member_of(client, ns, "b") == set_id
        # a new job applied without the ApplySet: the note says it joins none
        write(tree, {**files, "c.yaml": trainjob_text(ns, "c")})
        joined = trainc("apply", tree, "-n", ns, *_kc(control_plane))
        assert joined.code == 0, joined.out + joined.err
        assert f"1 new objects are members of no ApplySet (JobSet {ns}/c)" in joined.err
        write(tree, {k: v for k, v in files.items() if k != "b.yaml"})
        pruned = trainc(*prune)
        assert pruned.code == 0, pruned.out + pruned.err
        assert pruned.status_of(f"JobSet {ns}/b") == "pruned"
        assert names(client, JOBSETS.format(ns=ns)) == ["a", "c"]  # c was never a member


def test_the_cluster_applyset_makes_every_apply_a_member(
    control_plane: ControlPlane, tmp_path: Path
) -> None:
    with admin(control_plane) as client:
        ns = _fresh("set")
        project = _project(tmp_path, ns, ("a", "b"), "    applyset: {prune: true}\n")
        argv = ("apply", "--project", project, "--cluster", "one", *_kc(control_plane))
        set_id = applyset_id("trainc-one", ns)  # in the cluster's defaultNamespace
        first = trainc(*argv, "-n", "default")  # the context's namespace changes nothing
        assert first.code == 0, first.out + first.err
        assert _member_of(client, ns, "b") == set_id
        parent = client.get(f"/api/v1/namespaces/{ns}/secrets/trainc-one")
        assert parent["metadata"]["labels"][ID_LABEL] == set_id
        (tmp_path / "inputs" / "b.yaml").unlink()
        again = trainc(*argv)
        assert again.code == 0, again.out + again.err
        assert again.status_of(f"JobSet {ns}/b") == "pruned"
        assert names(client, JOBSETS.format(ns=ns)) == ["a"]
        kept = trainc(*argv, "--no-prune")
        assert kept.code == 0 and "0 changed" in kept.out, kept.out + kept.err


def test_dry_run_of_a_trainjob_whose_runtime_is_new_is_not_a_failure(
    control_plane: ControlPlane, tmp_path: Path
) -> None:
    with admin(control_plane) as client:
        ns = new_namespace(client, "runtime")
        files = {"runtime.yaml": runtime(ns), "a.yaml": trainjob_text(ns, "a")}
        tree = write(tmp_path / "inputs", files)
        argv = ("apply", tree, "--emit", "trainjobs", *_kc(control_plane))
        with _denying_webhook(control_plane, ns):
            dry = trainc(*argv, "--dry-run=server")
            assert dry.code == 0, dry.out + dry.err
            assert dry.status_of(f"TrainingRuntime {ns}/rt") == "created"
            assert dry.status_of(f"TrainJob {ns}/a") == "unchecked"
            assert "its runtime TrainingRuntime rt does not exist yet" in dry.out
            real = trainc(*argv)
            assert real.code == 0, real.out + real.err
            assert names(client, TRAINJOBS.format(ns=ns)) == ["a"]
            write(tree, {**files, "b.yaml": trainjob_text(ns, "b")})
            checked = trainc(*argv, "--dry-run=server")
            assert checked.code == 0, checked.out + checked.err
            assert checked.status_of(f"TrainJob {ns}/b") == "created"
