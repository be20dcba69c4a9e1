"""ApplySet membership and prune (KEP-3659), as ``kubectl apply --prune --applyset`` does it.

The parent is a Secret (kubectl's default parent kind) named by ``--applyset``, in the
apply namespace. Its label ``applyset.kubernetes.io/id`` is

    applyset-<base64url(sha256("<name>.<namespace>.<Kind>.<group>")), no padding>-v1

and its annotations say which tool manages it (``applyset.kubernetes.io/tooling``,
``trainc/v<version>``), which group-kinds its members have
(``applyset.kubernetes.io/contains-group-kinds``: ``Kind.group`` or ``Kind`` for the core
group, sorted, comma-separated) and in which other namespaces they are
(``applyset.kubernetes.io/additional-namespaces``). Every member carries the label
``applyset.kubernetes.io/part-of: <id>``.

As kubectl: before the members are applied the parent is widened to the union of the
old and new group-kinds and namespaces; after them, every object with the part-of
label in those group-kinds and namespaces that was not applied is deleted, and the
parent is narrowed to what was applied. An object is pruned only if it carries this
ApplySet's label *and* this field manager applied it (``managedFields``): trainc never
deletes what it did not create. A parent managed by another tool is refused.

Which ApplySet an apply is a member of (:func:`choose_applyset`): the project cluster's
``applyset`` in ``trainc.yaml`` makes every apply of that cluster a member (and prune
when it says ``prune: true``); else ``--prune`` with ``--applyset``. An apply that is a
member of none keeps the membership of the objects it applies again
(:func:`kept_membership`): server-side apply removes the fields a manager set before and
no longer sends, so sending a member without its label would take it out of its set,
and the next prune would leave it behind. kubectl's own apply does just that; the KEP
makes the label the truth of membership and leaves carrying it from apply to apply to
the tool, so trainc carries it rather than refuse: an apply without prune neither
deletes anything nor changes what the set holds.

    >>> applyset_id("trainc", "default")
    'applyset-2wAzbjRaOXl8sXKdC6gqF8gleI_jynlDJLy2eV2DZPc-v1'
    >>> group_kind("jobset.x-k8s.io/v1alpha2", "JobSet"), group_kind("v1", "ConfigMap")
    ('JobSet.jobset.x-k8s.io', 'ConfigMap')
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from compiler import __version__
from compiler.errors import UsageError

if TYPE_CHECKING:
    from compiler.project.model import ApplySetSetting

__all__ = [
    "ADDITIONAL_NAMESPACES",
    "CONTAINS_GROUP_KINDS",
    "ID_LABEL",
    "PART_OF_LABEL",
    "TOOLING",
    "ApplySet",
    "Choice",
    "applyset_id",
    "choose_applyset",
    "group_kind",
    "kept_membership",
]

Json = dict[str, Any]

PART_OF_LABEL = "applyset.kubernetes.io/part-of"
ID_LABEL = "applyset.kubernetes.io/id"
TOOLING = "applyset.kubernetes.io/tooling"
CONTAINS_GROUP_KINDS = "applyset.kubernetes.io/contains-group-kinds"
ADDITIONAL_NAMESPACES = "applyset.kubernetes.io/additional-namespaces"
TOOLING_VALUE = f"trainc/v{__version__}"


def applyset_id(name: str, namespace: str, kind: str = "Secret", group: str = "") -> str:
    digest = hashlib.sha256(f"{name}.{namespace}.{kind}.{group}".encode()).digest()
    return "applyset-" + base64.urlsafe_b64encode(digest).decode().rstrip("=") + "-v1"


def group_kind(api_version: str, kind: str) -> str:
    group = api_version.rpartition("/")[0]
    return f"{kind}.{group}" if group else kind


def _split(value: str | None) -> set[str]:
    return {v for v in (value or "").split(",") if v}


@dataclass
class ApplySet:
    name: str
    namespace: str
    group_kinds: set[str] = field(default_factory=set)
    namespaces: set[str] = field(default_factory=set)
    # what the live parent listed before this apply
    previous_group_kinds: set[str] = field(default_factory=set)
    previous_namespaces: set[str] = field(default_factory=set)

    @property
    def id(self) -> str:
        return applyset_id(self.name, self.namespace)

    def add(self, obj: Json) -> None:
        """Make ``obj`` a member: the part-of label, and its group-kind and namespace."""
        metadata = obj.setdefault("metadata", {})
        metadata.setdefault("labels", {})[PART_OF_LABEL] = self.id
        self.group_kinds.add(group_kind(str(obj.get("apiVersion", "")), str(obj.get("kind"))))
        if metadata.get("namespace"):
            self.namespaces.add(str(metadata["namespace"]))

    def read_live(self, live: Json | None, tooling_name: str = "trainc") -> str | None:
        """Take the old membership from the live parent; an error text if it is not ours."""
        if live is None:
            return None
        metadata = live.get("metadata") or {}
        labels = metadata.get("labels") or {}
        annotations = metadata.get("annotations") or {}
        if labels.get(ID_LABEL) not in (None, self.id):
            return f"Secret {self.namespace}/{self.name} is not the parent of ApplySet {self.id}"
        tooling = annotations.get(TOOLING)
        if tooling is not None and tooling.split("/", 1)[0] != tooling_name:
            return (
                f"ApplySet {self.namespace}/{self.name} is managed by {tooling!r}, not trainc: "
                "trainc does not change another tool's ApplySet"
            )
        self.previous_group_kinds = _split(annotations.get(CONTAINS_GROUP_KINDS))
        self.previous_namespaces = _split(annotations.get(ADDITIONAL_NAMESPACES))
        return None

    def parent(self, *, widened: bool) -> Json:
        """The parent Secret; ``widened``: the union with the previous membership."""
        kinds = self.group_kinds | (self.previous_group_kinds if widened else set())
        namespaces = self.namespaces | (self.previous_namespaces if widened else set())
        namespaces.discard(self.namespace)
        return {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {
                "name": self.name,
                "namespace": self.namespace,
                "labels": {ID_LABEL: self.id},
                "annotations": {
                    TOOLING: TOOLING_VALUE,
                    CONTAINS_GROUP_KINDS: ",".join(sorted(kinds)),
                    ADDITIONAL_NAMESPACES: ",".join(sorted(namespaces)),
                },
            },
            "type": "Opaque",
        }

    def prune_scope(self) -> tuple[set[str], set[str]]:
        """The group-kinds and namespaces to look for members in."""
        kinds = self.group_kinds | self.previous_group_kinds
        namespaces = self.namespaces | self.previous_namespaces | {self.namespace}
        return kinds, namespaces


def managed_by(obj: Json, manager: str) -> bool:
    return any(
        entry.get("manager") == manager
        for entry in (obj.get("metadata") or {}).get("managedFields") or []
    )


def split_group_kind(value: str) -> tuple[str, str]:
    """``JobSet.jobset.x-k8s.io`` -> ``("JobSet", "jobset.x-k8s.io")``."""
    kind, _, group = value.partition(".")
    return kind, group


def members_to_prune(
    found: Iterable[Json],
    group: str,
    kind: str,
    applied: set[tuple[str, str, str, str]],
    manager: str,
    set_id: str,
) -> list[Json]:
    """Of the ``group``/``kind`` objects ``found`` (a list's items), those with this
    ApplySet's label, not ``applied`` ((group, kind, namespace, name)), that ``manager``
    applied."""
    out = []
    for obj in found:
        metadata = obj.get("metadata") or {}
        if (metadata.get("labels") or {}).get(PART_OF_LABEL) != set_id:
            continue
        key = (group, kind, str(metadata.get("namespace") or ""), str(metadata.get("name")))
        if key not in applied and managed_by(obj, manager):
            out.append(obj)
    return out


@dataclass(frozen=True)
class Choice:
    """The ApplySet of one apply: its parent, and whether this apply prunes."""

    name: str
    namespace: str
    prune: bool


def choose_applyset(
    prune: bool | None,
    name: str | None,
    setting: ApplySetSetting | None,
    cluster: str | None,
    namespace: str,
) -> Choice | None:
    """The ApplySet an apply is a member of, from ``--prune``/``--no-prune`` (``prune``,
    None when neither is given), ``--applyset`` (``name``), the cluster's setting (with
    its defaults filled in) and the apply namespace; None: a member of none.

    >>> choose_applyset(True, None, None, "prod", "ml")
    Choice(name='trainc-prod', namespace='ml', prune=True)
    >>> choose_applyset(None, None, None, None, "ml") is None
    True
    """
    if setting is None:
        if name is not None and not prune:
            raise UsageError("trainc apply: --applyset goes with --prune")
        if not prune:
            return None
        return Choice(name or (f"trainc-{cluster}" if cluster else "trainc"), namespace, True)
    assert setting.name is not None and setting.namespace is not None
    if name is not None and name != setting.name:
        raise UsageError(
            f"trainc apply: --applyset {name}: cluster {cluster}'s ApplySet is "
            f"{setting.name} (trainc.yaml applyset): one ApplySet per cluster, so that every "
            "apply carries the same membership"
        )
    return Choice(setting.name, setting.namespace, setting.prune if prune is None else prune)


def kept_membership(desired: Json, live: Json, owned: Json) -> str | None:
    """The ApplySet id to send again on ``desired`` when an apply that is a member of no
    ApplySet applies it: the live object's ``part-of`` label, if this field manager set
    it (``owned``: its field set) and ``desired`` does not say otherwise. Without it, the
    apply would remove the label (see the module docstring)."""
    labels = (desired.get("metadata") or {}).get("labels") or {}
    if PART_OF_LABEL in labels:
        return None
    value = ((live.get("metadata") or {}).get("labels") or {}).get(PART_OF_LABEL)
    owned_labels = (owned.get("f:metadata") or {}).get("f:labels") or {}
    if isinstance(value, str) and f"f:{PART_OF_LABEL}" in owned_labels:
        return value
    return None
