"""``trainc check -j N``: the check chain on chunks of job files, in worker processes.

The chunks are those of :mod:`compiler.plan.chunks`: each runs the whole check chain
(:data:`compiler.plan.check.CHECK_STAGES`) on the context files (runtimes, policies, ...)
and its own job files. Findings located in a chunk's own files are that chunk's; a
finding elsewhere (a runtime, a policy, an overlay) is the context's when the context
checked alone (no TrainJob) gives it too, said once; otherwise it is the one chunk's
that gives it. A finding two chunks both give beyond the context's, a render error in
any chunk, a TrainJob in two chunks or a job file holding other kinds: the plan is
checked whole (:func:`check_parts` returns None). ``-j 1`` checks whole (chunks only
cost there); ``tests/test_incremental.py`` compares the reports of both ways.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from compiler.apiserver.manifest import Manifest, SourceMap
from compiler.emit.blobs import BlobStore, remember
from compiler.errors import Finding, ObjectRef, Severity, SourceLocation, finding_order
from compiler.load.discover import Source, discover_collect
from compiler.model.check import CheckResult
from compiler.model.parts import ObjectFile
from compiler.model.plan import BuildPlan
from compiler.plan.chunks import (
    InputFile,
    Places,
    UnitDocuments,
    changed_documents,
    chunk_build,
    chunk_contents,
    chunk_files,
    chunk_key,
    clashes,
    context_key,
    documents_of,
    few,
    input_units,
    map_chunks,
    over_file_limit,
    patch_documents,
    patchable,
    read_cached,
    read_inputs,
    store_objects,
)
from compiler.policy.objects import PolicyObject
from compiler.upstream.names import TRAINJOB_KIND

__all__ = ["check_and_store_parts", "check_key", "check_parts"]

# TrainJobs per chunk, about: render's (the cache's unit). The context is loaded once per
# process (compiler.plan.context), so a chunk's fixed cost is small: 1,000 TrainJobs in
# chunks of 100 cost the CPU of chunks of 500, and a one-file change is checked again in
# a third of the time (0.6 s of CPU against 1.65 s)
CHECK_CHUNK_JOBS = 100
CHECK_CACHE_FORMAT = "4"  # bump when CheckChunk (or what it holds) changes shape
_UNMATCHED = re.compile(r"^patch target .* of overlay .* matches no (input|output) object")


@dataclass
class CheckChunk:
    """One chunk's check: its findings and (named only) the objects it checked."""

    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    objects: list[PolicyObject] = field(default_factory=list)  # data: kind and metadata only
    identities: list[tuple[str, str, str]] = field(default_factory=list)
    failed: bool = False  # the render chain had problems
    foreign: bool = False
    rendered: list[ObjectFile] = field(default_factory=list)  # with a blob store only
    # the namespace and name of the TrainJob each object is of, and the chunk's documents
    # (:func:`compiler.plan.chunks.documents_of`; None: not to be patched): what a chunk
    # is patched from (:func:`splice_check`), kept with its 'last' entry only
    owners: list[tuple[str, str]] = field(default_factory=list)
    documents: list[UnitDocuments] | None = None

    # Pickled (back from a worker, into the cache) with the findings and objects as plain
    # tuples: a named tuple or a class is pickled through a Python call (or a state dict)
    # per object, a plain one is not. A 10,000-TrainJob repo's cached chunks hold 26,667
    # objects, read back on every run: 0.09 s of CPU as classes, 0.04 s as tuples.
    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["findings"] = _plain_findings(self.findings)
        state["objects"] = [(o.data, o.origin.source.file, o.stage) for o in self.objects]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        state["findings"] = _findings_of_plain(state["findings"])
        state["objects"] = [
            PolicyObject(data, Manifest(data, SourceMap(file)), stage)
            for data, file, stage in state["objects"]
        ]
        self.__dict__.update(state)


_Plain = tuple[Any, ...]


