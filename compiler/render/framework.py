"""The runtime framework: plugins grouped by phase, run in upstream's phase order (R-2.1).

    newRuntimeInfo -> EnforceMLPolicy -> EnforcePodGroupPolicy -> PodNetwork
                   -> SyncParallelCount -> Build

A plugin implements any subset of the phase interfaces below. Upstream runs the
plugins of one phase in Go map order (random); trainc runs them in the fixed order
of ``compiler.render.registry`` (R-2.3), which is documented there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from compiler.errors import FieldError
from compiler.render.info import Info, JsonObject
from compiler.upstream.names import TRAINER_API_VERSION, TRAINJOB_KIND
from compiler.upstream.versions import DEFAULT_TRAINER_VERSION


@dataclass(frozen=True)
class RenderOptions:
    """Choices that are not part of the inputs."""

    # Upstream always sets an owner reference to the TrainJob; in resolved mode no
    # TrainJob exists, so trainc writes one only when given the UID to reproduce.
    owner_uid: str | None = None
    # The Trainer release whose controller and webhooks are emulated; plugins read it
    # through the gates declared at their top (compiler.upstream.versions.Gate).
    trainer_version: str = DEFAULT_TRAINER_VERSION


@dataclass
class TrainJobContext:
    """The TrainJob being rendered, and the options."""

    trainjob: JsonObject
    options: RenderOptions = field(default_factory=RenderOptions)

    @property
    def name(self) -> str:
        return str(self.trainjob["metadata"]["name"])

    @property
    def namespace(self) -> str:
        return str(self.trainjob["metadata"].get("namespace") or "default")

    @property
    def spec(self) -> JsonObject:
        spec: JsonObject = self.trainjob.setdefault("spec", {})
        return spec

    @property
    def trainer_version(self) -> str:
        return self.options.trainer_version

    @property
    def trainer(self) -> JsonObject | None:
        trainer: JsonObject | None = self.spec.get("trainer")
        return trainer

    def owner_references(self) -> list[JsonObject]:
        if self.options.owner_uid is None:
            return []
        return [
            {
                "apiVersion": TRAINER_API_VERSION,
                "kind": TRAINJOB_KIND,
                "name": self.name,
                "uid": self.options.owner_uid,
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ]

    def object_metadata(self) -> JsonObject:
        """``metadata`` of an object the controller creates for this TrainJob."""
        metadata: JsonObject = {"name": self.name, "namespace": self.namespace}
        if owners := self.owner_references():
            metadata["ownerReferences"] = owners
        return metadata


class Plugin(Protocol):
    name: str


# A plugin names the phases it implements by subclassing their interfaces, as upstream's
# plugins assert ``var _ framework.EnforceMLPolicyPlugin = (*Torch)(nil)``. mypy then
# refuses to instantiate a plugin that lacks (or misspells) a declared phase method, and
# :meth:`Phases.of` refuses one whose methods and declarations disagree.


class EnforceMLPolicyPlugin(Plugin, Protocol):
    def enforce_ml_policy(self, info: Info, job: TrainJobContext) -> None: ...


class EnforcePodGroupPolicyPlugin(Plugin, Protocol):
    def enforce_pod_group_policy(self, info: Info, job: TrainJobContext) -> None: ...


class PodNetworkPlugin(Plugin, Protocol):
    def identify_pod_network(self, info: Info, job: TrainJobContext) -> None: ...


class ComponentBuilderPlugin(Plugin, Protocol):
    def sync_parallel_count(self, info: Info) -> None: ...

    def build(self, info: Info, job: TrainJobContext) -> list[JsonObject]: ...


class CustomValidationPlugin(Plugin, Protocol):
    def validate(self, info: Info, job: TrainJobContext) -> list[FieldError]: ...


class AmendObjectsPlugin(Plugin, Protocol):
    """Not an upstream phase: trainc's opt-in extensions (``compiler.render.extensions``)
    rewrite the built objects here (a hostfile format, pod-template fields no Info carries).
    No upstream plugin implements it, so without extensions nothing runs."""

    def amend(self, objects: list[JsonObject], info: Info, job: TrainJobContext) -> None: ...


PHASE_INTERFACES: dict[type, tuple[str, ...]] = {
    EnforceMLPolicyPlugin: ("enforce_ml_policy",),
    EnforcePodGroupPolicyPlugin: ("enforce_pod_group_policy",),
    PodNetworkPlugin: ("identify_pod_network",),
    ComponentBuilderPlugin: ("sync_parallel_count", "build"),
    CustomValidationPlugin: ("validate",),
    AmendObjectsPlugin: ("amend",),
}


def _defines(cls: type, method: str) -> bool:
    """Whether ``cls`` (not a phase interface) defines ``method``."""
    return any(
        method in vars(base)
        for base in cls.__mro__
        if base not in PHASE_INTERFACES and base not in (Plugin, Protocol, object)
    )


def declared_phases(plugin: object) -> tuple[type, ...]:
    """The phase interfaces a plugin declares; a TypeError when its methods disagree.

    >>> class Typo(EnforceMLPolicyPlugin):
    ...     name = "Typo"
    ...     def enforce_ml_polcy(self, info, job): ...
    >>> declared_phases(Typo())
    Traceback (most recent call last):
    ...
    TypeError: plugin Typo declares EnforceMLPolicyPlugin but does not define enforce_ml_policy
    """
    cls = type(plugin)
    name = getattr(plugin, "name", cls.__name__)
    declared = tuple(i for i in PHASE_INTERFACES if i in cls.__mro__)
    for interface, methods in PHASE_INTERFACES.items():
        for method in methods:
            defined = _defines(cls, method)
            if interface in declared and not defined:
                raise TypeError(
                    f"plugin {name} declares {interface.__name__} but does not define {method}"
                )
            if defined and interface not in declared:
                raise TypeError(
                    f"plugin {name} defines {method} but does not declare {interface.__name__}"
                )
    if not declared:
        raise TypeError(f"plugin {name} declares no phase")
    return declared


@dataclass(frozen=True)
class Phases:
    """The plugins of each phase, in registry order; computed once per plugin list."""

    ml_policy: tuple[EnforceMLPolicyPlugin, ...]
    pod_group_policy: tuple[EnforcePodGroupPolicyPlugin, ...]
    pod_network: tuple[PodNetworkPlugin, ...]
    component_builders: tuple[ComponentBuilderPlugin, ...]
    custom_validation: tuple[CustomValidationPlugin, ...]
    amend_objects: tuple[AmendObjectsPlugin, ...] = ()

    @classmethod
    def of(cls, plugins: list[Plugin]) -> Phases:
        declared = [(plugin, declared_phases(plugin)) for plugin in plugins]

        def having(interface: type) -> tuple[Any, ...]:
            return tuple(p for p, phases in declared if interface in phases)

        return cls(
            ml_policy=having(EnforceMLPolicyPlugin),
            pod_group_policy=having(EnforcePodGroupPolicyPlugin),
            pod_network=having(PodNetworkPlugin),
            component_builders=having(ComponentBuilderPlugin),
            custom_validation=having(CustomValidationPlugin),
            amend_objects=having(AmendObjectsPlugin),
        )


def run_phases(phases: Phases, info: Info, job: TrainJobContext) -> list[JsonObject]:
    """Run every phase after newRuntimeInfo and return the built objects, in plugin order."""
    for ml in phases.ml_policy:
        ml.enforce_ml_policy(info, job)
    for pod_group in phases.pod_group_policy:
        pod_group.enforce_pod_group_policy(info, job)
    for network in phases.pod_network:
        network.identify_pod_network(info, job)
    for builder in phases.component_builders:
        builder.sync_parallel_count(info)
    objects: list[JsonObject] = []
    for builder in phases.component_builders:
        objects.extend(builder.build(info, job))
    for amender in phases.amend_objects:
        amender.amend(objects, info, job)
    return objects


def run_validation(phases: Phases, info: Info, job: TrainJobContext) -> list[FieldError]:
    """The admission checks: on an Info built by newRuntimeInfo alone (R-12); they only read."""
    errors: list[FieldError] = []
    for plugin in phases.custom_validation:
        errors.extend(plugin.validate(info, job))
    return errors
