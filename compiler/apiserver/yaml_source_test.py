"""YAML -> plain data + positions, read the way kubectl / the API server read it.

Expected scalar values were checked against sigs.k8s.io/yaml v1.6.0 (YAMLToJSON) followed
by the API server's JSON decode.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import pytest

import compiler.apiserver.yaml_source as ys
from compiler.apiserver.yaml_source import parse_yaml, parse_yaml_collect
from compiler.errors import InputError

PARSERS = [
    "pure",
    "c",  # ruamel.yaml.clibz is a pinned dependency (test_c_and_pure_parsers_agree fails without)
]


@pytest.fixture(params=PARSERS)
def parser(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Run a test with the pure-Python and with the libyaml event source."""
    if request.param == "pure":
        monkeypatch.setattr(ys, "_events", ys._events_pure)
    yield request.param


def one(text: str) -> Any:
    [document] = parse_yaml(text, "t.yaml")
    return document.data


def problems(text: str | bytes) -> list[str]:
    return [str(p) for p in parse_yaml_collect(text, "t.yaml")[1]]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("yes", True),
        ("Yes", True),
        ("on", True),
        ("ON", True),
        ("y", True),
        ("no", False),
        ("off", False),
        ("n", False),
        ("True", True),
        ("tRue", "tRue"),
        ("yEs", "yEs"),
        ("~", None),
        ("null", None),
        ("", None),
        ("0x1F", 31),
        ("0o17", 15),
        ("017", 15),
        ("08", 8),
        ("1_000", 1000),
        ("+1", 1),
        ("-0", 0),
        ("1e3", 1000),
        ("2.0", 2),
        ("2.", 2),
        ("1.5", 1.5),
        (".5", 0.5),
        ("-.5", -0.5),
        ("9223372036854775807", 9223372036854775807),
        ("9223372036854775808", 9.223372036854776e18),
        ("18446744073709551615", 1.8446744073709552e19),
        ("-9223372036854775809", -9.223372036854776e18),
        ("4611686018427387904.0", 4611686018427388000),
        ("1e21", 1e21),
        ("1e400", "1e400"),
        ("2024-01-01", "2024-01-01"),
        ("1:30", "1:30"),
        ("0.1.2", "0.1.2"),
        ("-x", "-x"),
        ("0x", "0x"),
    ],
)
def test_plain_scalars_follow_goyaml_v2_and_json(parser: str, text: str, value: Any) -> None:
    data = one(f"v: {text}\n")
    assert data == {"v": value}
    assert type(data["v"]) is type(value)


def test_quoted_and_block_scalars_are_strings(parser: str) -> None:
    text = (
        "a: 'yes'\nb: \"1\"\nc: |\n  block\n  text\nd: >-\n  folded\n  text\ne: !!str 12\nf: ! 13\n"
    )
    assert one(text) == {
        "a": "yes",
        "b": "1",
        "c": "block\ntext\n",
        "d": "folded text",
        "e": "12",
        "f": "13",
    }


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("yes", "true"),
        ("n", "false"),
        ("1", "1"),
        ("1.5", "1.5"),
        ("2e7", "2e+07"),
        ("0.0001", "0.0001"),
        ("1e6", "1e+06"),
        ("123456", "123456"),
        ("0x10", "16"),
        ("2024-01-01", "2024-01-01"),
    ],
)
def test_keys_become_strings_like_sigs_yaml(parser: str, text: str, key: str) -> None:
    assert one(f"{text}: v\n") == {key: "v"}


def test_explicit_tags(parser: str) -> None:
    assert one(
        "a: !!int '7'\nb: !!float 1\nc: !!binary aGVsbG8=\nd: !!map {x: 1}\ne: !!seq [1]\n"
    ) == {
        "a": 7,
        "b": 1,
        "c": "hello",
        "d": {"x": 1},
        "e": [1],
    }
    assert problems("a: !!int abc\n") == ["t.yaml:1:4: cannot decode !!str `abc` as a !!int"]
    assert problems("a: !custom x\n") == ["t.yaml:1:4: unsupported YAML tag !custom"]
    assert problems("a: !!set {x}\n") == ["t.yaml:1:4: unsupported YAML tag !!set"]


