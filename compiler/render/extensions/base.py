"""What every extension shares: how a runtime declares one, and parameter parsing.

A runtime declares extensions in ``metadata.annotations``, the one place of a
``ClusterTrainingRuntime``/``TrainingRuntime`` that the v2.3.0 CRD keeps as written
(``spec.mlPolicy`` admits only upstream's members and enums, so ``mpiImplementation:
Intel`` would be refused by the API server)::

    metadata:
      annotations:
        trainc.dev/extensions: elastic-torch,yunikorn     # which, comma-separated
        elastic-torch.trainc.dev/min-nodes: "2"           # <extension>.trainc.dev/<parameter>
        elastic-torch.trainc.dev/max-nodes: "4"

The same runtime loads unchanged in a cluster running the Trainer, which ignores the
annotations: that is why ``--emit trainjobs`` refuses a runtime that declares one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from compiler.render.info import JsonObject, PodSet
from compiler.upstream.names import NODE

DECLARATION = "trainc.dev/extensions"
PARAMETER_DOMAIN = ".trainc.dev/"

# (annotation key or "" for the declaration itself, message)
AnnotationProblem = tuple[str, str]
Parameters = Mapping[str, object]


def parameter_key(extension: str, parameter: str) -> str:
    return f"{extension}{PARAMETER_DOMAIN}{parameter}"


def integer(minimum: int, maximum: int | None = None) -> Callable[[str], object]:
    """A decimal integer in [minimum, maximum]."""

    def parse(text: str) -> object:
        if not re.fullmatch(r"-?[0-9]+", text):
            raise ValueError(f"{text!r} is not an integer")
        value = int(text)
        if value < minimum or (maximum is not None and value > maximum):
            upper = "" if maximum is None else f" and at most {maximum}"
            raise ValueError(f"must be at least {minimum}{upper}, got {value}")
        return value

    return parse


def choice(*values: str) -> Callable[[str], object]:
    def parse(text: str) -> object:
        if text not in values:
            raise ValueError(f"{text!r} is not one of {', '.join(values)}")
        return text

    return parse


def text(value: str) -> object:
    if not value:
        raise ValueError("must not be empty")
    return value


class ExtensionPlugin:
    """What every extension plugin carries besides its phases: the runtime annotations it
    was built from, so that ``explain`` names them as the inputs of what it sets."""

    name: str
    runtime_inputs: tuple[str, ...] = ()


@dataclass(frozen=True)
class Parameter:
    name: str
    parse: Callable[[str], object]
    doc: str


@dataclass(frozen=True)
class Extension:
    """One extension: its parameters, what it needs of the runtime, and its plugin."""

    name: str
    summary: str
    plugin: Callable[[Parameters], ExtensionPlugin]
    parameters: tuple[Parameter, ...] = ()
    # problems with the runtime's spec (messages), given the parsed parameters
    check_runtime: Callable[[JsonObject, Parameters], list[str]] = field(
        default=lambda spec, params: []
    )
    # extensions that cannot be declared together with this one
    conflicts: tuple[str, ...] = ()


def runtime_annotations(runtime: JsonObject) -> dict[str, str]:
    annotations = (runtime.get("metadata") or {}).get("annotations") or {}
    return {str(k): str(v) for k, v in annotations.items()}


def declared_names(annotations: Mapping[str, str]) -> list[str]:
    """The extensions named in ``trainc.dev/extensions``, in order, blanks dropped."""
    value = annotations.get(DECLARATION, "")
    return [name.strip() for name in value.split(",") if name.strip()]


def declares_extensions(annotations: Mapping[str, str]) -> bool:
    """Whether a runtime uses any extension annotation (the declaration or a parameter)."""
    return DECLARATION in annotations or any(
        PARAMETER_DOMAIN in key and key.split("/", 1)[0].endswith(".trainc.dev")
        for key in annotations
    )


def role_job_problems(extension: str, roles: Iterable[JsonObject]) -> list[str]:
    """What a v1 replica type needs of the replicated job that stands for it: one replica
    (the JobSet layout has one template per role) and the ``node`` container (the v1
    webhooks' default-container rule)."""
    problems = []
    for rjob in roles:
        if rjob.get("replicas", 1) != 1:
            problems.append(f"{extension}: replicated job {rjob['name']} must have replicas 1")
        pod = (((rjob.get("template") or {}).get("spec") or {}).get("template") or {}).get("spec")
        if not any(c.get("name") == NODE for c in (pod or {}).get("containers") or ()):
            problems.append(f"{extension}: replicated job {rjob['name']} needs a container node")
    return problems


def node_port(pod_set: PodSet, name: str, default: int) -> int:
    """The port named ``name`` of the pod set's ``node`` container, else ``default``
    (the v1 operators' default port of a replica type)."""
    container = pod_set.container(NODE)
    for port in container.ports if container is not None else ():
        if port.get("name") == name:
            value: int = port["containerPort"]
            return value
    return default
