#!/usr/bin/env python3
"""Build the trainc-upstream data wheel: what trainc reads at run time for each emulated
Trainer release, taken from the pinned Go modules that scripts/fetch-upstream.sh
fetched (run it first: `make dist` does), so an installed trainc needs neither Go, the
network nor a cache.

    python3 scripts/build-upstream-wheel.py [--out dist] [--tree build/upstream-data]

Per release (compiler/upstream/versions.py TRAINER_VERSIONS) the package holds, under
``trainc_upstream/data/<release>/``:

    manifest.json   what compiler/upstream/artifacts.py reads (paths relative to it)
    typeinfo.json   the Go field facts computed by upstream/typeinfo
    trainer/...     the Trainer module files trainc reads: the CRDs, the OpenAPI document,
                    the shipped runtimes (migrate), the Flux script templates
    output-crds/    the CRDs of the rendered kinds (JobSet, coscheduling PodGroup)
    licenses/       the LICENSE file of each module whose files are shipped

the pinned Kueue release (KUEUE_VERSION) under ``trainc_upstream/data/kueue/<version>/``:

    manifest.json   what compiler/upstream/artifacts.py kueue_upstream() reads
    crds/           the CRDs of the Kueue kinds read as inputs (ClusterQueue, ...)
    licenses/       Kueue's LICENSE

the pinned Katib release (KATIB_VERSION) under ``trainc_upstream/data/katib/<version>/``:

    manifest.json   what compiler/upstream/artifacts.py katib_upstream() reads
    crds/           the Experiment CRD
    katib-config.yaml  the release's standalone configuration (algorithms, collectors)
    licenses/       Katib's LICENSE

and ``trainc_upstream/data/MANIFEST.json`` records the package version, each release's
module versions with their go.sum hashes, and the SHA-256 of every shipped file.

Reproducible: the tree is written afresh, the wheel's entries are sorted, their times
are SOURCE_DATE_EPOCH (default 1980-01-01: the content does not depend on a commit),
their modes 0644; the same inputs give the same bytes. Standard library only.
"""

from __future__ import annotations

import argparse
import ast
import base64
import hashlib
import io
import json
import os
import re
import shutil
import sys
import time
import tomllib
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
NAME = "trainc-upstream"
PACKAGE = "trainc_upstream"
# The files of the Trainer module that trainc reads (a folder: every file under it).
TRAINER_FILES = (
    "manifests/base/crds",  # compiler/apiserver/crds.py (the Trainer CRDs)
    "api/openapi-spec/swagger.json",  # compiler/upstream/openapi.py, apiserver/crds.py
    "manifests/base/runtimes",  # compiler/migrate/runtimes.py (the shipped runtimes)
    "pkg/runtime/framework/plugins/flux/templates",  # compiler/upstream/templates.py (v2.2.0+)
)
EPOCH_1980 = 315532800  # the earliest time a zip entry can hold


def fail(message: str) -> None:
    sys.stderr.write(f"build-upstream-wheel: {message}\n")
    raise SystemExit(1)


def cache_root() -> Path:
    """As compiler/upstream/artifacts.py cache_root() and scripts/fetch-upstream.sh."""
    explicit = os.environ.get("TRAINC_CACHE")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "trainc"


def _versions_constant(name: str) -> object:
    """A constant of compiler/upstream/versions.py, read without importing trainc."""
    tree = ast.parse((REPO / "compiler" / "upstream" / "versions.py").read_text("utf-8"))
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        elif isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        else:
            continue
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            return ast.literal_eval(value)
    fail(f"no {name} in compiler/upstream/versions.py")
    raise AssertionError


def releases() -> tuple[str, ...]:
    """TRAINER_VERSIONS of compiler/upstream/versions.py."""
    found = _versions_constant("TRAINER_VERSIONS")
    assert isinstance(found, tuple)
    return tuple(str(release) for release in found)


def kueue_release() -> str:
    """KUEUE_VERSION of compiler/upstream/versions.py."""
    return str(_versions_constant("KUEUE_VERSION"))


def katib_release() -> str:
    """KATIB_VERSION of compiler/upstream/versions.py."""
    return str(_versions_constant("KATIB_VERSION"))


def data_version() -> str:
    """The version trainc's pyproject.toml pins (``trainc-upstream==X``): one place."""
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))
    for requirement in pyproject["project"]["dependencies"]:
        match = re.fullmatch(r"trainc-upstream==(\S+)", requirement.replace(" ", ""))
        if match:
            return match.group(1)
    fail("pyproject.toml pins no trainc-upstream==VERSION in [project] dependencies")
    raise AssertionError


def go_sums(release: str, newest: str) -> dict[str, tuple[str, str]]:
    """module@version -> (h1 of the module, h1 of its go.mod), from the release's go.sum."""
    sum_file = REPO / "upstream" / ("go.sum" if release == newest else f"versions/{release}.sum")
    sums: dict[str, list[str]] = {}
    for line in sum_file.read_text("utf-8").splitlines():
        path, version, digest = line.split()
        key = f"{path}@{version.removesuffix('/go.mod')}"
        pair = sums.setdefault(key, ["", ""])
        pair[1 if version.endswith("/go.mod") else 0] = digest
    return {key: (pair[0], pair[1]) for key, pair in sums.items()}


