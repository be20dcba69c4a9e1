"""A fake Kubernetes API server on 127.0.0.1 for ``trainc apply`` tests and the fuzzer.

It keeps objects in memory and answers what ``trainc apply`` asks, as kube-apiserver
does: LIST (``items``), GET, server-side apply (PATCH: 201 created, 200 with a new
``resourceVersion`` when changed, the same when not; ``managedFields`` for the field
manager), POST (409 when it exists), DELETE, group discovery. ``dryRun`` writes nothing.

A test changes any answer with :meth:`FakeApiServer.script`: a function that sees each
request (and its number) with the answer the fake would give and returns the answer to
send, possibly sent badly: a body trickled a byte at a time, headers then a stall, an
endless chunked body, a connection dropped before or after the headers, a body shorter
than its ``Content-Length``.

It listens on 127.0.0.1 only and stops by itself: after ``idle`` seconds without a
request, and every slow answer is bounded in time and stops when the client goes away.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import itertools
import json
import re
import socket
import ssl
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

Json = dict[str, Any]

# plural -> (apiVersion, kind, namespaced), what the fake serves
KINDS: dict[str, tuple[str, str, bool]] = {
    "namespaces": ("v1", "Namespace", False),
    "secrets": ("v1", "Secret", True),
    "configmaps": ("v1", "ConfigMap", True),
    "jobsets": ("jobset.x-k8s.io/v1alpha2", "JobSet", True),
    "podgroups": ("scheduling.x-k8s.io/v1alpha1", "PodGroup", True),
    "trainjobs": ("trainer.kubeflow.org/v1alpha1", "TrainJob", True),
    "trainingruntimes": ("trainer.kubeflow.org/v1alpha1", "TrainingRuntime", True),
    "clustertrainingruntimes": ("trainer.kubeflow.org/v1alpha1", "ClusterTrainingRuntime", False),
}
_PATH = re.compile(
    r"^/(?:api/(?P<core>v1)|apis/(?P<group>[^/]+)/(?P<version>[^/]+))"
    r"(?:/namespaces/(?P<ns>[^/]+))?/(?P<plural>[^/]+)(?:/(?P<name>[^/]+))?$"
)
MODES = ("normal", "trickle", "stall", "chunked-forever", "drop", "drop-after-headers", "short")


@dataclass
class Request:
    index: int
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: Any  # the decoded JSON body, or None
    time: float = field(default_factory=time.monotonic)


@dataclass
class Reply:
    status: int = 200
    body: Any = None  # JSON (dumped) or bytes (sent as is)
    headers: dict[str, str] = field(default_factory=dict)
    mode: str = "normal"  # one of MODES
    delay: float = 0.05  # seconds between trickled bytes or chunks
    stall: float = 5.0  # seconds a stalled answer waits before closing

    def data(self) -> bytes:
        if isinstance(self.body, bytes):
            return self.body
        if self.body is None:
            return b""
        return json.dumps(self.body).encode()


Script = Callable[[Request, Reply], Reply]


def status(code: int, message: str, reason: str = "") -> Json:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }


def fields_of(value: Any) -> Json:
    """A ``fieldsV1`` set with every field of ``value`` (list items as leaves)."""
    if not isinstance(value, dict):
        return {}
    return {f"f:{key}": fields_of(item) for key, item in value.items()}


class FakeApiServer:
    """See the module docstring. ``url`` is ``http://127.0.0.1:<port>``."""

    def __init__(self, idle: float = 60.0, tls: bool = False) -> None:
        self.objects: dict[str, Json] = {}  # object path -> object
        self.requests: list[Request] = []
        self.scripts: list[Script] = []
        self._versions = itertools.count(100)
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._last = time.monotonic()
        self._idle = idle
        handler = type("Handler", (_Handler,), {"fake": self})
        self._server = _Server(("127.0.0.1", 0), handler)
        self.ca: bytes | None = None
        if tls:
            self.ca, context = _tls_context()
            # the handshake in the request's thread, not in the accepting one
            self._server.socket = context.wrap_socket(
                self._server.socket, server_side=True, do_handshake_on_connect=False
            )
        scheme = "https" if tls else "http"
        self.url = f"{scheme}://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()
        threading.Thread(target=self._idle_stop, daemon=True).start()

    # --- life -------------------------------------------------------------------------

    def _serve(self) -> None:
        self._server.serve_forever(poll_interval=0.1)

    def _idle_stop(self) -> None:
        while not self._stopped.wait(1.0):
            if time.monotonic() - self._last > self._idle:
                self.stop()

    def stop(self) -> None:
        if self._stopped.is_set():
            return
        self._stopped.set()
        self._server.shutdown()
        self._server.server_close()

    def reset(self) -> None:
        """No objects, no requests, no scripts: a fresh cluster."""
        with self._lock:
            self.objects.clear()
            self.requests.clear()
            self.scripts.clear()

    def script(self, function: Script) -> None:
        """Every answer from now on goes through ``function`` (after earlier scripts)."""
        self.scripts.append(function)

    def kubeconfig(self, directory: Path) -> Path:
        path = directory / "kubeconfig"
        cluster = {"server": self.url}
        if self.ca is not None:
            cluster["certificate-authority-data"] = base64.b64encode(self.ca).decode()
        path.write_text(
            json.dumps(
                {
                    "apiVersion": "v1",
                    "kind": "Config",
                    "clusters": [{"name": "fake", "cluster": cluster}],
                    "users": [{"name": "fake", "user": {"token": "fake-token"}}],
                    "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "fake"}}],
                    "current-context": "fake",
                }
            ),
            encoding="utf-8",
        )
        return path

    def put(self, obj: Json) -> None:
        """Store ``obj`` as a live object (its path from apiVersion, kind, metadata)."""
        plural = next(p for p, (_, k, _) in KINDS.items() if k == obj["kind"])
        api_version, _, namespaced = KINDS[plural]
        metadata = obj["metadata"]
        base = f"/apis/{api_version}" if "/" in api_version else f"/api/{api_version}"
        if namespaced:
            base += f"/namespaces/{metadata['namespace']}"
        metadata.setdefault("uid", f"uid-{metadata['name']}")
        metadata.setdefault("resourceVersion", str(next(self._versions)))
        self.objects[f"{base}/{plural}/{metadata['name']}"] = obj

    # --- answers ----------------------------------------------------------------------

    def answer(self, request: Request) -> Reply:
        self._last = time.monotonic()
        with self._lock:
            request.index = len(self.requests)  # since the last reset
            self.requests.append(request)
            reply = self._default(request)
            scripts = list(self.scripts)
        for function in scripts:
            reply = function(request, reply)
        return reply

    def _default(self, request: Request) -> Reply:
        path = request.path
        if path == "/version":
            return Reply(body={"major": "1", "minor": "34", "gitVersion": "v1.34.4"})
        match = _PATH.match(path)
        if match is None:
            group = re.match(r"^/apis/([^/]+)(?:/([^/]+))?$", path)
            if group is not None:
                return self._discovery(group.group(1), group.group(2))
            return Reply(404, status(404, "the server could not find the requested resource"))
        plural, name = match["plural"], match["name"]
        api_version = match["core"] or f"{match['group']}/{match['version']}"
        known = KINDS.get(plural)
        if known is None or known[0] != api_version:
            return Reply(404, status(404, "the server could not find the requested resource"))
        kind = known[1]
        dry = request.query.get("dryRun") == "All"
        if name is None:
            if request.method == "POST":
                body = request.body if isinstance(request.body, dict) else {}
                name = str((body.get("metadata") or {}).get("name"))
                key = f"{path}/{name}"
                if key in self.objects:
                    return Reply(
                        409, status(409, f'{plural} "{name}" already exists', "AlreadyExists")
                    )
                return Reply(201, self._store(key, body, request, dry, kind, api_version))
            items = [
                copy.deepcopy(obj)
                for key, obj in sorted(self.objects.items())
                if key.startswith(path + "/") and "/" not in key[len(path) + 1 :]
            ]
            selector = request.query.get("labelSelector", "")
            if selector:
                label, _, value = selector.partition("=")
                items = [
                    i for i in items if (i["metadata"].get("labels") or {}).get(label) == value
                ]
            return Reply(
                body={
                    "apiVersion": api_version,
                    "kind": f"{kind}List",
                    "metadata": {"resourceVersion": str(next(self._versions))},
                    "items": items,
                }
            )
        existing = self.objects.get(path)
        if request.method == "GET":
            if existing is None:
                return Reply(404, status(404, f'{plural} "{name}" not found', "NotFound"))
            return Reply(body=copy.deepcopy(existing))
        if request.method == "DELETE":
            if existing is None:
                return Reply(404, status(404, f'{plural} "{name}" not found', "NotFound"))
            if not dry:
                del self.objects[path]
            return Reply(body={"kind": "Status", "apiVersion": "v1", "status": "Success"})
        if request.method == "PATCH":
            body = request.body if isinstance(request.body, dict) else {}
            if existing is not None:
                merged = copy.deepcopy(body)
                merged["metadata"] = {**existing["metadata"], **(body.get("metadata") or {})}
                if "status" in existing:
                    merged["status"] = existing["status"]
                same = {k: v for k, v in existing.items() if k != "metadata"} == {
                    k: v for k, v in merged.items() if k != "metadata"
                } and existing["metadata"].get("labels") == merged["metadata"].get("labels")
                if same:
                    return Reply(body=copy.deepcopy(existing))
                return Reply(200, self._store(path, merged, request, dry, kind, api_version))
            return Reply(201, self._store(path, body, request, dry, kind, api_version))
        return Reply(405, status(405, "method not allowed"))

    def _store(
        self, key: str, body: Json, request: Request, dry: bool, kind: str, api_version: str
    ) -> Json:
        obj = copy.deepcopy(body)
        obj.setdefault("apiVersion", api_version)
        obj.setdefault("kind", kind)
        metadata = obj.setdefault("metadata", {})
        metadata.setdefault("uid", f"uid-{metadata.get('name')}")
        metadata["resourceVersion"] = str(next(self._versions))
        manager = request.query.get("fieldManager", "unknown")
        sent = request.body if isinstance(request.body, dict) else {}
        sent = {k: v for k, v in sent.items() if k not in ("apiVersion", "kind")}
        operation = "Apply" if request.method == "PATCH" else "Update"
        metadata["managedFields"] = [
            {
                "manager": manager,
                "operation": operation,
                "apiVersion": api_version,
                "fieldsType": "FieldsV1",
                "fieldsV1": fields_of(sent),
            }
        ]
        if not dry:
            self.objects[key] = obj
        return copy.deepcopy(obj)

    def _discovery(self, group: str, version: str | None) -> Reply:
        served = {
            (api_version.rpartition("/")[0], api_version.rpartition("/")[2]): []
            for api_version, _, _ in KINDS.values()
        }
        for plural, (api_version, kind, namespaced) in KINDS.items():
            group_version = (api_version.rpartition("/")[0], api_version.rpartition("/")[2])
            served[group_version].append(
                {"name": plural, "kind": kind, "namespaced": namespaced, "verbs": ["get"]}
            )
        versions = [v for (g, v) in served if g == group]
        if not versions or (version is not None and version not in versions):
            return Reply(404, status(404, "the server could not find the requested resource"))
        if version is None:
            preferred = {"groupVersion": f"{group}/{versions[0]}", "version": versions[0]}
            return Reply(
                body={
                    "kind": "APIGroup",
                    "apiVersion": "v1",
                    "name": group,
                    "versions": [preferred],
                    "preferredVersion": preferred,
                }
            )
        return Reply(
            body={
                "kind": "APIResourceList",
                "apiVersion": "v1",
                "groupVersion": f"{group}/{version}",
                "resources": served[(group, version)],
            }
        )


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that went away mid-request: expected here, and stderr is the test's


