"""cel-go's strings extension at version 2 and the standard ``string()`` conversions.

Neither is a Kubernetes library: the API server's base environment
(k8s.io/apiserver ``pkg/cel/environment/base.go``) enables ``ext.Strings`` version 2, and
``string()`` is standard CEL. They are here because the Kubernetes libraries add
overloads to them (``string()`` of an IP or CIDR, ``indexOf``/``lastIndexOf`` of a list),
and the engine cannot add overloads to a function the standard library or an extension
already declares. So the type-checking environment leaves out the standard ``string``
and the strings extension and declares both by hand, with cel-go's overload ids.

The run environment keeps the engine's strings extension, and the expression it runs
calls ``k8s_indexOf``/``k8s_lastIndexOf`` instead (see :mod:`compiler.apiserver.cel.k8s`);
for a string receiver those go to :func:`index_of` and :func:`last_index_of`, which
behave as cel-go's strings ``indexOf`` and ``lastIndexOf``.
"""

from __future__ import annotations

from typing import Any

from compiler.apiserver.cel.library.declarations import (
    BOOL,
    BYTES,
    DBL,
    DUR,
    DYN,
    INT,
    LIST_STR,
    STR,
    TS,
    UINT,
    Declaration,
    t,
)
from compiler.apiserver.cel.library.values import LibraryError


def declarations() -> list[Declaration]:
    # the standard string() conversions (the IP and CIDR libraries add theirs)
    out = [
        Declaration("string", f"{type_name}_to_string", [spec], STR)
        for type_name, spec in (
            ("int", INT),
            ("uint", UINT),
            ("double", DBL),
            ("bytes", BYTES),
            ("string", STR),
            ("timestamp", TS),
            ("duration", DUR),
            ("bool", BOOL),
        )
    ]
    # strings extension, version 2 (what the API server enables)
    out += [
        Declaration("charAt", "string_char_at_int", [INT], STR, STR),
        # the lists library adds the list overloads of indexOf and lastIndexOf
        Declaration("indexOf", "string_index_of_string", [STR], INT, STR),
        Declaration("indexOf", "string_index_of_string_int", [STR, INT], INT, STR),
        Declaration("lastIndexOf", "string_last_index_of_string", [STR], INT, STR),
        Declaration("lastIndexOf", "string_last_index_of_string_int", [STR, INT], INT, STR),
        Declaration("lowerAscii", "string_lower_ascii", [], STR, STR),
        Declaration("upperAscii", "string_upper_ascii", [], STR, STR),
        Declaration("replace", "string_replace_string_string", [STR, STR], STR, STR),
        Declaration("replace", "string_replace_string_string_int", [STR, STR, INT], STR, STR),
        Declaration("split", "string_split_string", [STR], LIST_STR, STR),
        Declaration("split", "string_split_string_int", [STR, INT], LIST_STR, STR),
        Declaration("substring", "string_substring_int", [INT], STR, STR),
        Declaration("substring", "string_substring_int_int", [INT, INT], STR, STR),
        Declaration("trim", "string_trim", [], STR, STR),
        Declaration("format", "string_format", [t("list", DYN)], STR, STR),
        Declaration("strings.quote", "strings_quote", [STR], STR),
        Declaration("join", "list_join", [], STR, LIST_STR),
        Declaration("join", "list_join_string", [STR], STR, LIST_STR),
    ]
    return out


def index_of(text: str, sub: str, offset: Any = None) -> int:
    """``text.indexOf(sub)`` and ``text.indexOf(sub, offset)``."""
    return _index_of(text, sub, 0 if offset is None else int(offset))


def last_index_of(text: str, sub: str, offset: Any = None) -> int:
    """``text.lastIndexOf(sub)`` and ``text.lastIndexOf(sub, offset)``."""
    if offset is None:
        if sub == "":
            return len(text)
        if len(text.encode()) < len(sub.encode()):
            return -1
        return _last_index_of(text, sub, len(text) - 1)
    return _last_index_of(text, sub, int(offset))


def _index_of(text: str, sub: str, offset: int) -> int:
    if sub == "":
        return offset
    if offset < 0:
        raise LibraryError(f"index out of range: {offset}")
    if offset >= len(text):
        return -1
    return text.find(sub, offset)


def _last_index_of(text: str, sub: str, offset: int) -> int:
    if sub == "":
        return offset
    if offset < 0:
        raise LibraryError(f"index out of range: {offset}")
    if offset >= len(text):
        return -1
    offset = min(offset, len(text) - len(sub))
    if offset < 0:
        return -1
    return text.rfind(sub, 0, offset + len(sub))
