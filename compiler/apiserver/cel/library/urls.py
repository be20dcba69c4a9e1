"""The Kubernetes URL library (k8s.io/apiserver ``pkg/cel/library/urls.go``).

``url(text)`` is a ``kubernetes.URL``: the text must pass Go's ``url.ParseRequestURI``
(an absolute URI or an absolute path) and is then parsed with ``url.Parse``, both
through :mod:`~compiler.apiserver.cel.library.neturl`; the getters read the parsed
fields as Go's ``url.URL`` methods do. ``isURL`` asks the same first question.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from compiler.apiserver.cel.library import neturl
from compiler.apiserver.cel.library.declarations import (
    BOOL,
    LIST_STR,
    STR,
    URL,
    Declaration,
    Implementation,
    RunTypes,
    t,
)
from compiler.apiserver.cel.library.values import LibraryError, tagged, untag

_URL_GETTERS: Final[dict[str, Callable[[neturl.URL], bytes]]] = {
    "getScheme": lambda u: u.scheme,
    "getHost": lambda u: u.host,
    "getHostname": lambda u: neturl.split_host_port(u.host)[0],
    "getPort": lambda u: neturl.split_host_port(u.host)[1],
    "getEscapedPath": lambda u: u.escaped_path(),
}


def declarations() -> list[Declaration]:
    u = URL
    out = [Declaration("url", "string_to_url", [STR], u)]
    out += [Declaration(getter, f"url_{getter}", [], STR, u) for getter in _URL_GETTERS]
    out += [
        Declaration("getQuery", "url_get_query", [], t("map", STR, LIST_STR), u),
        Declaration("isURL", "is_url_string", [STR], BOOL),
    ]
    return out


def implementations(types: RunTypes) -> list[Implementation]:
    T, M = types.cel, types.map
    out = [Implementation("url", "k8s_string_to_url", [T.STRING], M, _impl_url)]
    out += [
        Implementation(getter, f"k8s_url_{getter}", [M], T.STRING, _url_getter(getter), member=True)
        for getter in _URL_GETTERS
    ]
    out += [
        Implementation(
            "getQuery",
            "k8s_url_get_query",
            [M],
            T.Map(T.STRING, T.List(T.STRING)),
            _impl_url_query,
            member=True,
        ),
        Implementation("isURL", "k8s_is_url", [T.STRING], T.BOOL, _impl_is_url),
    ]
    return out


def _b2s(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def _impl_url(text: str) -> dict[str, Any]:
    try:
        neturl.parse_request_uri(text)
        url = neturl.parse(text)
    except LibraryError as error:
        raise LibraryError(f"URL parse error during conversion from string: {error}") from None
    return tagged("URL", v=_b2s(url.string()))


def _url_of(value: Any) -> neturl.URL:
    return neturl.parse(str(untag(value, "URL").get("v", "")))


def _impl_url_query(value: Any) -> dict[str, list[str]]:
    result: dict[str, list[str]] = {}
    query = _url_of(value).raw_query
    for part in query.split(b"&") if query else []:
        if b";" in part or not part:
            continue
        key, _, val = part.partition(b"=")
        try:
            k = neturl.unescape(key, neturl.ENC_QUERY)
            v = neturl.unescape(val, neturl.ENC_QUERY)
        except neturl.UrlError:
            continue
        result.setdefault(_b2s(k), []).append(_b2s(v))
    return result


def _impl_is_url(text: str) -> bool:
    try:
        neturl.parse_request_uri(text)
    except LibraryError:
        return False
    return True


def _url_getter(name: str) -> Callable[[Any], str]:
    getter = _URL_GETTERS[name]

    def get(value: Any) -> str:
        return _b2s(getter(_url_of(value)))

    return get
