"""The names, keys and placeholders of the objects below a JobSet.

The label and annotation keys are those of sigs.k8s.io/jobset v0.12.0
(``api/jobset/v1alpha2``, ``pkg/constants``) and of Kubernetes v1.34.4
(``k8s.io/api/batch/v1``). What a real cluster makes random is written as a
placeholder, so an expansion is byte-identical from run to run:

* a UID: :func:`placeholder_uid`, ``00000000-0000-0000-0000-`` then twelve hex digits
  of the SHA-1 of ``<kind>/<namespace>/<name>`` (distinct per object, visibly not real);
* the five random characters of a generated name (a Pod's, the service-account token
  volume's): :data:`NAME_SUFFIX`, ``00000``, whose characters the API server's name
  generator never uses (its alphabet has no ``0``), so it is never a real suffix; the
  Pods of a NonIndexed Job, which share a prefix, get ``00000``, ``00001``, ...

    >>> placeholder_uid("Job", "research", "demo-node-0")[:24]
    '00000000-0000-0000-0000-'
"""

from __future__ import annotations

import hashlib

__all__ = [
    "COMPLETION_INDEX",
    "CONTROLLER_UID",
    "JOBSET_API_VERSION",
    "JOB_NAME",
    "NAME_SUFFIX",
    "placeholder_uid",
]

NAME_SUFFIX = "00000"

JOBSET_API_VERSION = "jobset.x-k8s.io/v1alpha2"

# sigs.k8s.io/jobset v0.12.0
JOBSET_NAME = "jobset.sigs.k8s.io/jobset-name"
JOBSET_UID = "jobset.sigs.k8s.io/jobset-uid"
REPLICATED_JOB_NAME = "jobset.sigs.k8s.io/replicatedjob-name"
REPLICATED_JOB_REPLICAS = "jobset.sigs.k8s.io/replicatedjob-replicas"
GLOBAL_REPLICAS = "jobset.sigs.k8s.io/global-replicas"
JOB_INDEX = "jobset.sigs.k8s.io/job-index"
JOB_GLOBAL_INDEX = "jobset.sigs.k8s.io/job-global-index"
JOB_KEY = "jobset.sigs.k8s.io/job-key"
GROUP_NAME = "jobset.sigs.k8s.io/group-name"
GROUP_REPLICAS = "jobset.sigs.k8s.io/group-replicas"
JOB_GROUP_INDEX = "jobset.sigs.k8s.io/job-group-index"
RESTARTS = "jobset.sigs.k8s.io/restart-attempt"
COORDINATOR = "jobset.sigs.k8s.io/coordinator"
PRIORITY = "jobset.sigs.k8s.io/priority"
EXCLUSIVE = "alpha.jobset.sigs.k8s.io/exclusive-topology"
NODE_SELECTOR_STRATEGY = "alpha.jobset.sigs.k8s.io/node-selector"
NAMESPACED_JOB = "alpha.jobset.sigs.k8s.io/namespaced-job"
NO_SCHEDULE_TAINT = "alpha.jobset.sigs.k8s.io/no-schedule"

# Kubernetes v1.34.4, k8s.io/api/batch/v1
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
CONTROLLER_UID = "batch.kubernetes.io/controller-uid"
LEGACY_CONTROLLER_UID = "controller-uid"
JOB_NAME = "batch.kubernetes.io/job-name"
LEGACY_JOB_NAME = "job-name"
JOB_TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
COMPLETION_INDEX_ENV = "JOB_COMPLETION_INDEX"
INDEX_FAILURE_COUNT = "batch.kubernetes.io/job-index-failure-count"


def placeholder_suffix(ordinal: int = 0) -> str:
    """The placeholder of a generated name's suffix: ``00000``, then ``00001``, ..."""
    return f"{ordinal:05d}"


def placeholder_uid(kind: str, namespace: str, name: str) -> str:
    """The placeholder UID of object ``kind`` ``namespace/name`` (see the module doc)."""
    digest = hashlib.sha1(f"{kind}/{namespace}/{name}".encode()).hexdigest()
    return f"00000000-0000-0000-0000-{digest[:12]}"
