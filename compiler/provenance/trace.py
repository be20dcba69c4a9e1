"""Field provenance by differential layering: where every output leaf came from.

The render core stays untouched and unaware of provenance. Instead, the same TrainJob is
rendered again with its layers switched on one after another, and every output leaf is
attributed to the last layer that changed it; the values it had under earlier layers are
the ones that layer overrode. The layers, in order:

1. ``runtime`` -- the runtime blueprint alone: the TrainJob reduced to its name and
   ``runtimeRef``, rendered by the JobSet builder only (no ML or PodGroup plugin);
2. ``runtimePatch`` -- each ``spec.runtimePatches[i]`` (its ``manager`` named), in order;
3. ``trainjob`` -- each remaining TrainJob field (``spec.trainer.image``,
   ``spec.trainer.numNodes``, ``spec.initializer.dataset``, ``spec.suspend``, ...),
   one layer per field below ``trainer``/``initializer``, in file order;
4. ``plugin`` -- each ML policy plugin, then each PodGroup plugin, in registry order;
   the last layer is exactly the real render.

With a project's overlays (``overlays``: the cluster's loaded ``Overlay`` documents,
the TrainJob and runtime given as loaded, before any overlay), each patch is a layer
``overlay`` of its own (``overlay production-platform patches[1]``), credited to the
patch's line: an input patch of the runtime right after ``runtime``, an input patch
of the TrainJob after the ``trainjob`` layers, and an output patch after the plugins
(applied to the rendered objects, as ``trainc render`` does).

A leaf is *direct* when its layer wrote the same key with the same value (the runtime's
``spec.template``, the patch, ``spec.trainer.image`` for a container ``image``); the
best match by path suffix gives its ``file:line``. Otherwise it is *derived*: the
leaves a plugin (or the JobSet builder: ``parallelism``, ``completions``) computed.
The inputs of a derived leaf come from a sensitivity pass: every scalar input of the
TrainJob and the runtime spec is perturbed once (numbers +1, booleans flipped, strings
suffixed), the TrainJob re-rendered, and the inputs whose perturbation changes the
leaf are its inputs (``PET_NNODES`` <- ``spec.trainer.numNodes``; ``minResources`` <-
the container requests and the node count). A derived leaf with no input is a plugin
default (a constant).

Output paths name list items by their ``name`` where every item of the list has a
distinct one (``containers[name=node]``), else by index, and quote map keys that are
not plain words (``labels["trainer.kubeflow.org/trainjob-ancestor-step"]``).

Cost: one render per layer plus one per scalar input (typically a few hundred), so it
runs on request (``trainc explain``, ``render --provenance``), never on the default path.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from compiler.apiserver.manifest import Manifest, SourceMap
from compiler.errors import JsonPath
from compiler.render.framework import Phases, Plugin, RenderOptions
from compiler.render.info import JsonObject, json_copy
from compiler.render.pipeline import render_trainjob
from compiler.render.registry import default_plugins

# A step of an output path: a map key, a list index, or (merge key, value) for a list item.
Key = str | int | tuple[str, str]
FieldPath = tuple[Key, ...]

__all__ = [
    "FieldOrigin",
    "FieldPath",
    "InputRef",
    "format_field_path",
    "object_key",
    "parse_field_path",
    "provenance",
]

_WORD = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$-]*$")
_MISSING: Any = object()


# --- paths


def format_field_path(path: FieldPath) -> str:
    """A field path as text, the syntax ``trainc explain`` reads back.

    >>> format_field_path(("spec", "containers", ("name", "node"), "env", 0, "value"))
    'spec.containers[name=node].env[0].value'
    >>> format_field_path(("metadata", "labels", "app.kubernetes.io/name"))
    'metadata.labels["app.kubernetes.io/name"]'
    """
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif isinstance(part, tuple):
            out += f"[{part[0]}={part[1]}]"
        elif _WORD.match(part):
            out += f".{part}" if out else part
        else:
            out += '["' + part.replace("\\", "\\\\").replace('"', '\\"') + '"]'
    return out


_SEGMENT = re.compile(
    r'\.?(?P<word>[A-Za-z_$][A-Za-z0-9_$-]*)|\[(?P<index>\d+)\]|\["(?P<quoted>(?:[^"\\]|\\.)*)"\]'
    r"|\[(?P<key>[A-Za-z_][A-Za-z0-9_-]*)=(?P<value>[^\]]*)\]|\[(?P<bare>[^\]]+)\]"
)


def parse_field_path(text: str) -> FieldPath:
    """Read a field path: ``a.b[name=x][3]["k.y"]``; ``[k.y]`` (no ``=``) is a map key too.

    >>> parse_field_path('spec.containers[name=node].env[0]["a.b"].c')
    ('spec', 'containers', ('name', 'node'), 'env', 0, 'a.b', 'c')
    """
    parts: list[Key] = []
    position = 0
    while position < len(text):
        match = _SEGMENT.match(text, position)
        if match is None or match.end() == position:
            raise ValueError(f"bad field path {text!r} at column {position + 1}")
        if match["word"] is not None:
            parts.append(match["word"])
        elif match["index"] is not None:
            parts.append(int(match["index"]))
        elif match["quoted"] is not None:
            parts.append(re.sub(r"\\(.)", r"\1", match["quoted"]))
        elif match["key"] is not None:
            parts.append((match["key"], match["value"]))
        else:
            parts.append(match["bare"])
        position = match.end()
    return tuple(parts)


def _keyed_list(items: list[Any]) -> bool:
    names = [i.get("name") if isinstance(i, dict) else None for i in items]
    return bool(names) and all(isinstance(n, str) for n in names) and len(set(names)) == len(names)


def _walk(
    value: Any, keyed: FieldPath = (), raw: JsonPath = ()
) -> Iterator[tuple[FieldPath, JsonPath, Any]]:
    """Every leaf (scalar, empty map or empty list): its keyed path, index path and value."""
    if isinstance(value, dict) and value:
        for key, item in value.items():
            yield from _walk(item, (*keyed, key), (*raw, key))
    elif isinstance(value, list) and value:
        by_name = _keyed_list(value)
        for index, item in enumerate(value):
            step: Key = ("name", item["name"]) if by_name else index
            yield from _walk(item, (*keyed, step), (*raw, index))
    else:
        yield keyed, raw, value


def _get(data: Any, path: JsonPath) -> Any:
    for part in path:
        if isinstance(part, int):
            if not isinstance(data, list) or not 0 <= part < len(data):
                return _MISSING
        elif not isinstance(data, dict) or part not in data:
            return _MISSING
        data = data[part]
    return data


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and bool(a == b)


# --- results


@dataclass(frozen=True)
class InputRef:
    """One input field: which document, its path there, where it is written, its value."""

    document: str  # "TrainJob team-a/resnet", "ClusterTrainingRuntime torch-distributed"
    path: str  # in that document, e.g. spec.trainer.numNodes
    file: str | None
    line: int | None
    column: int | None
    value: Any
    written: bool  # False: a default the loader filled in (the location is its parent's)

    @property
    def location(self) -> str:
        if self.file is None:
            return "?"
        if self.line is None:
            return self.file
        return f"{self.file}:{self.line}:{self.column or 1}"

    def as_json(self) -> JsonObject:
        return {
            "document": self.document,
            "path": self.path,
            "location": self.location,
            "value": self.value,
            "written": self.written,
        }


@dataclass(frozen=True)
class FieldOrigin:
    """Where one output leaf got its value, and what it overrode.

    ``layer`` is ``runtime``, ``overlay``, ``runtimePatch``, ``trainjob`` or ``plugin``; ``label``
    names it (``runtimePatch[0] manager=example.com/x``, ``plugin Torch``). ``source``
    is the input written with this value (None for a derived leaf); ``inputs`` what a
    derived leaf was computed from. ``overridden`` lists earlier layers' values, the
    most recent first.
    """

    layer: str
    label: str
    value: Any
    source: InputRef | None = None
    derived: bool = False
    inputs: tuple[InputRef, ...] = ()
    overridden: tuple[FieldOrigin, ...] = ()

    def as_json(self) -> JsonObject:
        out: JsonObject = {"layer": self.layer, "label": self.label, "value": self.value}
        if self.source is not None:
            out["source"] = self.source.as_json()
        if self.derived:
            out["derived"] = True
            out["inputs"] = [i.as_json() for i in self.inputs]
        if self.overridden:
            out["overridden"] = [o.as_json() for o in self.overridden]
        return out


def object_key(obj: JsonObject) -> str:
    """``Kind/namespace/name`` of a rendered object (``Kind/name`` without a namespace)."""
    metadata = obj.get("metadata") or {}
    namespace = metadata.get("namespace")
    head = f"{obj.get('kind', '')}/{namespace}/" if namespace else f"{obj.get('kind', '')}/"
    return head + str(metadata.get("name", ""))


# --- layers


@dataclass
class _Layer:
    kind: str
    label: str
    trainjob: JsonObject
    plugins: list[Plugin]
    roots: list[JsonPath] = field(default_factory=list)  # in the TrainJob; [] = runtime
    runtime: Manifest | None = None  # the runtime it renders with (None: the final one)
    patched: Manifest | None = None  # input overlay layers: the object the patch changed
    outputs: list[Manifest] | None = None  # output overlay layers: the patched render


_BASE_SPEC_KEYS = ("runtimeRef", "managedBy")
_SPLIT_SPEC_KEYS = ("trainer", "initializer")


def _is_layered_plugin(plugin: Plugin) -> bool:
    return hasattr(plugin, "enforce_ml_policy") or hasattr(plugin, "enforce_pod_group_policy")


def _overlay_steps(
    manifests: list[Manifest], overlays: Sequence[Any], stage: str
) -> list[tuple[str, list[Manifest]]]:
    """``manifests`` after each overlay patch of ``stage`` that changes one of them, in
    application order, with the patch's label; each patched manifest's source map points
    the fields the patch wrote at the patch's lines."""
    if not overlays:
        return []
    from compiler.overlay import overlays as module

    steps: list[tuple[str, list[Manifest]]] = []
    current = manifests
    for overlay in module.ordered(overlays):
        for index, patch in enumerate(overlay.patches):
            if patch.stage != stage:
                continue
            # One patch at a time, as an input patch: that is what keeps positions.
            single = replace(overlay, patches=(replace(patch, stage="input"),), locks=())
            patched, errors, _ = module.apply_input_overlays(current, [single], False)
            if errors or all(a is b for a, b in zip(patched, current, strict=True)):
                continue
            current = list(patched)
            steps.append((f"overlay {overlay.name} patches[{index}]", current))
    return steps


