"""The ``trainc.yaml`` project file, as typed data (pydantic v2, unknown fields rejected).

::

    inputs:
      runtimes: [runtimes/]              # files, folders or globs (``**`` allowed)
      jobs: ["jobs/**/*.yaml"]
      policies: [../policies/required-labels]   # policy folders (their ``tests/`` skipped)
      overlays: []                       # base layer: every cluster
    output: rendered                     # trainc render (no paths) writes <output>/<cluster>/
    clusters:
      - name: production
        trainer: v2.3.0                  # the Trainer release it runs: v2.1.0, v2.2.0 or v2.3.0
        kubernetes: v1.31.0
        defaultNamespace: default
        schedulers: [coscheduling, kueue]
        overlays: [overlays/production]  # cluster layer
        policies: []                     # in addition to inputs.policies
        delivery: resolved               # trainc apply: resolved objects, or trainjobs
        applyset:                        # trainc apply: every apply is a member of this ApplySet
          name: trainc-production        # its parent Secret (default: trainc-<cluster>)
          namespace: default             # the parent's namespace (default: defaultNamespace)
          prune: true                    # every apply prunes, as --prune (default: false)
        extensions: [intel-mpi, yunikorn]  # opt-in, beyond upstream (resolved delivery only)
        kueue:                           # when schedulers lists kueue
          version: v0.17.0               # the Kueue release it runs (Trainer skew warning)
          jobSets: true                  # resolved delivery: JobSets to Kueue's JobSet
                                         # integration (queue label, suspend: true)
        gitops:                          # delivery hints, all off unless set (GitOps)
          syncWaves: true                # Argo CD: PodGroups, ConfigMaps before JobSets
          serverSideApply: true          # Argo CD: ServerSideApply=true
          immutableChange: replace       # Argo CD: Replace=true (force-replace: Force=true,
                                         # Replace=true); both destructive
          fluxSubstitute: disabled       # Flux: kustomize.toolkit.fluxcd.io/substitute
          kustomization: true            # write <output>/<cluster>/kustomization.yaml
        namespaces:
          - name: vision
            labels: {team: vision}
            overlays: []                 # namespace layer: objects in ``vision`` only

Every path is relative to the folder of the project file. Validation errors are
reported at the ``file:line:col`` of the offending key (see :func:`validation_problems`).
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic.alias_generators import to_camel

from compiler.apiserver.manifest import SourceMap
from compiler.errors import JsonPath, Problem
from compiler.upstream.versions import (
    DEFAULT_TRAINER_VERSION,
    KUEUE_TRAINER_VERSIONS,
    MEASURED_TRAINER_VERSIONS,
    TRAINER_VERSIONS,
)

__all__ = [
    "SCHEDULERS",
    "SUPPORTED_TRAINER_VERSIONS",
    "ApplySetSetting",
    "Cluster",
    "GitOps",
    "Inputs",
    "Kueue",
    "Namespace",
    "ProjectSpec",
    "valid_secret_name",
    "validation_problems",
]

SUPPORTED_TRAINER_VERSIONS = TRAINER_VERSIONS
SCHEDULERS = ("coscheduling", "volcano", "kueue")
Scheduler = Literal["coscheduling", "volcano", "kueue"]
# compiler.render.extensions.catalog.NAMES (a test keeps the two equal)
Extension = Literal["intel-mpi", "mpich", "tensorflow", "paddlepaddle", "elastic-torch", "yunikorn"]

# RFC 1123 label: what Kubernetes accepts as a namespace name.
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
# a cluster name becomes a folder name under the output path
_CLUSTER_NAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")
_KUBERNETES_VERSION = re.compile(r"^v?1\.\d+(\.\d+)?$")
# RFC 1123 subdomain: what Kubernetes accepts as a Secret's name
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")

NonEmpty = Annotated[str, Field(min_length=1)]


class _Model(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        alias_generator=to_camel,
        populate_by_name=True,
        strict=True,  # no "1" -> 1 coercions: YAML already gave the types
    )


class Inputs(_Model):
    runtimes: list[NonEmpty] = []
    jobs: list[NonEmpty] = []
    policies: list[NonEmpty] = []
    overlays: list[NonEmpty] = []


class Namespace(_Model):
    name: str
    labels: dict[str, str] = {}
    overlays: list[NonEmpty] = []

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not _DNS_LABEL.match(value):
            raise ValueError(f"{value!r} is not a valid namespace name (lowercase RFC 1123 label)")
        return value


class GitOps(_Model):
    """Delivery hints for GitOps controllers (annotations on every rendered object and a
    kustomization file); each is off unless set. See :mod:`compiler.plan.gitops`."""

    # argocd.argoproj.io/sync-wave: "-1" on everything but the workload (JobSet,
    # TrainJob), "0" on the workload, so PodGroups and ConfigMaps exist first
    sync_waves: bool = False
    # argocd.argoproj.io/sync-options: ServerSideApply=true
    server_side_apply: bool = False
    # what Argo CD does when an immutable field changes: replace (Replace=true: kubectl
    # replace/create) or force-replace (Force=true,Replace=true: delete and recreate);
    # both are destructive for a running JobSet
    immutable_change: Literal["replace", "force-replace"] | None = None
    # kustomize.toolkit.fluxcd.io/substitute: disabled (Flux postBuild leaves ${VAR} alone)
    flux_substitute: Literal["disabled"] | None = None
    # write kustomization.yaml (resources: every rendered file, sorted) in the cluster folder
    kustomization: bool = False


def valid_secret_name(name: str) -> bool:
    """Whether the API server accepts ``name`` as a Secret's name (RFC 1123 subdomain)."""
    return len(name) <= 253 and _DNS_SUBDOMAIN.match(name) is not None


