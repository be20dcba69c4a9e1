"""The Kubernetes CEL libraries, added to the CEL engine as custom functions.

The API server's CEL environment (k8s.io/apiserver v0.36.2 ``pkg/cel/environment``)
adds to plain CEL: quantity, URL, regex ``find``/``findAll``, lists (``isSorted``,
``sum``, ``min``, ``max``, ``indexOf``, ``lastIndexOf``), IP and CIDR, format and
semver, the strings extension at version 2, the sets and lists extensions, optional
types and two-variable comprehensions. :func:`k8s_engine` is an
:class:`~compiler.apiserver.cel.engine.Engine` with all of them::

    >>> engine = k8s_engine()
    >>> program = engine.compile('quantity(self).isLessThan(quantity("2Gi"))', {"self": "dyn"})
    >>> program.evaluate({"self": "1536Mi"})
    True

How it is built, since ``cel-expr-python`` cannot make opaque values nor optional values
from Python:

* every expression is **type-checked** in a declarations-only environment that declares
  the libraries with the API server's exact signatures and types (``kubernetes.Quantity``,
  ``net.IP``, ``optional_type(list(string))``...), so a misuse is a compile error with
  cel-go's wording and position, as the API server reports it;
* it is then **run** in a second environment where the same functions are Python code
  (this module's ``_impl_*``) over plain values: a Quantity, URL, Semver or format is a
  small tagged map, an IP or CIDR its canonical string; a few calls are renamed in the
  run copy of the expression (``indexOf``/``lastIndexOf``, whose string overloads come
  from the strings extension and cannot be extended, ``validate`` and ``format.named``,
  which return optionals: the Python side returns a list and ``.first()`` makes the
  optional);
* ``variables.<name>`` (ValidatingAdmissionPolicy composition) is rewritten, keeping
  every column, to a declared variable ``variables_<name>``.

Each Go behaviour is reproduced from the upstream sources: ``resource.Quantity``
(through :mod:`compiler.kube.quantity`, including the int64/inf.Dec distinction
``isInteger`` and ``asInteger`` expose: ``quantity("1.5Gi").isInteger()`` is false in
Go), ``net/url`` parsing (Go 1.26), ``net/netip`` parsing, blang/semver, apimachinery's
name validators and cel-go's strings ``indexOf``.

Known gaps (the engine cannot express them):

* an IP or CIDR is a string at run time: ``ip("::1") == "::1"`` is rejected by the type
  check, but a dynamically typed comparison of an IP with a string is true instead of an
  error; ``type(ip(...))`` is ``string``;
* a Quantity, URL, Semver or format is a map at run time: ``type()`` of one is ``map``,
  and comparing one with a map of the same shape through ``dyn`` is possible;
* ``find``/``findAll`` use Python's ``re`` after translating RE2 syntax (``\\z``, POSIX
  classes, ``(?<name>``); Unicode classes (``\\pL``), ungreedy mode and flags after the
  start of the pattern are reported as unsupported; error texts for invalid patterns are
  Python's, prefixed as Go's;
* a ``uint`` list's ``sum()``/``min()``/``max()`` is an ``int``;
* the API server's cost limits are replaced by the engine's fixed iteration budget.
"""

from __future__ import annotations

import base64
import binascii
import datetime as _dt
import ipaddress
import itertools
import json
import math
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from compiler.apiserver.cel.engine import (
    DURATION,
    TIMESTAMP,
    CelBudgetExceeded,
    CelCompileError,
    CelEvalError,
    Program,
    VarType,
    go_error_text,
    import_cel,
)
from compiler.kube.gotext import go_quote
from compiler.kube.quantity import Format, Quantity, QuantityError

__all__ = [
    "VARIABLE_PREFIX",
    "K8sEngine",
    "K8sProgram",
    "cel_type_name",
    "k8s_engine",
    "references",
    "rewrite_variables",
    "unbound_variable",
]

VARIABLE_PREFIX: Final = "variables_"
_TAG: Final = "__k8s_type__"


class LibraryError(Exception):
    """A library function failed; the text is the API server's."""


# ==========================================================================================
# Lexing (only what the rewrites need: identifiers, strings, comments, punctuation)
# ==========================================================================================

_TOKEN_RE = re.compile(
    r"""
    (?P<ws>\s+|//[^\n]*)
  | (?P<str>
        (?:[rR][bB]?|[bB][rR])(?:\"\"\"[\s\S]*?\"\"\"|'''[\s\S]*?'''|"[^"\n]*"|'[^'\n]*')
      | [bB]?(?:\"\"\"(?:\\[\s\S]|[^\\])*?\"\"\"|'''(?:\\[\s\S]|[^\\])*?'''
               |"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')
    )
  | (?P<id>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<other>[\s\S])
    """,
    re.X,
)


@dataclass(frozen=True, slots=True)
class _Tok:
    kind: str  # "ws", "str", "id", "other"
    text: str
    start: int

    @property
    def end(self) -> int:
        return self.start + len(self.text)


def _tokens(source: str) -> list[_Tok]:
    return [_Tok(str(m.lastgroup), m.group(), m.start()) for m in _TOKEN_RE.finditer(source)]


def _significant(tokens: list[_Tok]) -> list[_Tok]:
    return [t for t in tokens if t.kind != "ws"]


def _closing_paren(sig: list[_Tok], open_index: int) -> int | None:
    """Index in ``sig`` of the ``)`` matching the ``(`` at ``open_index``."""
    depth = 0
    for index in range(open_index, len(sig)):
        text = sig[index].text
        if sig[index].kind != "other":
            continue
        if text in "([{":
            depth += 1
        elif text in ")]}":
            depth -= 1
            if depth == 0:
                return index
    return None


def rewrite_variables(source: str) -> tuple[str, frozenset[str]]:
    """``variables.x`` -> ``variables_x`` (same length); also the names referenced.

    Only a root ``variables`` (not a field named so) is rewritten.
    """
    sig = _significant(_tokens(source))
    out = list(source)
    names: set[str] = set()
    for i, tok in enumerate(sig):
        if tok.kind != "id" or tok.text != "variables":
            continue
        if i > 0 and sig[i - 1].text == ".":
            continue
        if i + 2 >= len(sig) or sig[i + 1].text != "." or sig[i + 2].kind != "id":
            continue
        name = sig[i + 2].text
        names.add(name)
        replacement = f"{VARIABLE_PREFIX}{name}"
        span = sig[i + 2].end - tok.start
        replacement = replacement.ljust(span)
        out[tok.start : sig[i + 2].end] = list(replacement)
    return "".join(out), frozenset(names)


_RENAMED: Final = {"indexOf": "k8s_indexOf", "lastIndexOf": "k8s_lastIndexOf"}


def _rewrite_run(source: str) -> str:
    """The expression the run environment evaluates (see the module docstring)."""
    sig = _significant(_tokens(source))
    edits: list[tuple[int, int, str]] = []  # (start, end, replacement)
    for i, tok in enumerate(sig):
        if tok.kind != "id":
            continue
        before = sig[i - 1].text if i > 0 else ""
        after = sig[i + 1].text if i + 1 < len(sig) else ""
        if before == "." and after == "(" and tok.text in _RENAMED:
            edits.append((tok.start, tok.end, _RENAMED[tok.text]))
        elif before == "." and after == "(" and tok.text == "validate":
            close = _closing_paren(sig, i + 1)
            if close is not None:
                edits.append((tok.start, tok.end, "k8s_validate"))
                edits.append((sig[close].end, sig[close].end, ".first()"))
        elif (
            tok.text == "format"
            and before != "."
            and after == "."
            and i + 3 < len(sig)
            and sig[i + 2].text == "named"
            and sig[i + 3].text == "("
        ):
            close = _closing_paren(sig, i + 3)
            if close is not None:
                edits.append((tok.start, sig[i + 2].end, "k8s_format_named"))
                edits.append((sig[close].end, sig[close].end, ".first()"))
    if not edits:
        return source
    out = []
    position = 0
    for start, end, text in sorted(edits, key=lambda e: (e[0], e[1])):
        out.append(source[position:start])
        out.append(text)
        position = end
    out.append(source[position:])
    return "".join(out)


# ==========================================================================================
# Type checking environment (declarations only, the API server's signatures)
# ==========================================================================================

_T_QUANTITY: Final = "kubernetes.Quantity"
_T_URL: Final = "kubernetes.URL"
_T_SEMVER: Final = "kubernetes.Semver"
_T_FORMAT: Final = "kubernetes.NamedFormat"
_T_IP: Final = "net.IP"
_T_CIDR: Final = "net.CIDR"

_TypeSpec = dict[str, Any]


def _t(name: str, *params: _TypeSpec) -> _TypeSpec:
    spec: _TypeSpec = {"type_name": name}
    if params:
        spec["params"] = list(params)
    return spec


_A: Final[_TypeSpec] = {"type_name": "A", "is_type_param": True}
_STR, _INT, _UINT, _DBL, _BOOL, _BYTES, _DYN = (
    _t("string"),
    _t("int"),
    _t("uint"),
    _t("double"),
    _t("bool"),
    _t("bytes"),
    _t("dyn"),
)
_TS, _DUR = _t("google.protobuf.Timestamp"), _t("google.protobuf.Duration")
_LIST_STR = _t("list", _STR)
_COMPARABLE: Final = {
    "int": _INT,
    "uint": _UINT,
    "double": _DBL,
    "bool": _BOOL,
    "duration": _DUR,
    "timestamp": _TS,
    "string": _STR,
    "bytes": _BYTES,
}
_SUMMABLE: Final = {"int": _INT, "uint": _UINT, "double": _DBL, "duration": _DUR}

_FORMAT_NAMES: Final = (
    "dns1123Label",
    "dns1123Subdomain",
    "dns1035Label",
    "qualifiedName",
    "dns1123LabelPrefix",
    "dns1123SubdomainPrefix",
    "dns1035LabelPrefix",
    "labelValue",
    "uri",
    "uuid",
    "byte",
    "date",
    "datetime",
)


def _ov(
    oid: str, args: Sequence[_TypeSpec], ret: _TypeSpec, target: _TypeSpec | None = None
) -> dict[str, Any]:
    overload: dict[str, Any] = {"id": oid, "args": list(args), "return": ret}
    if target is not None:
        overload["target"] = target
    return overload


