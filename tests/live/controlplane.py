"""A real Kubernetes control plane on 127.0.0.1 for trainc's live tests.

``scripts/build-control-plane.sh`` builds etcd 3.6.16, kube-apiserver v1.34.4, the
Kubeflow Trainer v2.3.0 controller manager, the JobSet v0.12.0 controller manager and
kube-controller-manager v1.34.4 from the Go module proxy into the cache
(``$TRAINC_CACHE/controlplane``); this module starts them:

- etcd with client TLS (certificates from a CA made per run, with ``openssl``), on a
  free port, data in a temporary folder;
- kube-apiserver on a free port: static token file (an admin token in
  ``system:masters`` and an RBAC-limited token with no grants), RBAC authorization,
  the default admission plugins, a service-account key pair; a kubeconfig file for the
  admin token; ``/readyz`` waited for;
- the CRDs: Trainer's (``manifests/base/crds`` of the Trainer module), JobSet v0.12.0
  and the coscheduling PodGroup (``outputCrds`` of the upstream manifest written by
  ``scripts/fetch-upstream.sh``), and the Volcano PodGroup, which volcano.sh/apis
  ships only as Go types: the build script generates it with controller-gen v0.18.0
  (Trainer's pinned version) from the types' markers;
- optionally the Trainer controller manager, with certificate management and leader
  election off, its webhook server on 127.0.0.1 serving a certificate of the same CA,
  and Trainer's Validating/MutatingWebhookConfigurations (read from the module's
  ``manifests/base/webhook``, with its kustomize patches) registered by URL.

- optionally (``pods``) the pod depth: kube-controller-manager running only the Job and
  ServiceAccount controllers (KCM_CONTROLLERS), and the JobSet controller manager with
  its own certificate rotation off, its webhook server on 127.0.0.1 with a certificate
  of the run's CA, and JobSet's webhook configurations registered by URL. Pods are
  created and stay Pending (no scheduler, no kubelet);
- an audit log of every JobSet write with its body as sent (AUDIT_POLICY).

Nothing garbage-collects owned objects and no namespace is ever finalized.

Every process is stopped by its PID (SIGTERM, then SIGKILL after a grace period) and
the temporary folder is removed.
"""

from __future__ import annotations

import base64
import contextlib
import http.client
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import time
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonpatch
import yaml

REPO = Path(__file__).resolve().parents[2]
BUILD_SCRIPT = REPO / "scripts" / "build-control-plane.sh"
TRAINER_VERSION = "v2.3.0"

POD_CONTROLLERS = ("kube-controller-manager", "jobset-controller-manager")
# The controllers kube-controller-manager runs: the Job controller makes the Pods; the
# ServiceAccount controller makes each namespace's ``default`` ServiceAccount, without
# which the ServiceAccount admission plugin (on, as in every cluster) refuses them.
KCM_CONTROLLERS = ("job-controller", "serviceaccount-controller")

ADMIN_USER = "trainc-admin"
LIMITED_USER = "trainc-limited"

Json = dict[str, Any]


class ControlPlaneUnavailable(RuntimeError):
    """Go is missing, or the control plane does not build or start; tests skip with this."""


class ApiError(RuntimeError):
    """A non-2xx answer of the API server; ``status`` is its Status object (or text)."""

    def __init__(self, code: int, status: Json | str, what: str) -> None:
        self.code = code
        self.status = status
        message = status.get("message", "") if isinstance(status, dict) else status
        super().__init__(f"{what}: HTTP {code}: {message}")


def cache_root() -> Path:
    """As ``compiler/upstream/artifacts.py`` and the scripts compute it."""
    explicit = os.environ.get("TRAINC_CACHE")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "trainc"


@dataclass(frozen=True)
class Artifacts:
    """Where the built binaries and the CRD files are."""

    etcd: Path
    kube_apiserver: Path
    trainer_controller_manager: Path
    trainer_dir: Path
    # The pod-depth controllers; None in a cache built before they were added.
    kube_controller_manager: Path | None
    jobset_controller_manager: Path | None
    jobset_dir: Path | None
    crd_files: tuple[Path, ...]
    versions: dict[str, str]
    cold_build_seconds: dict[str, int]


