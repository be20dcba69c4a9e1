"""Find and read ``trainc.yaml``; expand its paths and globs into input files.

* :func:`find_project` walks up from a folder to the repository root (the first folder
  holding ``.git``) and returns the first ``trainc.yaml`` on the way.
* :func:`load_project` parses the file with source positions and validates it; every
  problem (YAML syntax, unknown field, bad value, duplicate cluster, missing input)
  is raised in one :class:`~compiler.errors.InputError` at its ``file:line:col``.
* Paths are relative to the project file's folder. An entry is a file, a folder
  (searched recursively like ``trainc render DIR``), or a glob (``*``, ``?``, ``[``;
  ``**`` crosses folders). Files come in a deterministic order: entries as written,
  the matches of one entry sorted by path segments, each file once. An entry that
  matches nothing is an error (a typo would otherwise render nothing, silently).
* Every path stays inside the project's repository (the nearest folder holding ``.git``
  at or above the project file's folder, else that folder; for ``argocd generate`` the
  checkout): the project file itself, each entry, the files and links a folder or glob
  reaches, and the output folder resolve inside it, symbolic links followed, or are an
  error at the entry's line that names the path as written; nothing outside is read or
  even looked at (:mod:`compiler.load.confine`). A monorepo (``../shared/`` from a
  project in a subfolder) works as long as it is one repository.
* A policy folder contributes its ``*.yaml``, ``*.yml`` and ``*.cue`` files, skipping
  folders named ``tests`` (policy test cases, whose objects are not policies).
* An overlay folder contributes the files that hold ``kind: Overlay`` documents (a patch
  file an overlay names with ``path:`` is read by that overlay, not as one); a file
  named explicitly is always taken.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from compiler.apiserver.manifest import SourceMap
from compiler.apiserver.yaml_source import parse_yaml_collect, read_source, read_yaml
from compiler.errors import InputError, JsonPath, Problem, SourceLocation, sorted_problems
from compiler.load import confine
from compiler.load.confine import Outside, Root
from compiler.load.discover import CUE_SUFFIX, PROJECT_FILE, YAML_SUFFIXES, path_kind
from compiler.project.model import Cluster, ProjectSpec, valid_secret_name, validation_problems

__all__ = ["PROJECT_FILE", "Project", "find_project", "load_project"]

_GLOB_CHARS = confine.GLOB_CHARS
_POLICY_TESTS = "tests"


@dataclass(frozen=True)
class Project:
    """A loaded project: the typed spec, where it came from, and its input files."""

    path: Path  # the project file, as given (relative paths stay relative)
    spec: ProjectSpec
    source: SourceMap = field(repr=False, compare=False)
    # expanded inputs, by JSON path of the entry (("inputs", "jobs"), ("clusters", 0, "overlays"), ...)
    files: dict[JsonPath, tuple[str, ...]] = field(repr=False, compare=False)
    # what every path it names stays inside (compiler.load.confine)
    confinement: Root | None = field(default=None, repr=False, compare=False)

    @property
    def root(self) -> Path:
        return self.path.parent

    @property
    def clusters(self) -> list[Cluster]:
        return list(self.spec.clusters)

    @property
    def cluster_names(self) -> list[str]:
        return [c.name for c in self.spec.clusters]

    @property
    def output(self) -> Path:
        return self.root / self.spec.output

    def locate(self, path: JsonPath) -> SourceLocation:
        return self.source.locate(path)

    def cluster(self, name: str) -> Cluster:
        """The cluster called ``name``; an InputError at the ``clusters`` list if none is."""
        for cluster in self.spec.clusters:
            if cluster.name == name:
                return cluster
        known = ", ".join(self.cluster_names)
        raise InputError.single(
            f"unknown cluster {name!r} (the project defines: {known})",
            self.locate(("clusters",)),
            field_path="clusters",
        )

    def _index(self, cluster: Cluster) -> int:
        return next(i for i, c in enumerate(self.spec.clusters) if c.name == cluster.name)

    def input_files(self) -> list[str]:
        """Runtime and job files (every cluster renders the same inputs)."""
        return _unique([*self.files[("inputs", "runtimes")], *self.files[("inputs", "jobs")]])

    def policy_files(self, cluster: Cluster) -> list[str]:
        """``inputs.policies`` then the cluster's own ``policies``."""
        index = self._index(cluster)
        return _unique(
            [*self.files[("inputs", "policies")], *self.files[("clusters", index, "policies")]]
        )

    def overlay_layers(self, cluster: Cluster) -> list[tuple[str | None, list[str]]]:
        """The overlay paths in layer order: base, cluster, then each namespace.

        Each layer is ``(namespace, paths)``; ``namespace`` is None for the base and
        cluster layers (they apply to every object).
        """
        index = self._index(cluster)
        layers: list[tuple[str | None, list[str]]] = [
            (None, list(self.files[("inputs", "overlays")])),
            (None, list(self.files[("clusters", index, "overlays")])),
        ]
        for n, namespace in enumerate(cluster.namespaces):
            layers.append(
                (namespace.name, list(self.files[("clusters", index, "namespaces", n, "overlays")]))
            )
        return [(namespace, paths) for namespace, paths in layers if paths]

    def namespace_labels(self, cluster: Cluster) -> dict[str, dict[str, str]]:
        """The declared namespaces with their labels (plus the one the API server sets)."""
        return {
            n.name: {**n.labels, "kubernetes.io/metadata.name": n.name}
            for n in sorted(cluster.namespaces, key=lambda n: n.name)
        }


