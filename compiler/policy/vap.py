"""ValidatingAdmissionPolicy, evaluated offline the way the API server admits a CREATE.

Users keep ``ValidatingAdmissionPolicy`` and ``ValidatingAdmissionPolicyBinding`` objects
(``admissionregistration.k8s.io/v1``) and their parameter objects beside their jobs::

    policies = PolicySet.from_manifests(loaded.others)     # InputError on a bad policy
    findings = policies.evaluate(objects, {"team-a": {"env": "prod"}})

Semantics follow k8s.io/apiserver v0.36.2 (``pkg/admission/plugin/policy/validating``,
``.../policy/matching``, ``.../policy/generic``):

* every object is a CREATE with no old object (``oldObject`` is null) and an empty user;
* ``matchConstraints`` of the policy, then each binding's ``matchResources``: resource
  rules (``apiGroups``, ``apiVersions``, ``resources`` with ``*`` and ``res/sub``,
  ``operations``, ``scope``, ``resourceNames``), ``excludeResourceRules``,
  ``namespaceSelector`` (labels from the ``namespaces`` argument; a namespace that is
  not there has none) and ``objectSelector``. ``matchPolicy: Equivalent`` is evaluated
  as ``Exact``: each kind trainc checks is served in one version only;
* ``paramKind``/``paramRef``: by ``name`` or ``selector``, in ``paramRef.namespace`` or
  the object's namespace for a namespaced kind, one evaluation per parameter object;
  none found is allowed, or denied with ``parameterNotFoundAction: Deny``;
* ``matchConditions`` (all true, else the policy does not apply; an error follows
  ``failurePolicy``), ``variables`` (only when used; see "Speed" below),
  ``validations`` (``message``, ``messageExpression``, ``reason``, ``fieldPath``),
  ``auditAnnotations``;
* a failed or erroring validation is one decision; the binding's ``validationActions``
  say what it does: ``Deny`` rejects (:attr:`Severity.ERROR`), ``Warn`` warns
  (``WARNING``), ``Audit`` records an audit annotation (``AUDIT``). As in the API
  server one decision with several actions has all their effects: it is reported once,
  with the strongest severity and every action in ``details``. Configuration errors
  (params not found with ``Deny``, an audit annotation that fails) deny whatever the
  actions, as upstream. The API server stops at the first denial; trainc reports all.

Speed: each object is bound once into one CEL activation, its candidate parameter
objects in slots beside it, so the engine converts it once for every policy. A policy
without matchConditions and auditAnnotations is one program per object (its
validations, each failed one's message, its variables computed once inside); otherwise
each expression computes the variables it uses inside itself (``cel.bind``). Whenever
anything errors, or a variable's type does not survive the engine's plain values
(uint, timestamp, optional...), the evaluation is done one expression at a time, each
variable evaluated at most once and bound by value, which gives the API server's error
texts.

A policy trainc cannot evaluate as written is an :class:`~compiler.errors.InputError`
located at the offending field: an expression that does not compile (or has the wrong
result type), ``authorizer`` (it needs a live cluster), a missing ``matchConstraints``,
bad ``validationActions``, an invalid label selector.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Final, NamedTuple

from compiler.apiserver.cel.engine import (
    DURATION,
    DYN,
    TIMESTAMP,
    CelBudgetExceeded,
    CelCompileError,
    CelEvalError,
    VarType,
)
from compiler.apiserver.cel.k8s import (
    VARIABLE_PREFIX,
    Activation,
    K8sProgram,
    k8s_engine,
    references,
    unbound_variable,
)
from compiler.apiserver.manifest import Manifest
from compiler.errors import (
    Finding,
    InputError,
    JsonPath,
    ObjectRef,
    Problem,
    Severity,
    SourceLocation,
)
from compiler.kube.labels import selector_matches
from compiler.policy.objects import PolicyObject
from compiler.upstream.names import TRAINER_GROUP

__all__ = ["OutputLocator", "PolicySet", "resource_of"]

# Where in the inputs a field of an output came from: (output, its field) -> location.
OutputLocator = Callable[[PolicyObject, JsonPath], SourceLocation]

_GROUP: Final = "admissionregistration.k8s.io"
_POLICY_KIND: Final = "ValidatingAdmissionPolicy"
_BINDING_KIND: Final = "ValidatingAdmissionPolicyBinding"
_MAX_MESSAGE_BYTES: Final = 5 * 1024
_MAX_ANNOTATION_VALUE: Final = 10 * 1024
_FAILURE_ANNOTATION: Final = "validation.policy.admission.k8s.io/validation_failure"

# --- kinds -> resources ---------------------------------------------------------------------

_RESOURCES: Final[dict[tuple[str, str], tuple[str, bool]]] = {
    (TRAINER_GROUP, "TrainJob"): ("trainjobs", True),
    (TRAINER_GROUP, "TrainingRuntime"): ("trainingruntimes", True),
    (TRAINER_GROUP, "ClusterTrainingRuntime"): ("clustertrainingruntimes", False),
    ("jobset.x-k8s.io", "JobSet"): ("jobsets", True),
    ("scheduling.x-k8s.io", "PodGroup"): ("podgroups", True),
    ("scheduling.volcano.sh", "PodGroup"): ("podgroups", True),
    ("", "ConfigMap"): ("configmaps", True),
    ("", "Secret"): ("secrets", True),
    ("", "Namespace"): ("namespaces", False),
    ("", "Pod"): ("pods", True),
    ("", "Service"): ("services", True),
    ("", "ServiceAccount"): ("serviceaccounts", True),
    ("scheduling.k8s.io", "PriorityClass"): ("priorityclasses", False),
}


class Resource(NamedTuple):
    """An API resource (a tuple: policies are looked up by it for every object)."""

    group: str
    version: str
    resource: str
    kind: str
    namespaced: bool


def _split_api_version(api_version: str) -> tuple[str, str]:
    group, _, version = api_version.rpartition("/")
    return group, version


def _plural(kind: str) -> str:
    lower = kind.lower()
    if lower.endswith(("s", "x", "ch", "sh")):
        return lower + "es"
    if lower.endswith("y") and lower[-2:-1] not in ("a", "e", "i", "o", "u"):
        return lower[:-1] + "ies"
    return lower + "s"


# the resources of the kinds in _RESOURCES, by (apiVersion, kind): made once per kind
_KNOWN: Final[dict[tuple[Any, Any], Resource]] = {}


def resource_of(data: Mapping[str, Any]) -> Resource:
    """The API resource of an object: ``TrainJob`` -> ``trainer.kubeflow.org/v1alpha1 trainjobs``."""
    api_version, kind = data.get("apiVersion", ""), data.get("kind", "")
    found = _KNOWN.get((api_version, kind))
    if found is not None:
        return found
    group, version = _split_api_version(str(api_version))
    kind = str(kind)
    known = _RESOURCES.get((group, kind))
    if known is not None:
        resource = Resource(group, version, known[0], kind, known[1])
        if isinstance(api_version, str) and isinstance(data.get("kind"), str):
            _KNOWN[(api_version, kind)] = resource
        return resource
    metadata = data.get("metadata") or {}
    namespaced = bool(isinstance(metadata, dict) and metadata.get("namespace"))
    return Resource(group, version, _plural(kind), kind, namespaced)


# --- label selectors --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Selector:
    labels: tuple[tuple[str, str], ...] = ()
    expressions: tuple[tuple[str, str, tuple[str, ...]], ...] = ()

    def empty(self) -> bool:
        return not self.labels and not self.expressions

    def matches(self, labels: Mapping[str, str]) -> bool:
        return selector_matches(labels, self.labels, self.expressions)


_EVERYTHING: Final = _Selector()


def _parse_selector(value: Any, where: JsonPath, problems: _Problems) -> _Selector:
    if value is None:
        return _EVERYTHING  # defaulted to {} when the object is created
    if not isinstance(value, dict):
        problems.add(where, "a label selector must be an object")
        return _EVERYTHING
    labels = value.get("matchLabels") or {}
    expressions = value.get("matchExpressions") or []
    parsed: list[tuple[str, str, tuple[str, ...]]] = []
    if not isinstance(labels, dict):
        problems.add((*where, "matchLabels"), "matchLabels must be a map of strings")
        labels = {}
    if not isinstance(expressions, list):
        problems.add((*where, "matchExpressions"), "matchExpressions must be a list")
        expressions = []
    for index, item in enumerate(expressions):
        path = (*where, "matchExpressions", index)
        if not isinstance(item, dict):
            problems.add(path, "a match expression must be an object")
            continue
        key, operator = str(item.get("key", "")), str(item.get("operator", ""))
        values = item.get("values") or []
        if not isinstance(values, list):
            values = []
        if operator in ("In", "NotIn") and not values:
            problems.add((*path, "values"), "must be specified when `operator` is 'In' or 'NotIn'")
        elif operator in ("Exists", "DoesNotExist") and values:
            problems.add(
                (*path, "values"),
                "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            )
        elif operator not in ("In", "NotIn", "Exists", "DoesNotExist"):
            problems.add((*path, "operator"), f'not a valid selector operator: "{operator}"')
        parsed.append((key, operator, tuple(str(v) for v in values)))
    return _Selector(tuple(sorted((str(k), str(v)) for k, v in labels.items())), tuple(parsed))


# --- problems while reading the policies ------------------------------------------------------


class _Problems:
    def __init__(self) -> None:
        self.items: list[Problem] = []
        self.manifest: Manifest | None = None

    def add(self, path: JsonPath, message: str) -> None:
        manifest = self.manifest
        location = manifest.locate(path) if manifest is not None else None
        ref = manifest.ref if manifest is not None else None
        self.items.append(Problem(message, location, ref, _field(path) or None, "policy"))


def _field(path: Sequence[str | int]) -> str:
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif out:
            out += f".{part}"
        else:
            out = str(part)
    return out


# --- compiled policies -----------------------------------------------------------------------

# the object's parameter objects, by slot, in the activation of inlined programs
_PARAM_SLOTS: Final = "trainc_params"
_PASSED: Final = "trainc_passed"  # a validation's value, in a fused program

_OBJECT_VARS: Final[dict[str, VarType]] = {
    "object": DYN,
    "oldObject": DYN,
    "request": DYN,
    "namespaceObject": DYN,
    "params": DYN,
    "authorizer": DYN,
}


@dataclass(frozen=True)
class _Rule:
    operations: tuple[str, ...]
    groups: tuple[str, ...]
    versions: tuple[str, ...]
    resources: tuple[str, ...]
    scope: str
    names: tuple[str, ...]

    def matches(self, resource: Resource, namespace: str, name: str) -> bool:
        if self.scope == "Namespaced" and (
            (resource.resource == "namespaces" and resource.group == "") or not namespace
        ):
            return False
        if self.scope == "Cluster" and not (
            (resource.resource == "namespaces" and resource.group == "") or not namespace
        ):
            return False
        if self.scope not in ("*", "Namespaced", "Cluster"):
            return False
        if not any(op in ("*", "CREATE") for op in self.operations):
            return False
        if not any(g in ("*", resource.group) for g in self.groups):
            return False
        if not any(v in ("*", resource.version) for v in self.versions):
            return False
        found = False
        for item in self.resources:
            res, _, sub = item.partition("/")
            if res in ("*", resource.resource) and sub in ("*", ""):
                found = True
                break
        if not found:
            return False
        return not self.names or name in self.names


@dataclass(frozen=True)
class _Match:
    namespace_selector: _Selector
    object_selector: _Selector
    rules: tuple[_Rule, ...]
    excludes: tuple[_Rule, ...]
    # whether the rules take a resource, by (resource, namespaced): worked out once per
    # kind, as long as no rule names objects (resourceNames)
    _by_resource: dict[tuple[Resource, bool], bool] = field(
        default_factory=dict, compare=False, repr=False
    )

    named: bool = field(init=False, compare=False, repr=False)  # a rule names objects

    def __post_init__(self) -> None:
        named = any(rule.names for rule in (*self.rules, *self.excludes))
        object.__setattr__(self, "named", named)

    def _rules_match(self, resource: Resource, namespace: str, name: str) -> bool:
        if any(rule.matches(resource, namespace, name) for rule in self.excludes):
            return False
        if not self.rules:
            return True
        return any(rule.matches(resource, namespace, name) for rule in self.rules)

    def matches(
        self,
        resource: Resource,
        namespace: str,
        name: str,
        labels: Mapping[str, str],
        namespaces: Mapping[str, Mapping[str, str]],
    ) -> bool:
        if (namespace or resource.resource == "namespaces") and not self.namespace_selector.empty():
            ns_labels = namespaces.get(namespace if namespace else name) or {}
            if not self.namespace_selector.matches(ns_labels):
                return False
        if not self.object_selector.empty() and not self.object_selector.matches(labels):
            return False
        return self.may_match(resource, namespace, name)

    def may_match(self, resource: Resource, namespace: str, name: str) -> bool:
        """Whether the resource rules take the object (the selectors aside)."""
        if self.named:
            return self._rules_match(resource, namespace, name)
        key = (resource, bool(namespace))
        found = self._by_resource.get(key)
        if found is None:
            found = self._by_resource[key] = self._rules_match(resource, namespace, name)
        return found


def _parse_rules(value: Any, where: JsonPath, problems: _Problems) -> tuple[_Rule, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        problems.add(where, "must be a list of rules")
        return ()
    rules = []
    for index, item in enumerate(value):
        if not isinstance(item, dict):
            problems.add((*where, index), "a rule must be an object")
            continue

        def strings(key: str, item: dict[str, Any] = item) -> tuple[str, ...]:
            raw = item.get(key) or []
            return tuple(str(v) for v in raw) if isinstance(raw, list) else ()

        rules.append(
            _Rule(
                strings("operations"),
                strings("apiGroups"),
                strings("apiVersions"),
                strings("resources"),
                str(item.get("scope") or "*"),
                strings("resourceNames"),
            )
        )
    return tuple(rules)


def _parse_match(value: Any, where: JsonPath, problems: _Problems) -> _Match:
    data = value if isinstance(value, dict) else {}
    return _Match(
        _parse_selector(data.get("namespaceSelector"), (*where, "namespaceSelector"), problems),
        _parse_selector(data.get("objectSelector"), (*where, "objectSelector"), problems),
        _parse_rules(data.get("resourceRules"), (*where, "resourceRules"), problems),
        _parse_rules(data.get("excludeResourceRules"), (*where, "excludeResourceRules"), problems),
    )


@dataclass
class _Expr:
    source: str
    program: K8sProgram
    variables: frozenset[str]  # composition variables it uses (by name)
    # the variables it needs, its own and theirs, in the policy's order, when they can
    # be computed inside it (see _inline_variables); None when they cannot
    lets: tuple[str, ...] | None = ()
    reads_params: bool = False  # it or one of those variables reads params


@dataclass
class _Validation:
    expr: _Expr
    message: str
    message_expr: _Expr | None
    reason: str | None
    field_path: JsonPath | None


@dataclass
class _Policy:
    name: str
    manifest: Manifest
    match: _Match
    failure_policy: str
    param_kind: tuple[str, str] | None  # (apiVersion, kind)
    variables: dict[str, _Expr]
    conditions: list[tuple[str, _Expr]]
    validations: list[_Validation]
    annotations: list[tuple[str, _Expr]]
    bindings: list[_Binding] = field(default_factory=list)
    inlined: bool = False  # every expression can compute its variables (_inline_variables)
    declared: dict[str, VarType] = field(default_factory=dict)  # the variables declared
    # the inlined programs, made on first use: by (id of the expression, params slot)
    _programs: dict[tuple[int, int | None], K8sProgram | None] = field(
        default_factory=dict, repr=False
    )
    _fused: dict[int | None, K8sProgram | None] = field(default_factory=dict, repr=False)

    def inlined_program(self, expr: _Expr, slot: int | None) -> K8sProgram | None:
        """``expr`` with its variables computed inside it, and ``params`` bound to entry
        ``slot`` of the object's parameter objects (None: no params), for
        :class:`_InlinedContext`; None when the engine cannot compile it."""
        assert expr.lets is not None
        key = (id(expr), slot if expr.reads_params else None)
        if key[1] is None and not expr.lets:
            return expr.program
        if key not in self._programs:
            lets = [("params", f"{_PARAM_SLOTS}[{key[1]}]")] if key[1] is not None else []
            lets += [
                (f"{VARIABLE_PREFIX}{name}", self.variables[name].program.run_source)
                for name in expr.lets
            ]
            declared = {**self.declared, _PARAM_SLOTS: DYN}
            self._programs[key] = k8s_engine().compile_let(lets, expr.program, declared)
        return self._programs[key]

    @property
    def fused(self) -> bool:
        """Whether :meth:`fused_program` applies: every validation inlined, and neither
        matchConditions nor auditAnnotations (which it does not evaluate)."""
        return (
            self.inlined
            and bool(self.validations)
            and not self.conditions
            and not (self.annotations)
        )

    def fused_program(self, slot: int | None) -> K8sProgram | None:
        """Every validation of the policy, with its message when it fails, in one
        program over the object's activation (variables computed once for all).

        The value is a list with, per validation, ``[]`` when it passes, else a list
        of the message expression's value (``""`` without one). It evaluates a message
        on failure only, as the API server does. Any error fails the whole program:
        :func:`_evaluate_policy` then evaluates the policy the slow way.
        """
        expressions = [v.expr for v in self.validations]
        expressions += [v.message_expr for v in self.validations if v.message_expr is not None]
        key = slot if any(e.reads_params for e in expressions) else None
        if key not in self._fused:
            needed = {name for e in expressions for name in e.lets or ()}
            lets = [("params", f"{_PARAM_SLOTS}[{key}]")] if key is not None else []
            lets += [
                (f"{VARIABLE_PREFIX}{name}", program.program.run_source)
                for name, program in self.variables.items()
                if name in needed
            ]
            parts = []
            for validation in self.validations:
                message = '[""]'
                if validation.message_expr is not None:
                    message = f"[(\n{validation.message_expr.program.run_source}\n)]"
                parts.append(
                    f"cel.bind({_PASSED}, (\n{validation.expr.program.run_source}\n),"
                    f" {_PASSED} == true ? [] : {message})"
                )
            body = "[" + ", ".join(parts) + "]"
            declared = {**self.declared, _PARAM_SLOTS: DYN}
            self._fused[key] = k8s_engine().compile_let(lets, body, declared)
        return self._fused[key]

    def expressions(self) -> list[_Expr]:
        """Every expression evaluated on an object, variables aside."""
        out = [expr for _, expr in self.conditions]
        for validation in self.validations:
            out.append(validation.expr)
            if validation.message_expr is not None:
                out.append(validation.message_expr)
        out.extend(expr for _, expr in self.annotations)
        return out


@dataclass
class _ParamRef:
    name: str | None
    namespace: str | None
    selector: _Selector | None
    deny_if_missing: bool


@dataclass
class _Binding:
    name: str
    manifest: Manifest
    policy_name: str
    actions: tuple[str, ...]
    match: _Match | None
    param_ref: _ParamRef | None
    _details: dict[str, tuple[tuple[str, str], ...]] = field(
        default_factory=dict, repr=False, compare=False
    )

    @cached_property
    def actions_text(self) -> str:
        """The actions as a finding's details show them: ``Deny,Audit``."""
        return ",".join(self.actions)

    def details(self, reason: str) -> tuple[tuple[str, str], ...]:
        """A finding's details without an audit annotation: one tuple per reason, shared
        by every finding of the binding (made and sent between processes once)."""
        found = self._details.get(reason)
        if found is None:
            found = (
                ("reason", reason),
                ("binding", self.name),
                ("validationActions", self.actions_text),
            )
            self._details[reason] = found
        return found


