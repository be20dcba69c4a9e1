"""The connection to a cluster: kubeconfig, raw JSON requests, retries, resource paths.

The ``kubernetes`` client loads the kubeconfig (``--kubeconfig``, ``$KUBECONFIG``,
``~/.kube/config``; ``--context``) and carries the credentials (tokens, client
certificates, exec plugins); requests go through its REST layer as plain JSON, so one
code path serves every kind. Errors a user can act on are :class:`ClusterError`
(exit 2), never a traceback:

- a kubeconfig that is missing or does not load, or names no such context;
- an API server that cannot be reached: connection errors, HTTP 429 and 5xx are
  retried with exponential backoff until the deadline (``--timeout``), then
  :class:`Unreachable`; a ``Retry-After`` on 429 and 5xx (seconds or an HTTP-date, as
  client-go honours it on the same codes) sets the wait instead, and one past the
  deadline stops at once;
- 401 (credentials refused) and 403 (forbidden, with the server's message); a 403 to a
  write that admission gave (a webhook's or an admission plugin's denial of that one
  object, not the authorizer's) is that object's refusal, left to the caller;
- an answer that is not what the API server must send (:class:`BadAnswer`, checked by
  :mod:`.answers`).

The deadline is one for the whole exchange: every request gets what remains of it, and
holds for the whole answer, not only for each socket read (a body trickled a byte at a
time, headers then silence, an endless chunked body): a watchdog shuts the request's
socket when the deadline passes. Requests go through the ``kubernetes`` client's
urllib3 pool (its TLS and proxy settings), without urllib3's own retries or redirects.
"""

from __future__ import annotations

import contextlib
import email.utils
import json
import os
import re
import socket
import threading
import time
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from compiler.errors import TraincError, escape_text

__all__ = [
    "RESOURCES",
    "ApiAnswer",
    "BadAnswer",
    "ClusterError",
    "Connection",
    "NotServed",
    "Resource",
    "Unreachable",
    "connect",
    "denied_by_admission",
    "resource_of",
]

Json = dict[str, Any]

_RETRY_CODES = frozenset({429, 500, 502, 503, 504})
MAX_BODY = 256 << 20  # bytes of one answer: a LIST of thousands of JobSets is far less
_METADATA_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"


class ClusterError(TraincError):
    """The cluster cannot be used as asked (kubeconfig, reachability, permissions)."""


class Unreachable(ClusterError):
    """The API server did not answer within the deadline."""


class BadAnswer(ClusterError):
    """An answer that is not what the API server must send (body, types, object)."""


class NotServed(ClusterError):
    """Discovery says the cluster does not serve a kind."""


@dataclass(frozen=True)
class Resource:
    """Where objects of one kind live in the API."""

    group: str
    version: str
    plural: str
    namespaced: bool = True

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def path(self, namespace: str | None = None, name: str | None = None) -> str:
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace:
            base += f"/namespaces/{namespace}"
        base += f"/{self.plural}"
        if name is not None:
            base += f"/{name}"
        return base


# (apiVersion, kind) -> resource, for what trainc renders; others are discovered.
RESOURCES: dict[tuple[str, str], Resource] = {
    ("v1", "Namespace"): Resource("", "v1", "namespaces", namespaced=False),
    ("v1", "Secret"): Resource("", "v1", "secrets"),
    ("v1", "ConfigMap"): Resource("", "v1", "configmaps"),
    ("jobset.x-k8s.io/v1alpha2", "JobSet"): Resource("jobset.x-k8s.io", "v1alpha2", "jobsets"),
    ("scheduling.x-k8s.io/v1alpha1", "PodGroup"): Resource(
        "scheduling.x-k8s.io", "v1alpha1", "podgroups"
    ),
    ("scheduling.volcano.sh/v1beta1", "PodGroup"): Resource(
        "scheduling.volcano.sh", "v1beta1", "podgroups"
    ),
    ("trainer.kubeflow.org/v1alpha1", "TrainJob"): Resource(
        "trainer.kubeflow.org", "v1alpha1", "trainjobs"
    ),
    ("trainer.kubeflow.org/v1alpha1", "TrainingRuntime"): Resource(
        "trainer.kubeflow.org", "v1alpha1", "trainingruntimes"
    ),
    ("trainer.kubeflow.org/v1alpha1", "ClusterTrainingRuntime"): Resource(
        "trainer.kubeflow.org", "v1alpha1", "clustertrainingruntimes", namespaced=False
    ),
}


@dataclass(frozen=True)
class ApiAnswer:
    code: int
    body: Json
    problem: str | None = None  # why the body is not a JSON object ("empty", ...)
    retry_after: float | None = None  # seconds, from a Retry-After header

    @property
    def message(self) -> str:
        text = self.body.get("message") or self.body.get("reason") or f"HTTP {self.code}"
        return escape_text(str(text))[:300]


