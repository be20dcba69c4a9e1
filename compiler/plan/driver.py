"""The driver: one entry point that runs a chain over build plans, by chunks or whole.

Every verb hands its plans here and gets back what the chain made; none decides
between chunks and the whole plan itself. The chains::

    RENDER_STAGES  load -> overlays -> admit -> resolve -> render -> output overlays
                   -> GitOps hints -> output admission -> cluster checks
                   (:mod:`compiler.plan.stages`)
    CHECK_STAGES   the render chain with the policy files loaded, then the validation
                   stages (:mod:`compiler.plan.check`)

and the entry points that run them:

    :func:`render`          render (and ``trainc render``'s writers): by chunks into a
                            blob store (the render cache, ``-j``), else whole
    :func:`render_whole`    the whole builds (apply, explain, diff --live, provenance)
    :func:`check`           ``trainc check``: by chunks in ``-j`` processes (findings
                            cached), else whole
    :func:`check_and_render` ``argocd generate``: the check chain by chunks, its objects
                            kept as blobs, else whole
    :func:`renders`         ``trainc diff``: many renders into one blob store

How a plan is cut, cached and merged is :mod:`compiler.plan.chunks` (render) and
:mod:`compiler.plan.check_chunks` (check); whenever the chunks cannot give the whole
plan's answer (a single chunk, stdin, ``--previous``, an error, a result that depends on
more than one chunk, a blob pruned from the cache, a disk that cannot hold the blobs)
the driver runs the plan whole, which is the reference: both ways give the same bytes
(``tests/test_incremental.py``).

A new depth (say the Jobs and Pods a JobSet becomes) is one stage, or a few, in
:mod:`compiler.plan.stages` (a :data:`~compiler.model.build.Stage` that reads the build
and adds to it, its records in :mod:`compiler.model`), appended to ``RENDER_STAGES``:
the check chain takes the render chain's stages, a chunk runs the chain after its own
load, and the cache key names the chain's stages, so every verb and both ways get it.
A depth only some commands ask for is a chain of its own (``RENDER_STAGES`` plus the
stage) passed as ``stages`` to :func:`render` or :func:`render_whole`.

Where work on speed goes (issue 28): the context files every chunk shares are loaded
once per process (:mod:`compiler.plan.context`, called from
:func:`compiler.plan.chunks.chunk_build`); how files are cut, a large file into document
ranges, is :func:`compiler.plan.chunks.chunk_files`; where objects go (a blob store, or
for ``--no-cache`` and a stream memory) is decided here, in :func:`render`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from compiler.emit.blobs import BlobStore, blob_store
from compiler.emit.output import MissingBlob
from compiler.emit.yaml_text import dump_document
from compiler.errors import Problem, SetupError
from compiler.model.objects import sorted_objects
from compiler.model.parts import ObjectFile, PartBuild
from compiler.model.plan import BuildPlan
from compiler.plan import chunks

if TYPE_CHECKING:
    from compiler.model.build import Build, Stage
    from compiler.model.check import CheckResult

# The check chain (plan/check.py, plan/check_chunks.py) is imported where it runs: it
# loads the policy engines, which a render does not need (startup time).

__all__ = [
    "Generated",
    "Rendered",
    "Renderer",
    "Run",
    "check",
    "check_and_render",
    "render",
    "render_whole",
    "renders",
]

T = TypeVar("T")


@dataclass(frozen=True)
class Run:
    """How the driver may run a chain: in how many processes, with the render cache."""

    jobs: int | None = None  # -j N; None: the cores this process may use
    cache: bool = True  # False: --no-cache (nothing read from or written to the cache)

    def processes(self) -> int:
        return self.jobs if self.jobs is not None else chunks.default_jobs()

    def cache_dir(self) -> Path | None:
        """The render cache, when asked for and writable (else None: no cache)."""
        return chunks.writable_render_cache() if self.cache else None


# --- render -----------------------------------------------------------------------------


def run(plan: BuildPlan, stages: tuple[Stage, ...] | None = None) -> Build:
    """``plan`` built whole by ``stages`` (None: the render chain,
    :data:`compiler.plan.stages.RENDER_STAGES`). The chain is imported here, where a plan
    is rendered: a run whose chunks all come from the render cache never imports it."""
    from compiler.plan import stages as chain

    return chain.run(plan, chain.RENDER_STAGES if stages is None else stages)


@dataclass
class Rendered:
    """Every plan rendered: by chunks (``parts``, their objects in ``store``) or whole
    (``builds``), in plan order."""

    parts: list[PartBuild] | None = None
    store: BlobStore | None = None
    cache: Path | None = None  # the render cache the parts came through, if any
    builds: list[Build] | None = None
    stored: bool = False
    # blobs made again when one was pruned meanwhile, by part (see blob)
    _again: dict[int, dict[str, bytes]] | None = None

    def blob(self, part: PartBuild, digest: str) -> bytes:
        """A blob of ``part``. One pruned since its chunk was rendered (the render cache
        removed mid-run, once part of a stream is written) is a cache miss: the part's
        plan is rendered again, whole, and its digest names the same bytes."""
        assert self.store is not None
        try:
            return self.store.read(digest)
        except MissingBlob:
            pass
        if self._again is None:
            self._again = {}
        blobs = self._again.get(id(part))
        if blobs is None:
            blobs = self._again[id(part)] = _rendered_blobs(part.plan, self.stored)
        if digest not in blobs:
            raise SetupError(
                f"the render cache lost {self.store.path(digest)} during the run, and "
                "rendering again did not make it (are the inputs changing meanwhile?); run "
                "again"
            )
        return blobs[digest]


def _rendered_blobs(plan: BuildPlan, stored: bool) -> dict[str, bytes]:
    """``plan`` rendered whole, each object serialised as a chunk's are (so under the
    digest its blob had): what stands in for blobs pruned from the cache mid-run."""
    build = run(plan)
    blobs = {}
    for obj in build.stored_objects() if stored else build.objects:
        data = dump_document(obj.data).encode("utf-8")
        blobs[hashlib.sha256(data).hexdigest()] = data
    return blobs


class _Whole(Exception):
    """The plans cannot be rendered (or checked) by chunks: run them whole."""


def render(
    plans: list[BuildPlan],
    how: Run,
    write: Callable[[Rendered], T],
    *,
    whole: bool = False,
    stored: bool = False,
    files: bool = True,
    near: Path | None = None,
    stages: tuple[Stage, ...] | None = None,
) -> T:
    """Render every plan and hand the result to ``write`` (what it returns is returned).

    By chunks unless ``whole`` (the caller needs the whole builds: provenance, the
    TrainJobs themselves): each plan's objects go into a blob store (the render cache's,
    or without one a temporary store beside ``near``, so an output tree can hard-link
    them), ``stored``: as the API server stores them; ``files``: they are written as
    files (a path no folder can hold makes the render whole, which names it). When a
    blob is pruned from the cache while ``write`` runs (:class:`MissingBlob`), the
    cache's chunk results are dropped and ``write`` is given a new render, once more;
    after that, or when a plan cannot go by chunks or the blobs cannot be written
    (:class:`OSError`), ``write`` is given the whole builds (``write`` may so be called
    more than once: it says each note once, see ``compiler/cli/render.py``)."""
    if not whole:
        try:
            return _render_by_chunks(plans, how, write, stored, files, near, stages)
        except _Whole:
            pass
    return write(Rendered(builds=[run(plan, stages) for plan in plans], stored=stored))


def _render_by_chunks(
    plans: list[BuildPlan],
    how: Run,
    write: Callable[[Rendered], T],
    stored: bool,
    files: bool,
    near: Path | None,
    stages: tuple[Stage, ...] | None,
) -> T:
    cache = how.cache_dir()
    try:
        for _ in range(2):
            try:
                # a stream without the cache: blobs nothing links to or keeps, in packs
                with blob_store(cache, near, packed=not files) as store:
                    parts: list[PartBuild] = []
                    for plan in plans:
                        part = chunks.run_parts(
                            plan,
                            jobs=how.processes(),
                            cache=cache,
                            store=store,
                            stored=stored,
                            files=files,
                            stages=stages,
                        )
                        if part is None:
                            raise _Whole
                        parts.append(part)
                    return write(Rendered(parts, store, cache, stored=stored))
            except MissingBlob:
                assert cache is not None
                chunks.forget(cache)  # the cache was pruned: render into it again
    except OSError:
        # the blob store cannot be written (a full disk): render whole, which needs no
        # store and says plainly if the output itself cannot be written
        raise _Whole from None
    raise _Whole  # pruned again meanwhile: render whole, which needs no cache


def render_whole(plans: list[BuildPlan], stages: tuple[Stage, ...] | None = None) -> list[Build]:
    """Every plan's whole build (what a verb that reads every field of it needs)."""
    return [run(plan, stages) for plan in plans]


