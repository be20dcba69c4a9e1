"""``trainc apply`` against a misbehaving API server (issue 25, finding 5): an overall
deadline that holds against slow bodies, every answer checked before it counts,
``Retry-After``, the applied / not-applied report on every stop, and no traceback for
any answer. Each test runs the CLI in-process against a fake API server on 127.0.0.1
(tests/fake_apiserver.py) under a time limit."""

from __future__ import annotations

import email.utils
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fake_apiserver import FakeApiServer, Reply, Request, status
from tests.fuzz.engine import Verdict, run_main

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "example"
JOBSETS = "/apis/jobset.x-k8s.io/v1alpha2/namespaces/vision/jobsets"
PODGROUPS = "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/vision/podgroups"
PARENT = "/api/v1/namespaces/default/secrets/trainc"

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
    return server


class Run:
    def __init__(self, verdict: Verdict, out: str, err: str, seconds: float) -> None:
        # seconds: from the first request to the end (rendering before it is not counted)
        self.verdict, self.out, self.err, self.seconds = verdict, out, err, seconds

    @property
    def code(self) -> int | None:
        return self.verdict.code

    def status_of(self, title: str) -> str:
        for line in self.out.splitlines():
            if line.startswith(title + " "):
                return line[len(title) + 1 :].split()[0].rstrip(":")
        raise AssertionError(f"no line for {title} in:\n{self.out}\n{self.err}")

    def clean(self) -> None:
        """No traceback, no hang."""
        assert not self.verdict.hang, f"hung after {self.seconds:.1f}s:\n{self.out}\n{self.err}"
        assert self.verdict.traceback is None, self.verdict.traceback


def apply(api: FakeApiServer, tmp_path: Path, *args: str, limit: float = 20.0) -> Run:
    argv = ["apply", str(EXAMPLE), "--kubeconfig", str(api.kubeconfig(tmp_path)), *args]
    started = time.monotonic()
    verdict, out, err = run_main(argv, limit)
    first = api.requests[0].time if api.requests else started
    return Run(verdict, out, err, time.monotonic() - first)


def on(method: str, path: str, reply: Any, times: int | None = None) -> Any:
    """A script: ``reply`` (a Reply, or a function of the request and the answer) for
    requests with this method and path (the first ``times`` of them)."""
    seen = [0]

    def script(request: Request, answer: Reply) -> Reply:
        if request.method != method or request.path != path:
            return answer
        seen[0] += 1
        if times is not None and seen[0] > times:
            return answer
        return reply(request, answer) if callable(reply) else reply

    return script


# --- an overall deadline ----------------------------------------------------------------


@pytest.mark.parametrize(
    "reply",
    [
        Reply(201, {"kind": "PodGroup"} | {"pad": "x" * 4000}, mode="trickle", delay=0.05),
        Reply(201, {"kind": "PodGroup"}, mode="stall", stall=30.0),
        Reply(201, mode="chunked-forever", delay=0.05),
    ],
    ids=["byte-by-byte", "stalled-after-headers", "endless-chunked"],
)
def test_timeout_holds_against_a_slow_body(
    api: FakeApiServer, tmp_path: Path, reply: Reply
) -> None:
    api.script(on("PATCH", f"{PODGROUPS}/smoke", reply))
    run = apply(api, tmp_path, "--timeout", "2")
    run.clean()
    assert run.seconds < 2 + 1, f"{run.seconds:.1f}s for --timeout 2"
    assert run.code == 2
    assert "before the timeout" in run.err
    assert "applied (1): PodGroup vision/resnet" in run.err
    assert "not applied (3): PodGroup vision/smoke, JobSet vision/resnet, JobSet vision/smoke" in (
        run.err
    )


@pytest.mark.parametrize("mode", ["trickle", "chunked-forever"])
def test_timeout_holds_over_tls(tmp_path: Path, mode: str) -> None:
    """The watchdog shuts a TLS socket too (the plain socket's shutdown, under TLS)."""
    tls = FakeApiServer(idle=30.0, tls=True)
    try:
        reply = Reply(201, {"pad": "x" * 4000}, mode=mode, delay=0.05)
        tls.script(on("PATCH", f"{PODGROUPS}/smoke", reply))
        run = apply(tls, tmp_path, "--timeout", "2")
        run.clean()
        assert run.seconds < 2 + 1, f"{run.seconds:.1f}s for --timeout 2"
        assert run.code == 2
        assert "applied (1): PodGroup vision/resnet" in run.err  # over TLS: one applied
    finally:
        tls.stop()