def decode_body(data: bytes) -> tuple[Json, str | None]:
    """The body as a JSON object, or ``({"message": ...}, why not)``."""
    if not data.strip():
        return {}, "an empty body"
    try:
        parsed = json.loads(data, parse_constant=_no_constant)
    except (ValueError, RecursionError) as error:
        text = data[:300].decode("utf-8", "replace")
        return {"message": text}, f"a body that is not JSON ({_short(error)[:80]})"
    if not isinstance(parsed, dict):
        return {}, f"a body that is not a JSON object (a JSON {_json_type(parsed)})"
    return parsed, None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _json_type(value: Any) -> str:
    names = {list: "array", str: "string", bool: "boolean", type(None): "null"}
    return names.get(type(value), "number")


_SECONDS = re.compile(r"[0-9]{1,9}")


def retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` value (delay-seconds or an HTTP-date);
    ``None`` when absent or unreadable.

    >>> retry_after("3"), retry_after("soon")
    (3.0, None)
    >>> retry_after("Fri, 27 Nov 2026 20:00:05 GMT", datetime(2026, 11, 27, 20, tzinfo=UTC))
    5.0
    """
    if value is None:
        return None
    value = value.strip()
    if _SECONDS.fullmatch(value):
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


class _Expired(Exception):
    """The deadline passed while a request was in flight."""


# --- the watchdog -------------------------------------------------------------------
# urllib3's timeouts bound each socket operation, not an answer: a body sent a byte at a
# time never trips them. Each request runs under a watchdog that shuts its socket down
# when the deadline passes, which ends any read in progress. The sockets are found
# through the connection classes of the pool manager's pools (below): a new socket is
# registered when it is made, a reused one when a request is sent on it.

_WATCH = threading.local()


class _Watchdog:
    def __init__(self, seconds: float) -> None:
        self.expired = False
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    def __enter__(self) -> _Watchdog:
        _WATCH.current = self
        self._timer.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._timer.cancel()
        _WATCH.current = None

    def attach(self, sock: socket.socket | None) -> None:
        if sock is None:
            return
        with self._lock:
            self._sockets.append(sock)
            if self.expired:
                _shut(sock)

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            for sock in self._sockets:
                _shut(sock)


def _shut(sock: socket.socket) -> None:
    # the plain socket's shutdown: an SSLSocket's would also drop its TLS state under the
    # reader's feet; OSError: already closed
    with contextlib.suppress(OSError):
        socket.socket.shutdown(sock, socket.SHUT_RDWR)


def _attach(sock: Any) -> None:
    watch = getattr(_WATCH, "current", None)
    if watch is not None and isinstance(sock, socket.socket):
        watch.attach(sock)


_WATCHED: dict[type[Any], type[Any]] = {}


def _watched_pool(pool_class: type[Any]) -> type[Any]:
    """``pool_class`` whose connections register their sockets with the watchdog."""
    if pool_class not in _WATCHED:
        base = pool_class.ConnectionCls

        class WatchedConnection(base):  # type: ignore[valid-type,misc]
            def _new_conn(self) -> Any:
                sock = super()._new_conn()
                _attach(sock)
                return sock

            def request(self, *args: Any, **kwargs: Any) -> Any:
                _attach(self.sock)
                return super().request(*args, **kwargs)

        _WATCHED[pool_class] = type(
            pool_class.__name__, (pool_class,), {"ConnectionCls": WatchedConnection}
        )
    return _WATCHED[pool_class]


def _transport_errors() -> tuple[type[BaseException], ...]:
    import urllib3.exceptions

    return (urllib3.exceptions.HTTPError, ConnectionError, TimeoutError, OSError)


class Connection:
    """Raw JSON requests to one API server, with retry until a deadline."""

    def __init__(self, api_client: Any, namespace: str, server: str, context: str) -> None:
        self._api = api_client
        self.namespace = namespace
        self.server = server
        self.context = context
        self.deadline = time.monotonic() + 60.0
        self.timeout = 60.0
        self.requests = 0  # every request sent (tests count writes through ``writes``)
        self.writes = 0
        self._discovered: dict[tuple[str, str], Resource] = {}
        pools = api_client.rest_client.pool_manager
        pools.pool_classes_by_scheme = {
            scheme: _watched_pool(cls) for scheme, cls in pools.pool_classes_by_scheme.items()
        }
        pools.clear()

    def set_timeout(self, seconds: float) -> None:
        """The deadline: ``seconds`` from now, for every request until it is set again."""
        self.timeout = seconds
        self.deadline = time.monotonic() + seconds

    def close(self) -> None:
        self._api.close()

    # --- requests ---------------------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        params: Mapping[str, str] | None = None,
        content_type: str = "application/json",
        accept: str = "application/json",
    ) -> ApiAnswer:
        """One request, retried on transport errors, 429 and 5xx until the deadline."""
        url = path
        if params:
            url += "?" + urllib.parse.urlencode(params)
        headers = {"Accept": accept}
        if body is not None:
            headers["Content-Type"] = content_type
        delay = 0.1
        last_error = ""
        while True:
            wait = delay
            try:
                answer = self._send(method, url, headers, body)
            except _Expired:
                answer = None
                last_error = "its answer was still incomplete at the deadline"
            except _transport_errors() as error:
                if _is_tls(error):
                    raise ClusterError(
                        f"cannot talk to the API server at {self.server} over TLS: "
                        f"{_short(error)} (check the kubeconfig's certificate-authority)"
                    ) from None
                answer = None
                last_error = _short(error)
            if answer is not None:
                if answer.code not in _RETRY_CODES:
                    return self._checked(answer, method, path)
                last_error = f"HTTP {answer.code}: {answer.message}"
                if answer.retry_after is not None:
                    wait = max(answer.retry_after, 0.05)
                    if time.monotonic() + wait > self.deadline:
                        raise Unreachable(
                            f"the API server at {self.server} did not answer {method} {path} "
                            f"before the timeout ({self.timeout:g}s): {last_error}; it asked "
                            f"to retry after {answer.retry_after:g}s (Retry-After)"
                        )
            if time.monotonic() + wait > self.deadline:
                raise Unreachable(
                    f"the API server at {self.server} did not answer {method} {path} "
                    f"before the timeout ({self.timeout:g}s): {last_error}"
                )
            time.sleep(wait)
            delay = min(delay * 2, 2.0)

    def _send(self, method: str, url: str, headers: dict[str, str], body: Any) -> ApiAnswer:
        """One request and its whole answer, within what remains of the deadline."""
        import urllib3

        _, full_url, all_headers, _, _ = self._api.param_serialize(
            method=method,
            resource_path=url,
            header_params=headers,
            auth_settings=["BearerToken"],
        )
        remaining = min(self.deadline - time.monotonic(), 86400.0)  # timers cap their waits
        if remaining <= 0:
            raise _Expired
        self.requests += 1
        if method != "GET":
            self.writes += 1
        data = None
        if body is not None:
            # JSON is YAML, but YAML has no surrogate-pair escapes: send UTF-8 as is
            yaml = "yaml" in headers.get("Content-Type", "")
            data = json.dumps(body, ensure_ascii=not yaml).encode()
        pools = self._api.rest_client.pool_manager
        with _Watchdog(remaining) as watch:
            try:
                response = pools.request(
                    method,
                    full_url,
                    body=data,
                    headers=all_headers,
                    timeout=urllib3.Timeout(connect=remaining, read=remaining),
                    preload_content=False,
                    redirect=False,
                    retries=False,
                )
                try:
                    raw = _read(response)
                except BaseException:
                    response.close()
                    raise
                finally:
                    response.release_conn()
            except Exception:
                if watch.expired:
                    raise _Expired from None
                raise
            if watch.expired:  # a body without a length ends where the socket was shut
                raise _Expired
        if raw is None:
            parsed: Json = {}
            problem: str | None = f"a body larger than {MAX_BODY >> 20} MiB"
        else:
            parsed, problem = decode_body(raw)
        wait = None
        if response.status == 429 or response.status >= 500:
            wait = retry_after(response.headers.get("Retry-After"))
        return ApiAnswer(response.status, parsed, problem, wait)

    def _checked(self, answer: ApiAnswer, method: str, path: str) -> ApiAnswer:
        if answer.code == 403 and method != "GET" and denied_by_admission(answer):
            return answer  # one object refused: the run goes on
        if answer.code == 401:
            raise ClusterError(
                f"the API server at {self.server} refused the credentials of context "
                f"{self.context!r} (401 Unauthorized)"
            )
        if answer.code == 403:
            raise ClusterError(f"forbidden: {method} {path}: {answer.message}")
        return answer

    def get(self, path: str, params: Mapping[str, str] | None = None) -> ApiAnswer:
        return self.request("GET", path, params=params)

    def list_metadata(self, path: str, params: Mapping[str, str] | None = None) -> ApiAnswer:
        """A list as PartialObjectMetadata: names and labels, never data (Secrets)."""
        return self.request("GET", path, params=params, accept=_METADATA_LIST)

    # --- resources --------------------------------------------------------------------

    def resource(self, api_version: str, kind: str) -> Resource:
        known = RESOURCES.get((api_version, kind)) or self._discovered.get((api_version, kind))
        if known is not None:
            return known
        from compiler.deliver.apply.answers import served_resources

        group, _, version = api_version.rpartition("/")
        path = f"/apis/{group}/{version}" if group else f"/api/{version}"
        answer = self.get(path)
        if answer.code == 200:
            for item in served_resources(answer, f"GET {path}"):
                if item["kind"] == kind and "/" not in item["name"]:
                    found = Resource(group, version, item["name"], item.get("namespaced") is True)
                    self._discovered[(api_version, kind)] = found
                    return found
        elif answer.code != 404:
            raise ClusterError(f"cannot read GET {path} ({answer.code}): {answer.message}")
        raise NotServed(f"the cluster does not serve {kind} {api_version} (is its CRD installed?)")


_WEBHOOK_DENIAL = re.compile(r'admission webhook ".*" denied the request')
_FORBIDDEN = re.compile(r" is forbidden: (?P<reason>.*)", re.DOTALL)


def denied_by_admission(answer: ApiAnswer) -> bool:
    """Whether a 403 is admission's refusal of one object rather than the authorizer's.

    kube-apiserver words a webhook's denial ``admission webhook "<name>" denied the
    request: ...`` (controller-runtime webhooks deny with 403), an admission plugin's
    ``<resource> "<name>" is forbidden: <reason>`` (quota, a terminating namespace), and
    the authorizer's ``... is forbidden: User "<user>" cannot <verb> ...``; anything else
    (a proxy's 403, say) is not taken for admission.

    >>> def a(m): return denied_by_admission(ApiAnswer(403, {"message": m}))
    >>> a('admission webhook "v.trainjob" denied the request: bad'), a('x "y" is forbidden: quota')
    (True, True)
    >>> a('x "y" is forbidden: User "ci" cannot patch resource "x"'), a("no")
    (False, False)
    """
    message = answer.body.get("message")
    if not isinstance(message, str):
        return False
    if _WEBHOOK_DENIAL.search(message):
        return True
    forbidden = _FORBIDDEN.search(message)
    return forbidden is not None and not forbidden["reason"].startswith('User "')


def _read(response: Any) -> bytes | None:
    """The whole body, or None past :data:`MAX_BODY` (the connection is then closed)."""
    chunks: list[bytes] = []
    size = 0
    for chunk in response.stream(1 << 16):
        size += len(chunk)
        if size > MAX_BODY:
            response.close()
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def resource_of(obj: Mapping[str, Any]) -> Resource:
    """The resource of a kind trainc renders (no discovery)."""
    return RESOURCES[(str(obj.get("apiVersion", "")), str(obj.get("kind", "")))]


def _is_tls(error: BaseException) -> bool:
    """A certificate the client does not trust: retrying cannot help."""
    import ssl

    import urllib3.exceptions

    tls = (ssl.SSLError, urllib3.exceptions.SSLError)
    return isinstance(error, tls) or isinstance(getattr(error, "reason", None), tls)


def _short(error: BaseException) -> str:
    reason = getattr(error, "reason", None)
    text = str(reason if reason is not None else error)
    lines = [line for line in text.splitlines() if line.strip()]
    return " ".join(lines)[:300] if lines else type(error).__name__


def connect(
    kubeconfig: Path | None, context: str | None, namespace: str | None, timeout: float
) -> Connection:
    """A connection as kubectl would make it from the same flags."""
    from kubernetes import client, config
    from kubernetes.config.config_exception import ConfigException

    files = (
        [str(kubeconfig)]
        if kubeconfig is not None
        else (os.environ.get("KUBECONFIG") or str(Path.home() / ".kube" / "config")).split(
            os.pathsep
        )
    )
    existing = [f for f in files if f and Path(f).is_file()]
    if not existing:
        raise ClusterError(f"no kubeconfig found at {', '.join(files)} (give --kubeconfig FILE)")
    configuration = client.Configuration()
    try:
        loader = config.kube_config._get_kube_config_loader(  # type: ignore[no-untyped-call]
            filename=existing[0] if len(existing) == 1 else os.pathsep.join(existing),
            active_context=context,
            persist_config=False,
        )
        loader.load_and_set(configuration)
        current = loader.current_context
    except (ConfigException, ValueError, TypeError, KeyError, OSError) as error:
        first = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise ClusterError(f"cannot use kubeconfig {', '.join(existing)}: {first}") from None
    except Exception as error:  # the YAML reader's errors
        first = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise ClusterError(f"cannot read kubeconfig {', '.join(existing)}: {first}") from None
    configuration.retries = 0  # trainc retries itself, within --timeout
    context_name = str(current.get("name", "")) if isinstance(current, dict) else ""
    ctx = current.get("context", {}) if isinstance(current, dict) else {}
    default_namespace = namespace or (ctx or {}).get("namespace") or "default"
    api = client.ApiClient(configuration)
    connection = Connection(api, str(default_namespace), str(configuration.host), context_name)
    connection.set_timeout(timeout)
    return connection