def _plain_findings(findings: list[Finding]) -> list[_Plain]:
    """``findings`` as tuples of plain values; a reference or location several findings
    share stays one tuple (pickled once)."""
    shared: dict[int, _Plain] = {}

    def plain(value: tuple[Any, ...] | None) -> _Plain | None:
        if value is None:
            return None
        found = shared.get(id(value))
        if found is None:
            found = shared[id(value)] = tuple(value)
        return found

    return [
        (
            f.rule,
            f.severity.value,
            f.message,
            plain(f.object),
            f.field_path,
            plain(f.location),
            f.stage,
            f.details,
        )
        for f in findings
    ]


def _findings_of_plain(rows: list[_Plain]) -> list[Finding]:
    """:func:`_plain_findings` read back."""
    refs: dict[int, ObjectRef] = {}
    locations: dict[int, SourceLocation] = {}
    severities = {s.value: s for s in Severity}
    out = []
    for rule, severity, message, ref, field_path, location, stage, details in rows:
        if ref is not None:
            made = refs.get(id(ref))
            if made is None:
                made = refs[id(ref)] = ObjectRef(*ref)
            ref = made
        if location is not None:
            place = locations.get(id(location))
            if place is None:
                place = locations[id(location)] = SourceLocation(*location)
            location = place
        out.append(
            Finding(rule, severities[severity], message, ref, field_path, location, stage, details)
        )
    return out


def _named(obj: PolicyObject) -> PolicyObject:
    """``obj`` reduced to what a report reads of it: its name, stage and file."""
    metadata = obj.data.get("metadata") or {}
    kept = {k: metadata[k] for k in ("name", "namespace") if k in metadata}
    data = {"kind": obj.data.get("kind", ""), "metadata": kept}
    return PolicyObject(data, Manifest(data, SourceMap(obj.origin.source.file)), obj.stage)


def _check_chunk(
    plan: BuildPlan,
    context: Sequence[InputFile],
    own: Sequence[InputFile],
    first: bool,
    store: BlobStore | None,
) -> CheckChunk:
    # the check chain is imported where a chunk is checked: not when all come from the cache
    from compiler.plan.check import CHECK_STAGES
    from compiler.plan.katib import katib_trials, katib_trials_outside

    stages = CHECK_STAGES[1:]
    if not first:
        # a context file's Katib Experiment is checked by every chunk, but its trials are
        # planned and checked in the first one only (as a context file's TrainJobs are)
        unplanned = katib_trials_outside(frozenset(f.display for f in context))
        stages = tuple(unplanned if s is katib_trials else s for s in stages)
    build = chunk_build(plan, context, own, first, stages)
    context_places = Places(context)
    result = CheckChunk(findings=build.findings, notes=list(build.notes))
    result.failed = bool(build.problems)
    if store is not None and not result.failed:
        result.rendered = store_objects(build.objects, store)
    result.foreign, result.identities = chunk_contents(build.loaded, Places(own))
    for obj in build.checked:
        # the context's inputs are counted once, from the context checked alone
        if (
            own
            and obj.stage == "input"
            and obj.origin.kind != TRAINJOB_KIND
            and context_places.has(obj.origin)
        ):
            continue
        result.objects.append(_named(obj))
        result.owners.append((obj.origin.namespace or "", obj.origin.name))
    if own and store is None and not result.failed and not result.foreign:
        result.documents = documents_of(own, build.loaded.objects, result.identities, result.owners)
    return result


def _said_alike(chunk: CheckChunk, base: CheckChunk) -> bool:
    """Whether ``chunk`` finds what the context checked alone (``base``) finds and no more,
    but for overlay patches that match no object, and notes ``base`` has too."""
    found = Counter(_identity(f) for f in chunk.findings if not _unmatched(f))
    context = Counter(_identity(f) for f in base.findings if not _unmatched(f))
    return found == context and set(chunk.notes) <= set(base.notes)


