"""Go's ``net/netip`` address parsing and printing, for the IP, CIDR and URL libraries.

:func:`parse_addr` is ``netip.ParseAddr`` with its error texts; :func:`addr_string` is
``Addr.String``. An address is a family (4 or 6) and an int; an IPv4-mapped IPv6
address (``::ffff:1.2.3.4``) stays IPv6, as in Go.
"""

from __future__ import annotations

import ipaddress

from compiler.apiserver.cel.library.values import LibraryError
from compiler.kube.gotext import go_quote


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


def parse_addr(text: str) -> tuple[int, int, str]:
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


def is_4in6(family: int, value: int) -> bool:
    return family == 6 and value >> 32 == 0xFFFF


def addr_string(family: int, value: int) -> str:
    if family == 4:
        return str(ipaddress.IPv4Address(value))
    if is_4in6(family, value):
        return "::ffff:" + str(ipaddress.IPv4Address(value & 0xFFFFFFFF))
    return ipaddress.IPv6Address(value).compressed