class _Compiler:
    """Compiles one policy's expressions, collecting problems at their source."""

    def __init__(self, problems: _Problems) -> None:
        self.problems = problems
        self.engine = k8s_engine()

    def expression(
        self,
        source: Any,
        where: JsonPath,
        declared: Mapping[str, VarType],
        returns: tuple[str, ...] | None,
        allow_authorizer: bool = True,
    ) -> _Expr | None:
        if not isinstance(source, str) or not source.strip():
            self.problems.add(where, "Required value: an expression is required")
            return None
        if references(source, "authorizer"):
            where_note = "" if allow_authorizer else " (and not available in messageExpression)"
            self.problems.add(
                where,
                f"authorizer is not supported offline{where_note}: trainc cannot ask a"
                " cluster's authorizer; remove the authorizer check or keep this policy"
                " out of trainc's inputs",
            )
            return None
        try:
            program = self.engine.compile(source, declared)
        except CelCompileError as error:
            self.problems.add(where, f"compilation failed: {error}")
            return None
        assert isinstance(program, K8sProgram)
        if returns is not None and program.checked and program.result_type not in returns:
            if len(returns) == 1:
                reason = f"must evaluate to {returns[0]} but got {program.result_type}"
            else:
                reason = (
                    f"must evaluate to one of [{' '.join(returns)}] but got {program.result_type}"
                )
            self.problems.add(where, reason)
            return None
        used = frozenset(
            n[len(VARIABLE_PREFIX) :] for n in program.variables if n.startswith(VARIABLE_PREFIX)
        )
        return _Expr(source, program, used)


