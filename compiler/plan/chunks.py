"""The driver's chunks: TrainJob files in chunks, each rendered alone, cached, in parallel.

A repo's input files fall in two groups. A *job file* holds TrainJobs only (every
top-level ``kind:`` line of it says ``TrainJob``); every other file (runtimes,
PriorityClasses, mixed files) is *context*. The job files are cut into chunks of about
:data:`CHUNK_JOBS` TrainJobs (the cut points depend on each file's name, so adding or
removing a file moves no other boundary; a file of more than :data:`RANGE_JOBS`
TrainJobs is cut into document ranges first, :func:`file_ranges`, whose boundaries depend
only on its documents, and a mixed file's other kinds become context ranges), and each
chunk runs the whole render chain
(:data:`compiler.plan.stages.RENDER_STAGES`) on the context files plus its own files.
Its objects are serialised at once into a content-addressed blob store and only their
names, paths and sort keys are kept, so memory stays bounded by the chunk, not the repo;
chunks run in ``-j N`` worker processes; and a chunk whose inputs are unchanged is taken
from the render cache (``$TRAINC_CACHE/render``) instead of being rendered again.

A chunk's cache key covers everything its output depends on: its files' names and bytes,
the context files, the plan (cluster, namespaces, schedulers, GitOps hints, Kubernetes
and Trainer versions, render options), the overlay files and the project file, the
upstream artifacts of the Trainer version, the CRDs passed with ``--schemas``, and
trainc's own code (a hash of the ``compiler`` package's sources), so an edit anywhere
that could change an object makes a new key.

A changed chunk is patched document by document where it can be: a chunk's result is
kept with each document's digest and TrainJob, and when its files change only the
documents that changed are rendered, as one-document ranges, and their objects put in
the place of the old ones' (:func:`splice_chunk`; an edit to one TrainJob of a file of
100 renders one TrainJob, and a line inserted above a range renders none of it again).

Nothing here decides an outcome: whenever a chunk's result could depend on another chunk
the merged build is given up and the driver (:mod:`compiler.plan.driver`) renders the
plan whole (:func:`run_parts` returns None). That happens on any error (messages such as "duplicate object ... also
defined at" name places in other chunks), on a TrainJob defined in two chunks, on two
objects written to one path, on a job file that turns out to hold anything but
TrainJobs, and on a warning located outside a chunk's own files that the context alone
(rendered once with no TrainJob) does not give, when two chunks give it. The one
cross-chunk warning merged here is an overlay patch target that matches nothing: it
matches nothing in the repo when it matches nothing in every chunk.
"""

from __future__ import annotations

import gc
import hashlib
import multiprocessing
import os
import pickle
import re
import shutil
import signal
import sys
import time
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import cache, partial
from pathlib import Path
from sys import intern
from typing import TYPE_CHECKING, Any, TypeVar

from compiler.apiserver.manifest import Manifest
from compiler.emit.blobs import BlobStore, remember
from compiler.emit.output import requirement_text
from compiler.emit.yaml_text import dump_document
from compiler.errors import Problem, SetupError, SourceLocation, warning_order
from compiler.load.discover import discover_collect
from compiler.load.ranges import document_ranges
from compiler.model.objects import RenderedObject
from compiler.model.parts import JobSummary, ObjectFile, PartBuild
from compiler.model.plan import BuildPlan
from compiler.upstream.artifacts import cache_root, upstream
from compiler.upstream.names import TRAINJOB_KIND

# The render chain (stages, loader, context, Katib) is imported where a chunk is rendered:
# a run whose chunks all come from the cache needs none of it (issue 28, startup time).
if TYPE_CHECKING:
    from compiler.load.loader import LoadResult, TextSource
    from compiler.model.build import Build, Stage

__all__ = [
    "CHUNK_JOBS",
    "chunk_key",
    "clashes",
    "context_key",
    "default_jobs",
    "forget",
    "render_cache_dir",
    "run_parts",
    "store_objects",
    "writable_render_cache",
]

T = TypeVar("T")

CHUNK_JOBS = 100  # TrainJobs per chunk, about: a chunk's render costs ~0.1 s, ~5 MiB
MAX_CHUNK_JOBS = 1000  # a chunk is cut here whatever the names say (memory)
# a job file of more TrainJobs is cut into document ranges of about this many
# (compiler.load.ranges), at most MAX_RANGE_JOBS: a chunk is then bounded whatever the
# layout (one file of 100,000 TrainJobs included)
RANGE_JOBS = 100
MAX_RANGE_JOBS = 1000
CACHE_FORMAT = "3"  # bump when ChunkResult changes shape

# a top-level kind in block style; anything else (flow style, quoted) makes a context file
_JOB_KINDS = (b"TrainJob", b"Experiment")
_KIND_LINE = re.compile(rb"^kind:[ \t]*([^\s#]*)[ \t]*(?:#.*)?\r?$", re.MULTILINE)
_UNMATCHED = re.compile(r"^patch target .* of overlay .* matches no (input|output) object")


