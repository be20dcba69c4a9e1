"""The queue setup among the inputs: Kueue's objects, LimitRanges, RuntimeClasses.

Found by kind among the objects the loader keeps as they are (``LoadResult.others``), like
policies and overlays are: ``kueue.x-k8s.io`` ResourceFlavor, ClusterQueue, Cohort,
LocalQueue, WorkloadPriorityClass (and Workload) go through the API server's create path
with the pinned Kueue release's CRDs (schema, defaults, CEL rules); core ``v1``
LimitRange and ``node.k8s.io/v1`` RuntimeClass are checked for what Kueue reads of them
(quantities); a ``config.kueue.x-k8s.io/v1beta2`` Configuration gives Kueue's
``resources`` settings (excluded prefixes, transformations), which default to none::

    >>> setup, problems = queue_setup([])
    >>> setup.cluster_queues, problems
    ({}, [])
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any

from compiler.apiserver.crd_rules import check_rules
from compiler.apiserver.crds import CrdSet, admit, load_crd, make_crd_set
from compiler.apiserver.manifest import Manifest
from compiler.errors import FieldError, Problem
from compiler.kube.quantity import Quantity, QuantityError
from compiler.upstream.artifacts import kueue_upstream, upstream
from compiler.upstream.versions import DEFAULT_TRAINER_VERSION, KUEUE_VERSION

__all__ = [
    "KUEUE_GROUP",
    "KUEUE_KINDS",
    "QueueSetup",
    "ResourcesConfig",
    "is_queue_object",
    "kueue_crds",
    "queue_setup",
]

KUEUE_GROUP = "kueue.x-k8s.io"
KUEUE_KINDS = frozenset(
    {
        "ResourceFlavor",
        "ClusterQueue",
        "Cohort",
        "LocalQueue",
        "WorkloadPriorityClass",
        "Workload",
    }
)
CONFIG_API_VERSION = "config.kueue.x-k8s.io/v1beta2"
_CORE_KINDS = {("v1", "LimitRange"), ("node.k8s.io/v1", "RuntimeClass")}


@cache
def kueue_crds(version: str = KUEUE_VERSION) -> CrdSet:
    """The pinned Kueue release's CRDs, every served version (v1beta1 and v1beta2), keyed
    ``(apiVersion, kind)``; ObjectMeta's shape comes from the Trainer's OpenAPI document."""
    paths = kueue_upstream(version).input_crd_paths()
    base = make_crd_set(paths, upstream(DEFAULT_TRAINER_VERSION).openapi_path)
    served = {
        (f"{info.group}/{info.version}", info.kind): info
        for path in paths
        for info in load_crd(path)
    }
    return replace(base, crds=served)


@dataclass(frozen=True)
class Transformation:
    """One of Kueue's ``resources.transformations``."""

    input: str
    retain: bool  # strategy Retain (the default) or Replace
    multiply_by: str
    outputs: tuple[tuple[str, Quantity], ...]


@dataclass(frozen=True)
class ResourcesConfig:
    """Kueue's ``Configuration.resources``: what a Workload's requests count."""

    exclude_prefixes: tuple[str, ...] = ()
    transformations: tuple[Transformation, ...] = ()


@dataclass
class QueueSetup:
    """The queue objects of one build, by name (namespaced ones by (namespace, name))."""

    flavors: dict[str, Manifest] = field(default_factory=dict)
    cluster_queues: dict[str, Manifest] = field(default_factory=dict)
    cohorts: dict[str, Manifest] = field(default_factory=dict)
    local_queues: dict[tuple[str, str], Manifest] = field(default_factory=dict)
    priority_classes: dict[str, Manifest] = field(default_factory=dict)
    limit_ranges: list[Manifest] = field(default_factory=list)
    runtime_classes: dict[str, Manifest] = field(default_factory=dict)
    resources: ResourcesConfig = ResourcesConfig()

    @property
    def empty(self) -> bool:
        return not (self.flavors or self.cluster_queues or self.cohorts or self.local_queues)


def is_queue_object(manifest: Manifest) -> bool:
    group = manifest.api_version.rpartition("/")[0]
    return (
        (group == KUEUE_GROUP and manifest.kind in KUEUE_KINDS)
        or (manifest.api_version, manifest.kind) in _CORE_KINDS
        or (manifest.api_version == CONFIG_API_VERSION and manifest.kind == "Configuration")
    )


def _problem(manifest: Manifest, error: FieldError, rule: str) -> Problem:
    field_text = "<nil>" if error.field == "" else error.field
    return Problem(error.message, manifest.locate(error.path), manifest.ref, field_text, rule)


def _admit_kueue(manifest: Manifest, crds: CrdSet) -> list[Problem]:
    """The API server's create path for a Kueue object (cluster-scoped ones keep no
    namespace; namespaced ones default to ``default`` like ``kubectl`` would)."""
    crd = crds.crds.get((manifest.api_version, manifest.kind))
    if crd is None:
        message = f'no matches for kind "{manifest.kind}" in version "{manifest.api_version}"'
        return [Problem(message, manifest.locate(("kind",)), manifest.ref, None, "crd-schema")]
    data = manifest.data
    meta = data.setdefault("metadata", {})
    if crd.namespaced and isinstance(meta, dict) and not meta.get("namespace"):
        meta["namespace"] = "default"
    errors = admit(data, crd, crds)
    rules = check_rules(data, crd, errors, kubernetes=crds.kubernetes)
    return [_problem(manifest, e, "crd-schema") for e in errors] + [
        _problem(manifest, e, "crd-cel") for e in rules
    ]


