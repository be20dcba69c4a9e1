"""YAML text -> plain JSON data + source positions, read the way Kubernetes reads it.

``kubectl`` and the API server turn YAML into JSON with sigs.k8s.io/yaml, which decodes
with the goyaml v2 fork (YAML 1.1 scalar rules) and then marshals to JSON; the server
decodes that JSON again. trainc mimics the whole round trip, so a value means here
what it would mean in the cluster:

* booleans are ``true/false`` *and* the YAML 1.1 words ``y/n/yes/no/on/off`` in their
  three spellings (``on`` -> ``True``); ``~``, ``null`` and the empty scalar are ``None``;
* integers follow Go's ``ParseInt(s, 0, 64)`` after removing ``_``: ``0x1F`` -> 31,
  ``0o17`` and ``017`` -> 15; ``08`` is not octal, it is read as the float 8.0;
* a float whose JSON text (Go prints the shortest digits) fits int64 comes back from
  the API server's JSON decode as an integer (``2.0`` -> 2, ``1e3`` -> 1000, ``08`` -> 8);
  an integer beyond int64 comes back as a float;
  ``.nan``/``.inf`` cannot be marshalled to JSON and are an error;
* timestamps stay strings; quoted and block scalars are always strings;
* mapping keys become strings: ``true``/``yes`` -> ``"true"``, ``1`` -> ``"1"``,
  a null or a collection key is an error;
* anchors, aliases and ``<<`` merge keys work (explicit keys win over merged ones,
  earlier merge sources over later ones);
* explicit tags: ``!!str !!int !!float !!bool !!null !!binary !!timestamp`` on
  scalars, ``!!map``/``!!seq`` on collections; any other tag is rejected;
* a key given twice in one mapping is an error at the second occurrence.

Positions: every node gets the 1-based line and column of where it is written, keyed
by its JSON path. For a mapping entry that is the position of the *key* (so an
error about ``spec.trainer.numNodes`` points at ``numNodes:``); for a sequence item,
the start of the item (after ``- ``); the empty path is the document's root node.
Values reached through an alias point at the anchored node::

    >>> [doc] = parse_yaml("a:\\n  - on\\n  - 0x10\\n", "x.yaml")
    >>> doc.data
    {'a': [True, 16]}
    >>> doc.source.positions[("a", 1)]
    (3, 5)

The data is built straight from ruamel.yaml's parser events (not its round-trip
loader): that keeps Kubernetes' scalar rules in one place, gives exact positions and
duplicate-key checks, and skips building ruamel's node and comment objects. libyaml
(``ruamel.yaml.clibz``, ruamel.yaml's ``libyaml`` extra) is used when installed; it is
~5x faster than the pure-Python parser and gives the same data and positions (its
syntax error texts are libyaml's, the ones kubectl shows). One refusal is libyaml's
alone, a ``:`` inside a plain scalar of a flow collection (``[s3://host:9000/x]``): such a
stream is read again by the pure-Python parser, which reads it as kubectl does.

A stream is read one document at a time (:class:`YamlStream`), so a caller that drops
what it does not keep needs memory for one document, not for the file; a file holds at
most ``$TRAINC_MAX_FILE_DOCUMENTS`` documents (100,000) and ``$TRAINC_MAX_FILE_BYTES``
bytes (128 MiB).
"""

from __future__ import annotations

import base64
import binascii
import math
import re
import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.events import (
    AliasEvent,
    DocumentEndEvent,
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
)
from ruamel.yaml.reader import ReaderError

