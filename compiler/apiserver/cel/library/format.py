"""The Kubernetes format library (k8s.io/apiserver ``pkg/cel/library/format.go``).

``format.dns1123Label()`` and its siblings, or ``format.named("dns1123Label")`` (an
optional: none for an unknown name), are a ``kubernetes.NamedFormat``;
``validate(text)`` is none when the text is valid and otherwise the list of error texts.
The name validators and their messages are apimachinery's (``NameIsDNSLabel`` and the
rest, a ``...Prefix`` format allowing a trailing dash); ``uri`` is Go's
``url.ParseRequestURI``; ``uuid``, ``byte``, ``date`` and ``datetime`` are
kube-openapi's string formats.

The engine cannot return an optional from Python, so ``validate`` and ``format.named``
run as ``k8s_validate`` and ``k8s_format_named``, which return a list of at most one
item, and the expression that runs takes ``.first()`` of it (see
:mod:`compiler.apiserver.cel.k8s`).
"""

from __future__ import annotations

import base64
import binascii
import datetime as _dt
import re
from collections.abc import Callable
from typing import Any, Final

from compiler.apiserver.cel.library import neturl
from compiler.apiserver.cel.library.declarations import (
    LIST_STR,
    NAMED_FORMAT,
    STR,
    Declaration,
    Implementation,
    RunTypes,
    t,
)
from compiler.apiserver.cel.library.values import LibraryError, tagged, untag

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


def declarations() -> list[Declaration]:
    f = NAMED_FORMAT
    out = [
        Declaration("validate", "format-validate", [STR], t("optional_type", LIST_STR), f),
        Declaration("format.named", "format-named", [STR], t("optional_type", f)),
    ]
    out += [Declaration(f"format.{name}", f"format.{name}", [], f) for name in _FORMAT_NAMES]
    return out


def implementations(types: RunTypes) -> list[Implementation]:
    T, M = types.cel, types.map
    out = [
        Implementation(f"format.{name}", f"k8s_format_{name}", [], M, _impl_format(name))
        for name in _FORMAT_NAMES
    ]
    out += [
        Implementation(
            "k8s_format_named", "k8s_format_named", [T.STRING], types.list, _impl_format_named
        ),
        Implementation(
            "k8s_validate",
            "k8s_format_validate",
            [M, T.STRING],
            T.List(T.List(T.STRING)),
            _impl_validate,
            member=True,
        ),
    ]
    return out


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
        neturl.parse_request_uri(value)
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
        return tagged("NamedFormat", v=name)

    return make


def _impl_format_named(name: str) -> list[dict[str, Any]]:
    return [tagged("NamedFormat", v=name)] if name in _FORMATS else []


def _impl_validate(value: Any, text: str) -> list[list[str]]:
    name = str(untag(value, "NamedFormat").get("v", ""))
    errors = _FORMATS[name](text)
    return [errors] if errors else []