def test_values_json_cannot_hold_are_errors(parser: str) -> None:
    assert problems("a:\n  b: .nan\n") == ["t.yaml:2:6: json: unsupported value: NaN"]
    assert problems("a: -.inf\n") == ["t.yaml:1:4: json: unsupported value: -Inf"]
    assert problems("~: x\n") == ["t.yaml:1:1: unsupported map key: null"]
    assert problems("? [a]\n: b\n") == [
        "t.yaml:1:3: invalid map key: a mapping or sequence cannot be a key"
    ]


def test_positions_of_keys_and_items(parser: str) -> None:
    text = "spec:\n  trainer:\n    numNodes: 2\n    command:\n      - torchrun\n      - train.py\n"
    [doc] = parse_yaml(text, "t.yaml")
    positions = doc.source.positions
    assert positions[()] == (1, 1)
    assert positions[("spec",)] == (1, 1)
    assert positions[("spec", "trainer", "numNodes")] == (3, 5)
    assert positions[("spec", "trainer", "command", 0)] == (5, 9)
    assert positions[("spec", "trainer", "command", 1)] == (6, 9)
    assert str(doc.source.locate(("spec", "trainer", "numNodes"))) == "t.yaml:3:5"


def test_positions_in_flow_style(parser: str) -> None:
    text = "a: {b: [1, {c: x, d: [y, z]}], e: f}\n"
    [doc] = parse_yaml(text, "t.yaml")
    positions = doc.source.positions
    assert positions[("a", "b")] == (1, 5)
    assert positions[("a", "b", 0)] == (1, 9)
    assert positions[("a", "b", 1)] == (1, 12)
    assert positions[("a", "b", 1, "c")] == (1, 13)
    assert positions[("a", "b", 1, "d", 1)] == (1, 26)
    assert positions[("a", "e")] == (1, 32)


def test_positions_in_nested_lists(parser: str) -> None:
    text = "- - a\n  - - b\n    - c\n- d\n"
    [doc] = parse_yaml(text, "t.yaml")
    assert doc.data == [["a", ["b", "c"]], "d"]
    positions = doc.source.positions
    assert positions[(0, 0)] == (1, 5)
    assert positions[(0, 1, 0)] == (2, 7)
    assert positions[(0, 1, 1)] == (3, 7)
    assert positions[(1,)] == (4, 3)


def test_multi_document_streams_skip_empty_documents(parser: str) -> None:
    text = "a: 1\n---\n# only a comment\n---\n---\nnull\n---\nb:\n  - x\n...\n"
    documents = parse_yaml(text, "t.yaml")
    assert [d.data for d in documents] == [{"a": 1}, {"b": ["x"]}]
    assert [d.index for d in documents] == [0, 4]
    assert documents[1].source.positions[("b", 0)] == (9, 5)
    assert documents[1].source.positions[()] == (8, 1)


def test_duplicate_key_is_reported_at_the_second_occurrence(parser: str) -> None:
    text = "spec:\n  a: 1\n  b: 2\n  a: 3\n"
    assert problems(text) == ['t.yaml:4:3: mapping key "a" already defined at line 2']
    # keys that become the same string are duplicates too
    assert problems("yes: 1\ntrue: 2\n") == [
        't.yaml:2:1: mapping key "true" already defined at line 1'
    ]


def test_syntax_errors_name_file_line_and_column(parser: str) -> None:
    [message] = problems("a:\n  b: [1, 2\nc: 3\n")
    assert message.startswith("t.yaml:3:")
    assert "invalid YAML" in message and "flow sequence started at line 2, column 6" in message
    [message] = problems("a: b: c\n")
    assert message.startswith("t.yaml:1:5: invalid YAML: mapping values are not allowed")
    [message] = problems("\tkey: 1\n")
    assert message.startswith("t.yaml:1:1: invalid YAML: found character")
    assert problems("a: \x07\n") == ["t.yaml:1:4: invalid YAML: unacceptable character #x0007"]
    assert problems(b"a: 1\nb: \xff\n") == ["t.yaml:2:4: invalid YAML: the file is not UTF-8 text"]


def test_documents_before_a_syntax_error_are_kept(parser: str) -> None:
    documents, found = parse_yaml_collect("a: 1\n---\nb: [\n", "t.yaml")
    assert [d.data for d in documents] == [{"a": 1}]
    assert len(found) == 1