def _quantities(manifest: Manifest, path: tuple[str | int, ...], value: Any) -> list[Problem]:
    """Every quantity of a ``ResourceList`` at ``path`` must parse (the API server's rule)."""
    if value is None:
        return []
    if not isinstance(value, dict):
        return [
            Problem(
                "must be a map of resource names to quantities",
                manifest.locate(path),
                manifest.ref,
                ".".join(str(p) for p in path),
                "queue",
            )
        ]
    problems = []
    for name, quantity in value.items():
        try:
            Quantity.from_manifest(quantity)
        except (QuantityError, ValueError, TypeError) as error:
            problems.append(
                Problem(
                    f"invalid quantity {quantity!r}: {error}",
                    manifest.locate((*path, name)),
                    manifest.ref,
                    ".".join(str(p) for p in (*path, name)),
                    "queue",
                )
            )
    return problems


def _shape(
    manifest: Manifest, path: tuple[str | int, ...], value: Any, kind: type
) -> list[Problem]:
    """``value`` (when set) must be a ``kind`` (dict: an object, list: an array)."""
    if value is None or isinstance(value, kind):
        return []
    what = "an object" if kind is dict else ("an array" if kind is list else "a string")
    field_text = ".".join(str(p) for p in path)
    return [Problem(f"must be {what}", manifest.locate(path), manifest.ref, field_text, "queue")]


def _check_core(manifest: Manifest) -> list[Problem]:
    """What Kueue reads of a RuntimeClass (``overhead.podFixed``) or a LimitRange
    (``spec.limits[*]``: ``type``, ``default``, ``defaultRequest``, ``max``, ``min``)."""
    data = manifest.data
    if manifest.kind == "RuntimeClass":
        overhead = data.get("overhead")
        found = _shape(manifest, ("overhead",), overhead, dict)
        if found or overhead is None:
            return found
        return _quantities(manifest, ("overhead", "podFixed"), overhead.get("podFixed"))
    spec = data.get("spec")
    found = _shape(manifest, ("spec",), spec, dict)
    limits = spec.get("limits") if isinstance(spec, dict) else None
    found += _shape(manifest, ("spec", "limits"), limits, list)
    if found or limits is None:
        return found
    for index, item in enumerate(limits):
        path = ("spec", "limits", index)
        if not isinstance(item, dict):
            found += _shape(manifest, path, item if item is not None else 0, dict)
            continue
        found += _shape(manifest, (*path, "type"), item.get("type"), str)
        for key in ("default", "defaultRequest", "max", "min"):
            found += _quantities(manifest, (*path, key), item.get(key))
    return found


def _resources_config(manifest: Manifest) -> tuple[ResourcesConfig, list[Problem]]:
    """Kueue's ``Configuration.resources``: excluded prefixes and transformations."""
    resources = manifest.data.get("resources")
    problems = _shape(manifest, ("resources",), resources, dict)
    if problems or resources is None:
        return ResourcesConfig(), problems
    prefixes = resources.get("excludeResourcePrefixes")
    items = resources.get("transformations")
    problems += _shape(manifest, ("resources", "excludeResourcePrefixes"), prefixes, list)
    problems += _shape(manifest, ("resources", "transformations"), items, list)
    if problems:
        return ResourcesConfig(), problems
    for index, prefix in enumerate(prefixes or ()):
        problems += _shape(manifest, ("resources", "excludeResourcePrefixes", index), prefix, str)
    transformations = []
    for index, item in enumerate(items or ()):
        path: tuple[str | int, ...] = ("resources", "transformations", index)
        if not isinstance(item, dict):
            problems += _shape(manifest, path, item if item is not None else 0, dict)
            continue
        found = [
            *_shape(manifest, (*path, "input"), item.get("input") or 0, str),
            *_shape(manifest, (*path, "strategy"), item.get("strategy"), str),
            *_shape(manifest, (*path, "multiplyBy"), item.get("multiplyBy"), str),
            *_quantities(manifest, (*path, "outputs"), item.get("outputs")),
        ]
        problems += found
        if found:
            continue
        transformations.append(
            Transformation(
                item["input"],
                (item.get("strategy") or "Retain") == "Retain",
                item.get("multiplyBy") or "",
                tuple(
                    (str(k), Quantity.from_manifest(v))
                    for k, v in (item.get("outputs") or {}).items()
                ),
            )
        )
    config = ResourcesConfig(tuple(str(p) for p in prefixes or ()), tuple(transformations))
    return config, problems


def queue_setup(objects: Iterable[Manifest]) -> tuple[QueueSetup, list[Problem]]:
    """The queue setup of ``objects`` (any kinds; others are ignored) and its problems.

    An object the API server would refuse is reported and left out of the setup.
    """
    setup = QueueSetup()
    problems: list[Problem] = []
    for manifest in objects:
        if not is_queue_object(manifest):
            continue
        if manifest.kind == "Configuration":
            setup.resources, found = _resources_config(manifest)
            problems += found
            continue
        if manifest.api_version.startswith(KUEUE_GROUP + "/"):
            found = _admit_kueue(manifest, kueue_crds())
        else:
            found = _check_core(manifest)
        problems += found
        if found:
            continue
        name, namespace = manifest.name, manifest.namespace or "default"
        if manifest.kind == "ResourceFlavor":
            setup.flavors[name] = manifest
        elif manifest.kind == "ClusterQueue":
            setup.cluster_queues[name] = manifest
        elif manifest.kind == "Cohort":
            setup.cohorts[name] = manifest
        elif manifest.kind == "LocalQueue":
            setup.local_queues[(namespace, name)] = manifest
        elif manifest.kind == "WorkloadPriorityClass":
            setup.priority_classes[name] = manifest
        elif manifest.kind == "LimitRange":
            setup.limit_ranges.append(manifest)
        elif manifest.kind == "RuntimeClass":
            setup.runtime_classes[name] = manifest
    return setup, problems
