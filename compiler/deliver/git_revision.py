"""Render a git revision next to the working tree, touching neither.

The base revision is checked out with ``git worktree add --detach`` into a temporary
directory outside the work tree (hooks off), rendered by this trainc, and removed
afterwards whatever happens. The user's work tree, index and HEAD are never
touched: git's environment variables that a hook may set (``GIT_INDEX_FILE``,
``GIT_DIR``, ``GIT_WORK_TREE``) are dropped for every git call.

Two ways to say what to render (:class:`Target`):

* plain paths (``trainc diff --base REV PATH...``), taken relative to the repository
  root in the base; a path the base lacks renders nothing;
* project mode (no paths): the project file of the working tree; a base without the project
  file renders nothing (every TrainJob reads as added).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compiler.apiserver.yaml_source import parse_yaml
from compiler.deliver.diff import (
    RenderDiff,
    StoredRenders,
    changed_stored_trainjobs,
    compute_impact,
    diff_renders,
    read_changes,
)
from compiler.emit.blobs import BlobStore
from compiler.errors import InputError, SetupError, sorted_problems
from compiler.model.parts import ObjectFile
from compiler.model.plan import BuildPlan
from compiler.plan.build_plan import plan_for_paths, plans_for_project
from compiler.plan.expansion import renders_expanded
from compiler.plan.katib import peak_changes
from compiler.plan.queues import quota_changes
from compiler.project import find_project, load_project

if TYPE_CHECKING:
    from compiler.plan.driver import Renderer

__all__ = [
    "Target",
    "base_worktree",
    "changed_files",
    "diff_against",
    "git",
    "git_toplevel",
    "render_target",
    "resolve_commit",
]

INPUT_SUFFIXES = (".yaml", ".yml", ".json", ".cue")
_GIT_ENV_DROPPED = ("GIT_INDEX_FILE", "GIT_DIR", "GIT_WORK_TREE", "GIT_PREFIX")


def git(cwd: Path, *args: str, check: bool = True) -> str:
    """Run git in ``cwd``; its standard output. SetupError if git is missing."""
    env = {k: v for k, v in os.environ.items() if k not in _GIT_ENV_DROPPED}
    env["GIT_TERMINAL_PROMPT"] = "0"
    try:
        done = subprocess.run(
            ["git", "-c", "core.hooksPath=/dev/null", *args],
            cwd=cwd,
            env=env,
            capture_output=True,
            encoding="utf-8",
            errors="surrogateescape",
            check=False,
        )
    except FileNotFoundError:
        raise SetupError("trainc diff needs git on PATH") from None
    if check and done.returncode != 0:
        detail = done.stderr.strip().splitlines()
        raise InputError.single(
            f"git {' '.join(args[:2])} failed: {detail[-1] if detail else done.returncode}"
        )
    return done.stdout


def git_toplevel(start: Path) -> Path:
    """The top of the git work tree containing ``start``."""
    done = git(start, "rev-parse", "--show-toplevel", check=False).strip()
    if not done:
        raise InputError.single(f"{start}: not inside a git work tree (trainc diff needs git)")
    return Path(done).resolve()


def resolve_commit(root: Path, rev: str) -> str:
    done = git(
        root,
        "rev-parse",
        "--verify",
        "--quiet",
        "--end-of-options",
        f"{rev}^{{commit}}",
        check=False,
    ).strip()
    if not done:
        raise InputError.single(f"--base {rev}: no such commit in {root}")
    return done


@contextmanager
def base_worktree(root: Path, commit: str) -> Iterator[Path]:
    """A detached checkout of ``commit`` in a temporary directory, removed on exit."""
    holder = Path(tempfile.mkdtemp(prefix="trainc-base-")).resolve()
    tree = holder / "tree"
    try:
        git(root, "worktree", "add", "--detach", "--quiet", str(tree), commit)
        yield tree
    finally:
        if tree.exists():
            git(root, "worktree", "remove", "--force", str(tree), check=False)
        shutil.rmtree(holder, ignore_errors=True)
        git(root, "worktree", "prune", check=False)


def changed_files(root: Path, commit: str) -> list[tuple[str, str]]:
    """``(path, added|removed|modified)`` between ``commit`` and the work tree.

    Staged and unstaged changes and untracked (not ignored) files; paths relative to
    ``root``, renames as a removal and an addition.
    """
    statuses = {"A": "added", "D": "removed"}
    out: dict[str, str] = {}
    fields = git(root, "diff", "--name-status", "--no-renames", "-z", commit, "--").split("\0")
    for status, path in zip(fields[0::2], fields[1::2], strict=False):
        if path:
            out[path] = statuses.get(status[:1], "modified")
    for path in git(root, "ls-files", "--others", "--exclude-standard", "-z").split("\0"):
        if path:
            out[path] = "added"
    return sorted(out.items())


@dataclass(frozen=True)
class Target:
    """What to render. ``paths`` relative to the repository root; empty: project mode.

    ``project_file`` (project mode) is the project file relative to the root.
    """

    paths: tuple[str, ...] = ()
    project_file: str | None = None
    rendered: str = "rendered"
    clusters: tuple[str, ...] | None = None
    namespace: str = "default"
    schemas: Path | None = None

    def is_input(self, path: str) -> bool:
        """Whether a changed file can change what this target renders."""
        parts = Path(path).parts
        if any(p.startswith(".") for p in parts):
            return False
        if self.project_file is not None:
            if path == self.project_file:
                return True
            if path == self.rendered or path.startswith(self.rendered + "/"):
                return False
            return path.endswith(INPUT_SUFFIXES)
        for given in self.paths:
            if path == given:
                return True
            if (given in ("", ".") or path.startswith(given.rstrip("/") + "/")) and path.endswith(
                INPUT_SUFFIXES
            ):
                return True
        return False


def target_plans(root: Path, target: Target) -> list[BuildPlan]:
    """The build plans of ``target`` in the tree at ``root`` (none where it has no inputs:
    a base without the project file, or without the PATHs)."""
    if target.project_file is not None:
        project_path = root / target.project_file
        if not project_path.exists():
            return []
        project = load_project(project_path)
        clusters = target.clusters
        if clusters is not None:  # a cluster the base does not define renders nothing there
            clusters = tuple(c for c in clusters if c in project.cluster_names)
        return plans_for_project(project, clusters, schemas=target.schemas)
    paths = [str(root / p) for p in target.paths if (root / p).exists()]
    if not paths:
        return []
    return [plan_for_paths(paths, default_namespace=target.namespace, schemas=target.schemas)]


def render_target(root: Path, target: Target, renderer: Renderer) -> dict[str, list[ObjectFile]]:
    """Render ``target`` in the tree at ``root`` into the renderer's store: cluster
    (``""`` for PATHs) -> its objects' files, by chunks and from the render cache where
    it can (:meth:`compiler.plan.driver.Renderer.objects`)."""
    plans = target_plans(root, target)
    if not plans and target.project_file is None:
        return {"": []}
    rendered: dict[str, list[ObjectFile]] = {}
    problems = []
    for plan in plans:
        objects, found = renderer.objects(plan)
        rendered[plan.cluster_name or ""] = objects
        problems += found
    if problems:
        raise InputError(sorted_problems(problems))
    return rendered


def _read_object(store: BlobStore) -> Callable[[str], dict[str, Any]]:
    def read(digest: str) -> dict[str, Any]:
        [document] = parse_yaml(store.read(digest), store.path(digest))
        return dict(document.data)

    return read


def find_project_file(start: Path, root: Path, given: Path | None = None) -> tuple[str, str] | None:
    """The project file (``given``, or the one for ``start``) and its output folder,
    relative to ``root``."""
    found = given if given is not None else find_project(start)
    if found is None:
        return None
    output = load_project(found).output
    try:
        return (
            found.resolve().relative_to(root).as_posix(),
            output.resolve().relative_to(root).as_posix(),
        )
    except ValueError:
        return None


@contextmanager
def _replaced(tree: Path, files: Mapping[str, bytes | None]) -> Iterator[None]:
    """Temporarily give the files in ``tree`` these contents (None: absent)."""
    saved: dict[Path, bytes | None] = {}
    try:
        for rel, content in files.items():
            path = tree / rel
            saved[path] = path.read_bytes() if path.is_file() else None
            if content is None:
                path.unlink(missing_ok=True)
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(content)
        yield
    finally:
        for path, content in saved.items():
            if content is None:
                path.unlink(missing_ok=True)
            else:
                path.write_bytes(content)


def diff_against(
    rev: str,
    paths: list[str],
    cwd: Path | None = None,
    namespace: str = "default",
    schemas: Path | None = None,
    impact: bool = True,
    project_file: Path | None = None,
    clusters: list[str] | None = None,
    expand: str | None = None,
) -> RenderDiff:
    """Diff what the working tree renders against what revision ``rev`` renders.

    ``paths`` are relative to ``cwd``; none means project mode (``project_file``,
    default the nearest ``trainc.yaml``; ``clusters``, default all). With ``impact``,
    each changed input file is rendered on its own to say which TrainJobs it changes.
    With ``expand`` (``jobs`` or ``pods``), both sides are compared at that depth too:
    the Jobs, Services and Pods each JobSet becomes
    (:func:`~compiler.plan.expansion.renders_expanded`).
    """
    cwd = (cwd or Path.cwd()).resolve()
    root = git_toplevel(cwd)
    commit = resolve_commit(root, rev)
    if paths:
        relative: list[str] = []
        for given in paths:
            if given == "-":
                raise InputError.single("trainc diff: '-' (stdin) cannot be diffed; give paths")
            absolute = (cwd / given).resolve()
            try:
                relative.append(absolute.relative_to(root).as_posix())
            except ValueError:
                raise InputError.single(f"{given}: outside the git work tree {root}") from None
        target = Target(tuple(relative), namespace=namespace, schemas=schemas)
    else:
        chosen = (cwd / project_file) if project_file is not None else None
        found = find_project_file(cwd, root, chosen)
        if found is None:
            raise InputError.single(
                "trainc diff: no PATH given and no trainc.yaml found in the git work tree"
            )
        wanted = tuple(clusters) if clusters else None
        target = Target((), found[0], found[1], wanted, namespace, schemas)
    # Every render goes through the render cache by chunks: the impact renders (the base
    # with one changed file) redo only the chunks that file is in. The cache pruned
    # meanwhile: the driver runs it again, into a store of this run's own.
    from compiler.plan import driver

    try:
        return driver.renders(
            lambda renderer: _diff_trees(rev, root, commit, target, impact, renderer, expand)
        )
    except OSError as error:  # a full disk, a read-only temporary folder, ...
        where = f" ({error.filename})" if error.filename else ""
        raise SetupError(
            "trainc diff: cannot write the base worktree, the render cache or its blobs"
            f"{where}: {error.strerror or error}"
        ) from None


def _diff_trees(
    rev: str,
    root: Path,
    commit: str,
    target: Target,
    impact: bool,
    renderer: Renderer,
    expand: str | None = None,
) -> RenderDiff:
    """Render ``target`` at ``commit`` and in the work tree at ``root`` (by ``renderer``),
    and diff them (with ``expand``: at that depth below each JobSet as well)."""

    def render(tree: Path) -> StoredRenders:
        return render_target(tree, target, renderer)

    head = render(root)
    with base_worktree(root, commit) as tree:
        base = render(tree)
        before, after = read_changes(base, head, _read_object(renderer.store))
        if expand is not None:  # an unchanged JobSet expands the same: changed ones only
            before, after = renders_expanded(before, expand), renders_expanded(after, expand)
        result = diff_renders(before, after, rev)
        # Kueue: what the queued TrainJobs request per ClusterQueue, before and after
        base_plans, head_plans = target_plans(tree, target), target_plans(root, target)
        result.quota = quota_changes(base_plans, head_plans)
        # Katib: what each changed Experiment's costliest trials request at once
        result.peaks = peak_changes(base_plans, head_plans)
        if not impact:
            return result
        changed = [(p, s) for p, s in changed_files(root, commit) if target.is_input(p)]
        head_files = {
            p: ((root / p).read_bytes() if (root / p).is_file() else None) for p, _ in changed
        }
        reconstructed: dict[str, StoredRenders] = {}

        def base_with(path: str) -> StoredRenders:
            with _replaced(tree, {path: head_files[path]}):
                return render(tree)

        def head_without(path: str) -> StoredRenders:
            others = {p: c for p, c in head_files.items() if p != path}
            with _replaced(tree, others):
                return render(tree)

        def head_rebuilt() -> StoredRenders:
            if "head" not in reconstructed:
                with _replaced(tree, head_files):
                    reconstructed["head"] = render(tree)
            return reconstructed["head"]

        result.impact = compute_impact(
            changed,
            base,
            head,
            base_with,
            head_without,
            head_rebuilt,
            compare=changed_stored_trainjobs,
        )
    return result
