"""``trainc apply`` on first use (issue 29, points 3 and 4), against the fake API server:
a server dry run into namespaces this apply would create, an admission webhook that
denies one TrainJob, and ApplySet membership carried by every apply of a cluster."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from compiler.deliver.apply.applyset import PART_OF_LABEL, applyset_id
from tests.fake_apiserver import FakeApiServer, Reply, Request, status
from tests.fuzz.engine import run_main
from tests.test_apply_hostile import EXAMPLE, Run

PROJECT = EXAMPLE / "trainc.yaml"  # set to the resolved copy by the ``api`` fixture
TRAINJOBS = "/apis/trainer.kubeflow.org/v1alpha1/namespaces/vision/trainjobs"
_IN_NAMESPACE = re.compile(r"/namespaces/(?P<ns>[^/]+)/")

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(scope="module")
def resolved_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example's project with resolved delivery and no Kueue (the example's clusters
    run Kueue and deliver TrainJobs): these tests push JobSets and PodGroups."""
    repo = tmp_path_factory.mktemp("repo")
    (repo / ".git").mkdir()  # the confinement root, so ../overlays stays inside
    shutil.copytree(EXAMPLE, repo / "example")
    shutil.copytree(EXAMPLE.parent / "overlays", repo / "overlays")
    project = repo / "example" / "trainc.yaml"
    text = project.read_text(encoding="utf-8")
    assert "    delivery: trainjobs\n" in text and "[coscheduling, kueue]" in text
    text = text.replace("    delivery: trainjobs\n", "").replace(
        "[coscheduling, kueue]", "[coscheduling]"
    )
    project.write_text(text, encoding="utf-8")
    return project


@pytest.fixture(scope="module")
def server() -> Iterator[FakeApiServer]:
    fake = FakeApiServer(idle=120.0)
    try:
        yield fake
    finally:
        fake.stop()


@pytest.fixture
def api(server: FakeApiServer, resolved_project: Path) -> FakeApiServer:
    global PROJECT
    PROJECT = resolved_project
    server.reset()
    server.put({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}})
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


def apply(
    api: FakeApiServer,
    tmp_path: Path,
    *args: str,
    project: Path | None = None,
    tree: Path = EXAMPLE,
) -> Run:
    """``trainc apply`` of ``tree`` (or ``project``, cluster ``one``; or with ``--project``
    first, the example's cluster ``staging``) against ``api``, within 30 seconds."""
    if project is not None:
        where = ["--project", str(project), "--cluster", "one"]
    elif args and args[0] == "--project":
        where = ["--project", str(PROJECT), "--cluster", "staging"]
        args = args[1:]
    else:
        where = [str(tree)]
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
    assert list(api.objects) == ["/api/v1/namespaces/default"]  # a dry run writes nothing


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
    assert list(api.objects) == ["/api/v1/namespaces/default"]


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


# --- point 3: ApplySet membership on every apply --------------------------------------------

JOBSETS = "/apis/jobset.x-k8s.io/v1alpha2/namespaces/vision/jobsets"


def _tree(tmp_path: Path) -> Path:
    tree = tmp_path / "tree"
    for folder in ("jobs", "runtimes"):
        shutil.copytree(EXAMPLE / folder, tree / folder)
    return tree


def _member_of(api: FakeApiServer, path: str) -> str | None:
    labels: dict[str, str] = api.objects[path]["metadata"].get("labels") or {}
    return labels.get(PART_OF_LABEL)


def test_a_plain_apply_between_prunes_keeps_the_membership(
    api: FakeApiServer, tmp_path: Path
) -> None:
    api.put({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "vision"}})
    tree = _tree(tmp_path)
    set_id = applyset_id("set", "default")
    first = apply(api, tmp_path, "--prune", "--applyset", "set", tree=tree)
    assert first.code == 0, first.out + first.err
    assert _member_of(api, f"{JOBSETS}/smoke") == set_id
    plain = apply(api, tmp_path, tree=tree)
    assert plain.code == 0, plain.out + plain.err
    assert plain.status_of("JobSet vision/smoke") == "unchanged"
    assert _member_of(api, f"{JOBSETS}/smoke") == set_id
    assert (
        f"kept the ApplySet membership ({PART_OF_LABEL}) of the objects applied again (4 of {set_id})"
        in plain.err
    )
    (tree / "jobs" / "smoke.yaml").unlink()
    pruned = apply(api, tmp_path, "--prune", "--applyset", "set", tree=tree)
    assert pruned.code == 0, pruned.out + pruned.err
    assert pruned.status_of("JobSet vision/smoke") == "pruned"
    assert f"{JOBSETS}/smoke" not in api.objects
    assert f"{JOBSETS}/resnet" in api.objects


def _project_file(tmp_path: Path, applyset: str) -> Path:
    tree = _tree(tmp_path)
    project = tmp_path / "trainc.yaml"
    project.write_text(
        f"inputs:\n  runtimes: [{tree}/runtimes]\n  jobs: ['{tree}/jobs/*.yaml']\n"
        "clusters:\n  - name: one\n    namespaces: [{name: vision}]\n"
        f"    applyset: {applyset}\n"
    )
    return project


