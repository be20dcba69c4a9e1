"""Object metadata, labels, annotations and label selectors (k8s.io/apimachinery
``api/validation`` and ``apis/meta/v1/validation``), with Go's messages.

Go validates a map of labels in map order, which is random: errors about two bad labels
come in either order. Here they come in sorted key order (compare as sets).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from compiler.errors import FieldError

from . import names
from .fielderrors import (
    Path,
    as_json,
    as_number,
    as_string,
    forbidden,
    invalid,
    required,
    too_long,
)

__all__ = [
    "annotation_errors",
    "label_name",
    "labels",
    "name_is_dns_label",
    "name_is_dns_subdomain",
    "nonnegative",
    "object_meta",
    "selector_errors",
    "selector_matches",
]

NameCheck = Callable[[str, bool], Sequence[str]]
_ANNOTATIONS_LIMIT = 256 * (1 << 10)


def name_is_dns_subdomain(name: str, prefix: bool) -> Sequence[str]:
    return names.dns1123_subdomain(names.mask_trailing_dash(name) if prefix else name)


def name_is_dns_label(name: str, prefix: bool) -> Sequence[str]:
    return names.dns1123_label(names.mask_trailing_dash(name) if prefix else name)


def nonnegative(value: int, path: Path) -> list[FieldError]:
    """``ValidateNonnegativeField``."""
    if value < 0:
        return [invalid(path, as_number(value), "must be greater than or equal to 0")]
    return []


def label_name(key: str, path: Path) -> list[FieldError]:
    return [invalid(path, as_string(key), m) for m in names.qualified_name(key)]


def labels(values: Mapping[str, Any] | None, path: Path) -> list[FieldError]:
    errors: list[FieldError] = []
    for key in sorted(values or {}):
        value = str((values or {})[key])
        errors += label_name(key, path)
        errors += [invalid(path, as_string(value), m) for m in names.label_value(value)]
    return errors


def annotation_errors(values: Mapping[str, Any] | None, path: Path) -> list[FieldError]:
    errors: list[FieldError] = []
    values = values or {}
    for key in sorted(values):
        errors += [invalid(path, as_string(key), m) for m in names.qualified_name(key.lower())]
    size = sum(len(k.encode()) + len(str(v).encode()) for k, v in values.items())
    if size > _ANNOTATIONS_LIMIT:
        errors.append(too_long(path, _ANNOTATIONS_LIMIT))
    return errors


def object_meta(meta: Mapping[str, Any], name_check: NameCheck, path: Path) -> list[FieldError]:
    """``ValidateObjectMeta`` of a namespaced object (owner references, finalizers and
    managed fields are not checked: controllers set them, well-formed)."""
    errors: list[FieldError] = []
    generate = str(meta.get("generateName") or "")
    if generate:
        errors += [
            invalid((*path, "generateName"), as_string(generate), m)
            for m in name_check(generate, True)
        ]
    name = str(meta.get("name") or "")
    if not name:
        errors.append(required((*path, "name"), "name or generateName is required"))
    else:
        errors += [invalid((*path, "name"), as_string(name), m) for m in name_check(name, False)]
    namespace = str(meta.get("namespace") or "")
    if not namespace:
        errors.append(required((*path, "namespace")))
    else:
        errors += [
            invalid((*path, "namespace"), as_string(namespace), m)
            for m in name_is_dns_label(namespace, False)
        ]
    errors += labels(meta.get("labels"), (*path, "labels"))
    errors += annotation_errors(meta.get("annotations"), (*path, "annotations"))
    return errors


def _requirement(
    expr: Mapping[str, Any], allow_invalid_values: bool, path: Path
) -> list[FieldError]:
    errors: list[FieldError] = []
    operator = str(expr.get("operator") or "")
    values = list(expr.get("values") or [])
    if operator in ("In", "NotIn"):
        if not values:
            errors.append(
                required((*path, "values"), "must be specified when `operator` is 'In' or 'NotIn'")
            )
    elif operator in ("Exists", "DoesNotExist"):
        if values:
            errors.append(
                forbidden(
                    (*path, "values"),
                    "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                )
            )
    else:
        errors.append(
            invalid((*path, "operator"), as_json(operator), "not a valid selector operator")
        )
    errors += label_name(str(expr.get("key") or ""), (*path, "key"))
    if not allow_invalid_values:
        for i, value in enumerate(values):
            errors += [
                invalid((*path, "values", i), as_string(str(value)), m)
                for m in names.label_value(str(value))
            ]
    return errors


def selector_errors(
    selector: Mapping[str, Any] | None, path: Path, *, allow_invalid_values: bool = False
) -> list[FieldError]:
    """``ValidateLabelSelector``."""
    if selector is None:
        return []
    errors = labels(selector.get("matchLabels"), (*path, "matchLabels"))
    for i, expr in enumerate(selector.get("matchExpressions") or []):
        errors += _requirement(expr, allow_invalid_values, (*path, "matchExpressions", i))
    return errors


def _requirements(selector: Mapping[str, Any]) -> list[tuple[str, str, list[str]]] | None:
    """The selector as (key, operator, values), or None where Go could not build it."""
    out = [(str(k), "In", [str(v)]) for k, v in (selector.get("matchLabels") or {}).items()]
    for expr in selector.get("matchExpressions") or []:
        wanted = [str(v) for v in expr.get("values") or []]
        out.append((str(expr.get("key") or ""), str(expr.get("operator") or ""), wanted))
    for key, operator, wanted in out:
        if names.qualified_name(key) or any(names.label_value(v) for v in wanted):
            return None
        if operator in ("In", "NotIn") and not wanted:
            return None
        if operator in ("Exists", "DoesNotExist") and wanted:
            return None
        if operator not in ("In", "NotIn", "Exists", "DoesNotExist"):
            return None
    return out


def selector_matches(selector: Mapping[str, Any] | None, values: Mapping[str, Any]) -> bool | None:
    """Whether ``LabelSelectorAsSelector(selector)`` matches ``values``; None when Go could
    not build the selector (then the caller skips its check). A nil selector matches
    nothing; an empty one everything."""
    if selector is None:
        return False
    requirements = _requirements(selector)
    if requirements is None:
        return None
    for key, operator, wanted in requirements:
        if operator in ("In", "NotIn"):
            present = key in values and str(values[key]) in wanted
            if present != (operator == "In"):
                return False
        elif (key in values) != (operator == "Exists"):
            return False
    return True
