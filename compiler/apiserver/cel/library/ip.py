"""The Kubernetes IP library (k8s.io/apiserver ``pkg/cel/library/ip.go``).

``ip(text)`` is a ``net.IP``, parsed with ``netip.ParseAddr``
(:mod:`~compiler.apiserver.cel.library.netip`) and then refused, as the library
refuses them, when it has a zone or is an IPv4-mapped IPv6 address.

At run time an IP is its canonical string, so ``ip("::1") == "::1"``, rejected by the
type check, is true when the comparison is typed ``dyn``, where Go reports an error;
``type(ip(...))`` is ``string``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from compiler.apiserver.cel.library import netip
from compiler.apiserver.cel.library.declarations import (
    BOOL,
    INT,
    IP,
    STR,
    Declaration,
    Implementation,
    RunTypes,
)
from compiler.apiserver.cel.library.values import LibraryError
from compiler.kube.gotext import go_quote

_TESTS: Final = (
    "isUnspecified",
    "isLoopback",
    "isLinkLocalMulticast",
    "isLinkLocalUnicast",
    "isGlobalUnicast",
)


def declarations() -> list[Declaration]:
    out = [
        Declaration("string", "ip_to_string", [IP], STR),
        Declaration("ip", "string_to_ip", [STR], IP),  # the CIDR library adds cidr.ip()
        Declaration("family", "ip_family", [], INT, IP),
        Declaration("ip.isCanonical", "ip_is_canonical", [STR], BOOL),
    ]
    out += [Declaration(name, f"ip_{name}", [], BOOL, IP) for name in _TESTS]
    out.append(Declaration("isIP", "is_ip", [STR], BOOL))
    return out


def implementations(types: RunTypes) -> list[Implementation]:
    T = types.cel
    S = T.STRING
    out = [
        Implementation("ip", "k8s_string_to_ip", [S], S, _impl_ip),
        Implementation("isIP", "k8s_is_ip", [S], T.BOOL, _impl_is_ip),
        Implementation("ip.isCanonical", "k8s_ip_is_canonical", [S], T.BOOL, _impl_ip_is_canonical),
        Implementation("family", "k8s_ip_family", [S], T.INT, _impl_family, member=True),
    ]
    out += [
        Implementation(name, f"k8s_ip_{name}", [S], T.BOOL, _ip_test(name), member=True)
        for name in _TESTS
    ]
    return out


def parse_ip(text: str) -> tuple[int, int]:
    """The library's IP parsing: (family, address as an int)."""
    try:
        family, value, zone = netip.parse_addr(text)
    except LibraryError as error:
        raise LibraryError(
            f"IP Address {go_quote(text)} parse error during conversion from string: {error}"
        ) from None
    if zone:
        raise LibraryError(f"IP address {go_quote(text)} with zone value is not allowed")
    if netip.is_4in6(family, value):
        raise LibraryError(f"IPv4-mapped IPv6 address {go_quote(text)} is not allowed")
    return family, value


def ip_of(text: Any) -> tuple[int, int]:
    """An IP argument (a string at run time) as (family, address as an int)."""
    if not isinstance(text, str):
        raise LibraryError("no such overload")
    return parse_ip(text)


def _impl_ip(text: str) -> str:
    family, value = parse_ip(text)
    return netip.addr_string(family, value)


def _impl_is_ip(text: str) -> bool:
    try:
        parse_ip(text)
    except LibraryError:
        return False
    return True


def _impl_ip_is_canonical(text: str) -> bool:
    family, value = parse_ip(text)
    return netip.addr_string(family, value) == text


def _impl_family(text: Any) -> int:
    return ip_of(text)[0]


def _ip_test(name: str) -> Callable[[Any], bool]:
    def test(text: Any) -> bool:
        family, value = ip_of(text)
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