def default_jobs() -> int:
    """The cores this process may run on (``-j`` default)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def render_cache_dir() -> Path:
    """Where chunk results and object blobs are kept: ``$TRAINC_RENDER_CACHE``, default
    ``$TRAINC_CACHE/render``."""
    explicit = os.environ.get("TRAINC_RENDER_CACHE")
    return Path(explicit) if explicit else cache_root() / "render"


def writable_render_cache() -> Path | None:
    """:func:`render_cache_dir` when this process can write there, else None (a read-only
    image, as the Argo CD sidecar's: then blobs go to a temporary store)."""
    path = render_cache_dir()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return path if os.access(path, os.W_OK | os.X_OK) else None


# --- inputs ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)  # (slots: 100,000 one-TrainJob files, ~30 MB less)
class InputFile:
    """An input file, or a range of a job file's documents (``data`` is then the whole
    file's bytes, shared by its ranges: :meth:`text` is the range's)."""

    display: str
    data: bytes
    trainjobs: int  # its `kind: TrainJob` lines; 0 for a context file
    start: int = 0  # a range: its bytes in ``data`` and the line it starts at
    end: int | None = None
    first_line: int = 1
    mark: int = 0  # a range: the CRC-32 of its last document (where chunks may end)
    lines: int = 0  # a range: the lines it spans (0: to the end of the file)
    held: int = 0  # a context file: the TrainJob documents it holds among other kinds

    @property
    def ranged(self) -> bool:
        return self.end is not None

    def text(self) -> bytes:
        return self.data if self.end is None else self.data[self.start : self.end]

    @property
    def digest(self) -> str:
        return hashlib.sha256(memoryview(self.data)[self.start : self.end]).hexdigest()


def _classify(display: str, data: bytes) -> InputFile:
    # the common spelling counted first (memchr-fast; the regex costs ~5 ms a MB)
    lines = data.count(b"\nkind:") + data.startswith(b"kind:")
    plain = data.count(b"\nkind: TrainJob\n") + data.startswith(b"kind: TrainJob\n")
    if lines and plain == lines:
        return InputFile(display, data, plain)
    kinds = _KIND_LINE.findall(data)
    # a Katib Experiment renders (itself, its trials checked) like a TrainJob: a job
    # file, in one chunk, not context that every chunk would write out again
    jobs = len(kinds) if kinds and all(kind in _JOB_KINDS for kind in kinds) else 0
    held = 0 if jobs else sum(kind in _JOB_KINDS for kind in kinds)
    return InputFile(display, data, jobs, held=held)


def _not_jobs(document: bytes) -> bool:
    """Whether a document of a mixed file holds another kind than the job kinds."""
    return any(kind not in _JOB_KINDS for kind in _KIND_LINE.findall(document))


def read_inputs(paths: Sequence[str]) -> list[InputFile] | None:
    """Every YAML file under ``paths`` with its bytes; None when one cannot be read as a
    file (stdin, a missing path: the whole render reports it)."""
    from compiler.apiserver.source_bytes import read_source
    from compiler.errors import InputError

    sources, problems = discover_collect(list(paths))
    if problems:
        return None
    files = []
    for source in sources:
        if source.kind != "yaml":
            continue
        if source.path is None:
            return None
        try:
            files.append(_classify(source.display, read_source(source.path, source.display)))
        except InputError:
            return None
    return files


def _name_hash(display: str) -> int:
    return int.from_bytes(hashlib.sha256(display.encode()).digest()[:4], "big")


def file_ranges(job_file: InputFile) -> list[InputFile]:
    """A file of more than :data:`RANGE_JOBS` TrainJobs as its document ranges
    (:func:`compiler.load.ranges.document_ranges`), else (or when it cannot be cut
    safely) the file itself. The documents of other kinds in a mixed file (its
    runtimes, say) are ranges of their own, context (``trainjobs`` 0) like a runtime
    file; its TrainJobs' ranges are job ranges."""
    from compiler.apiserver.source_bytes import max_file_documents

    if max(job_file.trainjobs, job_file.held) <= RANGE_JOBS or job_file.ranged:
        return [job_file]
    data = job_file.data
    apart = _not_jobs if job_file.held else None
    ranges = document_ranges(data, RANGE_JOBS, MAX_RANGE_JOBS, max_file_documents(), apart)
    if ranges is None:
        return [job_file]
    pieces = []
    for r in ranges:
        kinds = data.count(b"\nkind:", r.start, r.end) + (r.start == 0 and data[:5] == b"kind:")
        lines = 0 if r.end == len(data) else data.count(b"\n", r.start, r.end)
        # every range of a job file is job content, counted at least once
        jobs = 0 if r.apart else max(1, kinds)
        pieces.append(
            InputFile(job_file.display, data, jobs, r.start, r.end, r.first_line, r.last, lines)
        )
    return pieces


class Places:
    """Where a set of inputs is: whole files, and line spans of files read by ranges (a
    location there is one of those inputs')."""

    def __init__(self, files: Iterable[InputFile]) -> None:
        self.whole: set[str] = set()
        self.spans: dict[str, list[tuple[int, int]]] = {}
        for f in files:
            if not f.ranged:
                self.whole.add(f.display)
            else:
                end = f.first_line + f.lines if f.lines else sys.maxsize
                self.spans.setdefault(f.display, []).append((f.first_line, end))

    def holds(self, location: SourceLocation | None) -> bool:
        if location is None:
            return False
        if location.file in self.whole:
            return True
        spans = self.spans.get(location.file)
        line = location.line
        return spans is not None and line is not None and any(a <= line < b for a, b in spans)

    def has(self, manifest: Manifest) -> bool:
        """Whether ``manifest`` came from these inputs."""
        file = manifest.source.file
        if file in self.whole:
            return True
        return file in self.spans and self.holds(manifest.source.locate(()))


def input_units(files: Sequence[InputFile]) -> list[InputFile]:
    """``files`` with the large ones as their document ranges (:func:`file_ranges`)."""
    return [piece for f in files for piece in file_ranges(f)]


def chunk_files(files: Sequence[InputFile], per_chunk: int = 0) -> list[list[InputFile]]:
    """The job files (large ones as document ranges, :func:`file_ranges`) cut into
    chunks of about ``per_chunk`` (default :data:`CHUNK_JOBS`) TrainJobs, in input order.

    A chunk ends after a file whose name hashes to 0 modulo (files per chunk), or after
    a range whose last document does modulo (ranges per chunk), so a change to the set
    of files, or to one document, moves only the boundaries next to it."""
    jobs = [piece for f in files if f.trainjobs for piece in file_ranges(f)]
    if not jobs:
        return []
    whole = [f for f in jobs if not f.ranged]
    per_file = sum(f.trainjobs for f in whole) / len(whole) if whole else 1
    every = max(1, round((per_chunk or CHUNK_JOBS) / per_file))
    every_range = max(1, round((per_chunk or CHUNK_JOBS) / RANGE_JOBS))
    chunks: list[list[InputFile]] = []
    current: list[InputFile] = []
    count = 0
    for job_file in jobs:
        current.append(job_file)
        count += job_file.trainjobs
        if job_file.ranged:  # (the mark's low bits decided the range's own cut)
            ends = (job_file.mark >> 16) % every_range == 0
        else:
            ends = _name_hash(job_file.display) % every == 0
        if count >= MAX_CHUNK_JOBS or ends:
            chunks.append(current)
            current, count = [], 0
    if current:
        chunks.append(current)
    return chunks


def over_file_limit(
    found: Iterable[tuple[str, SourceLocation | None]], chunks: Sequence[Sequence[InputFile]]
) -> bool:
    """Whether more than :data:`~compiler.load.loader.MAX_PROBLEMS_PER_FILE` of a merge's
    load warnings (``found``: each warning's rule and location) are in one file read by
    ranges: a whole load keeps that many of a file's and counts the rest, which no range
    alone can."""
    ranged = {f.display for chunk in chunks for f in chunk if f.ranged}
    if not ranged:
        return False
    from compiler.load import loader  # (here: a merge of whole files does not need it)

    counts = Counter(
        where.file
        for rule, where in found
        if rule == "yaml" and where is not None and where.file in ranged
    )
    return any(n > loader.MAX_PROBLEMS_PER_FILE for n in counts.values())


# --- cache keys -----------------------------------------------------------------------


# a code fingerprint is stored only when every file is older than this (seconds): an edit
# within the filesystem clock's tick after one would otherwise keep its file's status
_SETTLED_SECONDS = 2.0


@cache
def code_fingerprint() -> str:
    """A hash of trainc's own sources and of the installed packages' names and versions
    (an edit to the compiler, or another ruamel.yaml, makes every key new).

    Hashing every source costs ~7 ms a run, so the hash is kept in the render cache
    under a key of the files' status (:func:`stored_fingerprint`)."""
    import sysconfig

    import compiler

    folders = sorted({sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]})
    names = []
    for folder in folders:
        try:
            names.append(sorted(n for n in os.listdir(folder) if n.endswith(".dist-info")))
        except OSError:
            names.append([])
    prefix = sys.version + "\0" + "\0".join("\0".join(n) + "\0" for n in names)
    root = Path(compiler.__file__).parent
    return stored_fingerprint(root, prefix, render_cache_dir() / "code")


