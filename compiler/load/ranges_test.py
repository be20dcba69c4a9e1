"""Document ranges read as the file read whole: same documents, positions and problems."""

from __future__ import annotations

import itertools

import pytest

from compiler.apiserver import yaml_source
from compiler.apiserver.yaml_source import YamlStream
from compiler.load.ranges import DocumentRange, document_ranges

DOC = "kind: TrainJob\nmetadata:\n  name: job-{i}\nspec:\n  env: [{{name: A, value: '{i}'}}]\n"


def read(text: bytes, first_line: int = 1) -> tuple[list[object], list[str]]:
    stream = YamlStream(text, "f.yaml", positions=True, first_line=first_line)
    documents: list[object] = [(d.data, sorted(d.source.positions.items())) for d in stream]
    return documents, [f"{p.location}: {p.message}" for p in stream.problems]


def by_ranges(text: bytes, target: int = 1) -> tuple[list[object], list[str]]:
    ranges = document_ranges(text, target, 1000, 100_000)
    assert ranges is not None, text
    assert ranges[0].start == 0 and ranges[-1].end == len(text)
    assert all(a.end == b.start for a, b in itertools.pairwise(ranges))
    documents: list[object] = []
    problems: list[str] = []
    for piece in ranges:
        found, stopped = read(text[piece.start : piece.end], piece.first_line)
        documents += found
        problems += stopped
        if stopped:
            break  # a stream stops at its first problem (and the render goes whole)
    return documents, problems


def joined(*documents: str, separator: str = "---\n") -> bytes:
    return separator.join(documents).encode()


CASES = {
    "plain": joined(*(DOC.format(i=i) for i in range(12))),
    "leading and trailing separators": b"---\n"
    + joined(*(DOC.format(i=i) for i in range(9)))
    + b"---\n",
    "comments and empty documents": joined(
        "# head\n",
        *(DOC.format(i=i) for i in range(6)),
        "# only a comment\n",
        "~\n",
        DOC.format(i=9),
    ),
    "CRLF": joined(*(DOC.format(i=i) for i in range(8))).replace(b"\n", b"\r\n"),
    "byte order mark": b"\xef\xbb\xbf" + joined(*(DOC.format(i=i) for i in range(8))),
    "block scalar with an indented ---": joined(
        *(DOC.format(i=i) + "  script: |\n    echo a\n    ---\n    echo b\n" for i in range(8))
    ),
    "--- with a comment or content (no cut there)": joined(
        *(DOC.format(i=i) for i in range(8)), separator="--- # next\n"
    )
    + b"--- {kind: TrainJob}\n---   \n"
    + DOC.format(i=20).encode(),
    "document end markers": joined(*(DOC.format(i=i) + "...\n" for i in range(8))),
    "top-level block scalars": joined(*(f"|\n  text {i}\n  ---\n" for i in range(8)))
    + b"--- |\n  last\n",
    "a syntax error in a later range": joined(
        *(DOC.format(i=i) for i in range(6)), "kind: [x\n", DOC.format(i=7)
    ),
    "a duplicate key in a later range": joined(
        *(DOC.format(i=i) for i in range(6)), "a: 1\nb: 2\na: 3\n", DOC.format(i=7)
    ),
    "an indented --- in a plain scalar": joined(
        *(f"a: one\n  two\n ---\n  three {i}\n" for i in range(8))
    ),
}


@pytest.mark.parametrize("parser", ["libyaml", "pure"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_ranges_read_as_the_whole_file(
    case: str, parser: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if parser == "pure":
        monkeypatch.setattr(yaml_source, "_events", yaml_source._events_pure)
    elif not yaml_source.c_parser_available():
        pytest.fail("libyaml (ruamel.yaml.clibz) is not installed", pytrace=False)
    text = CASES[case]
    documents, problems = by_ranges(text)
    whole = read(text)
    assert documents == whole[0]
    if "syntax" in case:  # located alike; what follows the range's end may be named
        # otherwise ('<stream end>' for '<document start>'): the render is whole then
        problems, whole = (
            [p.split(": ")[0] for p in problems],
            ([], [w.split(": ")[0] for w in whole[1]]),
        )
    assert problems == whole[1]


def test_a_problem_in_a_later_range_is_located_in_the_file() -> None:
    text = CASES["a duplicate key in a later range"]
    ranges = document_ranges(text, 2, 1000, 100_000)
    assert ranges is not None and ranges[-1].first_line > 1
    problems = by_ranges(text)[1]
    assert problems == read(text)[1]
    assert problems == ['f.yaml:39:1: mapping key "a" already defined at line 37']


@pytest.mark.parametrize(
    "text",
    [
        b"%YAML 1.1\n---\na: 1\n---\nb: 2\n",
        b"a: 1\n---\nb: 2\n---\n%TAG ! tag:x,2000:\n---\nc: 3\n",
        b"a: 1\r---\rb: 2\n---\nc: 3\n",
        "a: 1\n---\nb: 2\u2028---\nc: 3\n".encode(),
        b"a: 1\n---\n\xef\xbb\xbfb: 2\n---\nc: 3\n",
        b"a: 1\n",  # one document: nothing to cut
    ],
)
def test_files_that_are_not_cut(text: bytes) -> None:
    assert document_ranges(text, 1, 1000, 100_000) is None


def test_a_file_over_the_document_limit_is_not_cut() -> None:
    text = joined(*(DOC.format(i=i) for i in range(10)))
    assert document_ranges(text, 1, 1000, 10) is not None
    assert document_ranges(text, 1, 1000, 9) is None
    assert document_ranges(b"---\n" + text, 1, 1000, 10) is not None  # no implicit first
    assert document_ranges(text + b"--- x\n", 1, 1000, 10) is None  # its own document


def test_an_edit_moves_only_the_boundaries_next_to_it() -> None:
    documents = [DOC.format(i=i) for i in range(400)]
    before = document_ranges(joined(*documents), 10, 100, 100_000)
    documents[200] = documents[200].replace("job-200", "job-200-edited")
    documents.insert(100, DOC.format(i=1000))
    after = document_ranges(joined(*documents), 10, 100, 100_000)
    assert before is not None and after is not None
    assert 20 <= len(before) <= 80  # about 10 documents a range

    def pieces(text: bytes, ranges: list[DocumentRange]) -> set[bytes]:
        return {text[r.start : r.end] for r in ranges}

    old, new = (
        pieces(joined(*[DOC.format(i=i) for i in range(400)]), before),
        pieces(joined(*documents), after),
    )
    assert len(old - new) <= 4  # the ranges of the two edits, and a neighbour each
    assert max(r.documents for r in before) <= 100


def test_documents_apart_are_kept_in_ranges_of_their_own() -> None:
    runtime = "kind: ClusterTrainingRuntime\nmetadata: {name: rt-%d}\n"
    documents = [DOC.format(i=i) for i in range(30)]
    for at in (0, 7, 8, 20):
        documents.insert(at, runtime % at)
    text = joined(*documents)
    ranges = document_ranges(text, 3, 1000, 100_000, lambda d: b"Runtime" in d)
    assert ranges is not None
    for piece in ranges:
        held = text[piece.start : piece.end].split(b"---\n")
        held = [d for d in held if d]
        assert all((b"Runtime" in d) == piece.apart for d in held), piece
    assert sum(r.documents for r in ranges if r.apart) == 4
    assert by_ranges(text) == read(text)
