"""What ``trainc check`` finds: its result, and the built-in rules it reports.

:class:`CheckResult` (every :class:`~compiler.errors.Finding`, sorted by place, the
objects checked, the source texts a report quotes) is made by the check chain
(:mod:`compiler.plan.check`) or by chunks (:mod:`compiler.plan.check_chunks`) and read
by the report writers (``compiler.emit.report_*``) and delivery (the Argo CD plugin,
``check --rendered``). :data:`RULE_DESCRIPTIONS` names the built-in rules;
:data:`INPUT_ERROR_RULES` those whose errors mean exit 2.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from compiler.errors import EXIT_INPUT_ERROR, EXIT_OK, EXIT_VIOLATIONS, Finding, Severity
from compiler.policy.objects import PolicyObject

if TYPE_CHECKING:  # a check whose chunks all come from the cache builds nothing
    from compiler.model.build import Build

__all__ = ["INPUT_ERROR_RULES", "RULE_DESCRIPTIONS", "CheckResult"]

# Findings that mean trainc could not read the inputs as intended: exit code 2.
INPUT_ERROR_RULES = frozenset({"input", "yaml", "policy", "overlay"})

# The built-in rules, for reports that describe them (SARIF ``tool.driver.rules``).
RULE_DESCRIPTIONS: dict[str, str] = {
    "input": "Every path exists and is readable; no two objects share a kind and name",
    "yaml": "Every document is YAML that Kubernetes reads, and a Kubernetes object",
    "crd-schema": "Trainer objects match the CRD schema (fields, types, formats, ObjectMeta)",
    "crd-cel": "Trainer objects pass the CRD's CEL validation rules (x-kubernetes-validations)",
    "webhook": "Trainer admission webhooks accept the runtimes and TrainJobs",
    "resolve": "The runtime each TrainJob references exists and is admitted",
    "render": "The Trainer controller can build the objects of every TrainJob",
    "output-schema": "Rendered JobSets and PodGroups match their CRDs (schema and CEL rules)",
    "policy": "Policies (ValidatingAdmissionPolicy, CUE) can be read and evaluated",
    "overlay": "The cluster's overlays can be read and applied",
    "scheduler": "The schedulers a job needs (coscheduling, Volcano, Kueue) run in the cluster",
    "project": "The project file is valid and its clusters declare the namespaces used",
    "lock": "No patch or TrainJob changes, adds or removes a field an overlay locked",
    "extension": "Opt-in extensions are declared right, enabled, and in resolved delivery",
    "jobset-webhook": "The JobSet webhooks (sigs.k8s.io/jobset) accept the rendered JobSets",
    "downstream": "The API server accepts every Job and Pod the JobSet and Job controllers create",
    "expanded": "No input was written by render --expand (those objects are never applied)",
    "gitops": "Rendered commands survive the GitOps tool's substitution (Flux ${...})",
    "kueue": "Queued TrainJobs reach Kueue, and Kueue can ever admit their Workloads",
    "katib": "Katib accepts each Experiment and can create the trials of its search space",
}


@dataclass
class CheckResult:
    """Every finding (sorted by place), the objects checked, and the source texts."""

    findings: list[Finding]
    objects: list[PolicyObject] = field(default_factory=list)  # inputs, then outputs
    texts: dict[str, str] = field(default_factory=dict)  # source text by display name
    policy_files: list[str] = field(default_factory=list)  # .cue files found
    notes: list[str] = field(default_factory=list)  # checks skipped, and why
    # the builds checked, one per plan (their rendered objects, for check --rendered)
    builds: list[Build] = field(default_factory=list, repr=False, compare=False)
    # the render chain failed on some plan: `trainc render` would exit 2 on these inputs
    render_failed: bool = False

    def count(self, severity: Severity) -> int:
        return self.counts()[severity]

    def counts(self) -> Counter[Severity]:
        """The findings by severity, in one pass."""
        return Counter(f.severity for f in self.findings)

    @property
    def input_error(self) -> bool:
        """Exit 2: wherever ``trainc render`` would exit 2 on the same inputs (any problem
        of the render chain: schema, CEL, webhook, resolve, overlay, scheduler, ...), and
        when a policy cannot be read."""
        return self.render_failed or any(
            f.rule in INPUT_ERROR_RULES and f.severity is Severity.ERROR for f in self.findings
        )

    @property
    def exit_code(self) -> int:
        if self.input_error:
            return EXIT_INPUT_ERROR
        if self.count(Severity.ERROR):
            return EXIT_VIOLATIONS
        return EXIT_OK

    def summary(self) -> str:
        """``2 errors, 1 warning, 0 audit``."""
        counts = self.counts()
        errors, warnings = counts[Severity.ERROR], counts[Severity.WARNING]
        return (
            f"{errors} error{'' if errors == 1 else 's'}, "
            f"{warnings} warning{'' if warnings == 1 else 's'}, "
            f"{counts[Severity.AUDIT]} audit"
        )