# --- check ------------------------------------------------------------------------------


def check(plans: list[BuildPlan], how: Run, *, whole: bool = False) -> CheckResult:
    """Every plan checked and merged (:func:`compiler.plan.check.check_plans`): by chunks
    in ``-j`` processes when there are several (their findings through the render cache),
    else whole; always whole with ``whole`` (the caller reads the builds)."""
    from compiler.plan import check_chunks

    jobs = how.processes()
    cache = how.cache_dir()

    def check_one(plan: BuildPlan) -> CheckResult:
        parts = check_chunks.check_parts(plan, jobs, cache) if jobs > 1 and not whole else None
        if parts is not None:
            return parts
        from compiler.plan import check as check_chain

        return check_chain.check(plan)

    if len(plans) == 1 and plans[0].cluster is None:
        # check_plans' own shortcut, taken here: the check chain (most of trainc) is not
        # imported when every chunk's findings come from the cache
        return check_one(plans[0])
    from compiler.plan import check as check_chain

    return check_chain.check_plans(plans, check_one=check_one)


@dataclass
class Generated:
    """A plan checked and rendered: the check, and by chunks the objects' YAML stream
    (None: checked whole, the objects are those of ``result.builds``)."""

    result: CheckResult
    stream: str | None = None


def check_and_render(plan: BuildPlan, *, whole: bool = False) -> Generated:
    """``plan`` checked, and its objects rendered (``argocd generate``).

    By chunks on several cores, unless ``whole``: each chunk of job files checked in a
    worker process, its rendered objects put in a temporary blob store as it is done, so
    a large repo needs memory for a chunk, not for every object; the stream is read
    from the store before it is removed. Whole on one core (chunks only cost there),
    when the plan cannot go by chunks (:mod:`compiler.plan.check_chunks`), or when the
    temporary store cannot be written or loses a blob."""
    from compiler.plan import check as check_chain

    jobs = chunks.default_jobs()
    if not whole and jobs >= 2:
        try:
            return _check_and_render_by_chunks(plan, jobs)
        except (_Whole, OSError, MissingBlob):
            pass
    return Generated(check_chain.check_plans([plan]))


