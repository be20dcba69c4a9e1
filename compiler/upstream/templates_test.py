"""Go ``fmt.Sprintf`` for the Flux templates, and loading them from the pinned module."""

from __future__ import annotations

import doctest
from collections.abc import Iterator
from pathlib import Path

import pytest

from compiler.errors import SetupError
from compiler.upstream import templates
from compiler.upstream.artifacts import Upstream
from compiler.upstream.templates import (
    FLUX_TEMPLATE_DIR,
    FLUX_TEMPLATE_SLOTS,
    count_slots,
    flux_templates,
    go_sprintf,
)

# --- go_sprintf


def test_sprintf_fills_slots_in_order() -> None:
    assert go_sprintf("fluxroot=%s\nmainHost=%s\n", "/opt/view", "job-0") == (
        "fluxroot=/opt/view\nmainHost=job-0\n"
    )


def test_sprintf_inserted_text_is_not_rescanned() -> None:
    # flux.go passes "tcp://eth0:%p" and "tcp://%h.<fqdn>:%p" as arguments: kept literally.
    assert go_sprintf('bind = "%s"', "tcp://eth0:%p %s %%") == 'bind = "tcp://eth0:%p %s %%"'


def test_sprintf_percent_escape() -> None:
    assert go_sprintf("100%% of %s", "nodes") == "100% of nodes"
    assert count_slots("100%% of %s") == 1


def test_sprintf_no_verbs_is_identity() -> None:
    assert go_sprintf("#!/bin/sh\necho hi\n") == "#!/bin/sh\necho hi\n"


@pytest.mark.parametrize("args", [(), ("a", "b")])
def test_sprintf_refuses_wrong_argument_count(args: tuple[str, ...]) -> None:
    with pytest.raises(ValueError, match="1 %s slots"):
        go_sprintf("x=%s", *args)


@pytest.mark.parametrize("template", ["n=%d", "v=%v", "q=%q", "w=%5s", "trailing %"])
def test_unsupported_verbs_are_refused(template: str) -> None:
    with pytest.raises(ValueError):
        count_slots(template)


# --- the pinned templates


@pytest.fixture(scope="module")
def pinned() -> templates.FluxTemplates:
    try:
        return flux_templates()
    except SetupError as err:
        pytest.fail(f"upstream artifacts missing: `make setup` fetches them ({err})", pytrace=False)


def test_pinned_templates_have_the_slots_flux_go_fills(pinned: templates.FluxTemplates) -> None:
    assert count_slots(pinned.broker) == 4
    assert count_slots(pinned.init) == 4
    assert count_slots(pinned.entrypoint) == 3
    assert flux_templates() is pinned  # read once per process


def test_pinned_templates_are_read_verbatim(pinned: templates.FluxTemplates) -> None:
    assert pinned.init.startswith("# Copyright The Kubeflow Authors.\n")
    assert pinned.entrypoint.endswith("\n")
    assert pinned.broker.startswith("[access]\n")


# --- a module without the templates, or with other ones (release-shaped versions no real
# release has, so the per-process cache of the real templates is not in the way)


@pytest.fixture
def fake_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    directory = tmp_path / FLUX_TEMPLATE_DIR
    directory.mkdir(parents=True)

    def fake_upstream(version: str) -> Upstream:
        return Upstream(version, tmp_path, tmp_path / "typeinfo.json")

    monkeypatch.setattr(templates, "upstream", fake_upstream)
    yield directory
    flux_templates.cache_clear()


def _write_all(directory: Path, overrides: dict[str, str] | None = None) -> None:
    for name, slots in FLUX_TEMPLATE_SLOTS.items():
        text = (overrides or {}).get(name, " ".join(["%s"] * slots) + "\n")
        (directory / name).write_text(text)


def test_missing_template_is_a_setup_error(fake_module: Path) -> None:
    _write_all(fake_module)
    (fake_module / "entrypoint.sh").unlink()
    with pytest.raises(SetupError, match=r"entrypoint\.sh is missing.*make setup"):
        flux_templates("v9.0.1")


def test_template_with_other_slot_count_is_a_setup_error(fake_module: Path) -> None:
    _write_all(fake_module, {"init.sh": "%s %s\n"})
    with pytest.raises(SetupError, match=r"init\.sh has 2 %s slots.*fills 4"):
        flux_templates("v9.0.2")


def test_template_with_other_verbs_is_a_setup_error(fake_module: Path) -> None:
    _write_all(fake_module, {"broker.toml": "%s %d %s %s %s\n"})
    with pytest.raises(SetupError, match="unsupported format verbs: %d"):
        flux_templates("v9.0.3")


def test_templates_load_from_the_module(fake_module: Path) -> None:
    _write_all(fake_module, {"broker.toml": "[b] %s %s %s %s\r\n"})
    loaded = flux_templates("v9.0.4")
    assert loaded.broker == "[b] %s %s %s %s\r\n"  # no newline translation
    assert loaded.entrypoint == "%s %s %s\n"


def test_before_v2_3_the_entrypoint_has_no_resource_slot(fake_module: Path) -> None:
    """Trainer v2.2.0's Flux plugin fills host and flags only (no ``flux R encode`` spec)."""
    _write_all(fake_module, {"entrypoint.sh": "%s %s\n"})
    assert flux_templates("v2.2.99").entrypoint == "%s %s\n"
    with pytest.raises(SetupError, match=r"entrypoint\.sh has 2 %s slots.*v9\.0\.5.*fills 3"):
        flux_templates("v9.0.5")


def test_doctests() -> None:
    assert doctest.testmod(templates).failed == 0
