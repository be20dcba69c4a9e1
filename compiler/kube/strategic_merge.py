"""Strategic merge patch (SMP) on JSON data, driven by the OpenAPI schema.

This reproduces ``StrategicMergePatch`` of k8s.io/apimachinery v0.36.2
(``pkg/util/strategicpatch``) as the Trainer calls it for ``runtimePatches``
(spec R-3.2) and as overlays use it. Merge behaviour comes from the schema's
``x-kubernetes-patch-strategy`` / ``x-kubernetes-patch-merge-key``, never from
field names. The rules, as apimachinery applies them:

* Maps merge key by key; a ``null`` in the patch deletes the key.
* Lists whose field has strategy ``merge`` and a merge key merge item by item on
  that key; the matched item is merged recursively, a new item is added *as
  written* (its ``null`` s and directives are kept). Result order: the patch's
  items in patch order, with original-only items slotted in before the first patch
  item that comes later in the original::

      original [A, B, C] + patch [B']    -> [A, B', C]
      original [A, B]    + patch [C]     -> [C, A, B]
      original [A, B]    + patch [A', C] -> [A', C, B]
      original [a, b, c] + patch [c', a'] -> [b, c', a']

  Repeated keys: a patch item merges into the first original item with its key, and
  original items sharing a key end up next to each other (``[a1, b, a2] + [c]`` ->
  ``[c, a1, a2, b]``).
* Lists of scalars with strategy ``merge`` (``finalizers``) are a union ordered the
  same way. When the original repeats a value, apimachinery's in-place edits of the
  original's storage shape the order; this is reproduced (including Go's slice
  capacities). Every other list is replaced by the patch list as written.
* Directives: ``$patch: replace|delete`` on a map; list items ``{$patch: delete,
  <key>: v}`` and ``{$patch: replace}``; ``$retainKeys``;
  ``$deleteFromPrimitiveList/<field>``; ``$setElementOrder/<field>``.
* The ``retainKeys`` strategy itself is inert when applying a patch (only the
  ``$retainKeys`` directive acts), exactly as in apimachinery.

Inputs are never mutated; the result shares no structure with them.

Where apimachinery is nondeterministic (it iterates a Go map), this module
processes patch keys in their written order: that matters only when one patch
holds both ``<field>`` and ``$deleteFromPrimitiveList/<field>``. Where apimachinery
panics (e.g. a merged list whose first item is ``null``) a :class:`PatchError` is
raised.

Schema: the Trainer passes the Go type (struct tags) to apimachinery; this module
reads the same metadata from the OpenAPI document (their agreement is tested).
Not reproduced: Go's case-insensitive match of a patch key to a struct field when
both sides hold a map or list under a miscased key (such keys never come out of a
typed round trip).

Unknown fields: apimachinery fails when it must look up a field the schema does
not declare (only when original and patch both hold a map or both a list there;
other values are simply set). ``unknown_fields="merge"`` instead treats such
values as schemaless: maps merge, lists are replaced (JSON-merge-patch style).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from compiler.upstream.openapi import SchemaNode

JsonPath = tuple[str | int, ...]

DIRECTIVE = "$patch"
DELETE = "delete"
REPLACE = "replace"
MERGE = "merge"
RETAIN_KEYS_STRATEGY = "retainKeys"
RETAIN_KEYS = "$retainKeys"
DELETE_FROM_PRIMITIVE_LIST = "$deleteFromPrimitiveList"
SET_ELEMENT_ORDER = "$setElementOrder"

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


class PatchError(ValueError):
    """A patch apimachinery rejects; ``path`` locates the problem in the patch."""

    def __init__(self, message: str, path: JsonPath = ()) -> None:
        self.message = message
        self.path = path
        where = _format_path(path)
        super().__init__(f"{where}: {message}" if where else message)


class UnknownFieldError(PatchError):
    """The patch merges a map or list into a field the schema does not declare."""


def strategic_merge(
    original: Mapping[str, Any],
    patch: Mapping[str, Any],
    schema: SchemaNode,
    *,
    unknown_fields: Literal["error", "merge"] = "error",
) -> dict[str, Any]:
    """Apply ``patch`` to ``original`` as apimachinery's StrategicMergePatch does.

    >>> from compiler.upstream.openapi import schema
    >>> spec = schema("io.k8s.api.core.v1.PodSpec")
    >>> strategic_merge({"containers": [{"name": "a", "image": "x"}, {"name": "b"}]},
    ...                 {"containers": [{"name": "b", "image": "y"}, {"name": "c"}]}, spec)
    {'containers': [{'name': 'a', 'image': 'x'}, {'name': 'b', 'image': 'y'}, {'name': 'c'}]}
    """
    if not isinstance(original, Mapping):
        raise PatchError(f"the original must be a JSON object, not {_describe(original)}")
    if not isinstance(patch, Mapping):
        raise PatchError(f"a strategic merge patch must be a JSON object, not {_describe(patch)}")
    merger = _Merger(unknown_fields)
    return merger.merge_map(_copy(original, ()), _copy(patch, ()), schema, ())


# --------------------------------------------------------------------------- values


def _format_path(path: JsonPath) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _copy(value: Any, path: JsonPath) -> Any:
    """A private deep copy as plain JSON data, numbers typed the way Go decodes them."""
    if value is None or isinstance(value, (str, bool, float)):
        return value
    if isinstance(value, int):
        # Go decodes an integer literal outside int64 as a float64.
        return value if _INT64_MIN <= value <= _INT64_MAX else float(value)
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise PatchError(f"object keys must be strings, got {k!r}", path)
            out[k] = _copy(v, (*path, k))
        return out
    if isinstance(value, (list, tuple)):
        return [_copy(v, (*path, i)) for i, v in enumerate(value)]
    raise PatchError(f"not JSON data: {type(value).__name__}", path)


def _kind(value: Any) -> str:
    """The Go dynamic type of a decoded JSON value."""
    if value is None:
        return "nil"
    if isinstance(value, dict):
        return "map"
    if isinstance(value, list):
        return "slice"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int64"
    return "float64"


def _describe(value: Any) -> str:
    return {"map": "an object", "slice": "a list", "nil": "null"}.get(
        _kind(value) if isinstance(value, (dict, list, str, int, float)) or value is None else "",
        f"a {type(value).__name__}",
    )


def _go_eq(a: Any, b: Any, path: JsonPath) -> bool:
    """Go's ``==`` on two ``interface{}`` values (``1 != 1.0``, ``true != 1``)."""
    ka, kb = _kind(a), _kind(b)
    if ka != kb:
        return False
    if ka in ("map", "slice"):
        raise PatchError(f"cannot compare two {_describe(a)} values (apimachinery panics)", path)
    return bool(a == b)


