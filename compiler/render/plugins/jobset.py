"""The JobSet plugin: pod network, parallelism sync, the JobSet object, its admission checks.

Upstream: pkg/runtime/framework/plugins/jobset/{jobset,builder}.go (spec §8, §9, R-12.1, R-12.2).
"""

from __future__ import annotations

import re
from typing import Any

from compiler.errors import FieldError
from compiler.kube.quantity import canonical_quantity
from compiler.render import upsert
from compiler.render.framework import (
    ComponentBuilderPlugin,
    CustomValidationPlugin,
    PodNetworkPlugin,
    TrainJobContext,
)
from compiler.render.info import Info, JsonObject
from compiler.render.runtime_info import (
    MERGED_RESOURCES_PER_NODE,
    POD_TEMPLATE_OVERRIDES,
    RUNTIME_PATCHES,
)
from compiler.upstream.names import (
    ANCESTOR_TRAINER,
    DATASET_INITIALIZER,
    ENV_STORAGE_URI,
    JOBSET_API_VERSION,
    JOBSET_KIND,
    LABEL_ANCESTOR,
    MODEL_INITIALIZER,
    NODE,
    VOLUME_INITIALIZER,
)
from compiler.upstream.versions import Gate

NAME = "JobSet"

# Version differences of this plugin (docs/trainer-versions.md).
ENDPOINTS_OF_EVERY_REPLICA = Gate(
    "v2.3.0", "pod endpoints of every replica of a replicated job (before: replica 0 only)"
)
INITIALIZER_VOLUME_MOUNT_CHECK = Gate(
    "v2.3.0", "an initializer container must mount the 'initializer' volume (admission)"
)
# v2.0.0's builder gives the TrainJob's resourcesPerNode and env to the trainer jobs'
# node containers only; from v2.1.0 also to an MPI launcher that runs as a node.
LAUNCHER_AS_NODE_RESOURCES = Gate(
    "v2.1.0", "resourcesPerNode and trainer env on an MPI launcher-as-node's node container"
)
# v2.0.0's builder sets parallelism and completions of every trainer job to the count of
# the first trainer PodSet; from v2.1.0 each job keeps its own PodSet's count.
PER_JOB_TRAINER_COUNT = Gate(
    "v2.1.0", "each trainer job's parallelism is its own PodSet's count (before: the first's)"
)
OVERRIDES_PATH = "spec.podTemplateOverrides"
SPEC_OVERRIDES_PATH = "spec.podSpecOverrides"


def _pod_spec(rjob: JsonObject) -> JsonObject:
    pod_spec: JsonObject = rjob["template"]["spec"]["template"]["spec"]
    return pod_spec


def _job_labels(rjob: JsonObject) -> dict[str, str] | None:
    labels: dict[str, str] | None = ((rjob.get("template") or {}).get("metadata") or {}).get(
        "labels"
    )
    return labels


class JobSetPlugin(PodNetworkPlugin, ComponentBuilderPlugin, CustomValidationPlugin):
    name = NAME

    # --- PodNetwork (R-8.1): endpoints are computed lazily by PodSet.endpoints().
    def identify_pod_network(self, info: Info, job: TrainJobContext) -> None:
        if not ENDPOINTS_OF_EVERY_REPLICA.on(job.trainer_version):
            for pod_set in info.pod_sets:
                pod_set.replicas = 1  # upstream named the pods of replica 0 only

    # --- SyncParallelCount (R-7.1)
    def sync_parallel_count(self, info: Info) -> None:
        jobs = info.jobset_spec.get("replicatedJobs") or []
        for pod_set in info.pod_sets:
            for rjob in jobs:
                if rjob.get("name") == pod_set.name:
                    job_spec = rjob["template"].setdefault("spec", {})
                    job_spec["parallelism"] = pod_set.count
                    job_spec["completions"] = pod_set.count
                    break

    # --- Build (R-9.2 ... R-9.7)
    def build(self, info: Info, job: TrainJobContext) -> list[JsonObject]:
        spec = info.jobset_spec
        jobs: list[JsonObject] = spec.get("replicatedJobs") or []
        _materialize_pod_sets(info, jobs)
        metadata: JsonObject = {"name": job.name, "namespace": job.namespace}
        if info.labels:
            metadata["labels"] = dict(info.labels)
        if info.annotations:
            metadata["annotations"] = dict(info.annotations)
        _initializers(jobs, job)
        _trainer(jobs, info, job)
        for rjob in jobs:
            pod_metadata = rjob["template"]["spec"]["template"].setdefault("metadata", {})
            if info.pod_labels:
                pod_metadata.setdefault("labels", {}).update(info.pod_labels)
            if info.pod_annotations:
                pod_metadata.setdefault("annotations", {}).update(info.pod_annotations)
        spec["suspend"] = job.spec.get("suspend")
        if spec["suspend"] is None:
            del spec["suspend"]
        if owners := job.owner_references():
            metadata["ownerReferences"] = owners
        return [
            {
                "apiVersion": JOBSET_API_VERSION,
                "kind": JOBSET_KIND,
                "metadata": metadata,
                "spec": spec,
            }
        ]

    # --- CustomValidation (R-12.1, R-12.2)
    def validate(self, info: Info, job: TrainJobContext) -> list[FieldError]:
        return validate_trainjob(info, job)