def build(quiet: bool = True) -> Artifacts:
    """Run the build script (instant when cached) and read what it and setup recorded."""
    if shutil.which("go") is None:
        raise ControlPlaneUnavailable(
            "Go is not installed: the live control plane (etcd, kube-apiserver, Trainer) "
            "is built from the Go module proxy"
        )
    if shutil.which("openssl") is None:
        raise ControlPlaneUnavailable("openssl is not installed: it makes the certificates")
    result = subprocess.run(
        ["bash", str(BUILD_SCRIPT)], capture_output=quiet, text=True, check=False
    )
    if result.returncode != 0:
        raise ControlPlaneUnavailable(
            f"scripts/build-control-plane.sh failed:\n{result.stderr or ''}"
        )
    return read_artifacts()


def read_artifacts() -> Artifacts:
    cache = cache_root()
    cp_path = cache / "controlplane" / "manifest.json"
    up_path = cache / "upstream" / TRAINER_VERSION / "manifest.json"
    for path, hint in ((cp_path, "make control-plane"), (up_path, "make upstream")):
        if not path.is_file():
            raise ControlPlaneUnavailable(f"{path} is missing: run `{hint}`")
    cp = json.loads(cp_path.read_text())
    up = json.loads(up_path.read_text())
    trainer_dir = Path(up["trainerDir"])
    crds = sorted((trainer_dir / "manifests" / "base" / "crds").glob("trainer.kubeflow.org_*.yaml"))
    crds += [Path(p) for _, p in sorted(up["outputCrds"].items())]
    crds += [Path(p) for _, p in sorted(cp["crds"].items())]
    binaries = cp["binaries"]
    optional = {k: Path(binaries[k]) if k in binaries else None for k in POD_CONTROLLERS}
    jobset_dir = (cp.get("moduleDirs") or {}).get("sigs.k8s.io/jobset")
    return Artifacts(
        etcd=Path(binaries["etcd"]),
        kube_apiserver=Path(binaries["kube-apiserver"]),
        trainer_controller_manager=Path(binaries["trainer-controller-manager"]),
        trainer_dir=trainer_dir,
        kube_controller_manager=optional["kube-controller-manager"],
        jobset_controller_manager=optional["jobset-controller-manager"],
        jobset_dir=Path(jobset_dir) if jobset_dir else None,
        crd_files=tuple(crds),
        versions=dict(cp["versions"]),
        cold_build_seconds=dict(cp["coldBuildSeconds"]),
    )


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


# --- certificates -------------------------------------------------------------------


def _openssl(*args: str, cwd: Path) -> None:
    result = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True)
    if result.returncode != 0:
        raise ControlPlaneUnavailable(f"openssl {args[0]} failed: {result.stderr.strip()}")


@dataclass(frozen=True)
class Pki:
    """A CA made for one run and the certificates signed by it."""

    directory: Path

    @property
    def ca_cert(self) -> Path:
        return self.directory / "ca.crt"

    @property
    def ca_key(self) -> Path:
        return self.directory / "ca.key"

    @classmethod
    def create(cls, directory: Path) -> Pki:
        directory.mkdir(parents=True, exist_ok=True)
        _openssl(
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
            "-nodes", "-keyout", "ca.key", "-out", "ca.crt", "-days", "2",
            "-subj", "/CN=trainc-test-ca",
            "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign",
            cwd=directory,
        )  # fmt: skip
        return cls(directory)

    def issue(self, name: str, common_name: str, server: bool, client: bool) -> tuple[Path, Path]:
        """A key and certificate ``<name>.key``/``<name>.crt``; servers get 127.0.0.1/localhost."""
        usages = ",".join(u for u, on in (("serverAuth", server), ("clientAuth", client)) if on)
        ext = [
            "basicConstraints=critical,CA:FALSE",
            "keyUsage=critical,digitalSignature,keyEncipherment",
            f"extendedKeyUsage={usages}",
        ]
        if server:
            ext.append("subjectAltName=IP:127.0.0.1,DNS:localhost")
        (self.directory / f"{name}.ext").write_text("\n".join(ext) + "\n")
        _openssl(
            "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
            "-nodes", "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={common_name}",
            cwd=self.directory,
        )  # fmt: skip
        _openssl(
            "x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
            "-CAcreateserial", "-days", "2", "-out", f"{name}.crt", "-extfile", f"{name}.ext",
            cwd=self.directory,
        )  # fmt: skip
        return self.directory / f"{name}.key", self.directory / f"{name}.crt"