from compiler.apiserver.manifest import SourceMap
from compiler.apiserver.source_bytes import DEFAULT_MAX_FILE_BYTES as DEFAULT_MAX_FILE_BYTES
from compiler.apiserver.source_bytes import DEFAULT_MAX_FILE_DOCUMENTS as DEFAULT_MAX_FILE_DOCUMENTS
from compiler.apiserver.source_bytes import MAX_FILE_BYTES_ENV as MAX_FILE_BYTES_ENV
from compiler.apiserver.source_bytes import MAX_FILE_DOCUMENTS_ENV as MAX_FILE_DOCUMENTS_ENV
from compiler.apiserver.source_bytes import max_file_bytes as max_file_bytes
from compiler.apiserver.source_bytes import max_file_documents as max_file_documents
from compiler.apiserver.source_bytes import read_source as read_source
from compiler.apiserver.source_bytes import read_stream as read_stream
from compiler.apiserver.source_bytes import too_many_documents as too_many_documents
from compiler.errors import InputError, JsonPath, Problem, SourceLocation
from compiler.kube.gotext import layout

__all__ = [
    "YamlDocument",
    "YamlStream",
    "c_parser_available",
    "parse_yaml",
    "parse_yaml_collect",
    "read_yaml",
]

_Y = "tag:yaml.org,2002:"
_STR, _INT, _FLOAT, _BOOL, _NULL = _Y + "str", _Y + "int", _Y + "float", _Y + "bool", _Y + "null"
_BINARY, _TIMESTAMP, _MAP, _SEQ = _Y + "binary", _Y + "timestamp", _Y + "map", _Y + "seq"

# goyaml v2 resolve table: the fixed words (checked only when the first character is
# one of ``yYnNtTfFoO~.+-`` or a digit, which all of them start with).
_WORDS: dict[str, tuple[str, Any]] = {}
for _value, _tag, _spellings in (
    (True, _BOOL, "y Y yes Yes YES true True TRUE on On ON"),
    (False, _BOOL, "n N no No NO false False FALSE off Off OFF"),
    (None, _NULL, "~ null Null NULL"),
    (math.nan, _FLOAT, ".nan .NaN .NAN"),
    (math.inf, _FLOAT, ".inf .Inf .INF +.inf +.Inf +.INF"),
    (-math.inf, _FLOAT, "-.inf -.Inf -.INF"),
):
    for _word in _spellings.split():
        _WORDS[_word] = (_tag, _value)