def _source_files(root: Path) -> list[tuple[str, os.stat_result]]:
    """Every ``*.py`` under ``root`` but tests (``*_test.py``), by relative path, sorted,
    with its status (one directory read per folder)."""
    found = []
    folders = [("", str(root))]
    while folders:
        prefix, path = folders.pop()
        with os.scandir(path) as entries:
            for entry in entries:
                if entry.is_dir():
                    if entry.name != "__pycache__":
                        folders.append((f"{prefix}{entry.name}/", entry.path))
                elif entry.name.endswith(".py") and not entry.name.endswith("_test.py"):
                    found.append((prefix + entry.name, entry.stat()))
    return sorted(found, key=lambda item: item[0])


def stored_fingerprint(root: Path, prefix: str, store: Path | None) -> str:
    """The SHA-256 of ``prefix`` and the sources under ``root`` (:func:`_source_files`:
    each relative path and its bytes), kept in ``store`` under a key of ``prefix`` and
    every file's path, size, inode and change times: an edit, a checkout or a new
    install changes a file's mtime or ctime (ctime cannot be set back), a file added
    or removed the list. It is kept only when every file is older than
    :data:`_SETTLED_SECONDS`, so that no edit can land in the clock tick of a status
    it was kept under; ``store`` None: nothing kept."""
    files = _source_files(root)
    status = hashlib.sha256(prefix.encode())
    for relative, stat in files:
        status.update(
            f"{relative}\0{stat.st_size}:{stat.st_ino}:{stat.st_dev}:"
            f"{stat.st_mtime_ns}:{stat.st_ctime_ns}\0".encode()
        )
    entry = None if store is None else store / f"{status.hexdigest()}.pickle"
    if entry is not None:
        try:
            with open(entry, "rb") as kept:
                found = pickle.load(kept)
            if isinstance(found, str):
                return found
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError):
            pass
    digest = hashlib.sha256(prefix.encode())
    for relative, _ in files:
        digest.update(relative.encode() + b"\0" + (root / relative).read_bytes() + b"\0")
    fingerprint = digest.hexdigest()
    settled = time.time_ns() - int(_SETTLED_SECONDS * 1e9)
    if entry is not None and all(
        max(stat.st_mtime_ns, stat.st_ctime_ns) < settled for _, stat in files
    ):
        remember(entry, fingerprint)
    return fingerprint


def _tree_bytes(digest: hashlib._Hash, path: Path) -> None:
    """Feed a file, or every file under a folder (sorted), into ``digest``."""
    if path.is_dir():
        for child in sorted(p for p in path.rglob("*") if p.is_file()):
            digest.update(str(child).encode() + b"\0" + child.read_bytes() + b"\0")
    elif path.is_file():
        digest.update(str(path).encode() + b"\0" + path.read_bytes() + b"\0")
    else:
        digest.update(str(path).encode() + b"\0absent\0")


def _upstream_files(version: str) -> list[Path]:
    """The manifest and type facts of the artifacts a render reads (package or cache)."""
    try:
        found = upstream(version)
    except SetupError:
        root = cache_root() / "upstream" / version  # absent: the render fails anyway
        return [root / "manifest.json", root / "typeinfo.json"]
    return [found.manifest_path, found.typeinfo_path]


