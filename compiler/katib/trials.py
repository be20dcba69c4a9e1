"""The trials Katib could create for an Experiment, each with its TrainJob as Katib makes it.

Substitution is Katib's ``applyParameters``: plain text replacement of
``${trialParameters.<name>}`` in the template's text (Go's JSON of an inline trialSpec, or
a ConfigMap entry as written), metadata references (``${trialSpec.Name}``, ``Namespace``,
``Kind``, ``APIVersion``, ``Labels[k]``, ``Annotations[k]``) included; the text is then
decoded and given the trial's name and namespace.

Trial names have Katib's shape ``<experiment>-<8 characters>``; Katib draws the 8
characters at random from Kubernetes' alphabet, trainc derives them from the assignment
(same alphabet, same length), so names and their lengths are stable across runs.

Which trials (:func:`plan_trials`): for ``grid``, every combination of the listed values
(ints and doubles stepped from min to max), in order, capped by ``maxTrialCount``; for any
other algorithm the *corners* (each categorical or discrete value and each bound of each
int and double, the other parameters at their first value), then ``samples`` seeded
random draws from the feasible space.
"""

from __future__ import annotations

import hashlib
import itertools
import random
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

import yaml

from compiler.katib.experiment import (
    META_PARSE_REGEX,
    META_REGEX,
    PARAM_FORMAT,
    TemplateError,
    decode_template,
    template_text,
)
from compiler.kube.gotext import go_json

__all__ = ["Trial", "TrialPlan", "plan_trials", "substitute", "trial_name"]

# trainc renders at most this many trials of one Experiment (a grid without maxTrialCount
# can hold millions); the plan says when it stopped there
MAX_TRIALS = 500
ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"  # k8s.io/apimachinery/pkg/util/rand
SUFFIX_LENGTH = 8


@dataclass(frozen=True)
class Trial:
    """One assignment (parameter name -> value, in the Experiment's order) and its name."""

    name: str
    assignments: tuple[tuple[str, str], ...]
    why: str  # "grid", "corner", "sample"

    @property
    def label(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.assignments)


@dataclass(frozen=True)
class TrialPlan:
    trials: tuple[Trial, ...]
    total: int  # how many the space holds (grid, counted up to 100,001) or were planned
    capped: bool  # the grid was cut at maxTrialCount
    bounded: bool = False  # cut at trainc's MAX_TRIALS


def trial_name(experiment: str, assignments: tuple[tuple[str, str], ...]) -> str:
    """``<experiment>-<8 characters>``: the assignment's digest in Katib's alphabet."""
    digest = hashlib.sha256(repr(assignments).encode()).digest()
    return experiment + "-" + "".join(ALPHANUMS[b % len(ALPHANUMS)] for b in digest[:SUFFIX_LENGTH])


class SubstitutionError(Exception):
    """applyParameters or the decoding of its result failed, in Katib's words."""


def substitute(
    experiment: dict[str, Any],
    name: str,
    namespace: str,
    assignments: tuple[tuple[str, str], ...],
    config_maps: dict[tuple[str, str], dict[str, Any]],
) -> dict[str, Any]:
    """GetRunSpecWithHyperParameters: the trial's object for ``assignments``."""
    spec = experiment.get("spec") or {}
    template = spec.get("trialTemplate") or {}
    try:
        text = template_text(experiment, config_maps)
    except TemplateError as error:
        raise SubstitutionError(str(error)) from None
    trial_spec = template.get("trialSpec")
    if not isinstance(trial_spec, dict):
        try:
            trial_spec = decode_template(text)
        except (ValueError, yaml.YAMLError) as error:
            raise SubstitutionError(f"failed to convert string to unstructured: {error}") from None
    values = dict(assignments)
    placeholders: dict[str, str] = {}
    non_meta = 0
    for param in template.get("trialParameters") or []:
        pname, ref = str(param.get("name", "")), str(param.get("reference", ""))
        match = META_REGEX.search(ref)
        if not match:
            if ref not in values:
                raise SubstitutionError(
                    "unable to find non-meta parameter from TrialParameters in "
                    f"ParameterAssignment: parameter: {ref}, parameter assignment: "
                    "map[" + " ".join(f"{k}:{values[k]}" for k in sorted(values)) + "]"
                )
            placeholders[pname] = values[ref]
            non_meta += 1
            continue
        key, index = match.group(1), ""
        sub = META_PARSE_REGEX.search(key)
        if sub:
            key, index = sub.group(1), sub.group(2)
        meta = trial_spec.get("metadata")
        meta = meta if isinstance(meta, dict) else {}
        if key == "Name":
            placeholders[pname] = name
        elif key == "Namespace":
            placeholders[pname] = namespace
        elif key == "Kind":
            placeholders[pname] = str(trial_spec.get("kind") or "")
        elif key == "APIVersion":
            placeholders[pname] = str(trial_spec.get("apiVersion") or "")
        elif key in ("Annotations", "Labels"):
            # GetLabels/GetAnnotations: nil unless a map of strings
            table = meta.get(key.lower())
            if not isinstance(table, dict) or not all(isinstance(v, str) for v in table.values()):
                table = {}
            if index not in table:
                kind = "Annotation" if key == "Annotations" else "Label"
                raise SubstitutionError(
                    f"illegal reference of trial metadata: {ref}; failed to fetch {kind}: {index}"
                )
            placeholders[pname] = str(table[index])
        else:
            raise SubstitutionError(f"illegal reference of trial metadata: {ref}")
    if len(assignments) != non_meta:
        raise SubstitutionError(
            "unable to find parameter from ParameterAssignment in TrialParameters"
        )
    for placeholder, value in placeholders.items():
        text = text.replace(PARAM_FORMAT % placeholder, value)
    try:
        obj = decode_template(text)
    except (ValueError, yaml.YAMLError) as error:
        raise SubstitutionError(f"failed to convert string to unstructured: {error}") from None
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        meta = obj["metadata"] = {}
    for key, value in (("name", name), ("namespace", namespace)):
        if value:
            meta[key] = value
        else:
            meta.pop(key, None)
    return obj