_INT64_MIN, _INT64_MAX, _UINT64_MAX = -(2**63), 2**63 - 1, 2**64 - 1
_GO_INT = re.compile(r"(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)\Z")
_YAML_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?\Z")
_DOT_FLOAT = re.compile(r"\.[0-9]+([eE][-+]?[0-9]+)?\Z")
_TIMESTAMP_RE = re.compile(r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([Tt ].*)?\Z")
_UINT = "uint"  # resolved tag of an integer that fits uint64 but not int64


@dataclass(frozen=True)
class YamlDocument:
    """One non-empty document of a stream: plain data and where each node came from."""

    data: Any
    source: SourceMap
    index: int  # 0-based position among the stream's documents, empty ones included


class _YamlValueError(Exception):
    """A node that YAML accepts but Kubernetes' YAML-to-JSON conversion does not."""

    def __init__(self, message: str, event: Any) -> None:
        super().__init__(message)
        self.message = message
        self.event = event


def _parse_go_int(text: str) -> int | None:
    """Go's ``strconv.ParseInt(text, 0, 64)`` without the int64 range check."""
    sign = 1
    body = text
    if body[:1] in ("+", "-"):
        sign = -1 if body[0] == "-" else 1
        body = body[1:]
    if not _GO_INT.match(body):
        return None
    if len(body) > 1 and body[0] == "0" and body[1] not in "xXoObB":
        return sign * int(body[1:], 8)
    return sign * int(body, 0)


def _resolve(tag: str, text: str) -> tuple[str, Any]:
    """goyaml v2's ``resolve``: the tag a scalar resolves to and its value.

    >>> [_resolve("", text)[1] for text in ("0x1F", "yes", "1_000.5", "08", "1:30")]
    [31, True, 1000.5, 8.0, '1:30']
    """
    if not text:
        return _NULL, None
    first = text[0]
    if first in "yYnNtTfFoO~":
        return _WORDS.get(text, (_STR, text))
    if first == ".":
        word = _WORDS.get(text)
        if word is not None:
            return word
        if _DOT_FLOAT.match(text):
            value = float(text)
            if not math.isinf(value):
                return _FLOAT, value
        return _STR, text
    if first in "+-0123456789":
        word = _WORDS.get(text)
        if word is not None:
            return word
        if tag in ("", _TIMESTAMP) and _TIMESTAMP_RE.match(text):
            return _TIMESTAMP, text
        plain = text.replace("_", "")
        number = _parse_go_int(plain) if plain else None
        if number is not None:
            if _INT64_MIN <= number <= _INT64_MAX:
                return _INT, number
            if 0 <= number <= _UINT64_MAX and plain[0] not in "+-":
                return _UINT, number
        if _YAML_FLOAT.match(plain):
            value = float(plain)
            if not math.isinf(value):
                return _FLOAT, value
    return _STR, text


def _json_number(value: float, event: Any) -> int | float:
    """What a float becomes after Go's JSON marshal and the API server's JSON decode."""
    if math.isnan(value) or math.isinf(value):
        shown = "NaN" if math.isnan(value) else ("+Inf" if value > 0 else "-Inf")
        raise _YamlValueError(f"json: unsupported value: {shown}", event)
    if value.is_integer() and abs(value) < 1e21:
        # Go prints the shortest round-trip digits padded with zeros (2**62 -> 4611686018427388000)
        number = int(value) if abs(value) < 1e16 else int(Decimal(repr(value)))
        if _INT64_MIN <= number <= _INT64_MAX:
            return number
    return value


def _go_float32_key(value: float) -> str:
    """Go's ``FormatFloat(value, 'g', -1, 32)`` as sigs.k8s.io/yaml uses it for float keys."""
    if math.isnan(value):
        return ".nan"
    try:
        single = struct.unpack("f", struct.pack("f", value))[0]
    except OverflowError:
        single = math.inf if value > 0 else -math.inf
    if math.isinf(single):
        return ".inf" if single > 0 else "-.inf"
    if single == 0:
        return "-0" if math.copysign(1.0, single) < 0 else "0"
    for precision in range(1, 10):
        text = f"{single:.{precision - 1}e}"
        if struct.unpack("f", struct.pack("f", float(text)))[0] == single:
            break
    mantissa, exponent_text = text.split("e")
    negative = mantissa.startswith("-")
    digits = mantissa.lstrip("-").replace(".", "").rstrip("0") or "0"
    exponent = int(exponent_text)
    sign = "-" if negative else ""
    return layout(sign, digits, exponent, low=-4, high=6, exponent_digits=2)


def _tag_name(tag: str) -> str:
    return "!!" + tag[len(_Y) :] if tag.startswith(_Y) else tag


def _event_tag(event: Any) -> str | None:
    """An event's explicit tag (``None`` when untagged)."""
    ctag = event.ctag
    if ctag is None:
        return None
    return ctag if type(ctag) is str else str(ctag)


_HINTS = frozenset("yYnNtTfFoO~.+-0123456789")


def _scalar(event: ScalarEvent) -> tuple[str, Any]:
    """The resolved tag and JSON value of a scalar (before number normalisation)."""
    tag = _event_tag(event)
    text: str = event.value
    if tag is None or tag == "!":
        if tag is None and event.implicit[0]:
            return _resolve("", text)
        return _STR, text
    if tag == _STR:
        return _STR, text
    if tag == _BINARY:
        try:
            decoded = base64.b64decode("".join(text.split()), validate=True)
        except (binascii.Error, ValueError):
            raise _YamlValueError("!!binary value contains invalid base64 data", event) from None
        return _STR, decoded.decode("utf-8", errors="replace")
    if tag in (_INT, _FLOAT, _BOOL, _NULL, _TIMESTAMP):
        resolved, value = _resolve(tag, text)
        if resolved == _UINT and tag == _INT:
            resolved = _INT
        if resolved == tag:
            return resolved, value
        if tag == _FLOAT and resolved in (_INT, _UINT):
            return _FLOAT, float(value)
        shown = "!!int" if resolved == _UINT else _tag_name(resolved)
        raise _YamlValueError(f"cannot decode {shown} `{text}` as a {_tag_name(tag)}", event)
    raise _YamlValueError(f"unsupported YAML tag {_tag_name(tag)}", event)


def _scalar_value(event: ScalarEvent) -> Any:
    if event.ctag is None:
        text = event.value
        if event.implicit[0]:
            if text and text[0] not in _HINTS:
                return text  # the common case: a plain word that can only be a string
        else:
            return text
    tag, value = _scalar(event)
    if tag == _FLOAT:
        return _json_number(value, event)
    if tag == _UINT:
        return float(value)
    return value


def _key_text(event: ScalarEvent) -> str:
    """A mapping key as the string sigs.k8s.io/yaml turns it into."""
    if event.ctag is None:
        text: str = event.value
        if not event.implicit[0] or (text and text[0] not in _HINTS):
            return text
    tag, value = _scalar(event)
    if tag in (_STR, _TIMESTAMP):
        return str(value)
    if tag == _BOOL:
        return "true" if value else "false"
    if tag == _INT:
        return str(value)
    if tag == _FLOAT:
        return _go_float32_key(value)
    if tag == _NULL:
        raise _YamlValueError("unsupported map key: null", event)
    raise _YamlValueError(f"unsupported map key: {event.value} (beyond int64)", event)


def _is_plain_merge(event: Any) -> bool:
    return event.value == "<<" and event.ctag is None and bool(event.implicit[0])


_Positions = dict[JsonPath, tuple[int, int]]
_MAX_NODES = 400_000  # alias expansion budget, like goyaml's "excessive aliasing" guard


class _Builder:
    """Builds plain data from parser events, recording each node's position by JSON path
    (when ``record``; without, a duplicate key is reported without its first line).

    Anchored nodes are recorded as their event slice and replayed for each alias, so an
    alias yields an independent copy (later stages may mutate it) positioned at the anchor.
    ``next`` is the parser's own ``get_event`` unless a recording or a replay is under way.
    """

    __slots__ = (
        "anchors",
        "base",
        "count",
        "next",
        "positions",
        "record",
        "recorders",
        "replaying",
        "source",
    )

    def __init__(self, get_event: Callable[[], Any], record: bool = True, base: int = 1) -> None:
        self.record = record
        self.base = base  # the line number of the text's first line
        self.source = get_event
        self.next = get_event
        self.positions: _Positions = {}
        self.anchors: dict[str, list[Any]] = {}
        self.recorders: list[list[Any]] = []
        self.replaying: list[str] = []
        self.count = 0

    def recording_next(self) -> Any:
        event = self.source()
        for recorder in self.recorders:
            recorder.append(event)
        return event

    def node(self, event: Any, path: JsonPath) -> Any:
        cls = type(event)
        if cls is AliasEvent:
            return self.alias(event, path)
        if event.anchor is not None:
            return self.anchored(event, path)
        if cls is ScalarEvent:
            return _scalar_value(event)
        if cls is MappingStartEvent:
            return self.mapping(event, path)
        if cls is SequenceStartEvent:
            return self.sequence(event, path)
        raise _YamlValueError(f"unexpected YAML event {cls.__name__}", event)  # pragma: no cover

    def anchored(self, event: Any, path: JsonPath) -> Any:
        self.recorders.append([event])
        self.next = self.recording_next
        try:
            cls = type(event)
            if cls is ScalarEvent:
                return _scalar_value(event)
            if cls is MappingStartEvent:
                return self.mapping(event, path)
            return self.sequence(event, path)
        finally:
            self.anchors[event.anchor] = self.recorders.pop()
            if not self.recorders:
                self.next = self.source

    def alias(self, event: Any, path: JsonPath) -> Any:
        name = event.anchor
        recorded = self.anchors.get(name)
        if recorded is None:
            raise _YamlValueError(f"found undefined alias {name!r}", event)
        if name in self.replaying:
            raise _YamlValueError("recursive alias: a node cannot contain itself", event)
        self.count += len(recorded)
        if self.count > _MAX_NODES:
            raise _YamlValueError("document contains excessive aliasing", event)
        # Inside an anchored node being recorded, the alias is recorded as what it
        # replays, not as itself: kept too, a later alias of the outer node would expand
        # this one twice (once from the alias, once from its replayed events).
        for recorder in self.recorders:
            if recorder[-1] is event:
                recorder.pop()
        saved = self.source
        self.source = iter(recorded).__next__
        self.next = self.recording_next if self.recorders else self.source
        self.replaying.append(name)
        try:
            return self.node(self.next(), path)
        finally:
            self.replaying.pop()
            self.source = saved
            self.next = self.recording_next if self.recorders else saved

    def collection_tag(self, event: Any, expected: str) -> None:
        tag = _event_tag(event)
        if tag is not None and tag != "!" and tag != expected:
            raise _YamlValueError(f"unsupported YAML tag {_tag_name(tag)}", event)

    def sequence(self, start: Any, path: JsonPath) -> list[Any]:
        if start.ctag is not None:
            self.collection_tag(start, _SEQ)
        positions = self.positions
        record = self.record
        out: list[Any] = []
        append = out.append
        index = 0
        while True:
            event = self.next()
            cls = type(event)
            if cls is SequenceEndEvent:
                return out
            if record:
                child = (*path, index)
                mark = event.start_mark
                positions[child] = (mark.line + self.base, mark.column + 1)
            else:
                child = path  # not recorded: children need no paths of their own
            if cls is ScalarEvent and event.anchor is None:
                append(_scalar_value(event))
            else:
                append(self.node(event, child))
            index += 1

    def mapping(self, start: Any, path: JsonPath) -> dict[str, Any]:
        if start.ctag is not None:
            self.collection_tag(start, _MAP)
        positions = self.positions
        record = self.record
        next_event = self.next
        out: dict[str, Any] = {}
        merges: list[list[tuple[dict[str, Any], _Positions]]] = []
        while True:
            event = next_event()
            cls = type(event)
            if cls is not ScalarEvent:
                if cls is MappingEndEvent:
                    break
                if cls is AliasEvent:
                    raise _YamlValueError(
                        "an alias cannot be a mapping key in Kubernetes YAML", event
                    )
                raise _YamlValueError(
                    "invalid map key: a mapping or sequence cannot be a key", event
                )
            text = event.value
            if text == "<<" and _is_plain_merge(event):
                merges.append(self.merge_source(path))
                next_event = self.next
                continue
            if event.ctag is None and (not event.implicit[0] or (text and text[0] not in _HINTS)):
                key = text  # the common case: a plain or quoted word (as _key_text gives)
            else:
                key = _key_text(event)
            if record:
                child = (*path, key)
                if key in out:
                    line = positions[child][0]
                    raise _YamlValueError(
                        f'mapping key "{key}" already defined at line {line}', event
                    )
                mark = event.start_mark
                positions[child] = (mark.line + self.base, mark.column + 1)
            else:
                child = path  # not recorded: children need no paths of their own
                if key in out:
                    raise _YamlValueError(f'mapping key "{key}" already defined', event)
            value = next_event()
            if type(value) is ScalarEvent and value.anchor is None:
                out[key] = _scalar_value(value)
            else:
                out[key] = self.node(value, child)
                next_event = self.next  # an anchor or alias may have switched the source
        for sources in merges:
            self.merge(out, sources, path)
        return out

    def merge_source(self, path: JsonPath) -> list[tuple[dict[str, Any], _Positions]]:
        """The maps a ``<<`` value merges in, each with its positions (built aside)."""
        saved = self.positions
        self.positions = {}
        try:
            event = self.next()
            value = self.node(event, path)
            scratch = self.positions
        finally:
            self.positions = saved
        if type(value) is dict:
            return [(value, scratch)]
        if type(value) is list and all(type(item) is dict for item in value):
            depth = len(path)
            sources = []
            for index, item in enumerate(value):
                prefix = (*path, index)
                sub = {
                    (*path, *p[depth + 1 :]): pos
                    for p, pos in scratch.items()
                    if p[: depth + 1] == prefix
                }
                sources.append((item, sub))
            return sources
        raise _YamlValueError("map merge requires map or sequence of maps as the value", event)

    def merge(
        self,
        out: dict[str, Any],
        sources: list[tuple[dict[str, Any], _Positions]],
        path: JsonPath,
    ) -> None:
        """Add the keys of merge sources not set yet (explicit keys and earlier sources win)."""
        depth = len(path) + 1
        for data, scratch in sources:
            for key, value in data.items():
                if key in out:
                    continue
                out[key] = value
                prefix = (*path, key)
                for sub, position in scratch.items():
                    if sub[:depth] == prefix:
                        self.positions[sub] = position


# --- parsers -----------------------------------------------------------------------


def _events_pure(text: str) -> tuple[Callable[[], Any], Callable[[], None]]:
    """``(get_event, dispose)`` of the pure-Python parser (YAML 1.1 scanning, like libyaml)."""
    from ruamel.yaml import YAML

    yaml = YAML(typ="safe", pure=True)
    yaml.version = (1, 1)
    events = iter(yaml.parse(text))
    return (lambda: next(events, None)), (lambda: None)


_EventsFn = Callable[[str], tuple[Callable[[], Any], Callable[[], None]]]
_events: _EventsFn = _events_pure

try:  # pragma: no cover - depends on the optional C extension
    from ruamel.yaml.cyaml import CParser  # type: ignore[attr-defined]

    def _events_c(text: str) -> tuple[Callable[[], Any], Callable[[], None]]:
        """``(get_event, dispose)`` of libyaml (ruamel.yaml.clibz)."""
        parser = CParser(text)
        return parser.get_event, parser.dispose

    _events = _events_c
    _C_PARSER = True
except ImportError:  # pragma: no cover - exercised when the C extension is absent
    _C_PARSER = False


def c_parser_available() -> bool:
    """Whether the fast libyaml-based parser is in use."""
    return _C_PARSER


# --- entry points ------------------------------------------------------------------


def _is_empty(event: Any) -> bool:
    """A document with no content (only comments), or just ``null``."""
    if type(event) is not ScalarEvent:
        return False
    tag = _event_tag(event)
    if tag is None:
        return bool(event.implicit[0]) and _resolve("", event.value)[0] == _NULL
    return tag == _NULL


def _location_of_offset(file: str, text: str, offset: int, first_line: int = 1) -> SourceLocation:
    line = text.count("\n", 0, offset) + first_line
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return SourceLocation(file, line, column)


def _yaml_problem(error: YAMLError, file: str, text: str, first_line: int = 1) -> Problem:
    if isinstance(error, MarkedYAMLError) and error.problem_mark is not None:
        mark = error.problem_mark
        message = f"invalid YAML: {error.problem}"
        if error.context and error.context_mark is not None:
            context = error.context_mark
            where = f"line {context.line + first_line}, column {context.column + 1}"
            message += f" ({error.context} started at {where})"
        return Problem(message, SourceLocation(file, mark.line + first_line, mark.column + 1))
    if isinstance(error, ReaderError):
        text_error = f"invalid YAML: unacceptable character #x{error.character:04x}"
        return Problem(text_error, _location_of_offset(file, text, error.position, first_line))
    return Problem(f"invalid YAML: {error}", SourceLocation(file))


def _decoded(text: str | bytes, file: str, first_line: int = 1) -> str | Problem:
    """The text of a stream, or the problem that it is not UTF-8 (a BOM is dropped)."""
    if isinstance(text, bytes):
        try:
            return text.decode("utf-8-sig")
        except UnicodeDecodeError as error:
            before = text[: error.start].decode("utf-8", "replace")
            location = _location_of_offset(file, before, len(before), first_line)
            return Problem("invalid YAML: the file is not UTF-8 text", location)
    return text[1:] if text.startswith("\ufeff") else text


class YamlStream:
    """The non-empty documents of one stream, built one at a time as they are iterated.

    A caller that handles each document and drops it (the loader) needs memory for one
    document at a time, not for the whole stream; after the iteration :attr:`problems`
    holds the problem that stopped it, if any (at most one). A stream of more than
    :func:`max_file_documents` documents (empty ones included: each costs time) stops
    there with a problem at the first one too many. ``positions`` as in
    :func:`parse_yaml_collect`. ``first_line``: the line of ``file`` the text starts at
    (a range of a file's documents, :mod:`compiler.load.ranges`): every position and
    problem is located in the file, as reading it whole would.
    """

    def __init__(
        self,
        text: str | bytes,
        file: str = "<string>",
        positions: bool = False,
        first_line: int = 1,
    ) -> None:
        self.file = file
        self.positions = positions
        self.first_line = first_line
        self.problems: list[Problem] = []
        self.too_many = False  # stopped at the document limit
        self._text = _decoded(text, file, first_line)

    def __iter__(self) -> Iterator[YamlDocument]:
        if isinstance(self._text, Problem):
            self.problems = [self._text]
            return
        text = self._text
        first = self.first_line
        stream = None if self.positions else _StreamPositions(text, self.file, first)
        limit = max_file_documents()
        for item in _documents(text, self.file, self.positions, stream, limit, first_line=first):
            if isinstance(item, Problem):
                self.problems = [item]
                self.too_many = item.message == too_many_documents(limit)
                return
            yield item


def parse_yaml_collect(
    text: str | bytes, file: str = "<string>", positions: bool = False
) -> tuple[list[YamlDocument], list[Problem]]:
    """All non-empty documents of a stream, and the problems found (at most one per stream).

    A syntax error stops the stream: documents before it are returned, later ones are not.
    With ``positions`` every node's position is recorded while parsing; without, each
    document's :class:`SourceMap` works them out on first use, by parsing the stream
    again (most documents are never asked: recording costs about a fifth of the parse).
    """
    stream = YamlStream(text, file, positions)
    documents = list(stream)
    return documents, stream.problems


class _StreamPositions:
    """The positions of every document of a stream, worked out together on first use."""

    __slots__ = ("by_index", "file", "first_line", "text")

    def __init__(self, text: str, file: str, first_line: int = 1) -> None:
        self.text = text
        self.file = file
        self.first_line = first_line
        self.by_index: dict[int, _Positions] | None = None

    def of(self, index: int) -> Callable[[], _Positions]:
        def compute() -> _Positions:
            if self.by_index is None:
                self.by_index = {
                    d.index: d.source.positions
                    for d in _documents(
                        self.text, self.file, True, None, None, first_line=self.first_line
                    )
                    if isinstance(d, YamlDocument)
                }
            return self.by_index.get(index, {})

        return compute


def _problem_recorded(text: str, file: str, index: int, first_line: int) -> Problem | None:
    """The problem of document ``index`` found again with positions recorded (a duplicate
    key's message names the line of the first one)."""
    for item in _documents(text, file, False, None, None, recorded=index, first_line=first_line):
        if isinstance(item, Problem):
            return item
    return None  # pragma: no cover - the same text fails the same way


def _libyaml_only(error: YAMLError) -> bool:
    """Whether ``error`` is the one libyaml refusal kubectl's reader does not share.

    The libyaml inside ruamel.yaml.clibz ends a plain scalar inside a flow collection at
    any ``:`` (``{image: repo:5000/x}``, ``[a:b]``); sigs.k8s.io/yaml (go.yaml.in/yaml/v2,
    what kubectl reads with) and ruamel's pure-Python scanner take the ``:`` as part of
    the scalar when no blank follows it.
    """
    return isinstance(error, MarkedYAMLError) and error.problem == "found unexpected ':'"


def _documents(
    text: str,
    file: str,
    record: bool,
    stream: _StreamPositions | None,
    limit: int | None,
    recorded: int | None = None,
    first_line: int = 1,
    events: _EventsFn | None = None,
) -> Iterator[YamlDocument | Problem]:
    """The documents of ``text`` one by one, then the problem that stopped them, if any.

    ``record``: positions recorded while parsing; else each document's are worked out
    later by ``stream``. ``recorded``: only that document's positions are recorded
    (the others are skipped, not yielded). ``limit``: documents at most (None: any).
    ``first_line``: the line number of the text's first line. ``events``: the parser
    (default: libyaml when installed). Where libyaml refuses what kubectl reads
    (:func:`_libyaml_only`), the stream is read again with the pure-Python parser from
    the start, and the documents already yielded are skipped.
    """
    base = first_line
    events = events or _events
    get_event, dispose = events(text)
    yielded = -1  # the index of the last document yielded
    try:
        index = -1
        while (event := get_event()) is not None:
            if type(event) is not DocumentStartEvent:
                continue
            index += 1
            if limit is not None and index >= limit:
                mark = event.start_mark
                where = SourceLocation(file, mark.line + base, mark.column + 1)
                yield Problem(too_many_documents(limit), where)
                return
            builder = _Builder(get_event, record or index == recorded, base)
            root = get_event()
            if type(root) is DocumentEndEvent:
                continue
            try:
                data = builder.node(root, ())
            except _YamlValueError as error:
                if not builder.record:
                    problem = _problem_recorded(text, file, index, base)
                    if problem is not None:
                        yield problem
                        return
                mark = error.event.start_mark
                where = SourceLocation(file, mark.line + base, mark.column + 1)
                yield Problem(error.message, where)
                return
            except RecursionError:
                where = SourceLocation(file, root.start_mark.line + base, 1)
                yield Problem("document is nested too deeply", where)
                return
            if _is_empty(root) or (recorded is not None and index != recorded):
                continue
            start = root.start_mark
            if stream is None:
                builder.positions[()] = (start.line + base, start.column + 1)
                source = SourceMap(file, builder.positions)
            else:
                root_at = (start.line + base, start.column + 1)
                source = SourceMap(file, compute=stream.of(index), root=root_at)
            yielded = index
            yield YamlDocument(data, source, index)
    except YAMLError as error:
        if events is _events_pure or not _libyaml_only(error):
            yield _yaml_problem(error, file, text, base)
            return
        again = _documents(text, file, record, stream, limit, recorded, base, _events_pure)
        yield from (item for item in again if isinstance(item, Problem) or item.index > yielded)
    except RecursionError:
        yield Problem("invalid YAML: nested too deeply", SourceLocation(file))
    finally:
        dispose()


def parse_yaml(text: str | bytes, file: str = "<string>") -> list[YamlDocument]:
    """The documents of a YAML stream; an :class:`InputError` if it is not valid.

    >>> [d.data for d in parse_yaml("a: 1\\n---\\n# empty\\n---\\nb: [x, 'y']\\n")]
    [{'a': 1}, {'b': ['x', 'y']}]
    """
    documents, problems = parse_yaml_collect(text, file)
    if problems:
        raise InputError(problems)
    return documents


def read_yaml(path: str | Path, display: str | None = None) -> list[YamlDocument]:
    """The documents of a file (``display`` names it in positions and messages)."""
    name = display if display is not None else str(path)
    return parse_yaml(read_source(path, name), name)
