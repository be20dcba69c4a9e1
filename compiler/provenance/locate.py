"""Where a field of a rendered object came from: the input line to blame.

trainc keeps no per-field provenance through render (yet), so a finding about an
output field is pointed back to its inputs by structure and by value. In order:

1. the same field, with the same value, where a JobSet is written in an input: the
   TrainJob's ``spec.runtimePatches[*].trainingRuntimeSpec.template`` (last patch
   first), then the runtime's ``spec.template``. List items are matched by ``name``
   (replicated jobs, containers, env, volumes), else by position;
2. a field of the TrainJob, then of the runtime, with the same key and value
   (``spec.trainer.image`` for a container's ``image``, ``metadata.name`` for the
   JobSet's name, ``scheduleTimeoutSeconds`` for a PodGroup's);
3. the deepest written ancestor found by 1 (below ``spec.replicatedJobs[i]``), e.g. the
   runtime's container for a field that render added to it;
4. the TrainJob itself.

Only nodes written in a file count (defaults the API server filled in have no
position)::

    >>> from compiler.apiserver.manifest import SourceMap
    >>> job = Manifest({"kind": "TrainJob", "spec": {"trainer": {"image": "x"}}},
    ...                SourceMap("job.yaml", {(): (1, 1), ("spec", "trainer", "image"): (5, 5)}))
    >>> jobset = {"kind": "JobSet", "spec": {"replicatedJobs": [{"name": "node", "image": "x"}]}}
    >>> str(locate_output(jobset, ("spec", "replicatedJobs", 0, "image"), job, None))
    'job.yaml:5:5'
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from compiler.apiserver.manifest import Manifest
from compiler.errors import JsonPath, SourceLocation

__all__ = ["locate_output"]

_MISSING: Any = object()
# how deep a partial structural match must reach to be worth pointing at:
# ("spec", "replicatedJobs", i, ...) is below the job list
_MIN_PARTIAL = 3


def _get(data: Any, path: JsonPath) -> Any:
    for part in path:
        if isinstance(part, int):
            if not isinstance(data, list) or not -len(data) <= part < len(data):
                return _MISSING
            data = data[part]
        else:
            if not isinstance(data, dict) or part not in data:
                return _MISSING
            data = data[part]
    return data


def _map_path(output: Any, path: JsonPath, source: Any) -> tuple[JsonPath, int]:
    """Follow ``path`` of ``output`` through ``source``: the source path, segments matched."""
    out_node, src_node = output, source
    mapped: list[str | int] = []
    for part in path:
        if isinstance(part, str):
            if not isinstance(src_node, dict) or part not in src_node:
                break
            src_node = src_node[part]
            out_node = out_node.get(part, _MISSING) if isinstance(out_node, dict) else _MISSING
            mapped.append(part)
            continue
        if not isinstance(src_node, list):
            break
        item = (
            out_node[part]
            if isinstance(out_node, list) and -len(out_node) <= part < len(out_node)
            else _MISSING
        )
        index: int | None = None
        if isinstance(item, dict) and isinstance(item.get("name"), str):
            index = next(
                (
                    i
                    for i, candidate in enumerate(src_node)
                    if isinstance(candidate, dict) and candidate.get("name") == item["name"]
                ),
                None,
            )
        elif 0 <= part < len(src_node):
            index = part
        if index is None:
            break
        src_node, out_node = src_node[index], item
        mapped.append(index)
    return tuple(mapped), len(mapped)


def _written_prefix(manifest: Manifest, path: JsonPath) -> int:
    """How many leading segments of ``path`` were written in the file (have a position)."""
    positions = manifest.source.positions
    depth = 0
    for end in range(1, len(path) + 1):
        if path[:end] in positions:
            depth = end
        else:
            break
    return depth


def _templates(trainjob: Manifest, runtime: Manifest | None) -> Iterator[tuple[Manifest, JsonPath]]:
    """The places a JobSet is written in the inputs, most specific first."""
    patches = (trainjob.data.get("spec") or {}).get("runtimePatches")
    if isinstance(patches, list):
        for index in reversed(range(len(patches))):
            yield trainjob, ("spec", "runtimePatches", index, "trainingRuntimeSpec", "template")
    if runtime is not None:
        yield runtime, ("spec", "template")


def _scalar(value: Any) -> bool:
    return value is not _MISSING and not isinstance(value, dict | list)


def _by_key_and_value(manifest: Manifest, key: str, value: Any) -> SourceLocation | None:
    """The first written field named ``key`` holding ``value`` (``True`` is not ``1``)."""
    found = sorted(
        (position, path)
        for path, position in manifest.source.positions.items()
        if path and path[-1] == key
    )
    for _, path in found:
        candidate = _get(manifest.data, path)
        if type(candidate) is type(value) and candidate == value:
            return manifest.locate(path)
    return None


def locate_output(
    output: dict[str, Any],
    path: JsonPath,
    trainjob: Manifest,
    runtime: Manifest | None,
) -> SourceLocation:
    """The input location of field ``path`` of ``output``, rendered from ``trainjob``."""
    value = _get(output, path)
    partial: tuple[int, SourceLocation] | None = None
    if output.get("kind") == "JobSet":
        for manifest, prefix in _templates(trainjob, runtime):
            template = _get(manifest.data, prefix)
            if not isinstance(template, dict):
                continue
            mapped, matched = _map_path(output, path, template)
            written = _written_prefix(manifest, prefix + mapped) - len(prefix)
            if matched == len(path) and written == matched:
                found = _get(template, mapped)
                if value is not _MISSING and type(found) is type(value) and found == value:
                    return manifest.locate(prefix + mapped)
            depth = min(matched, written)
            if depth >= _MIN_PARTIAL and (partial is None or depth > partial[0]):
                partial = (depth, manifest.locate(prefix + mapped[:depth]))
    if path and isinstance(path[-1], str) and _scalar(value):
        for source in (trainjob, runtime):
            if source is not None and (hit := _by_key_and_value(source, path[-1], value)):
                return hit
    if partial is not None:
        return partial[1]
    return trainjob.locate(())