def _materialize_pod_sets(info: Info, jobs: list[JsonObject]) -> None:
    """Write what plugins changed on PodSets back into the working spec (R-9.2)."""
    for index, pod_set in enumerate(info.pod_sets):
        pod_spec = _pod_spec(jobs[index])
        if pod_set.volumes:
            upsert.upsert_volumes(pod_spec.setdefault("volumes", []), pod_set.volumes)
        containers = pod_spec.get("containers") or []
        for c_index, container in enumerate(pod_set.containers):
            _write_container(containers[c_index], container)
        init_containers = pod_spec.setdefault("initContainers", [])
        for c_index, container in enumerate(pod_set.init_containers):
            if c_index >= len(init_containers):
                # Only the name is carried over to an init container a plugin added.
                init_containers.append({"name": container.name})
            _write_container(init_containers[c_index], container)
        if not init_containers:
            del pod_spec["initContainers"]


def _write_container(target: JsonObject, source: Any) -> None:
    if source.command:
        target["command"] = list(source.command)
    if source.image:
        target["image"] = source.image
    for key, values, merge_into in (
        ("env", source.env, upsert.upsert_env),
        ("ports", source.ports, upsert.upsert_ports),
        ("volumeMounts", source.volume_mounts, upsert.upsert_volume_mounts),
    ):
        if values:
            merge_into(target.setdefault(key, []), values)


def _initializers(jobs: list[JsonObject], job: TrainJobContext) -> None:
    """Initializer pass (R-9.3, R-11.1): matched by the ancestor label, not the job name."""
    initializer = job.spec.get("initializer") or {}
    for rjob in jobs:
        labels = _job_labels(rjob)
        if labels is None:
            continue
        for ancestor, section in ((DATASET_INITIALIZER, "dataset"), (MODEL_INITIALIZER, "model")):
            if labels.get(LABEL_ANCESTOR) != ancestor:
                continue
            rjob["replicas"] = 1
            config = initializer.get(section)
            if config is None:
                continue
            for container in _pod_spec(rjob).get("containers") or ():
                if container.get("name") != ancestor:
                    continue
                env = container.setdefault("env", [])
                if config.get("storageUri") is not None:
                    upsert.upsert_env(
                        env, [{"name": ENV_STORAGE_URI, "value": config["storageUri"]}]
                    )
                upsert.upsert_env(env, upsert.reencode_envs(config.get("env")))
                if config.get("secretRef") is not None:
                    container.setdefault("envFrom", []).append(
                        {"secretRef": {"name": config["secretRef"].get("name", "")}}
                    )


def _trainer(jobs: list[JsonObject], info: Info, job: TrainJobContext) -> None:
    """Trainer pass (R-9.4): image, command, args and env of the ``node`` containers
    (before v2.3.0 also their resources: :data:`MERGED_RESOURCES_PER_NODE`)."""
    trainer = job.trainer
    replaced_resources = _replaced_resources(job)
    launcher_as_node = info.run_launcher_as_node and LAUNCHER_AS_NODE_RESOURCES.on(
        job.trainer_version
    )
    first_trainer = info.pod_set_by_ancestor(ANCESTOR_TRAINER)
    for rjob in jobs:
        ancestor = (_job_labels(rjob) or {}).get(LABEL_ANCESTOR, "")
        containers = [c for c in _pod_spec(rjob).get("containers") or () if c.get("name") == NODE]
        if ancestor == ANCESTOR_TRAINER:
            rjob["replicas"] = 1
            if first_trainer is not None and not PER_JOB_TRAINER_COUNT.on(job.trainer_version):
                job_spec = rjob["template"].setdefault("spec", {})
                job_spec["parallelism"] = job_spec["completions"] = first_trainer.count
            if trainer is not None:
                for container in containers:
                    if trainer.get("image") is not None:
                        container["image"] = trainer["image"]
                    for key in ("command", "args"):
                        if trainer.get(key) is not None:
                            container[key] = list(trainer[key])
        if trainer is not None and (
            ancestor == ANCESTOR_TRAINER or (launcher_as_node and rjob.get("name") == NODE)
        ):
            for container in containers:
                if replaced_resources is not None:
                    container["resources"] = dict(replaced_resources)
                upsert.upsert_env(
                    container.setdefault("env", []), upsert.reencode_envs(trainer.get("env"))
                )