_NAME_RE: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _strings(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _compile_policy(manifest: Manifest, problems: _Problems) -> _Policy | None:
    problems.manifest = manifest
    compiler = _Compiler(problems)
    spec = manifest.data.get("spec")
    if not isinstance(spec, dict):
        problems.add(("spec",), "Required value: spec is required")
        return None
    if not isinstance(spec.get("matchConstraints"), dict):
        problems.add(("spec", "matchConstraints"), "Required value: matchConstraints is required")
    if not spec.get("validations") and not spec.get("auditAnnotations"):
        problems.add(
            ("spec", "validations"),
            "Required value: validations or auditAnnotations must contain at least one item",
        )
    match = _parse_match(spec.get("matchConstraints"), ("spec", "matchConstraints"), problems)
    failure = str(spec.get("failurePolicy") or "Fail")
    if failure not in ("Fail", "Ignore"):
        problems.add(("spec", "failurePolicy"), f'Unsupported value: "{failure}"')
    param_kind = None
    if isinstance(spec.get("paramKind"), dict):
        pk = spec["paramKind"]
        param_kind = (str(pk.get("apiVersion", "")), str(pk.get("kind", "")))
    declared: dict[str, VarType] = dict(_OBJECT_VARS)
    variables = _compile_variables(spec, compiler, problems, declared)
    conditions = []
    for index, item in _items(spec, "matchConditions"):
        where: JsonPath = ("spec", "matchConditions", index)
        expr = compiler.expression(
            item.get("expression"), (*where, "expression"), declared, ("bool",)
        )
        if expr is not None:
            conditions.append((str(item.get("name", "")), expr))
    validations = [
        validation
        for index, item in _items(spec, "validations")
        if (validation := _compile_validation(item, index, compiler, problems, declared))
    ]
    annotations = []
    for index, item in _items(spec, "auditAnnotations"):
        where = ("spec", "auditAnnotations", index)
        expr = compiler.expression(
            item.get("valueExpression"),
            (*where, "valueExpression"),
            declared,
            ("string", "null_type"),
        )
        if expr is not None:
            annotations.append((str(item.get("key", "")), expr))
    policy = _Policy(
        manifest.name,
        manifest,
        match,
        failure,
        param_kind,
        variables,
        conditions,
        validations,
        annotations,
    )
    policy.declared = declared
    _inline_variables(policy)
    return policy


def _items(spec: dict[str, Any], field: str) -> list[tuple[int, dict[str, Any]]]:
    """The entries of the list ``spec[field]`` with their indexes; a non-object as ``{}``."""
    return [
        (index, item if isinstance(item, dict) else {})
        for index, item in enumerate(_strings(spec.get(field)))
    ]


def _compile_variables(
    spec: dict[str, Any], compiler: _Compiler, problems: _Problems, declared: dict[str, VarType]
) -> dict[str, _Expr]:
    """``spec.variables`` in order, each declared (with its result type) for those after it."""
    variables: dict[str, _Expr] = {}
    for index, item in enumerate(_strings(spec.get("variables"))):
        where: JsonPath = ("spec", "variables", index)
        var_name = str(item.get("name", "")) if isinstance(item, dict) else ""
        if not _NAME_RE.match(var_name):
            problems.add(
                (*where, "name"), f"Invalid value: {var_name!r}: must be a valid CEL identifier"
            )
            continue
        if var_name in variables:
            problems.add((*where, "name"), f"Duplicate value: {var_name!r}")
            continue
        expr = compiler.expression(item.get("expression"), (*where, "expression"), declared, None)
        if expr is None:
            declared[f"{VARIABLE_PREFIX}{var_name}"] = DYN
            continue
        kind: VarType = DYN
        if expr.program.result_type == "google.protobuf.Timestamp":
            kind = TIMESTAMP
        elif expr.program.result_type == "google.protobuf.Duration":
            kind = DURATION
        declared[f"{VARIABLE_PREFIX}{var_name}"] = kind
        variables[var_name] = expr
    return variables


def _compile_validation(
    item: dict[str, Any],
    index: int,
    compiler: _Compiler,
    problems: _Problems,
    declared: dict[str, VarType],
) -> _Validation | None:
    """One ``spec.validations`` entry; None when its expression does not compile."""
    where: JsonPath = ("spec", "validations", index)
    expr = compiler.expression(item.get("expression"), (*where, "expression"), declared, ("bool",))
    message_expr = None
    if item.get("messageExpression"):
        message_expr = compiler.expression(
            item.get("messageExpression"),
            (*where, "messageExpression"),
            declared,
            ("string",),
            allow_authorizer=False,
        )
    field_path = None
    if item.get("fieldPath"):
        field_path = _parse_field_path(str(item["fieldPath"]))
        if field_path is None:
            problems.add(
                (*where, "fieldPath"),
                f"Invalid value: {item['fieldPath']!r}: not a valid JSONPath",
            )
    if expr is None:
        return None
    reason = item.get("reason")
    return _Validation(
        expr,
        str(item.get("message") or ""),
        message_expr,
        str(reason) if reason else None,
        field_path,
    )


# Checked result types whose values come back from the engine's plain values unchanged
# (no uint, timestamp, duration, optional...): a variable of such a type has the same
# value inlined as bound from its plain value, which the slow path does.
_PLAIN_TYPE_WORDS: Final = frozenset({"bool", "int", "double", "string", "bytes", "null_type"})
_TYPE_WORD: Final = re.compile(r"[A-Za-z_.]+")


def _plain_typed(program: K8sProgram) -> bool:
    words = set(_TYPE_WORD.findall(program.result_type))
    return program.checked and words <= _PLAIN_TYPE_WORDS | {"dyn", "list", "map"}


def _inline_variables(policy: _Policy) -> None:
    """Work out, for each expression, the variables to compute inside it.

    Evaluated on the object's activation, a program computing its variables itself
    reads the object already converted; binding the variables' values instead needs a
    new activation, where the engine converts the whole object again. A variable is
    then computed once per expression that uses it rather than once per evaluation:
    the values are the same (CEL has no side effects); an evaluation where any
    expression errors is done again the slow way (:class:`_Context`), so that errors,
    their texts and the cost budget stay as they were.
    """
    ready = True
    for expr in policy.expressions():
        needed: set[str] = set()
        pending = list(expr.variables)
        while pending:
            name = pending.pop()
            if name not in needed:
                needed.add(name)
                found = policy.variables.get(name)
                pending.extend(found.variables if found is not None else ())
        if not needed <= policy.variables.keys() or not all(
            _plain_typed(policy.variables[n].program) for n in needed
        ):
            expr.lets = None
            ready = False
            continue
        expr.lets = tuple(name for name in policy.variables if name in needed)
        expr.reads_params = any(
            "params" in program.variables
            for program in (expr.program, *(policy.variables[n].program for n in needed))
        )
    policy.inlined = ready


_VALID_ACTIONS: Final = ("Deny", "Warn", "Audit")


def _compile_binding(manifest: Manifest, problems: _Problems) -> _Binding | None:
    problems.manifest = manifest
    spec = manifest.data.get("spec")
    if not isinstance(spec, dict):
        problems.add(("spec",), "Required value: spec is required")
        return None
    policy_name = spec.get("policyName")
    if not isinstance(policy_name, str) or not policy_name:
        problems.add(("spec", "policyName"), "Required value: policyName is required")
        return None
    actions = [str(a) for a in _strings(spec.get("validationActions"))]
    if not actions:
        problems.add(
            ("spec", "validationActions"),
            "Required value: at least one validation action is required",
        )
    for index, action in enumerate(actions):
        if action not in _VALID_ACTIONS:
            problems.add(
                ("spec", "validationActions", index),
                f'Unsupported value: "{action}": supported values: "Audit", "Deny", "Warn"',
            )
        elif actions.index(action) != index:
            problems.add(("spec", "validationActions", index), f'Duplicate value: "{action}"')
    if "Deny" in actions and "Warn" in actions:
        problems.add(
            ("spec", "validationActions"),
            "Invalid value: must not contain both Deny and Warn (repeating the same validation"
            " failure information in the API response and headers serves no purpose)",
        )
    binding_match = None
    if isinstance(spec.get("matchResources"), dict):
        binding_match = _parse_match(spec["matchResources"], ("spec", "matchResources"), problems)
    param_ref = None
    ref = spec.get("paramRef")
    if isinstance(ref, dict):
        selector = None
        if ref.get("name") and ref.get("selector") is not None:
            problems.add(
                ("spec", "paramRef"), "Forbidden: name and selector are mutually exclusive"
            )
        elif not ref.get("name") and ref.get("selector") is None:
            problems.add(
                ("spec", "paramRef"), "Required value: one of name or selector must be specified"
            )
        if ref.get("selector") is not None:
            selector = _parse_selector(
                ref.get("selector"), ("spec", "paramRef", "selector"), problems
            )
        not_found = ref.get("parameterNotFoundAction")
        if not_found not in (None, "Allow", "Deny"):
            problems.add(
                ("spec", "paramRef", "parameterNotFoundAction"),
                f'Unsupported value: "{not_found}": supported values: "Allow", "Deny"',
            )
        param_ref = _ParamRef(
            str(ref["name"]) if ref.get("name") else None,
            str(ref["namespace"]) if ref.get("namespace") else None,
            selector,
            not_found == "Deny",
        )
    return _Binding(manifest.name, manifest, policy_name, tuple(actions), binding_match, param_ref)


_FIELD_PATH_PART: Final = re.compile(
    r"""\.(?P<name>[A-Za-z_][A-Za-z0-9_\-]*)|\[(?P<index>[0-9]+)\]|\[\s*'(?P<quoted>(?:[^'\\]|\\.)*)'\s*\]"""
)


def _parse_field_path(text: str) -> JsonPath | None:
    """``.spec.containers[0]['a.b']`` -> ``("spec", "containers", 0, "a.b")``."""
    if not text.startswith((".", "[")):
        text = "." + text
    parts: list[str | int] = []
    position = 0
    while position < len(text):
        match = _FIELD_PATH_PART.match(text, position)
        if match is None:
            return None
        if match.group("name") is not None:
            parts.append(match.group("name"))
        elif match.group("index") is not None:
            parts.append(int(match.group("index")))
        else:
            parts.append(re.sub(r"\\(.)", r"\1", match.group("quoted")))
        position = match.end()
    return tuple(parts)


def _finding_path(path: JsonPath) -> str:
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_\-]*", part):
            out += f".{part}" if out else part
        else:
            out += f"[{part}]"
    return out


