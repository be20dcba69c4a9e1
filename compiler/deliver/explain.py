"""``trainc explain`` and ``render --provenance``: the origin chain of output fields, as text or JSON.

OBJECT is ``Kind/namespace/name`` (``JobSet/team-a/resnet``); ``Kind/name`` works when
one object matches. FIELDPATH is the syntax of :func:`~compiler.provenance.trace.format_field_path`:
``spec.replicatedJobs[name=node].template.spec.template.spec.containers[name=node].env[name=PET_NNODES].value``;
plain indices (``containers[0]``) work too and ``.`` means the whole object. A path to a
map or list explains every leaf below it.

The side file (``render --provenance FILE``) is JSON: ``{"version": 1, "objects":
{OBJECT: {FIELDPATH: origin}}}``, objects sorted, fields in document order; the rendered
manifests are not touched.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from compiler.apiserver.manifest import Manifest
from compiler.errors import InputError, ObjectRef, Problem
from compiler.model.build import Build
from compiler.plan.compile import extension_plugins, priority_classes
from compiler.provenance.trace import (
    FieldOrigin,
    FieldPath,
    InputRef,
    Key,
    format_field_path,
    object_key,
    parse_field_path,
    provenance,
)
from compiler.render.info import JsonObject
from compiler.render.registry import default_plugins

__all__ = ["ObjectProvenance", "explain", "format_origin", "provenance_document", "trace_result"]


@dataclass
class ObjectProvenance:
    data: JsonObject  # the rendered object
    fields: dict[str, FieldOrigin]


def trace_result(build: Build) -> dict[str, ObjectProvenance]:
    """Provenance of every object of a build, by object key.

    When the build had overlays (a project cluster), the TrainJobs and runtimes are
    traced from their inputs as loaded, before the overlays, and each overlay patch is
    a layer of its own.
    """
    before: dict[ObjectRef, Manifest] = {m.ref: m for m in build.originals}
    overlays = build.overlays
    classes = priority_classes(build.loaded.others)
    cluster = build.plan.cluster
    enabled = None if cluster is None else cluster.extensions
    out: dict[str, ObjectProvenance] = {}
    for summary in build.summaries:
        if summary.skipped or summary.trainjob is None or summary.runtime is None:
            continue
        # a runtime's opt-in extensions are plugins of their own: explain credits them
        plugins = default_plugins(classes, extension_plugins(summary.runtime, enabled)[0])
        traced = provenance(
            before.get(summary.trainjob.ref, summary.trainjob) if overlays else summary.trainjob,
            before.get(summary.runtime.ref, summary.runtime) if overlays else summary.runtime,
            build.plan.render,
            plugins,
            overlays,
        )
        for rendered in summary.objects:
            key = object_key(rendered.data)
            out[key] = ObjectProvenance(rendered.data, traced.get(key, {}))
    return out


def provenance_document(traced: dict[str, ObjectProvenance]) -> str:
    """The JSON side file: deterministic, one trailing newline."""
    objects = {
        key: {path: origin.as_json() for path, origin in traced[key].fields.items()}
        for key in sorted(traced)
    }
    return json.dumps({"version": 1, "objects": objects}, indent=2, ensure_ascii=False) + "\n"


def _value(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _ref(ref: InputRef) -> str:
    default = "" if ref.written else " (defaulted)"
    return f"{ref.location} ({ref.document} {ref.path}){default}"


def format_origin(path: str, origin: FieldOrigin) -> list[str]:
    """The chain of one leaf: what set it, from what, and what it overrode.

    >>> o = FieldOrigin("plugin", "plugin Torch", "4", derived=True, inputs=(
    ...     InputRef("TrainJob a/b", "spec.trainer.numNodes", "j.yaml", 9, 5, 4, True),))
    >>> print("\\n".join(format_origin("x", o)))
    x = "4"
      derived by plugin Torch from:
        spec.trainer.numNodes = 4 at j.yaml:9:5 (TrainJob a/b)
    """
    lines = [f"{path} = {_value(origin.value)}"]
    lines.extend("  " + line for line in _step(origin))
    if origin.overridden:
        lines.append("  overrides:")
        for earlier in origin.overridden:
            head, *rest = _step(earlier)
            lines.append(f"    {_value(earlier.value)} {head}")
            lines.extend("      " + line for line in rest)
    return lines


def _step(origin: FieldOrigin) -> list[str]:
    if origin.source is not None:
        verb = "copied by" if origin.layer == "plugin" else "set by"
        return [f"{verb} {origin.label} at {_ref(origin.source)}"]
    if not origin.derived:
        return [f"set by {origin.label}"]
    if not origin.inputs:
        return [f"default of {origin.label} (depends on no input)"]
    lines = [f"derived by {origin.label} from:"]
    for ref in origin.inputs:
        value = "" if ref.value is None else f" = {_value(ref.value)}"
        default = "" if ref.written else " (defaulted)"
        lines.append(f"  {ref.path}{value} at {ref.location} ({ref.document}){default}")
    return lines


def _canonical(data: Any, path: FieldPath) -> FieldPath:
    """``path`` in the canonical spelling of :func:`trace._walk` (names for list items)."""
    out: list[Key] = []
    for part in path:
        if isinstance(data, list):
            keyed = bool(data) and all(
                isinstance(i, dict) and isinstance(i.get("name"), str) for i in data
            )
            keyed = keyed and len({i["name"] for i in data}) == len(data)
            if isinstance(part, int) and 0 <= part < len(data):
                data = data[part]
                out.append(("name", data["name"]) if keyed else part)
                continue
            if isinstance(part, tuple):
                found = [i for i in data if isinstance(i, dict) and str(i.get(part[0])) == part[1]]
                if len(found) == 1:
                    index = _index(data, found[0])
                    data = found[0]
                    out.append(("name", data["name"]) if keyed else index)
                    continue
            raise KeyError(format_field_path((*out, part)))
        if isinstance(data, dict) and isinstance(part, str) and part in data:
            data = data[part]
            out.append(part)
            continue
        raise KeyError(format_field_path((*out, part)))
    return tuple(out)


def _index(items: Any, item: Any) -> int:
    return next(i for i, candidate in enumerate(items) if candidate is item)


def _find_object(traced: dict[str, ObjectProvenance], name: str) -> str:
    if name in traced:
        return name
    parts = name.split("/")
    matches = [
        key
        for key in traced
        if len(parts) == 2 and key.split("/")[0] == parts[0] and key.split("/")[-1] == parts[1]
    ]
    if len(matches) == 1:
        return matches[0]
    known = ", ".join(sorted(traced)) or "none"
    raise InputError([Problem(f"no rendered object {name!r} (rendered: {known})")])


def explain(traced: dict[str, ObjectProvenance], object_name: str, field_path: str) -> str:
    """The text ``trainc explain`` prints for one object and field path."""
    key = _find_object(traced, object_name)
    entry = traced[key]
    try:
        wanted = () if field_path in ("", ".") else parse_field_path(field_path)
        path = _canonical(entry.data, wanted)
    except (ValueError, KeyError) as error:
        message = f"{key} has no field {field_path!r}"
        if isinstance(error, KeyError):
            message += f" (no {error.args[0]})"
        raise InputError([Problem(message)]) from None
    prefix = format_field_path(path)
    lines = [key]
    for text, origin in entry.fields.items():
        if prefix and text != prefix and not text.startswith((prefix + ".", prefix + "[")):
            continue
        lines.extend("  " + line for line in format_origin(text, origin))
    return "\n".join(lines) + "\n"