def _render_stages() -> tuple[Stage, ...]:
    """:data:`compiler.plan.stages.RENDER_STAGES`, imported when a chunk is rendered."""
    from compiler.plan.stages import RENDER_STAGES

    return RENDER_STAGES


def context_key(
    plan: BuildPlan,
    context: Sequence[InputFile],
    stored: bool,
    stages: tuple[Stage, ...] | None = None,
) -> str:
    """Everything but a chunk's own files that a chunk's output depends on (the chain
    ``stages`` too: another chain, another output; None: the render chain, named without
    importing it, as :func:`code_fingerprint` covers any edit to it)."""
    from dataclasses import replace

    digest = hashlib.sha256(f"trainc-render-{CACHE_FORMAT}\0{code_fingerprint()}\0".encode())
    names = (
        ["compiler.plan.stages.RENDER_STAGES"]
        if stages is None
        else [f"{s.__module__}.{s.__qualname__}" for s in stages]
    )
    digest.update(" ".join(names).encode())
    digest.update(repr(replace(plan, inputs=(), policies=())).encode())
    digest.update(f"\0stored={stored}\0".encode())
    for path in _upstream_files(plan.trainer_version):
        _tree_bytes(digest, path)
    if plan.schemas is not None:
        _tree_bytes(digest, plan.schemas)
    cluster = plan.cluster
    if cluster is not None:
        _tree_bytes(digest, cluster.project_file)
        for _, paths in cluster.overlay_layers:
            for overlay in paths:
                _tree_bytes(digest, Path(overlay))
    for context_file in context:
        at = f"@{context_file.first_line}" if context_file.ranged else ""
        digest.update(f"{context_file.display}{at}\0{context_file.digest}\0".encode())
    return digest.hexdigest()


def chunk_key(context: str, files: Sequence[InputFile], first: bool) -> str:
    """A chunk's key: ``context`` (:func:`context_key`) and its files' names and bytes
    (a range's with the line it starts at: its positions are the file's)."""
    digest = hashlib.sha256(f"{context}\0first={first}\0".encode())
    for job_file in files:
        at = f"@{job_file.first_line}" if job_file.ranged else ""
        digest.update(f"{job_file.display}{at}\0{job_file.digest}\0".encode())
    return digest.hexdigest()


# --- one chunk ------------------------------------------------------------------------


# a document of a job file: its bytes' SHA-256 and its TrainJob's (group, namespace, name)
Document = tuple[str, tuple[str, str, str]]
# a file or range of a chunk: its bytes' SHA-256 and its documents
UnitDocuments = tuple[str, list[Document]]


@dataclass
class ChunkResult:
    """One chunk's render, without the objects' data (they are in the blob store)."""

    objects: list[ObjectFile] = field(default_factory=list)
    summaries: list[JobSummary] = field(default_factory=list)
    identities: list[tuple[str, str, str]] = field(default_factory=list)  # TrainJob ns, name
    problems: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    foreign: bool = False  # a job file held something else than TrainJobs
    # each own file's (or range's) documents: their SHA-256 and the TrainJob each holds;
    # None when the chunk cannot be patched document by document (see splice_chunk)
    documents: list[UnitDocuments] | None = None

    # Pickled (into the cache) with its objects and summaries as plain tuples, made named
    # tuples again without a Python call each: a 10,000-TrainJob repo's chunks hold
    # 26,667 of them, read back on every run (0.05 s of CPU as named tuples, 0.015 s so)
    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["objects"] = [tuple(o) for o in self.objects]
        state["summaries"] = [tuple(s) for s in self.summaries]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        state["objects"] = list(map(partial(tuple.__new__, ObjectFile), state["objects"]))
        state["summaries"] = list(map(partial(tuple.__new__, JobSummary), state["summaries"]))
        self.__dict__.update(state)


def _context_texts(context: Sequence[InputFile]) -> list[TextSource]:
    """The context's texts as the loader takes them (one key for the per-process load)."""
    return [(f.display, f.text(), f.first_line) for f in context]


def chunk_build(
    plan: BuildPlan,
    context: Sequence[InputFile],
    own: Sequence[InputFile],
    keep_context: bool,
    stages: Sequence[Stage] | None = None,
) -> Build:
    """The render chain (or ``stages`` after the load) on the context files and ``own``;
    TrainJobs of context files are rendered only when ``keep_context``."""
    from compiler.load.loader import load_texts_collect
    from compiler.model.build import Build
    from compiler.plan.context import context_state

    after_load = _render_stages()[1:] if stages is None else stages
    places = Places(context)
    texts: list[TextSource] = [(f.display, f.text(), f.first_line) for f in own]

    def load_chunk(build: Build) -> None:
        # the context once per process (compiler.plan.context), then the chunk's files
        start = context_state(_context_texts(context), plan.default_namespace, plan.crds)
        loaded, problems = load_texts_collect(texts, plan.default_namespace, plan.crds, start=start)
        if not keep_context:
            loaded.objects = [
                m for m in loaded.objects if m.kind != TRAINJOB_KIND or not places.has(m)
            ]
        loaded.texts = {}
        build.loaded = loaded
        build.originals = list(loaded.objects)
        build.problems += problems
        build.warnings += loaded.warnings

    build = Build(plan)
    for stage in (load_chunk, *after_load):
        stage(build)
    return build


def chunk_contents(loaded: LoadResult, own: Places) -> tuple[bool, list[tuple[str, str, str]]]:
    """(whether the chunk's own files held other kinds than TrainJob, the identities
    (group, namespace, name) of the TrainJobs it loaded): what a merge checks across chunks."""
    from compiler.katib.experiment import is_experiment

    foreign = any(
        m.kind != TRAINJOB_KIND and not is_experiment(m.data) and own.has(m)
        for m in (*loaded.objects, *loaded.rejected, *loaded.others)
    )
    identities = [
        (intern(m.api_version.partition("/")[0]), intern(m.namespace or ""), m.name)
        for m in loaded.objects
        if m.kind == TRAINJOB_KIND
    ]
    return foreign, identities