def _hash_key(value: Any, path: JsonPath) -> tuple[str, Any]:
    """A key that hashes like a Go ``map[interface{}]`` key."""
    kind = _kind(value)
    if kind in ("map", "slice"):
        raise PatchError(f"{_describe(value)} cannot be a set member (apimachinery panics)", path)
    return kind, value


def _is_directive(value: Any, name: str) -> bool:
    return isinstance(value, str) and value == name


# How many elements a decoded JSON array (or a list grown by appending one item at
# a time) has room for, by length: Go's append growth for []interface{} (Go 1.26,
# measured). Needed because apimachinery appends onto an original list in place.
_GROWN_CAPACITY = (
    (0, 0), (1, 1), (2, 2), (4, 4), (8, 8), (16, 16), (32, 32), (71, 71), (143, 143),
    (303, 303), (591, 591), (1023, 1023), (1535, 1535), (2560, 2560), (3584, 3584),
    (5120, 5120),
)  # fmt: skip


def _grown_capacity(length: int) -> int:
    for upper, capacity in _GROWN_CAPACITY:
        if length <= upper:
            return capacity
    return length


def _remove_directives(value: Any) -> tuple[Any, bool]:
    """Drop maps holding ``$patch`` (and list items that are such maps); may edit in place.

    Returns the cleaned value and whether to keep it at all.
    """
    if isinstance(value, dict):
        if DIRECTIVE in value:
            return None, False
        for k in list(value):
            cleaned, keep = _remove_directives(value[k])
            if keep:
                value[k] = cleaned
            else:
                del value[k]
        return value, True
    if isinstance(value, list):
        out = []
        for item in value:
            cleaned, keep = _remove_directives(item)
            if keep:
                out.append(cleaned)
        return out, True
    return value, True