def _check_functions() -> list[dict[str, Any]]:
    q, u, s, f, ip, cidr = (
        _t(n) for n in (_T_QUANTITY, _T_URL, _T_SEMVER, _T_FORMAT, _T_IP, _T_CIDR)
    )
    functions: dict[str, list[dict[str, Any]]] = {}

    def add(name: str, *overloads: dict[str, Any]) -> None:
        functions.setdefault(name, []).extend(overloads)

    # the standard string() conversions, plus IP and CIDR
    for type_name, spec in (
        ("int", _INT),
        ("uint", _UINT),
        ("double", _DBL),
        ("bytes", _BYTES),
        ("string", _STR),
        ("timestamp", _TS),
        ("duration", _DUR),
        ("bool", _BOOL),
    ):
        add("string", _ov(f"{type_name}_to_string", [spec], _STR))
    add("string", _ov("ip_to_string", [ip], _STR), _ov("cidr_to_string", [cidr], _STR))
    # strings extension, version 2 (what the API server enables)
    add("charAt", _ov("string_char_at_int", [_INT], _STR, _STR))
    add(
        "indexOf",
        _ov("string_index_of_string", [_STR], _INT, _STR),
        _ov("string_index_of_string_int", [_STR, _INT], _INT, _STR),
        _ov("list_a_index_of_int", [_A], _INT, _t("list", _A)),
    )
    add(
        "lastIndexOf",
        _ov("string_last_index_of_string", [_STR], _INT, _STR),
        _ov("string_last_index_of_string_int", [_STR, _INT], _INT, _STR),
        _ov("list_a_last_index_of_int", [_A], _INT, _t("list", _A)),
    )
    add("lowerAscii", _ov("string_lower_ascii", [], _STR, _STR))
    add("upperAscii", _ov("string_upper_ascii", [], _STR, _STR))
    add(
        "replace",
        _ov("string_replace_string_string", [_STR, _STR], _STR, _STR),
        _ov("string_replace_string_string_int", [_STR, _STR, _INT], _STR, _STR),
    )
    add(
        "split",
        _ov("string_split_string", [_STR], _LIST_STR, _STR),
        _ov("string_split_string_int", [_STR, _INT], _LIST_STR, _STR),
    )
    add(
        "substring",
        _ov("string_substring_int", [_INT], _STR, _STR),
        _ov("string_substring_int_int", [_INT, _INT], _STR, _STR),
    )
    add("trim", _ov("string_trim", [], _STR, _STR))
    add("format", _ov("string_format", [_t("list", _DYN)], _STR, _STR))
    add("strings.quote", _ov("strings_quote", [_STR], _STR))
    add(
        "join",
        _ov("list_join", [], _STR, _LIST_STR),
        _ov("list_join_string", [_STR], _STR, _LIST_STR),
    )
    # quantity
    add("quantity", _ov("string_to_quantity", [_STR], q))
    add("isQuantity", _ov("is_quantity_string", [_STR], _BOOL))
    add("sign", _ov("quantity_sign", [q], _INT))
    add("isGreaterThan", _ov("quantity_is_greater_than", [q], _BOOL, q))
    add("isLessThan", _ov("quantity_is_less_than", [q], _BOOL, q))
    add("compareTo", _ov("quantity_compare_to", [q], _INT, q))
    add("asApproximateFloat", _ov("quantity_get_float", [], _DBL, q))
    add("asInteger", _ov("quantity_get_int", [], _INT, q))
    add("isInteger", _ov("quantity_is_integer", [], _BOOL, q))
    add("add", _ov("quantity_add", [q], q, q), _ov("quantity_add_int", [_INT], q, q))
    add("sub", _ov("quantity_sub", [q], q, q), _ov("quantity_sub_int", [_INT], q, q))
    # semver (version 1: the normalising overloads too)
    add(
        "semver",
        _ov("string_to_semver", [_STR], s),
        _ov("string_bool_to_semver", [_STR, _BOOL], s),
    )
    add(
        "isSemver",
        _ov("is_semver_string", [_STR], _BOOL),
        _ov("is_semver_string_bool", [_STR, _BOOL], _BOOL),
    )
    add("isGreaterThan", _ov("semver_is_greater_than", [s], _BOOL, s))
    add("isLessThan", _ov("semver_is_less_than", [s], _BOOL, s))
    add("compareTo", _ov("semver_compare_to", [s], _INT, s))
    for part in ("major", "minor", "patch"):
        add(part, _ov(f"semver_{part}", [], _INT, s))
    # url
    add("url", _ov("string_to_url", [_STR], u))
    for getter in ("getScheme", "getHost", "getHostname", "getPort", "getEscapedPath"):
        add(getter, _ov(f"url_{getter}", [], _STR, u))
    add("getQuery", _ov("url_get_query", [], _t("map", _STR, _LIST_STR), u))
    add("isURL", _ov("is_url_string", [_STR], _BOOL))
    # regex
    add("find", _ov("string_find_string", [_STR], _STR, _STR))
    add(
        "findAll",
        _ov("string_find_all_string", [_STR], _LIST_STR, _STR),
        _ov("string_find_all_string_int", [_STR, _INT], _LIST_STR, _STR),
    )
    # lists
    for name, spec in _COMPARABLE.items():
        listed = _t("list", spec)
        add("isSorted", _ov(f"list_{name}_is_sorted_bool", [], _BOOL, listed))
        add("max", _ov(f"list_{name}_max_{name}", [], spec, listed))
        add("min", _ov(f"list_{name}_min_{name}", [], spec, listed))
    for name, spec in _SUMMABLE.items():
        add("sum", _ov(f"list_{name}_sum_{name}", [], spec, _t("list", spec)))
    # ip and cidr
    add("ip", _ov("string_to_ip", [_STR], ip), _ov("cidr_ip", [], ip, cidr))
    add("family", _ov("ip_family", [], _INT, ip))
    add("ip.isCanonical", _ov("ip_is_canonical", [_STR], _BOOL))
    for name in (
        "isUnspecified",
        "isLoopback",
        "isLinkLocalMulticast",
        "isLinkLocalUnicast",
        "isGlobalUnicast",
    ):
        add(name, _ov(f"ip_{name}", [], _BOOL, ip))
    add("isIP", _ov("is_ip", [_STR], _BOOL))
    add("cidr", _ov("string_to_cidr", [_STR], cidr))
    add(
        "containsIP",
        _ov("cidr_contains_ip_string", [_STR], _BOOL, cidr),
        _ov("cidr_contains_ip_ip", [ip], _BOOL, cidr),
    )
    add(
        "containsCIDR",
        _ov("cidr_contains_cidr_string", [_STR], _BOOL, cidr),
        _ov("cidr_contains_cidr", [cidr], _BOOL, cidr),
    )
    add("prefixLength", _ov("cidr_prefix_length", [], _INT, cidr))
    add("masked", _ov("cidr_masked", [], cidr, cidr))
    add("isCIDR", _ov("is_cidr", [_STR], _BOOL))
    # format
    add("validate", _ov("format-validate", [_STR], _t("optional_type", _LIST_STR), f))
    add("format.named", _ov("format-named", [_STR], _t("optional_type", f)))
    for name in _FORMAT_NAMES:
        add(f"format.{name}", _ov(f"format.{name}", [], f))
    return [{"name": name, "overloads": overloads} for name, overloads in functions.items()]


def _check_config_yaml() -> str:
    # JSON is YAML; the engine reads its config from YAML text
    config = {
        "name": "trainc-k8s-check",
        "stdlib": {"exclude_functions": [{"name": "string"}]},
        "extensions": [
            {"name": "optional"},
            {"name": "sets"},
            {"name": "lists"},
            {"name": "two-var-comprehensions"},
        ],
        "functions": _check_functions(),
    }
    return json.dumps(config)


_RUN_CONFIG_YAML: Final = """\
name: trainc-k8s-run
extensions:
  - name: optional
  - name: sets
  - name: lists
  - name: two-var-comprehensions
  - name: strings
    version: latest
"""


# ==========================================================================================
# Values
# ==========================================================================================


def _tagged(kind: str, **fields: Any) -> dict[str, Any]:
    return {_TAG: kind, **fields}


def _untag(value: Any, kind: str) -> dict[str, Any]:
    if not isinstance(value, dict) or value.get(_TAG) != kind:
        raise LibraryError("no such overload")
    return value


def _kind_of(value: Any) -> str | None:
    if isinstance(value, dict):
        tag = value.get(_TAG)
        return tag if isinstance(tag, str) else None
    return None


# --- quantity ------------------------------------------------------------------------------
#
# A quantity is {tag, "v": exact value, "s": state}. Go compares quantities by value
# (1000m == 1), but isInteger/asInteger/asApproximateFloat/add see how Go holds the value
# (int64 mantissa and scale, or inf.Dec). "v" carries the value in one canonical
# spelling; "s" carries the scale and representation as a list of zeros, each an int
# (bit 0) or a double (bit 1): CEL's numeric equality makes all such lists equal, so two
# quantities compare equal exactly when their values do.

_STATE_BITS: Final = 33
_INT64_MIN: Final = -(1 << 63)
_INT64_MAX: Final = (1 << 63) - 1


def _internals(q: Quantity) -> tuple[int, int, bool]:
    # value = m * 10**e; big: held as inf.Dec by Go (see compiler.kube.quantity)
    return q._m, q._e, q.is_big


def _encode_quantity(q: Quantity) -> dict[str, Any]:
    m, e, big = _internals(q)
    vm, ve = m, e
    if vm == 0:
        ve = 0
    else:
        while vm % 10 == 0:
            vm //= 10
            ve += 1
    state = ((e + (1 << 31)) & 0xFFFFFFFF) << 1 | int(big)
    bits: list[int | float] = [0.0 if state >> index & 1 else 0 for index in range(_STATE_BITS)]
    return _tagged("Quantity", v=f"{vm}e{ve}", s=bits)


