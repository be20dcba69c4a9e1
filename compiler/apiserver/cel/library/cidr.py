"""The Kubernetes CIDR library (k8s.io/apiserver ``pkg/cel/library/cidr.go``).

``cidr(text)`` is a ``net.CIDR``, parsed as ``netip.ParsePrefix`` does (its address part
through :mod:`~compiler.apiserver.cel.library.netip`) and then refused, as the library
refuses it, when the address is an IPv4-mapped IPv6 address. The host bits are kept:
``cidr("10.0.0.1/8") != cidr("10.0.0.0/8")``, and ``masked()`` clears them.

At run time a CIDR is its canonical string, with the same consequences as for an IP
(see :mod:`~compiler.apiserver.cel.library.ip`).
"""

from __future__ import annotations

import re
from typing import Any

from compiler.apiserver.cel.library import netip
from compiler.apiserver.cel.library.declarations import (
    BOOL,
    CIDR,
    INT,
    IP,
    STR,
    Declaration,
    Implementation,
    RunTypes,
)
from compiler.apiserver.cel.library.ip import ip_of
from compiler.apiserver.cel.library.values import LibraryError
from compiler.kube.gotext import go_quote


def declarations() -> list[Declaration]:
    return [
        Declaration("string", "cidr_to_string", [CIDR], STR),
        Declaration("ip", "cidr_ip", [], IP, CIDR),
        Declaration("cidr", "string_to_cidr", [STR], CIDR),
        Declaration("containsIP", "cidr_contains_ip_string", [STR], BOOL, CIDR),
        Declaration("containsIP", "cidr_contains_ip_ip", [IP], BOOL, CIDR),
        Declaration("containsCIDR", "cidr_contains_cidr_string", [STR], BOOL, CIDR),
        Declaration("containsCIDR", "cidr_contains_cidr", [CIDR], BOOL, CIDR),
        Declaration("prefixLength", "cidr_prefix_length", [], INT, CIDR),
        Declaration("masked", "cidr_masked", [], CIDR, CIDR),
        Declaration("isCIDR", "is_cidr", [STR], BOOL),
    ]


def implementations(types: RunTypes) -> list[Implementation]:
    T = types.cel
    S = T.STRING
    return [
        Implementation("ip", "k8s_cidr_ip", [S], S, _impl_cidr_ip, member=True),
        Implementation("cidr", "k8s_string_to_cidr", [S], S, _impl_cidr),
        Implementation("isCIDR", "k8s_is_cidr", [S], T.BOOL, _impl_is_cidr),
        Implementation(
            "containsIP", "k8s_cidr_contains_ip", [S, S], T.BOOL, _impl_contains_ip, member=True
        ),
        Implementation(
            "containsCIDR",
            "k8s_cidr_contains_cidr",
            [S, S],
            T.BOOL,
            _impl_contains_cidr,
            member=True,
        ),
        Implementation(
            "prefixLength", "k8s_cidr_prefix_length", [S], T.INT, _impl_prefix_length, member=True
        ),
        Implementation("masked", "k8s_cidr_masked", [S], S, _impl_masked, member=True),
    ]


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
        family, value, zone = netip.parse_addr(text[:slash])
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
    if netip.is_4in6(family, value):
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


def _prefix_string(family: int, value: int, bits: int) -> str:
    return f"{netip.addr_string(family, value)}/{bits}"


def _mask(family: int, value: int, bits: int) -> int:
    width = 32 if family == 4 else 128
    return value >> (width - bits) << (width - bits) if bits < width else value


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
    return netip.addr_string(family, value)


def _impl_prefix_length(text: Any) -> int:
    return _cidr_of(text)[2]


def _impl_masked(text: Any) -> str:
    family, value, bits = _cidr_of(text)
    return _prefix_string(family, _mask(family, value, bits), bits)


def _impl_contains_ip(cidr: Any, ip: Any) -> bool:
    family, value, bits = _cidr_of(cidr)
    ip_family, ip_value = ip_of(ip)
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