def test_an_untrusted_certificate_is_a_clear_error(tmp_path: Path) -> None:
    tls = FakeApiServer(idle=30.0, tls=True)
    try:
        tls.ca = None  # the kubeconfig names no CA: the system's do not trust it
        run = apply(tls, tmp_path, "--timeout", "5")
        run.clean()
        assert run.code == 2
        assert "over TLS" in run.err and "certificate-authority" in run.err
        assert "before the timeout" not in run.err  # not retried: retrying cannot help
    finally:
        tls.stop()


def test_wait_is_bounded_by_its_timeout_against_a_slow_body(
    api: FakeApiServer, tmp_path: Path
) -> None:
    def slow(request: Request, answer: Reply) -> Reply:
        return Reply(200, answer.body, mode="trickle", delay=0.05)

    api.script(on("GET", f"{JOBSETS}/resnet", slow))
    run = apply(api, tmp_path, "--wait", "--timeout", "2")
    run.clean()
    assert run.seconds < 2 * 2 + 1, f"{run.seconds:.1f}s for --timeout 2 twice"
    assert run.code == 2
    assert "--wait: timed out after 2s" in run.err


def test_timeout_holds_against_slow_headers_on_a_list(api: FakeApiServer, tmp_path: Path) -> None:
    api.script(on("GET", JOBSETS, Reply(200, {"items": []}, mode="stall", stall=30.0)))
    run = apply(api, tmp_path, "--timeout", "2")
    run.clean()
    assert run.seconds < 2 + 1
    assert run.code == 2
    assert "applied (2): PodGroup vision/resnet, PodGroup vision/smoke" in run.err


# --- every answer checked ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (b"", "empty"),
        (b'{"kind": "PodGroup", "metadata": {"na', "not JSON"),
        (b"[1, 2]", "not a JSON object"),
        ({"kind": "Status", "status": "Success"}, "kind"),
        ({"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
          "metadata": {"name": "other", "namespace": "vision"}}, "name"),
        ({"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
          "metadata": {"name": "smoke", "namespace": "elsewhere"}}, "namespace"),
        ({"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
          "metadata": "smoke"}, "metadata"),
        ({"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
          "metadata": {"name": "smoke", "namespace": "vision", "resourceVersion": 7}},
         "resourceVersion"),
    ],
    ids=["empty", "truncated", "array", "wrong-kind", "wrong-name", "wrong-namespace",
         "metadata-string", "version-number"],
)  # fmt: skip
def test_a_2xx_that_is_not_the_object_is_a_failure(
    api: FakeApiServer, tmp_path: Path, body: Any, why: str
) -> None:
    api.script(on("PATCH", f"{PODGROUPS}/smoke", Reply(201, body)))
    run = apply(api, tmp_path, "--timeout", "5")
    run.clean()
    assert run.code == 2
    assert run.status_of("PodGroup vision/smoke") == "failed"
    line = next(x for x in run.out.splitlines() if x.startswith("PodGroup vision/smoke"))
    assert "201" in line and why in line, line
    assert run.status_of("JobSet vision/resnet") == "created"  # the rest goes on


@pytest.mark.parametrize(
    "body",
    [
        b"",
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "x", "namespace": "default"}},
    ],
    ids=["empty", "wrong-name"],
)
def test_a_2xx_to_a_secret_create_that_is_not_the_secret_is_a_failure(
    api: FakeApiServer, tmp_path: Path, body: Any
) -> None:
    from tests.conformance.cases import load_case

    case = load_case(REPO / "golden" / "mpi-deepspeed-defaults")
    assert case is not None
    tree = tmp_path / "mpi"
    tree.mkdir()
    for index, path in enumerate(case.inputs):
        (tree / f"{index}-{path.name}").write_bytes(path.read_bytes())
    api.script(on("POST", "/api/v1/namespaces/default/secrets", Reply(201, body)))
    argv = ["apply", str(tree), "--kubeconfig", str(api.kubeconfig(tmp_path)), "--timeout", "5"]
    verdict, out, err = run_main(argv, 30.0)
    run = Run(verdict, out, err, 0.0)
    run.clean()
    assert run.code == 2
    assert run.status_of("Secret default/ds-bare-mpi-ssh-auth") == "failed"
    assert "answered 201 but not with the Secret" in out
    assert "-----BEGIN" not in out + err  # no key material in any message


