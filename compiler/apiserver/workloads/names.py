"""The string checks of k8s.io/apimachinery ``pkg/util/validation`` with Go's messages.

Each returns the messages Go returns (empty: valid), cached: the same names come back
for every Job and Pod of a large repository. Lengths count UTF-8 bytes
and the patterns are anchored, as Go's ``len`` and ``regexp.MatchString`` with ``^...$``.
"""

from __future__ import annotations

import functools
import re

__all__ = [
    "dns1123_label",
    "dns1123_subdomain",
    "env_var_name_relaxed",
    "http_header_name",
    "inclusive_range",
    "label_value",
    "mask_trailing_dash",
    "port_name",
    "port_number",
    "qualified_name",
]

_QNAME = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QNAME_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with"
    " an alphanumeric character"
)
_LABEL_VALUE = "(" + _QNAME + ")?"
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_'"
    " or '.', and must start and end with an alphanumeric character"
)
_DNS_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-',"
    " and must start and end with an alphanumeric character"
)
_DNS_SUBDOMAIN = _DNS_LABEL + "(\\." + _DNS_LABEL + ")*"
_DNS_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-'"
    " or '.', and must start and end with an alphanumeric character"
)
_HEADER = "[-A-Za-z0-9]+"
_HEADER_MSG = "a valid HTTP header must consist of alphanumeric characters or '-'"


def _full(pattern: str) -> re.Pattern[str]:
    # Go's $ matches only at the very end (no trailing-newline leniency): \Z
    return re.compile(f"(?:{pattern})\\Z")


_QNAME_RE = _full(_QNAME)
_LABEL_VALUE_RE = _full(_LABEL_VALUE)
_DNS_LABEL_RE = _full(_DNS_LABEL)
_DNS_SUBDOMAIN_RE = _full(_DNS_SUBDOMAIN)
_HEADER_RE = _full(_HEADER)
_PORT_CHARS = _full("[-a-z0-9]+")


def _len(value: str) -> int:
    return len(value.encode("utf-8", "surrogatepass"))


def regex_error(message: str, fmt: str, *examples: str) -> str:
    """Go's ``RegexError``: the message, its examples and the pattern."""
    if not examples:
        return f"{message} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{message} (e.g. {shown}regex used for validation is '{fmt}')"


def max_len(length: int) -> str:
    return f"must be no more than {length} characters"


def inclusive_range(low: int, high: int) -> str:
    return f"must be between {low} and {high}, inclusive"


@functools.lru_cache(maxsize=8192)
def dns1123_label(value: str) -> tuple[str, ...]:
    errors = []
    if _len(value) > 63:
        errors.append(max_len(63))
    if not _DNS_LABEL_RE.match(value):
        if _DNS_SUBDOMAIN_RE.match(value):
            errors.append("must not contain dots")
        else:
            errors.append(regex_error(_DNS_LABEL_MSG, _DNS_LABEL, "my-name", "123-abc"))
    return tuple(errors)


@functools.lru_cache(maxsize=8192)
def dns1123_subdomain(value: str) -> tuple[str, ...]:
    errors = []
    if _len(value) > 253:
        errors.append(max_len(253))
    if not _DNS_SUBDOMAIN_RE.match(value):
        errors.append(regex_error(_DNS_SUBDOMAIN_MSG, _DNS_SUBDOMAIN, "example.com"))
    return tuple(errors)


def mask_trailing_dash(name: str) -> str:
    """A generateName ending in '-' is checked as if it ended in 'a' (its last two
    characters replaced, as Go's ``maskTrailingDash`` does)."""
    if len(name) > 1 and name.endswith("-"):
        return name[:-2] + "a"
    return name


@functools.lru_cache(maxsize=8192)
def qualified_name(value: str) -> tuple[str, ...]:
    """``IsQualifiedName``: an optional DNS-subdomain prefix and '/', then a name."""
    errors: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errors.append("prefix part must be non-empty")
        else:
            errors.extend("prefix part " + m for m in dns1123_subdomain(prefix))
    else:
        return (
            "a qualified name "
            + regex_error(_QNAME_MSG, _QNAME, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
        )
    if not name:
        errors.append("name part must be non-empty")
    elif _len(name) > 63:
        errors.append("name part " + max_len(63))
    if not _QNAME_RE.match(name):
        errors.append(
            "name part " + regex_error(_QNAME_MSG, _QNAME, "MyName", "my.name", "123-abc")
        )
    return tuple(errors)


@functools.lru_cache(maxsize=8192)
def label_value(value: str) -> tuple[str, ...]:
    errors = []
    if _len(value) > 63:
        errors.append(max_len(63))
    if not _LABEL_VALUE_RE.match(value):
        errors.append(regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE, "MyValue", "my_value", "12345"))
    return tuple(errors)


@functools.lru_cache(maxsize=8192)
def env_var_name_relaxed(value: str) -> tuple[str, ...]:
    """``IsRelaxedEnvVarName`` (v1.34: the RelaxedEnvironmentVariableValidation gate is GA)."""
    errors = []
    if not value:
        errors.append("environment variable name must be non-empty")
    if any(ord(c) > 0x7E or ord(c) < 0x20 or c == "=" for c in value):
        errors.append(
            "a valid environment variable name must consist only of printable ASCII"
            " characters other than '='"
        )
    return tuple(errors)


def port_number(port: int) -> tuple[str, ...]:
    return () if 1 <= port <= 65535 else (inclusive_range(1, 65535),)


@functools.lru_cache(maxsize=8192)
def port_name(port: str) -> tuple[str, ...]:
    """``IsValidPortName``: an IANA_SVC_NAME."""
    errors = []
    if _len(port) > 15:
        errors.append(max_len(15))
    if not _PORT_CHARS.match(port):
        errors.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not re.search("[a-z]", port):
        errors.append("must contain at least one letter (a-z)")
    if "--" in port:
        errors.append("must not contain consecutive hyphens")
    if port and (port[0] == "-" or port[-1] == "-"):
        errors.append("must not begin or end with a hyphen")
    return tuple(errors)


@functools.lru_cache(maxsize=8192)
def http_header_name(value: str) -> tuple[str, ...]:
    if _HEADER_RE.match(value):
        return ()
    return (regex_error(_HEADER_MSG, _HEADER, "X-Header-Name"),)