# --- processes ----------------------------------------------------------------------


@dataclass
class Process:
    name: str
    popen: subprocess.Popen[bytes]
    log: Path

    def tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def alive(self) -> bool:
        return self.popen.poll() is None

    def stop(self, grace: float = 10.0) -> None:
        """SIGTERM to this PID, SIGKILL after ``grace`` seconds."""
        if self.popen.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.popen.pid, signal.SIGTERM)
        try:
            self.popen.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.popen.pid, signal.SIGKILL)
            self.popen.wait(timeout=grace)


def _spawn(name: str, argv: list[str], workdir: Path, env: dict[str, str] | None = None) -> Process:
    log = workdir / f"{name}.log"
    with log.open("wb") as out:
        popen = subprocess.Popen(
            argv,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            cwd=workdir,
        )
    return Process(name, popen, log)


def _wait(what: str, ready: Callable[[], bool], process: Process, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        if not process.alive():
            raise ControlPlaneUnavailable(
                f"{process.name} exited ({process.popen.returncode}) before {what}:\n{process.tail()}"
            )
        try:
            if ready():
                return
        except Exception as error:
            last = error
        time.sleep(0.2)
    raise ControlPlaneUnavailable(
        f"timed out after {timeout:.0f}s waiting for {what} ({last}):\n{process.tail()}"
    )


# --- a small API client -------------------------------------------------------------


class Client:
    """JSON over HTTPS to the API server with a bearer token; one kept-alive connection."""

    def __init__(self, port: int, token: str, ca_file: Path) -> None:
        self.port = port
        self.token = token
        self.context = ssl.create_default_context(cafile=str(ca_file))
        self._connection: http.client.HTTPSConnection | None = None

    def _connect(self) -> http.client.HTTPSConnection:
        if self._connection is None:
            self._connection = http.client.HTTPSConnection(
                "127.0.0.1", self.port, context=self.context, timeout=30
            )
        return self._connection

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def raw(
        self,
        method: str,
        path: str,
        body: Any = None,
        params: dict[str, str] | None = None,
        content_type: str = "application/json",
        warnings: list[str] | None = None,
    ) -> tuple[int, Any]:
        """(status code, parsed JSON or text); never raises for an HTTP status. The
        answer's ``Warning`` headers are appended to ``warnings``, their texts unquoted
        (``299 - "text"`` -> ``text``)."""
        if params:
            path = f"{path}?{urllib.parse.urlencode(params)}"
        data = None if body is None else json.dumps(body).encode()
        headers = {"Authorization": f"Bearer {self.token}", "Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = content_type
        for attempt in (1, 2):
            connection = self._connect()
            try:
                connection.request(method, path, body=data, headers=headers)
                response = connection.getresponse()
                payload = response.read()
                break
            except (http.client.HTTPException, OSError):
                self.close()
                if attempt == 2:
                    raise
        if warnings is not None:
            for header in response.headers.get_all("Warning") or []:
                _, _, quoted = header.partition(" - ")
                warnings.append(json.loads(quoted) if quoted.startswith('"') else header)
        text = payload.decode(errors="replace")
        try:
            return response.status, json.loads(text) if text else None
        except json.JSONDecodeError:
            return response.status, text

    def request(self, method: str, path: str, body: Any = None, **params: str) -> Any:
        code, answer = self.raw(method, path, body, params or None)
        if code >= 300:
            raise ApiError(code, answer, f"{method} {path}")
        return answer

    def get(self, path: str, **params: str) -> Any:
        return self.request("GET", path, **params)


@dataclass(frozen=True)
class Resource:
    """Where the API serves a kind: ``/apis/<group>/<version>/[namespaces/<ns>/]<plural>``."""

    api_version: str
    plural: str
    namespaced: bool

    def path(self, namespace: str | None = None, name: str | None = None) -> str:
        base = (
            f"/api/{self.api_version}"
            if "/" not in self.api_version
            else f"/apis/{self.api_version}"
        )
        if self.namespaced and namespace is not None:
            base += f"/namespaces/{namespace}"
        base += f"/{self.plural}"
        return f"{base}/{name}" if name else base


# The kinds the tests create or read back.
RESOURCES: dict[str, Resource] = {
    "Namespace": Resource("v1", "namespaces", False),
    "ConfigMap": Resource("v1", "configmaps", True),
    "Secret": Resource("v1", "secrets", True),
    "Event": Resource("v1", "events", True),
    "Job": Resource("batch/v1", "jobs", True),
    "Service": Resource("v1", "services", True),
    "Pod": Resource("v1", "pods", True),
    "ServiceAccount": Resource("v1", "serviceaccounts", True),
    "PriorityClass": Resource("scheduling.k8s.io/v1", "priorityclasses", False),
    "ClusterTrainingRuntime": Resource(
        "trainer.kubeflow.org/v1alpha1", "clustertrainingruntimes", False
    ),
    "TrainingRuntime": Resource("trainer.kubeflow.org/v1alpha1", "trainingruntimes", True),
    "TrainJob": Resource("trainer.kubeflow.org/v1alpha1", "trainjobs", True),
    "JobSet": Resource("jobset.x-k8s.io/v1alpha2", "jobsets", True),
    "PodGroup/scheduling.x-k8s.io": Resource("scheduling.x-k8s.io/v1alpha1", "podgroups", True),
    "PodGroup/scheduling.volcano.sh": Resource("scheduling.volcano.sh/v1beta1", "podgroups", True),
}


def _runtime_exists(client: Client, trainjob: Json) -> bool:
    """Whether the API server holds the runtime the TrainJob names."""
    ref = (trainjob.get("spec") or {}).get("runtimeRef") or {}
    kind = ref.get("kind") or "ClusterTrainingRuntime"
    if kind not in RESOURCES or not ref.get("name"):
        return False
    namespace = (trainjob.get("metadata") or {}).get("namespace")
    resource = RESOURCES[kind]
    path = resource.path(namespace if resource.namespaced else None, str(ref["name"]))
    return client.raw("GET", path)[0] == 200


def create(
    client: Client, path: str, doc: Json, params: dict[str, str] | None = None, wait: float = 15.0
) -> tuple[int, Any]:
    """POST ``doc``; a TrainJob whose runtime the API server already holds is retried while
    the Trainer webhook still answers not-found: the webhook reads runtimes from the
    controller's informer cache, which lags a fresh create (more so on a loaded machine)."""
    deadline = time.monotonic() + wait
    while True:
        code, answer = client.raw("POST", path, doc, params)
        lagging = (
            code == 403
            and doc.get("kind") == "TrainJob"
            and "must be created before the TrainJob is created" in str(answer)
            and time.monotonic() < deadline
            and _runtime_exists(client, doc)
        )
        if not lagging:
            return code, answer
        time.sleep(0.2)


def resource_for(obj: Json) -> Resource:
    kind = str(obj.get("kind", ""))
    api_version = str(obj.get("apiVersion", ""))
    if kind == "PodGroup":
        kind = f"PodGroup/{api_version.split('/')[0]}"
    resource = RESOURCES.get(kind)
    if resource is None or resource.api_version != api_version:
        raise KeyError(f"no resource known for {api_version} {kind}")
    return resource


# --- the control plane --------------------------------------------------------------


@dataclass
class ControlPlane:
    """A running etcd + kube-apiserver (+ optionally the Trainer controller manager)."""

    artifacts: Artifacts
    workdir: Path
    pki: Pki
    port: int
    admin_token: str
    limited_token: str
    kubeconfig: Path
    processes: list[Process] = field(default_factory=list)
    started_seconds: float = 0.0
    controller_started_seconds: float | None = None
    pod_controllers_started_seconds: float | None = None

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    def client(self, token: str | None = None) -> Client:
        return Client(self.port, token or self.admin_token, self.pki.ca_cert)

    @property
    def controller(self) -> Process | None:
        return self.process("trainer-controller-manager")

    @property
    def jobset_log(self) -> Path | None:
        """The JobSet controller manager's log (None without the pod controllers)."""
        process = self.process("jobset-controller-manager")
        return process.log if process is not None else None

    def process(self, name: str) -> Process | None:
        return next((p for p in self.processes if p.name == name), None)

    @property
    def audit_log(self) -> Path:
        """JSON lines: every JobSet create/update/patch with the body as sent (AUDIT_POLICY)."""
        return self.workdir / "audit.log"

    def stop(self) -> None:
        """Stop every process by PID, newest first; remove the temporary folder."""
        for process in reversed(self.processes):
            process.stop()
        self.processes.clear()
        shutil.rmtree(self.workdir, ignore_errors=True)

    # Trainer controller manager -------------------------------------------------

    def start_trainer(self, timeout: float = 120.0) -> Process:
        """Start the controller manager and register its webhooks; wait until it serves."""
        if self.controller is not None:
            return self.controller
        began = time.monotonic()
        home = self.workdir / "trainer"
        # controller-runtime reads the webhook certificate from
        # $TMPDIR/k8s-webhook-server/serving-certs/tls.{crt,key} by default.
        process, webhook_port = self._start_manager(
            "trainer-controller-manager",
            self.artifacts.trainer_controller_manager,
            home,
            home / "tmp" / "k8s-webhook-server" / "serving-certs",
            home / "tmp",
            lambda webhook_port, health_port, certs: {
                "apiVersion": "config.trainer.kubeflow.org/v1alpha1",
                "kind": "Configuration",
                "health": {
                    "healthProbeBindAddress": f"127.0.0.1:{health_port}",
                    "readinessEndpointName": "readyz",
                    "livenessEndpointName": "healthz",
                },
                "metrics": {"bindAddress": "0"},
                "webhook": {"port": webhook_port, "host": "127.0.0.1"},
                "leaderElection": {"leaderElect": False},
                "certManagement": {"enable": False},
            },
            "the Trainer controller manager",
            timeout,
        )
        self._register(self.webhook_configurations(webhook_port))
        self.controller_started_seconds = time.monotonic() - began
        return process

    # The pod-depth controllers -------------------------------------------------

    def start_pod_controllers(self, timeout: float = 120.0) -> None:
        """The JobSet controller manager (webhooks registered) and kube-controller-manager.

        Idempotent. Start them before the Trainer controller, so that no JobSet is
        admitted without JobSet's webhooks."""
        missing = [
            name
            for name, path in (
                ("kube-controller-manager", self.artifacts.kube_controller_manager),
                ("jobset-controller-manager", self.artifacts.jobset_controller_manager),
                ("sigs.k8s.io/jobset module folder", self.artifacts.jobset_dir),
            )
            if path is None or not path.exists()
        ]
        if missing:
            raise ControlPlaneUnavailable(
                f"not built: {', '.join(missing)}; run `make control-plane`"
            )
        began = time.monotonic()
        if self.process("kube-controller-manager") is None:
            self._start_kube_controller_manager(timeout)
        if self.process("jobset-controller-manager") is None:
            self._start_jobset(timeout)
        self.pod_controllers_started_seconds = time.monotonic() - began

    def _start_kube_controller_manager(self, timeout: float) -> None:
        home = self.workdir / "kube-controller-manager"
        home.mkdir()
        port = free_port()
        process = _spawn(
            "kube-controller-manager",
            [
                str(self.artifacts.kube_controller_manager),
                f"--kubeconfig={self.kubeconfig}",
                f"--controllers={','.join(KCM_CONTROLLERS)}",
                "--leader-elect=false",
                "--bind-address=127.0.0.1",
                f"--secure-port={port}",
                f"--cert-dir={home / 'certs'}",
                "--profiling=false",
                "--v=1",
            ],
            home,
        )
        self.processes.append(process)
        insecure = ssl.create_default_context()
        insecure.check_hostname = False
        insecure.verify_mode = ssl.CERT_NONE  # its own self-signed serving certificate

        def healthy() -> bool:
            connection = http.client.HTTPSConnection("127.0.0.1", port, context=insecure, timeout=2)
            try:
                connection.request("GET", "/healthz")
                return connection.getresponse().status == 200
            finally:
                connection.close()

        _wait("kube-controller-manager /healthz", healthy, process, timeout)
        client = self.client()
        try:
            _wait(
                "the default ServiceAccount of namespace default",
                lambda: (
                    client.raw("GET", SERVICE_ACCOUNT_PATH.format(namespace="default"))[0] == 200
                ),
                process,
                timeout,
            )
        finally:
            client.close()

    def _start_jobset(self, timeout: float) -> None:
        assert self.artifacts.jobset_controller_manager is not None
        home = self.workdir / "jobset"
        _, webhook_port = self._start_manager(
            "jobset-controller-manager",
            self.artifacts.jobset_controller_manager,
            home,
            home / "certs",
            home,
            lambda webhook_port, health_port, certs: {
                "apiVersion": "config.jobset.x-k8s.io/v1alpha1",
                "kind": "Configuration",
                "webhook": {"port": webhook_port, "host": "127.0.0.1", "certDir": str(certs)},
                "health": {"healthProbeBindAddress": f"127.0.0.1:{health_port}"},
                "metrics": {"bindAddress": "0"},
                "leaderElection": {"leaderElect": False},
                # Its own certificate rotation writes a Secret and patches the webhook
                # configurations of its Deployment; here the harness's CA signs instead.
                "internalCertManagement": {"enable": False},
            },
            "the JobSet controller manager",
            timeout,
        )
        self._register(self.jobset_webhook_configurations(webhook_port))

    def _start_manager(
        self,
        name: str,
        binary: Path,
        home: Path,
        certs: Path,
        tmpdir: Path,
        config: Callable[[int, int, Path], Json],
        what: str,
        timeout: float,
    ) -> tuple[Process, int]:
        """Start the controller-runtime manager ``name`` in ``home``: its webhook serving
        certificate (signed by the harness CA) in ``certs``, its configuration
        ``config(webhook port, health port, certs)``; wait until its /readyz answers.
        The process and its webhook port."""
        certs.mkdir(parents=True)
        webhook = name.split("-")[0] + "-webhook"  # trainer-webhook, jobset-webhook
        key, crt = self.pki.issue(webhook, webhook, server=True, client=False)
        shutil.copy(key, certs / "tls.key")
        shutil.copy(crt, certs / "tls.crt")
        webhook_port, health_port = free_port(), free_port()
        config_file = home / "config.yaml"
        config_file.write_text(yaml.safe_dump(config(webhook_port, health_port, certs)))
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "TMPDIR": str(tmpdir),
            "KUBECONFIG": str(self.kubeconfig),
        }
        argv = [str(binary), f"--config={config_file}", "--zap-log-level=info"]
        process = _spawn(name, argv, home, env)
        self.processes.append(process)

        def ready() -> bool:
            connection = http.client.HTTPConnection("127.0.0.1", health_port, timeout=2)
            try:
                connection.request("GET", "/readyz")
                return connection.getresponse().status == 200
            finally:
                connection.close()

        _wait(f"{what}'s /readyz", ready, process, timeout)
        return process, webhook_port

    def _register(self, configurations: list[Json]) -> None:
        """Create each webhook configuration."""
        client = self.client()
        try:
            for configuration in configurations:
                plural = configuration["kind"].lower() + "s"
                client.request(
                    "POST", f"/apis/admissionregistration.k8s.io/v1/{plural}", configuration
                )
        finally:
            client.close()

    def jobset_webhook_configurations(self, webhook_port: int) -> list[Json]:
        """JobSet's webhook configurations as its kustomization makes them (the
        ``jobset-`` name prefix of config/default, the pod webhooks' object selector
        patches of config/components/webhook), served by URL."""
        assert self.artifacts.jobset_dir is not None
        base = self.artifacts.jobset_dir / "config" / "components" / "webhook"
        documents = [d for d in yaml.safe_load_all((base / "manifests.yaml").read_text()) if d]
        patches = {
            "MutatingWebhookConfiguration": base / "patches" / "mutating-patch.yaml",
            "ValidatingWebhookConfiguration": base / "patches" / "validating-patch.yaml",
        }
        return self._by_url(documents, patches, webhook_port, prefix="jobset-")

    def _by_url(
        self, documents: list[Json], patches: dict[str, Path], webhook_port: int, prefix: str = ""
    ) -> list[Json]:
        """Each document with its kind's JSON patch applied, every service reference
        replaced by the URL on ``webhook_port`` and the harness CA's bundle."""
        ca_bundle = base64.b64encode(self.pki.ca_cert.read_bytes()).decode()
        out = []
        for document in documents:
            patch = yaml.safe_load(patches[document["kind"]].read_text())
            patched: Json = jsonpatch.apply_patch(document, patch)
            patched["metadata"]["name"] = prefix + patched["metadata"]["name"]
            for webhook in patched["webhooks"]:
                path = webhook["clientConfig"]["service"]["path"]
                webhook["clientConfig"] = {
                    "url": f"https://127.0.0.1:{webhook_port}{path}",
                    "caBundle": ca_bundle,
                }
            out.append(patched)
        return out

    def webhook_configurations(self, webhook_port: int) -> list[Json]:
        """Trainer's webhook configurations as kustomize makes them, served by URL."""
        base = self.artifacts.trainer_dir / "manifests" / "base" / "webhook"
        documents = [d for d in yaml.safe_load_all((base / "manifests.yaml").read_text()) if d]
        patches = {
            "MutatingWebhookConfiguration": base / "patch_mutating.yaml",
            "ValidatingWebhookConfiguration": base / "patch_validating.yaml",
        }
        return self._by_url(documents, patches, webhook_port)


SERVICE_ACCOUNT_PATH = "/api/v1/namespaces/{namespace}/serviceaccounts/default"

# The API server records every JobSet write with its request body as sent, before
# admission: the JobSet the Trainer applied, before JobSet's mutating webhook
# defaulted it (tests/live/conformance_live.py compares that with trainc's).
AUDIT_POLICY: Json = {
    "apiVersion": "audit.k8s.io/v1",
    "kind": "Policy",
    "omitStages": ["RequestReceived"],
    "rules": [
        {
            "level": "Request",
            "verbs": ["create", "update", "patch"],
            "resources": [{"group": "jobset.x-k8s.io", "resources": ["jobsets"]}],
        },
        {"level": "None"},
    ],
}


def _write_kubeconfig(path: Path, port: int, ca: Path, token: str) -> None:
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "trainc-live",
                "cluster": {
                    "server": f"https://127.0.0.1:{port}",
                    "certificate-authority": str(ca),
                },
            }
        ],
        "users": [{"name": ADMIN_USER, "user": {"token": token}}],
        "contexts": [
            {"name": "trainc-live", "context": {"cluster": "trainc-live", "user": ADMIN_USER}}
        ],
        "current-context": "trainc-live",
    }
    path.write_text(yaml.safe_dump(config))
    path.chmod(0o600)