class ApplySetSetting(_Model):
    """``trainc apply``'s ApplySet for one cluster (:mod:`compiler.deliver.apply.applyset`):
    every apply of the cluster labels what it applies as a member, so membership never
    depends on who ran which command with which flags; ``prune`` makes every apply prune
    (without it, ``--prune`` does). ``name`` and ``namespace`` fix the parent Secret, and
    with it the ApplySet id, whatever the kubeconfig context's namespace."""

    name: str | None = None  # default: trainc-<cluster>
    namespace: str | None = None  # default: the cluster's defaultNamespace
    prune: bool = False

    @field_validator("name")
    @classmethod
    def _name(cls, value: str | None) -> str | None:
        if value is not None and not valid_secret_name(value):
            raise ValueError(
                f"{value!r} is not a valid Secret name (the ApplySet parent's; lowercase RFC "
                "1123 subdomain: letters, digits, '-' and '.', at most 253 characters)"
            )
        return value

    @field_validator("namespace")
    @classmethod
    def _namespace(cls, value: str | None) -> str | None:
        if value is not None and not _DNS_LABEL.match(value):
            raise ValueError(f"{value!r} is not a valid namespace name (lowercase RFC 1123 label)")
        return value


class Kueue(_Model):
    """What the cluster's Kueue does with queued jobs (docs/integrations/kueue.md)."""

    # the Kueue release the cluster runs: the Trainer it embeds computes TrainJob Workloads
    version: str | None = None
    # resolved delivery: the JobSets go to Kueue's JobSet integration, queue-labelled and
    # suspended, instead of starting outside every quota
    job_sets: bool = False

    @field_validator("version")
    @classmethod
    def _version(cls, value: str | None) -> str | None:
        if value is not None and value not in KUEUE_TRAINER_VERSIONS:
            known = ", ".join(KUEUE_TRAINER_VERSIONS)
            raise ValueError(f"Kueue version {value!r} is not known to trainc: it knows {known}")
        return value


