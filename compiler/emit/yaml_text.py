"""Canonical YAML text for JSON data: stable key order, safe for every Kubernetes reader.

Key order: ``apiVersion, kind, metadata, spec`` first at the top, ``name`` first in
any nested mapping, then the rest sorted. Strings that some YAML reader could take
for another type (YAML 1.1 booleans such as ``on``, numbers such as ``1e3`` that
Go's decoder reads as floats, ``null``, ``~``) are always quoted::

    >>> print(dump_documents([{"kind": "X", "apiVersion": "v1", "data": {"a": "on", "b": "1e3"}}]), end="")
    apiVersion: v1
    kind: X
    data:
      a: 'on'
      b: '1e3'
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import yaml

_TOP_ORDER = ("apiVersion", "kind", "metadata", "spec")
_METADATA_ORDER = ("name", "generateName", "namespace", "labels", "annotations", "ownerReferences")

# Scalars YAML 1.1 (PyYAML, go-yaml v2), YAML 1.2 core or JSON would not read as strings.
_AMBIGUOUS = re.compile(
    r"""^(?:
        ~|null|Null|NULL|
        y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF|
        [-+]?(?:\.[0-9]+|[0-9][0-9_]*(?:\.[0-9_]*)?)(?:[eE][-+]?[0-9]+)?|
        [-+]?0[xob][0-9a-fA-F_]+|
        [-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?|
        [-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)|
        [0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt ].*)?|
        <<|=
    )$""",
    re.VERBOSE,
)


class _Dumper(yaml.CSafeDumper if hasattr(yaml, "CSafeDumper") else yaml.SafeDumper):  # type: ignore[misc]
    pass


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if "\n" in value and not value.startswith(" ") and not value.rstrip("\n").endswith(" "):
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    if _AMBIGUOUS.match(value):
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="'")
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


_Dumper.add_representer(str, _represent_str)


def _ordered(value: Any, depth: int = 0, parent: str = "") -> Any:
    if isinstance(value, dict):
        if depth == 0:
            first: tuple[str, ...] = _TOP_ORDER
        elif parent == "metadata":
            first = _METADATA_ORDER
        else:
            first = ("name",)
        keys = [k for k in first if k in value] + sorted(k for k in value if k not in first)
        return {k: _ordered(value[k], depth + 1, k) for k in keys}
    if isinstance(value, list):
        return [_ordered(item, depth + 1, parent) for item in value]
    return value


def dump_document(value: dict[str, Any]) -> str:
    text: str = yaml.dump(
        _ordered(value),
        Dumper=_Dumper,
        sort_keys=False,
        default_flow_style=False,
        allow_unicode=True,
        width=1 << 30,
    )
    return text


def dump_documents(values: Iterable[dict[str, Any]]) -> str:
    return "---\n".join(dump_document(v) for v in values)