# --- evaluation ------------------------------------------------------------------------------


class _EvalFailure(Exception):
    """An expression errored; the text is what the API server reports."""


@dataclass
class _Decision:
    deny: bool
    message: str
    reason: str = "Invalid"
    index: int = 0
    field_path: JsonPath | None = None
    config: bool = False  # a configuration error: denies whatever the actions


class _Context:
    """One evaluation: object, params, namespace; variables evaluated at most once.

    The values are bound once into an activation that every expression of the
    evaluation reads, made again only when a variable gets its value.
    """

    def __init__(self, policy: _Policy, bindings: dict[str, Any], shared: Activation) -> None:
        self.policy = policy
        self.bindings = bindings
        self.shared = shared  # the bindings alone: every policy on this object reads it
        self.values: dict[str, Any] = {}
        self.errors: dict[str, str] = {}
        self._activation: Activation | None = None

    def _bound(self, expr: _Expr) -> Activation:
        # The engine converts a value the first time an expression reads it through an
        # activation: an expression that uses no variable reads the shared one, where
        # the object is already converted.
        if not expr.variables:
            return self.shared
        if self._activation is None:
            values = dict(self.bindings)
            for name, value in self.values.items():
                values[f"{VARIABLE_PREFIX}{name}"] = value
            self._activation = k8s_engine().activation(values)
        return self._activation

    def _variable(self, name: str, stack: tuple[str, ...] = ()) -> None:
        if name in self.values or name in self.errors or name in stack:
            return
        expr = self.policy.variables.get(name)
        if expr is None:
            return
        for dependency in expr.variables:
            self._variable(dependency, (*stack, name))
        try:
            self.values[name] = self._run(expr)
            self._activation = None
        except _EvalFailure as error:
            self.errors[name] = str(error)

    def _run(self, expr: _Expr) -> Any:
        try:
            return expr.program.evaluate(self._bound(expr))
        except CelBudgetExceeded:
            raise _EvalFailure("operation cancelled: actual cost limit exceeded") from None
        except CelEvalError as error:
            text = str(error)
            unbound = unbound_variable(text)
            if unbound and unbound.startswith(VARIABLE_PREFIX):
                name = unbound[len(VARIABLE_PREFIX) :]
                detail = self.errors.get(name, text)
                text = f"composited variable {json.dumps(name)} fails to evaluate: {detail}"
            raise _EvalFailure(text) from None

    def evaluate(self, expr: _Expr) -> Any:
        for name in expr.variables:
            self._variable(name)
        try:
            return self._run(expr)
        except _EvalFailure as error:
            raise _EvalFailure(f"expression '{expr.source}' resulted in error: {error}") from None