def _layers(
    trainjob: JsonObject,
    plugins: list[Plugin],
    runtime: Manifest,
    runtime_steps: list[tuple[str, list[Manifest]]],
    trainjob_steps: list[tuple[str, list[Manifest]]],
    final_trainjob: JsonObject,
) -> list[_Layer]:
    base_plugins = [p for p in plugins if not _is_layered_plugin(p)]
    spec: JsonObject = trainjob.get("spec") or {}
    current = json_copy(trainjob)
    current["spec"] = {k: json_copy(spec[k]) for k in _BASE_SPEC_KEYS if k in spec}
    layers = [_Layer("runtime", "runtime", json_copy(current), base_plugins, runtime=runtime)]
    for label, (patched,) in runtime_steps:
        layers.append(
            _Layer(
                "overlay", label, json_copy(current), base_plugins, runtime=patched, patched=patched
            )
        )
    for index, patch in enumerate(spec.get("runtimePatches") or ()):
        current["spec"].setdefault("runtimePatches", []).append(json_copy(patch))
        manager = patch.get("manager") if isinstance(patch, dict) else None
        label = f"runtimePatch[{index}]" + (f" manager={manager}" if manager else "")
        layers.append(
            _Layer(
                "runtimePatch",
                label,
                json_copy(current),
                base_plugins,
                [("spec", "runtimePatches", index)],
            )
        )
    for key, value in spec.items():
        if key in _BASE_SPEC_KEYS or key == "runtimePatches":
            continue
        if key in _SPLIT_SPEC_KEYS and isinstance(value, dict) and value:
            current["spec"].setdefault(key, {})
            for sub, item in value.items():
                current["spec"][key][sub] = json_copy(item)
                layers.append(
                    _Layer(
                        "trainjob",
                        f"TrainJob spec.{key}.{sub}",
                        json_copy(current),
                        base_plugins,
                        [("spec", key, sub)],
                    )
                )
        else:
            current["spec"][key] = json_copy(value)
            layers.append(
                _Layer(
                    "trainjob",
                    f"TrainJob spec.{key}",
                    json_copy(current),
                    base_plugins,
                    [("spec", key)],
                )
            )
    for label, (patched,) in trainjob_steps:
        layers.append(_Layer("overlay", label, patched.data, base_plugins, patched=patched))
    enabled: set[int] = set()
    for plugin in plugins:
        if not _is_layered_plugin(plugin):
            continue
        enabled.add(id(plugin))
        active = [p for p in plugins if not _is_layered_plugin(p) or id(p) in enabled]
        layers.append(_Layer("plugin", f"plugin {plugin.name}", final_trainjob, active))
    return layers


