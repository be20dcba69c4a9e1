"""Plugins declare the phases they implement; the framework refuses a mismatch."""

from __future__ import annotations

import pytest

from compiler.render.framework import (
    ComponentBuilderPlugin,
    EnforceMLPolicyPlugin,
    Phases,
    declared_phases,
)
from compiler.render.info import Info
from compiler.render.registry import default_plugins


def test_every_registered_plugin_declares_what_it_defines() -> None:
    for plugin in default_plugins():
        assert declared_phases(plugin)


def test_a_phase_method_without_its_declaration_is_refused() -> None:
    class Undeclared:
        name = "Undeclared"

        def enforce_ml_policy(self, info: Info, job: object) -> None:
            return None

    with pytest.raises(TypeError, match="defines enforce_ml_policy but does not declare"):
        Phases.of([Undeclared()])


def test_a_builder_missing_one_of_its_two_methods_is_refused() -> None:
    class HalfBuilder(ComponentBuilderPlugin):
        name = "HalfBuilder"

        def build(self, info: Info, job: object) -> list[dict[str, object]]:
            return []

    with pytest.raises(TypeError, match="does not define sync_parallel_count"):
        Phases.of([HalfBuilder()])  # type: ignore[abstract]


def test_phases_follow_the_declarations() -> None:
    class Policy(EnforceMLPolicyPlugin):
        name = "Policy"

        def enforce_ml_policy(self, info: Info, job: object) -> None:
            return None

    phases = Phases.of([Policy()])
    assert [p.name for p in phases.ml_policy] == ["Policy"]
    assert phases.component_builders == ()


def test_amend_runs_after_every_build_and_sees_all_objects() -> None:
    """The extensions' phase (not upstream's): after every builder, on the built list."""
    from compiler.render.framework import (
        AmendObjectsPlugin,
        ComponentBuilderPlugin,
        Phases,
        TrainJobContext,
        run_phases,
    )
    from compiler.render.info import Info, JsonObject

    class Builder(ComponentBuilderPlugin):
        name = "Builder"

        def sync_parallel_count(self, info: Info) -> None:
            return None

        def build(self, info: Info, job: TrainJobContext) -> list[JsonObject]:
            return [{"kind": "ConfigMap", "data": {"a": "1"}}]

    class Amender(AmendObjectsPlugin):
        name = "Amender"

        def amend(self, objects: list[JsonObject], info: Info, job: TrainJobContext) -> None:
            objects[0]["data"]["a"] = "2"

    info = Info({}, {}, None, None, {}, [])
    job = TrainJobContext({"metadata": {"name": "j"}})
    assert run_phases(Phases.of([Amender(), Builder()]), info, job) == [
        {"kind": "ConfigMap", "data": {"a": "2"}}
    ]
    assert Phases.of([Builder()]).amend_objects == ()
