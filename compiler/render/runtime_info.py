"""newRuntimeInfo: the runtime template, patched by the TrainJob, as plugins see it (spec §3).

Steps, in upstream's order:

1. JobSet labels/annotations: the runtime's template metadata, then each runtimePatch's
   template metadata over it (R-3.1); v2.1.0: the TrainJob's ``spec.labels``/``annotations``.
2. runtimePatches: each patch's ``template.spec`` strategic-merged onto the whole JobSet
   spec, in list order; then replicated jobs back in runtime order (R-3.2); v2.1.0:
   ``podTemplateOverrides`` merged over their target jobs' pod templates; v2.0.0:
   ``podSpecOverrides`` merged over their target jobs' pod specs.
3. The Go typed round trip of the result (R-3.6).
4. One PodSet per replicated job: count, ancestor, resourcesPerNode merge, requests
   (R-3.7 ... R-3.10).
"""

from __future__ import annotations

import marshal

from compiler.kube.podrequests import pod_requests
from compiler.kube.quantity import canonical_quantity
from compiler.kube.roundtrip import go_roundtrip
from compiler.kube.strategic_merge import strategic_merge
from compiler.render.framework import TrainJobContext
from compiler.render.info import Info, JsonObject, PodSet, PodSetContainer, json_copy
from compiler.upstream.names import ANCESTOR_TRAINER, LABEL_ANCESTOR, NODE
from compiler.upstream.openapi import schema
from compiler.upstream.typeinfo import typeinfo
from compiler.upstream.versions import DEFAULT_TRAINER_VERSION, Gate

JOBSET_SPEC_TYPE = "jobset.v1alpha2.JobSetSpec"

# Version differences of newRuntimeInfo (docs/trainer-versions.md). Before v2.3.0,
# resourcesPerNode replaced the trainer node container's resources in the typed
# template only (the PodSet's requests); the JobSet builder then replaced them in the
# JobSet (compiler.render.plugins.jobset). From v2.3.0 they are merged over the
# runtime's, once, here, for the trainer jobs and an MPI launcher that runs as a node.
MERGED_RESOURCES_PER_NODE = Gate(
    "v2.3.0", "resourcesPerNode merged over the node container's resources in newRuntimeInfo"
)
# From v2.3.0 a PodSet container carries the template's image and command (what Flux
# wraps as the original command); before, plugins saw neither.
POD_SET_IMAGE_COMMAND = Gate("v2.3.0", "PodSet containers carry the image and command")
# From v2.3.0 a runtimePatch's template.spec is strategic-merged over the whole JobSet
# spec (a patched job the runtime lacks is added); before, each patched job's
# template was merged over the runtime job of that name, and other jobs were ignored.
WHOLE_SPEC_PATCHES = Gate("v2.3.0", "runtimePatches merged over the whole JobSet spec")
# v2.2.0 replaced v2.1.0's TrainJob overrides (spec.labels and spec.annotations over the
# JobSet's metadata; podTemplateOverrides strategic-merged over the pod template of each
# target job) with runtimePatches.
RUNTIME_PATCHES = Gate("v2.2.0", "runtimePatches (before: podTemplateOverrides, spec.labels)")
# v2.1.0 replaced v2.0.0's podSpecOverrides (merged over the pod *spec* of each target
# job) with podTemplateOverrides (metadata and spec, over the pod template).
POD_TEMPLATE_OVERRIDES = Gate("v2.1.0", "podTemplateOverrides (before: podSpecOverrides)")
# From v2.2.0 the trainer node container's requests in the PodSet are those of
# resourcesPerNode; v2.1.0's PodSets keep the runtime's.
RESOURCES_PER_NODE_IN_REQUESTS = Gate("v2.2.0", "resourcesPerNode in the PodSet's requests")
POD_TEMPLATE_TYPE = "io.k8s.api.core.v1.PodTemplateSpec"
POD_SPEC_TYPE = "io.k8s.api.core.v1.PodSpec"
POD_SPEC_OVERRIDE_TYPE = "trainer.v1alpha1.PodSpecOverride"
POD_TEMPLATE_OVERRIDE_SPEC_TYPE = "trainer.v1alpha1.PodTemplateSpecOverride"
JOB_TEMPLATE_TYPE = "io.k8s.api.batch.v1.JobTemplateSpec"
JOB_TEMPLATE_PATCH_TYPE = "trainer.v1alpha1.JobTemplatePatch"
JOBSET_SPEC_PATCH_TYPE = "trainer.v1alpha1.JobSetSpecPatch"