# --- the engine

ObjectId = tuple[str, str, int]  # apiVersion, kind, ordinal among objects of that kind
LeafKey = tuple[ObjectId, FieldPath]


def _leaves(objects: list[JsonObject]) -> dict[LeafKey, Any]:
    out: dict[LeafKey, Any] = {}
    seen: dict[tuple[str, str], int] = {}
    for obj in objects:
        kind = (str(obj.get("apiVersion", "")), str(obj.get("kind", "")))
        ordinal = seen.get(kind, 0)
        seen[kind] = ordinal + 1
        for keyed, _, value in _walk(obj):
            out[((*kind, ordinal), keyed)] = value
    return out


def _perturb(value: Any) -> Any:
    """A different value of the same type, or _MISSING for values not worth perturbing."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 1
    if isinstance(value, str):
        if match := re.fullmatch(r"(\d+)(\.\d+)?([A-Za-z]*)", value):
            return f"{int(match[1]) + 1}{match[2] or ''}{match[3]}"
        return value + "z"
    return _MISSING


class _Inputs:
    """The TrainJob and runtime as searchable leaves, with their positions."""

    def __init__(self, trainjob: Manifest, runtime: Manifest) -> None:
        self.trainjob = trainjob
        self.runtime = runtime
        self.names = {
            "TrainJob": f"TrainJob {trainjob.namespace or 'default'}/{trainjob.name}",
            "runtime": f"{runtime.kind} {runtime.name}",
        }

    def name(self, manifest: Manifest) -> str:
        return self.names["TrainJob" if manifest.kind == "TrainJob" else "runtime"]

    def ref(self, manifest: Manifest, raw: JsonPath, keyed: FieldPath | None = None) -> InputRef:
        location = manifest.locate(raw)
        value = _get(manifest.data, raw)
        # A patched manifest (input overlays) knows the positions of every field it kept
        # or an overlay wrote.
        positions = getattr(manifest.source, "locations", None) or manifest.source.positions
        return InputRef(
            self.name(manifest),
            format_field_path(keyed if keyed is not None else raw),
            location.file,
            location.line,
            location.column,
            None if value is _MISSING or isinstance(value, dict | list) else value,
            tuple(raw) in positions,
        )

    def direct(
        self, manifest: Manifest, root: JsonPath, path: FieldPath, value: Any
    ) -> InputRef | None:
        """The leaf under ``root`` with ``path``'s last key and ``value``, longest suffix first."""
        if not path or isinstance(path[-1], int | tuple):
            return None
        subtree = _get(manifest.data, root)
        if subtree is _MISSING:
            return None
        best: tuple[int, int, JsonPath, FieldPath] | None = None
        prefix = _keyed_prefix(manifest.data, root)
        for order, (keyed, raw, candidate) in enumerate(_walk(subtree, prefix, root)):
            if not keyed or keyed[-1] != path[-1] or not _same(candidate, value):
                continue
            score = _common_suffix(keyed, path)
            if best is None or score > best[0]:
                best = (score, order, raw, keyed)
        if best is None:
            return None
        return self.ref(manifest, best[2], best[3])