def start(
    artifacts: Artifacts | None = None,
    trainer: bool = False,
    timeout: float = 120.0,
    pods: bool = False,
) -> ControlPlane:
    """Start etcd and kube-apiserver, install the CRDs; with ``trainer`` the Trainer
    controller too; with ``pods`` the JobSet controller and kube-controller-manager
    (before the Trainer's), so that JobSets become Jobs and Pods."""
    artifacts = artifacts or build()
    began = time.monotonic()
    workdir = Path(tempfile.mkdtemp(prefix="trainc-controlplane-"))
    processes: list[Process] = []
    try:
        pki = Pki.create(workdir / "pki")
        etcd_key, etcd_crt = pki.issue("etcd", "etcd", server=True, client=False)
        etcd_client_key, etcd_client_crt = pki.issue(
            "etcd-client", "kube-apiserver", server=False, client=True
        )
        api_key, api_crt = pki.issue("kube-apiserver", "kube-apiserver", server=True, client=False)
        _openssl("genrsa", "-out", "sa.key", "2048", cwd=pki.directory)
        _openssl("rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub", cwd=pki.directory)
        admin_token = base64.b32encode(os.urandom(20)).decode().lower()
        limited_token = base64.b32encode(os.urandom(20)).decode().lower()
        tokens = workdir / "tokens.csv"
        tokens.write_text(
            f'{admin_token},{ADMIN_USER},uid-admin,"system:masters"\n'
            f"{limited_token},{LIMITED_USER},uid-limited\n"
        )
        tokens.chmod(0o600)
        audit_policy = workdir / "audit-policy.yaml"
        audit_policy.write_text(yaml.safe_dump(AUDIT_POLICY))

        etcd_port, etcd_peer_port, api_port = free_port(), free_port(), free_port()
        etcd_url = f"https://127.0.0.1:{etcd_port}"
        etcd = _spawn(
            "etcd",
            [
                str(artifacts.etcd),
                "--name=trainc",
                f"--data-dir={workdir / 'etcd-data'}",
                f"--listen-client-urls={etcd_url}",
                f"--advertise-client-urls={etcd_url}",
                f"--listen-peer-urls=http://127.0.0.1:{etcd_peer_port}",
                f"--initial-advertise-peer-urls=http://127.0.0.1:{etcd_peer_port}",
                f"--initial-cluster=trainc=http://127.0.0.1:{etcd_peer_port}",
                f"--cert-file={etcd_crt}",
                f"--key-file={etcd_key}",
                f"--trusted-ca-file={pki.ca_cert}",
                "--client-cert-auth",
                "--listen-metrics-urls=",
                "--unsafe-no-fsync",
                "--log-level=warn",
            ],
            workdir,
        )
        processes.append(etcd)
        apiserver = _spawn(
            "kube-apiserver",
            [
                str(artifacts.kube_apiserver),
                "--bind-address=127.0.0.1",
                "--advertise-address=127.0.0.1",
                f"--secure-port={api_port}",
                f"--etcd-servers={etcd_url}",
                f"--etcd-cafile={pki.ca_cert}",
                f"--etcd-certfile={etcd_client_crt}",
                f"--etcd-keyfile={etcd_client_key}",
                f"--tls-cert-file={api_crt}",
                f"--tls-private-key-file={api_key}",
                f"--client-ca-file={pki.ca_cert}",
                f"--token-auth-file={tokens}",
                "--authorization-mode=RBAC",
                f"--service-account-key-file={pki.directory / 'sa.pub'}",
                f"--service-account-signing-key-file={pki.directory / 'sa.key'}",
                "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
                "--service-cluster-ip-range=10.0.0.0/24",
                f"--cert-dir={workdir / 'apiserver-certs'}",
                "--allow-privileged=true",
                f"--audit-policy-file={audit_policy}",
                f"--audit-log-path={workdir / 'audit.log'}",
                "--audit-log-format=json",
                "--audit-log-mode=blocking",
                "--profiling=false",
                "--v=1",
            ],
            workdir,
        )
        processes.append(apiserver)
        kubeconfig = workdir / "kubeconfig"
        _write_kubeconfig(kubeconfig, api_port, pki.ca_cert, admin_token)
        plane = ControlPlane(
            artifacts, workdir, pki, api_port, admin_token, limited_token, kubeconfig, processes
        )
        client = plane.client()
        try:
            _wait(
                "kube-apiserver /readyz",
                lambda: client.raw("GET", "/readyz")[0] == 200,
                apiserver,
                timeout,
            )
            _wait(
                "the default namespace",
                lambda: client.raw("GET", "/api/v1/namespaces/default")[0] == 200,
                apiserver,
                timeout,
            )
            install_crds(client, artifacts.crd_files, apiserver, timeout)
        finally:
            client.close()
        if pods:
            plane.start_pod_controllers(timeout)
        if trainer:
            plane.start_trainer(timeout)
        plane.started_seconds = time.monotonic() - began
        return plane
    except BaseException:
        for process in reversed(processes):
            process.stop()
        shutil.rmtree(workdir, ignore_errors=True)
        raise