def propagated_metadata(
    template: JsonObject, patches: list[JsonObject]
) -> tuple[dict[str, str], dict[str, str]]:
    """JobSet labels and annotations: runtime template metadata, then patches in order (R-3.1).

    >>> propagated_metadata({"metadata": {"labels": {"a": "1"}}},
    ...     [{"trainingRuntimeSpec": {"template": {"metadata": {"labels": {"a": "2", "b": "3"}}}}}])
    ({'a': '2', 'b': '3'}, {})
    """
    metadata = template.get("metadata") or {}
    labels = dict(metadata.get("labels") or {})
    annotations = dict(metadata.get("annotations") or {})
    for patch in patches:
        patch_metadata = ((patch.get("trainingRuntimeSpec") or {}).get("template") or {}).get(
            "metadata"
        ) or {}
        labels.update(patch_metadata.get("labels") or {})
        annotations.update(patch_metadata.get("annotations") or {})
    return labels, annotations


def overridden_metadata(
    template: JsonObject, trainjob_spec: JsonObject
) -> tuple[dict[str, str], dict[str, str]]:
    """v2.1.0: JobSet labels and annotations, the TrainJob's ``spec.labels`` over the runtime's.

    >>> overridden_metadata({"metadata": {"labels": {"a": "1"}}}, {"labels": {"a": "2"}})
    ({'a': '2'}, {})
    """
    metadata = template.get("metadata") or {}
    labels = {**(metadata.get("labels") or {}), **(trainjob_spec.get("labels") or {})}
    annotations = {
        **(metadata.get("annotations") or {}),
        **(trainjob_spec.get("annotations") or {}),
    }
    return labels, annotations


def overridden_jobset_spec(
    template_spec: JsonObject, overrides: list[JsonObject], version: str
) -> JsonObject:
    """v2.1.0: each podTemplateOverride strategic-merged over its target jobs' pod templates.

    The patch is the override's ``metadata`` labels/annotations and its ``spec`` (as the
    Go type decodes it), merged over the typed pod template, in list order.
    """
    types = typeinfo(version)
    spec: JsonObject = json_copy(typed_template(template_spec, version))
    for override in overrides:
        targets = {target.get("name") for target in override.get("targetJobs") or ()}
        patch: JsonObject = {}
        metadata = override.get("metadata")
        if metadata is not None:
            kept = {
                key: metadata[key]
                for key in ("labels", "annotations")
                if metadata.get(key) is not None
            }
            if kept:
                patch["metadata"] = kept
        if override.get("spec") is not None:
            patch["spec"] = go_roundtrip(
                override["spec"], POD_TEMPLATE_OVERRIDE_SPEC_TYPE, info=types
            )
        for rjob in spec.get("replicatedJobs") or ():
            if rjob.get("name") not in targets:
                continue
            job_spec = rjob.setdefault("template", {}).setdefault("spec", {})
            merged = strategic_merge(
                job_spec.get("template") or {}, patch, schema(POD_TEMPLATE_TYPE, version)
            )
            job_spec["template"] = go_roundtrip(merged, POD_TEMPLATE_TYPE, info=types)
    converted: JsonObject = go_roundtrip(spec, JOBSET_SPEC_TYPE, info=types)
    return converted


