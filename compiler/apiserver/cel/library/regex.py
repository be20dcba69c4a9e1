"""The Kubernetes regex library (k8s.io/apiserver ``pkg/cel/library/regex.go``).

``text.find(pattern)`` and ``text.findAll(pattern[, limit])``. Go compiles the pattern
with RE2 (``regexp.Compile``); here it is translated to Python's ``re`` (``\\z``, POSIX
classes, ``(?<name>``, a ``$`` that does not match before a final newline) and what RE2
refuses is refused with Go's text. Left out, and reported as unsupported: Unicode classes
(``\\pL``), negated POSIX classes, the ungreedy flag and flags after the start of the
pattern. An invalid pattern that only ``re`` catches has Python's text, behind Go's
prefix.
"""

from __future__ import annotations

import re
from typing import Final

from compiler.apiserver.cel.library.declarations import (
    INT,
    LIST_STR,
    STR,
    Declaration,
    Implementation,
    RunTypes,
)
from compiler.apiserver.cel.library.values import LibraryError


def declarations() -> list[Declaration]:
    return [
        Declaration("find", "string_find_string", [STR], STR, STR),
        Declaration("findAll", "string_find_all_string", [STR], LIST_STR, STR),
        Declaration("findAll", "string_find_all_string_int", [STR, INT], LIST_STR, STR),
    ]


def implementations(types: RunTypes) -> list[Implementation]:
    T = types.cel
    S = T.STRING
    return [
        Implementation("find", "k8s_find", [S, S], S, _impl_find, member=True),
        Implementation("findAll", "k8s_find_all", [S, S], T.List(S), _impl_find_all, member=True),
        Implementation(
            "findAll", "k8s_find_all_int", [S, S, T.INT], T.List(S), _impl_find_all, member=True
        ),
    ]


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
