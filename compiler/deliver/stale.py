"""``trainc check --rendered [DIR]``: is the committed rendered tree what trainc renders now?

The inputs are rendered in memory into the files ``trainc render`` would write (same
layout and bytes as :func:`compiler.emit.output.write_directory`; in project mode one
such tree per cluster under ``<cluster>/``) and compared byte for byte with ``DIR``.
Missing, extra and changed files are listed; the tree is stale when any is. The
``.trainc-output`` marker files are bookkeeping, not output, and are not compared.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from compiler.apiserver.yaml_source import read_source
from compiler.emit.kustomization import extra_files
from compiler.emit.output import MARKER, planned_files, requirements_text
from compiler.emit.yaml_text import dump_document
from compiler.errors import EXIT_OK, EXIT_VIOLATIONS, InputError, sorted_problems
from compiler.model.build import Build
from compiler.model.objects import RenderedObject
from compiler.render.info import SecretRequirement

__all__ = ["StaleReport", "check_rendered", "compare_tree", "expected_files", "read_tree"]


def expected_files(
    objects: Iterable[RenderedObject],
    requirements: Iterable[SecretRequirement] = (),
    prefix: str = "",
    extra: Mapping[str, bytes] | None = None,
) -> dict[str, bytes]:
    """What ``write_directory`` writes, as ``relative posix path -> bytes`` (no marker)."""
    files: dict[str, bytes] = {}
    for relative, obj in planned_files(objects):
        files[prefix + relative] = dump_document(obj.data).encode("utf-8")
    requirements = list(requirements)
    if requirements:
        files[prefix + "requirements.yaml"] = requirements_text(requirements).encode("utf-8")
    for name, data in (extra or {}).items():
        files[prefix + name] = data
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
            files[path.relative_to(directory).as_posix()] = read_source(path)
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


def check_rendered(builds: Sequence[Build], directory: Path, *, whole: bool) -> StaleReport:
    """Compare what ``builds`` rendered with the tree at ``directory``.

    A build of PATHs is compared with ``directory`` itself; project clusters with
    ``directory/<cluster>/``. ``whole``: every cluster of the project was built, so files
    of no cluster are extra; otherwise only the built clusters' folders are compared.
    Builds with problems cannot be compared: an InputError with their problems.
    """
    problems = [p for build in builds for p in build.problems]
    if problems:
        raise InputError(sorted_problems(problems))
    report = StaleReport(str(directory), absent=not directory.is_dir())
    if len(builds) == 1 and builds[0].plan.cluster is None:
        plain = expected_files(builds[0].objects, builds[0].secret_requirements)
        return _merge(report, compare_tree(directory, plain), "")
    names = [build.plan.cluster_name or "" for build in builds]
    if whole:
        expected: dict[str, bytes] = {}
        for name, build in zip(names, builds, strict=True):
            expected.update(
                expected_files(
                    build.objects, build.secret_requirements, f"{name}/", extra_files(build)
                )
            )
        return _merge(report, compare_tree(directory, expected), "")
    for name, build in zip(names, builds, strict=True):
        own = expected_files(build.objects, build.secret_requirements, "", extra_files(build))
        report = _merge(report, compare_tree(directory / name, own), f"{name}/")
    return report


def _merge(report: StaleReport, part: StaleReport, prefix: str) -> StaleReport:
    report.missing += [prefix + p for p in part.missing]
    report.extra += [prefix + p for p in part.extra]
    report.changed += [prefix + p for p in part.changed]
    return report