def _unique(paths: list[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for path in paths:
        key = os.path.realpath(path)
        if key not in seen:
            seen.add(key)
            out.append(path)
    return out


def find_project(start: Path, stop: Path | None = None) -> Path | None:
    """The nearest ``trainc.yaml`` from ``start`` up to the repository root (or up to
    ``stop``, a folder holding ``start``, whichever comes first), or None."""
    here = start.resolve()
    if here.is_file():
        here = here.parent
    last = None if stop is None else stop.resolve()
    for folder in (here, *here.parents):
        candidate = folder / PROJECT_FILE
        if candidate.is_file():
            return candidate
        if (folder / ".git").exists() or folder == last:
            return None
    return None


def _segments(path: Path, base: Path) -> tuple[str, ...]:
    try:
        return path.relative_to(base).parts
    except ValueError:
        return path.parts


def _is_overlay_file(path: Path) -> bool:
    """Whether a file holds an ``Overlay`` document (unreadable ones count: the overlay
    loader reports them)."""
    try:
        documents = parse_yaml_collect(read_source(path), str(path))[0]
    except InputError:
        return True
    if not documents:
        return True
    return any(isinstance(d.data, dict) and d.data.get("kind") == "Overlay" for d in documents)


def _walk(
    root: Root, folder: str, real: str, suffixes: tuple[str, ...], skip_tests: bool
) -> tuple[list[Path], list[str]]:
    """The files under ``folder`` (real path ``real``) and what is wrong with the links
    met there (:func:`compiler.load.confine.walk`)."""
    found: list[tuple[tuple[str, ...], Path]] = []
    problems: list[str] = []
    base = Path(folder)

    def keep(name: str, real: str) -> bool:
        return not (skip_tests and name == _POLICY_TESTS)

    for entry in confine.walk(root, folder, real, keep):
        path = Path(entry.path)
        if entry.problem is not None:
            problems.append(f"{path} is a symbolic link that {entry.problem}; not followed")
        elif path.name.endswith(suffixes):
            found.append((_segments(path, base), path))
    found.sort(key=lambda item: item[0])
    return [path for _, path in found], problems


def _expand(
    root: Root, entry: str, base: Path, suffixes: tuple[str, ...], skip_tests: bool
) -> tuple[list[Path], list[str]]:
    """The files of one entry and what is wrong with it, if anything (nothing found,
    nothing wrong: it matches nothing). Nothing outside ``root`` is looked at."""
    pattern = os.path.normpath(entry if Path(entry).is_absolute() else base / entry)
    if not _GLOB_CHARS & set(entry):
        try:
            real = root.resolve(pattern)
        except Outside as outside:
            return [], [f"{entry!r} {outside}"]
        kind = path_kind(Path(real))  # a name too long or a loop is "does not exist"
        if kind == "dir":
            return _walk(root, pattern, real, suffixes, skip_tests)
        if kind == "other":
            return [], [f"{entry!r} is not a regular file or directory"]
        return ([Path(pattern)] if kind == "file" else []), []
    try:
        matches = confine.glob(root, pattern)
    except Outside as outside:
        return [], [f"{entry!r} {outside}"]
    out: list[Path] = []
    problems: list[str] = []
    for match in sorted(matches, key=lambda m: _segments(Path(m.path), base)):
        path = Path(match.path)
        if match.real is None:
            problems.append(f"{path} is a symbolic link that {match.problem}; not followed")
            continue
        kind = path_kind(Path(match.real))
        if kind == "dir":
            files, found = _walk(root, str(path), match.real, suffixes, skip_tests)
            out.extend(files)
            problems.extend(found)
        elif kind == "file" and path.name.endswith(suffixes):
            out.append(path)
        elif kind == "other" and path.name.endswith(suffixes):
            problems.append(f"{path} is not a regular file or directory")
    return out, list(dict.fromkeys(problems))  # a link ``**`` and a folder's walk both met


def _expand_all(
    root: Root, base: Path, spec: ProjectSpec, source: SourceMap
) -> tuple[dict[JsonPath, tuple[str, ...]], list[Problem]]:
    yaml_only = YAML_SUFFIXES
    policies = (*YAML_SUFFIXES, CUE_SUFFIX)
    lists: list[tuple[JsonPath, list[str], tuple[str, ...], bool]] = [
        (("inputs", "runtimes"), spec.inputs.runtimes, yaml_only, False),
        (("inputs", "jobs"), spec.inputs.jobs, yaml_only, False),
        (("inputs", "policies"), spec.inputs.policies, policies, True),
        (("inputs", "overlays"), spec.inputs.overlays, yaml_only, False),
    ]
    for i, cluster in enumerate(spec.clusters):
        lists.append((("clusters", i, "overlays"), cluster.overlays, yaml_only, False))
        lists.append((("clusters", i, "policies"), cluster.policies, policies, True))
        for n, namespace in enumerate(cluster.namespaces):
            lists.append(
                (("clusters", i, "namespaces", n, "overlays"), namespace.overlays, yaml_only, False)
            )
    files: dict[JsonPath, tuple[str, ...]] = {}
    problems: list[Problem] = []
    for path, entries, suffixes, skip_tests in lists:
        found: list[str] = []
        for index, entry in enumerate(entries):
            expanded, wrong = _expand(root, entry, base, suffixes, skip_tests)
            if not expanded and not wrong:
                what = "matches no file" if _GLOB_CHARS & set(entry) else "does not exist"
                wrong = [f"{entry!r} {what} (looked in {base / entry})"]
            if wrong:
                problems += [
                    Problem(
                        message,
                        source.locate((*path, index)),
                        field_path=_field_text((*path, index)),
                        rule="project",
                    )
                    for message in wrong
                ]
                continue
            if path[-1] == "overlays" and Path(os.path.normpath(base / entry)).is_dir():
                expanded = [p for p in expanded if _is_overlay_file(p)]
            found.extend(str(p) for p in expanded)
        files[path] = tuple(_unique(found))
    return files, problems


def _field_text(path: JsonPath) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def _duplicates(spec: ProjectSpec, source: SourceMap) -> list[Problem]:
    problems = []
    seen: dict[str, int] = {}
    for i, cluster in enumerate(spec.clusters):
        if cluster.name in seen:
            first = source.locate(("clusters", seen[cluster.name], "name"))
            problems.append(
                Problem(
                    f"duplicate cluster {cluster.name!r}: also defined at {first}",
                    source.locate(("clusters", i, "name")),
                    field_path=f"clusters[{i}].name",
                    rule="project",
                )
            )
        seen.setdefault(cluster.name, i)
        names: dict[str, int] = {}
        for n, namespace in enumerate(cluster.namespaces):
            if namespace.name in names:
                first = source.locate(("clusters", i, "namespaces", names[namespace.name], "name"))
                problems.append(
                    Problem(
                        f"duplicate namespace {namespace.name!r}: also defined at {first}",
                        source.locate(("clusters", i, "namespaces", n, "name")),
                        field_path=f"clusters[{i}].namespaces[{n}].name",
                        rule="project",
                    )
                )
            names.setdefault(namespace.name, n)
    return problems


def _applyset_problems(spec: ProjectSpec, source: SourceMap) -> list[Problem]:
    """A cluster whose ApplySet takes the default name ``trainc-<cluster>`` must have a
    cluster name that makes a valid Secret name (the parent's)."""
    problems = []
    for i, cluster in enumerate(spec.clusters):
        if cluster.applyset is None or cluster.applyset.name is not None:
            continue
        default = f"trainc-{cluster.name}"
        if not valid_secret_name(default):
            problems.append(
                Problem(
                    f"the ApplySet's default name {default!r} (trainc-<cluster>) is not a "
                    "valid Secret name: give applyset.name",
                    source.locate(("clusters", i, "applyset")),
                    field_path=f"clusters[{i}].applyset",
                    rule="project",
                )
            )
    return problems


def _confined_project(path: Path, root: Root) -> Path:
    """The folder the project's paths are relative to, as a path whose spelling is its
    real place (so a path joined to it is read where it is checked); an InputError at
    the project file if it, or the folder, is not inside ``root``."""
    folder = os.path.realpath(path.parent)
    try:
        if not root.contains(folder):
            raise Outside(f"is outside {root}")
        root.resolve(path.name, start=folder)
    except Outside as outside:
        raise InputError.single(f"the project file {outside}", SourceLocation(str(path))) from None
    return path.parent if os.path.abspath(path.parent) == folder else Path(folder)


def _confined_output(root: Root, base: Path, spec: ProjectSpec, source: SourceMap) -> list[Problem]:
    """A problem if the output folder, or a cluster's folder in it, is not inside ``root``."""
    output = os.path.normpath(base / spec.output)
    places: list[tuple[str, str, JsonPath]] = [(output, spec.output, ("output",))]
    places += [
        (os.path.join(output, c.name), f"{spec.output}/{c.name}", ("clusters", i, "name"))
        for i, c in enumerate(spec.clusters)
    ]
    for place, shown, where in places:
        try:
            root.resolve(place)
        except Outside as outside:
            return [
                Problem(
                    f"output {shown!r} {outside}",
                    source.locate(where),
                    field_path=_field_text(where),
                    rule="project",
                )
            ]
    return []


def load_project(path: Path | str, root: Path | None = None) -> Project:
    """Read and validate a project file; one InputError with every problem, if any.

    Every path it names must stay inside ``root`` (default: its repository, see
    :mod:`compiler.load.confine`), and so must the file itself: checked before it is read.
    """
    path = Path(path)
    confinement = Root.at(root, "the checkout") if root is not None else Root.of(path.parent)
    base = _confined_project(path, confinement)
    documents = read_yaml(path)
    display = str(path)
    if len(documents) != 1:
        where = documents[1].source.locate(()) if documents else SourceLocation(display)
        raise InputError.single("a project file holds exactly one YAML document", where)
    document = documents[0]
    source = document.source
    if not isinstance(document.data, dict):
        raise InputError.single("a project file must be a YAML mapping", source.locate(()))
    try:
        spec = ProjectSpec.model_validate(document.data)
    except ValidationError as error:
        raise InputError(sorted_problems(validation_problems(error, source))) from None
    problems = _duplicates(spec, source) + _applyset_problems(spec, source)
    files, missing = _expand_all(confinement, base, spec, source)
    problems += missing + _confined_output(confinement, base, spec, source)
    if problems:
        raise InputError(sorted_problems(problems))
    return Project(path, spec, source, files, confinement)
