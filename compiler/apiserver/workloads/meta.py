"""Object metadata, labels, annotations and label selectors (k8s.io/apimachinery
``api/validation`` and ``apis/meta/v1/validation``), with Go's messages.

Go validates a map of labels in map order, which is random: errors about two bad labels
come in either order. Here they come in sorted key order (compare as sets).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from compiler.errors import FieldError
from compiler.kube.gotext import go_json

from . import names
from .fielderrors import (
    Path,
    Value,
    as_json,
    as_number,
    as_string,
    forbidden,
    invalid,
    relocated,
    required,
    too_long,
)

__all__ = [
    "annotation_errors",
    "finalizers",
    "label_name",
    "labels",
    "name_is_dns_label",
    "name_is_dns_subdomain",
    "nonnegative",
    "object_meta",
    "owner_references",
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


@functools.lru_cache(maxsize=1024)
def _valid_keys(keys: frozenset[str], lowered: bool) -> bool:
    """Whether every key is a qualified name (``lowered``: checked in lower case)."""
    return not any(names.qualified_name(k.lower() if lowered else k) for k in keys)


def _strings(values: Iterable[Any]) -> Iterable[str]:
    """``values`` as Go reads them into a map of strings (the common case at C speed)."""
    values = list(values)
    return values if set(map(type, values)) <= {str} else [str(v) for v in values]


def labels(values: Mapping[str, Any] | None, path: Path) -> list[FieldError]:
    errors: list[FieldError] = []
    if not values:
        return errors
    # most maps pass: their keys come back in the same sets (the JobSet's, the Job's)
    if _valid_keys(frozenset(values), False) and not any(
        map(names.label_value, _strings(values.values()))
    ):
        return errors
    for key in sorted(values):
        value = str(values[key])
        # the checks are cached by string; most labels pass both, and then build nothing
        bad_key, bad_value = names.qualified_name(key), names.label_value(value)
        if bad_key:
            errors += [invalid(path, as_string(key), m) for m in bad_key]
        if bad_value:
            errors += [invalid(path, as_string(value), m) for m in bad_value]
    return errors


def annotation_errors(values: Mapping[str, Any] | None, path: Path) -> list[FieldError]:
    errors: list[FieldError] = []
    if not values:
        return errors
    for key in sorted(values) if not _valid_keys(frozenset(values), True) else ():
        bad = names.qualified_name(key.lower())
        if bad:
            errors += [invalid(path, as_string(key), m) for m in bad]
    characters = sum(map(len, values)) + sum(map(len, _strings(values.values())))
    # UTF-8 takes at most 4 bytes a character: encode only when that bound is over the limit
    if 4 * characters > _ANNOTATIONS_LIMIT:
        size = sum(len(k.encode()) + len(str(v).encode()) for k, v in values.items())
        if size > _ANNOTATIONS_LIMIT:
            errors.append(too_long(path, _ANNOTATIONS_LIMIT))
    return errors


def object_meta(meta: Mapping[str, Any], name_check: NameCheck, path: Path) -> list[FieldError]:
    """``ValidateObjectMeta`` of a namespaced object (managed fields are not checked: the
    server sets them)."""
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
    errors += owner_references(meta.get("ownerReferences"), (*path, "ownerReferences"))
    errors += finalizers(meta.get("finalizers"), (*path, "finalizers"))
    # core's ValidateObjectMeta adds: a finalizer without a '/' must be a standard one
    for i, value in enumerate(str(v) for v in meta.get("finalizers") or []):
        if "/" not in value and value not in ("kubernetes", "orphan", "foregroundDeletion"):
            detail = "name is neither a standard finalizer name nor is it fully qualified"
            errors.append(invalid((*path, "finalizers", i), as_string(value), detail))
    return errors


def _owner_json(ref: Mapping[str, Any]) -> dict[str, Any]:
    """A ``metav1.OwnerReference`` as json.Marshal prints it (Go field order, omitempty)."""
    shown: dict[str, Any] = {
        "apiVersion": str(ref.get("apiVersion") or ""),
        "kind": str(ref.get("kind") or ""),
        "name": str(ref.get("name") or ""),
        "uid": str(ref.get("uid") or ""),
    }
    for key in ("controller", "blockOwnerDeletion"):
        if ref.get(key) is not None:
            shown[key] = bool(ref[key])
    return shown


def _struct_value(value: Any) -> Value:
    return Value(value, go_json(value, sort_keys=False))


def owner_references(refs: Any, path: Path) -> list[FieldError]:
    """``ValidateOwnerReferences``: errors name the list, not the entry."""
    errors: list[FieldError] = []
    refs = [r if isinstance(r, dict) else {} for r in refs or []]
    first_controller = ""
    for i, ref in enumerate(refs):
        before = len(errors)
        api_version = str(ref.get("apiVersion") or "")
        kind = str(ref.get("kind") or "")
        group, version = "", ""
        if api_version not in ("", "/"):
            slashes = api_version.count("/")
            if slashes == 0:
                version = api_version
            elif slashes == 1:
                group, version = api_version.split("/")
        if not version:
            errors.append(
                invalid((*path, "apiVersion"), as_string(api_version), "version must not be empty")
            )
        if not kind:
            errors.append(invalid((*path, "kind"), as_string(kind), "must not be empty"))
        if not ref.get("name"):
            errors.append(invalid((*path, "name"), as_string(""), "must not be empty"))
        if not ref.get("uid"):
            errors.append(invalid((*path, "uid"), as_json(""), "must not be empty"))
        # Go names the list; these are found at the entry
        errors[before:] = relocated(errors[before:], path, (*path, i))
        if (group, version, kind) == ("", "v1", "Event"):
            detail = "/v1, Kind=Event is disallowed from being an owner"
            errors.append(invalid(path, _struct_value(_owner_json(ref)), detail))
        if ref.get("controller"):
            current = f"{kind}/{ref.get('name') or ''}"
            if first_controller:
                detail = (
                    'Only one reference can have Controller set to true. Found "true" in'
                    f" references for {first_controller} and {current}"
                )
                shown = [_owner_json(r) for r in refs]
                errors.append(invalid(path, _struct_value(shown), detail))
            else:
                first_controller = current
    return errors


def finalizers(values: Any, path: Path) -> list[FieldError]:
    """``ValidateFinalizers``: errors name the list, not the entry."""
    errors: list[FieldError] = []
    values = [str(v) for v in values or []]
    for i, value in enumerate(values):
        found = [invalid(path, as_string(value), m) for m in names.qualified_name(value)]
        errors += relocated(found, path, (*path, i))
    if "orphan" in values and "foregroundDeletion" in values:
        detail = "finalizer orphan and foregroundDeletion cannot be both set"
        errors.append(invalid(path, as_json(values), detail))
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
