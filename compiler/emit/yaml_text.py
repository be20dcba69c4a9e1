"""Canonical YAML text for JSON data: stable key order, safe for every Kubernetes reader.

Key order: ``apiVersion, kind, metadata, spec`` first at the top, ``name`` first in
any nested mapping, then the rest sorted. Strings that some YAML reader could take
for another type (YAML 1.1 booleans such as ``on``, numbers such as ``1e3`` that
Go's decoder reads as floats, ``null``, ``~``) are always quoted::

    >>> print(dump_document({"kind": "X", "apiVersion": "v1", "data": {"a": "on", "b": "1e3"}}), end="")
    apiVersion: v1
    kind: X
    data:
      a: 'on'
      b: '1e3'

The emitter is written for this one job (JSON data in, block-style YAML out) because
a general one spends most of a render in Python-level representation. Its output is
tested to load back equal under both YAML 1.1 (PyYAML, like Go's decoder) and
YAML 1.2 (ruamel.yaml) rules (``yaml_text_test.py``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import Any

_TOP_ORDER = ("apiVersion", "kind", "metadata", "spec")
_METADATA_ORDER = ("name", "generateName", "namespace", "labels", "annotations", "ownerReferences")

# Scalars YAML 1.1 (PyYAML, go-yaml v2), YAML 1.2 core or JSON would not read as strings.
_AMBIGUOUS = re.compile(
    r"""^(?:
        ~|null|Null|NULL|
        y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF|
        [-+]?(?:\.[0-9_]+|[0-9][0-9_]*(?:\.[0-9_]*)?)(?:[eE][-+]?[0-9]+)?|
        [-+]?0[xob][0-9a-fA-F_]+|
        [-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?|
        [-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)|
        [0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt ].*)?|
        <<|=
    )\Z""",
    re.VERBOSE,
)
# Plain (unquoted) only for a conservative alphabet; anything else is quoted.
_PLAIN = re.compile(r"^[A-Za-z0-9_./(][A-Za-z0-9_./=+@,%()\[\]{}:$ -]*\Z")
_PLAIN_FORBIDDEN = re.compile(r": |:\Z| #| \Z|[\[\]{},]")
_PRINTABLE = re.compile(
    r"^[\x20-\x7e\u00a0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]*\Z"
)
_LITERAL_SAFE = re.compile(
    r"^[\x20-\x7e\t\n\u00a0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]*\Z"
)


def _double_quoted(text: str) -> str:
    """YAML double-quoted form; escapes whatever is not plainly printable."""
    out = ['"']
    for char in text:
        code = ord(char)
        if char in ('"', "\\"):
            out.append("\\" + char)
        elif code in (0x2028, 0x2029, 0xFEFF):
            out.append(f"\\u{code:04x}")  # line breaks to YAML 1.1 readers; the BOM
        elif 0x20 <= code <= 0x7E or 0xA0 <= code <= 0xD7FF or 0xE000 <= code <= 0xFFFD:
            out.append(char)
        elif code <= 0xFF:
            out.append(f"\\x{code:02x}")
        elif code <= 0xFFFF:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


def _string(text: str, indent: int, key: bool = False) -> str:
    if "\n" in text:
        return _multiline(text, indent, key)
    shown = _SINGLE_LINE.get(text)
    if shown is None:
        shown = _single_line(text)
        if len(text) <= _CACHED_LENGTH:
            if len(_SINGLE_LINE) >= _SINGLE_LINE_MAX:
                _SINGLE_LINE.clear()
            _SINGLE_LINE[text] = shown
    return shown


# Rendered objects repeat the same keys and values many times over: a single-line
# string's form depends on its text alone, so each is worked out once.
_SINGLE_LINE: dict[str, str] = {}
_SINGLE_LINE_MAX = 100_000
_CACHED_LENGTH = 256  # long texts are rarely repeated and would only hold memory


def _single_line(text: str) -> str:
    if (
        text
        and _PLAIN.match(text)
        and not _PLAIN_FORBIDDEN.search(text)
        and not _AMBIGUOUS.match(text)
    ):
        return text
    if _PRINTABLE.match(text):
        return "'" + text.replace("'", "''") + "'"
    return _double_quoted(text)


def _multiline(text: str, indent: int, key: bool) -> str:
    if not key and _literal_ok(text):
        return _literal(text, indent)
    return _double_quoted(text)


def _literal_ok(text: str) -> bool:
    if not _LITERAL_SAFE.match(text) or text.startswith((" ", "\t", "\n")):
        return False
    body = text.rstrip("\n")
    return bool(body) and all(not line.endswith((" ", "\t")) for line in body.split("\n"))


def _literal(text: str, indent: int) -> str:
    body = text.rstrip("\n")
    trailing = len(text) - len(body)
    chomp = "-" if trailing == 0 else ("" if trailing == 1 else "+")
    pad = " " * (indent + 2)
    lines = body.split("\n") + [""] * (trailing - 1 if trailing > 1 else 0)
    return f"|{chomp}\n" + "\n".join(pad + line if line else "" for line in lines)


def _scalar(value: Any, indent: int) -> str:
    cls = type(value)
    if cls is str:
        return _string(value, indent)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return ".nan"
        if math.isinf(value):
            return ".inf" if value > 0 else "-.inf"
        text = repr(value)
        if "." not in text:  # YAML 1.1 reads 1e-05 as a string: write 1.0e-05
            mantissa, _, exponent = text.partition("e")
            text = f"{mantissa}.0" + (f"e{exponent}" if exponent else "")
        return text
    if isinstance(value, str):
        return _string(value, indent)
    raise TypeError(f"cannot write a {type(value).__name__} as YAML")


_TOP, _METADATA, _NESTED = 0, 1, 2
_FIRST: dict[int, tuple[str, ...]] = {
    _TOP: _TOP_ORDER,
    _METADATA: _METADATA_ORDER,
    _NESTED: ("name",),
}
_KEY_ORDERS: dict[tuple[int, tuple[str, ...]], tuple[tuple[str, str], ...]] = {}


def _keys(value: dict[str, Any], depth: int, parent: str) -> tuple[tuple[str, str], ...]:
    """The mapping's keys in canonical order, each with its written form and colon
    (worked out once per set of keys)."""
    where = _TOP if depth == 0 else (_METADATA if parent == "metadata" else _NESTED)
    cache_key = (where, tuple(value))
    order = _KEY_ORDERS.get(cache_key)
    if order is None:
        first = _FIRST[where]
        keys = [k for k in first if k in value] + sorted(k for k in value if k not in first)
        order = tuple((k, _string(k, 0, key=True) + ":") for k in keys)
        if len(_KEY_ORDERS) >= _SINGLE_LINE_MAX:
            _KEY_ORDERS.clear()
        _KEY_ORDERS[cache_key] = order
    return order


def _kind(item: Any) -> type:
    """``dict`` or ``list`` for any mapping or list type (an OrderedDict, say), else the type."""
    cls = type(item)
    if cls is str or cls is dict or cls is list:
        return cls
    if isinstance(item, dict):
        return dict
    if isinstance(item, list):
        return list
    return cls


def _mapping(
    value: dict[str, Any],
    indent: int,
    depth: int,
    parent: str,
    out: list[str],
    first_prefix: str | None,
) -> None:
    pad = " " * indent
    prefix = pad if first_prefix is None else first_prefix
    append = out.append
    for key, written in _keys(value, depth, parent):
        item = value[key]
        head = prefix + written
        prefix = pad
        cls = _kind(item)
        if cls is str:
            append(f"{head} {_string(item, indent)}")
        elif cls is dict:
            if item:
                append(head)
                _mapping(item, indent + 2, depth + 1, key, out, None)
            else:
                append(head + " {}")
        elif cls is list:
            if item:
                append(head)
                _sequence(item, indent, depth + 1, key, out)
            else:
                append(head + " []")
        else:
            append(f"{head} {_scalar(item, indent)}")


def _sequence(value: list[Any], indent: int, depth: int, parent: str, out: list[str]) -> None:
    pad = " " * indent
    append = out.append
    for item in value:
        cls = _kind(item)
        if cls is str:
            append(f"{pad}- {_string(item, indent)}")
        elif cls is dict:
            if item:
                _mapping(item, indent + 2, depth + 1, parent, out, pad + "- ")
            else:
                append(pad + "- {}")
        elif cls is list:
            if item:
                append(pad + "-")
                _sequence(item, indent + 2, depth + 1, parent, out)
            else:
                append(pad + "- []")
        else:
            append(f"{pad}- {_scalar(item, indent)}")


def dump_document(value: dict[str, Any]) -> str:
    """One document, ending with a newline."""
    if not value:
        return "{}\n"
    out: list[str] = []
    _mapping(value, 0, 0, "", out, None)
    return "\n".join(out) + "\n"


def dump_documents(values: Iterable[dict[str, Any]]) -> str:
    return "---\n".join(dump_document(v) for v in values)