def install_crds(client: Client, files: tuple[Path, ...], process: Process, timeout: float) -> None:
    """Create each CRD and wait until it is Established and served."""
    crds = []
    for path in files:
        for document in yaml.safe_load_all(path.read_text()):
            if document and document.get("kind") == "CustomResourceDefinition":
                crds.append(document)
                client.request(
                    "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", document
                )
    for crd in crds:
        name = crd["metadata"]["name"]

        def established(name: str = name) -> bool:
            got = client.get(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}")
            conditions = (got.get("status") or {}).get("conditions") or []
            return any(c["type"] == "Established" and c["status"] == "True" for c in conditions)

        _wait(f"CRD {name} Established", established, process, timeout)
        group = crd["spec"]["group"]
        for version in crd["spec"]["versions"]:
            if version.get("served"):
                served = f"/apis/{group}/{version['name']}/{crd['spec']['names']['plural']}"

                def is_served(path: str = served) -> bool:
                    return client.raw("GET", path)[0] == 200

                _wait(f"{served} served", is_served, process, timeout)


@contextlib.contextmanager
def running(trainer: bool = False, pods: bool = False) -> Iterator[ControlPlane]:
    plane = start(trainer=trainer, pods=pods)
    try:
        yield plane
    finally:
        plane.stop()


def main() -> int:
    """``python -m tests.live.controlplane``: start, print the kubeconfig path, stop on Ctrl-C."""
    began = time.monotonic()
    with running(trainer=True, pods=True) as plane:
        print(f"control plane up in {time.monotonic() - began:.1f}s: {plane.url}")
        print(f"KUBECONFIG={plane.kubeconfig}")
        with contextlib.suppress(KeyboardInterrupt):
            while all(p.alive() for p in plane.processes):
                time.sleep(1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