def _decode_quantity(value: Any) -> Quantity:
    data = _untag(value, "Quantity")
    text = str(data.get("v", "0e0"))
    vm_text, _, ve_text = text.partition("e")
    vm, ve = int(vm_text), int(ve_text)
    bits = data.get("s") or []
    state = 0
    for index, bit in enumerate(bits[:_STATE_BITS]):
        if isinstance(bit, float):
            state |= 1 << index
    big = bool(state & 1)
    e = (state >> 1) - (1 << 31)
    m = vm * 10 ** (ve - e) if vm and ve >= e else vm
    if vm == 0:
        m = 0
    return Quantity(m, e, big=big, fmt=Format.DECIMAL_SI)


def _parse_quantity(text: str) -> Quantity:
    try:
        return Quantity.parse(text)
    except QuantityError as error:
        raise LibraryError(str(error)) from None


def _as_int64(q: Quantity) -> int | None:
    m, e, big = _internals(q)
    if big:
        return None
    if e == 0:
        return m
    if e < 0:
        return None
    if m == 0:
        return 0
    if e > 19:
        return None
    value = m * 10**e
    return value if _INT64_MIN <= value <= _INT64_MAX else None


def _pow10(n: int) -> float:
    if n < -323:
        return 0.0
    if n > 308:
        return math.inf
    if n >= 0:
        return float(10**n)
    return 1.0 / float(10**-n)


def _approximate_float(q: Quantity) -> float:
    m, e, _ = _internals(q)
    try:
        base = float(m)
    except OverflowError:
        base = math.inf if m > 0 else -math.inf
    if e == 0:
        return base
    return base * _pow10(e)


def _impl_quantity(text: str) -> dict[str, Any]:
    return _encode_quantity(_parse_quantity(text))


def _impl_is_quantity(text: str) -> bool:
    try:
        Quantity.parse(text)
    except QuantityError:
        return False
    return True


def _impl_sign(value: Any) -> int:
    return _decode_quantity(value).sign()


def _impl_as_integer(value: Any) -> int:
    result = _as_int64(_decode_quantity(value))
    if result is None:
        raise LibraryError("cannot convert value to integer")
    return result


def _impl_is_integer(value: Any) -> bool:
    return _as_int64(_decode_quantity(value)) is not None


def _impl_approximate_float(value: Any) -> float:
    return _approximate_float(_decode_quantity(value))


def _impl_add(value: Any, other: Any) -> dict[str, Any]:
    q = _decode_quantity(value)
    y = _decode_quantity(other) if isinstance(other, dict) else _int_quantity(other)
    return _encode_quantity(q.add(y))


def _impl_sub(value: Any, other: Any) -> dict[str, Any]:
    q = _decode_quantity(value)
    y = _decode_quantity(other) if isinstance(other, dict) else _int_quantity(other)
    return _encode_quantity(q.add(y.neg()))


def _int_quantity(value: Any) -> Quantity:
    if not isinstance(value, int) or isinstance(value, bool):
        raise LibraryError("no such overload")
    return Quantity.of_int(value, Format.DECIMAL_EXPONENT)


# --- semver --------------------------------------------------------------------------------

_SEMVER_NUMBERS: Final = frozenset("0123456789")
_SEMVER_ALPHANUM: Final = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-"
)


@dataclass(frozen=True)
class _Semver:
    major: int
    minor: int
    patch: int
    pre: tuple[int | str, ...]

    def compare(self, other: _Semver) -> int:
        for a, b in (
            (self.major, other.major),
            (self.minor, other.minor),
            (self.patch, other.patch),
        ):
            if a != b:
                return 1 if a > b else -1
        if not self.pre and not other.pre:
            return 0
        if not self.pre:
            return 1
        if not other.pre:
            return -1
        for a2, b2 in zip(self.pre, other.pre, strict=False):
            result = _compare_pre(a2, b2)
            if result:
                return result
        if len(self.pre) == len(other.pre):
            return 0
        return -1 if len(self.pre) < len(other.pre) else 1

    def text(self) -> str:
        base = f"{self.major}.{self.minor}.{self.patch}"
        if self.pre:
            base += "-" + ".".join(str(p) for p in self.pre)
        return base


def _compare_pre(a: int | str, b: int | str) -> int:
    if isinstance(a, int) and not isinstance(b, int):
        return -1
    if not isinstance(a, int) and isinstance(b, int):
        return 1
    if a == b:
        return 0
    return 1 if a > b else -1  # type: ignore[operator]


def _parse_uint(text: str) -> int:
    if not text or not text.isdigit() or not text.isascii():
        raise LibraryError(f'strconv.ParseUint: parsing "{text}": invalid syntax')
    value = int(text)
    if value >= 1 << 64:
        raise LibraryError(f'strconv.ParseUint: parsing "{text}": value out of range')
    return value


def _only(text: str, chars: frozenset[str]) -> bool:
    return all(c in chars for c in text)


def _parse_semver(text: str) -> _Semver:
    if not text:
        raise LibraryError("Version string empty")
    parts = text.split(".", 2)
    if len(parts) != 3:
        raise LibraryError("No Major.Minor.Patch elements found")
    numbers = []
    for label, part in (("major", parts[0]), ("minor", parts[1])):
        if not _only(part, _SEMVER_NUMBERS):
            raise LibraryError(f"Invalid character(s) found in {label} number {go_quote(part)}")
        if len(part) > 1 and part[0] == "0":
            raise LibraryError(
                f"{label.capitalize()} number must not contain leading zeroes {go_quote(part)}"
            )
        numbers.append(_parse_uint(part))
    patch_text = parts[2]
    build: list[str] = []
    pre_texts: list[str] = []
    if "+" in patch_text:
        index = patch_text.index("+")
        build = patch_text[index + 1 :].split(".")
        patch_text = patch_text[:index]
    if "-" in patch_text:
        index = patch_text.index("-")
        pre_texts = patch_text[index + 1 :].split(".")
        patch_text = patch_text[:index]
    if not _only(patch_text, _SEMVER_NUMBERS):
        raise LibraryError(f"Invalid character(s) found in patch number {go_quote(patch_text)}")
    if len(patch_text) > 1 and patch_text[0] == "0":
        raise LibraryError(f"Patch number must not contain leading zeroes {go_quote(patch_text)}")
    patch = _parse_uint(patch_text)
    pre: list[int | str] = []
    for item in pre_texts:
        if not item:
            raise LibraryError("Prerelease is empty")
        if _only(item, _SEMVER_NUMBERS):
            if len(item) > 1 and item[0] == "0":
                raise LibraryError(
                    f"Numeric PreRelease version must not contain leading zeroes {go_quote(item)}"
                )
            pre.append(_parse_uint(item))
        elif _only(item, _SEMVER_ALPHANUM):
            pre.append(item)
        else:
            raise LibraryError(f"Invalid character(s) found in prerelease {go_quote(item)}")
    for item in build:
        if not item:
            raise LibraryError("Build meta data is empty")
        if not _only(item, _SEMVER_ALPHANUM):
            raise LibraryError(f"Invalid character(s) found in build meta data {go_quote(item)}")
    return _Semver(numbers[0], numbers[1], patch, tuple(pre))


def _normalize_semver(text: str) -> _Semver:
    text = text.removeprefix("v")
    parts = text.split(".", 2)
    for index, part in enumerate(parts):
        if len(part) > 1:
            part = part.lstrip("0")
            if not part or part[0] not in "0123456789":
                part = "0" + part
            parts[index] = part
    if len(parts) < 3:
        if any(c in parts[-1] for c in "+-"):
            raise LibraryError("short version cannot contain PreRelease/Build meta data")
        parts += ["0"] * (3 - len(parts))
    return _parse_semver(".".join(parts))


def _encode_semver(version: _Semver) -> dict[str, Any]:
    # build metadata is left out: Go compares semvers without it
    return _tagged("Semver", v=version.text())


def _decode_semver(value: Any) -> _Semver:
    return _parse_semver(str(_untag(value, "Semver").get("v", "")))


def _impl_semver(text: str, normalize: bool = False) -> dict[str, Any]:
    return _encode_semver(_normalize_semver(text) if normalize else _parse_semver(text))


def _impl_is_semver(text: str, normalize: bool = False) -> bool:
    try:
        _normalize_semver(text) if normalize else _parse_semver(text)
    except LibraryError:
        return False
    return True


def _int64(value: int) -> int:
    value &= (1 << 64) - 1
    return value - (1 << 64) if value >> 63 else value


# --- shared comparison (quantity and semver share isLessThan, isGreaterThan, compareTo) ---


def _compare(value: Any, other: Any) -> int:
    kind = _kind_of(value)
    if kind == "Quantity" and _kind_of(other) == "Quantity":
        return _decode_quantity(value).cmp(_decode_quantity(other))
    if kind == "Semver" and _kind_of(other) == "Semver":
        return _decode_semver(value).compare(_decode_semver(other))
    raise LibraryError("no such overload")


def _impl_compare_to(value: Any, other: Any) -> int:
    return _compare(value, other)


def _impl_is_less_than(value: Any, other: Any) -> bool:
    return _compare(value, other) == -1


def _impl_is_greater_than(value: Any, other: Any) -> bool:
    return _compare(value, other) == 1


def _semver_part(index: int) -> Callable[[Any], int]:
    def get(value: Any) -> int:
        version = _decode_semver(value)
        return _int64((version.major, version.minor, version.patch)[index])

    return get


# --- net/url (Go 1.26) -----------------------------------------------------------------------

_ENC_PATH, _ENC_PATH_SEGMENT, _ENC_HOST, _ENC_ZONE, _ENC_USER, _ENC_QUERY, _ENC_FRAGMENT = range(7)


def _should_escape(c: int, mode: int) -> bool:
    ch = chr(c)
    if ch.isascii() and ch.isalnum():
        return False
    if mode in (_ENC_HOST, _ENC_ZONE) and ch in "!$&'()*+,;=:[]<>\"":
        return False
    if ch in "-_.~":
        return False
    if ch in "$&+,/:;=?@":
        if mode == _ENC_PATH:
            return ch == "?"
        if mode == _ENC_PATH_SEGMENT:
            return ch in "/;,?"
        if mode == _ENC_USER:
            return ch in "@/?:"
        if mode == _ENC_QUERY:
            return True
        if mode == _ENC_FRAGMENT:
            return False
    return not (mode == _ENC_FRAGMENT and ch in "!()*")