def splice_check(
    plan: BuildPlan,
    context: Sequence[InputFile],
    own: Sequence[InputFile],
    last: CheckChunk,
    base: CheckChunk,
    *,
    check: bool = False,
) -> CheckChunk | None:
    """The check of a chunk (:func:`~compiler.plan.chunks.patchable`) made from ``last``, an earlier check of its
    files, by checking only the documents that changed (``check``; else None when any
    did), as :func:`compiler.plan.chunks.splice_chunk` renders them; None when it cannot
    be. ``base``: the context checked alone. The findings follow the warnings' rules
    there: any finding of the chunk's own documents (a policy's) makes it checked whole."""
    if last.documents is None or last.failed or not _said_alike(last, base):
        return None
    found = changed_documents(own, last.documents)
    if found is None:
        return None
    changed, pieces = found
    if not pieces:
        return last
    if not check or not few(changed, last.documents):
        return None
    fresh = _check_chunk(plan, context, pieces, False, None)
    if fresh.documents is None or not _said_alike(fresh, base):
        return None
    unmatched = {_identity(f) for f in last.findings if _unmatched(f)}
    if any(_identity(f) not in unmatched for f in fresh.findings if _unmatched(f)):
        return None
    patched = patch_documents(own, last.documents, changed, fresh.documents)
    if patched is None:
        return None
    documents, gone = patched
    kept = [
        (o, owner) for o, owner in zip(last.objects, last.owners, strict=True) if owner not in gone
    ]
    return CheckChunk(
        findings=fresh.findings,
        notes=sorted(set(last.notes) | set(fresh.notes)),
        objects=[o for o, _ in kept] + fresh.objects,
        identities=[identity for _, docs in documents for _, identity in docs],
        owners=[owner for _, owner in kept] + fresh.owners,
        documents=documents,
    )


def _last_path(cache: Path, shared: str, own: Sequence[InputFile]) -> Path:
    """Where the key of the last check of a chunk of ``own``'s files is kept (as
    :func:`compiler.plan.chunks._last_path`)."""
    names = "\0".join(f"{u.display}#{u.mark}" if u.ranged else u.display for u in own)
    key = hashlib.sha256(f"{shared}\0last\0{names}".encode()).hexdigest()
    return cache / "check" / "last" / f"{key}.pickle"


def _last(cache: Path, shared: str, own: Sequence[InputFile]) -> CheckChunk | None:
    """The last check of a chunk of ``own``'s files, with its owners and documents."""
    try:
        key, owners, documents = read_cached(_last_path(cache, shared, own))
    except (TypeError, ValueError):  # None, or not the triple written
        return None
    found = _cached_chunk(cache, key) if isinstance(key, str) else None
    if found is None or not isinstance(documents, list) or len(owners) != len(found.objects):
        return None
    return replace(found, owners=owners, documents=documents)


def _identity(finding: Finding) -> tuple[str, ...]:
    return (
        repr(finding.location),
        str(finding.object),
        finding.rule,
        finding.severity.value,
        str(finding.field_path),
        finding.message,
        finding.stage,
        repr(finding.details),
    )


def _unmatched(finding: Finding) -> bool:
    return finding.rule == "overlay" and bool(_UNMATCHED.match(finding.message))


def _merge_findings(
    base: list[Finding], chunks: list[list[InputFile]], results: list[CheckChunk]
) -> list[Finding] | None:
    """Like :func:`compiler.plan.chunks._merge_warnings`, for findings."""
    base_count = Counter(_identity(f) for f in base if not _unmatched(f))
    merged = [f for f in base if not _unmatched(f)]
    seen: set[tuple[str, ...]] = set()
    unmatched: list[list[Finding]] = []
    for own, result in zip(chunks, results, strict=True):
        places = Places(own)
        remaining = Counter(base_count)
        extras: set[tuple[str, ...]] = set()
        unmatched.append([f for f in result.findings if _unmatched(f)])
        for finding in result.findings:
            if _unmatched(finding):
                continue
            if places.holds(finding.location):
                merged.append(finding)
                continue
            identity = _identity(finding)
            if remaining[identity] > 0:
                remaining[identity] -= 1
                continue
            if identity in seen:
                return None
            extras.add(identity)
            merged.append(finding)
        if +remaining:
            return None
        seen |= extras
    common = {_identity(f) for f in unmatched[0]}
    for found in unmatched[1:]:
        common &= {_identity(f) for f in found}
    merged += [f for f in unmatched[0] if _identity(f) in common]
    if over_file_limit(((f.rule, f.location) for f in merged), chunks):
        return None
    return sorted(merged, key=_whole_order)