def store_objects(objects: Sequence[RenderedObject], store: BlobStore) -> list[ObjectFile]:
    """Serialise ``objects`` into ``store``; what is kept of each is its :class:`ObjectFile`."""
    # the few namespaces, kinds and API versions kept once each, not once per object
    # (kept for every object of the repo until it is written: memory, issue 28)
    files = []
    for obj in objects:
        namespace, name, kind, api_version, object_name = obj.sort_key
        namespace, kind = intern(namespace), intern(kind)
        files.append(
            ObjectFile(
                (namespace, name, kind, intern(api_version), object_name),
                obj.relative_path,
                store.put(dump_document(obj.data).encode("utf-8")),
                (intern(obj.trainjob_namespace), obj.trainjob_name),
                kind,
            )
        )
    store.flush()  # readable by the parent when this is a worker (a PackStore's)
    return files


def render_chunk(
    plan: BuildPlan,
    context: Sequence[InputFile],
    own: Sequence[InputFile],
    keep_context: bool,
    stored: bool,
    store: BlobStore,
    stages: tuple[Stage, ...] | None = None,
) -> ChunkResult:
    """Render one chunk (``stages``, a chain that starts with its load; None: the render
    chain) and put its objects in ``store``."""
    build = chunk_build(plan, context, own, keep_context, None if stages is None else stages[1:])
    result = ChunkResult(problems=build.problems, warnings=build.warnings, notes=list(build.notes))
    result.foreign, result.identities = chunk_contents(build.loaded, Places(own))
    # Katib trials' TrainJobs (out of ``loaded`` at the chain's end): a clash with a
    # TrainJob of another chunk makes the render whole, which names it
    result.identities += [
        (t.manifest.api_version.partition("/")[0], t.manifest.namespace or "", t.manifest.name)
        for t in build.katib_trials
    ]
    result.objects = store_objects(build.stored_objects() if stored else build.objects, store)
    result.summaries = [
        JobSummary(
            (intern(s.namespace), s.name),
            s.line(),
            tuple(s.secret_requirements),
            tuple(requirement_text(r) for r in s.secret_requirements),
        )
        for s in build.summaries
    ]
    if not result.problems and not result.foreign:
        keys = [o.trainjob for o in result.objects] + [s.key for s in result.summaries]
        result.documents = documents_of(own, build.loaded.objects, result.identities, keys)
    return result


# --- a chunk patched document by document -----------------------------------------------
#
# A one-file change at 10,000 TrainJobs renders the file's chunk again: 100 TrainJobs for
# the one that changed (issue 28). A chunk's result is kept with each of its documents'
# digest and TrainJob, when it has one TrainJob a document and every object and summary
# is one of theirs (no problem, no other kind, no Katib Experiment). When its files change,
# the documents that changed are rendered alone (as document ranges, located in their
# file as a whole render locates them) and their objects put in the place of the old
# ones', provided the warnings say the same either way (see splice_chunk). An inserted
# line moves a range's first line and so its key, but no document's bytes: such a chunk
# is patched with nothing to render.


def _document_spans(unit: InputFile) -> list[tuple[int, int, int]] | None:
    """The documents of ``unit`` as (start, end, first line) in its file's bytes; None when
    it cannot be cut (:func:`compiler.load.ranges.document_ranges`) into one a TrainJob."""
    from compiler.apiserver.source_bytes import max_file_documents

    text = unit.text()
    ranges = document_ranges(text, 1, 1, max_file_documents())
    if ranges is None:
        if unit.trainjobs != 1:
            return None
        end = len(unit.data) if unit.end is None else unit.end
        return [(unit.start, end, unit.first_line)]
    if len(ranges) != unit.trainjobs:
        return None
    return [
        (unit.start + r.start, unit.start + r.end, unit.first_line + r.first_line - 1)
        for r in ranges
    ]


def _document_digest(unit: InputFile, start: int, end: int) -> str:
    return hashlib.sha256(memoryview(unit.data)[start:end]).hexdigest()


def documents_of(
    own: Sequence[InputFile],
    loaded: Sequence[Manifest],
    identities: Iterable[tuple[str, str, str]],
    keys: Iterable[tuple[str, str]],
) -> list[UnitDocuments] | None:
    """``own``'s documents with their TrainJobs, when a chunk of them can be patched
    document by document (see above): one TrainJob a document among the ``loaded``, the
    chunk's TrainJobs (``identities``) those, every object and summary one of theirs
    (``keys``: the namespace and name of each one's TrainJob); else None."""
    spans = [_document_spans(unit) for unit in own]
    if not own or any(s is None for s in spans):
        return None
    starts: dict[str, list[tuple[int, int, int]]] = {}  # by file: (first line, unit, doc)
    for u, (unit, found) in enumerate(zip(own, spans, strict=True)):
        assert found is not None
        starts.setdefault(unit.display, []).extend(
            (line, u, d) for d, (_, _, line) in enumerate(found)
        )
    for lines in starts.values():
        lines.sort()
    held: dict[tuple[int, int], tuple[str, str, str]] = {}
    for manifest in loaded:
        if manifest.kind != TRAINJOB_KIND or manifest.source.file not in starts:
            continue
        line = manifest.locate(()).line
        lines = starts[manifest.source.file]
        at = bisect_right(lines, (line, sys.maxsize, sys.maxsize)) - 1 if line else -1
        if at < 0 or lines[at][1:] in held:
            return None
        identity = (
            intern(manifest.api_version.partition("/")[0]),
            intern(manifest.namespace or ""),
            manifest.name,
        )
        held[lines[at][1:]] = identity
    documents = [
        (
            unit.digest,
            [
                (_document_digest(unit, a, b), held.get((u, d), ("", "", "")))
                for d, (a, b, _) in enumerate(found or [])
            ],
        )
        for u, (unit, found) in enumerate(zip(own, spans, strict=True))
    ]
    mine = [identity for _, docs in documents for _, identity in docs]
    names = {identity[1:] for identity in mine}
    if (
        len(held) != len(mine)
        or len(names) != len(mine)
        or sorted(mine) != sorted(identities)
        or any(key not in names for key in keys)
    ):
        return None
    return documents