def _replaced_resources(job: TrainJobContext) -> JsonObject | None:
    """Before v2.3.0: the resources the builder puts on the trainer ``node`` containers
    instead of the runtime's (the TrainJob's limits and requests, nothing else)."""
    if MERGED_RESOURCES_PER_NODE.on(job.trainer_version):
        return None
    resources = (job.trainer or {}).get("resourcesPerNode")
    if resources is None or (resources.get("limits") is None and resources.get("requests") is None):
        return None
    return {
        key: {name: canonical_quantity(value) for name, value in sorted(resources[key].items())}
        for key in ("limits", "requests")
        if resources.get(key) is not None
    }


# --- admission checks -------------------------------------------------------------------

_DNS1123_SUBDOMAIN = re.compile(
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
)
_HTTP_PATH = re.compile(r"^[A-Za-z0-9/\-._~%!$&'()*+,;=:]+$")


def _domain_prefixed_path_errors(path: str, value: str) -> list[FieldError]:
    """apimachinery's IsDomainPrefixedPath: ``<DNS-1123 subdomain>/<http path>``."""
    if not value:
        return [FieldError("FieldValueRequired", path, "Required value")]
    segments = value.split("/", 1)
    if len(segments) != 2 or not segments[0] or not segments[1]:
        return [
            FieldError(
                "FieldValueInvalid",
                path,
                'must be a domain-prefixed path (such as "acme.io/foo")',
                value,
            )
        ]
    host, rest = segments
    errors: list[FieldError] = []
    if len(host) > 253 or not _DNS1123_SUBDOMAIN.match(host):
        errors.append(
            FieldError(
                "FieldValueInvalid",
                path,
                "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
                "'-' or '.', and must start and end with an alphanumeric character (e.g. "
                "'example.com', regex used for validation is "
                "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
                host,
            )
        )
    if not _HTTP_PATH.match(rest):
        errors.append(
            FieldError(
                "FieldValueInvalid",
                path,
                "Invalid path: must contain only valid HTTP path characters",
                rest,
            )
        )
    return errors


def validate_trainjob(info: Info, job: TrainJobContext) -> list[FieldError]:
    errors: list[FieldError] = []
    jobs = info.jobset_spec.get("replicatedJobs") or []
    container_names: dict[str, set[str]] = {}
    for rjob in jobs:
        pod_spec = _pod_spec(rjob)
        names = {c.get("name") for c in pod_spec.get("initContainers") or ()}
        names |= {c.get("name") for c in pod_spec.get("containers") or ()}
        container_names[rjob.get("name", "")] = {str(n) for n in names}
    runtime_ref = job.spec.get("runtimeRef")
    initializer = job.spec.get("initializer") or {}
    for section, name in (("dataset", DATASET_INITIALIZER), ("model", MODEL_INITIALIZER)):
        if initializer.get(section) is None:
            continue
        config = "datasetConfig" if section == "dataset" else "modelConfig"
        if name not in container_names:
            message = f"must have {name} job when trainJob is configured with input {config}"
        elif name not in container_names[name]:
            message = f"must have container with name - {name} in the {name} job"
        elif INITIALIZER_VOLUME_MOUNT_CHECK.on(job.trainer_version) and not _has_initializer_mount(
            jobs, name
        ):
            message = (
                f"must have volumeMount with name - {VOLUME_INITIALIZER} in container {name} "
                f"of the {name} job"
            )
        else:
            continue
        errors.append(FieldError("FieldValueInvalid", "spec.runtimeRef", message, runtime_ref))
    if not POD_TEMPLATE_OVERRIDES.on(job.trainer_version):
        return errors + _pod_spec_override_errors(job, container_names)
    if not RUNTIME_PATCHES.on(job.trainer_version):
        return errors + _pod_template_override_errors(job, container_names)
    patches = job.spec.get("runtimePatches") or []
    for patch in patches:
        errors.extend(
            _domain_prefixed_path_errors("spec.runtimePatches.manager", patch.get("manager", ""))
        )
        patch_spec = ((patch.get("trainingRuntimeSpec") or {}).get("template") or {}).get("spec")
        if patch_spec is None:
            continue
        for rjob_patch in patch_spec.get("replicatedJobs") or ():
            job_name = rjob_patch.get("name", "")
            if job_name not in container_names:
                errors.append(
                    FieldError(
                        "FieldValueInvalid",
                        "spec.runtimePatches",
                        "must not have replicated job that doesn't exist in the runtime job template",
                        patches,
                    )
                )
                continue
            pod_patch = (
                ((rjob_patch.get("template") or {}).get("spec") or {}).get("template") or {}
            ).get("spec")
            if pod_patch is None:
                continue
            errors += _pod_patch_errors(
                "spec.runtimePatches", patches, job_name, container_names[job_name], pod_patch
            )
    return errors