@dataclass
class _Outcome:
    decisions: list[_Decision]
    annotations: list[tuple[str, str]]


class _InlinedMiss(Exception):
    """An inlined evaluation errored: the evaluation is done again the slow way."""


class _InlinedContext:
    """One evaluation where every expression reads the object's one activation, its
    variables computed inside it (see :func:`_inline_variables`) and ``params`` the
    object's parameter object ``slot``."""

    def __init__(self, policy: _Policy, activation: Activation, slot: int | None) -> None:
        self.policy = policy
        self.activation = activation
        self.slot = slot

    def evaluate(self, expr: _Expr) -> Any:
        program = self.policy.inlined_program(expr, self.slot)
        if program is None:
            raise _InlinedMiss()
        try:
            return program.evaluate(self.activation)
        except CelEvalError:
            raise _InlinedMiss() from None


def _evaluate_policy(
    policy: _Policy,
    subject: _Subject,
    param: Any,
    namespaces: Mapping[str, Mapping[str, str]],
) -> _Outcome:
    if policy.inlined:
        found = subject.inlined(param, namespaces)
        if found is not None:
            activation, slot = found
            fused = policy.fused_program(slot) if policy.fused else None
            if fused is not None:
                try:
                    return _fused_outcome(policy, fused.evaluate(activation))
                except CelEvalError:
                    pass
            else:
                try:
                    return _evaluate_in(policy, _InlinedContext(policy, activation, slot))
                except _InlinedMiss:
                    pass
    bindings, shared = subject.bound(param, namespaces)
    return _evaluate_in(policy, _Context(policy, bindings, shared))