class Cluster(_Model):
    name: str
    trainer: str = DEFAULT_TRAINER_VERSION
    kubernetes: str | None = None
    default_namespace: str = "default"
    namespaces: list[Namespace] = []
    # None: not declared, so not checked; [] : no gang scheduler and no Kueue
    schedulers: list[Scheduler] | None = None
    overlays: list[NonEmpty] = []
    policies: list[NonEmpty] = []
    # what trainc apply pushes: the resolved objects, or the TrainJobs and runtimes
    delivery: Literal["resolved", "trainjobs"] = "resolved"
    # trainc apply's ApplySet: None, membership only with --prune (and --applyset)
    applyset: ApplySetSetting | None = None
    gitops: GitOps = GitOps()
    # opt-in behaviour beyond upstream (compiler.render.extensions); off unless listed
    extensions: list[Extension] = []
    kueue: Kueue = Kueue()

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not _CLUSTER_NAME.match(value):
            raise ValueError(
                f"{value!r} is not a valid cluster name (letters, digits, '-', '_', '.'; "
                "it names the output folder)"
            )
        return value

    @field_validator("trainer")
    @classmethod
    def _trainer(cls, value: str) -> str:
        if value not in SUPPORTED_TRAINER_VERSIONS:
            supported = ", ".join(SUPPORTED_TRAINER_VERSIONS)
            why = (
                " (its differences are recorded in docs/trainer-versions.md, "
                "but it is not emulated yet)"
                if value in MEASURED_TRAINER_VERSIONS
                else ""
            )
            raise ValueError(
                f"Trainer version {value!r} is not supported{why}: trainc emulates {supported}"
            )
        return value

    @field_validator("kubernetes")
    @classmethod
    def _kubernetes(cls, value: str | None) -> str | None:
        if value is not None and not _KUBERNETES_VERSION.match(value):
            raise ValueError(f"{value!r} is not a Kubernetes version (e.g. v1.31 or v1.31.2)")
        return value

    @field_validator("default_namespace")
    @classmethod
    def _default_namespace(cls, value: str) -> str:
        if not _DNS_LABEL.match(value):
            raise ValueError(f"{value!r} is not a valid namespace name (lowercase RFC 1123 label)")
        return value

    @field_validator("extensions")
    @classmethod
    def _extensions(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError("an extension is listed twice")
        return value

    @field_validator("schedulers")
    @classmethod
    def _schedulers(cls, value: list[str] | None) -> list[str] | None:
        if value is not None and len(set(value)) != len(value):
            raise ValueError("a scheduler is listed twice")
        return value

    def resolved_applyset(self) -> ApplySetSetting | None:
        """``applyset`` with its defaults filled in (name and namespace), if set."""
        if self.applyset is None:
            return None
        return ApplySetSetting(
            name=self.applyset.name or f"trainc-{self.name}",
            namespace=self.applyset.namespace or self.default_namespace,
            prune=self.applyset.prune,
        )

    def namespace(self, name: str) -> Namespace | None:
        return next((n for n in self.namespaces if n.name == name), None)

    def has_scheduler(self, scheduler: str) -> bool | None:
        """Whether the cluster runs ``scheduler``; None when ``schedulers`` is not declared."""
        return None if self.schedulers is None else scheduler in self.schedulers


class ProjectSpec(_Model):
    inputs: Inputs = Inputs()
    output: NonEmpty = "rendered"
    clusters: Annotated[list[Cluster], Field(min_length=1)]


def _json_path(loc: tuple[int | str, ...]) -> JsonPath:
    # pydantic appends the branch of a union or the validator's tag to the location;
    # keep only the parts that are keys and indexes of the document.
    return tuple(
        part
        for part in loc
        if isinstance(part, int) or not part.startswith(("function-", "literal["))
    )


def _field(path: JsonPath) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def _message(error: dict[str, object]) -> str:
    kind = error.get("type")
    message = str(error.get("msg", "invalid value"))
    if kind == "extra_forbidden":
        return "unknown field"
    if kind == "missing":
        return "required field is missing"
    return message.removeprefix("Value error, ")


def validation_problems(error: ValidationError, source: SourceMap) -> list[Problem]:
    """Each pydantic error as a Problem at the ``file:line:col`` of the field it is about."""
    problems = []
    for item in error.errors(include_url=False):
        path = _json_path(tuple(item["loc"]))
        problems.append(
            Problem(
                _message(dict(item)),
                source.locate(path),
                field_path=_field(path) or None,
                rule="project",
            )
        )
    return problems