# --- Retry-After ------------------------------------------------------------------------


@pytest.mark.parametrize("form", ["seconds", "http-date"])
def test_retry_after_is_honoured(api: FakeApiServer, tmp_path: Path, form: str) -> None:
    def later(request: Request, answer: Reply) -> Reply:
        value = "2" if form == "seconds" else email.utils.formatdate(time.time() + 3, usegmt=True)
        return Reply(429, status(429, "slow down", "TooManyRequests"), {"Retry-After": value})

    api.script(on("PATCH", f"{PODGROUPS}/resnet", later, times=1))
    run = apply(api, tmp_path, "--timeout", "10")
    run.clean()
    assert run.code == 0, run.err
    patches = [r for r in api.requests if r.method == "PATCH" and r.path.endswith("/resnet")]
    assert len(patches) >= 2
    assert patches[1].time - patches[0].time >= 1.9  # the backoff alone would be 0.1 s


def test_retry_after_past_the_deadline_stops_at_once(api: FakeApiServer, tmp_path: Path) -> None:
    reply = Reply(503, status(503, "overloaded"), {"Retry-After": "3600"})
    api.script(on("PATCH", f"{PODGROUPS}/smoke", reply))
    run = apply(api, tmp_path, "--timeout", "5")
    run.clean()
    assert run.code == 2
    assert run.seconds < 3, run.seconds
    assert "Retry-After" in run.err
    assert "not applied (3)" in run.err


# --- the report on every stop -----------------------------------------------------------


@pytest.mark.parametrize("code", [401, 403])
def test_credentials_refused_part_way_report_what_was_applied(
    api: FakeApiServer, tmp_path: Path, code: int
) -> None:
    api.script(on("PATCH", f"{PODGROUPS}/smoke", Reply(code, status(code, "no"))))
    run = apply(api, tmp_path, "--timeout", "5")
    run.clean()
    assert run.code == 2
    assert "applied (1): PodGroup vision/resnet" in run.err
    assert "not applied (3): PodGroup vision/smoke, JobSet vision/resnet, JobSet vision/smoke" in (
        run.err
    )


def test_a_server_that_goes_away_part_way_reports_what_was_applied(
    api: FakeApiServer, tmp_path: Path
) -> None:
    seen = []

    def gone(request: Request, answer: Reply) -> Reply:
        seen.append(request)
        return Reply(mode="drop") if len(seen) > 2 else answer

    api.script(gone)
    run = apply(api, tmp_path, "--timeout", "2")
    run.clean()
    assert run.code == 2
    assert "applied (1): PodGroup vision/resnet" in run.err
    assert "not applied (3)" in run.err


# --- no traceback, whatever the answer --------------------------------------------------


def _live_podgroup(**metadata: Any) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": "resnet", "namespace": "vision", **metadata},
    }


@pytest.mark.parametrize(
    "items",
    [
        ["x", 1, None],
        [{"metadata": "resnet"}],
        [{"metadata": {"name": ["resnet"]}}],
        [_live_podgroup(managedFields="x")],
        [_live_podgroup(managedFields=[1, "a"])],
        [_live_podgroup(managedFields=[{"manager": "trainc", "operation": "Apply",
                                        "fieldsV1": "x"}])],
        [_live_podgroup(managedFields=[{"manager": "trainc", "operation": "Apply",
                                        "fieldsV1": {"f:spec": []}}])],
        "items",
        {"a": 1},
    ],
    ids=["not-objects", "metadata-string", "name-list", "managedFields-string",
         "managedFields-items", "fieldsV1-string", "fieldsV1-entry", "items-string",
         "items-object"],
)  # fmt: skip
def test_a_malformed_list_is_an_error_not_a_traceback(
    api: FakeApiServer, tmp_path: Path, items: Any
) -> None:
    body = {"kind": "PodGroupList", "items": items}
    api.script(on("GET", PODGROUPS, Reply(200, body)))
    run = apply(api, tmp_path, "--timeout", "5")
    run.clean()
    assert run.code == 2
    assert "not applied (4)" in run.err
    assert f"GET {PODGROUPS}" in run.err


