"""The one normalisation applied before comparing trainc with the oracle (or a golden).

Normalise as little as possible. Each rule is here because the value is not a
function of the inputs upstream:

1. Object order. The controller collects builder plugins from a Go map, so the
   order of the returned objects is random (spec §2.3). Objects are compared as a
   list sorted by (apiVersion, kind, namespace, name).
2. Generated key material. The MPI SSH Secret's data is a fresh random key pair
   (spec §13), the Flux curve Secret's a key derived from the TrainJob UID; trainc
   never renders key material at all. Their values are replaced by a marker; keys,
   name, namespace and type are still compared. Goldens are written after this
   rule, so no key material is committed either.
3. Env order across plugins that share a phase. PlainML and XGBoost both append env
   vars to the trainer container in random relative order (spec §2.3, seen with the
   oracle's --check-determinism); for runtimes with an xgboost policy the env lists
   are compared sorted by name. (Flux adds no env vars: its output is deterministic.)

The owner reference UID needs no rule: both sides get the case's UID.
"""

from __future__ import annotations

import copy
from typing import Any

GENERATED = "<generated>"

JsonObject = dict[str, Any]


def _sort_key(obj: JsonObject) -> tuple[str, str, str, str]:
    metadata = obj.get("metadata") or {}
    return (
        str(obj.get("apiVersion", "")),
        str(obj.get("kind", "")),
        str(metadata.get("namespace", "")),
        str(metadata.get("name", "")),
    )


def _has_generated_data(obj: JsonObject) -> bool:
    if obj.get("kind") != "Secret" or obj.get("apiVersion") != "v1":
        return False
    if obj.get("type") == "kubernetes.io/ssh-auth":  # MPI: <trainjob>-mpi-ssh-auth
        return True
    name = str((obj.get("metadata") or {}).get("name", ""))
    keys = set((obj.get("data") or {}) | (obj.get("stringData") or {}))
    return name.endswith("-flux-curve") and keys == {"curve.cert"}


def _mask_generated_secret(obj: JsonObject) -> None:
    if _has_generated_data(obj):
        for field in ("data", "stringData"):
            if isinstance(obj.get(field), dict):
                obj[field] = {key: GENERATED for key in obj[field]}


def _sort_envs(value: Any) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "env" and isinstance(item, list):
                item.sort(key=lambda e: str(e.get("name", "")))
            else:
                _sort_envs(item)
    elif isinstance(value, list):
        for item in value:
            _sort_envs(item)


def normalise(objects: list[JsonObject], env_order_random: bool = False) -> list[JsonObject]:
    """A comparable copy of ``objects``; ``env_order_random`` for xgboost runtimes."""
    out = [copy.deepcopy(o) for o in objects]
    for obj in out:
        _mask_generated_secret(obj)
        if env_order_random and obj.get("kind") == "JobSet":
            _sort_envs(obj.get("spec"))
    return sorted(out, key=_sort_key)


def env_order_is_random(runtime_spec: JsonObject) -> bool:
    policy = runtime_spec.get("mlPolicy") or {}
    return policy.get("xgboost") is not None


# The API server adds this note whenever schema errors stop it running the CEL rules;
# it is not a finding about the input.
_NOT_CHECKED = "some validation rules were not checked because the object was invalid"


def rejection_fields(errors: list[JsonObject]) -> set[str]:
    """Field paths of upstream's errors; ``""`` is the object root (Go prints ``<nil>``)."""
    fields = set()
    for error in errors:
        if _NOT_CHECKED in str(error.get("message", "")):
            continue
        field = str(error.get("field") or "")
        fields.add("" if field == "<nil>" else field)
    return fields


def first_difference(expected: Any, actual: Any, path: str = "") -> str | None:
    """A readable pointer to the first place two JSON values differ, or None."""
    if type(expected) is not type(actual):
        return f"{path or '.'}: expected {expected!r}, got {actual!r}"
    if isinstance(expected, dict):
        for key in sorted(set(expected) | set(actual)):
            if key not in actual:
                return f"{path}.{key}: missing (expected {expected[key]!r})"
            if key not in expected:
                return f"{path}.{key}: unexpected {actual[key]!r}"
            found = first_difference(expected[key], actual[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(expected, list):
        if len(expected) != len(actual):
            return f"{path}: expected {len(expected)} items, got {len(actual)}"
        for index, (a, b) in enumerate(zip(expected, actual, strict=True)):
            found = first_difference(a, b, f"{path}[{index}]")
            if found:
                return found
        return None
    if expected != actual:
        return f"{path or '.'}: expected {expected!r}, got {actual!r}"
    return None