def test_parse_yaml_raises_one_input_error(parser: str) -> None:
    with pytest.raises(InputError) as error:
        parse_yaml("a: [\n", "t.yaml")
    assert str(error.value).startswith("t.yaml:2:1: invalid YAML")


def test_anchors_aliases_and_merge_keys(parser: str) -> None:
    text = (
        "base: &base {image: w, cpu: 1}\n"
        "other: &other {cpu: 2, memory: 4}\n"
        "job:\n"
        "  <<: [*base, *other]\n"
        "  image: z\n"
        "copy: *base\n"
    )
    [doc] = parse_yaml(text, "t.yaml")
    assert doc.data["job"] == {"image": "z", "cpu": 1, "memory": 4}
    assert doc.data["copy"] == {"image": "w", "cpu": 1}
    assert doc.data["copy"] is not doc.data["base"]  # aliases are independent copies
    positions = doc.source.positions
    assert positions[("job", "image")] == (5, 3)  # the explicit key
    assert positions[("job", "cpu")] == (1, 24)  # merged from the anchor
    assert positions[("job", "memory")] == (2, 24)
    assert positions[("copy", "image")] == (1, 14)


def test_an_alias_of_a_node_holding_an_alias_expands_it_once(parser: str) -> None:
    # found by the live fuzz: a runtime's shared volumeMounts list holding an aliased
    # mount gave a Duplicate value where the API server (goyaml) reads one mount
    text = (
        "mount: &mount {name: data}\n"
        "mounts: &mounts [*mount]\n"
        "again: *mounts\n"
        "nested: &nested {m: *mounts, k: [*mount, *mounts]}\n"
        "deeper: [*nested]\n"
    )
    [doc] = parse_yaml(text, "t.yaml")
    assert doc.data["mounts"] == [{"name": "data"}]
    assert doc.data["again"] == [{"name": "data"}]
    expected = {"m": [{"name": "data"}], "k": [{"name": "data"}, [{"name": "data"}]]}
    assert doc.data["nested"] == expected
    assert doc.data["deeper"] == [expected]
    assert doc.source.positions[("again", 0, "name")] == (1, 16)  # at the anchor


def test_bad_aliases(parser: str) -> None:
    assert problems("a: *nope\n")[0].startswith("t.yaml:1:4:")
    assert "undefined alias" in problems("- &a [*a]\n")[0]
    assert problems("*x : 1\n") == [
        "t.yaml:1:1: an alias cannot be a mapping key in Kubernetes YAML"
    ]


def test_alias_bombs_are_stopped(parser: str) -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 7)]
    [message] = problems("\n".join(lines) + "\n")
    assert message.endswith("document contains excessive aliasing")


def test_plain_python_data_only(parser: str) -> None:
    text = "a: [1, 2.5, true, null, 'x', {b: [c]}]\nd: &x {e: 1}\nf: *x\n"

    def walk(value: Any) -> None:
        assert type(value) in (dict, list, str, int, float, bool, type(None)), type(value)
        if isinstance(value, dict):
            assert all(type(k) is str for k in value)
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(one(text))


def test_bom_and_bytes_input(parser: str) -> None:
    assert parse_yaml(b"\xef\xbb\xbfa: 1\n", "t.yaml")[0].data == {"a": 1}
    assert parse_yaml("\ufeffa: 1\n", "t.yaml")[0].data == {"a": 1}


def test_c_and_pure_parsers_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    if not ys.c_parser_available():
        pytest.fail(
            "no C parser: ruamel.yaml.clibz (a pinned dependency) is not importable", pytrace=False
        )
    text = (
        "a: yes\nb: [1, {c: 0x10}]\nd: |\n  x\ne: &e {f: 1.0}\ng: *e\nh:\n  <<: *e\n  i: ~\n"
        "---\n- 'q'\n- \"r\"\n"
    )
    fast = [(d.data, d.source.positions) for d in parse_yaml(text, "t.yaml")]
    monkeypatch.setattr(ys, "_events", ys._events_pure)
    slow = [(d.data, d.source.positions) for d in parse_yaml(text, "t.yaml")]
    assert fast == slow
    assert math.isclose(fast[0][0]["e"]["f"], 1)