def test_diff_with_a_malformed_list_is_an_error(api: FakeApiServer, tmp_path: Path) -> None:
    body = {"kind": "JobSetList", "items": [{"metadata": {"name": "resnet", "labels": ["x"]}}]}
    api.script(on("GET", JOBSETS, Reply(200, body)))
    run = apply(api, tmp_path, "--diff", "--timeout", "5")
    run.clean()
    assert run.code == 2
    assert f"GET {JOBSETS}" in run.err and "items[0].metadata.labels is an array" in run.err


@pytest.mark.parametrize(
    "status_value",
    [
        "x",
        {"replicatedJobsStatus": "x"},
        {"replicatedJobsStatus": [1, None]},
        {"replicatedJobsStatus": [{"name": "node", "ready": "x", "active": None}]},
        {"replicatedJobsStatus": [{"name": "node", "ready": 1e308}]},
        {"conditions": "x"},
        {"conditions": [1, {"type": 2}]},
    ],
)
def test_a_malformed_jobset_status_under_wait_is_an_error(
    api: FakeApiServer, tmp_path: Path, status_value: Any
) -> None:
    def with_status(request: Request, answer: Reply) -> Reply:
        if isinstance(answer.body, dict) and answer.status == 200:
            answer.body["status"] = status_value
        return answer

    for name in ("resnet", "smoke"):
        api.script(on("GET", f"{JOBSETS}/{name}", with_status))
    run = apply(api, tmp_path, "--wait", "--timeout", "3")
    run.clean()
    assert run.code == 2
    assert "status" in run.err


@pytest.mark.parametrize(
    "metadata",
    ["x", {"labels": "x"}, {"labels": {"applyset.kubernetes.io/id": 1}}, {"annotations": ["a"]},
     {"annotations": {"applyset.kubernetes.io/tooling": 7}},
     {"annotations": {"applyset.kubernetes.io/contains-group-kinds": ["JobSet"]}}],
)  # fmt: skip
def test_a_malformed_applyset_parent_is_an_error(
    api: FakeApiServer, tmp_path: Path, metadata: Any
) -> None:
    parent = {"apiVersion": "v1", "kind": "Secret", "metadata": metadata}
    api.script(on("GET", PARENT, Reply(200, parent)))
    run = apply(api, tmp_path, "--prune", "--timeout", "5")
    run.clean()
    assert run.code == 2
    assert "ApplySet" in run.err or PARENT in run.err
    assert not [r for r in api.requests if r.method == "PATCH"]  # nothing applied


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/apis/example.com", {"preferredVersion": "v1"}),
        ("/apis/example.com", {"preferredVersion": {"groupVersion": 5}}),
        ("/apis/example.com", "x"),
        ("/apis/example.com/v1", {"resources": "x"}),
        ("/apis/example.com/v1", {"resources": [1, {"kind": "Widget", "name": 3}]}),
    ],
)
def test_bad_discovery_under_prune_is_not_a_traceback(
    api: FakeApiServer, tmp_path: Path, path: str, body: Any
) -> None:
    api.put(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {
                "name": "trainc",
                "namespace": "default",
                "labels": {
                    "applyset.kubernetes.io/id": (
                        "applyset-2wAzbjRaOXl8sXKdC6gqF8gleI_jynlDJLy2eV2DZPc-v1"
                    )
                },
                "annotations": {
                    "applyset.kubernetes.io/tooling": "trainc/v0.1.0",
                    "applyset.kubernetes.io/contains-group-kinds": "Widget.example.com",
                },
            },
        }
    )
    good = {
        "/apis/example.com": {"preferredVersion": {"groupVersion": "example.com/v1"}},
        "/apis/example.com/v1": {
            "resources": [{"name": "widgets", "kind": "Widget", "namespaced": True}]
        },
    }
    for where, answer in good.items():
        api.script(on("GET", where, Reply(200, body if where == path else answer)))
    run = apply(api, tmp_path, "--prune", "--timeout", "5")
    run.clean()
    assert run.code == 2, run.out + run.err
    assert path in run.err
