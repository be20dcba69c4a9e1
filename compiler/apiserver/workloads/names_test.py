"""Go's string checks, message for message (the differential fuzz covers the rest)."""

from __future__ import annotations

from compiler.apiserver.workloads import names


def test_dns_label_says_dots_apart_from_other_characters() -> None:
    assert list(names.dns1123_label("a.b")) == ["must not contain dots"]
    assert names.dns1123_label("A")[0].startswith("a lowercase RFC 1123 label must consist")
    assert names.dns1123_label("x" * 64)[0] == "must be no more than 63 characters"


def test_go_dollar_does_not_forgive_a_trailing_newline() -> None:
    assert list(names.dns1123_label("abc\n")) != []
    assert list(names.label_value("abc\n")) != []


def test_qualified_name_parts() -> None:
    assert names.qualified_name("a/b/c")[0].startswith("a qualified name must consist of")
    assert list(names.qualified_name("/x")) == ["prefix part must be non-empty"]
    assert list(names.qualified_name("example.com/")) == [
        "name part must be non-empty",
        "name part must consist of alphanumeric characters, '-', '_' or '.', and must start"
        " and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or"
        " '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
    ]


def test_lengths_count_utf8_bytes() -> None:
    assert names.label_value("ä" * 32)[0] == "must be no more than 63 characters"


def test_relaxed_env_names() -> None:
    assert list(names.env_var_name_relaxed("1A.b-c d")) == []
    assert list(names.env_var_name_relaxed("a=b")) == [
        "a valid environment variable name must consist only of printable ASCII characters"
        " other than '='"
    ]
    assert names.env_var_name_relaxed("naïve") == names.env_var_name_relaxed("\t")


def test_port_names_collect_every_reason() -> None:
    assert list(names.port_name("-A--")) == [
        "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)",
        "must contain at least one letter (a-z)",
        "must not contain consecutive hyphens",
        "must not begin or end with a hyphen",
    ]


def test_generate_name_trailing_dash_is_masked() -> None:
    assert names.mask_trailing_dash("llm-") == "lla"  # Go drops the last two characters
    assert names.mask_trailing_dash("-") == "-"
