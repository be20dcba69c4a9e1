"""``trainc check --rendered [DIR]``: is the committed rendered tree what trainc renders now?

The inputs are rendered in memory into the files ``trainc render`` would write (same
layout and bytes as :func:`compiler.emit.output.write_directory`; in project mode one
such tree per cluster under ``<cluster>/``) and compared byte for byte with ``DIR``.
Missing, extra and changed files are listed; the tree is stale when any is. The
``.trainc-output`` marker files are bookkeeping, not output, and are not compared.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from compiler.emit.output import MARKER, RenderedObject, planned_files, requirements_text
from compiler.emit.yaml_text import dump_document
from compiler.errors import EXIT_OK, EXIT_VIOLATIONS
from compiler.render.info import SecretRequirement

__all__ = ["StaleReport", "check_rendered", "compare_tree", "expected_files", "read_tree"]


def expected_files(
    objects: Iterable[RenderedObject],
    requirements: Iterable[SecretRequirement] = (),
    prefix: str = "",
) -> dict[str, bytes]:
    """What ``write_directory`` writes, as ``relative posix path -> bytes`` (no marker)."""
    files: dict[str, bytes] = {}
    for relative, obj in planned_files(objects):
        files[prefix + relative] = dump_document(obj.data).encode("utf-8")
    requirements = list(requirements)
    if requirements:
        files[prefix + "requirements.yaml"] = requirements_text(requirements).encode("utf-8")
    return files


def read_tree(directory: Path) -> dict[str, bytes]:
    """Every file under ``directory`` (markers left out), by relative posix path."""
    files: dict[str, bytes] = {}
    if not directory.is_dir():
        return files
    for root, dirs, names in os.walk(directory):
        dirs.sort()
        for name in sorted(names):
            if name == MARKER:
                continue
            path = Path(root, name)
            files[path.relative_to(directory).as_posix()] = path.read_bytes()
    return files


@dataclass
class StaleReport:
    directory: str
    missing: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    absent: bool = False  # the directory itself does not exist

    @property
    def stale(self) -> bool:
        return self.absent or bool(self.missing or self.extra or self.changed)

    @property
    def exit_code(self) -> int:
        return EXIT_VIOLATIONS if self.stale else EXIT_OK

    def text(self, command: str = "trainc render") -> str:
        if not self.stale:
            return f"trainc: {self.directory} is up to date\n"
        lines = [f"trainc: {self.directory} is stale; run `{command}` and commit the result"]
        if self.absent:
            lines.append(f"  {self.directory} does not exist")
        lines += [f"  missing: {p}" for p in self.missing]
        lines += [f"  extra:   {p}" for p in self.extra]
        lines += [f"  changed: {p}" for p in self.changed]
        return "\n".join(lines) + "\n"


def compare_tree(directory: Path, expected: Mapping[str, bytes], display: str = "") -> StaleReport:
    """Compare the files under ``directory`` with ``expected``, byte for byte."""
    report = StaleReport(display or str(directory), absent=not directory.is_dir())
    actual = read_tree(directory)
    for path in sorted(set(expected) | set(actual)):
        if path not in actual:
            report.missing.append(path)
        elif path not in expected:
            report.extra.append(path)
        elif actual[path] != expected[path]:
            report.changed.append(path)
    return report


def check_rendered(
    paths: list[str],
    directory: Path | None = None,
    namespace: str = "default",
    schemas: Path | None = None,
    project_file: Path | None = None,
    clusters: list[str] | None = None,
) -> StaleReport:
    """Render ``paths`` (none: the project) and compare with the rendered tree.

    ``directory`` defaults to the project's output folder in project mode and to
    ``rendered`` otherwise. With ``clusters``, only those clusters' folders are compared.
    """
    from compiler.errors import InputError

    if paths:
        from compiler.driver import compile_paths
        from compiler.load.crds import crds_with_schemas_from
        from compiler.render.framework import RenderOptions

        crds = crds_with_schemas_from(schemas) if schemas else None
        result = compile_paths(paths, RenderOptions(), namespace, crds)
        plain = expected_files(result.objects, result.secret_requirements)
        target = directory or Path("rendered")
        return compare_tree(target, plain, str(target))
    try:
        from compiler.project import find_project, load_project
        from compiler.project.build import render_project
    except ImportError:
        raise InputError.single("trainc check --rendered: give the PATHs to render") from None
    found = project_file or find_project(Path.cwd())
    if found is None:
        raise InputError.single("trainc check --rendered: no trainc.yaml found and no PATHs given")
    project = load_project(found)
    results = render_project(project, clusters)
    problems = [p for r in results.values() for p in r.problems]
    if problems:
        raise InputError(problems)
    target = directory or project.output
    report = StaleReport(str(target), absent=not target.is_dir())
    if clusters is None:
        expected: dict[str, bytes] = {}
        for name, cluster in results.items():
            expected.update(
                expected_files(cluster.objects, cluster.secret_requirements, f"{name}/")
            )
        return _merge(report, compare_tree(target, expected), "")
    for name, cluster in results.items():
        own = expected_files(cluster.objects, cluster.secret_requirements)
        report = _merge(report, compare_tree(target / name, own), f"{name}/")
    return report


def _merge(report: StaleReport, part: StaleReport, prefix: str) -> StaleReport:
    report.missing += [prefix + p for p in part.missing]
    report.extra += [prefix + p for p in part.extra]
    report.changed += [prefix + p for p in part.changed]
    return report