def module_root(file: Path) -> Path:
    """The module folder (``.../name@version``) that holds ``file`` in the module cache."""
    for parent in file.parents:
        if "@" in parent.name:
            return parent
    fail(f"{file} is not in a Go module folder")
    raise AssertionError


def copy_file(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(source.read_bytes())  # no metadata: the tree's times do not matter


def build_release(release: str, newest: str, out: Path) -> dict[str, object]:
    """Copy one release's artifacts into ``out``; its entry of MANIFEST.json."""
    cached = cache_root() / "upstream" / release
    try:
        manifest = json.loads((cached / "manifest.json").read_text("utf-8"))
    except OSError:
        fail(f"no artifacts for Trainer {release} in {cached}: run scripts/fetch-upstream.sh")
    trainer_dir = Path(manifest["trainerDir"])
    copied: list[tuple[Path, Path]] = []  # (source, target)
    for relative in TRAINER_FILES:
        source = trainer_dir / relative
        if source.is_dir():
            for file in sorted(p for p in source.rglob("*") if p.is_file()):
                copied.append((file, out / "trainer" / file.relative_to(trainer_dir)))
        elif source.is_file():
            copied.append((source, out / "trainer" / relative))
        elif "flux" not in relative:  # the Flux plugin exists from v2.2.0 on
            fail(f"{source} is missing from the Trainer {release} module")
    output_crds = {}
    for name, path in sorted(manifest["outputCrds"].items()):
        source = Path(path)
        copied.append((source, out / "output-crds" / source.name))
        output_crds[name] = f"output-crds/{source.name}"
    # Apache-2.0 asks for the license to travel with the files.
    roots = sorted({module_root(source) for source, _ in copied} | {trainer_dir})
    for root in roots:
        # named module@version: the folder of the module cache ends with it
        [module] = [
            f"{path}@{version}"
            for path, version in manifest["modules"].items()
            if str(root).endswith(f"/{path}@{version}")
        ] or [root.name]
        copied.append((root / "LICENSE", out / "licenses" / module / "LICENSE"))
    for source, target in copied:
        if not source.is_file():
            fail(f"{source} is missing (Trainer {release})")
        copy_file(source, target)
    copy_file(cached / "typeinfo.json", out / "typeinfo.json")

    sums = go_sums(release, newest)
    modules = {}
    for path, version in sorted(manifest["modules"].items()):
        module_sum, mod_sum = sums.get(f"{path}@{version}", ("", ""))
        if not module_sum:
            fail(f"{path}@{version} has no go.sum line for Trainer {release}")
        modules[path] = {"version": version, "sum": module_sum, "goModSum": mod_sum}
    local = {
        "trainerVersion": release,
        "trainerDir": "trainer",
        "modules": {path: entry["version"] for path, entry in modules.items()},
        "outputCrds": output_crds,
        "inputsSha256": manifest["inputsSha256"],
    }
    (out / "manifest.json").write_text(json.dumps(local, indent=2, sort_keys=True) + "\n")
    return {"modules": modules, "inputsSha256": manifest["inputsSha256"]}


def build_kueue(release: str, out: Path) -> dict[str, object]:
    """Copy the pinned Kueue release's input CRDs into ``out``; its MANIFEST.json entry."""
    cached = cache_root() / "upstream" / "kueue" / release
    try:
        manifest = json.loads((cached / "manifest.json").read_text("utf-8"))
    except OSError:
        fail(f"no artifacts for Kueue {release} in {cached}: run scripts/fetch-upstream.sh")
    kueue_dir = Path(manifest["kueueDir"])
    crds = {}
    for name, path in sorted(manifest["inputCrds"].items()):
        source = Path(path)
        if not source.is_file():
            fail(f"{source} is missing (Kueue {release})")
        copy_file(source, out / "crds" / source.name)
        crds[name] = f"crds/{source.name}"
    copy_file(kueue_dir / "LICENSE", out / "licenses" / f"sigs.k8s.io/kueue@{release}" / "LICENSE")
    local = {
        key: manifest[key] for key in ("kueueVersion", "sum", "trainerVersion", "jobsetVersion")
    }
    local |= {"inputCrds": crds, "inputsSha256": manifest["inputsSha256"]}
    (out / "manifest.json").write_text(json.dumps(local, indent=2, sort_keys=True) + "\n")
    return {
        "version": release,
        "sum": manifest["sum"],
        "trainerVersion": manifest["trainerVersion"],
    }


def build_katib(release: str, out: Path) -> dict[str, object]:
    """Copy the pinned Katib release's Experiment CRD and katib-config.yaml into ``out``;
    its MANIFEST.json entry."""
    cached = cache_root() / "upstream" / "katib" / release
    try:
        manifest = json.loads((cached / "manifest.json").read_text("utf-8"))
    except OSError:
        fail(f"no artifacts for Katib {release} in {cached}: run scripts/fetch-upstream.sh")
    katib_dir = Path(manifest["katibDir"])
    crds = {}
    for name, path in sorted(manifest["inputCrds"].items()):
        source = Path(path)
        if not source.is_file():
            fail(f"{source} is missing (Katib {release})")
        copy_file(source, out / "crds" / source.name)
        crds[name] = f"crds/{source.name}"
    config = Path(manifest["katibConfig"])
    if not config.is_file():
        fail(f"{config} is missing (Katib {release})")
    copy_file(config, out / "katib-config.yaml")
    copy_file(
        katib_dir / "LICENSE", out / "licenses" / f"github.com/kubeflow/katib@{release}" / "LICENSE"
    )
    local = {key: manifest[key] for key in ("katibVersion", "sum")}
    local |= {
        "inputCrds": crds,
        "katibConfig": "katib-config.yaml",
        "inputsSha256": manifest["inputsSha256"],
    }
    (out / "manifest.json").write_text(json.dumps(local, indent=2, sort_keys=True) + "\n")
    return {"version": release, "sum": manifest["sum"]}


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def build_tree(tree: Path, version: str) -> None:
    """The package folder ``tree/trainc_upstream`` (removed and written again)."""
    package = tree / PACKAGE
    if package.exists():
        shutil.rmtree(package)
    data = package / "data"
    names = releases()
    entries = {release: build_release(release, names[-1], data / release) for release in names}
    kueue = build_kueue(kueue_release(), data / "kueue" / kueue_release())
    katib = build_katib(katib_release(), data / "katib" / katib_release())
    files = {
        str(p.relative_to(data)): sha256(p.read_bytes())
        for p in sorted(data.rglob("*"))
        if p.is_file()
    }
    manifest = {
        "name": NAME,
        "version": version,
        "releases": entries,
        "kueue": kueue,
        "katib": katib,
        "files": files,
    }
    (data / "MANIFEST.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    (package / "__init__.py").write_text(
        '"""The pinned upstream artifacts of trainc (generated by '
        'scripts/build-upstream-wheel.py; data/MANIFEST.json says what they are)."""\n\n'
        f'__version__ = "{version}"\n'
    )


def wheel_files(tree: Path, version: str) -> list[tuple[str, bytes]]:
    """Every entry of the wheel, sorted, the dist-info (RECORD last) after the package."""
    out = [
        (str(p.relative_to(tree)), p.read_bytes())
        for p in sorted((tree / PACKAGE).rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    ]
    info = f"{PACKAGE}-{version}.dist-info"
    metadata = (
        "Metadata-Version: 2.1\n"
        f"Name: {NAME}\n"
        f"Version: {version}\n"
        "Summary: The pinned Kubeflow Trainer, JobSet and PodGroup artifacts trainc reads "
        "(CRDs, OpenAPI document, Go type facts), one folder per emulated release\n"
        "License: Apache-2.0 (the upstream files; data/<release>/licenses)\n"
        "Requires-Python: >=3.11\n"
    )
    out.append((f"{info}/METADATA", metadata.encode()))
    wheel = (
        "Wheel-Version: 1.0\n"
        "Generator: trainc scripts/build-upstream-wheel.py\n"
        "Root-Is-Purelib: true\n"
        "Tag: py3-none-any\n"
    )
    out.append((f"{info}/WHEEL", wheel.encode()))
    record = io.StringIO()
    for name, data in out:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.write(f"{name},sha256={digest},{len(data)}\n")
    record.write(f"{info}/RECORD,,\n")
    out.append((f"{info}/RECORD", record.getvalue().encode()))
    return out


def write_wheel(path: Path, files: list[tuple[str, bytes]], epoch: int) -> None:
    stamp = time.gmtime(max(epoch, EPOCH_1980))[:6]
    temporary = path.with_suffix(".tmp")
    with zipfile.ZipFile(temporary, "w") as archive:
        for name, data in files:
            info = zipfile.ZipInfo(name, date_time=stamp)
            info.external_attr = 0o100644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data, compresslevel=9)
    temporary.replace(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=REPO / "dist", help="wheel folder")
    parser.add_argument(
        "--tree", type=Path, default=REPO / "build" / "upstream-data", help="package folder"
    )
    args = parser.parse_args()
    version = data_version()
    epoch = int(os.environ.get("SOURCE_DATE_EPOCH") or EPOCH_1980)
    build_tree(args.tree, version)
    args.out.mkdir(parents=True, exist_ok=True)
    for old in args.out.glob(f"{PACKAGE}-*.whl"):
        old.unlink()
    wheel = args.out / f"{PACKAGE}-{version}-py3-none-any.whl"
    write_wheel(wheel, wheel_files(args.tree, version), epoch)
    print(f"upstream data: {wheel} ({wheel.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