_HEX: Final = frozenset(b"0123456789abcdefABCDEF")


class _UrlError(Exception):
    pass


def _unescape(s: bytes, mode: int) -> bytes:
    n = 0
    has_plus = False
    i = 0
    while i < len(s):
        c = s[i]
        if c == 0x25:  # '%'
            n += 1
            if i + 2 >= len(s) or s[i + 1] not in _HEX or s[i + 2] not in _HEX:
                bad = s[i : i + 3]
                raise _UrlError(f"invalid URL escape {go_quote(bad.decode('utf-8', 'replace'))}")
            if mode == _ENC_HOST and int(chr(s[i + 1]), 16) < 8 and s[i : i + 3] != b"%25":
                raise _UrlError(
                    f"invalid URL escape {go_quote(s[i : i + 3].decode('utf-8', 'replace'))}"
                )
            if mode == _ENC_ZONE:
                v = int(s[i + 1 : i + 3], 16)
                if s[i : i + 3] != b"%25" and v != 0x20 and _should_escape(v, _ENC_HOST):
                    raise _UrlError(
                        f"invalid URL escape {go_quote(s[i : i + 3].decode('utf-8', 'replace'))}"
                    )
            i += 3
        elif c == 0x2B:  # '+'
            has_plus = mode == _ENC_QUERY
            i += 1
        else:
            if mode in (_ENC_HOST, _ENC_ZONE) and c < 0x80 and _should_escape(c, mode):
                raise _UrlError(f"invalid character {go_quote(chr(c))} in host name")
            i += 1
    if n == 0 and not has_plus:
        return s
    out = bytearray()
    i = 0
    while i < len(s):
        c = s[i]
        if c == 0x25:
            out.append(int(s[i + 1 : i + 3], 16))
            i += 3
            continue
        if c == 0x2B:
            out.append(0x20 if mode == _ENC_QUERY else 0x2B)
        else:
            out.append(c)
        i += 1
    return bytes(out)


def _escape(s: bytes, mode: int) -> bytes:
    out = bytearray()
    for c in s:
        if c == 0x20 and mode == _ENC_QUERY:
            out.append(0x2B)
        elif _should_escape(c, mode):
            out += b"%" + f"{c:02X}".encode()
        else:
            out.append(c)
    return bytes(out)


def _valid_optional_port(port: bytes) -> bool:
    if not port:
        return True
    if port[:1] != b":":
        return False
    return all(0x30 <= b <= 0x39 for b in port[1:])


@dataclass
class _URL:
    scheme: bytes = b""
    opaque: bytes = b""
    user: tuple[bytes, bytes | None] | None = None
    host: bytes = b""
    path: bytes = b""
    raw_path: bytes = b""
    omit_host: bool = False
    force_query: bool = False
    raw_query: bytes = b""
    fragment: bytes = b""
    raw_fragment: bytes = b""

    def escaped_path(self) -> bytes:
        if self.raw_path and _valid_encoded(self.raw_path, _ENC_PATH):
            try:
                if _unescape(self.raw_path, _ENC_PATH) == self.path:
                    return self.raw_path
            except _UrlError:
                pass
        if self.path == b"*":
            return b"*"
        return _escape(self.path, _ENC_PATH)

    def escaped_fragment(self) -> bytes:
        if self.raw_fragment and _valid_encoded(self.raw_fragment, _ENC_FRAGMENT):
            try:
                if _unescape(self.raw_fragment, _ENC_FRAGMENT) == self.fragment:
                    return self.raw_fragment
            except _UrlError:
                pass
        return _escape(self.fragment, _ENC_FRAGMENT)

    def string(self) -> bytes:
        buf = bytearray()
        if self.scheme:
            buf += self.scheme + b":"
        if self.opaque:
            buf += self.opaque
        else:
            if (self.scheme or self.host or self.user is not None) and not (
                self.omit_host and not self.host and self.user is None
            ):
                if self.host or self.path or self.user is not None:
                    buf += b"//"
                if self.user is not None:
                    name, password = self.user
                    buf += _escape(name, _ENC_USER)
                    if password is not None:
                        buf += b":" + _escape(password, _ENC_USER)
                    buf += b"@"
                if self.host:
                    buf += _escape(self.host, _ENC_HOST)
            path = self.escaped_path()
            if path and path[:1] != b"/" and self.host:
                buf += b"/"
            if not buf and b":" in path.split(b"/", 1)[0]:
                buf += b"./"
            buf += path
        if self.force_query or self.raw_query:
            buf += b"?" + self.raw_query
        if self.fragment:
            buf += b"#" + self.escaped_fragment()
        return bytes(buf)


def _valid_encoded(s: bytes, mode: int) -> bool:
    for c in s:
        if chr(c) in "!$&'()*+,;=:@[]%":
            continue
        if _should_escape(c, mode):
            return False
    return True


def _get_scheme(raw: bytes) -> tuple[bytes, bytes]:
    for i, c in enumerate(raw):
        ch = chr(c)
        if ch.isascii() and ch.isalpha():
            continue
        if ch.isdigit() or ch in "+-.":
            if i == 0:
                return b"", raw
            continue
        if ch == ":":
            if i == 0:
                raise _UrlError("missing protocol scheme")
            return raw[:i], raw[i + 1 :]
        return b"", raw
    return b"", raw


def _parse_host(scheme: bytes, host: bytes) -> bytes:
    open_bracket = host.rfind(b"[")
    if open_bracket > 0:
        raise _UrlError("invalid IP-literal")
    if open_bracket == 0:
        close = host.rfind(b"]")
        if close < 0:
            raise _UrlError("missing ']' in host")
        colon_port = host[close + 1 :]
        if not _valid_optional_port(colon_port):
            raise _UrlError(
                f"invalid port {go_quote(colon_port.decode('utf-8', 'replace'))} after host"
            )
        unescaped_port = _unescape(colon_port, _ENC_HOST)
        hostname = host[1:close]
        zone = hostname.find(b"%25")
        if zone >= 0:
            unescaped = _unescape(hostname[:zone], _ENC_HOST) + _unescape(
                hostname[zone:], _ENC_ZONE
            )
        else:
            unescaped = _unescape(hostname, _ENC_HOST)
        text = unescaped.decode("utf-8", "replace")
        try:
            family, _, _ = _parse_addr(text)
        except LibraryError as error:
            raise _UrlError(f"invalid host: {error}") from None
        if family == 4:
            raise _UrlError("invalid IP-literal")
        return b"[" + unescaped + b"]" + unescaped_port
    first = host.find(b":")
    if first != -1:
        last = host.rfind(b":")
        index = first
        if last != first and scheme not in (b"http", b"https"):
            index = last
        colon_port = host[index:]
        if not _valid_optional_port(colon_port):
            raise _UrlError(
                f"invalid port {go_quote(colon_port.decode('utf-8', 'replace'))} after host"
            )
    return _unescape(host, _ENC_HOST)


_USERINFO_OK: Final = frozenset("-._:~!$&'()*+,;=%@")


def _parse_authority(url: _URL, authority: bytes) -> None:
    at = authority.rfind(b"@")
    url.host = _parse_host(url.scheme, authority if at < 0 else authority[at + 1 :])
    if at < 0:
        return
    userinfo = authority[:at]
    text = userinfo.decode("utf-8", "replace")
    if not all((c.isascii() and c.isalnum()) or c in _USERINFO_OK for c in text):
        raise _UrlError("net/url: invalid userinfo")
    if b":" not in userinfo:
        url.user = (_unescape(userinfo, _ENC_USER), None)
    else:
        name, _, password = userinfo.partition(b":")
        url.user = (_unescape(name, _ENC_USER), _unescape(password, _ENC_USER))


def _parse_url(raw: bytes, via_request: bool) -> _URL:
    if any(c < 0x20 or c == 0x7F for c in raw):
        raise _UrlError("net/url: invalid control character in URL")
    if not raw and via_request:
        raise _UrlError("empty url")
    url = _URL()
    if raw == b"*":
        url.path = b"*"
        return url
    scheme, rest = _get_scheme(raw)
    url.scheme = scheme.lower()
    if rest.endswith(b"?") and rest.count(b"?") == 1:
        url.force_query = True
        rest = rest[:-1]
    else:
        rest, _, url.raw_query = rest.partition(b"?")
    if not rest.startswith(b"/"):
        if url.scheme:
            url.opaque = rest
            return url
        if via_request:
            raise _UrlError("invalid URI for request")
        if b":" in rest.split(b"/", 1)[0]:
            raise _UrlError("first path segment in URL cannot contain colon")
    if (url.scheme or (not via_request and not rest.startswith(b"///"))) and rest.startswith(b"//"):
        authority, rest = rest[2:], b""
        slash = authority.find(b"/")
        if slash >= 0:
            authority, rest = authority[:slash], authority[slash:]
        _parse_authority(url, authority)
    elif url.scheme and rest.startswith(b"/"):
        url.omit_host = True
    path = _unescape(rest, _ENC_PATH)
    url.path = path
    url.raw_path = b"" if _escape(path, _ENC_PATH) == rest else rest
    return url


def _go_parse(raw: str) -> _URL:
    """``url.Parse``."""
    data = raw.encode("utf-8", "surrogatepass")
    base, sep, frag = data.partition(b"#")
    try:
        url = _parse_url(base, False)
    except _UrlError as error:
        raise LibraryError(f"parse {go_quote(base.decode('utf-8', 'replace'))}: {error}") from None
    if sep and frag:
        try:
            url.fragment = _unescape(frag, _ENC_FRAGMENT)
        except _UrlError as error:
            raise LibraryError(f"parse {go_quote(raw)}: {error}") from None
        url.raw_fragment = b"" if _escape(url.fragment, _ENC_FRAGMENT) == frag else frag
    return url


def _go_parse_request_uri(raw: str) -> _URL:
    try:
        return _parse_url(raw.encode("utf-8", "surrogatepass"), True)
    except _UrlError as error:
        raise LibraryError(f"parse {go_quote(raw)}: {error}") from None