def changed_documents(
    own: Sequence[InputFile], documents: list[UnitDocuments]
) -> tuple[list[tuple[int, int]], list[InputFile]] | None:
    """The documents of ``own`` that differ from ``documents`` (those of an earlier
    result of the same files): their (file, document) indexes and each as a one-document
    range of its file; None when the files do not hold as many documents as before. (A
    file, or range, whose bytes are the same is not cut into documents at all.)"""
    if len(documents) != len(own):
        return None
    changed: list[tuple[int, int]] = []
    pieces: list[InputFile] = []
    for u, (unit, (whole, before)) in enumerate(zip(own, documents, strict=True)):
        if unit.digest == whole:
            continue
        spans = _document_spans(unit)
        if spans is None or len(spans) != len(before):
            return None
        for d, ((start, end, line), (digest, _)) in enumerate(zip(spans, before, strict=True)):
            if _document_digest(unit, start, end) != digest:
                changed.append((u, d))
                lines = 0 if end == len(unit.data) else unit.data.count(b"\n", start, end)
                pieces.append(InputFile(unit.display, unit.data, 1, start, end, line, 0, lines))
    return changed, pieces


def patch_documents(
    own: Sequence[InputFile],
    documents: list[UnitDocuments],
    changed: list[tuple[int, int]],
    fresh: list[UnitDocuments],
) -> tuple[list[UnitDocuments], set[tuple[str, str]]] | None:
    """``documents`` with the ``changed`` ones those of ``fresh`` (the changed documents
    rendered alone, one each) and ``own``'s digests, and the namespace and name of the
    TrainJobs gone; None when two TrainJobs would share a name (a whole render names
    them)."""
    patched = [list(before) for _, before in documents]
    for (u, d), (_, [document]) in zip(changed, fresh, strict=True):
        patched[u][d] = document
    names = [identity[1:] for docs in patched for _, identity in docs]
    if len(set(names)) != len(names):
        return None
    gone = {documents[u][1][d][1][1:] for u, d in changed}
    return [(unit.digest, docs) for unit, docs in zip(own, patched, strict=True)], gone


def few(changed: Sequence[object], documents: list[UnitDocuments]) -> bool:
    """Whether so few documents changed that patching beats rendering the chunk whole."""
    return len(changed) * 4 <= sum(len(before) for _, before in documents)


def patchable(context: Sequence[InputFile], index: int) -> bool:
    """Whether the chunk ``index`` may be patched: not the first while a context file holds
    TrainJobs or Experiments (the first chunk renders those, as no other does)."""
    return index > 0 or not any(f.held for f in context)


def _unmatched_warning(warning: Problem) -> bool:
    return bool(_UNMATCHED.match(warning.message))


def _said_alike(result: ChunkResult, base: ChunkResult) -> bool:
    """Whether ``result`` says what the context alone (``base``) says and no more, but for
    overlay patches that match no object (a chunk's own) and notes ``base`` has too."""
    said = Counter(_identity(w) for w in result.warnings if not _unmatched_warning(w))
    context = Counter(_identity(w) for w in base.warnings if not _unmatched_warning(w))
    return said == context and set(result.notes) <= set(base.notes)


def splice_chunk(
    plan: BuildPlan,
    context: Sequence[InputFile],
    own: Sequence[InputFile],
    last: ChunkResult,
    base: ChunkResult,
    stored: bool,
    store: BlobStore,
    stages: tuple[Stage, ...] | None = None,
    *,
    render: bool = False,
) -> ChunkResult | None:
    """The render of a chunk (:func:`patchable`) made from
    ``last``, the result its files had before, by rendering only the documents that
    changed (``render``; else None when any did); None when it cannot be (see above:
    then the chunk is rendered whole). ``base``: the context rendered alone.

    Warnings: ``last`` and the changed documents rendered alone must each say what the
    context alone says (counted: a TrainJob that causes one of the context's warnings
    again says it twice), and the notes be among the context's; then the chunk says it
    too. A patch that matches no object of the changed documents must have matched none
    of ``last`` either: then it matches none of the chunk (the documents kept are among
    ``last``'s); one that matches one of theirs is not said."""
    if last.documents is None or not _said_alike(last, base):
        return None
    found = changed_documents(own, last.documents)
    if found is None:
        return None
    changed, pieces = found
    if not pieces:
        return replace(last, documents=last.documents)
    if not render or not few(changed, last.documents):
        return None
    fresh = render_chunk(plan, context, pieces, False, stored, store, stages)
    if fresh.documents is None or not _said_alike(fresh, base):
        return None
    unmatched = {_identity(w) for w in last.warnings if _unmatched_warning(w)}
    if any(_identity(w) not in unmatched for w in fresh.warnings if _unmatched_warning(w)):
        return None
    patched = patch_documents(own, last.documents, changed, fresh.documents)
    if patched is None:
        return None
    documents, gone = patched
    return ChunkResult(
        objects=[o for o in last.objects if o.trainjob not in gone] + fresh.objects,
        summaries=[s for s in last.summaries if s.key not in gone] + fresh.summaries,
        identities=[identity for _, docs in documents for _, identity in docs],
        warnings=fresh.warnings,
        notes=sorted(set(last.notes) | set(fresh.notes)),
        documents=documents,
    )