def _fused_outcome(policy: _Policy, results: Any) -> _Outcome:
    """The decisions of a :meth:`_Policy.fused_program` value."""
    decisions = []
    for index, (validation, failed) in enumerate(zip(policy.validations, results, strict=True)):
        if failed:
            value = failed[0] if validation.message_expr is not None else None
            decisions.append(
                _Decision(
                    True,
                    _message(validation, value),
                    validation.reason or "Invalid",
                    index,
                    validation.field_path,
                )
            )
    return _Outcome(decisions, [])


def _message(validation: _Validation, value: Any) -> str:
    """The message of a failed validation whose message expression gave ``value``
    (None: none, or it failed)."""
    message = ""
    if isinstance(value, str):
        message = value.strip()
        if len(message.encode()) > _MAX_MESSAGE_BYTES or "\n" in message:
            message = ""
    if not message and validation.message:
        message = validation.message.strip()
    if not message:
        message = f"failed expression: {validation.expr.source.strip()}"
    return message


def _evaluate_in(policy: _Policy, context: _Context | _InlinedContext) -> _Outcome:
    fail_denies = policy.failure_policy != "Ignore"
    errors = []
    for _, expr in policy.conditions:
        try:
            result = context.evaluate(expr)
        except _EvalFailure as error:
            errors.append(str(error))
            continue
        if result is False:
            return _Outcome([], [])
    if errors:
        if not fail_denies:
            return _Outcome([], [])
        unique = list(dict.fromkeys(errors))
        text = unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"
        return _Outcome([_Decision(True, text)], [])
    decisions = []
    for index, validation in enumerate(policy.validations):
        try:
            result = context.evaluate(validation.expr)
        except _EvalFailure as error:
            if fail_denies:
                decisions.append(
                    _Decision(True, str(error), index=index, field_path=validation.field_path)
                )
            continue
        if result is True:
            continue
        value = None
        if validation.message_expr is not None:
            try:
                value = context.evaluate(validation.message_expr)
            except _EvalFailure:
                value = None
        message = _message(validation, value)
        decisions.append(
            _Decision(True, message, validation.reason or "Invalid", index, validation.field_path)
        )
    annotations = []
    for key, expr in policy.annotations:
        try:
            value = context.evaluate(expr)
        except _EvalFailure as error:
            if fail_denies:
                decisions.append(_Decision(True, str(error), config=True))
            continue
        if value is None:
            continue
        if not isinstance(value, str):
            decisions.append(
                _Decision(
                    True,
                    f"valueExpression '{expr.source}' resulted in unsupported return type:"
                    " dyn. Return type must be either string or null.",
                    config=True,
                )
            )
            continue
        value = value.strip()
        if value:
            annotations.append((key, value[:_MAX_ANNOTATION_VALUE]))
    return _Outcome(decisions, annotations)


def _request(resource: Resource, name: str, namespace: str) -> dict[str, Any]:
    kind = {"group": resource.group, "version": resource.version, "kind": resource.kind}
    gvr = {"group": resource.group, "version": resource.version, "resource": resource.resource}
    request: dict[str, Any] = {
        "uid": "",
        "kind": kind,
        "resource": gvr,
        "requestKind": dict(kind),
        "requestResource": dict(gvr),
        "operation": "CREATE",
        "userInfo": {},
        "dryRun": False,
        "options": None,
    }
    if name:
        request["name"] = name
    if namespace:
        request["namespace"] = namespace
    return request


def _namespace_object(name: str, labels: Mapping[str, str]) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "creationTimestamp": None}
    if labels:
        metadata["labels"] = dict(labels)
    return {"metadata": metadata, "spec": {}, "status": {}}


class _Subject:
    """One object as every policy sees it: resource, name, namespace and labels worked
    out once, and the variables of an evaluation bound once per parameter object."""

    def __init__(self, obj: PolicyObject, locate_output: OutputLocator | None = None) -> None:
        data = obj.data
        self.obj = obj
        self._locate_output = locate_output
        self.resource = resource = resource_of(data)
        metadata = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
        assert isinstance(metadata, dict)
        self.name = str(metadata.get("name") or "")
        namespace = str(metadata.get("namespace") or "") if resource.namespaced else ""
        if resource.namespaced and not namespace:
            namespace = "default"
        self.namespace = namespace
        self._bound: dict[int, tuple[Any, dict[str, Any], Activation]] = {}
        # every parameter object a policy may evaluate this object with, by slot
        self.params: list[Any] = []
        self._activation: Activation | None = None
        self._ref: ObjectRef | None = None
        self._location: SourceLocation | None = None
        self._rendered_from: tuple[tuple[str, str], ...] | None = None

    # ref and location are read once per finding: plain attributes, as cached_property
    # takes a lock on every read (Python 3.11)
    @property
    def ref(self) -> ObjectRef:
        """The object's reference (made once for all its findings)."""
        if self._ref is None:
            self._ref = self.obj.ref
        return self._ref

    @property
    def location(self) -> SourceLocation:
        """Where a finding about the whole object points (made once for all of them)."""
        if self._location is None:
            self._location = self.obj.origin.locate(())
        return self._location

    def place(self, path: JsonPath | None) -> SourceLocation:
        """Where a finding about field ``path`` points: in an input, the field itself; in
        an output, the input that produced the field (by ``locate_output``); else the
        whole object, or the TrainJob an output was rendered from."""
        obj = self.obj
        if path:
            if obj.stage == "input":
                return obj.origin.locate(path)
            if self._locate_output is not None:
                return self._locate_output(obj, path)
        return self.location

    @property
    def rendered_from(self) -> tuple[tuple[str, str], ...]:
        """The detail every finding about an output ends with: the TrainJob it was
        rendered from (none for an input)."""
        if self._rendered_from is None:
            obj = self.obj
            self._rendered_from = (
                (("renderedFrom", str(obj.origin.ref)),) if obj.stage == "output" else ()
            )
        return self._rendered_from

    @cached_property
    def labels(self) -> dict[str, str]:
        """The object's labels as strings (read only by object selectors)."""
        metadata = self.obj.data.get("metadata")
        raw = metadata.get("labels") if isinstance(metadata, dict) else None
        return {str(k): str(v) for k, v in raw.items()} if isinstance(raw, dict) else {}

    def inlined(
        self, param: Any, namespaces: Mapping[str, Mapping[str, str]]
    ) -> tuple[Activation, int | None] | None:
        """The object's one activation for inlined programs, where ``params`` is null
        and the parameter objects are in ``trainc_params``, and the slot of ``param``
        there (None for no params); None when ``param`` is not among them."""
        slot = None
        if param is not None:
            slot = next((i for i, p in enumerate(self.params) if p is param), None)
            if slot is None:
                return None
        if self._activation is None:
            values = dict(self._values(None, namespaces))
            values[_PARAM_SLOTS] = dict(enumerate(self.params))
            self._activation = k8s_engine().activation(values)
        return self._activation, slot

    def _values(self, param: Any, namespaces: Mapping[str, Mapping[str, str]]) -> dict[str, Any]:
        namespace = self.namespace
        ns_labels = namespaces.get(namespace) or {} if namespace else {}
        return {
            "object": self.obj.data,
            "oldObject": None,
            "request": _request(self.resource, self.name, namespace),
            "namespaceObject": _namespace_object(namespace, ns_labels) if namespace else None,
            "authorizer": None,
            "params": param,
        }

    def bound(
        self, param: Any, namespaces: Mapping[str, Mapping[str, str]]
    ) -> tuple[dict[str, Any], Activation]:
        """The variables with ``param`` as ``params``, as a mapping and an activation
        that every policy evaluated with the same parameter object shares."""
        found = self._bound.get(id(param))
        if found is None or found[0] is not param:
            values = self._values(param, namespaces)
            found = (param, values, k8s_engine().activation(values))
            self._bound[id(param)] = found
        return found[1], found[2]


