"""trainc: compile Kubeflow Trainer v2 TrainJobs and runtimes into the objects the controller creates.

The package is laid out in layers, bottom up; each imports only from the layers below
it (and from itself), which ``compiler/layers_test.py`` checks on every module:

    errors       the problem model: Problem, FieldError, Finding, exit codes
    upstream     the pinned upstream: where its artifacts are, OpenAPI and Go type
                 facts, script templates, the Trainer's names and constants, the
                 emulated releases and their gates
    kube         Kubernetes value semantics: quantities, pod requests, Go's number
                 texts, the Go typed round trip, strategic merge patch
    apiserver    what the API server does: YAML decoding with positions, structural
                 schema, CRDs and their defaults, CRD CEL rules, the CEL engine and
                 the Kubernetes CEL libraries
    load         files -> admitted objects (discovery, the create path)
    resolve      the runtime each TrainJob references
    render       the Trainer runtime framework: plugins by phase, the registry, the
                 admission webhooks beside the plugins they check; extensions/:
                 trainc's opt-in behaviour upstream lacks
    overlay      cluster and namespace overlays, locks
    policy       ValidatingAdmissionPolicy and CUE evaluation
    queue        Kueue: the queue setup among the inputs, each queued job's Workload,
                 whether the pinned Kueue release can ever admit it
    katib        Katib: Experiments among the inputs, its webhooks, the trials it
                 could create and their TrainJobs
    provenance   where each output field came from
    expand       below the JobSet: its webhooks, the JobSet and Job controllers, the
                 API server's defaults and admission of Jobs, Services and Pods
    project      the project file, trainc.yaml
    model        the records that flow between stages and out to writers: the build
                 plan, rendered objects and summaries, the build, check results, a
                 build by chunks (imports no stage)
    emit         writers of what the driver made: canonical YAML, the output tree,
                 the blob store, reports, a cluster's kustomization
    plan         the stage chains (render, check; GitOps hints, policy tests) and the
                 driver that runs them over build plans, by chunks (the render cache,
                 -j) or whole
    migrate      front ends that turn other job kinds into TrainJobs
    deliver      diff, explain, check --rendered, the Argo CD plugin, apply
    cli          one module per verb: parse, call the driver, hand the result on

Where new work goes (docs/contributing/architecture.md): behaviour upstream lacks (as
Intel MPI is) is an extension module in ``render/extensions/`` listed in
``render/extensions/catalog.py``; an upstream plugin is a module in ``render/plugins/``
registered in ``render/registry.py``; a new depth of the render (the Jobs and Pods a
JobSet becomes) is a stage in ``plan/stages.py`` appended to its chain, its records in
``model/`` (``plan/driver.py`` says how); an apply step is a module in ``deliver/`` with
its verb in ``cli/``; a migrator for another job kind is a module in ``migrate/`` listed
in its ``TRANSLATORS``.
"""

__version__ = "0.1.0"

# The layers, bottom up (see the docstring); a module may import its own layer or lower.
LAYERS: tuple[str, ...] = (
    "errors",
    "upstream",
    "kube",
    "apiserver",
    "load",
    "resolve",
    "render",
    "overlay",
    "policy",
    "queue",
    "katib",
    "provenance",
    "expand",
    "project",
    "model",
    "emit",
    "plan",
    "migrate",
    "deliver",
    "cli",
)