def serialised(obj: dict[str, Any]) -> str:
    """The trial object's text as ``Unstructured.MarshalJSON`` writes it (Go's JSON and
    the encoder's closing newline)."""
    return go_json(obj) + "\n"


def _values(param: dict[str, Any]) -> list[str]:
    """Every value of a parameter a grid walks: the list, or min to max by step."""
    space = param.get("feasibleSpace") or {}
    if space.get("list"):
        return [str(v) for v in space["list"]]
    low, high = str(space.get("min", "")), str(space.get("max", ""))
    kind = param.get("parameterType")
    try:
        lo, hi = Decimal(low), Decimal(high)
        step = Decimal(str(space.get("step") or ("1" if kind == "int" else "0")))
    except InvalidOperation:
        return [v for v in (low, high) if v]
    if step <= 0:
        return [low, high] if low != high else [low]
    out: list[str] = []
    value = lo
    while value <= hi and len(out) < 10_000:
        out.append(str(int(value)) if kind == "int" else _double(value))
        value += step
    return out


def _double(value: Decimal) -> str:
    return format(value.normalize(), "f") if value == value.to_integral() else str(value)


def _corners(param: dict[str, Any]) -> list[str]:
    space = param.get("feasibleSpace") or {}
    if space.get("list"):
        return [str(v) for v in space["list"]]
    return list(dict.fromkeys(str(space.get(k, "")) for k in ("min", "max")))


def _sample(param: dict[str, Any], rng: random.Random) -> str:
    space = param.get("feasibleSpace") or {}
    if space.get("list"):
        return str(rng.choice(space["list"]))
    try:
        lo, hi = float(space.get("min", 0)), float(space.get("max", 0))
    except (TypeError, ValueError):
        return str(space.get("min", ""))
    if param.get("parameterType") == "int":
        return str(rng.randint(int(lo), int(hi)))
    return repr(round(rng.uniform(lo, hi), 6))


def plan_trials(experiment: dict[str, Any], samples: int = 0, seed: int = 0) -> TrialPlan:
    """The trials trainc checks for a (defaulted, valid) Experiment; see the module doc."""
    spec = experiment.get("spec") or {}
    name = str((experiment.get("metadata") or {}).get("name") or "")
    params = [p for p in spec.get("parameters") or [] if isinstance(p, dict)]
    names = [str(p.get("name", "")) for p in params]
    if not params:
        return TrialPlan((), 0, False)
    cap = spec.get("maxTrialCount")
    algorithm = str((spec.get("algorithm") or {}).get("algorithmName") or "")
    assignments: list[tuple[tuple[str, str], ...]] = []
    whys: list[str] = []
    if algorithm == "grid":
        grid = itertools.product(*(_values(p) for p in params))
        limit = MAX_TRIALS if not isinstance(cap, int) else min(cap, MAX_TRIALS)
        total = 0
        for combo in grid:
            total += 1
            if len(assignments) < limit:
                assignments.append(tuple(zip(names, combo, strict=True)))
                whys.append("grid")
            if total > 100_000:
                break
        capped = isinstance(cap, int) and total > cap
        bounded = (
            total > limit
            and limit == MAX_TRIALS
            and not (isinstance(cap, int) and cap <= MAX_TRIALS)
        )
    else:
        firsts = [_corners(p)[0] for p in params]
        seen: set[tuple[tuple[str, str], ...]] = set()
        for i, param in enumerate(params):
            for value in _corners(param):
                corner = list(firsts)
                corner[i] = value
                key = tuple(zip(names, corner, strict=True))
                if key not in seen:
                    seen.add(key)
                    assignments.append(key)
                    whys.append("corner")
        rng = random.Random(seed)
        for _ in range(samples):
            key = tuple((n, _sample(p, rng)) for n, p in zip(names, params, strict=True))
            if key not in seen:
                seen.add(key)
                assignments.append(key)
                whys.append("sample")
        del assignments[MAX_TRIALS:], whys[MAX_TRIALS:]
        total, capped, bounded = len(assignments), False, len(assignments) == MAX_TRIALS
    trials = tuple(
        Trial(trial_name(name, a), a, why) for a, why in zip(assignments, whys, strict=True)
    )
    return TrialPlan(trials, total, capped, bounded)