def _keyed_prefix(data: Any, raw: JsonPath) -> FieldPath:
    out: list[Key] = []
    for part in raw:
        if isinstance(part, int) and isinstance(data, list):
            item = data[part]
            out.append(("name", item["name"]) if _keyed_list(data) else part)
        else:
            out.append(part)
        data = data[part] if data is not _MISSING else _MISSING
    return tuple(out)


def _common_suffix(a: FieldPath, b: FieldPath) -> int:
    count = 0
    for x, y in zip(reversed(a), reversed(b), strict=False):
        if x != y:
            break
        count += 1
    return count


def _render(
    trainjob: JsonObject, runtime_spec: JsonObject, plugins: list[Plugin], options: RenderOptions
) -> list[JsonObject] | None:
    try:
        result = render_trainjob(trainjob, runtime_spec, options, Phases.of(plugins))
    except Exception:  # a layer or perturbation the renderer rejects tells nothing
        return None
    return None if result.errors else result.objects


def _sensitivity(
    inputs: _Inputs,
    runtime_spec: JsonObject,
    plugins: list[Plugin],
    options: RenderOptions,
    final: dict[LeafKey, Any],
    wanted: set[LeafKey],
) -> dict[LeafKey, list[InputRef]]:
    """For each wanted output leaf, the input leaves whose perturbation changes it."""
    found: dict[LeafKey, list[InputRef]] = {k: [] for k in wanted}
    if not wanted:
        return found
    trainjob = inputs.trainjob.data
    candidates: list[tuple[Manifest, JsonPath, FieldPath]] = []
    for keyed, raw, value in _walk(trainjob):
        if _identity(keyed):
            continue
        if raw[:1] == ("spec",) and raw[1:2] in (("runtimeRef",), ("managedBy",)):
            continue
        if raw[:1] == ("metadata",) and raw[1:2] not in (("name",), ("namespace",)):
            continue
        if raw[:1] in (("spec",), ("metadata",)) and _perturb(value) is not _MISSING:
            candidates.append((inputs.trainjob, raw, keyed))
    for keyed, raw, value in _walk(runtime_spec):
        if not _identity(keyed) and _perturb(value) is not _MISSING:
            candidates.append((inputs.runtime, ("spec", *raw), ("spec", *keyed)))
    for manifest, raw, keyed in candidates:
        data = json_copy(manifest.data)
        parent = _get(data, raw[:-1])
        parent[raw[-1]] = _perturb(parent[raw[-1]])
        if manifest is inputs.trainjob:
            objects = _render(data, runtime_spec, plugins, options)
        else:
            objects = _render(trainjob, data.get("spec") or {}, plugins, options)
        if objects is None:
            continue
        changed = _leaves(objects)
        ref: InputRef | None = None
        for key in wanted:
            after = changed.get(key, _MISSING)
            if after is not _MISSING and not _same(after, final[key]):
                ref = ref or inputs.ref(manifest, raw, keyed)
                found[key].append(ref)
    return found


