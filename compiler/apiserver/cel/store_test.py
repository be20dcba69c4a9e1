"""Compiled programs kept between runs: the same programs, without compiling again."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest

from compiler.apiserver.cel.engine import DURATION, DYN, TIMESTAMP, VarType
from compiler.apiserver.cel.k8s import K8sEngine, K8sProgram
from compiler.apiserver.cel.store import ProgramStore, default_store

_VARS: dict[str, VarType] = {"object": DYN, "variables_n": DYN}
_SOURCE = "variables.n + size(object.items.filter(i, i > 1))"
_CROSS_NUMERIC = "1 < 1.5"  # compiles only unchecked (cross-type numeric comparison)


def _never(*_: object) -> None:
    raise AssertionError("compiled although the store holds the program")


def test_a_second_engine_reads_the_programs_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = ProgramStore(tmp_path)
    first = K8sEngine(store)
    program = first.compile(_SOURCE, _VARS)
    cross = first.compile(_CROSS_NUMERIC, _VARS)
    assert isinstance(cross, K8sProgram) and not cross.checked
    let = first.compile_let([("variables_n", "2")], _SOURCE.replace(".", "_", 1), _VARS)
    refused = first.compile_let([], "1 +", _VARS)
    assert refused is None
    assert len(list(tmp_path.glob("*.json"))) == 4

    second = K8sEngine(store)
    monkeypatch.setattr(second, "_compile_now", _never)
    real_env = second._env

    class NoCompile:
        def __init__(self, env: object) -> None:
            self.env = env

        def compile(self, *_: object, **__: object) -> None:
            _never()

        def deserialize(self, data: bytes) -> object:
            return self.env.deserialize(data)  # type: ignore[attr-defined]

    monkeypatch.setattr(second, "_env", lambda *a: NoCompile(real_env(*a)))
    again = second.compile(_SOURCE, _VARS)
    assert isinstance(program, K8sProgram) and isinstance(again, K8sProgram)
    assert (again.result_type, again.checked, again.variables, again.run_source) == (
        program.result_type,
        program.checked,
        program.variables,
        program.run_source,
    )
    values = {"object": {"items": [1, 2, 3], "count": 1}, "variables_n": 10}
    assert again.evaluate(values) == program.evaluate(values) == 12
    cross_again = second.compile(_CROSS_NUMERIC, _VARS)
    assert isinstance(cross_again, K8sProgram) and not cross_again.checked
    assert cross_again.evaluate(values) is True
    let_again = second.compile_let([("variables_n", "2")], _SOURCE.replace(".", "_", 1), _VARS)
    assert let is not None and let_again is not None
    assert let_again.evaluate(values) == let.evaluate(values) == 4
    assert second.compile_let([], "1 +", _VARS) is None


def test_an_entry_that_cannot_be_read_is_compiled_again(tmp_path: Path) -> None:
    store = ProgramStore(tmp_path)
    K8sEngine(store).compile(_SOURCE, _VARS)
    (entry,) = tmp_path.glob("*.json")
    for text in ("{not json", '{"expression": "not base64!"}', '{"expression": "AAAA"}', "[]"):
        entry.write_text(text)
        program = K8sEngine(store).compile(_SOURCE, _VARS)
        values = {"object": {"items": [5]}, "variables_n": 1}
        assert program.evaluate(values) == 2
    assert '"result_type"' in entry.read_text()  # written again


def test_compile_errors_are_not_kept(tmp_path: Path) -> None:
    engine = K8sEngine(ProgramStore(tmp_path))
    with pytest.raises(Exception, match="undeclared reference"):
        engine.compile("nothing + 1", _VARS)
    assert not list(tmp_path.glob("*.json"))


def test_keys_name_the_text_and_the_declared_variables(tmp_path: Path) -> None:
    store = ProgramStore(tmp_path)
    assert store.key("compile", "a", [("x", "dyn")]) != store.key("compile", "a", [("y", "dyn")])
    assert store.key("compile", "a", []) != store.key("compile", "b", [])
    assert store.key("compile", "a", []) == ProgramStore(tmp_path / "other").key("compile", "a", [])


def test_the_store_can_be_turned_off(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TRAINC_CACHE", str(tmp_path))
    store = default_store()
    assert store is not None and store.directory == tmp_path / "cel"
    monkeypatch.setenv("TRAINC_CEL_CACHE", "0")
    assert default_store() is None


def test_an_unwritable_store_is_no_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    engine = K8sEngine(ProgramStore(blocker / "cel"))
    assert engine.compile(_SOURCE, _VARS).evaluate({"object": {"items": []}, "variables_n": 3}) == 3


def test_a_program_read_back_takes_timestamps_and_durations(tmp_path: Path) -> None:
    """A CRD rule's ``self`` may be a timestamp or a duration. The engine sets a new
    environment's variable types up on its first compile, so a program read back before
    any compile refused a ``datetime`` ("Non-CEL value type") until the run
    environment compiled once when made."""
    store = ProgramStore(tmp_path)
    variables: dict[str, VarType] = {"self": TIMESTAMP, "ttl": DURATION}
    source = "self > timestamp('2020-01-01T00:00:00Z') && ttl <= duration('1h')"
    values = {
        "self": datetime.datetime(2026, 5, 1, tzinfo=datetime.UTC),
        "ttl": datetime.timedelta(minutes=30),
    }
    assert K8sEngine(store).compile(source, variables).evaluate(values) is True
    assert K8sEngine(store).compile(source, variables).evaluate(values) is True