def _discard_nulls(value: Any) -> None:
    """Delete every ``null``-valued key of every map inside ``value`` (in place)."""
    if isinstance(value, dict):
        for k in list(value):
            if value[k] is None:
                del value[k]
            else:
                _discard_nulls(value[k])
    elif isinstance(value, list):
        for item in value:
            _discard_nulls(item)


def _extract_key(key: str, prefix: str, path: JsonPath) -> str:
    """``$setElementOrder/containers`` -> ``containers``."""
    head, sep, rest = key.partition("/")
    if not sep or head != prefix:
        raise PatchError(f"malformed directive key {key!r}: expected {prefix}/<field>", path)
    return rest


def _other_strategy(strategies: Sequence[str], path: JsonPath) -> str:
    """The strategy besides ``retainKeys``: ``("merge", "retainKeys")`` -> ``"merge"``."""
    if len(strategies) == 0:
        return ""
    if len(strategies) == 1:
        return "" if strategies[0] == RETAIN_KEYS_STRATEGY else strategies[0]
    if len(strategies) == 2 and RETAIN_KEYS_STRATEGY in strategies:
        return strategies[1] if strategies[0] == RETAIN_KEYS_STRATEGY else strategies[0]
    raise PatchError(f"unexpected patch strategy {','.join(strategies)!r} in the schema", path)


def _go_stable_sort(items: list[Any], less: Callable[[Any, Any], bool]) -> None:
    """Go's ``sort.SliceStable`` (blocks of 20 by insertion, then SymMerge), in place.

    Reproduced step for step because apimachinery sorts with a comparator that is
    not a strict order when some items are missing from the reference list, and
    then the result depends on the exact sequence of swaps.
    """
    n = len(items)

    def insertion(a: int, b: int) -> None:
        for i in range(a + 1, b):
            j = i
            while j > a and less(items[j], items[j - 1]):
                items[j], items[j - 1] = items[j - 1], items[j]
                j -= 1

    def swap_range(a: int, b: int, count: int) -> None:
        for k in range(count):
            items[a + k], items[b + k] = items[b + k], items[a + k]

    def rotate(a: int, m: int, b: int) -> None:
        i, j = m - a, b - m
        while i != j:
            if i > j:
                swap_range(m - i, m, j)
                i -= j
            else:
                swap_range(m - i, m + j - i, i)
                j -= i
        swap_range(m - i, m, i)

    def sym_merge(a: int, m: int, b: int) -> None:
        if m - a == 1:
            lo, hi = m, b
            while lo < hi:
                h = (lo + hi) // 2
                if less(items[h], items[a]):
                    lo = h + 1
                else:
                    hi = h
            for k in range(a, lo - 1):
                items[k], items[k + 1] = items[k + 1], items[k]
            return
        if b - m == 1:
            lo, hi = a, m
            while lo < hi:
                h = (lo + hi) // 2
                if not less(items[m], items[h]):
                    lo = h + 1
                else:
                    hi = h
            for k in range(m, lo, -1):
                items[k], items[k - 1] = items[k - 1], items[k]
            return
        mid = (a + b) // 2
        total = mid + m
        if m > mid:
            start, r = total - b, mid
        else:
            start, r = a, m
        p = total - 1
        while start < r:
            c = (start + r) // 2
            if not less(items[p - c], items[c]):
                start = c + 1
            else:
                r = c
        end = total - start
        if start < m < end:
            rotate(start, m, end)
        if a < start < mid:
            sym_merge(a, start, mid)
        if mid < end < b:
            sym_merge(mid, end, b)

    block = 20
    a, b = 0, block
    while b <= n:
        insertion(a, b)
        a, b = b, b + block
    insertion(a, n)
    while block < n:
        a, b = 0, 2 * block
        while b <= n:
            sym_merge(a, a + block, b)
            a, b = b, b + 2 * block
        if a + block < n:
            sym_merge(a, a + block, n)
        block *= 2