def provenance(
    trainjob: Manifest,
    runtime: Manifest,
    options: RenderOptions | None = None,
    plugins: list[Plugin] | None = None,
    overlays: Sequence[Any] = (),
) -> dict[str, dict[str, FieldOrigin]]:
    """The origin of every leaf of every object rendered for ``trainjob``.

    Keyed by :func:`object_key` then :func:`format_field_path`. Empty when the TrainJob
    does not render (admission errors). ``runtime`` is the resolved runtime manifest.
    With ``overlays`` (loaded ``Overlay`` documents), ``trainjob`` and ``runtime`` are
    the manifests before any overlay: the input patches are applied here, one layer
    each, and the output patches after the render.
    """
    options = options or RenderOptions()
    plugins = plugins if plugins is not None else default_plugins()
    runtime_steps = _overlay_steps([runtime], overlays, "input")
    trainjob_steps = _overlay_steps([trainjob], overlays, "input")
    layers = _layers(
        trainjob.data,
        plugins,
        runtime,
        runtime_steps,
        trainjob_steps,
        (trainjob_steps[-1][1][0] if trainjob_steps else trainjob).data,
    )
    if runtime_steps:
        runtime = runtime_steps[-1][1][0]
    if trainjob_steps:
        trainjob = trainjob_steps[-1][1][0]
    runtime_spec: JsonObject = runtime.data.get("spec") or {}
    inputs = _Inputs(trainjob, runtime)

    history = _History()
    for index, layer in enumerate(layers):
        spec = (layer.runtime.data.get("spec") or {}) if layer.runtime else runtime_spec
        rendered = _render(layer.trainjob, spec, layer.plugins, options)
        if rendered is not None:
            history.record(index, rendered)
    # The real render: the last layer when every plugin is layered, but never assumed.
    objects = _render(trainjob.data, runtime_spec, plugins, options)
    if objects is None:
        return {}
    rendered_leaves = _leaves(objects)
    plugin_end = len(layers) - 1
    # Output overlays: each patch on the rendered objects, a layer after the plugins.
    outputs = [Manifest(obj, SourceMap("")) for obj in objects]
    for label, patched in _overlay_steps(outputs, overlays, "output"):
        history.record(len(layers), [m.data for m in patched])
        layers.append(_Layer("overlay", label, trainjob.data, plugins, outputs=patched))
        objects = [m.data for m in patched]
    final = _leaves(objects)

    def step(index: int, key: LeafKey, value: Any) -> FieldOrigin:
        return _step_origin(inputs, layers[index], key, value)

    origins: dict[LeafKey, FieldOrigin] = {}
    for key, value in final.items():
        steps = list(history.changes.get(key, []))
        if not steps or not _same(steps[-1][1], value):
            steps.append((plugin_end, value))
        overridden = tuple(step(i, key, v) for i, v in reversed(steps[:-1]))
        last = step(steps[-1][0], key, value)
        origins[key] = FieldOrigin(
            last.layer, last.label, value, last.source, last.derived, last.inputs, overridden
        )
    # Derived leaves of the final render get their inputs from the sensitivity pass.
    wanted = {k for k, o in origins.items() if o.derived and o.layer == "plugin"}
    sensitive = _sensitivity(inputs, runtime_spec, plugins, options, rendered_leaves, wanted)
    _add_extension_inputs(sensitive, origins, wanted, inputs, plugins)
    for key in wanted:
        origins[key] = _with_inputs(origins[key], sensitive[key], key, final[key])
    return _by_object(objects, origins)


