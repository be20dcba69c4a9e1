"""Whether the Trainer release the output is for (``migrate --trainer``) takes a job's
migrated objects.

Each release has its own TrainJob and runtime schema (docs/trainer-versions.md): a v1
JAXJob becomes a runtime with ``mlPolicy.jax``, which Trainer v2.1.0 does not have, and
``runPolicy.activeDeadlineSeconds`` becomes ``TrainJob.spec.activeDeadlineSeconds``,
which v2.1.0 lacks too. The migrated objects are loaded as ``trainc render`` loads them
for a cluster of that release (its CRDs: schema, unknown fields, CEL rules; v2.0.0's
webhook rule that a TrainJob name is a DNS-1035 label); what the release refuses is an error of the job's report, and the job is not written: there is
no fallback that keeps what the v1 job did.

    >>> from ruamel.yaml.comments import CommentedMap
    >>> from compiler.migrate.common import Options
    >>> from compiler.migrate.report import JobReport, ObjectId
    >>> job = CommentedMap(apiVersion="trainer.kubeflow.org/v1alpha1", kind="TrainJob",
    ...     metadata={"name": "j"}, spec={"runtimeRef": {"name": "r"}, "activeDeadlineSeconds": 60})
    >>> report = JobReport(ObjectId("kubeflow.org/v1", "PyTorchJob", "default", "j"), "j.yaml")
    >>> release_takes([job], Options(trainer_version="v2.1.0"), report)
    False
    >>> report.errors[0].code, report.errors[0].target_path
    ('REFUSED_BY_RELEASE', 'TrainJob spec.activeDeadlineSeconds')
"""

from __future__ import annotations

import io

from ruamel.yaml.comments import CommentedMap

from compiler.migrate.common import Options
from compiler.migrate.report import Diagnostic, JobReport
from compiler.migrate.source import round_trip
from compiler.resolve.names import name_problems
from compiler.upstream.names import TRAINJOB_KIND

__all__ = ["release_takes"]


def release_takes(objects: list[CommentedMap], options: Options, report: JobReport) -> bool:
    """Whether Trainer ``options.trainer_version`` loads ``objects``; each refusal is
    added to ``report`` as an error."""
    from compiler.apiserver.crds import trainer_crds
    from compiler.load.loader import load_texts_collect

    texts: list[tuple[str, str | bytes]] = []
    for index, obj in enumerate(objects):
        out = io.StringIO()
        round_trip().dump(obj, out)
        texts.append((f"<migrated {index}>", out.getvalue()))
    version = options.trainer_version
    loaded, problems = load_texts_collect(texts, options.namespace, trainer_crds(version))
    for manifest in loaded.objects:  # v2.0.0's webhook: a TrainJob name is a DNS-1035 label
        if manifest.kind == TRAINJOB_KIND:
            problems += name_problems(manifest, version)
    for problem in problems:
        kind = problem.object.kind if problem.object is not None else "object"
        field = str(problem.field_path or "")
        field = "" if field == "<nil>" else field  # the API server's path of a root rule
        report.add(
            Diagnostic(
                "REFUSED_BY_RELEASE",
                "error",
                "",
                f"Trainer {version} refuses the migrated {kind}: {problem.message}",
                target_path=f"{kind} {field}".strip(),
                action="rejected",
                workaround="migrate for the release the cluster will run (--trainer), "
                "or upgrade the cluster first",
                covers=("*",),
            )
        )
    return not problems
