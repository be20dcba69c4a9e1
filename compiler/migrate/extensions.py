"""Where one of trainc's own extensions would carry what core Trainer cannot (issue 29
point 9): a job refused or migrated with losses gets an ``EXTENSION_CARRIES`` note
naming the extension and how to enable it (docs/guides/extensions.md).

The extensions are opt-in and work in resolved delivery only (trainc renders the JobSet;
the Trainer controller ignores the annotations), so the note is an option for the user
to decide on, never applied silently:

- ``intel-mpi`` / ``mpich``: an MPIJob with ``mpiImplementation`` Intel or MPICH, which
  Trainer refuses (``MPI_IMPLEMENTATION_UNSUPPORTED``). ``--allow-lossy`` writes the
  OpenMPI runtime the extension builds on; annotated, it renders as the MPI Operator did.
- ``elastic-torch``: a PyTorchJob's ``elasticPolicy`` (``ELASTIC_*``); the annotations
  carry the node range, restarts and rendezvous settings.
- ``tensorflow`` / ``paddlepaddle``: TF_CONFIG and the PaddleJob controller's variables
  as the v1 operators set them, without the compat env's shim; their runtimes name the
  replicated jobs by role, so the note says what to change in the migrated runtime.
"""

from __future__ import annotations

from typing import Any

from compiler.migrate.report import Diagnostic, JobReport

__all__ = ["extension_notes"]

ANNOTATION = "trainc.dev/extensions"
GUIDE = "docs/guides/extensions.md"
_ENABLE = (
    "enable it for the cluster (trainc.yaml clusters[].extensions: [{ext}]); resolved "
    "delivery only (the Trainer controller ignores the annotation)"
)

_ELASTIC_CODES = ("ELASTIC_DROPPED", "ELASTIC_RANGE_LOST", "ELASTIC_HPA_UNSUPPORTED")
_TF_CODES = ("TF_CONFIG_SHIMMED", "TF_CONFIG_NEEDS_COMMAND", "TF_CONFIG_NOT_SUPPORTED")
_PADDLE_CODES = ("PADDLE_NO_NATIVE_RUNTIME", "PADDLE_MASTER_BY_DNS")
# elasticPolicy field -> the elastic-torch parameter (compiler/render/extensions/elastic_torch.py)
_ELASTIC_PARAMETERS = {
    "minReplicas": "min-nodes",
    "maxReplicas": "max-nodes",
    "maxRestarts": "max-restarts",
    "rdzvBackend": "rdzv-backend",
    "rdzvPort": "rdzv-port",
    "rdzvId": "rdzv-id",
}
_RDZV_BACKENDS = ("c10d", "etcd", "etcd-v2")


def extension_notes(report: JobReport, job: dict[str, Any]) -> list[Diagnostic]:
    """The notes for ``report`` of the v1 ``job``: one per extension that applies."""
    codes = {d.code: d for d in report.diagnostics}
    spec = job.get("spec") if isinstance(job.get("spec"), dict) else {}
    notes: list[Diagnostic] = []
    if "MPI_IMPLEMENTATION_UNSUPPORTED" in codes:
        notes += _mpi(str((spec or {}).get("mpiImplementation") or ""))
    if any(code in codes for code in _ELASTIC_CODES):
        elastic = (spec or {}).get("elasticPolicy")
        notes.append(_elastic(elastic if isinstance(elastic, dict) else {}, codes))
    if any(code in codes for code in _TF_CODES):
        notes.append(_by_role("tensorflow", codes, _TF_CODES))
    if any(code in codes for code in _PADDLE_CODES):
        notes.append(_by_role("paddlepaddle", codes, _PADDLE_CODES))
    return notes


def _note(ext: str, source_path: str, message: str, steps: str) -> Diagnostic:
    return Diagnostic(
        "EXTENSION_CARRIES",
        "info",
        source_path,
        f"trainc's {ext} extension {message} ({GUIDE})",
        target_path=f"runtime annotation {ANNOTATION}: {ext}",
        action="translated",
        workaround=f"{steps}; {_ENABLE.format(ext=ext)}",
        decide=True,
    )


def _mpi(implementation: str) -> list[Diagnostic]:
    ext = {"Intel": "intel-mpi", "MPICH": "mpich"}.get(implementation)
    if ext is None:
        return []
    return [
        _note(
            ext,
            "spec.mpiImplementation",
            f"renders {implementation} MPI as the MPI Operator does (hostfile <host>:<slots>, "
            "the launcher's Hydra variables instead of OMPI_MCA_*)",
            f"migrate with --allow-lossy (the OpenMPI runtime the extension builds on), then "
            f"annotate the job's TrainingRuntime {ANNOTATION}: {ext}",
        )
    ]


def _elastic(policy: dict[str, Any], codes: dict[str, Diagnostic]) -> Diagnostic:
    annotations = [f"{ANNOTATION}: elastic-torch"]
    for field, parameter in _ELASTIC_PARAMETERS.items():
        value = policy.get(field)
        if value is None or (field == "rdzvBackend" and value not in _RDZV_BACKENDS):
            continue
        if field.endswith("Replicas") and not (isinstance(value, int) and value >= 1):
            continue  # the extension's range starts at 1 (numNodes then decides)
        annotations.append(f'elastic-torch.trainc.dev/{parameter}: "{value}"')
    listed = policy.get("rdzvConf")
    conf = (
        [c for c in listed if isinstance(c, dict) and c.get("key")]
        if isinstance(listed, list)
        else []
    )
    if conf:
        pairs = ",".join(f"{c['key']}={c.get('value', '')}" for c in conf)
        annotations.append(f'elastic-torch.trainc.dev/rdzv-conf: "{pairs}"')
    left = [f for f in ("rdzvHost", "standalone") if policy.get(f) is not None]
    if "ELASTIC_HPA_UNSUPPORTED" in codes:
        left.append("metrics (no HorizontalPodAutoscaler: numNodes stays as written)")
    message = (
        "keeps torchrun's elastic rendezvous (PET_NNODES min:max, PET_RDZV_*, "
        "PET_MAX_RESTARTS) as the Training Operator set it"
    )
    if left:
        message += f"; not carried: {', '.join(left)}"
    steps = "annotate the job's TrainingRuntime " + ", ".join(annotations)
    if "ELASTIC_HPA_UNSUPPORTED" in codes:
        steps = "migrate with --allow-lossy, then " + steps
    return _note("elastic-torch", "spec.elasticPolicy", message, steps)


def _by_role(ext: str, codes: dict[str, Diagnostic], mine: tuple[str, ...]) -> Diagnostic:
    source = next(codes[c].source_path for c in mine if c in codes)
    if ext == "tensorflow":
        message = (
            "sets TF_CONFIG as the TFJob controller does, from the Job completion index, "
            "with no /bin/sh wrapper around the command"
        )
        roles = "chief, master, ps, worker, evaluator (the workers' job is the trainer)"
        port = "tfjob-port"
    else:
        message = "sets the PaddleJob controller's variables (PADDLE_MASTER, PADDLE_NNODES, ...)"
        roles = "worker, and master in parameter-server mode"
        port = "master"
    steps = (
        f"write the job's runtime for it: replicated jobs named {roles}, the node container's "
        f"port named {port}, without the compat env, annotated {ANNOTATION}: {ext}"
    )
    return _note(ext, source, message, steps)