# --- the cache of chunk results -------------------------------------------------------


def _entry_path(cache: Path, key: str) -> Path:
    return cache / "chunks" / key[:2] / f"{key}.pickle"


def read_cached(path: Path) -> Any:
    """The object pickled at ``path`` in the cache, or None when it is missing or cannot
    be read back (torn, from another trainc, another Python): a cache miss, not an error."""
    try:
        with open(path, "rb") as entry:
            return pickle.load(entry)
    except (
        OSError,
        pickle.UnpicklingError,
        EOFError,
        AttributeError,
        ImportError,
        TypeError,
        ValueError,
    ):
        return None


def _cached(cache: Path, key: str, store: BlobStore) -> ChunkResult | None:
    result = read_cached(_entry_path(cache, key))
    # A blob pruned since is found when it is linked (MissingBlob): see forget().
    return result if isinstance(result, ChunkResult) else None


def forget(cache: Path) -> None:
    """Drop every chunk result (their blobs stay): what a pruned blob store needs."""
    shutil.rmtree(cache / "chunks", ignore_errors=True)


def _remember(cache: Path, key: str, result: ChunkResult) -> None:
    remember(_entry_path(cache, key), result)


# --- workers --------------------------------------------------------------------------

_STOPPING = {signal.SIGINT, signal.SIGTERM}

# The task forked workers run (set just before the pool starts: they inherit it).
_TASK: list[Callable[[int], Any]] = []


def _run_task(index: int) -> Any:
    return _TASK[0](index)


def _worker_signals(mask: set[Any]) -> None:
    """A worker ends by SIGTERM at once, as a process without a handler (one the CLI's
    handler inherited can leave a worker the pool stops waiting for a lock forever);
    a cue it waits for dies with it (PR_SET_PDEATHSIG)."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, mask)


def map_chunks(task: Callable[[int], T], indexes: Sequence[int], jobs: int) -> list[T]:
    """``task`` on each index, in ``jobs`` forked processes (in this one for 1), in order.

    Workers are forked, so ``task`` and what it reads (the plan, its loaded CRDs, the
    input bytes) need no pickling; only the results travel back."""
    if jobs <= 1 or len(indexes) <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        return [task(i) for i in indexes]
    _TASK[:] = [task]
    # The pool's threads (and the workers, until they start) are made with Ctrl-C and
    # SIGTERM blocked: the kernel gives a signal to any thread that does not block it,
    # and CPython runs the handler only when the main thread wakes, which, waiting for
    # the results, it would not; the main thread alone takes them, and stops the pool.
    held = signal.pthread_sigmask(signal.SIG_BLOCK, _STOPPING)
    try:
        pool = multiprocessing.get_context("fork").Pool(
            min(jobs, len(indexes)), initializer=_worker_signals, initargs=(held,)
        )
    except BaseException:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
        _TASK.clear()
        raise
    try:
        with pool:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)  # one held meanwhile: here
            return pool.map(_run_task, indexes, chunksize=1)
    finally:
        _TASK.clear()


def _render_missing(
    plan: BuildPlan,
    context: list[InputFile],
    chunks: list[list[InputFile]],
    missing: list[int],
    stored: bool,
    store: BlobStore,
    jobs: int,
    stages: tuple[Stage, ...] | None,
    cache: Path | None,
    shared: str,
    base: ChunkResult,
) -> dict[int, ChunkResult]:
    """Render the chunks ``missing`` (their indexes), in ``jobs`` processes; with a
    ``cache``, a chunk whose files the cache has an earlier result of is patched from it
    (:func:`splice_chunk`; here when nothing is to be rendered, as after a line inserted
    above it), ``shared`` its context's key."""
    done: dict[int, ChunkResult] = {}
    lasts: dict[int, ChunkResult] = {}
    for index in missing:
        last = (
            _last(cache, shared, chunks[index], store)
            if cache and patchable(context, index)
            else None
        )
        if last is not None:
            lasts[index] = last
            spliced = splice_chunk(plan, context, chunks[index], last, base, stored, store, stages)
            if spliced is not None:
                done[index] = spliced
    rest = [index for index in missing if index not in done]
    if len(rest) > 1:
        from compiler.plan.context import context_state

        _render_stages()  # the chain imported here, once, not in each forked worker
        # loaded once here, inherited by every worker (the context: already, unless the
        # context alone came from the cache)
        context_state(_context_texts(context), plan.default_namespace, plan.crds)

    def task(index: int) -> ChunkResult:
        own, last = chunks[index], lasts.get(index)
        if last is not None:
            spliced = splice_chunk(
                plan, context, own, last, base, stored, store, stages, render=True
            )
            if spliced is not None:
                return spliced
        return render_chunk(plan, context, own, index == 0, stored, store, stages)

    done.update(zip(rest, map_chunks(task, rest, jobs), strict=True))
    return done


def _last_path(cache: Path, shared: str, own: Sequence[InputFile]) -> Path:
    """Where the key of the last result of a chunk of ``own``'s files is kept: by their
    names (a range's with its mark, the CRC-32 of its last document), not their bytes or
    lines. (Any earlier result of the same context is a right one to patch from, as what
    changed is told document by document; one of the same files is the one that fits.)"""
    names = "\0".join(f"{u.display}#{u.mark}" if u.ranged else u.display for u in own)
    key = hashlib.sha256(f"{shared}\0last\0{names}".encode()).hexdigest()
    return cache / "chunks" / "last" / f"{key}.pickle"


def _last(
    cache: Path, shared: str, own: Sequence[InputFile], store: BlobStore
) -> ChunkResult | None:
    """The last result rendered of a chunk of ``own``'s files, with its documents, if kept."""
    try:
        key, documents = read_cached(_last_path(cache, shared, own))
    except (TypeError, ValueError):  # None, or not the pair written
        return None
    found = _cached(cache, key, store) if isinstance(key, str) else None
    if found is None or not isinstance(documents, list):
        return None
    return replace(found, documents=documents)