def _whole_order(finding: Finding) -> tuple[tuple[str, int, int], int, str, str]:
    """The order of a whole check's findings: by place (:func:`finding_order`); at one
    place, as its stages found them: the render chain's errors, its warnings (ordered by
    object and message, :func:`compiler.plan.stages.warning_order`), then policies."""
    policy = finding.rule.startswith(("vap/", "cue/"))
    if policy:
        return (finding_order(finding), 2, "", "")
    if finding.severity is Severity.WARNING:
        return (finding_order(finding), 1, str(finding.object or ""), finding.message)
    return (finding_order(finding), 0, "", "")


def _cue_sources(plan: BuildPlan) -> list[Source]:
    """The ``.cue`` files among the inputs and policies (read by the check, not the loader)."""
    sources, _ = discover_collect([*plan.inputs, *plan.policies])
    return [s for s in sources if s.kind == "cue"]


def _texts(files: Sequence[InputFile], cue: Sequence[Source]) -> tuple[dict[str, str], list[str]]:
    """The source texts a report quotes, and the .cue files (as a whole check has them)."""
    from compiler.apiserver.source_bytes import read_source
    from compiler.errors import InputError

    def decode(data: bytes) -> str:
        return data.decode("utf-8", "replace").removeprefix("\ufeff")

    texts = {f.display: decode(f.data) for f in files}
    for source in cue:
        if source.path is not None:
            try:
                text = decode(read_source(source.path))
            except InputError:
                continue
            texts[source.display] = texts[str(source.path)] = text
    return texts, [str(s.display) for s in cue]


def check_parts(plan: BuildPlan, jobs: int, cache: Path | None = None) -> CheckResult | None:
    """``plan`` checked chunk by chunk in ``jobs`` processes; None when it must be checked
    whole (fewer than two chunks, stdin, ``--previous``, or a result that depends on more
    than one chunk). ``cache``: the render cache, where each chunk's findings are kept
    under a key of everything they depend on (:func:`check_key`)."""
    checked = check_and_store_parts(plan, jobs, None, cache)
    return None if checked is None else checked[0]


def check_key(plan: BuildPlan, context: Sequence[InputFile], cue: Sequence[Source]) -> str | None:
    """What every chunk's check depends on besides its own files: the render chain's
    context (:func:`compiler.plan.chunks.context_key`: the plan, trainc, upstream
    artifacts, overlays, the project file, the context files with the YAML policies and
    their parameters), the ``.cue`` policies and the cue CLI that runs them. None when
    the cue CLI is missing (the check says so; nothing is cached)."""
    digest = hashlib.sha256(f"trainc-check-{CHECK_CACHE_FORMAT}\0".encode())
    digest.update(context_key(plan, context, stored=False).encode())
    for source in cue:
        if source.path is None:
            return None
        try:
            data = Path(source.path).read_bytes()
        except OSError:
            return None
        digest.update(f"\0{source.display}\0".encode() + hashlib.sha256(data).digest())
    if cue:
        from compiler.policy.cue import CueUnavailable, cue_binary  # (only then: startup)

        try:
            binary = cue_binary()
            status = binary.stat()
        except (CueUnavailable, OSError):
            return None
        digest.update(f"\0cue={binary}:{status.st_size}:{status.st_mtime_ns}".encode())
    return digest.hexdigest()


def _reached_a_limit(chunk: CheckChunk) -> bool:
    """Whether cue ran out of its time or memory in the chunk: a result of the machine's
    load and the limits set, not of the inputs alone, so not one to keep."""
    from compiler.policy.cue import LIMIT_DETAIL

    return any(key == LIMIT_DETAIL for f in chunk.findings for key, _ in f.details)


def _cached_chunk(cache: Path, key: str) -> CheckChunk | None:
    found = read_cached(cache / "check" / key[:2] / f"{key}.pickle")
    return found if isinstance(found, CheckChunk) else None


