"""The connection to a cluster: kubeconfig, raw JSON requests, retries, resource paths.

The ``kubernetes`` client loads the kubeconfig (``--kubeconfig``, ``$KUBECONFIG``,
``~/.kube/config``; ``--context``) and carries the credentials (tokens, client
certificates, exec plugins); requests go through its REST layer as plain JSON, so one
code path serves every kind. Errors a user can act on are :class:`ClusterError`
(exit 2), never a traceback:

- a kubeconfig that is missing or does not load, or names no such context;
- an API server that cannot be reached: connection errors, HTTP 429 and 5xx are
  retried with exponential backoff until the deadline (``--timeout``), then
  :class:`Unreachable`;
- 401 (credentials refused) and 403 (forbidden, with the server's message).
"""

from __future__ import annotations

import json
import os
import time
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compiler.errors import TraincError

__all__ = [
    "RESOURCES",
    "ApiAnswer",
    "ClusterError",
    "Connection",
    "Resource",
    "Unreachable",
    "connect",
    "resource_of",
]

Json = dict[str, Any]

_RETRY_CODES = frozenset({429, 500, 502, 503, 504})
_METADATA_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"


class ClusterError(TraincError):
    """The cluster cannot be used as asked (kubeconfig, reachability, permissions)."""


class Unreachable(ClusterError):
    """The API server did not answer within the deadline."""


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

    @property
    def message(self) -> str:
        return str(self.body.get("message") or self.body.get("reason") or f"HTTP {self.code}")


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
        self.requests = 0  # every request sent (tests count writes through ``writes``)
        self.writes = 0
        self._discovered: dict[tuple[str, str], Resource] = {}

    def set_timeout(self, seconds: float) -> None:
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
        from kubernetes.client.exceptions import ApiException

        while True:
            try:
                answer = self._send(method, url, headers, body)
            except ApiException as error:  # the client's wrapping of TLS errors
                raise ClusterError(
                    f"cannot talk to the API server at {self.server} over TLS: "
                    f"{_short(error)} (check the kubeconfig's certificate-authority)"
                ) from None
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
            if time.monotonic() + delay > self.deadline:
                raise Unreachable(
                    f"the API server at {self.server} did not answer {method} {path} "
                    f"before the timeout: {last_error}"
                )
            time.sleep(delay)
            delay = min(delay * 2, 2.0)

    def _send(self, method: str, url: str, headers: dict[str, str], body: Any) -> ApiAnswer:
        _, full_url, all_headers, _, _ = self._api.param_serialize(
            method=method,
            resource_path=url,
            header_params=headers,
            auth_settings=["BearerToken"],
        )
        self.requests += 1
        if method != "GET":
            self.writes += 1
        if body is not None and "yaml" in headers.get("Content-Type", ""):
            # JSON is YAML, but YAML has no surrogate-pair escapes: send UTF-8 as is
            body = json.dumps(body, ensure_ascii=False).encode()
        remaining = max(1.0, min(30.0, self.deadline - time.monotonic()))
        response = self._api.rest_client.request(
            method, full_url, headers=all_headers, body=body, _request_timeout=remaining
        )
        data = response.read()
        try:
            parsed = json.loads(data) if data else {}
        except ValueError:
            parsed = {"message": data.decode("utf-8", "replace")[:300]}
        return ApiAnswer(response.status, parsed if isinstance(parsed, dict) else {})

    def _checked(self, answer: ApiAnswer, method: str, path: str) -> ApiAnswer:
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
        group, _, version = api_version.rpartition("/")
        path = f"/apis/{group}/{version}" if group else f"/api/{version}"
        answer = self.get(path)
        for item in answer.body.get("resources") or []:
            if item.get("kind") == kind and "/" not in str(item.get("name", "")):
                found = Resource(group, version, str(item["name"]), bool(item.get("namespaced")))
                self._discovered[(api_version, kind)] = found
                return found
        raise ClusterError(
            f"the cluster does not serve {kind} {api_version} (is its CRD installed?)"
        )


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