def _check_and_render_by_chunks(plan: BuildPlan, jobs: int) -> Generated:
    from compiler.plan import check as check_chain
    from compiler.plan import check_chunks

    rendered: list[list[ObjectFile]] = []
    with blob_store(None, None, packed=True) as store:

        def check_one(one: BuildPlan) -> CheckResult:
            checked = check_chunks.check_and_store_parts(one, jobs, store)
            if checked is None:
                raise _Whole
            rendered.append(checked[1])
            return checked[0]

        result = check_chain.check_plans([plan], check_one=check_one)
        [objects] = rendered
        stream = "---\n".join(store.read(o.digest).decode("utf-8") for o in objects)
    return Generated(result, stream)


# --- many renders into one store (diff) -------------------------------------------------


@dataclass(frozen=True)
class Renderer:
    """Renders plans into one blob store (by chunks through the render cache where it
    can, else whole): what ``trainc diff`` compares."""

    store: BlobStore
    cache: Path | None
    jobs: int

    def objects(self, plan: BuildPlan) -> tuple[list[ObjectFile], list[Problem]]:
        """``plan``'s objects put in the store as ``render -o -`` would print them, in
        stream order; or, when it does not render, its problems (sorted) and no objects."""
        store, cache = self.store, self.cache
        for _ in range(2):
            part = chunks.run_parts(plan, jobs=self.jobs, cache=cache, store=store, files=False)
            if part is None:
                break
            if cache is None or all(store.has(o.digest) for o in part.objects):
                return part.objects, []
            chunks.forget(cache)  # blobs pruned from the cache: render the chunks again
        build = run(plan)
        if build.problems:
            return [], build.problems
        return chunks.store_objects(sorted_objects(build.objects), store), []


def renders(use: Callable[[Renderer], T]) -> T:
    """``use`` given a :class:`Renderer` whose store is the render cache's (a temporary
    one when the cache cannot be written); when a blob is pruned from the cache
    meanwhile (:class:`MissingBlob`), ``use`` runs again with a store of its own that
    nothing else removes. An :class:`OSError` (a full disk) is the caller's to say."""
    cache = chunks.writable_render_cache()
    try:
        return _with_renderer(use, cache)
    except MissingBlob:
        return _with_renderer(use, None)


def _with_renderer(use: Callable[[Renderer], T], cache: Path | None) -> T:
    jobs = chunks.default_jobs()
    with blob_store(cache, None) as store:
        return use(Renderer(store, cache, jobs))
