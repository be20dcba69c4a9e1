"""Which objects an overlay patch applies to: kustomize's ``target`` selector.

A target names any of ``group``, ``version``, ``kind``, ``name``, ``namespace``,
``labelSelector`` and ``annotationSelector``; an object matches when every given
field matches. ``name`` and ``namespace`` are regular expressions matched against
the whole value (kustomize anchors them the same way); the selectors use the
Kubernetes label selector syntax (``a=b``, ``a==b``, ``a!=b``, ``a in (x, y)``,
``a notin (x)``, ``a``, ``!a``, comma-separated, all must hold)::

    >>> t = Target(kind="TrainJob", name="llm-.*", label_selector=parse_selector("team in (a, b)"))
    >>> t.matches({"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
    ...            "metadata": {"name": "llm-7b", "labels": {"team": "a"}}})
    True
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# A label key: optional DNS-subdomain prefix and "/", then a name of at most 63 chars.
_KEY = re.compile(
    r"([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?\Z"
)
_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?\Z")
_TOKEN = re.compile(r"\s*(!=|==|=|\(|\)|,|!|[^\s!=(),]+)")


class SelectorError(ValueError):
    """A selector string that the Kubernetes selector grammar rejects."""


@dataclass(frozen=True)
class Requirement:
    """One clause of a selector: ``key op values``."""

    key: str
    operator: str  # "=", "!=", "in", "notin", "exists", "!"
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        present = self.key in labels
        value = labels.get(self.key)
        if self.operator == "exists":
            return present
        if self.operator == "!":
            return not present
        if self.operator in ("=", "in"):
            return present and value in self.values
        # "!=" and "notin" also match objects without the key, as in Kubernetes.
        return not present or value not in self.values


@dataclass(frozen=True)
class Selector:
    """A parsed label (or annotation) selector: every requirement must hold."""

    text: str
    requirements: tuple[Requirement, ...] = ()

    def matches(self, labels: Mapping[str, Any] | None) -> bool:
        values = {str(k): str(v) for k, v in (labels or {}).items()}
        return all(r.matches(values) for r in self.requirements)


def parse_selector(text: str, *, annotations: bool = False) -> Selector:
    """Parse ``text``; :class:`SelectorError` names the first offending token.

    Annotation values are free text in Kubernetes, so with ``annotations`` only keys
    are checked (values are any token without blanks, commas or parentheses).

    >>> [(r.key, r.operator, r.values) for r in parse_selector("a=b,c notin (x,y),!d").requirements]
    [('a', '=', ('b',)), ('c', 'notin', ('x', 'y')), ('d', '!', ())]
    """
    tokens = _tokenize(text)
    requirements: list[Requirement] = []
    position = 0

    def peek() -> str | None:
        return tokens[position] if position < len(tokens) else None

    def take(expected: str | None = None) -> str:
        nonlocal position
        token = peek()
        if token is None:
            raise SelectorError(f"{text!r}: unexpected end of selector")
        if expected is not None and token != expected:
            raise SelectorError(f"{text!r}: expected {expected!r}, found {token!r}")
        position += 1
        return token

    def key(token: str) -> str:
        if token in ("=", "==", "!=", "(", ")", ",", "!") or not _KEY.match(token):
            raise SelectorError(f"{text!r}: invalid key {token!r}")
        return token

    def value(token: str) -> str:
        if token in ("=", "==", "!=", "(", ")", ",", "!"):
            raise SelectorError(f"{text!r}: expected a value, found {token!r}")
        if not annotations and not _VALUE.match(token):
            raise SelectorError(f"{text!r}: invalid value {token!r}")
        return token

    while peek() is not None:
        token = take()
        if token == "!":
            requirements.append(Requirement(key(take()), "!"))
        else:
            name = key(token)
            operator = peek()
            if operator in (None, ","):
                requirements.append(Requirement(name, "exists"))
            elif operator in ("=", "==", "!="):
                take()
                requirements.append(
                    Requirement(name, "!=" if operator == "!=" else "=", (value(take()),))
                )
            elif operator in ("in", "notin"):
                take()
                take("(")
                values: list[str] = []
                while True:
                    if peek() == ")" and not values:
                        break
                    values.append(value(take()))
                    if peek() != ",":
                        break
                    take(",")
                take(")")
                if not values:
                    raise SelectorError(f"{text!r}: {name} {operator} needs at least one value")
                requirements.append(Requirement(name, operator, tuple(values)))
            else:
                raise SelectorError(f"{text!r}: unexpected {operator!r} after key {name!r}")
        if peek() is not None:
            take(",")
            if peek() is None:
                raise SelectorError(f"{text!r}: trailing comma")
    return Selector(text, tuple(requirements))


def _tokenize(text: str) -> list[str]:
    tokens: list[str] = []
    offset = 0
    while offset < len(text):
        if text[offset:].strip() == "":
            break
        match = _TOKEN.match(text, offset)
        if match is None:  # pragma: no cover - the pattern accepts every non-blank char
            raise SelectorError(f"{text!r}: cannot parse at offset {offset}")
        tokens.append(match.group(1))
        offset = match.end()
    return tokens


def split_api_version(api_version: str) -> tuple[str, str]:
    """``apps/v1`` -> ``("apps", "v1")``; ``v1`` -> ``("", "v1")`` (the core group)."""
    group, _, version = api_version.rpartition("/")
    return group, version


@dataclass(frozen=True)
class Target:
    """kustomize's patch target; unset fields match anything."""

    group: str | None = None
    version: str | None = None
    kind: str | None = None
    name: str | None = None  # a regular expression, matched whole
    namespace: str | None = None  # a regular expression, matched whole
    label_selector: Selector | None = None
    annotation_selector: Selector | None = None
    _name_re: re.Pattern[str] | None = field(default=None, repr=False, compare=False)
    _namespace_re: re.Pattern[str] | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        # re.error propagates to the caller, which reports it at the field's position.
        if self.name is not None:
            object.__setattr__(self, "_name_re", re.compile(self.name))
        if self.namespace is not None:
            object.__setattr__(self, "_namespace_re", re.compile(self.namespace))

    def matches(self, obj: Mapping[str, Any]) -> bool:
        group, version = split_api_version(str(obj.get("apiVersion", "")))
        metadata = obj.get("metadata") or {}
        if self.group is not None and self.group != group:
            return False
        if self.version is not None and self.version != version:
            return False
        if self.kind is not None and self.kind != obj.get("kind"):
            return False
        if self._name_re is not None and not self._name_re.fullmatch(str(metadata.get("name", ""))):
            return False
        if self._namespace_re is not None and not self._namespace_re.fullmatch(
            str(metadata.get("namespace") or "")
        ):
            return False
        if self.label_selector is not None and not self.label_selector.matches(
            metadata.get("labels")
        ):
            return False
        return self.annotation_selector is None or self.annotation_selector.matches(
            metadata.get("annotations")
        )

    def describe(self) -> str:
        parts = [
            f"{label}={value}"
            for label, value in (
                ("group", self.group),
                ("version", self.version),
                ("kind", self.kind),
                ("name", self.name),
                ("namespace", self.namespace),
                ("labelSelector", self.label_selector.text if self.label_selector else None),
                (
                    "annotationSelector",
                    self.annotation_selector.text if self.annotation_selector else None,
                ),
            )
            if value is not None
        ]
        return "{" + ", ".join(parts) + "}" if parts else "{any object}"