class _History:
    """Each leaf's values as the layers change it: ``(layer index, value)`` per change."""

    def __init__(self) -> None:
        self.changes: dict[LeafKey, list[tuple[int, Any]]] = {}
        self._previous: dict[LeafKey, Any] = {}

    def record(self, index: int, rendered: list[JsonObject]) -> None:
        leaves = _leaves(rendered)
        for key, value in leaves.items():
            if key not in self._previous or not _same(self._previous[key], value):
                self.changes.setdefault(key, []).append((index, value))
        self._previous = leaves


def _step_origin(inputs: _Inputs, layer: _Layer, key: LeafKey, value: Any) -> FieldOrigin:
    """Where ``layer`` took the leaf ``key``'s ``value`` from: an input line, or derived."""
    path = key[1]
    trainjob, runtime = inputs.trainjob, inputs.runtime
    if layer.kind == "runtime":
        roots: list[tuple[Manifest, JsonPath]] = [(runtime, ("spec",)), (trainjob, ("metadata",))]
        if key[0][1] == "JobSet":
            roots.insert(0, (runtime, ("spec", "template")))
        for manifest, root in roots:
            if source := inputs.direct(manifest, root, path, value):
                if manifest is trainjob:
                    return FieldOrigin("trainjob", "TrainJob metadata", value, source)
                return FieldOrigin("runtime", f"{runtime.kind} {runtime.name}", value, source)
        return FieldOrigin("plugin", "plugin JobSet", value, derived=True)
    if layer.kind == "overlay":
        return _overlay_origin(inputs, layer, key, value)
    if layer.kind in ("runtimePatch", "trainjob"):
        for root in layer.roots:
            if source := inputs.direct(trainjob, root, path, value):
                return FieldOrigin(layer.kind, layer.label, value, source)
        refs = tuple(inputs.ref(trainjob, root) for root in layer.roots)
        return FieldOrigin(layer.kind, layer.label, value, derived=True, inputs=refs)
    return FieldOrigin("plugin", layer.label, value, derived=True)