def check_and_store_parts(
    plan: BuildPlan, jobs: int, store: BlobStore | None, cache: Path | None = None
) -> tuple[CheckResult, list[ObjectFile]] | None:
    """:func:`check_parts`, and with a ``store`` the rendered objects put there, sorted as
    in a stream (what ``argocd generate`` prints after the check; None also when two
    objects would be one). With a ``store`` nothing is cached."""
    if plan.previous is not None:
        return None
    inputs = read_inputs(plan.inputs)
    policies = read_inputs(plan.policies) if plan.policies else []
    if inputs is None or policies is None:
        return None
    units = input_units(inputs)
    chunks = chunk_files(units, CHECK_CHUNK_JOBS)
    if len(chunks) < 2:
        return None
    context = [f for f in units if not f.trainjobs] + policies
    cue = _cue_sources(plan)
    shared = check_key(plan, context, cue) if cache is not None and store is None else None
    indexes = [-1, *range(len(chunks))]  # -1: the context checked alone
    keys = {
        i: chunk_key(shared, chunks[i] if i >= 0 else [], i == 0)
        for i in indexes
        if shared is not None
    }
    found: dict[int, CheckChunk] = {}
    for i, key in keys.items():
        hit = _cached_chunk(cache, key) if cache is not None else None
        if hit is not None:
            found[i] = hit
    missing = [i for i in indexes if i not in found]
    # a chunk checked before is patched from its last check (see splice_check), when the
    # context checked alone is at hand: here when nothing is to be checked again
    lasts: dict[int, CheckChunk] = {}
    fresh: dict[int, CheckChunk] = {}
    base = found.get(-1)
    for i in missing:
        if i < 0 or cache is None or shared is None or base is None or not patchable(context, i):
            continue
        last = _last(cache, shared, chunks[i])
        if last is not None:
            lasts[i] = last
            spliced = splice_check(plan, context, chunks[i], last, base)
            if spliced is not None:
                fresh[i] = spliced
    missing = [i for i in missing if i not in fresh]
    if len(missing) > 1:
        import compiler.plan.check  # noqa: F401  (the chain imported once, not per worker)

        plan.crds  # noqa: B018  (loaded once, inherited by every worker)

    def task(index: int) -> CheckChunk:
        if index < 0:
            return _check_chunk(plan, context, [], False, store)
        last = lasts.get(index)
        if last is not None and base is not None:
            spliced = splice_check(plan, context, chunks[index], last, base, check=True)
            if spliced is not None:
                return spliced
        return _check_chunk(plan, context, chunks[index], index == 0, store)

    fresh.update(zip(missing, map_chunks(task, missing, jobs), strict=True))
    for i, result in fresh.items():
        if i in keys and not _reached_a_limit(result):
            assert cache is not None and shared is not None
            # the owners and documents are kept apart, read only to patch it (see _last)
            entry = replace(result, owners=[], documents=None)
            remember(cache / "check" / keys[i][:2] / f"{keys[i]}.pickle", entry)
            if i >= 0 and patchable(context, i) and result.documents is not None:
                kept = (keys[i], result.owners, result.documents)
                remember(_last_path(cache, shared, chunks[i]), kept)
    base, *results = (found.get(i) or fresh[i] for i in indexes)
    if base.failed or any(r.failed or r.foreign for r in results):
        return None
    identities: set[tuple[str, str, str]] = set()
    for result in results:
        for identity in result.identities:
            if identity in identities:
                return None
            identities.add(identity)
    findings = _merge_findings(base.findings, chunks, results)
    if findings is None:
        return None
    objects = [o for r in (base, *results) for o in r.objects]
    inputs_first = sorted(objects, key=lambda o: o.stage != "input")
    texts, cue_files = _texts([*inputs, *policies], cue)
    notes = sorted({note for r in (base, *results) for note in r.notes})
    rendered = sorted((o for r in (base, *results) for o in r.rendered), key=lambda o: o.sort_key)
    if clashes(rendered, files=False):
        return None  # two objects with one identity: the whole way says which
    return CheckResult(findings, inputs_first, texts, cue_files, notes, []), rendered
