"""``trainc apply`` on first use (issue 29, points 3 and 4), against the fake API server:
a server dry run into namespaces this apply would create, an admission webhook that
denies one TrainJob, and ApplySet membership carried by every apply of a cluster."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fake_apiserver import FakeApiServer, Reply, Request, status
from tests.fuzz.engine import run_main
from tests.test_apply_hostile import EXAMPLE, Run

PROJECT = EXAMPLE / "trainc.yaml"
TRAINJOBS = "/apis/trainer.kubeflow.org/v1alpha1/namespaces/vision/trainjobs"
_IN_NAMESPACE = re.compile(r"/namespaces/(?P<ns>[^/]+)/")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(scope="module")
def server() -> Iterator[FakeApiServer]:
    fake = FakeApiServer(idle=120.0)
    try:
        yield fake
    finally:
        fake.stop()


@pytest.fixture
def api(server: FakeApiServer) -> FakeApiServer:
    server.reset()
    server.script(_namespace_lifecycle(server))
    return server


def _namespace_lifecycle(api: FakeApiServer) -> object:
    """As kube-apiserver's NamespaceLifecycle admission: a write into a namespace that does
    not exist is 404 ``namespaces "<ns>" not found`` (a dry run creates nothing, so a
    namespace created with dryRun=All does not exist for the next request either)."""

    def script(request: Request, answer: Reply) -> Reply:
        found = _IN_NAMESPACE.search(request.path)
        if request.method == "GET" or found is None:
            return answer
        namespace = found["ns"]
        if f"/api/v1/namespaces/{namespace}" in api.objects:
            return answer
        body = status(404, f'namespaces "{namespace}" not found', "NotFound")
        body["details"] = {"name": namespace, "kind": "namespaces"}
        return Reply(404, body)

    return script


def apply(api: FakeApiServer, tmp_path: Path, *args: str, project: str | None = None) -> Run:
    """``trainc apply`` of the example (its PATH, or ``project``: one cluster of its
    trainc.yaml) against ``api``, within 30 seconds."""
    where = (
        ["--project", project or str(PROJECT), "--cluster", "staging"]
        if project or (args and args[0] == "--project")
        else [str(EXAMPLE)]
    )
    args = args[1:] if args and args[0] == "--project" else args
    argv = ["apply", *where, "--kubeconfig", str(api.kubeconfig(tmp_path)), *args]
    verdict, out, err = run_main(argv, 30.0)
    return Run(verdict, out, err, 0.0)


def _project(*args: str) -> list[str]:
    return ["--project", *args]


# --- point 4: a server dry run on a fresh cluster ------------------------------------------


def test_dry_run_into_a_namespace_this_apply_creates_is_not_a_failure(
    api: FakeApiServer, tmp_path: Path
) -> None:
    run = apply(api, tmp_path, *_project("--dry-run=server", "--timeout", "10"))
    run.clean()
    assert run.code == 0, run.out + run.err
    assert run.status_of("Namespace vision") == "created"
    for title in ("PodGroup vision/resnet", "PodGroup vision/smoke", "JobSet vision/resnet"):
        assert run.status_of(title) == "unchecked"
    assert "namespace vision does not exist yet" in run.out
    assert "failed" not in run.out
    # what cannot be checked is not sent (it would only be refused for the namespace)
    assert not [r for r in api.requests if "/namespaces/vision/" in r.path and r.method != "GET"]
    assert "4 unchecked" in run.out.splitlines()[-1]
    assert api.objects == {}  # a dry run writes nothing


def test_dry_run_json_counts_unchecked_and_exits_0(api: FakeApiServer, tmp_path: Path) -> None:
    run = apply(api, tmp_path, *_project("--dry-run=server", "-o", "json", "--timeout", "10"))
    run.clean()
    assert run.code == 0, run.out + run.err
    document = json.loads(run.out)
    assert document["counts"]["unchecked"] == 4 and document["counts"]["failed"] == 0


def test_dry_run_into_a_namespace_nobody_creates_still_fails(
    api: FakeApiServer, tmp_path: Path
) -> None:
    # with PATHs nothing creates the namespace: the real apply would fail the same way
    run = apply(api, tmp_path, "--dry-run=server", "--timeout", "10")
    run.clean()
    assert run.code == 2
    assert run.status_of("JobSet vision/resnet") == "failed"


def test_dry_run_once_the_namespace_exists_checks_everything(
    api: FakeApiServer, tmp_path: Path
) -> None:
    assert apply(api, tmp_path, *_project("--timeout", "10")).code == 0
    run = apply(api, tmp_path, *_project("--dry-run=server", "--timeout", "10"))
    run.clean()
    assert run.code == 0, run.out + run.err
    assert "unchecked" not in run.out


def test_dry_run_with_an_applyset_in_a_new_namespace(api: FakeApiServer, tmp_path: Path) -> None:
    run = apply(
        api, tmp_path, *_project("--dry-run=server", "--prune", "-n", "vision", "--timeout", "10")
    )
    run.clean()
    assert run.code == 0, run.out + run.err
    assert api.objects == {}


# --- point 4: a webhook denies one TrainJob --------------------------------------------------


def _deny(name: str) -> object:
    def script(request: Request, answer: Reply) -> Reply:
        if request.method == "PATCH" and request.path == f"{TRAINJOBS}/{name}":
            # what kube-apiserver answers for a controller-runtime webhook's denial
            body = status(
                403,
                'admission webhook "validate.trainjob.trainer.kubeflow.org" denied the '
                "request: spec.trainer.numNodes: Invalid value: 9: too many",
                "Forbidden",
            )
            return Reply(403, body)
        return answer

    return script


def test_a_webhook_denial_fails_that_trainjob_only(api: FakeApiServer, tmp_path: Path) -> None:
    api.put({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "vision"}})
    api.script(_deny("resnet"))
    run = apply(api, tmp_path, "--emit", "trainjobs", "--timeout", "10")
    run.clean()
    assert run.code == 2, run.out + run.err
    assert run.status_of("TrainJob vision/resnet") == "failed"
    assert 'admission webhook "validate.trainjob.trainer.kubeflow.org" denied' in run.out
    assert run.status_of("TrainJob vision/smoke") == "created"  # the others are applied
    assert f"{TRAINJOBS}/smoke" in api.objects
    summary = run.out.splitlines()[-1]
    assert summary.startswith("trainc apply: 2 changed: 2 created") and "1 failed" in summary
    assert "not applied" not in run.err


def test_an_authorization_denial_still_stops_the_run(api: FakeApiServer, tmp_path: Path) -> None:
    api.put({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "vision"}})

    def forbid(request: Request, answer: Reply) -> Reply:
        if request.method == "PATCH" and request.path == f"{TRAINJOBS}/resnet":
            message = (
                'trainjobs.trainer.kubeflow.org "resnet" is forbidden: User "ci" cannot patch '
                'resource "trainjobs" in API group "trainer.kubeflow.org" in the namespace '
                '"vision"'
            )
            return Reply(403, status(403, message, "Forbidden"))
        return answer

    api.script(forbid)
    run = apply(api, tmp_path, "--emit", "trainjobs", "--timeout", "10")
    run.clean()
    assert run.code == 2
    assert 'User "ci" cannot patch' in run.err
    assert "not applied (2): TrainJob vision/resnet, TrainJob vision/smoke" in run.err