@dataclass
class _Group:
    """What the policies do with the objects of one kind in one namespace.

    ``steps`` are its evaluations (policy, binding), one per parameter object, in the
    order :meth:`PolicySet._evaluate` makes them, every one a fused program
    (:meth:`_Policy.fused_program`) evaluated on the object's one activation. ``steps``
    is None when some evaluation cannot be fused, or a binding's parameters cannot be
    found: the objects are then evaluated policy by policy.

    The steps stay separate programs. Put in one list, a program that binds variables
    can read a value a comprehension of an earlier program left behind: cel-expr-python
    0.1.3 evaluates ``cel.bind`` lazily from a slot that an ``exists`` which stopped
    early does not clear (``[[1, 2].exists(x, [3, 4].exists(y, [5, 6].exists(z, z ==
    5))), cel.bind(a, 5, cel.bind(b, 7, cel.bind(c, 8, [a, b, c])))]`` gives ``[true,
    [2, 7, 4]]``, where cel-go gives ``[true, [5, 7, 8]]``). A fused program alone, its
    comprehensions all inside its bindings, never met such a slot: 2,000 random programs
    of that shape gave what binding eagerly gives, where 26 of 400 pairs in one list did
    not.
    Separate programs cost no more engine time: the object is converted once, in the
    activation they share.
    """

    policies: list[_Policy]  # the policies whose resource rules take the kind
    params: list[Any]  # every parameter object they may use, by slot
    steps: list[tuple[_Policy, _Binding, K8sProgram]] | None


# --- the public API --------------------------------------------------------------------------


_NAMESPACED_PARAM_KINDS: Final = {"ConfigMap": True, "Secret": True, "Namespace": False}