def spec_overridden_jobset_spec(
    template_spec: JsonObject, overrides: list[JsonObject], version: str
) -> JsonObject:
    """v2.0.0: each podSpecOverride strategic-merged over its target jobs' pod specs.

    The patch is the whole override as the Go type encodes it; its ``targetJobs`` lands
    beside the pod spec's fields and is dropped by the PodSpec decode, so it is left
    out here. Merged with PodSpec's patch metadata, in list order.
    """
    types = typeinfo(version)
    spec: JsonObject = json_copy(typed_template(template_spec, version))
    for override in overrides:
        targets = {target.get("name") for target in override.get("targetJobs") or ()}
        patch = go_roundtrip(override, POD_SPEC_OVERRIDE_TYPE, info=types)
        patch.pop("targetJobs", None)
        for rjob in spec.get("replicatedJobs") or ():
            if rjob.get("name") not in targets:
                continue
            job_spec = rjob.setdefault("template", {}).setdefault("spec", {})
            pod_template = job_spec.setdefault("template", {})
            merged = strategic_merge(
                pod_template.get("spec") or {}, patch, schema(POD_SPEC_TYPE, version)
            )
            pod_template["spec"] = go_roundtrip(merged, POD_SPEC_TYPE, info=types)
    converted: JsonObject = go_roundtrip(spec, JOBSET_SPEC_TYPE, info=types)
    return converted


def patched_jobset_spec(
    template_spec: JsonObject,
    patches: list[JsonObject],
    version: str = DEFAULT_TRAINER_VERSION,
) -> JsonObject:
    """The runtime's JobSet spec after every runtimePatch, in runtime job order (R-3.2, R-3.6).

    A pure function of the runtime and the patches' ``template.spec``; TrainJobs of a repo
    share a few such pairs (the same runtime, the same platform patches), so the result
    is computed once per pair and copied for each caller. The Go types (and so the round
    trips) are those of Trainer ``version``.
    """
    patch_specs: list[JsonObject] = []
    for patch in patches:
        patch_spec = ((patch.get("trainingRuntimeSpec") or {}).get("template") or {}).get("spec")
        if patch_spec is not None:
            patch_specs.append(patch_spec)
    try:
        # marshal format 2: equal bytes mean equal data, types included (1, 1.0, True differ)
        key = (id(template_spec), version, marshal.dumps(patch_specs, 2))
    except ValueError:  # pragma: no cover - inputs are plain JSON data
        return _patched_jobset_spec(template_spec, patch_specs, version)
    entry = _PATCHED_SPECS.get(key)
    if entry is None or entry[0] is not template_spec:
        if len(_PATCHED_SPECS) >= _CACHE_SIZE:
            _PATCHED_SPECS.clear()
        entry = (template_spec, _patched_jobset_spec(template_spec, patch_specs, version))
        _PATCHED_SPECS[key] = entry
    result: JsonObject = json_copy(entry[1])
    return result


def _patched_jobset_spec(
    template_spec: JsonObject, patch_specs: list[JsonObject], version: str
) -> JsonObject:
    types = typeinfo(version)
    runtime_order = {
        job.get("name"): index
        for index, job in enumerate(template_spec.get("replicatedJobs") or ())
    }
    spec: JsonObject = json_copy(typed_template(template_spec, version))
    if not WHOLE_SPEC_PATCHES.on(version):
        return _patched_job_templates(spec, patch_specs, version)
    for patch_spec in patch_specs:
        merged = strategic_merge(
            spec,
            go_roundtrip(patch_spec, JOBSET_SPEC_PATCH_TYPE, info=types),
            schema(JOBSET_SPEC_TYPE, version),
        )
        spec = go_roundtrip(merged, JOBSET_SPEC_TYPE, info=types)
    jobs = spec.get("replicatedJobs")
    if jobs:
        # Stable sort; a job the runtime does not have sorts as index 0.
        jobs.sort(key=lambda job: runtime_order.get(job.get("name"), 0))
    return spec


