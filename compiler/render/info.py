"""The data the plugins share while rendering one TrainJob (upstream ``runtime.Info``).

Every value is plain JSON data, as the controller's apply configurations would
serialise it. One :class:`PodSet` per replicated job, at the same index.
"""

from __future__ import annotations

import marshal
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from compiler.kube.quantity import Quantity

JsonObject = dict[str, Any]


_SCALARS = frozenset({str, int, float, bool, type(None)})


def json_copy(value: Any) -> Any:
    """A deep copy of JSON data (dicts, lists, scalars), several times faster than deepcopy.

    marshal's C round trip does the work; format 2 has no back-references, so an object
    reached twice comes back as two independent copies, as the recursive copy gives.

        >>> shared = {"a": 1}
        >>> copied = json_copy([shared, shared])
        >>> copied == [shared, shared], copied[0] is copied[1], copied[0] is shared
        (True, False, False)
    """
    if type(value) in _SCALARS:
        return value
    try:
        return marshal.loads(marshal.dumps(value, 2))
    except ValueError:  # not plain JSON data (e.g. a Quantity inside): copy by hand
        return _json_copy(value)


def _json_copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _json_copy(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_json_copy(item) for item in value]
    return value


@dataclass
class PodSetContainer:
    """What plugins may change on a container; written back by the JobSet builder (R-9.2)."""

    name: str
    image: str = ""
    command: list[str] | None = None
    env: list[JsonObject] = field(default_factory=list)
    ports: list[JsonObject] = field(default_factory=list)
    volume_mounts: list[JsonObject] = field(default_factory=list)

    @classmethod
    def of(cls, container: JsonObject) -> PodSetContainer:
        """Copy the plugin-visible fields of a container of the working spec."""
        return cls(
            name=container.get("name", ""),
            image=container.get("image", ""),
            command=list(container["command"]) if container.get("command") is not None else None,
            env=[dict(e) for e in container.get("env") or ()],
            ports=[dict(p) for p in container.get("ports") or ()],
            volume_mounts=[dict(m) for m in container.get("volumeMounts") or ()],
        )

    @classmethod
    def without_image_command(cls, container: JsonObject) -> PodSetContainer:
        """As :meth:`of`, without the image and command (Trainer before v2.3.0)."""
        return replace(cls.of(container), image="", command=None)


@dataclass
class PodSet:
    """One replicated job as the plugins see it (R-3.7)."""

    name: str
    ancestor: str | None
    count: int
    containers: list[PodSetContainer]
    init_containers: list[PodSetContainer]
    volumes: list[JsonObject]
    single_pod_requests: dict[str, Quantity]
    replicas: int = 1
    subdomain: str = ""
    trainjob_name: str = ""

    def endpoints(self) -> Iterator[str]:
        """``<trainjob>-<job>-<replica>-<pod>.<subdomain>`` for every pod (R-8.1).

        Lazy like upstream's iterator: it reads ``count`` when iterated.
        """
        for replica in range(self.replicas):
            for pod in range(self.count):
                yield f"{self.trainjob_name}-{self.name}-{replica}-{pod}.{self.subdomain}"

    def container(self, name: str) -> PodSetContainer | None:
        return next((c for c in self.containers if c.name == name), None)


@dataclass(frozen=True)
class SecretRequirement:
    """A Secret a TrainJob needs whose data is generated key material trainc never renders.

    Upstream creates such Secrets with fresh or UID-derived keys (the MPI SSH key pair, the
    Flux curve certificate). trainc records the requirement instead; the apply step
    creates the Secret once, if absent. :meth:`as_object` is the Secret with empty values,
    which is what the oracle comparison sees (name, namespace, type and keys must match).
    """

    name: str
    namespace: str
    type: str
    keys: tuple[str, ...]
    generator: str  # how apply makes the data, e.g. "ssh-ecdsa-p521"
    immutable: bool = False
    owner_references: tuple[JsonObject, ...] = ()
    string_data: bool = False  # upstream writes stringData rather than data

    def as_object(self) -> JsonObject:
        metadata: JsonObject = {"name": self.name, "namespace": self.namespace}
        if self.owner_references:
            metadata["ownerReferences"] = [dict(o) for o in self.owner_references]
        obj: JsonObject = {"apiVersion": "v1", "kind": "Secret", "metadata": metadata}
        if self.type:
            obj["type"] = self.type
        obj["stringData" if self.string_data else "data"] = {key: "" for key in self.keys}
        if self.immutable:
            obj["immutable"] = True
        return obj


@dataclass
class Info:
    """Upstream ``runtime.Info``: the working JobSet spec and what plugins derived."""

    labels: dict[str, str]
    annotations: dict[str, str]
    ml_policy: JsonObject | None
    pod_group_policy: JsonObject | None
    jobset_spec: JsonObject
    pod_sets: list[PodSet]
    pod_labels: dict[str, str] = field(default_factory=dict)
    pod_annotations: dict[str, str] | None = None
    # Filled by component builders: Secrets with generated data, never rendered (see above).
    secret_requirements: list[SecretRequirement] = field(default_factory=list)

    def pod_set_by_ancestor(self, ancestor: str) -> PodSet | None:
        return next((ps for ps in self.pod_sets if ps.ancestor == ancestor), None)

    def pod_set_by_name(self, name: str) -> PodSet | None:
        return next((ps for ps in self.pod_sets if ps.name == name), None)

    def container_by_ancestor(self, ancestor: str, container: str) -> PodSetContainer | None:
        pod_set = self.pod_set_by_ancestor(ancestor)
        return pod_set.container(container) if pod_set else None

    def container_in_pod_set(self, pod_set: str, container: str) -> PodSetContainer | None:
        """Container ``container`` of PodSet ``pod_set``: regular containers first, then init."""
        found = self.pod_set_by_name(pod_set)
        if found is None:
            return None
        return next(
            (c for c in [*found.containers, *found.init_containers] if c.name == container), None
        )

    def has_policy(self, name: str) -> bool:
        """Whether the runtime's ``mlPolicy`` has the member ``name`` (torch, mpi, ...)."""
        return self.ml_policy is not None and self.ml_policy.get(name) is not None

    @property
    def run_launcher_as_node(self) -> bool:
        mpi = (self.ml_policy or {}).get("mpi")
        return bool(mpi and mpi.get("runLauncherAsNode"))