def _b2s(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def _impl_url(text: str) -> dict[str, Any]:
    try:
        _go_parse_request_uri(text)
        url = _go_parse(text)
    except LibraryError as error:
        raise LibraryError(f"URL parse error during conversion from string: {error}") from None
    return _tagged("URL", v=_b2s(url.string()))


def _url_of(value: Any) -> _URL:
    return _go_parse(str(_untag(value, "URL").get("v", "")))


def _split_host_port(host_port: bytes) -> tuple[bytes, bytes]:
    host, port = host_port, b""
    colon = host.rfind(b":")
    if colon != -1 and _valid_optional_port(host[colon:]):
        host, port = host[:colon], host[colon + 1 :]
    if host.startswith(b"[") and host.endswith(b"]"):
        host = host[1:-1]
    return host, port


def _impl_url_query(value: Any) -> dict[str, list[str]]:
    result: dict[str, list[str]] = {}
    query = _url_of(value).raw_query
    for part in query.split(b"&") if query else []:
        if b";" in part or not part:
            continue
        key, _, val = part.partition(b"=")
        try:
            k = _unescape(key, _ENC_QUERY)
            v = _unescape(val, _ENC_QUERY)
        except _UrlError:
            continue
        result.setdefault(_b2s(k), []).append(_b2s(v))
    return result


def _impl_is_url(text: str) -> bool:
    try:
        _go_parse_request_uri(text)
    except LibraryError:
        return False
    return True


_URL_GETTERS: Final[dict[str, Callable[[_URL], bytes]]] = {
    "getScheme": lambda u: u.scheme,
    "getHost": lambda u: u.host,
    "getHostname": lambda u: _split_host_port(u.host)[0],
    "getPort": lambda u: _split_host_port(u.host)[1],
    "getEscapedPath": lambda u: u.escaped_path(),
}


def _url_getter(name: str) -> Callable[[Any], str]:
    getter = _URL_GETTERS[name]

    def get(value: Any) -> str:
        return _b2s(getter(_url_of(value)))

    return get


# --- net/netip -------------------------------------------------------------------------------


def _addr_error(text: str, msg: str, at: str = "") -> LibraryError:
    suffix = f" (at {go_quote(at)})" if at else ""
    return LibraryError(f"ParseAddr({go_quote(text)}): {msg}{suffix}")


def _parse_ipv4_fields(text: str, start: int, end: int) -> list[int]:
    s = text[start:end]
    fields: list[int] = []
    value = 0
    digits = 0
    for i, ch in enumerate(s):
        if "0" <= ch <= "9":
            if digits == 1 and value == 0:
                raise _addr_error(text, "IPv4 field has octet with leading zero")
            value = value * 10 + ord(ch) - 48
            digits += 1
            if value > 255:
                raise _addr_error(text, "IPv4 field has value >255")
        elif ch == ".":
            if i == 0 or i == len(s) - 1 or s[i - 1] == ".":
                raise _addr_error(text, "IPv4 field must have at least one digit", s[i:])
            if len(fields) == 3:
                raise _addr_error(text, "IPv4 address too long")
            fields.append(value)
            value = 0
            digits = 0
        else:
            raise _addr_error(text, "unexpected character", s[i:])
    if len(fields) < 3:
        raise _addr_error(text, "IPv4 address too short")
    fields.append(value)
    return fields


def _parse_ipv6(text: str) -> tuple[int, str]:
    s = text
    zone = ""
    if "%" in s:
        s, _, zone = s.partition("%")
        if not zone:
            raise _addr_error(text, "zone must be a non-empty string")
    ip = [0] * 16
    ellipsis = -1
    if len(s) >= 2 and s[0] == ":" and s[1] == ":":
        ellipsis = 0
        s = s[2:]
        if not s:
            return 0, zone
    i = 0
    while i < 16:
        off = 0
        acc = 0
        while off < len(s):
            ch = s[off]
            if ch in "0123456789abcdefABCDEF":
                acc = (acc << 4) + int(ch, 16)
            else:
                break
            if off > 3:
                raise _addr_error(text, "each group must have 4 or less digits", s)
            if acc > 0xFFFF:
                raise _addr_error(text, "IPv6 field has value >=2^16", s)
            off += 1
        if off == 0:
            raise _addr_error(text, "each colon-separated field must have at least one digit", s)
        if off < len(s) and s[off] == ".":
            if ellipsis < 0 and i != 12:
                raise _addr_error(
                    text,
                    "embedded IPv4 address must replace the final 2 fields of the address",
                    s,
                )
            if i + 4 > 16:
                raise _addr_error(
                    text,
                    "too many hex fields to fit an embedded IPv4 at the end of the address",
                    s,
                )
            end = len(text) - (len(zone) + 1 if zone else 0)
            ip[i : i + 4] = _parse_ipv4_fields(text, end - len(s), end)
            s = ""
            i += 4
            break
        ip[i] = acc >> 8
        ip[i + 1] = acc & 0xFF
        i += 2
        s = s[off:]
        if not s:
            break
        if s[0] != ":":
            raise _addr_error(text, "unexpected character, want colon", s)
        if len(s) == 1:
            raise _addr_error(text, "colon must be followed by more characters", s)
        s = s[1:]
        if s[0] == ":":
            if ellipsis >= 0:
                raise _addr_error(text, "multiple :: in address", s)
            ellipsis = i
            s = s[1:]
            if not s:
                break
    if s:
        raise _addr_error(text, "trailing garbage after address", s)
    if i < 16:
        if ellipsis < 0:
            raise _addr_error(text, "address string too short")
        n = 16 - i
        ip = ip[:ellipsis] + [0] * n + ip[ellipsis:i]
    elif ellipsis >= 0:
        raise _addr_error(text, "the :: must expand to at least one field of zeros")
    return int.from_bytes(bytes(ip), "big"), zone


def _parse_addr(text: str) -> tuple[int, int, str]:
    """``netip.ParseAddr``: (family, address as an int, zone)."""
    for ch in text:
        if ch == ".":
            fields = _parse_ipv4_fields(text, 0, len(text))
            return 4, int.from_bytes(bytes(fields), "big"), ""
        if ch == ":":
            value, zone = _parse_ipv6(text)
            return 6, value, zone
        if ch == "%":
            raise _addr_error(text, "missing IPv6 address")
    raise _addr_error(text, "unable to parse IP")


def _is_4in6(family: int, value: int) -> bool:
    return family == 6 and value >> 32 == 0xFFFF


def _addr_string(family: int, value: int) -> str:
    if family == 4:
        return str(ipaddress.IPv4Address(value))
    if _is_4in6(family, value):
        return "::ffff:" + str(ipaddress.IPv4Address(value & 0xFFFFFFFF))
    return ipaddress.IPv6Address(value).compressed


def _parse_ip(text: str) -> tuple[int, int]:
    try:
        family, value, zone = _parse_addr(text)
    except LibraryError as error:
        raise LibraryError(
            f"IP Address {go_quote(text)} parse error during conversion from string: {error}"
        ) from None
    if zone:
        raise LibraryError(f"IP address {go_quote(text)} with zone value is not allowed")
    if _is_4in6(family, value):
        raise LibraryError(f"IPv4-mapped IPv6 address {go_quote(text)} is not allowed")
    return family, value


def _parse_prefix(text: str) -> tuple[int, int, int]:
    """``netip.ParsePrefix`` plus the library's checks: (family, address, bits)."""

    def fail(msg: str) -> LibraryError:
        return LibraryError(
            "network address parse error during conversion from string: "
            f"netip.ParsePrefix({go_quote(text)}): {msg}"
        )

    slash = text.rfind("/")
    if slash < 0:
        raise fail("no '/'")
    try:
        family, value, zone = _parse_addr(text[:slash])
    except LibraryError as error:
        raise fail(str(error)) from None
    if family == 6 and zone:
        raise fail("IPv6 zones cannot be present in a prefix")
    bits_text = text[slash + 1 :]
    if len(bits_text) > 1 and not ("1" <= bits_text[0] <= "9"):
        raise fail(f"bad bits after slash: {go_quote(bits_text)}")
    if not re.fullmatch(r"[+-]?[0-9]+", bits_text):
        raise fail(f"bad bits after slash: {go_quote(bits_text)}")
    bits = int(bits_text)
    if bits < 0 or bits > (32 if family == 4 else 128):
        raise fail("prefix length out of range")
    if _is_4in6(family, value):
        raise LibraryError(f"IPv4-mapped IPv6 address {go_quote(text)} is not allowed")
    return family, value, bits


def _cidr_of(text: Any) -> tuple[int, int, int]:
    if not isinstance(text, str):
        raise LibraryError("no such overload")
    try:
        return _parse_prefix(text)
    except LibraryError as error:
        raise LibraryError(
            f"network address parse error during conversion from string: {error}"
        ) from None


def _ip_of(text: Any) -> tuple[int, int]:
    if not isinstance(text, str):
        raise LibraryError("no such overload")
    return _parse_ip(text)


def _prefix_string(family: int, value: int, bits: int) -> str:
    return f"{_addr_string(family, value)}/{bits}"


def _mask(family: int, value: int, bits: int) -> int:
    width = 32 if family == 4 else 128
    return value >> (width - bits) << (width - bits) if bits < width else value


def _impl_ip(text: str) -> str:
    family, value = _parse_ip(text)
    return _addr_string(family, value)


def _impl_is_ip(text: str) -> bool:
    try:
        _parse_ip(text)
    except LibraryError:
        return False
    return True


def _impl_ip_is_canonical(text: str) -> bool:
    family, value = _parse_ip(text)
    return _addr_string(family, value) == text


def _impl_family(text: Any) -> int:
    return _ip_of(text)[0]


def _ip_test(name: str) -> Callable[[Any], bool]:
    def test(text: Any) -> bool:
        family, value = _ip_of(text)
        if family == 4:
            top = value >> 24
            return {
                "isUnspecified": value == 0,
                "isLoopback": top == 127,
                "isLinkLocalMulticast": value >> 8 == 0xE00000,
                "isLinkLocalUnicast": value >> 16 == 0xA9FE,
                "isGlobalUnicast": value not in (0, 0xFFFFFFFF)
                and top != 127
                and top >> 4 != 0xE
                and value >> 16 != 0xA9FE,
            }[name]
        first = value >> 120
        return {
            "isUnspecified": value == 0,
            "isLoopback": value == 1,
            "isLinkLocalMulticast": (value >> 112) & 0xFF0F == 0xFF02,
            "isLinkLocalUnicast": (value >> 112) & 0xFFC0 == 0xFE80,
            "isGlobalUnicast": value not in (0, 1)
            and first != 0xFF
            and (value >> 112) & 0xFFC0 != 0xFE80,
        }[name]

    return test


def _impl_cidr(text: str) -> str:
    return _prefix_string(*_cidr_of(text))


def _impl_is_cidr(text: str) -> bool:
    try:
        _parse_prefix(text)
    except LibraryError:
        return False
    return True


def _impl_cidr_ip(text: Any) -> str:
    family, value, _ = _cidr_of(text)
    return _addr_string(family, value)


def _impl_prefix_length(text: Any) -> int:
    return _cidr_of(text)[2]


def _impl_masked(text: Any) -> str:
    family, value, bits = _cidr_of(text)
    return _prefix_string(family, _mask(family, value, bits), bits)


def _impl_contains_ip(cidr: Any, ip: Any) -> bool:
    family, value, bits = _cidr_of(cidr)
    ip_family, ip_value = _ip_of(ip)
    if family != ip_family:
        return False
    return _mask(family, value, bits) == _mask(family, ip_value, bits)


def _impl_contains_cidr(cidr: Any, other: Any) -> bool:
    family, value, bits = _cidr_of(cidr)
    other_family, other_value, other_bits = _cidr_of(other)
    if family != other_family:
        return False
    common = min(bits, other_bits)
    overlaps = _mask(family, value, common) == _mask(family, other_value, common)
    return overlaps and bits <= other_bits


# --- regex: find / findAll ------------------------------------------------------------------

_POSIX: Final = {
    "alnum": "0-9A-Za-z",
    "alpha": "A-Za-z",
    "ascii": "\\x00-\\x7f",
    "blank": "\\t ",
    "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9",
    "graph": "!-~",
    "lower": "a-z",
    "print": " -~",
    "punct": "!-/:-@[-`{-~",
    "space": "\\t\\n\\v\\f\\r ",
    "upper": "A-Z",
    "word": "0-9A-Za-z_",
    "xdigit": "0-9A-Fa-f",
}


def _regex_error(detail: str) -> LibraryError:
    return LibraryError(f"Illegal regex: error parsing regexp: {detail}")


def _translate_regex(pattern: str) -> str:
    """RE2 syntax -> Python ``re`` syntax, or raise as Go's regexp.Compile would."""
    out: list[str] = []
    i = 0
    in_class = False
    n = len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "\\":
            if i + 1 >= n:
                raise _regex_error("trailing backslash at end of expression: ``")
            nxt = pattern[i + 1]
            if nxt.isdigit() and nxt != "0":
                raise _regex_error(f"invalid escape sequence: `\\{nxt}`")
            if nxt in "pP":
                raise LibraryError(
                    "Illegal regex: Unicode classes (\\p) are not supported by trainc"
                )
            if nxt == "z" and not in_class:
                out.append(r"\Z")
            elif nxt == "Q":
                end = pattern.find("\\E", i + 2)
                literal = pattern[i + 2 :] if end < 0 else pattern[i + 2 : end]
                out.append(re.escape(literal))
                i = n if end < 0 else end + 2
                continue
            else:
                out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            if ch == "[" and pattern.startswith("[:", i):
                end = pattern.find(":]", i + 2)
                if end > 0:
                    name = pattern[i + 2 : end]
                    negated = name.startswith("^")
                    ranges = _POSIX.get(name.lstrip("^"))
                    if ranges is None:
                        raise _regex_error(
                            f"invalid character class range: `{pattern[i : end + 2]}`"
                        )
                    if negated:
                        raise LibraryError(
                            "Illegal regex: negated POSIX classes are not supported by trainc"
                        )
                    out.append(ranges)
                    i = end + 2
                    continue
            if ch == "[":
                out.append("\\[")
                i += 1
                continue
            if ch == "]":
                in_class = False
            out.append(ch)
            i += 1
            continue
        if ch == "[":
            in_class = True
            out.append(ch)
            i += 1
            if i < n and pattern[i] == "^":
                out.append("^")
                i += 1
            if i < n and pattern[i] == "]":
                out.append("\\]")
                i += 1
            continue
        if ch == "(" and pattern.startswith("(?", i):
            rest = pattern[i + 2 :]
            if rest.startswith(("=", "!", "<=", "<!")):
                syntax = "(?" + rest[: 2 if rest[0] == "<" else 1]
                raise _regex_error(f"invalid or unsupported Perl syntax: `{syntax}`")
            if rest.startswith("<"):
                out.append("(?P<")
                i += 3
                continue
            flags = re.match(r"([imsU]*)(?:-([imsU]*))?([:)])", rest)
            if flags and ("U" in (flags.group(1) or "") + (flags.group(2) or "")):
                raise LibraryError("Illegal regex: the U flag is not supported by trainc")
            if flags and flags.group(3) == ")" and out:
                raise LibraryError(
                    "Illegal regex: flags after the start of the pattern are not supported by trainc"
                )
        if ch == "$":
            out.append(r"(?!\n)\Z" if "(?m" not in pattern else "$")
            i += 1
            continue
        out.append(ch)
        i += 1
    return "".join(out)


_REGEX_CACHE: dict[str, re.Pattern[str]] = {}


def _compile_regex(pattern: str) -> re.Pattern[str]:
    compiled = _REGEX_CACHE.get(pattern)
    if compiled is None:
        translated = _translate_regex(pattern)
        try:
            compiled = re.compile(translated, re.ASCII)
        except re.error as error:
            raise _regex_error(str(error)) from None
        if len(_REGEX_CACHE) < 4096:
            _REGEX_CACHE[pattern] = compiled
    return compiled


def _impl_find(text: str, pattern: str) -> str:
    match = _compile_regex(pattern).search(text)
    return match.group() if match else ""


def _impl_find_all(text: str, pattern: str, limit: int = -1) -> list[str]:
    compiled = _compile_regex(pattern)
    if limit == 0:
        return []
    out: list[str] = []
    position = 0
    previous_end = -1
    while position <= len(text):
        match = compiled.search(text, position)
        if match is None:
            break
        accept = True
        if match.end() == match.start():
            if match.start() == previous_end:
                accept = False
            position = match.end() + 1
        else:
            position = match.end()
        previous_end = match.end()
        if accept:
            out.append(match.group())
            if 0 < limit <= len(out):
                break
    return out


# --- lists ----------------------------------------------------------------------------------


def _cel_equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, bytes | bytearray) and isinstance(b, bytes | bytearray):
        return bytes(a) == bytes(b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_cel_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        if len(a) != len(b):
            return False
        for key, value in a.items():
            match = next((k for k in b if _cel_equal(k, key)), _MISSING)
            if match is _MISSING or not _cel_equal(value, b[match]):
                return False
        return True
    if type(a) is not type(b):
        return False
    return bool(a == b)


_MISSING: Any = object()


def _impl_index_of(container: Any, item: Any, offset: Any = None) -> int:
    if isinstance(container, str):
        if not isinstance(item, str):
            raise LibraryError("no such overload")
        return _string_index_of(container, item, 0 if offset is None else int(offset))
    if isinstance(container, list) and offset is None:
        for index, element in enumerate(container):
            if _cel_equal(element, item):
                return index
        return -1
    raise LibraryError("no such overload")


def _impl_last_index_of(container: Any, item: Any, offset: Any = None) -> int:
    if isinstance(container, str):
        if not isinstance(item, str):
            raise LibraryError("no such overload")
        if offset is None:
            if item == "":
                return len(container)
            if len(container.encode()) < len(item.encode()):
                return -1
            return _string_last_index_of(container, item, len(container) - 1)
        return _string_last_index_of(container, item, int(offset))
    if isinstance(container, list) and offset is None:
        for index in range(len(container) - 1, -1, -1):
            if _cel_equal(container[index], item):
                return index
        return -1
    raise LibraryError("no such overload")


def _string_index_of(text: str, sub: str, offset: int) -> int:
    if sub == "":
        return offset
    if offset < 0:
        raise LibraryError(f"index out of range: {offset}")
    if offset >= len(text):
        return -1
    return text.find(sub, offset)


def _string_last_index_of(text: str, sub: str, offset: int) -> int:
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


def _comparable_key(value: Any) -> tuple[int, Any]:
    if isinstance(value, bool):
        return (0, value)
    if isinstance(value, int | float):
        return (1, value)
    if isinstance(value, str):
        return (2, value)
    if isinstance(value, bytes | bytearray):
        return (3, bytes(value))
    if isinstance(value, _dt.timedelta):
        return (4, value)
    if isinstance(value, _dt.datetime):
        return (5, value)
    raise LibraryError("no such overload")


def _cel_compare(a: Any, b: Any) -> int:
    ka, kb = _comparable_key(a), _comparable_key(b)
    if ka[0] != kb[0]:
        raise LibraryError("no such overload")
    if ka[1] == kb[1]:
        return 0
    return -1 if ka[1] < kb[1] else 1


def _impl_is_sorted(values: list[Any]) -> bool:
    for previous, current in itertools.pairwise(values):
        if _cel_compare(previous, current) == 1:
            return False
    if len(values) == 1:
        _comparable_key(values[0])
    return True


def _impl_sum(values: list[Any]) -> Any:
    if not values:
        return 0
    total = values[0]
    _sum_key(total)
    for value in values[1:]:
        if _sum_key(value) != _sum_key(total):
            raise LibraryError("no such overload")
        total = total + value
        if isinstance(total, int) and not _INT64_MIN <= total <= _INT64_MAX:
            raise LibraryError("integer overflow")
    return total


def _sum_key(value: Any) -> int:
    if isinstance(value, bool):
        raise LibraryError("no such overload")
    if isinstance(value, int):
        return 0
    if isinstance(value, float):
        return 1
    if isinstance(value, _dt.timedelta):
        return 2
    raise LibraryError("no such overload")


def _extreme(name: str, prefer: int) -> Callable[[list[Any]], Any]:
    def pick(values: list[Any]) -> Any:
        if not values:
            raise LibraryError(f"{name} called on empty list")
        result = values[0]
        _comparable_key(result)
        for value in values[1:]:
            if _cel_compare(result, value) == prefer:
                result = value
        return result

    return pick


# --- format ---------------------------------------------------------------------------------

_DNS1123_LABEL: Final = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN: Final = _DNS1123_LABEL + "(\\." + _DNS1123_LABEL + ")*"
_DNS1035_LABEL: Final = "[a-z]([-a-z0-9]*[a-z0-9])?"
_LABEL_KEY: Final = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE: Final = "(" + _LABEL_KEY + ")?"
_UUID_RE: Final = re.compile(
    r"^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}\Z", re.I
)
_BASE64_RE: Final = re.compile(
    r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})\Z"
)
_TIME_RE: Final = re.compile(
    r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))\Z"
)