def _patched_job_templates(
    spec: JsonObject, patch_specs: list[JsonObject], version: str
) -> JsonObject:
    """Before v2.3.0: each patched job's template merged over the runtime job of its name."""
    types = typeinfo(version)
    jobs = spec.get("replicatedJobs") or []
    for patch_spec in patch_specs:
        for job_patch in patch_spec.get("replicatedJobs") or ():
            if job_patch.get("template") is None:
                continue
            patch = go_roundtrip(job_patch["template"], JOB_TEMPLATE_PATCH_TYPE, info=types)
            for job in jobs:
                if job.get("name") != job_patch.get("name"):
                    continue
                merged = strategic_merge(
                    job.get("template") or {}, patch, schema(JOB_TEMPLATE_TYPE, version)
                )
                job["template"] = go_roundtrip(merged, JOB_TEMPLATE_TYPE, info=types)
    converted: JsonObject = go_roundtrip(spec, JOBSET_SPEC_TYPE, info=types)
    return converted


# Both caches are keyed by the runtime object's identity and hold the object itself, so
# an id is never reused while its entry lives. Callers copy before changing a result.
_CACHE_SIZE = 1024
_TYPED_TEMPLATES: dict[tuple[int, str], tuple[JsonObject, JsonObject]] = {}
_PATCHED_SPECS: dict[tuple[int, str, bytes], tuple[JsonObject, JsonObject]] = {}


def typed_template(template_spec: JsonObject, version: str = DEFAULT_TRAINER_VERSION) -> JsonObject:
    """The runtime's JobSet spec after the Go round trip, computed once per runtime object.

    Raises :class:`~compiler.kube.roundtrip.RoundTripError` when the Trainer controller
    could not decode it (a number beyond its Go type, say).
    """
    key = (id(template_spec), version)
    entry = _TYPED_TEMPLATES.get(key)
    if entry is None or entry[0] is not template_spec:
        if len(_TYPED_TEMPLATES) >= _CACHE_SIZE:
            _TYPED_TEMPLATES.clear()
        converted = go_roundtrip(template_spec, JOBSET_SPEC_TYPE, info=typeinfo(version))
        entry = (template_spec, converted)
        _TYPED_TEMPLATES[key] = entry
    return entry[1]


def merge_resources(base: JsonObject | None, override: JsonObject) -> JsonObject:
    """resourcesPerNode over the runtime container's resources, key by key (R-3.9).

    Only ``limits`` and ``requests`` survive; claims are dropped::

        >>> merge_resources({"requests": {"cpu": "1"}}, {"limits": {"nvidia.com/gpu": 4}})
        {'limits': {'nvidia.com/gpu': '4'}, 'requests': {'cpu': '1'}}
    """
    merged: JsonObject = {}
    for key in ("limits", "requests"):
        values = {**((base or {}).get(key) or {}), **(override.get(key) or {})}
        if values:
            merged[key] = {name: canonical_quantity(values[name]) for name in sorted(values)}
    return merged


def _pod_spec(job: JsonObject) -> JsonObject:
    spec: JsonObject = job.setdefault("template", {}).setdefault("spec", {})
    pod_template: JsonObject = spec.setdefault("template", {})
    pod_spec: JsonObject = pod_template.setdefault("spec", {})
    return pod_spec


def _with_node_resources(pod_spec: JsonObject, resources: JsonObject) -> JsonObject:
    """A copy of ``pod_spec`` whose first ``node`` container has exactly ``resources``."""
    copy: JsonObject = json_copy(pod_spec)
    for container in copy.get("containers") or ():
        if container.get("name") == NODE:
            container["resources"] = json_copy(resources)
            break
    return copy


