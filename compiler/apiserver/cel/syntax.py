"""CEL source as tokens, and the rewrites that need them rather than a parser.

The engine's run programs are the user's expressions with a few rewrites (see
:mod:`compiler.apiserver.cel.k8s`); each works on tokens: identifiers, strings,
comments and single characters, which is all CEL's rewrites need to tell a
``variables.x`` apart from a string that mentions it.

:func:`eager_optional_macros` is for a fault of the engine: ``optMap`` and
``optFlatMap`` expand to a binding that cel-expr-python 0.1.3 evaluates lazily, from a
comprehension slot that an earlier ``exists`` or ``all`` which stopped early can leave
holding its last element::

    [[1, 2].exists(x, x == 1), optional.of(7).optMap(v, v).value()]

is ``[true, 2]`` there, ``[true, 7]`` in cel-go. The rewrite gives the same values
from one-element ``map`` comprehensions, whose variables are assigned before use.

:func:`map_building_macros` is for a gap of the engine: ``transformMap`` and
``transformMapEntry`` expand to ``cel.@mapInsert``, which it declares but cannot run;
they are written as a ``transformList`` of one-entry maps that a run-side function
merges (:mod:`compiler.apiserver.cel.library.maps`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

__all__ = [
    "MAP_OF_ENTRIES",
    "Token",
    "closing_bracket",
    "eager_optional_macros",
    "map_building_macros",
    "member_calls",
    "opening_bracket",
    "receiver_start",
    "significant",
    "tokens",
    "unsupported_macro",
]

_TOKEN_RE: Final = re.compile(
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
class Token:
    kind: str  # "ws", "str", "id", "other" (one character: punctuation, an operator, a digit)
    text: str
    start: int

    @property
    def end(self) -> int:
        return self.start + len(self.text)


def tokens(source: str) -> list[Token]:
    return [Token(str(m.lastgroup), m.group(), m.start()) for m in _TOKEN_RE.finditer(source)]


def significant(found: list[Token]) -> list[Token]:
    """The tokens without whitespace and comments."""
    return [t for t in found if t.kind != "ws"]


def closing_bracket(sig: list[Token], open_index: int) -> int | None:
    """Index in ``sig`` of the bracket that closes the one at ``open_index``."""
    depth = 0
    for index in range(open_index, len(sig)):
        if sig[index].kind != "other":
            continue
        text = sig[index].text
        if text in "([{":
            depth += 1
        elif text in ")]}":
            depth -= 1
            if depth == 0:
                return index
    return None


def opening_bracket(sig: list[Token], close_index: int) -> int | None:
    """Index in ``sig`` of the bracket that opens the one at ``close_index``."""
    depth = 0
    for index in range(close_index, -1, -1):
        if sig[index].kind != "other":
            continue
        text = sig[index].text
        if text in ")]}":
            depth += 1
        elif text in "([{":
            depth -= 1
            if depth == 0:
                return index
    return None


def _ends_operand(token: Token) -> bool:
    """Whether an expression can end with ``token`` (so a ``[`` or ``.`` after it
    indexes or selects from it)."""
    if token.kind == "str":
        return True
    if token.kind == "id":
        return token.text != "in"  # the only word operator
    return token.text in ")]}" or token.text.isdigit()


def _names_call(token: Token) -> bool:
    """Whether ``token`` before a ``(`` (or ``{``) names a call (or a message type)."""
    return token.kind == "id" and token.text != "in"


def member_calls(sig: list[Token], names: tuple[str, ...]) -> list[int]:
    """Indexes in ``sig`` of the ``.`` of every ``R.name(`` call (or macro) of ``names``."""
    return [
        i
        for i in range(1, len(sig) - 2)
        if sig[i].text == "."
        and sig[i + 1].kind == "id"
        and sig[i + 1].text in names
        and sig[i + 2].text == "("
        and _ends_operand(sig[i - 1])
    ]


def receiver_start(sig: list[Token], dot: int) -> int | None:
    """Index in ``sig`` of the first token of the member expression whose ``.`` is at
    ``dot`` (in ``a.b[0].f(x).optMap(...)``, of ``a``); None when it is not one trainc
    can delimit (a number, say).

    Member access binds tighter than every operator, so the receiver is the longest
    chain of selections, calls and indexes before the dot, back to its primary: a
    name, a literal, a bracketed expression or a call.
    """
    index = dot - 1
    while index >= 0:
        token = sig[index]
        if token.kind == "other" and token.text in ")]}":
            opened = opening_bracket(sig, index)
            if opened is None:
                return None
            before = sig[opened - 1] if opened > 0 else None
            if token.text == "]" and before is not None and _ends_operand(before):
                index = opened - 1  # an index: the receiver goes on before it
                continue
            if token.text != "]" and before is not None and _names_call(before):
                index = opened - 1  # a call, or a message literal: its name is next
            else:
                return opened  # a bracketed expression, a list or map literal
        token = sig[index]
        if token.kind not in ("id", "str"):
            return None
        previous = index - 1
        if previous >= 1 and sig[previous].text == "?" and sig[previous - 1].text == ".":
            previous -= 1  # an optional selection: a.?b
        if previous >= 0 and sig[previous].text == ".":
            if previous >= 1 and _ends_operand(sig[previous - 1]):
                index = previous - 1
                continue
            return previous  # a name from the root container: .a.b
        return index
    return None


# Two-variable comprehension macros whose expansion calls cel.@mapInsert, which the
# engine declares but cannot run ("No overload found in reference resolve step"): the
# run copy builds the map from a list instead (map_building_macros).
_MAP_BUILDING_MACROS: Final = ("transformMap", "transformMapEntry")
# The run environment's function that makes one map of a list of maps, as the
# insertions of cel.@mapInsert would (a key given twice is an error).
MAP_OF_ENTRIES: Final = "trainc_map_of_entries"


def unsupported_macro(source: str) -> str | None:
    """The first macro of ``source`` the engine cannot run, even rewritten (a
    ``transformMap`` whose receiver trainc cannot delimit), as a compile error's text;
    None when there is none."""
    if not any(name in source for name in _MAP_BUILDING_MACROS):
        return None
    sig = significant(tokens(source))
    for dot in member_calls(sig, _MAP_BUILDING_MACROS):
        if _map_macro_parts(sig, dot) is None:
            name = sig[dot + 1].text
            return (
                f"{name} is not supported here: trainc engine limitation (its receiver"
                " must be a name, a selection, an index, a call or a bracketed expression)"
            )
    return None


def map_building_macros(source: str) -> str:
    """``source`` with each ``transformMap`` and ``transformMapEntry`` written as a
    ``transformList`` of one-entry maps, merged by :data:`MAP_OF_ENTRIES`.

    ``R.transformMap(k, v, [f,] e)`` -> ``trainc_map_of_entries(R.transformList(k, v,
    [f,] {k: e}))``; ``R.transformMapEntry(k, v, [f,] e)`` -> ``trainc_map_of_entries(
    R.transformList(k, v, [f,] e))``. The value is the macro's: the same entries, in
    the same order, and cel-go's error when an entry's key is given twice. A macro
    whose receiver trainc cannot delimit is left (and refused, :func:`unsupported_macro`).
    """
    return _rewrite_member_macros(source, _MAP_BUILDING_MACROS, _rewrite_map_macro)


def _rewrite_map_macro(source: str, sig: list[Token], dot: int, _: int) -> str | None:
    parts = _map_macro_parts(sig, dot)
    if parts is None:
        return None
    start, close, arguments = parts
    receiver = source[sig[start].start : sig[dot].start]
    texts = [source[sig[a].start : sig[b].end] for a, b in arguments]
    if sig[dot + 1].text == "transformMap":
        texts[-1] = f"{{{texts[0]}: {texts[-1]}}}"
    replacement = f"{MAP_OF_ENTRIES}({receiver}.transformList({', '.join(texts)}))"
    return source[: sig[start].start] + replacement + source[sig[close].end :]


def _map_macro_parts(sig: list[Token], dot: int) -> tuple[int, int, list[tuple[int, int]]] | None:
    """The receiver's first token, the closing bracket and the first and last token of
    each argument of the macro whose ``.`` is at ``dot``; None when it is not three or
    four arguments after a receiver trainc can delimit."""
    start = receiver_start(sig, dot)
    close = closing_bracket(sig, dot + 2)
    if start is None or close is None:
        return None
    arguments: list[tuple[int, int]] = []
    first = dot + 3
    index = first
    while index < close:
        token = sig[index]
        if token.kind == "other" and token.text in "([{":
            index = closing_bracket(sig, index) or close
        elif token.text == ",":
            arguments.append((first, index - 1))
            first = index + 1
        index += 1
    arguments.append((first, close - 1))
    if len(arguments) not in (3, 4) or any(a > b for a, b in arguments):
        return None
    return start, close, arguments


_OPTIONAL_MACROS: Final = ("optMap", "optFlatMap")
_OPTION_PREFIX: Final = "trainc_option"


def eager_optional_macros(source: str) -> str:
    """``source`` with each ``R.optMap(v, e)`` and ``R.optFlatMap(v, e)`` written
    without the lazy binding they expand to (see the module docstring).

    ``o.optMap(v, v + 1)`` ->
    ``[o].map(trainc_option0, trainc_option0.hasValue() ?
    optional.of([trainc_option0.value()].map(v, v + 1)[0]) : optional.none())[0]``;
    ``optFlatMap`` the same without ``optional.of``. The value is the macro's: ``R``
    evaluated once, ``e`` only when ``R`` has a value, and errors as they were. A macro
    trainc cannot delimit is left as written.
    """
    return _rewrite_member_macros(
        source,
        _OPTIONAL_MACROS,
        lambda text, sig, dot, number: _rewrite_macro(text, sig, dot, f"{_OPTION_PREFIX}{number}"),
    )


def _rewrite_member_macros(
    source: str, names: tuple[str, ...], rewrite: Callable[[str, list[Token], int, int], str | None]
) -> str:
    """``source`` with ``rewrite(source, tokens, dot, n)`` applied to each ``R.name(...)``
    of ``names`` (the n-th rewrite), the last first, so that a macro in another's
    receiver or argument is rewritten before it; one ``rewrite`` gives None for is left
    as written."""
    if not any(name in source for name in names):
        return source
    skipped = 0  # macros left as written, from the end
    number = 0
    while True:
        sig = significant(tokens(source))
        candidates = member_calls(sig, names)
        if len(candidates) <= skipped:
            return source
        rewritten = rewrite(source, sig, candidates[len(candidates) - 1 - skipped], number)
        if rewritten is None:
            skipped += 1
            continue
        source = rewritten
        number += 1


def _rewrite_macro(source: str, sig: list[Token], dot: int, option: str) -> str | None:
    start = receiver_start(sig, dot)
    close = closing_bracket(sig, dot + 2)
    if start is None or close is None or close < dot + 5:
        return None
    variable, comma = sig[dot + 3], sig[dot + 4]
    if variable.kind != "id" or comma.text != ",":
        return None
    receiver = source[sig[start].start : sig[dot].start]
    body = source[comma.end : sig[close].start]
    mapped = f"[{option}.value()].map({variable.text},{body})[0]"
    if sig[dot + 1].text == "optMap":
        mapped = f"optional.of({mapped})"
    replacement = f"[{receiver}].map({option}, {option}.hasValue() ? {mapped} : optional.none())[0]"
    return source[: sig[start].start] + replacement + source[sig[close].end :]