class _Handler(BaseHTTPRequestHandler):
    fake: FakeApiServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: the fuzzer captures stderr

    def _handle(self) -> None:
        url = urllib.parse.urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        request = Request(
            -1,  # numbered by the server
            self.command,
            url.path,
            dict(urllib.parse.parse_qsl(url.query)),
            dict(self.headers.items()),
            body,
        )
        reply = self.fake.answer(request)
        with contextlib.suppress(OSError):  # the client went away: what a timeout does
            self._send(reply)
        self.close_connection = reply.mode != "normal"

    do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _handle

    def _send(self, reply: Reply) -> None:
        data = reply.data()
        stopped = self.fake._stopped
        if reply.mode == "drop":
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        self.send_response_only(reply.status)
        headers = {"Content-Type": "application/json", **reply.headers}
        if reply.mode == "chunked-forever":
            headers["Transfer-Encoding"] = "chunked"
        else:
            headers.setdefault("Content-Length", str(len(data)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.flush()
        if reply.mode == "normal":
            self.wfile.write(data)
        elif reply.mode == "trickle":
            for index in range(len(data)):
                self.wfile.write(data[index : index + 1])
                self.wfile.flush()
                if stopped.wait(reply.delay):
                    return
        elif reply.mode == "chunked-forever":
            for _ in range(int(60 / max(reply.delay, 0.001))):  # bounded: a minute at most
                self.wfile.write(b"1\r\n \r\n")
                self.wfile.flush()
                if stopped.wait(reply.delay):
                    return
        elif reply.mode in ("stall", "drop-after-headers"):
            if reply.mode == "stall":
                stopped.wait(reply.stall)
            self.connection.shutdown(socket.SHUT_RDWR)
        elif reply.mode == "short":
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        self.wfile.flush()


def _tls_context() -> tuple[bytes, ssl.SSLContext]:
    """A self-signed certificate for 127.0.0.1 (its PEM, the CA to trust) and a server
    context with it."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    pem = cert.public_bytes(serialization.Encoding.PEM)
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "cert.pem").write_bytes(pem)
        (Path(folder) / "key.pem").write_bytes(key_pem)
        context.load_cert_chain(Path(folder) / "cert.pem", Path(folder) / "key.pem")
    return pem, context


@contextmanager
def fake_apiserver(idle: float = 60.0) -> Iterator[FakeApiServer]:
    server = FakeApiServer(idle)
    try:
        yield server
    finally:
        server.stop()