def _pod_template_override_errors(
    job: TrainJobContext, container_names: dict[str, set[str]]
) -> list[FieldError]:
    """v2.1.0's checks of ``spec.podTemplateOverrides`` (a target job the runtime lacks is
    reported, and its containers then count as unknown too, as upstream does)."""
    errors: list[FieldError] = []
    overrides = job.spec.get("podTemplateOverrides") or []
    for override in overrides:
        for target in override.get("targetJobs") or ():
            job_name = target.get("name", "")
            if job_name not in container_names:
                message = "must not have targetJob that doesn't exist in the runtime job template"
                errors.append(FieldError("FieldValueInvalid", OVERRIDES_PATH, message, overrides))
            if override.get("spec") is not None:
                known = container_names.get(job_name, set())
                errors += _pod_patch_errors(
                    OVERRIDES_PATH, overrides, job_name, known, override["spec"]
                )
    return errors


def _pod_spec_override_errors(
    job: TrainJobContext, container_names: dict[str, set[str]]
) -> list[FieldError]:
    """v2.0.0's checks of ``spec.podSpecOverrides``: a target job named twice across all
    overrides is a duplicate; then v2.1.0's checks, per target job."""
    errors: list[FieldError] = []
    overrides = job.spec.get("podSpecOverrides") or []
    seen: set[str] = set()
    for override in overrides:
        targets = [str(target.get("name", "")) for target in override.get("targetJobs") or ()]
        for name in targets:
            if name in seen:
                errors.append(FieldError("FieldValueDuplicate", SPEC_OVERRIDES_PATH, "", name))
            seen.add(name)
        for name in targets:
            if name not in container_names:
                message = "must not have targetJob that doesn't exist in the runtime job template"
                errors.append(
                    FieldError("FieldValueInvalid", SPEC_OVERRIDES_PATH, message, overrides)
                )
            errors += _pod_patch_errors(
                SPEC_OVERRIDES_PATH, overrides, name, container_names.get(name, set()), override
            )
    return errors


def _pod_patch_errors(
    path: str, value: Any, job_name: str, known: set[str], pod_patch: JsonObject
) -> list[FieldError]:
    """Containers a TrainJob patches must exist in the runtime job; no env on the reserved ones."""
    errors: list[FieldError] = []
    for container in pod_patch.get("initContainers") or ():
        if container.get("name") not in known:
            message = (
                f"must not have initContainer that doesn't exist in the runtime job {job_name}"
            )
            errors.append(FieldError("FieldValueInvalid", path, message, value))
    for container in pod_patch.get("containers") or ():
        if container.get("name") not in known:
            message = f"must not have container that doesn't exist in the runtime job {job_name}"
        elif container.get("env") and container.get("name") in (
            DATASET_INITIALIZER,
            MODEL_INITIALIZER,
            NODE,
        ):
            message = (
                f"must not have envs for the {DATASET_INITIALIZER}, {MODEL_INITIALIZER}, "
                f"{NODE} containers"
            )
        else:
            continue
        errors.append(FieldError("FieldValueInvalid", path, message, value))
    return errors


def _has_initializer_mount(jobs: list[JsonObject], name: str) -> bool:
    for rjob in jobs:
        if rjob.get("name") != name:
            continue
        for container in _pod_spec(rjob).get("containers") or ():
            if container.get("name") != name:
                continue
            if any(
                m.get("name") == VOLUME_INITIALIZER for m in container.get("volumeMounts") or ()
            ):
                return True
    return False
