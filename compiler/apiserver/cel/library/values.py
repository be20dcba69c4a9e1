"""What the libraries' Python implementations share at run time: their error and tagged maps.

The engine cannot make opaque values from Python, so a Kubernetes value with a CEL type
of its own (``kubernetes.Quantity``, ``kubernetes.URL``, ``kubernetes.Semver``,
``kubernetes.NamedFormat``) travels through the run environment as a small map tagged
with its kind. The type check has already rejected misuses by the time one exists, but
it is still a map: ``type()`` of one is ``map``, and comparing one with a map of the same
shape through ``dyn`` is possible. (An IP or CIDR is simpler: its canonical string.)
"""

from __future__ import annotations

from typing import Any, Final

TAG: Final = "__k8s_type__"
INT64_MIN: Final = -(1 << 63)
INT64_MAX: Final = (1 << 63) - 1


class LibraryError(Exception):
    """A library function failed; the text is the API server's."""


def tagged(kind: str, **fields: Any) -> dict[str, Any]:
    return {TAG: kind, **fields}


def untag(value: Any, kind: str) -> dict[str, Any]:
    if not isinstance(value, dict) or value.get(TAG) != kind:
        raise LibraryError("no such overload")
    return value


def kind_of(value: Any) -> str | None:
    if isinstance(value, dict):
        tag = value.get(TAG)
        return tag if isinstance(tag, str) else None
    return None