def _full(pattern: str, text: str) -> bool:
    return re.fullmatch(pattern, text) is not None and "\n" not in text


def _regex_message(msg: str, fmt: str, *examples: str) -> str:
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def _dns1123_label(value: str, unit: str = "characters") -> list[str]:
    errors = []
    if len(value.encode()) > 63:
        errors.append(f"must be no more than 63 {unit}")
    if not _full(_DNS1123_LABEL, value):
        if _full(_DNS1123_SUBDOMAIN, value):
            errors.append("must not contain dots")
        else:
            errors.append(
                _regex_message(
                    "a lowercase RFC 1123 label must consist of lower case alphanumeric"
                    " characters or '-', and must start and end with an alphanumeric character",
                    _DNS1123_LABEL,
                    "my-name",
                    "123-abc",
                )
            )
    return errors


def _dns1123_subdomain(value: str, unit: str = "characters") -> list[str]:
    errors = []
    if len(value.encode()) > 253:
        errors.append(f"must be no more than 253 {unit}")
    if not _full(_DNS1123_SUBDOMAIN, value):
        errors.append(
            _regex_message(
                "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric"
                " characters, '-' or '.', and must start and end with an alphanumeric character",
                _DNS1123_SUBDOMAIN,
                "example.com",
            )
        )
    return errors


