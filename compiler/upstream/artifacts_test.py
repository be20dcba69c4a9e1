"""Where the upstream artifacts are found: an explicit TRAINC_CACHE, then the installed
trainc-upstream package, then the default cache."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from compiler.errors import SetupError
from compiler.upstream import artifacts
from compiler.upstream.artifacts import describe, kueue_upstream, upstream


@pytest.fixture(autouse=True)
def fresh(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """No package, no cache but the ones a test makes; ``upstream`` forgets between tests."""
    monkeypatch.delenv("TRAINC_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr(artifacts, "PACKAGE", "trainc_upstream_test_absent")
    upstream.cache_clear()
    kueue_upstream.cache_clear()
    yield
    upstream.cache_clear()
    kueue_upstream.cache_clear()


def release(folder: Path, trainer_dir: str, crd: str, modules: dict[str, str]) -> None:
    """A release folder as fetch-upstream.sh (absolute paths) or the package (relative)."""
    trainer = folder / trainer_dir if not Path(trainer_dir).is_absolute() else Path(trainer_dir)
    (trainer / "manifests").mkdir(parents=True, exist_ok=True)
    folder.mkdir(parents=True, exist_ok=True)
    manifest = {
        "trainerVersion": folder.name,
        "trainerDir": trainer_dir,
        "modules": modules,
        "outputCrds": {"jobsets.jobset.x-k8s.io": crd},
    }
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")


def package(root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An installed trainc-upstream with v2.3.0, importable from ``root``."""
    data = root / "fake_upstream_pkg" / "data"
    release(
        data / "v2.3.0", "trainer", "output-crds/jobsets.yaml", {"sigs.k8s.io/jobset": "v0.12.0"}
    )
    (root / "fake_upstream_pkg" / "__init__.py").write_text("", encoding="utf-8")
    (data / "MANIFEST.json").write_text('{"version": "9.9.9"}', encoding="utf-8")
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.setattr(artifacts, "PACKAGE", "fake_upstream_pkg")
    return data


def cache(root: Path) -> Path:
    folder = root / "trainc" / "upstream" / "v2.3.0"
    release(folder, str(root / "gomod" / "trainer@v2.3.0"), "/gomod/jobset.yaml", {"m": "v1"})
    return root / "trainc"


def test_the_package_comes_before_the_default_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache(tmp_path / "xdg")
    data = package(tmp_path / "site", monkeypatch)
    found = upstream("v2.3.0")
    assert found.source == "trainc-upstream package"
    # the package's paths are relative to the release folder
    assert found.trainer_dir == data / "v2.3.0" / "trainer"
    assert found.output_crds == (
        ("jobsets.jobset.x-k8s.io", data / "v2.3.0" / "output-crds" / "jobsets.yaml"),
    )
    assert found.typeinfo_path == data / "v2.3.0" / "typeinfo.json"
    assert found.manifest_path == data / "v2.3.0" / "manifest.json"
    assert found.modules == (("sigs.k8s.io/jobset", "v0.12.0"),)


def test_an_explicit_cache_comes_before_the_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    explicit = cache(tmp_path / "dev")
    package(tmp_path / "site", monkeypatch)
    monkeypatch.setenv("TRAINC_CACHE", str(explicit))
    found = upstream("v2.3.0")
    assert found.source == "cache"
    assert found.trainer_dir == tmp_path / "dev" / "gomod" / "trainer@v2.3.0"
    assert found.output_crds == (("jobsets.jobset.x-k8s.io", Path("/gomod/jobset.yaml")),)


def test_an_explicit_cache_without_the_release_falls_back_to_the_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A TRAINC_CACHE set for the render cache (e.g. in CI) holds no upstream folder."""
    package(tmp_path / "site", monkeypatch)
    monkeypatch.setenv("TRAINC_CACHE", str(tmp_path / "ci-cache"))
    assert upstream("v2.3.0").source == "trainc-upstream package"


def test_the_default_cache_without_a_package(tmp_path: Path) -> None:
    cache(tmp_path / "xdg")
    assert upstream("v2.3.0").source == "cache"


def test_nowhere_is_a_setup_error_saying_what_to_install(tmp_path: Path) -> None:
    with pytest.raises(SetupError) as error:
        upstream("v2.3.0")
    message = str(error.value)
    assert "upstream artifacts for Trainer v2.3.0 are missing" in message
    assert "pip install trainc" in message and "make setup" in message
    assert str(tmp_path / "xdg" / "trainc" / "upstream" / "v2.3.0") in message
    assert "the trainc-upstream package is not installed" in message


def test_a_release_the_package_lacks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = package(tmp_path / "site", monkeypatch)
    with pytest.raises(SetupError, match=r"Trainer v2\.9\.0 are missing") as error:
        upstream("v2.9.0")
    assert str(data / "v2.9.0") in str(error.value)
    assert "not installed" not in str(error.value)


def test_describe_names_the_package_and_each_release(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = package(tmp_path / "site", monkeypatch)
    assert describe(("v2.2.0", "v2.3.0")) == [
        f"upstream artifacts: trainc-upstream 9.9.9 ({data})",
        "Trainer v2.2.0: missing",
        "Trainer v2.3.0 (trainc-upstream package): sigs.k8s.io/jobset v0.12.0",
    ]


def kueue_release(folder: Path, crd: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    manifest = {
        "kueueVersion": folder.name,
        "trainerVersion": "v2.2.0",
        "inputCrds": {"clusterqueues.kueue.x-k8s.io": crd},
    }
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")


def test_kueue_from_the_package_then_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Kueue's folder is ``kueue/<version>`` beside the releases, in the same places."""
    kueue_release(tmp_path / "xdg" / "trainc" / "upstream" / "kueue" / "v0.17.0", "/gomod/cq.yaml")
    found = kueue_upstream("v0.17.0")
    assert (found.source, found.trainer_version) == ("cache", "v2.2.0")
    assert found.input_crds == (("clusterqueues.kueue.x-k8s.io", Path("/gomod/cq.yaml")),)
    kueue_upstream.cache_clear()
    data = package(tmp_path / "site", monkeypatch)
    kueue_release(data / "kueue" / "v0.17.0", "crds/cq.yaml")
    found = kueue_upstream("v0.17.0")
    assert found.source == "trainc-upstream package"
    assert found.input_crds == (
        ("clusterqueues.kueue.x-k8s.io", data / "kueue" / "v0.17.0" / "crds" / "cq.yaml"),
    )
    with pytest.raises(SetupError, match="Kueue CRD files are gone"):
        found.input_crd_paths()


def test_kueue_nowhere_is_a_setup_error(tmp_path: Path) -> None:
    with pytest.raises(SetupError, match=r"artifacts for Kueue v0\.17\.0 are missing") as error:
        kueue_upstream("v0.17.0")
    assert str(tmp_path / "xdg" / "trainc" / "upstream" / "kueue" / "v0.17.0") in str(error.value)