def _add_extension_inputs(
    sensitive: dict[LeafKey, list[InputRef]],
    origins: dict[LeafKey, FieldOrigin],
    wanted: set[LeafKey],
    inputs: _Inputs,
    plugins: list[Plugin],
) -> None:
    """An opt-in extension is built from runtime annotations the perturbation pass does
    not vary (compiler.render.extensions): it names them itself."""
    for plugin in plugins:
        keys = getattr(plugin, "runtime_inputs", ())
        refs = [inputs.ref(inputs.runtime, ("metadata", "annotations", key)) for key in keys]
        for key in wanted:
            if origins[key].label == f"plugin {plugin.name}":
                sensitive[key] = [*sensitive[key], *refs]


def _with_inputs(
    origin: FieldOrigin, refs: list[InputRef], key: LeafKey, final: Any
) -> FieldOrigin:
    """A derived leaf located at the input that holds its very value, else at its inputs."""
    direct = next((r for r in refs if _same_key(r.path, key[1]) and _same(r.value, final)), None)
    if direct is not None:
        return FieldOrigin(
            origin.layer, origin.label, origin.value, direct, overridden=origin.overridden
        )
    return FieldOrigin(
        origin.layer, origin.label, origin.value, None, True, tuple(refs), origin.overridden
    )


def _by_object(
    objects: list[JsonObject], origins: dict[LeafKey, FieldOrigin]
) -> dict[str, dict[str, FieldOrigin]]:
    """Origins keyed by :func:`object_key` then :func:`format_field_path`."""
    names = {}
    seen: dict[tuple[str, str], int] = {}
    for obj in objects:
        kind = (str(obj.get("apiVersion", "")), str(obj.get("kind", "")))
        names[(*kind, seen.get(kind, 0))] = object_key(obj)
        seen[kind] = seen.get(kind, 0) + 1
    out: dict[str, dict[str, FieldOrigin]] = {}
    for (object_id, path), origin in origins.items():
        out.setdefault(names[object_id], {})[format_field_path(path)] = origin
    return out


def _overlay_origin(inputs: _Inputs, layer: _Layer, key: LeafKey, value: Any) -> FieldOrigin:
    """An overlay layer's leaf: located in the patched input, or in the patched output."""
    path = key[1]
    if layer.patched is not None:
        roots: list[JsonPath] = [("metadata",), ("spec",)]
        if layer.patched.kind != "TrainJob" and key[0][1] == "JobSet":
            roots.insert(0, ("spec", "template"))
        for root in roots:
            if source := inputs.direct(layer.patched, root, path, value):
                return FieldOrigin("overlay", layer.label, value, source)
        return FieldOrigin("overlay", layer.label, value, derived=True)
    (api_version, kind, ordinal), path = key
    same_kind = [m for m in layer.outputs or () if (m.api_version, m.kind) == (api_version, kind)]
    if ordinal < len(same_kind):
        output = same_kind[ordinal]
        for keyed, raw, _ in _walk(output.data):
            if keyed == path:
                location = output.locate(raw)
                if location.file:
                    name = f"{output.kind} {output.namespace or 'default'}/{output.name}"
                    source = InputRef(
                        name,
                        format_field_path(path),
                        location.file,
                        location.line,
                        location.column,
                        None if isinstance(value, dict | list) else value,
                        True,
                    )
                    return FieldOrigin("overlay", layer.label, value, source)
    return FieldOrigin("overlay", layer.label, value, derived=True)


def _identity(keyed: FieldPath) -> bool:
    """The ``name`` that identifies a list item: renaming it moves, not changes, a field."""
    return len(keyed) >= 2 and keyed[-1] == "name" and isinstance(keyed[-2], tuple)


def _same_key(input_path: str, path: FieldPath) -> bool:
    """Whether an input path and an output path end in the same map key."""
    tail = parse_field_path(input_path)[-1:]
    return bool(path) and isinstance(path[-1], str) and tail == path[-1:]