def test_the_cluster_applyset_prunes_every_apply(api: FakeApiServer, tmp_path: Path) -> None:
    project = _project_file(tmp_path, "{prune: true}")
    set_id = applyset_id("trainc-one", "default")
    first = apply(api, tmp_path, project=project)
    assert first.code == 0, first.out + first.err
    assert _member_of(api, f"{JOBSETS}/smoke") == set_id
    assert "/api/v1/namespaces/default/secrets/trainc-one" in api.objects
    (tmp_path / "tree" / "jobs" / "smoke.yaml").unlink()
    again = apply(api, tmp_path, project=project)
    assert again.code == 0, again.out + again.err
    assert again.status_of("JobSet vision/smoke") == "pruned"
    assert f"{JOBSETS}/smoke" not in api.objects
    assert _member_of(api, f"{JOBSETS}/resnet") == set_id


def test_the_cluster_applyset_without_prune_keeps_members_until_prune(
    api: FakeApiServer, tmp_path: Path
) -> None:
    project = _project_file(tmp_path, "{name: team-a, namespace: vision}")
    set_id = applyset_id("team-a", "vision")
    first = apply(api, tmp_path, project=project)
    assert first.code == 0, first.out + first.err
    (tmp_path / "tree" / "jobs" / "smoke.yaml").unlink()
    kept = apply(api, tmp_path, project=project)
    assert kept.code == 0, kept.out + kept.err
    assert "pruned" not in kept.out
    assert _member_of(api, f"{JOBSETS}/smoke") == set_id  # still there, still a member
    parent = api.objects["/api/v1/namespaces/vision/secrets/team-a"]["metadata"]
    kinds = parent["annotations"]["applyset.kubernetes.io/contains-group-kinds"]
    assert "JobSet.jobset.x-k8s.io" in kinds
    pruned = apply(api, tmp_path, "--prune", project=project)
    assert pruned.code == 0, pruned.out + pruned.err
    assert pruned.status_of("JobSet vision/smoke") == "pruned"
    assert f"{JOBSETS}/smoke" not in api.objects
    before = len(api.requests)
    other = apply(api, tmp_path, "--prune", "--applyset", "other", project=project)
    assert other.code == 2
    assert "one ApplySet per cluster" in other.err
    assert not [r for r in api.requests[before:] if r.method != "GET"]


def test_the_live_diff_carries_the_membership(api: FakeApiServer, tmp_path: Path) -> None:
    project = _project_file(tmp_path, "{}")
    first = apply(api, tmp_path, project=project)
    assert first.code == 0, first.out + first.err
    same = apply(api, tmp_path, "--diff", project=project)
    assert same.code == 0, same.out + same.err
    tree = tmp_path / "tree"
    plain = apply(api, tmp_path, "--diff", tree=tree)  # kept: no change either
    assert plain.code == 0, plain.out + plain.err


# --- point 4: a TrainJob whose runtime only the dry run creates ------------------------------

RUNTIME = "/apis/trainer.kubeflow.org/v1alpha1/clustertrainingruntimes/torch-gang"


def _trainer_webhook(api: FakeApiServer) -> object:
    """As the Trainer's TrainJob webhook (v2.3.0): a TrainJob whose runtime does not exist
    is denied (controller-runtime: 403), with the Trainer's words."""

    def script(request: Request, answer: Reply) -> Reply:
        if request.method != "PATCH" or not request.path.startswith(TRAINJOBS + "/"):
            return answer
        if RUNTIME in api.objects:
            return answer
        message = (
            'admission webhook "validate.trainjob.trainer.kubeflow.org" denied the request: '
            'spec.runtimeRef: Invalid value: {"name":"torch-gang"}: '
            'clustertrainingruntimes.trainer.kubeflow.org "torch-gang" not found: specified '
            "clusterTrainingRuntime must be created before the TrainJob is created"
        )
        return Reply(403, status(403, message, "Forbidden"))

    return script


def test_dry_run_of_trainjobs_whose_runtime_is_new_is_not_a_failure(
    api: FakeApiServer, tmp_path: Path
) -> None:
    api.put({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "vision"}})
    api.script(_trainer_webhook(api))
    run = apply(api, tmp_path, "--emit", "trainjobs", "--dry-run=server")
    run.clean()
    assert run.code == 0, run.out + run.err
    assert run.status_of("ClusterTrainingRuntime torch-gang") == "created"
    assert run.status_of("TrainJob vision/resnet") == "unchecked"
    assert "its runtime ClusterTrainingRuntime torch-gang does not exist yet" in run.out
    assert "failed" not in run.out
    # the real apply is accepted; a dry run then checks the TrainJobs
    real = apply(api, tmp_path, "--emit", "trainjobs")
    assert real.code == 0, real.out + real.err
    again = apply(api, tmp_path, "--emit", "trainjobs", "--dry-run=server")
    assert again.code == 0 and "unchecked" not in again.out, again.out


def test_a_trainjob_whose_runtime_nobody_creates_still_fails_the_dry_run(
    api: FakeApiServer, tmp_path: Path
) -> None:
    api.put({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "vision"}})
    api.script(_trainer_webhook(api))
    refuse_runtime = on_path(RUNTIME, Reply(422, status(422, "runtime invalid", "Invalid")))
    api.script(refuse_runtime)
    run = apply(api, tmp_path, "--emit", "trainjobs", "--dry-run=server")
    run.clean()
    assert run.code == 2
    assert run.status_of("TrainJob vision/resnet") == "failed"


def on_path(path: str, reply: Reply) -> object:
    def script(request: Request, answer: Reply) -> Reply:
        return reply if request.method == "PATCH" and request.path == path else answer

    return script