REPO = __import__("pathlib").Path(__file__).resolve().parents[2]
MERGES_AND_ALIASES = """\
base: &base {image: x, env: [{name: A, value: "1"}]}
jobs:
  - <<: *base
    name: one
  - <<: [*base, {extra: true}]
    name: two
---
# empty
---
- [a, {b: c}]
- *base
"""


def test_positions_worked_out_later_equal_those_recorded_while_parsing() -> None:
    texts = [MERGES_AND_ALIASES]
    for folder in ("golden", "example", "overlays", "policies", "tests/fixtures"):
        texts += [p.read_bytes() for p in sorted((REPO / folder).rglob("*.yaml"))]
    compared = 0
    for text in texts:
        lazy, lazy_problems = parse_yaml_collect(text, "f.yaml")
        eager, eager_problems = parse_yaml_collect(text, "f.yaml", positions=True)
        assert lazy_problems == eager_problems
        assert [d.data for d in lazy] == [d.data for d in eager]
        for later, recorded in zip(lazy, eager, strict=True):
            assert later.source.positions == recorded.source.positions
            compared += 1
    assert compared > 500


def test_a_whole_document_is_located_without_working_out_its_positions() -> None:
    texts = [MERGES_AND_ALIASES]
    texts += [p.read_bytes() for p in sorted((REPO / "golden").rglob("*.yaml"))]
    compared = 0
    for text in texts:
        lazy, _ = parse_yaml_collect(text, "f.yaml")
        eager, _ = parse_yaml_collect(text, "f.yaml", positions=True)
        for later, recorded in zip(lazy, eager, strict=True):
            deferred = later.source._compute is not None
            assert later.source.locate(()) == recorded.source.locate(())
            if deferred:
                assert later.source._positions is None  # no second parse of the stream
                compared += 1
    assert compared > 100


def test_a_problem_found_without_positions_is_reported_with_them() -> None:
    # the duplicate-key message names the first key's line, which needs positions
    _, problems = parse_yaml_collect("a: 1\nb:\n  c: 2\n  c: 3\n", "f.yaml")
    assert [str(p) for p in problems] == ['f.yaml:4:3: mapping key "c" already defined at line 3']


# Flow scalars with ':' inside, as sigs.k8s.io/yaml v1.6.0 (YAMLToJSON) reads them: the
# libyaml of ruamel.yaml.clibz refuses the first five ("found unexpected ':'").
@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("a: {image: repo:5000/x:1}\n", {"a": {"image": "repo:5000/x:1"}}),
        ("a: [x:1, y]\n", {"a": ["x:1", True]}),
        ("a: {k: http://x}\n", {"a": {"k": "http://x"}}),
        ("a: [a :b]\n", {"a": ["a :b"]}),
        ("a: {k:v}\n", {"a": {"k:v": None}}),
    ],
)
def test_flow_scalars_with_colons_read_as_kubectl_reads_them(
    parser: str, text: str, value: Any
) -> None:
    assert one(text) == value


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("a: {k: a?b}\n", "t.yaml:1:9"),  # goyaml: did not find expected ',' or '}'
        ("a: {k: a: b}\n", "t.yaml:1:9"),
    ],
)
def test_flow_scalars_kubectl_refuses_stay_refused(parser: str, text: str, where: str) -> None:
    [problem] = problems(text)
    assert problem.startswith(where + ": invalid YAML")


def test_libyaml_fallback_keeps_documents_once_and_positions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A stream whose third document libyaml refuses: every document once, in order, with
    the same positions as the pure-Python parser gives; a later error is still found."""
    text = "a: 1\n---\nb: [x]\n---\nc: {image: r:5000/i}\n---\nd: 4\n"
    fast = [(d.index, d.data, d.source.positions) for d in parse_yaml(text, "t.yaml")]
    bad = problems(text + "---\ne: {k: a: b}\n")
    monkeypatch.setattr(ys, "_events", ys._events_pure)
    slow = [(d.index, d.data, d.source.positions) for d in parse_yaml(text, "t.yaml")]
    assert fast == slow
    assert [i for i, _, _ in fast] == [0, 1, 2, 3]
    assert bad == [
        "t.yaml:9:9: invalid YAML: expected ',' or '}', but got ':' "
        "(while parsing a flow mapping started at line 9, column 4)"
    ]
