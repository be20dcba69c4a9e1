"""Go's ``net/url`` parsing (Go 1.26), for the URL library and the ``uri`` format.

:func:`parse` is ``url.Parse`` and :func:`parse_request_uri` is ``url.ParseRequestURI``,
each raising :class:`~compiler.apiserver.cel.library.values.LibraryError` with Go's
error text; :class:`URL` keeps the fields ``URL.String`` and ``URL.EscapedPath`` need.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from compiler.apiserver.cel.library.netip import parse_addr
from compiler.apiserver.cel.library.values import LibraryError
from compiler.kube.gotext import go_quote

ENC_PATH, ENC_PATH_SEGMENT, ENC_HOST, ENC_ZONE, ENC_USER, ENC_QUERY, ENC_FRAGMENT = range(7)


def _should_escape(c: int, mode: int) -> bool:
    ch = chr(c)
    if ch.isascii() and ch.isalnum():
        return False
    if mode in (ENC_HOST, ENC_ZONE) and ch in "!$&'()*+,;=:[]<>\"":
        return False
    if ch in "-_.~":
        return False
    if ch in "$&+,/:;=?@":
        if mode == ENC_PATH:
            return ch == "?"
        if mode == ENC_PATH_SEGMENT:
            return ch in "/;,?"
        if mode == ENC_USER:
            return ch in "@/?:"
        if mode == ENC_QUERY:
            return True
        if mode == ENC_FRAGMENT:
            return False
    return not (mode == ENC_FRAGMENT and ch in "!()*")


_HEX: Final = frozenset(b"0123456789abcdefABCDEF")


class UrlError(Exception):
    """A ``net/url`` error, before ``parse`` puts the URL in front of it."""


def unescape(s: bytes, mode: int) -> bytes:
    n = 0
    has_plus = False
    i = 0
    while i < len(s):
        c = s[i]
        if c == 0x25:  # '%'
            n += 1
            if i + 2 >= len(s) or s[i + 1] not in _HEX or s[i + 2] not in _HEX:
                bad = s[i : i + 3]
                raise UrlError(f"invalid URL escape {go_quote(bad.decode('utf-8', 'replace'))}")
            if mode == ENC_HOST and int(chr(s[i + 1]), 16) < 8 and s[i : i + 3] != b"%25":
                raise UrlError(
                    f"invalid URL escape {go_quote(s[i : i + 3].decode('utf-8', 'replace'))}"
                )
            if mode == ENC_ZONE:
                v = int(s[i + 1 : i + 3], 16)
                if s[i : i + 3] != b"%25" and v != 0x20 and _should_escape(v, ENC_HOST):
                    raise UrlError(
                        f"invalid URL escape {go_quote(s[i : i + 3].decode('utf-8', 'replace'))}"
                    )
            i += 3
        elif c == 0x2B:  # '+'
            has_plus = mode == ENC_QUERY
            i += 1
        else:
            if mode in (ENC_HOST, ENC_ZONE) and c < 0x80 and _should_escape(c, mode):
                raise UrlError(f"invalid character {go_quote(chr(c))} in host name")
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
            out.append(0x20 if mode == ENC_QUERY else 0x2B)
        else:
            out.append(c)
        i += 1
    return bytes(out)


def _escape(s: bytes, mode: int) -> bytes:
    out = bytearray()
    for c in s:
        if c == 0x20 and mode == ENC_QUERY:
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
class URL:
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
        if self.raw_path and _valid_encoded(self.raw_path, ENC_PATH):
            try:
                if unescape(self.raw_path, ENC_PATH) == self.path:
                    return self.raw_path
            except UrlError:
                pass
        if self.path == b"*":
            return b"*"
        return _escape(self.path, ENC_PATH)

    def escaped_fragment(self) -> bytes:
        if self.raw_fragment and _valid_encoded(self.raw_fragment, ENC_FRAGMENT):
            try:
                if unescape(self.raw_fragment, ENC_FRAGMENT) == self.fragment:
                    return self.raw_fragment
            except UrlError:
                pass
        return _escape(self.fragment, ENC_FRAGMENT)

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
                    buf += _escape(name, ENC_USER)
                    if password is not None:
                        buf += b":" + _escape(password, ENC_USER)
                    buf += b"@"
                if self.host:
                    buf += _escape(self.host, ENC_HOST)
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
                raise UrlError("missing protocol scheme")
            return raw[:i], raw[i + 1 :]
        return b"", raw
    return b"", raw


def _parse_host(scheme: bytes, host: bytes) -> bytes:
    open_bracket = host.rfind(b"[")
    if open_bracket > 0:
        raise UrlError("invalid IP-literal")
    if open_bracket == 0:
        close = host.rfind(b"]")
        if close < 0:
            raise UrlError("missing ']' in host")
        colon_port = host[close + 1 :]
        if not _valid_optional_port(colon_port):
            raise UrlError(
                f"invalid port {go_quote(colon_port.decode('utf-8', 'replace'))} after host"
            )
        unescaped_port = unescape(colon_port, ENC_HOST)
        hostname = host[1:close]
        zone = hostname.find(b"%25")
        if zone >= 0:
            unescaped = unescape(hostname[:zone], ENC_HOST) + unescape(hostname[zone:], ENC_ZONE)
        else:
            unescaped = unescape(hostname, ENC_HOST)
        text = unescaped.decode("utf-8", "replace")
        try:
            family, _, _ = parse_addr(text)
        except LibraryError as error:
            raise UrlError(f"invalid host: {error}") from None
        if family == 4:
            raise UrlError("invalid IP-literal")
        return b"[" + unescaped + b"]" + unescaped_port
    first = host.find(b":")
    if first != -1:
        last = host.rfind(b":")
        index = first
        if last != first and scheme not in (b"http", b"https"):
            index = last
        colon_port = host[index:]
        if not _valid_optional_port(colon_port):
            raise UrlError(
                f"invalid port {go_quote(colon_port.decode('utf-8', 'replace'))} after host"
            )
    return unescape(host, ENC_HOST)


_USERINFO_OK: Final = frozenset("-._:~!$&'()*+,;=%@")


def _parse_authority(url: URL, authority: bytes) -> None:
    at = authority.rfind(b"@")
    url.host = _parse_host(url.scheme, authority if at < 0 else authority[at + 1 :])
    if at < 0:
        return
    userinfo = authority[:at]
    text = userinfo.decode("utf-8", "replace")
    if not all((c.isascii() and c.isalnum()) or c in _USERINFO_OK for c in text):
        raise UrlError("net/url: invalid userinfo")
    if b":" not in userinfo:
        url.user = (unescape(userinfo, ENC_USER), None)
    else:
        name, _, password = userinfo.partition(b":")
        url.user = (unescape(name, ENC_USER), unescape(password, ENC_USER))


def _parse_url(raw: bytes, via_request: bool) -> URL:
    if any(c < 0x20 or c == 0x7F for c in raw):
        raise UrlError("net/url: invalid control character in URL")
    if not raw and via_request:
        raise UrlError("empty url")
    url = URL()
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
            raise UrlError("invalid URI for request")
        if b":" in rest.split(b"/", 1)[0]:
            raise UrlError("first path segment in URL cannot contain colon")
    if (url.scheme or (not via_request and not rest.startswith(b"///"))) and rest.startswith(b"//"):
        authority, rest = rest[2:], b""
        slash = authority.find(b"/")
        if slash >= 0:
            authority, rest = authority[:slash], authority[slash:]
        _parse_authority(url, authority)
    elif url.scheme and rest.startswith(b"/"):
        url.omit_host = True
    path = unescape(rest, ENC_PATH)
    url.path = path
    url.raw_path = b"" if _escape(path, ENC_PATH) == rest else rest
    return url


def parse(raw: str) -> URL:
    """``url.Parse``."""
    data = raw.encode("utf-8", "surrogatepass")
    base, sep, frag = data.partition(b"#")
    try:
        url = _parse_url(base, False)
    except UrlError as error:
        raise LibraryError(f"parse {go_quote(base.decode('utf-8', 'replace'))}: {error}") from None
    if sep and frag:
        try:
            url.fragment = unescape(frag, ENC_FRAGMENT)
        except UrlError as error:
            raise LibraryError(f"parse {go_quote(raw)}: {error}") from None
        url.raw_fragment = b"" if _escape(url.fragment, ENC_FRAGMENT) == frag else frag
    return url


def parse_request_uri(raw: str) -> URL:
    """``url.ParseRequestURI``."""
    try:
        return _parse_url(raw.encode("utf-8", "surrogatepass"), True)
    except UrlError as error:
        raise LibraryError(f"parse {go_quote(raw)}: {error}") from None


def split_host_port(host_port: bytes) -> tuple[bytes, bytes]:
    """``URL.Hostname`` and ``URL.Port`` of a host (``[::1]:80`` -> ``::1``, ``80``)."""
    host, port = host_port, b""
    colon = host.rfind(b":")
    if colon != -1 and _valid_optional_port(host[colon:]):
        host, port = host[:colon], host[colon + 1 :]
    if host.startswith(b"[") and host.endswith(b"]"):
        host = host[1:-1]
    return host, port
