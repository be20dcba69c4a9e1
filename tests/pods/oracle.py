"""Run the pods oracle (tests/pods/oracle): the JobSet and Kubernetes code below a JobSet.

Two Go programs, each with its own go.mod, because the two upstreams pin different
Kubernetes libraries, as they do in a cluster:

* ``jobset/`` (sigs.k8s.io/jobset v0.12.0 and the k8s.io 0.36 libraries it links): the
  JobSet webhooks through controller-runtime's own handlers, then one reconcile of the
  JobSet controller against a fake client: the Jobs and the Service it creates;
* ``kube/`` (k8s.io/kubernetes v1.34.4, the live control plane's version): the API
  server's create path of those Jobs (defaults, the Job strategy) and Services
  (defaults), then the Job controller against a fake clientset, its Pods defaulted as
  they are created, then through a plain cluster's admission plugins that change a Pod
  (ServiceAccount, Priority, DefaultTolerationSeconds); ``jobset pods`` then sends them
  through the JobSet Pod webhook.

``make pods-oracle`` builds both into ``bin/`` (git-ignored); tests build them on
demand (:class:`tests.go_oracle.GoOracle`) and fail, naming ``make pods-oracle``, when
Go is missing or a program does not build.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.go_oracle import GoOracle, OracleUnavailable

__all__ = [
    "OracleUnavailable",
    "jobset_oracle",
    "kube_oracle",
    "oracle_binary",
    "pod_webhook_oracle",
    "update_oracle",
]

ORACLE_DIR = Path(__file__).resolve().parent / "oracle"
# program -> the oracle that builds it into the shared bin/ (as `make pods-oracle` does)
PROGRAMS = {
    program: GoOracle(f"pods {program}", ORACLE_DIR / program, binary, ORACLE_DIR / "bin")
    for program, binary in (("jobset", "jobset-oracle"), ("kube", "kube-oracle"))
}


def oracle_binary(program: str) -> Path:
    """Build ``program`` if needed (``go build`` caches); the binary's path."""
    return PROGRAMS[program].binary


def _run(program: str, payload: Any, timeout: float, *args: str) -> Any:
    return PROGRAMS[program].answer(payload, timeout, *args)


def jobset_oracle(jobsets: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """For each stored JobSet: ``allowed``, ``message``, ``defaulted``, ``jobs``, ``services``."""
    out: list[dict[str, Any]] = _run("jobset", jobsets, timeout=60 + 2 * len(jobsets))
    return out


def update_oracle(pairs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """For each ``{"old": JobSet, "new": JobSet}``: the validating webhook's ``allowed`` and
    ``message`` on that update."""
    out: list[dict[str, Any]] = _run("jobset", pairs, 60 + len(pairs), "update")
    return out


def pod_webhook_oracle(pods: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each Pod after the JobSet Pod webhook (``mpod.kb.io``)."""
    out: list[dict[str, Any]] = _run("jobset", pods, 60 + len(pods), "pods")
    return out


def kube_oracle(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """For each ``{"jobs": [...], "services": [...]}``: the stored Jobs and Services and
    the Job controller's Pods (by name)."""
    out: list[dict[str, Any]] = _run("kube", cases, timeout=120 + 30 * len(cases))
    return out