# --- the merged build -----------------------------------------------------------------


def _location_file(problem: Problem) -> str | None:
    return None if problem.location is None else problem.location.file


def _identity(problem: Problem) -> tuple[str, str]:
    what = f"{problem.object}\0{problem.rule}\0{problem.field_path}\0{problem.message}"
    return (repr(problem.location), what)


def _merge_warnings(
    base: list[Problem], chunks: list[list[InputFile]], results: list[ChunkResult]
) -> list[Problem] | None:
    """The warnings of the whole plan, or None when they cannot be told from the chunks'."""
    base_count = Counter(_identity(w) for w in base if not _UNMATCHED.match(w.message))
    merged = [w for w in base if not _UNMATCHED.match(w.message)]
    extra_seen: set[tuple[str, str]] = set()  # extras of the chunks before
    unmatched: list[list[Problem]] = []
    for own, result in zip(chunks, results, strict=True):
        places = Places(own)
        remaining = Counter(base_count)
        extras: set[tuple[str, str]] = set()
        unmatched.append([w for w in result.warnings if _UNMATCHED.match(w.message)])
        for warning in result.warnings:
            if _UNMATCHED.match(warning.message):
                continue
            if places.holds(warning.location):
                merged.append(warning)
                continue
            identity = _identity(warning)
            if remaining[identity] > 0:
                remaining[identity] -= 1  # the context's own warning, counted once
                continue
            if identity in extra_seen:
                return None  # caused in two chunks: one or two in a whole render?
            extras.add(identity)
            merged.append(warning)
        if +remaining:
            return None  # a context warning a chunk does not give: not context-only
        extra_seen |= extras
    common = {_identity(w) for w in unmatched[0]}
    for found in unmatched[1:]:
        common &= {_identity(w) for w in found}
    merged += [w for w in unmatched[0] if _identity(w) in common]
    if over_file_limit(((str(w.rule), w.location) for w in merged), chunks):
        return None
    return sorted(merged, key=warning_order)


def clashes(objects: list[ObjectFile], files: bool) -> bool:
    """Two objects on one path (or on paths one case-insensitive filesystem folds into
    one), or a path no folder can hold: the whole render says which (planned_files)."""
    paths = [obj.relative_path for obj in objects]
    if len(set(paths)) != len(paths) or len({p.casefold() for p in paths}) != len(paths):
        return True
    if files:
        for path in paths:
            folder, _, name = path.partition("/")
            if folder in ("", ".", "..") or "/" in name or "\0" in path:
                return True
    return False


def run_parts(
    plan: BuildPlan,
    *,
    jobs: int = 1,
    cache: Path | None = None,
    store: BlobStore,
    stored: bool = False,
    files: bool = True,
    stages: tuple[Stage, ...] | None = None,
) -> PartBuild | None:
    """``plan`` rendered chunk by chunk (see the module docstring) by the chain
    ``stages`` (None: the render chain); None when it must be rendered whole (a single chunk, stdin,
    ``--previous``, or a result that depends on more than one chunk)."""
    if plan.previous is not None:
        return None
    inputs = read_inputs(plan.inputs)
    if inputs is None:
        return None
    units = input_units(inputs)
    chunks = chunk_files(units)
    if len(chunks) < 2:
        return None
    context = [f for f in units if not f.trainjobs]
    shared = context_key(plan, context, stored, stages)
    keys = [chunk_key(shared, chunk, i == 0) for i, chunk in enumerate(chunks)]
    base_key = chunk_key(shared, [], False)
    found: dict[int, ChunkResult] = {}
    base: ChunkResult | None = None
    if cache is not None:
        base = _cached(cache, base_key, store)
        for i, key in enumerate(keys):
            hit = _cached(cache, key, store)
            if hit is not None:
                found[i] = hit
        gc.freeze()  # kept to the end: the collector need not walk them again
    if base is None:
        base = render_chunk(plan, context, [], False, stored, store, stages)
        if cache is not None:
            _remember(cache, base_key, base)
    if base.problems or base.objects:
        return None
    missing = [i for i in range(len(chunks)) if i not in found]
    fresh = _render_missing(
        plan, context, chunks, missing, stored, store, jobs, stages, cache, shared, base
    )
    if cache is not None:
        for i, result in fresh.items():
            # the documents are kept apart, read only to patch the chunk (see _last)
            _remember(cache, keys[i], replace(result, documents=None))
            if patchable(context, i) and result.documents is not None:
                remember(_last_path(cache, shared, chunks[i]), (keys[i], result.documents))
    results = [found.get(i) or fresh[i] for i in range(len(chunks))]
    return _merge(plan, base, chunks, results, files, len(fresh))


def _merge(
    plan: BuildPlan,
    base: ChunkResult,
    chunks: list[list[InputFile]],
    results: list[ChunkResult],
    files: bool,
    rendered: int,
) -> PartBuild | None:
    identities: set[tuple[str, str, str]] = set()
    for result in results:
        if result.problems or result.foreign:
            return None
        for identity in result.identities:
            if identity in identities:
                return None  # one TrainJob in two chunks: a duplicate the whole load names
            identities.add(identity)
    warnings = _merge_warnings(base.warnings, chunks, results)
    if warnings is None:
        return None
    objects = sorted((o for r in results for o in r.objects), key=lambda o: o.sort_key)
    if clashes(objects, files):
        return None
    summaries = sorted((s for r in results for s in r.summaries), key=lambda s: s.key)
    notes = sorted({note for r in (base, *results) for note in r.notes})
    return PartBuild(plan, objects, summaries, warnings, notes, rendered, len(results))
