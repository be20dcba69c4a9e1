"""What happens below the JobSet, as a golden records it: ``golden/<case>/downstream.yaml``.

expected.yaml holds the Trainer's objects (the oracle's fact). Below them, on Trainer
v2.3.0 (``BELOW_THE_JOBSET``), the JobSet webhook may deny the JobSet, or the API server
may refuse a Job the JobSet controller creates (or a Pod the Job controller creates).
downstream.yaml records those refusals as the real controllers reported them, written
only by the live control plane (``make conformance-live ARGS=--record-downstream``),
never from trainc's output::

    refusals:
    - object: JobSet default/gpu-requests        # the object the event is about
      reason: JobCreationFailed                  # the event's reason
      message: 'job "gpu-requests-node-0" creation failed with error: Job.batch ...'

trainc's render problems of the downstream rules (``jobset-webhook``, ``downstream``:
compiler/expand/refusal.py and downstream.py) are held to these events by
:func:`downstream_difference`. Each recorded event must be one of trainc's, word for word
(trainc may add a hint after it); normalised on both sides only by :func:`event_key`:
what :func:`~tests.conformance.cases.message_key` masks, and the five random characters
of a generated Pod name. Both sides are compared line by line: the JobSet controller
creates a replicated job's Jobs in parallel and joins every refusal into one event, one
line each in the order they came back, which trainc may list in another order (a hint
on a line of its own is not a refusal), and the errors of one refusal in any order (Go
lists a map's in random order). trainc may say more than the cluster did in one
case only: the JobSet controller creates the replicated jobs in order and stops at the
first whose Jobs are refused (``reconcileReplicatedJobs``), so a refusal of a later
replicated job of that JobSet is never reported by the cluster; trainc reports every
replicated job's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from compiler.errors import Problem
from tests.conformance.cases import message_key

DOWNSTREAM_RULES = frozenset({"jobset-webhook", "downstream"})
FILE_NAME = "downstream.yaml"
# A Pod's generated name in the API server's answer: the prefix, then five random characters
# (``Pod "..." is invalid`` from validation, ``pods "..." is forbidden`` from admission).
_POD_NAME = re.compile(r'((?:Pod|pods) "[a-z0-9.-]+-)[a-z0-9]{5}(")')
_JOB_EVENT = re.compile(r'^job "([^"]+)" creation failed with error: ')


@dataclass(frozen=True)
class Refusal:
    """One event a real controller reported about a refusal below the JobSet."""

    object: str  # "<Kind> <namespace>/<name>"
    reason: str
    message: str

    def as_dict(self) -> dict[str, str]:
        return {"object": self.object, "reason": self.reason, "message": self.message}


def event_key(text: str) -> str:
    """An event as compared: what changes from run to run masked.

    >>> event_key('Error creating: Pod "llm-node-0-0-x7k2p" is invalid')
    'Error creating: Pod "llm-node-0-0-<random>" is invalid'
    >>> event_key('Error creating: pods "llm-node-0-0-x7k2p" is forbidden: pod rejected')
    'Error creating: pods "llm-node-0-0-<random>" is forbidden: pod rejected'
    """
    return _POD_NAME.sub(r"\1<random>\2", message_key(text))


def is_downstream(problem: Problem) -> bool:
    return problem.rule in DOWNSTREAM_RULES


def read(path: Path) -> list[Refusal] | None:
    """The refusals a downstream.yaml records; None when there is no such file."""
    if not path.is_file():
        return None
    document = yaml.safe_load(path.read_text()) or {}
    return [
        Refusal(str(r["object"]), str(r["reason"]), str(r["message"]))
        for r in document.get("refusals") or []
    ]


def header(versions: dict[str, str]) -> str:
    said = ", ".join(f"{k} {v}" for k, v in versions.items())
    return (
        f"# Recorded from the live control plane (tests/live): {said}.\n"
        "# What the real controllers reported below the JobSet for this case's inputs.\n"
        "# Rewrite with `make conformance-live ARGS=--record-downstream`; do not edit by hand.\n"
    )


def write(path: Path, refusals: Sequence[Refusal], versions: dict[str, str]) -> None:
    document = {"producedBy": versions, "refusals": [r.as_dict() for r in refusals]}
    text = yaml.safe_dump(document, sort_keys=False, width=10_000, allow_unicode=True)
    path.write_text(header(versions) + text)


def _replicated_job_order(objects: Iterable[dict[str, Any]]) -> dict[str, list[str]]:
    """``namespace/jobset`` -> its replicated jobs' names, in the JobSet's order."""
    order: dict[str, list[str]] = {}
    for obj in objects:
        if obj.get("kind") != "JobSet":
            continue
        meta = obj.get("metadata") or {}
        key = f"{meta.get('namespace', 'default')}/{meta.get('name', '')}"
        rjobs = (obj.get("spec") or {}).get("replicatedJobs") or []
        order[key] = [str(r.get("name", "")) for r in rjobs]
    return order


def _rjob_index(jobset: str, job_name: str, rjobs: list[str]) -> int | None:
    """The replicated job a Job ``<jobset>-<rjob>-<index>`` belongs to (its position)."""
    name = jobset.split("/", 1)[1]
    for index, rjob in sorted(enumerate(rjobs), key=lambda pair: -len(pair[1])):
        if re.fullmatch(re.escape(f"{name}-{rjob}-") + r"\d+", job_name):
            return index
    return None


def event_lines(refusal: Refusal) -> list[str]:
    """A JobCreationFailed event joins the refused Jobs of one replicated job with a
    newline (Go's errors.Join, in the controller's random order): one line each."""
    return [event_key(line) for line in refusal.message.split("\n") if line]


_HINT_LINE = re.compile(r"^\(.*\)$")
_ENV_INDEX = re.compile(r"\.env\[\d+\]")
# an aggregate of field errors, ``... is invalid: [a, b]`` (a hint may follow)
_AGGREGATE = re.compile(r"^(.*? is invalid: \[)(.*)(\].*)$")
# between two field errors of an aggregate: ", " before the next field path
_AGGREGATE_SPLIT = re.compile(r", (?=(?:spec|metadata|status)[\w.\[\]/*-]*: |<nil>: )")


def errors_unordered(line: str) -> str:
    """A refusal with the errors of its aggregate sorted: the API server lists the
    errors of a map (a resource list, labels) in Go's random map order, so the same
    Job is refused in other words on a retry (as tests/pods/validate_fuzz.py compares).

    >>> errors_unordered('Job.batch "j" is invalid: [spec.b: x, spec.a: y] (hint)')
    'Job.batch "j" is invalid: [spec.a: y, spec.b: x] (hint)'
    """
    found = _AGGREGATE.match(line)
    if found is None:
        return line
    errors = sorted(_AGGREGATE_SPLIT.split(found.group(2)))
    return found.group(1) + ", ".join(errors) + found.group(3)


def env_unordered(line: str) -> str:
    """A refusal with its env indices masked and its errors sorted: where the env order
    is random upstream, so are the indices and the order of the errors about them.

    >>> env_unordered('Job.batch "j" is invalid: [spec.env[5].name: x, spec.env[0].value: y]')
    'Job.batch "j" is invalid: [spec.env[*].name: x, spec.env[*].value: y]'
    """
    return errors_unordered(_ENV_INDEX.sub(".env[*]", line))


def _said_lines(message: str) -> list[str]:
    """trainc's refusal as lines: a replicated job's refused replicas one per line (as the
    JobSet controller's joined event has them), a hint on a line of its own left out.

    >>> _said_lines('job "a-0" creation failed\\njob "a-1" creation failed\\n(the API ...)')
    ['job "a-0" creation failed', 'job "a-1" creation failed']
    """
    return [event_key(line) for line in message.split("\n") if line and not _HINT_LINE.match(line)]


def downstream_difference(
    recorded: list[Refusal] | None,
    problems: Iterable[Problem],
    objects: Iterable[dict[str, Any]],
    env_order_random: bool = False,
) -> str | None:
    """trainc's downstream problems against the recorded refusals; None when they agree.

    ``problems``: trainc's render problems (those of the downstream rules are compared);
    ``objects``: the Trainer's objects (the JobSets' replicated-job order);
    ``env_order_random``: the runtime's env order is random upstream (xgboost), so are
    the env indices in a refusal (:func:`env_unordered`). The errors of one refusal are
    compared in any order (:func:`errors_unordered`)."""
    said = [
        line
        for p in problems
        if is_downstream(p) and p.field_path is None
        for line in _said_lines(p.message)
    ]

    unordered = env_unordered if env_order_random else errors_unordered

    def lines_of(refusal: Refusal) -> list[str]:
        return [unordered(line) for line in event_lines(refusal)]

    said = [unordered(line) for line in said]
    if recorded is None:
        if said:
            return (
                "trainc refuses below the JobSet, the cluster did not (no downstream.yaml):\n"
                + ("\n".join(said))
            )
        return None
    if not said:
        return (
            "the cluster refused below the JobSet (downstream.yaml), trainc renders: "
            + "; ".join(r.message for r in recorded)
        )
    missing = [
        line for r in recorded for line in lines_of(r) if not any(s.startswith(line) for s in said)
    ]
    if missing:
        return "\n".join(["recorded, not in trainc's output:", *missing, "trainc:", *said])
    matched = {s for s in said for r in recorded for line in lines_of(r) if s.startswith(line)}
    order = _replicated_job_order(objects)
    stopped: dict[str, int] = {}  # jobset -> the replicated job the controller stopped at
    for refusal in recorded:
        kind, _, jobset = refusal.object.partition(" ")
        for line in lines_of(refusal):
            job = _JOB_EVENT.match(line)
            if kind == "JobSet" and job and jobset in order:
                index = _rjob_index(jobset, job.group(1), order[jobset])
                if index is not None:
                    stopped[jobset] = min(stopped.get(jobset, index), index)
    # one error of the webhook's denial, said on its own (trainc locates each) as well
    # as within the whole event: part of a recorded line, not a refusal of its own
    lines = [line for r in recorded for line in lines_of(r)]
    for extra in (s for s in said if s not in matched and not any(s in line for line in lines)):
        job = _JOB_EVENT.match(extra)
        later = job is not None and any(
            (index := _rjob_index(jobset, job.group(1), order[jobset])) is not None
            and index > stopped[jobset]
            for jobset in stopped
        )
        if not later:
            return "trainc refuses what the cluster did not report:\n" + extra
    return None
