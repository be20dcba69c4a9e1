"""Label selectors as ``k8s.io/apimachinery/pkg/labels`` matches them."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

__all__ = ["selector_matches"]


def _requirement(
    labels: Mapping[str, Any], key: Any, operator: Any, values: Collection[Any]
) -> bool:
    """One ``matchExpressions`` requirement; an operator not listed here restricts nothing
    (the callers validate operators where the API server does)."""
    present = key in labels
    if operator == "In":
        return present and labels[key] in values
    if operator == "NotIn":
        return not (present and labels[key] in values)
    if operator == "Exists":
        return present
    if operator == "DoesNotExist":
        return not present
    return True


def selector_matches(
    labels: Mapping[str, Any],
    match_labels: Iterable[tuple[Any, Any]],
    expressions: Iterable[tuple[Any, Any, Collection[Any]]],
) -> bool:
    """Whether ``labels`` has every ``matchLabels`` pair and meets every requirement
    (``key``, ``operator``, ``values``).

    >>> selector_matches({"a": "1"}, [("a", "1")], [("b", "DoesNotExist", ())])
    True
    >>> selector_matches({"a": "1"}, [], [("a", "NotIn", ("1", "2"))])
    False
    """
    return all(labels.get(key) == value for key, value in match_labels) and all(
        _requirement(labels, key, operator, values) for key, operator, values in expressions
    )
