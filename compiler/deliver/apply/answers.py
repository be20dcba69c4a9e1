"""What an API server's answer must be before trainc counts it.

Nothing in an answer is trusted: a 2xx to an apply must carry the object applied (its
apiVersion, kind, name and namespace) with metadata of the right types; a LIST must
have ``items``, each an object with such metadata; discovery must say which version a
group prefers and which resources a version serves. Anything else is a
:class:`~.client.BadAnswer` that names the request and what was wrong, e.g.

    >>> from compiler.deliver.apply.client import ApiAnswer
    >>> list_items(ApiAnswer(200, {"items": [{"metadata": "x"}]}), "GET /api/v1/secrets")
    Traceback (most recent call last):
    ...
    compiler.deliver.apply.client.BadAnswer: the API server's answer to GET /api/v1/secrets (200) is not a list of objects: items[0].metadata is a string, not a map

Only what trainc reads is checked (metadata, and what :mod:`.wait` reads of a status);
the rest of an object is compared as data.
"""

from __future__ import annotations

from typing import Any

from compiler.deliver.apply.client import ApiAnswer, BadAnswer
from compiler.errors import escape_text

__all__ = [
    "list_items",
    "mapping",
    "metadata_problem",
    "object_problem",
    "preferred_version",
    "served_resources",
    "type_name",
]

Json = dict[str, Any]


def type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, dict):
        return "a map"
    names = {list: "an array", str: "a string", int: "a number", float: "a number"}
    return names.get(type(value), "null")


def _shown(value: Any) -> str:
    text = value if isinstance(value, str) else repr(value)
    return escape_text(text)[:80]


def mapping(value: Any) -> Json:
    """``value`` if it is a map, else ``{}`` (for fields already checked or optional)."""
    return value if isinstance(value, dict) else {}


def _string_map(value: Any, where: str) -> str | None:
    if not isinstance(value, dict):
        return f"{where} is {type_name(value)}, not a map"
    for key, item in value.items():
        if not isinstance(item, str):
            return f"{where}[{_shown(key)}] is {type_name(item)}, not a string"
    return None


def _field_set(value: Any, where: str, depth: int = 0) -> str | None:
    """A ``fieldsV1`` set: maps all the way down."""
    if not isinstance(value, dict):
        return f"{where} is {type_name(value)}, not a map"
    if depth > 100:
        return f"{where} is nested too deeply"
    for key, item in value.items():
        found = _field_set(item, f"{where}.{_shown(key)}", depth + 1)
        if found:
            return found
    return None


def metadata_problem(obj: Any, where: str = "") -> str | None:
    """What is wrong with the metadata of ``obj`` (an object of an answer), if anything."""
    if not isinstance(obj, dict):
        return f"{where or 'the body'} is {type_name(obj)}, not an object"
    at = f"{where}." if where else ""
    metadata = obj.get("metadata")
    if not isinstance(metadata, dict):
        return f"{at}metadata is {type_name(metadata)}, not a map"
    for name in ("name", "namespace", "uid", "resourceVersion"):
        if name in metadata and not isinstance(metadata[name], str):
            return f"{at}metadata.{name} is {type_name(metadata[name])}, not a string"
    if not metadata.get("name"):
        return f"{at}metadata.name is missing"
    for name in ("labels", "annotations"):
        if metadata.get(name) is not None:
            found = _string_map(metadata[name], f"{at}metadata.{name}")
            if found:
                return found
    managed = metadata.get("managedFields")
    if managed is None:
        return None
    if not isinstance(managed, list):
        return f"{at}metadata.managedFields is {type_name(managed)}, not an array"
    for index, entry in enumerate(managed):
        here = f"{at}metadata.managedFields[{index}]"
        if not isinstance(entry, dict):
            return f"{here} is {type_name(entry)}, not a map"
        for name in ("manager", "operation"):
            if name in entry and not isinstance(entry[name], str):
                return f"{here}.{name} is {type_name(entry[name])}, not a string"
        if entry.get("fieldsV1") is not None:
            found = _field_set(entry["fieldsV1"], f"{here}.fieldsV1")
            if found:
                return found
    return None


def object_problem(
    answer: ApiAnswer,
    api_version: str | None,
    kind: str | None,
    name: str,
    namespace: str | None,
) -> str | None:
    """What is wrong with a 2xx answer that must be the object ``kind`` ``name`` in
    ``namespace`` (``""``: cluster-scoped; None: not checked); ``api_version``/``kind``
    None: not checked (a metadata-only answer)."""
    if answer.problem:
        return answer.problem
    body = answer.body
    for field, wanted in (("kind", kind), ("apiVersion", api_version)):
        if wanted is not None and body.get(field) != wanted:
            return f"{field} is {_shown(body.get(field))}, not {wanted}"
    found = metadata_problem(body)
    if found:
        return found
    metadata = body["metadata"]
    if metadata["name"] != name:
        return f"metadata.name is {_shown(metadata['name'])}, not {name}"
    if namespace is not None and (metadata.get("namespace") or "") != namespace:
        return f"metadata.namespace is {_shown(metadata.get('namespace'))}, not {namespace}"
    return None


def list_items(answer: ApiAnswer, request: str) -> list[Json]:
    """The items of a 200 LIST answer, each with checked metadata."""
    problem = answer.problem
    items: Any = answer.body.get("items")
    if problem is None:
        if "items" not in answer.body:
            problem = "it has no items"
        elif items is None:
            items = []
        elif not isinstance(items, list):
            problem = f"items is {type_name(items)}, not an array"
        else:
            for index, item in enumerate(items):
                problem = metadata_problem(item, f"items[{index}]")
                if problem:
                    break
    if problem:
        raise BadAnswer(
            f"the API server's answer to {request} ({answer.code}) is not a list of "
            f"objects: {problem}"
        )
    return list(items)


def preferred_version(answer: ApiAnswer, group: str, request: str) -> str:
    """The preferred ``group/version`` of a 200 API group answer."""
    preferred = answer.body.get("preferredVersion")
    version = preferred.get("groupVersion") if isinstance(preferred, dict) else None
    problem = answer.problem
    if problem is None and not isinstance(preferred, dict):
        problem = f"preferredVersion is {type_name(preferred)}, not a map"
    elif problem is None and not (isinstance(version, str) and version.startswith(f"{group}/")):
        problem = f"preferredVersion.groupVersion is {_shown(version)}, not {group}/<version>"
    if problem is not None or not isinstance(version, str):
        raise BadAnswer(f"the API server's answer to {request} is not an API group: {problem}")
    return version


def served_resources(answer: ApiAnswer, request: str) -> list[Json]:
    """The ``resources`` of a 200 API resource list answer, each with a string name
    and kind."""
    problem = answer.problem
    resources: Any = answer.body.get("resources")
    if problem is None:
        if not isinstance(resources, list):
            problem = f"resources is {type_name(resources)}, not an array"
        else:
            for index, item in enumerate(resources):
                if not isinstance(item, dict):
                    problem = f"resources[{index}] is {type_name(item)}, not a map"
                else:
                    for field in ("name", "kind"):
                        if not isinstance(item.get(field), str):
                            value = type_name(item.get(field))
                            problem = f"resources[{index}].{field} is {value}, not a string"
                if problem:
                    break
    if problem:
        raise BadAnswer(
            f"the API server's answer to {request} is not a list of resources: {problem}"
        )
    return list(resources)