def new_runtime_info(job: TrainJobContext, runtime_spec: JsonObject) -> Info:
    """Build Info from a defaulted runtime ``spec`` and the TrainJob (spec §3)."""
    template: JsonObject = runtime_spec.get("template") or {}
    # A copy: MPI writes its resolved slots back into the policy, as upstream does.
    ml_policy: JsonObject | None = json_copy(runtime_spec.get("mlPolicy"))
    pod_group_policy: JsonObject | None = runtime_spec.get("podGroupPolicy")
    if RUNTIME_PATCHES.on(job.trainer_version):
        patches: list[JsonObject] = job.spec.get("runtimePatches") or []
        labels, annotations = propagated_metadata(template, patches)
        spec = patched_jobset_spec(template.get("spec") or {}, patches, job.trainer_version)
    elif POD_TEMPLATE_OVERRIDES.on(job.trainer_version):
        labels, annotations = overridden_metadata(template, job.spec)
        overrides: list[JsonObject] = job.spec.get("podTemplateOverrides") or []
        spec = overridden_jobset_spec(template.get("spec") or {}, overrides, job.trainer_version)
    else:
        labels, annotations = overridden_metadata(template, job.spec)
        spec = spec_overridden_jobset_spec(
            template.get("spec") or {}, job.spec.get("podSpecOverrides") or [], job.trainer_version
        )
    subdomain = ((spec.get("network") or {}).get("subdomain")) or job.name

    trainer = job.trainer or {}
    resources_per_node = trainer.get("resourcesPerNode")
    run_launcher_as_node = bool(((ml_policy or {}).get("mpi") or {}).get("runLauncherAsNode"))
    merged = MERGED_RESOURCES_PER_NODE.on(job.trainer_version)
    container_of = (
        PodSetContainer.of
        if POD_SET_IMAGE_COMMAND.on(job.trainer_version)
        else PodSetContainer.without_image_command
    )

    pod_sets: list[PodSet] = []
    for rjob in spec.get("replicatedJobs") or ():
        job_template = rjob.get("template") or {}
        count: int = (job_template.get("spec") or {}).get("parallelism", 1)
        job_labels = (job_template.get("metadata") or {}).get("labels")
        ancestor: str | None = None
        if job_labels is not None and LABEL_ANCESTOR in job_labels:
            ancestor = job_labels[LABEL_ANCESTOR]
            if ancestor == ANCESTOR_TRAINER and ml_policy is not None:
                count = ml_policy.get("numNodes", 1)
        pod_spec = _pod_spec(rjob)
        requests_of = pod_spec
        if resources_per_node is not None and not merged:
            in_requests = RESOURCES_PER_NODE_IN_REQUESTS.on(job.trainer_version)
            if in_requests and ancestor == ANCESTOR_TRAINER and ml_policy is not None:
                requests_of = _with_node_resources(pod_spec, resources_per_node)
        elif resources_per_node is not None:
            is_trainer = ancestor == ANCESTOR_TRAINER and ml_policy is not None
            is_launcher_as_node = run_launcher_as_node and rjob.get("name") == NODE
            if is_trainer or is_launcher_as_node:
                for container in pod_spec.get("containers") or ():
                    if container.get("name") == NODE:
                        container["resources"] = merge_resources(
                            container.get("resources"), resources_per_node
                        )
                        break
        pod_sets.append(
            PodSet(
                name=rjob.get("name", ""),
                ancestor=ancestor,
                count=max(count, 1),
                containers=[container_of(c) for c in pod_spec.get("containers") or ()],
                init_containers=[container_of(c) for c in pod_spec.get("initContainers") or ()],
                volumes=json_copy(pod_spec.get("volumes") or []),
                single_pod_requests=pod_requests(requests_of),
                replicas=rjob.get("replicas", 1),
                subdomain=subdomain,
                trainjob_name=job.name,
            )
        )
    return Info(
        labels=labels,
        annotations=annotations,
        ml_policy=ml_policy,
        pod_group_policy=pod_group_policy,
        jobset_spec=spec,
        pod_sets=pod_sets,
    )