@dataclass
class PolicySet:
    """The policies, bindings and candidate parameter objects of one run."""

    policies: list[_Policy]
    params: list[Manifest]
    _found_params: dict[tuple[int, int, str], list[Any] | _EvalFailure] = field(
        default_factory=dict, repr=False, compare=False
    )

    @classmethod
    def from_manifests(cls, manifests: list[Manifest]) -> PolicySet:
        """Collect and compile; raise :class:`InputError` naming every bad policy field."""
        problems = _Problems()
        policies: dict[str, _Policy] = {}
        bindings: list[_Binding] = []
        params: list[Manifest] = []
        for manifest in manifests:
            group, version = _split_api_version(manifest.api_version)
            if group == _GROUP and manifest.kind in (_POLICY_KIND, _BINDING_KIND):
                if version != "v1":
                    problems.manifest = manifest
                    problems.add(
                        ("apiVersion",),
                        f"only {_GROUP}/v1 {manifest.kind} is supported, not {version}",
                    )
                    continue
                if manifest.kind == _POLICY_KIND:
                    policy = _compile_policy(manifest, problems)
                    if policy is not None:
                        policies[policy.name] = policy
                else:
                    binding = _compile_binding(manifest, problems)
                    if binding is not None:
                        bindings.append(binding)
            else:
                params.append(manifest)
        if problems.items:
            raise InputError(problems.items)
        for binding in bindings:
            policy = policies.get(binding.policy_name)
            if policy is not None:  # a binding to a policy that does not exist does nothing
                policy.bindings.append(binding)
        return cls(list(policies.values()), params)

    def evaluate(
        self,
        objects: list[PolicyObject],
        namespaces: dict[str, dict[str, str]],
        locate_output: OutputLocator | None = None,
    ) -> list[Finding]:
        """Every finding of every policy on every object, in object then policy order.

        A finding about an output points at the input that produced its field, found by
        ``locate_output`` (without it, or without a field, at the TrainJob), and its
        last detail names the TrainJob (``renderedFrom``).
        """
        findings: list[Finding] = []
        # the policies whose resource rules take a kind: most take one or two kinds
        candidates: dict[tuple[Resource, bool], list[_Policy]] = {}
        by_name = any(p.match.named for p in self.policies)
        # Without object selectors and resourceNames, which evaluations an object gets
        # depends on its kind and namespace only (a Namespace's on its name): worked out
        # once for all objects alike (see _Group).
        grouped = not by_name and not any(
            not match.object_selector.empty()
            for policy in self.policies
            for match in (policy.match, *(b.match for b in policy.bindings))
            if match is not None
        )
        groups: dict[tuple[Resource, str, str], _Group] = {}
        for obj in objects:
            subject = _Subject(obj, locate_output)
            resource, namespace, name = subject.resource, subject.namespace, subject.name
            if grouped:
                group_key = (resource, namespace, "" if namespace else name)
                group = groups.get(group_key)
                if group is None:
                    group = groups[group_key] = self._group(subject, namespaces)
                subject.params = group.params
                if group.steps is not None:
                    found = self._evaluate_group(group, subject, namespaces)
                    if found is not None:
                        findings.extend(found)
                        continue
                for policy in group.policies:
                    findings.extend(self._evaluate(policy, subject, namespaces))
                continue
            key = (resource, bool(namespace))
            policies = candidates.get(key)
            if policies is None or by_name:
                policies = [
                    p for p in self.policies if p.match.may_match(resource, namespace, name)
                ]
                candidates[key] = policies
            subject.params = self._candidate_params(policies, namespace)
            for policy in policies:
                findings.extend(self._evaluate(policy, subject, namespaces))
        return findings

    # -- every policy, the objects of one kind and namespace

    def _group(self, subject: _Subject, namespaces: Mapping[str, Mapping[str, str]]) -> _Group:
        """The evaluations of an object like ``subject`` (same kind and namespace), when
        every policy selects objects by kind and namespace only."""
        resource, namespace, name = subject.resource, subject.namespace, subject.name
        policies = [p for p in self.policies if p.match.may_match(resource, namespace, name)]
        params = self._candidate_params(policies, namespace)
        slow = _Group(policies, params, None)
        steps: list[tuple[_Policy, _Binding, K8sProgram]] = []
        for policy in policies:
            if not policy.match.matches(resource, namespace, name, {}, namespaces):
                continue
            for binding in policy.bindings:
                if binding.match is not None and not binding.match.matches(
                    resource, namespace, name, {}, namespaces
                ):
                    continue
                try:
                    found = self._params(policy, binding, namespace)
                except _EvalFailure:
                    return slow  # a configuration error: reported by _evaluate
                for param in found:
                    slot = None
                    if param is not None:
                        slot = next((i for i, p in enumerate(params) if p is param), None)
                        if slot is None:
                            return slow
                    program = policy.fused_program(slot) if policy.fused else None
                    if program is None:
                        return slow
                    steps.append((policy, binding, program))
        return _Group(policies, params, steps)

    def _evaluate_group(
        self, group: _Group, subject: _Subject, namespaces: Mapping[str, Mapping[str, str]]
    ) -> list[Finding] | None:
        """The findings of ``group``'s programs on ``subject``, in the order of
        :meth:`_evaluate`; None when one errors (then each policy is evaluated alone)."""
        out: list[Finding] = []
        steps = group.steps or []
        if not steps:
            return out
        activation = subject.inlined(None, namespaces)
        assert activation is not None
        try:
            results = [program.evaluate(activation[0]) for _, _, program in steps]
        except CelEvalError:
            return None
        for (policy, binding, _), result in zip(steps, results, strict=True):
            if any(result):
                for decision in _fused_outcome(policy, result).decisions:
                    out.append(self._finding(policy, binding, decision, subject))
        return out

    # -- one policy, one object

    def _evaluate(
        self, policy: _Policy, subject: _Subject, namespaces: Mapping[str, Mapping[str, str]]
    ) -> Iterable[Finding]:
        obj, resource, namespace = subject.obj, subject.resource, subject.namespace
        name, labels = subject.name, subject.labels
        if not policy.match.matches(resource, namespace, name, labels, namespaces):
            return []
        out: list[Finding] = []
        annotations: dict[str, list[str]] = {}
        for binding in policy.bindings:
            if binding.match is not None and not binding.match.matches(
                resource, namespace, name, labels, namespaces
            ):
                continue
            try:
                params = self._params(policy, binding, namespace)
            except _EvalFailure as error:
                if policy.failure_policy != "Ignore":
                    decision = _Decision(True, f"failed to configure binding: {error}", config=True)
                    out.append(self._finding(policy, binding, decision, subject))
                continue
            for param in params:
                outcome = _evaluate_policy(policy, subject, param, namespaces)
                for key, value in outcome.annotations:
                    values = annotations.setdefault(key, [])
                    if value not in values:
                        values.append(value)
                for decision in outcome.decisions:
                    out.append(self._finding(policy, binding, decision, subject))
        published = tuple(
            (f"{policy.name}/{key}", ", ".join(values)) for key, values in annotations.items()
        )
        if published:
            rendered_from = subject.rendered_from  # stays the last detail
            if out:
                out = [
                    f._replace(
                        details=(
                            *f.details[: len(f.details) - len(rendered_from)],
                            *published,
                            *rendered_from,
                        )
                    )
                    for f in out
                ]
            else:
                text = ", ".join(f"{k}={v}" for k, v in published)
                out.append(
                    Finding(
                        f"vap/{policy.name}",
                        Severity.AUDIT,
                        f"ValidatingAdmissionPolicy '{policy.name}' audit annotations: {text}",
                        obj.ref,
                        None,
                        subject.location,
                        obj.stage,
                        (*published, *rendered_from),
                    )
                )
        return out

    def _candidate_params(self, policies: list[_Policy], namespace: str) -> list[Any]:
        """The parameter objects any binding of ``policies`` may give an object in
        ``namespace`` (its matching aside), each once."""
        out: list[Any] = []
        for policy in policies:
            if policy.param_kind is None or not policy.inlined:
                continue
            for binding in policy.bindings:
                try:
                    params = self._params(policy, binding, namespace)
                except _EvalFailure:
                    continue
                out.extend(p for p in params if p is not None and all(p is not q for q in out))
        return out

    def _params(self, policy: _Policy, binding: _Binding, namespace: str) -> list[Any]:
        """The parameter objects of an evaluation (worked out once by policy, binding
        and namespace: they depend on nothing else), or raise :class:`_EvalFailure`."""
        key = (id(policy), id(binding), namespace)
        found = self._found_params.get(key)
        if found is None:
            try:
                found = self._find_params(policy, binding, namespace)
            except _EvalFailure as error:
                found = error
            self._found_params[key] = found
        if isinstance(found, _EvalFailure):
            raise _EvalFailure(str(found))
        return found

    def _find_params(self, policy: _Policy, binding: _Binding, namespace: str) -> list[Any]:
        if policy.param_kind is None or binding.param_ref is None:
            return [None]
        api_version, kind = policy.param_kind
        ref = binding.param_ref
        candidates = [m for m in self.params if m.api_version == api_version and m.kind == kind]
        namespaced = _NAMESPACED_PARAM_KINDS.get(kind)
        if namespaced is None:
            group = _split_api_version(api_version)[0]
            known = _RESOURCES.get((group, kind))
            if known is not None:
                namespaced = known[1]
            else:
                namespaced = any(m.namespace for m in candidates) or not candidates
        if namespaced:
            params_namespace = ref.namespace or namespace
            if not params_namespace:
                raise _EvalFailure(
                    "cannot use namespaced paramRef in policy binding that matches"
                    " cluster-scoped resources"
                )
            candidates = [m for m in candidates if (m.namespace or "default") == params_namespace]
        elif ref.namespace:
            raise _EvalFailure(
                "paramRef.namespace must not be provided for a cluster-scoped `paramKind`"
            )
        if ref.name is not None:
            found = [m.data for m in candidates if m.name == ref.name][:1]
        elif ref.selector is not None:
            found = [
                m.data
                for m in candidates
                if ref.selector.matches(
                    {
                        str(k): str(v)
                        for k, v in ((m.data.get("metadata") or {}).get("labels") or {}).items()
                    }
                )
            ]
        else:
            raise _EvalFailure("one of name or selector must be provided")
        if not found and ref.deny_if_missing:
            raise _EvalFailure(
                "no params found for policy binding with `Deny` parameterNotFoundAction"
            )
        return list(found)

    @staticmethod
    def _finding(
        policy: _Policy, binding: _Binding, decision: _Decision, subject: _Subject
    ) -> Finding:
        obj = subject.obj
        actions = binding.actions
        if decision.config or "Deny" in actions:
            severity = Severity.ERROR
            message = (
                f"ValidatingAdmissionPolicy '{policy.name}' with binding '{binding.name}'"
                f" denied request: {decision.message}"
            )
        else:
            severity = Severity.WARNING if "Warn" in actions else Severity.AUDIT
            message = (
                f"Validation failed for ValidatingAdmissionPolicy '{policy.name}' with binding"
                f" '{binding.name}': {decision.message}"
            )
        path = decision.field_path
        field_path = _finding_path(path) if path else None
        location = subject.place(path)
        details = binding.details(decision.reason)
        if not decision.config and "Audit" in actions:
            failure = [
                {
                    "message": decision.message,
                    "policy": policy.name,
                    "binding": binding.name,
                    "expressionIndex": decision.index,
                    "validationActions": list(actions),
                }
            ]
            details += ((_FAILURE_ANNOTATION, json.dumps(failure, separators=(",", ":"))),)
        details += subject.rendered_from
        ref: ObjectRef = subject.ref
        return Finding(
            f"vap/{policy.name}", severity, message, ref, field_path, location, obj.stage, details
        )