class _SharedStorage:
    """A Go slice that starts out sharing its array with ``caller`` (a list, in place).

    Writes below ``len(caller)`` show through to ``caller`` until an append outgrows
    the capacity and Go moves the slice to a new array.
    """

    def __init__(self, caller: list[Any], capacity: int) -> None:
        self._caller = caller
        self._array: list[Any] = list(caller) + [None] * max(0, capacity - len(caller))
        self._length = len(caller)
        self._shared = True

    def items(self) -> list[Any]:
        return self._array[: self._length]

    def get(self, index: int) -> Any:
        return self._array[index]

    def set(self, index: int, value: Any) -> None:
        self._array[index] = value
        if self._shared and index < len(self._caller):
            self._caller[index] = value

    def delete(self, index: int) -> None:
        for k in range(index, self._length - 1):
            self.set(k, self._array[k + 1])
        self._length -= 1

    def append(self, value: Any) -> None:
        if self._length >= len(self._array):
            self._array = [*self._array[: self._length], None]
            self._shared = False
        self.set(self._length, value)
        self._length += 1


# --------------------------------------------------------------------------- merging


class _Merger:
    """One merge run: options plus Go slice-capacity facts of the lists it built."""

    def __init__(self, unknown_fields: Literal["error", "merge"]) -> None:
        if unknown_fields not in ("error", "merge"):
            raise ValueError(f"unknown_fields must be 'error' or 'merge', not {unknown_fields!r}")
        self.unknown_fields = unknown_fields
        # id(list) -> capacity, for lists this run allocated with an exact size
        # (the lists themselves are kept alive so their ids stay unique).
        self._capacity: dict[int, int] = {}
        self._owned: list[list[Any]] = []

    def _sized(self, items: list[Any], capacity: int) -> list[Any]:
        self._capacity[id(items)] = capacity
        self._owned.append(items)
        return items

    def _cap(self, items: list[Any]) -> int:
        return self._capacity.get(id(items), _grown_capacity(len(items)))

    # ----------------------------------------------------------------- schema

    def _field(self, schema: SchemaNode, key: str, path: JsonPath) -> SchemaNode:
        node = schema.property(key)
        if node is not None:
            return node
        if self.unknown_fields == "error":
            where = schema.name or "the schema"
            raise UnknownFieldError(f"unknown field {key!r}: {where} does not declare it", path)
        return schema.additional_properties() or SchemaNode.schemaless()

    def _lookup_map(self, schema: SchemaNode, key: str, path: JsonPath) -> tuple[SchemaNode, str]:
        node = self._field(schema, key, path)
        return node, _other_strategy(node.patch_strategy_list, path)

    def _lookup_list(
        self, schema: SchemaNode, key: str, path: JsonPath
    ) -> tuple[SchemaNode, str, str]:
        node = self._field(schema, key, path)
        strategy = _other_strategy(node.patch_strategy_list, path)
        items = node.items()
        return (items if items is not None else node), strategy, node.patch_merge_key or ""

    # ----------------------------------------------------------------- maps

    def merge_map(
        self,
        original: dict[str, Any] | None,
        patch: dict[str, Any],
        schema: SchemaNode,
        path: JsonPath,
    ) -> dict[str, Any]:
        if DIRECTIVE in patch:
            return self._map_directive(patch, path)
        if original is None:
            original = {}
        self._apply_retain_keys(original, patch, path)
        self._apply_set_element_order(original, patch, schema, path)

        for raw_key in list(patch):
            patch_value = patch[raw_key]
            key, delete_list = raw_key, False
            if raw_key.startswith(DELETE_FROM_PRIMITIVE_LIST):
                key = _extract_key(raw_key, DELETE_FROM_PRIMITIVE_LIST, (*path, raw_key))
                delete_list = True
            here = (*path, raw_key)

            if patch_value is None:
                original.pop(key, None)
                continue
            if key not in original:
                if not delete_list:
                    _discard_nulls(patch_value)
                    cleaned, keep = _remove_directives(patch_value)
                    if keep:
                        original[key] = cleaned
                continue
            current = original[key]
            if _kind(current) != _kind(patch_value):
                if not delete_list:
                    _discard_nulls(patch_value)
                    cleaned, keep = _remove_directives(patch_value)
                    if keep:
                        original[key] = cleaned
                    else:
                        del original[key]
                continue
            if isinstance(current, dict):
                sub, strategy = self._lookup_map(schema, key, here)
                original[key] = self._merge_map_field(current, patch_value, sub, strategy, here)
            elif isinstance(current, list):
                items, strategy, merge_key = self._lookup_list(schema, key, here)
                original[key] = self._merge_list_field(
                    current, patch_value, items, strategy, merge_key, delete_list, here
                )
            else:
                original[key] = patch_value
        return original

    def _map_directive(self, patch: dict[str, Any], path: JsonPath) -> dict[str, Any]:
        directive = patch[DIRECTIVE]
        if _is_directive(directive, REPLACE):
            # The rest of the patch is taken as written (nulls and nested directives too).
            del patch[DIRECTIVE]
            return patch
        if _is_directive(directive, DELETE):
            return {}
        raise PatchError(
            f"unknown $patch directive {directive!r} on an object (expected replace or delete)",
            (*path, DIRECTIVE),
        )

    def _merge_map_field(
        self,
        original: dict[str, Any],
        patch: dict[str, Any],
        schema: SchemaNode,
        strategy: str,
        path: JsonPath,
    ) -> dict[str, Any]:
        if strategy == REPLACE:
            return patch
        return self.merge_map(original, patch, schema, path)

    def _apply_retain_keys(
        self, original: dict[str, Any], patch: dict[str, Any], path: JsonPath
    ) -> None:
        if RETAIN_KEYS not in patch:
            return
        here = (*path, RETAIN_KEYS)
        retain = patch.pop(RETAIN_KEYS)
        if not isinstance(retain, list):
            raise PatchError("$retainKeys must be a list of field names", here)
        keep = {_hash_key(v, here) for v in retain}
        for key, value in patch.items():
            if value is None or key.startswith((DELETE_FROM_PRIMITIVE_LIST, SET_ELEMENT_ORDER)):
                continue
            if ("string", key) not in keep:
                raise PatchError(f"field {key!r} is patched but not listed in $retainKeys", here)
        for key in list(original):
            if ("string", key) not in keep:
                del original[key]

    def _apply_set_element_order(
        self, original: dict[str, Any], patch: dict[str, Any], schema: SchemaNode, path: JsonPath
    ) -> None:
        for directive_key in [k for k in patch if k.startswith(SET_ELEMENT_ORDER)]:
            here = (*path, directive_key)
            order = patch.pop(directive_key)
            if not isinstance(order, list):
                raise PatchError("$setElementOrder must be a list", here)
            key = _extract_key(directive_key, SET_ELEMENT_ORDER, here)
            found_original, found_patch = key in original, key in patch
            current, patch_list = original.get(key), patch.get(key)
            if found_original and not isinstance(current, list):
                raise PatchError(
                    f"$setElementOrder/{key}: the original {key!r} is not a list", here
                )
            if found_patch and not isinstance(patch_list, list):
                raise PatchError(f"$setElementOrder/{key}: the patch's {key!r} is not a list", here)
            items, strategy, merge_key = self._lookup_list(schema, key, here)
            self._check_set_order(patch_list or [], order, merge_key, here)

            if found_original and found_patch:
                assert isinstance(current, list) and isinstance(patch_list, list)
                merged = self._merge_list_field(
                    current, patch_list, items, strategy, merge_key, False, (*path, key)
                )
            elif found_original:
                assert isinstance(current, list)
                merged = current
            elif found_patch:
                merged, _ = _remove_directives(patch_list)
            else:
                continue
            if merge_key:
                in_order, others = self._partition_maps(merged, order, merge_key, here)
            else:
                in_order, others = self._partition_scalars(merged, order, here)
            kind = self._element_kind(here, current or [], patch_list or [])
            original[key] = self._normalize_order(
                in_order, others, order, current or [], merge_key, kind, here
            )
            patch.pop(key, None)

    def _check_set_order(
        self, patch_list: list[Any], order: list[Any], merge_key: str, path: JsonPath
    ) -> None:
        """The patch's items must appear in ``$setElementOrder`` in the same relative order."""
        if not order or not patch_list:
            return
        items = self._split_deletes(patch_list, path)[0] if merge_key else patch_list
        pi = si = 0
        while pi < len(items) and si < len(order):
            if isinstance(items[pi], dict) and DIRECTIVE in items[pi]:
                pi += 1
                continue
            if self._same_key(items[pi], order[si], merge_key, path):
                pi += 1
            si += 1
        if pi < len(items) and si >= len(order):
            raise PatchError(
                "the patch list's items are not all in $setElementOrder, in the same order", path
            )

    def _same_key(self, left: Any, right: Any, merge_key: str, path: JsonPath) -> bool:
        if not merge_key:
            return _go_eq(left, right, path)
        for item in (left, right):
            if not isinstance(item, dict):
                raise PatchError(
                    f"expected an object with {merge_key!r}, got {_describe(item)}", path
                )
            if merge_key not in item:
                raise PatchError(f"list item lacks the merge key {merge_key!r}", path)
        return _go_eq(left[merge_key], right[merge_key], path)

    # ----------------------------------------------------------------- lists

    def _merge_list_field(
        self,
        original: list[Any],
        patch: list[Any],
        schema: SchemaNode,
        strategy: str,
        merge_key: str,
        delete_list: bool,
        path: JsonPath,
    ) -> list[Any]:
        if strategy == MERGE or delete_list:
            return self._merge_list(original, patch, schema, merge_key, delete_list, path)
        return patch

    def _element_kind(self, path: JsonPath, *lists: list[Any]) -> str:
        """The one Go type of all items (``map``, ``string``, ...); errors like apimachinery."""
        kind: str | None = None
        for items in lists:
            for item in items:
                current = _kind(item)
                if kind is None:
                    if current == "nil":
                        raise PatchError(
                            "a merged list starts with null (apimachinery panics)", path
                        )
                    if current == "slice":
                        raise PatchError("lists of lists cannot be merged", path)
                    kind = current
                elif current != kind:
                    raise PatchError("list items are not all of the same type", path)
        if kind is None:
            raise PatchError("no items in any of the lists to order", path)
        return kind

    def _merge_list(
        self,
        original: list[Any],
        patch: list[Any],
        schema: SchemaNode,
        merge_key: str,
        delete_list: bool,
        path: JsonPath,
    ) -> list[Any]:
        if not original and not patch:
            return original
        kind = self._element_kind(path, original, patch)
        if kind != "map":
            if delete_list:
                doomed = {_hash_key(v, path) for v in patch}
                result = [v for v in original if (kind, v) not in doomed]
                return self._sized(result, len(original))
            merged = self._union(original, patch)
        else:
            if not merge_key:
                raise PatchError(
                    f"cannot merge lists without merge key for {schema.name or 'this list'}", path
                )
            original, patch, merged = self._merge_maps(original, patch, merge_key, schema, path)
        if merge_key:
            in_patch, others = self._partition_maps(merged, patch, merge_key, path)
        else:
            in_patch, others = self._partition_scalars(merged, patch, path)
        return self._normalize_order(in_patch, others, patch, original, merge_key, kind, path)

    def _union(self, original: list[Any], patch: list[Any]) -> list[Any]:
        """Scalars of both lists without repeats, in apimachinery's (pre-sort) order.

        apimachinery appends the patch onto the original and removes a repeat by
        moving the last item into its place. The append reuses the original's
        storage when it has room, and then the removals also rewrite the original
        list (which later serves as the reference order): mirrored in place.
        """
        n = len(original)
        work = original + patch
        last = len(work) - 1
        i = 0
        while i < last:
            j = i + 1
            while j <= last:
                if work[i] == work[j]:
                    work[j] = work[last]
                    last -= 1
                    j -= 1
                j += 1
            i += 1
        if self._cap(original) >= len(work):
            original[:] = work[:n]
        return work[: last + 1]

    def _merge_maps(
        self,
        original: list[Any],
        patch: list[Any],
        merge_key: str,
        schema: SchemaNode,
        path: JsonPath,
    ) -> tuple[list[Any], list[Any], list[Any]]:
        """Merge a list of maps by ``merge_key``, applying ``$patch`` items.

        Returns (original after deletions, patch without directive items, merged list).
        Like apimachinery, deletions shift items within the original list's storage
        and new items are appended into its spare room: when a ``$setElementOrder``
        directive later reads the original list, it sees those writes, so they are
        mirrored into ``original`` in place.
        """
        caller = original
        storage = _SharedStorage(caller, self._cap(caller))
        plain: list[Any] = []
        replace = False
        for index, item in enumerate(patch):
            if DIRECTIVE not in item:
                plain.append(item)
                continue
            directive = item[DIRECTIVE]
            here = (*path, index, DIRECTIVE)
            if _is_directive(directive, DELETE):
                if merge_key not in item:
                    raise PatchError(
                        f"a $patch: delete item needs the merge key {merge_key!r}", here
                    )
                while (found := self._find(storage.items(), merge_key, item[merge_key], here)) >= 0:
                    storage.delete(found)
            elif _is_directive(directive, REPLACE):
                replace = True
            elif _is_directive(directive, MERGE):
                raise PatchError("$patch: merge is not supported in a list", here)
            else:
                raise PatchError(f"unknown $patch directive {directive!r} in a list", here)
        if replace:
            # The patch's plain items are the new list, as written.
            return plain, [], list(plain)

        remaining = storage.items()
        for index, item in enumerate(plain):
            here = (*path, index)
            if merge_key not in item:
                raise PatchError(f"list item lacks the merge key {merge_key!r}", here)
            found = self._find(storage.items(), merge_key, item[merge_key], here)
            if found >= 0:
                storage.set(found, self.merge_map(storage.get(found), item, schema, here))
            else:
                storage.append(item)
        return remaining, plain, storage.items()

    def _find(self, items: list[Any], merge_key: str, value: Any, path: JsonPath) -> int:
        for index, item in enumerate(items):
            if not isinstance(item, dict):
                raise PatchError(f"list item {index} is not an object", path)
            if merge_key in item and _go_eq(item[merge_key], value, path):
                return index
        return -1

    def _partition_maps(
        self, merged: list[Any], reference: list[Any], merge_key: str, path: JsonPath
    ) -> tuple[list[Any], list[Any]]:
        """Split into (items whose key occurs in ``reference``, the others)."""
        inside: list[Any] = []
        outside: list[Any] = []
        for item in merged:
            if not isinstance(item, dict):
                raise PatchError(f"expected an object, got {_describe(item)}", path)
            if merge_key not in item:
                raise PatchError(f"list item lacks the merge key {merge_key!r}", path)
            found = self._find(reference, merge_key, item[merge_key], path) >= 0
            (inside if found else outside).append(item)
        return inside, outside

    def _partition_scalars(
        self, merged: list[Any], reference: list[Any], path: JsonPath
    ) -> tuple[list[Any], list[Any]]:
        present = {_hash_key(v, path) for v in reference}
        inside: list[Any] = []
        outside: list[Any] = []
        for item in merged:
            (inside if _hash_key(item, path) in present else outside).append(item)
        return inside, outside

    def _split_deletes(self, items: list[Any], path: JsonPath) -> tuple[list[Any], list[Any]]:
        keep: list[Any] = []
        deletes: list[Any] = []
        for item in items:
            if not isinstance(item, dict):
                raise PatchError(f"expected an object, got {_describe(item)}", path)
            is_delete = DIRECTIVE in item and _is_directive(item[DIRECTIVE], DELETE)
            (deletes if is_delete else keep).append(item)
        return keep, deletes

    def _index(
        self, items: list[Any], value: Any, merge_key: str, kind: str, path: JsonPath
    ) -> int:
        def identity(item: Any) -> Any:
            if kind != "map":
                return item
            return item.get(merge_key) if isinstance(item, dict) else None

        target = identity(value)
        for index, item in enumerate(items):
            if _go_eq(target, identity(item), path):
                return index
        return -1

    def _sort_like(
        self, items: list[Any], order: list[Any], merge_key: str, kind: str, path: JsonPath
    ) -> list[Any]:
        """Stable-sort ``items`` by position in ``order`` (``$patch: delete`` items last)."""
        deletes: list[Any] = []
        if kind == "map":
            for item in (*items, *order):
                if not isinstance(item, dict):
                    raise PatchError(f"expected an object, got {_describe(item)}", path)
                if merge_key not in item:
                    raise PatchError(f"list item lacks the merge key {merge_key!r}", path)
            items, deletes = self._split_deletes(items, path)
        items = list(items)
        if len(items) > 1:
            positions = [self._index(order, v, merge_key, kind, path) for v in items]
            if min(positions) >= 0:
                ranked = sorted(zip(positions, range(len(items)), items, strict=True))
                items = [item for _, _, item in ranked]
            else:

                def less(a: Any, b: Any) -> bool:
                    ia = self._index(order, a, merge_key, kind, path)
                    ib = self._index(order, b, merge_key, kind, path)
                    return ia < ib if ia >= 0 and ib >= 0 else True

                _go_stable_sort(items, less)
        return items + deletes

    def _normalize_order(
        self,
        in_patch: list[Any],
        others: list[Any],
        patch_order: list[Any],
        original_order: list[Any],
        merge_key: str,
        kind: str,
        path: JsonPath,
    ) -> list[Any]:
        """Patch items in patch order, original-only items slotted in by original order."""
        right = self._sort_like(in_patch, patch_order, merge_key, kind, path)
        left = self._sort_like(others, original_order, merge_key, kind, path)
        out: list[Any] = []
        i = j = 0
        while i < len(left) or j < len(right):
            if i >= len(left):
                out.append(right[j])
                j += 1
            elif j >= len(right):
                out.append(left[i])
                i += 1
            else:
                li = self._index(original_order, left[i], merge_key, kind, path)
                ri = self._index(original_order, right[j], merge_key, kind, path)
                if li >= 0 and ri >= 0 and li < ri:
                    out.append(left[i])
                    i += 1
                else:
                    out.append(right[j])
                    j += 1
        return self._sized(out, len(out))