def _dns1035_label(value: str) -> list[str]:
    errors = []
    if len(value.encode()) > 63:
        errors.append("must be no more than 63 characters")
    if not _full(_DNS1035_LABEL, value):
        errors.append(
            _regex_message(
                "a DNS-1035 label must consist of lower case alphanumeric characters or '-',"
                " start with an alphabetic character, and end with an alphanumeric character",
                _DNS1035_LABEL,
                "my-name",
                "abc-123",
            )
        )
    return errors


def _mask_trailing_dash(name: str) -> str:
    if len(name) > 1 and name.endswith("-"):
        return name[:-2] + "a"
    return name


_LABEL_KEY_MSG: Final = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end"
    " with an alphanumeric character"
)


def _qualified_name(value: str) -> list[str]:
    errors: list[str] = []
    parts = value.split("/")
    if len(parts) > 2:
        return [
            "a valid label key "
            + _regex_message(_LABEL_KEY_MSG, _LABEL_KEY, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    name = parts[-1]
    if len(parts) == 2:
        if not parts[0]:
            errors.append("prefix part must be non-empty")
        else:
            errors += ["prefix part " + m for m in _dns1123_subdomain(parts[0], "bytes")]
    if not name:
        errors.append("name part must be non-empty")
    elif len(name.encode()) > 63:
        errors.append("name part must be no more than 63 bytes")
    if not _full(_LABEL_KEY, name):
        errors.append(
            "name part "
            + _regex_message(_LABEL_KEY_MSG, _LABEL_KEY, "MyName", "my.name", "123-abc")
        )
    return errors


def _label_value(value: str) -> list[str]:
    errors = []
    if len(value.encode()) > 63:
        errors.append("must be no more than 63 bytes")
    if not _full(_LABEL_VALUE, value):
        errors.append(
            _regex_message(
                "a valid label must be an empty string or consist of alphanumeric characters,"
                " '-', '_' or '.', and must start and end with an alphanumeric character",
                _LABEL_VALUE,
                "MyValue",
                "my_value",
                "12345",
            )
        )
    return errors


def _is_date(text: str) -> bool:
    if not re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", text):
        return False
    try:
        _dt.date(int(text[:4]), int(text[5:7]), int(text[8:10]))
    except ValueError:
        return False
    return True


def _is_datetime(text: str) -> bool:
    if len(text) < 4:
        return False
    parts = text.lower().split("t")
    if len(parts) < 2 or not _is_date(parts[0]):
        return False
    match = _TIME_RE.search(parts[1])
    if match is None:
        return False
    return match.group(1) <= "23" and match.group(2) <= "59" and match.group(3) <= "59"


def _uri(value: str) -> list[str]:
    try:
        _go_parse_request_uri(value)
    except LibraryError as error:
        return [str(error)]
    return []


def _is_base64(value: str) -> bool:
    if not _BASE64_RE.match(value):
        return False
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


_FORMATS: Final[dict[str, Callable[[str], list[str]]]] = {
    "dns1123Label": lambda s: _dns1123_label(s),
    "dns1123Subdomain": lambda s: _dns1123_subdomain(s),
    "dns1035Label": _dns1035_label,
    "qualifiedName": _qualified_name,
    "dns1123LabelPrefix": lambda s: _dns1123_label(_mask_trailing_dash(s)),
    "dns1123SubdomainPrefix": lambda s: _dns1123_subdomain(_mask_trailing_dash(s)),
    "dns1035LabelPrefix": lambda s: _dns1035_label(_mask_trailing_dash(s)),
    "labelValue": _label_value,
    "uri": _uri,
    "uuid": lambda s: [] if _UUID_RE.match(s) else ["does not match the UUID format"],
    "byte": lambda s: [] if _is_base64(s) else ["invalid base64"],
    "date": lambda s: [] if _is_date(s) else ["invalid date"],
    "datetime": lambda s: [] if _is_datetime(s) else ["invalid datetime"],
}


def _impl_format(name: str) -> Callable[[], dict[str, Any]]:
    def make() -> dict[str, Any]:
        return _tagged("NamedFormat", v=name)

    return make


def _impl_format_named(name: str) -> list[dict[str, Any]]:
    return [_tagged("NamedFormat", v=name)] if name in _FORMATS else []


def _impl_validate(value: Any, text: str) -> list[list[str]]:
    name = str(_untag(value, "NamedFormat").get("v", ""))
    errors = _FORMATS[name](text)
    return [errors] if errors else []


# ==========================================================================================
# Run environment (Python implementations over plain values)
# ==========================================================================================


def _guard(function: Callable[..., Any]) -> Callable[..., Any]:
    """Turn a Python failure into a CEL error value with the API server's text."""

    def call(*args: Any) -> Any:
        try:
            return function(*args)
        except LibraryError:
            raise
        except (ArithmeticError, ValueError, TypeError, KeyError, IndexError) as error:
            raise LibraryError(str(error) or type(error).__name__) from None

    return call


def _run_functions(cel: Any) -> list[Any]:
    T = cel.Type
    S, INT, D, B, DYN = T.STRING, T.INT, T.DOUBLE, T.BOOL, T.DYN
    M = T.Map(T.DYN, T.DYN)
    L = T.List(T.DYN)
    element_kinds = {
        "int": T.INT,
        "uint": T.UINT,
        "double": T.DOUBLE,
        "bool": T.BOOL,
        "string": T.STRING,
        "bytes": T.BYTES,
        "null": T.NULL,
        "timestamp": T.TIMESTAMP,
        "duration": T.DURATION,
        "map": M,
        "list": L,
    }
    decls: dict[str, list[Any]] = {}

    def add(
        name: str,
        oid: str,
        params: Sequence[Any],
        ret: Any,
        impl: Callable[..., Any],
        member: bool = False,
    ) -> None:
        decls.setdefault(name, []).append(
            cel.Overload(
                oid, return_type=ret, parameters=list(params), is_member=member, impl=_guard(impl)
            )
        )

    # quantity
    add("quantity", "k8s_string_to_quantity", [S], M, _impl_quantity)
    add("isQuantity", "k8s_is_quantity", [S], B, _impl_is_quantity)
    add("sign", "k8s_quantity_sign", [M], INT, _impl_sign)
    add("asApproximateFloat", "k8s_quantity_float", [M], D, _impl_approximate_float, True)
    add("asInteger", "k8s_quantity_int", [M], INT, _impl_as_integer, True)
    add("isInteger", "k8s_quantity_is_int", [M], B, _impl_is_integer, True)
    add("add", "k8s_quantity_add", [M, M], M, _impl_add, True)
    add("add", "k8s_quantity_add_int", [M, INT], M, _impl_add, True)
    add("sub", "k8s_quantity_sub", [M, M], M, _impl_sub, True)
    add("sub", "k8s_quantity_sub_int", [M, INT], M, _impl_sub, True)
    # quantity and semver
    add("compareTo", "k8s_compare_to", [M, M], INT, _impl_compare_to, True)
    add("isLessThan", "k8s_is_less_than", [M, M], B, _impl_is_less_than, True)
    add("isGreaterThan", "k8s_is_greater_than", [M, M], B, _impl_is_greater_than, True)
    # semver
    add("semver", "k8s_string_to_semver", [S], M, _impl_semver)
    add("semver", "k8s_string_bool_to_semver", [S, B], M, _impl_semver)
    add("isSemver", "k8s_is_semver", [S], B, _impl_is_semver)
    add("isSemver", "k8s_is_semver_bool", [S, B], B, _impl_is_semver)
    for index, part in enumerate(("major", "minor", "patch")):
        add(part, f"k8s_semver_{part}", [M], INT, _semver_part(index), True)
    # url
    add("url", "k8s_string_to_url", [S], M, _impl_url)
    for getter in _URL_GETTERS:
        add(getter, f"k8s_url_{getter}", [M], S, _url_getter(getter), True)
    add("getQuery", "k8s_url_get_query", [M], T.Map(S, T.List(S)), _impl_url_query, True)
    add("isURL", "k8s_is_url", [S], B, _impl_is_url)
    # regex
    add("find", "k8s_find", [S, S], S, _impl_find, True)
    add("findAll", "k8s_find_all", [S, S], T.List(S), _impl_find_all, True)
    add("findAll", "k8s_find_all_int", [S, S, INT], T.List(S), _impl_find_all, True)
    # lists
    add("isSorted", "k8s_is_sorted", [L], B, _impl_is_sorted, True)
    add("sum", "k8s_sum", [L], DYN, _impl_sum, True)
    add("min", "k8s_min", [L], DYN, _extreme("min", 1), True)
    add("max", "k8s_max", [L], DYN, _extreme("max", -1), True)
    for name, impl in (("k8s_indexOf", _impl_index_of), ("k8s_lastIndexOf", _impl_last_index_of)):
        add(name, f"{name}_string", [S, S], INT, impl, True)
        add(name, f"{name}_string_int", [S, S, INT], INT, impl, True)
        for kind, kind_type in element_kinds.items():
            add(name, f"{name}_list_{kind}", [L, kind_type], INT, impl, True)
    # ip and cidr (plain strings)
    add("ip", "k8s_string_to_ip", [S], S, _impl_ip)
    add("ip", "k8s_cidr_ip", [S], S, _impl_cidr_ip, True)
    add("isIP", "k8s_is_ip", [S], B, _impl_is_ip)
    add("ip.isCanonical", "k8s_ip_is_canonical", [S], B, _impl_ip_is_canonical)
    add("family", "k8s_ip_family", [S], INT, _impl_family, True)
    for name in (
        "isUnspecified",
        "isLoopback",
        "isLinkLocalMulticast",
        "isLinkLocalUnicast",
        "isGlobalUnicast",
    ):
        add(name, f"k8s_ip_{name}", [S], B, _ip_test(name), True)
    add("cidr", "k8s_string_to_cidr", [S], S, _impl_cidr)
    add("isCIDR", "k8s_is_cidr", [S], B, _impl_is_cidr)
    add("containsIP", "k8s_cidr_contains_ip", [S, S], B, _impl_contains_ip, True)
    add("containsCIDR", "k8s_cidr_contains_cidr", [S, S], B, _impl_contains_cidr, True)
    add("prefixLength", "k8s_cidr_prefix_length", [S], INT, _impl_prefix_length, True)
    add("masked", "k8s_cidr_masked", [S], S, _impl_masked, True)
    # format
    for name in _FORMAT_NAMES:
        add(f"format.{name}", f"k8s_format_{name}", [], M, _impl_format(name))
    add("k8s_format_named", "k8s_format_named", [S], L, _impl_format_named)
    add("k8s_validate", "k8s_format_validate", [M, S], T.List(T.List(S)), _impl_validate, True)
    return [cel.FunctionDecl(name, overloads) for name, overloads in decls.items()]


# ==========================================================================================
# The engine
# ==========================================================================================

_CROSS_NUMERIC: Final = re.compile(
    r"found no matching overload for '_(<|<=|>|>=)_' applied to"
    r" '\((int|uint|double), (int|uint|double)\)'"
)
_STATUS_PREFIX: Final = re.compile(r"^[A-Z_]+: ")
_STATUS_SUFFIX: Final = re.compile(r" \[[A-Z_]+\]$")
_BUDGET: Final = "Iteration budget exceeded"
_UNBOUND: Final = re.compile(r'No value with name "([^"]+)" found in Activation')


def _strip_status(text: str) -> str:
    text = _STATUS_SUFFIX.sub("", text.strip())
    return _STATUS_PREFIX.sub("", text, count=1)


_SIMPLE_TYPES: Final = {
    "BOOL": "bool",
    "INT": "int",
    "UINT": "uint",
    "DOUBLE": "double",
    "STRING": "string",
    "BYTES": "bytes",
    "DYN": "dyn",
    "NULL": "null_type",
    "NULL_TYPE": "null_type",
    "TIMESTAMP": "google.protobuf.Timestamp",
    "DURATION": "google.protobuf.Duration",
    "TYPE": "type",
    "ERROR": "*error*",
}


def cel_type_name(engine_name: str) -> str:
    """The engine's name of a type in cel-go's spelling: ``LIST<DYN>`` -> ``list(dyn)``."""
    text = engine_name.strip()
    head, sep, rest = text.partition("<")
    if not sep:
        return _SIMPLE_TYPES.get(text, text)
    inner = rest[:-1] if rest.endswith(">") else rest
    args: list[str] = []
    depth = 0
    current = ""
    for ch in inner:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        if ch == "," and depth == 0:
            args.append(current.strip())
            current = ""
            continue
        current += ch
    if current.strip():
        args.append(current.strip())
    name = _SIMPLE_TYPES.get(head, head).lower() if head.isupper() else head
    return f"{name}({', '.join(cel_type_name(a) for a in args)})"


@dataclass
class K8sProgram:
    """One expression: type-checked as the API server does, run with the Python library."""

    source: str
    variables: frozenset[str]
    result_type: str  # cel-go's spelling: "bool", "string", "list(dyn)", ...
    checked: bool  # False when only the cross-type numeric fallback compiled it
    expression: Any
    error_type: Any

    def evaluate(self, bindings: Mapping[str, Any]) -> Any:
        try:
            result = self.expression.eval(data=bindings)
        except RuntimeError as error:
            text = str(error)
            if _BUDGET in text:
                raise CelBudgetExceeded(_strip_status(text)) from None
            raise CelEvalError(go_error_text(text)) from None
        unusable = CelEvalError(
            "an optional value cannot leave the expression it is made in"
            " (trainc engine limitation: wrap it in .orValue() or .hasValue())"
        )
        if result.type() == self.error_type:
            try:
                text = str(result.value())
            except TypeError:  # the engine reports an optional as an unreadable error
                raise unusable from None
            raise CelEvalError(go_error_text(text))
        try:
            return result.plain_value()
        except TypeError:
            raise unusable from None


class K8sEngine:
    """An :class:`~compiler.apiserver.cel.engine.Engine` with the Kubernetes libraries."""

    name = "cel-expr-python+kubernetes"

    def __init__(self) -> None:
        cel = import_cel()
        self._cel = cel
        self._types = {
            "dyn": cel.Type.DYN,
            TIMESTAMP: cel.Type.TIMESTAMP,
            DURATION: cel.Type.DURATION,
        }
        self._check_config = cel.NewEnvConfigFromYaml(_check_config_yaml())
        self._run_config = cel.NewEnvConfigFromYaml(_RUN_CONFIG_YAML)
        self._run_functions = _run_functions(cel)
        self._envs: dict[tuple[bool, tuple[tuple[str, VarType], ...]], Any] = {}
        self._lock = threading.Lock()

    def _env(self, run: bool, variables: Mapping[str, VarType]) -> Any:
        key = (run, tuple(sorted(variables.items())))
        with self._lock:
            env = self._envs.get(key)
            if env is None:
                declared = {name: self._types[kind] for name, kind in key[1]}
                if run:
                    env = self._cel.NewEnv(
                        config=self._run_config,
                        variables=declared,
                        functions=self._run_functions,
                    )
                else:
                    env = self._cel.NewEnv(config=self._check_config, variables=declared)
                self._envs[key] = env
            return env

    def _compile_in(self, env: Any, source: str) -> tuple[Any, bool]:
        try:
            return env.compile(source), True
        except RuntimeError as error:
            text = _strip_status(str(error))
        if _CROSS_NUMERIC.search(text):
            try:
                return env.compile(source, disable_check=True), False
            except RuntimeError:
                pass
        raise CelCompileError(text)

    def compile(self, source: str, variables: Mapping[str, VarType]) -> Program:
        renamed, names = rewrite_variables(source)
        try:
            checked, is_checked = self._compile_in(self._env(False, variables), renamed)
        except CelCompileError as error:
            raise CelCompileError(_reword_compile(str(error), names, variables)) from None
        run_source = _rewrite_run(renamed)
        try:
            expression, _ = self._compile_in(self._env(True, variables), run_source)
        except CelCompileError:
            try:
                expression = self._env(True, variables).compile(run_source, disable_check=True)
            except RuntimeError as error:
                raise CelCompileError(_strip_status(str(error))) from None
        used = _referenced(renamed, variables)
        result_type = cel_type_name(checked.return_type().name()) if is_checked else "dyn"
        return K8sProgram(source, used, result_type, is_checked, expression, self._cel.Type.ERROR)


def _referenced(source: str, variables: Mapping[str, VarType]) -> frozenset[str]:
    sig = _significant(_tokens(source))
    used = set()
    for i, tok in enumerate(sig):
        if tok.kind == "id" and tok.text in variables and (i == 0 or sig[i - 1].text != "."):
            used.add(tok.text)
    return frozenset(used)


def _reword_compile(text: str, names: frozenset[str], variables: Mapping[str, VarType]) -> str:
    for name in names:
        declared = f"{VARIABLE_PREFIX}{name}"
        if declared not in variables:
            text = text.replace(
                f"undeclared reference to '{declared}' (in container '')",
                f"undefined field '{name}'",
            ).replace(f"undeclared reference to '{declared}'", f"undefined field '{name}'")
        text = text.replace(declared, f"variables.{name}")
    return text


def references(source: str, name: str) -> bool:
    """Whether ``source`` names the root variable ``name`` (not a field called so)."""
    return name in _referenced(source, {name: "dyn"})


def unbound_variable(error_text: str) -> str | None:
    """The declared variable an evaluation error says had no value, if that is the error."""
    match = _UNBOUND.search(error_text)
    return match.group(1) if match else None


_ENGINE: K8sEngine | None = None
_ENGINE_LOCK = threading.Lock()


def k8s_engine() -> K8sEngine:
    """The process-wide engine with the Kubernetes libraries (created on first use)."""
    global _ENGINE
    with _ENGINE_LOCK:
        if _ENGINE is None:
            _ENGINE = K8sEngine()
        return _ENGINE


def iter_library_functions() -> Iterator[str]:
    """The library function names the type-checking environment declares (for docs/tests)."""
    for function in _check_functions():
        yield str(function["name"])
