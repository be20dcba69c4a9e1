"""Server-side apply of one object, and what the answer means.

A PATCH with ``application/apply-patch+yaml`` (JSON is YAML), ``fieldManager`` and
``force`` as kubectl sends them; ``dryRun=All`` for ``--dry-run=server``. The answer
says what happened: 201 created; 200 with a new ``resourceVersion`` configured, with the
same one unchanged; a 2xx whose body is not the object applied (not JSON, another kind,
name or namespace, metadata of the wrong types: :mod:`.answers`) is a failure of that
object, never ``created``. 409 is a conflict with another field manager: the error names the
manager and the fields (the server's ``details.causes``); ``--force-conflicts`` takes
the fields over.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from compiler.deliver.apply.answers import mapping, object_problem
from compiler.deliver.apply.client import ApiAnswer, Connection, Resource

__all__ = ["Applied", "ApplyFailure", "conflict_message", "server_side_apply"]

Json = dict[str, Any]
APPLY_PATCH = "application/apply-patch+yaml"


@dataclass
class Applied:
    status: str  # created | configured | unchanged
    obj: Json


class ApplyFailure(Exception):
    """The server refused one object (conflict, invalid, ...); the run goes on."""

    def __init__(self, message: str, answer: ApiAnswer | None = None) -> None:
        super().__init__(message)
        self.answer = answer  # the refusal, when the server gave one


def conflict_message(answer: ApiAnswer) -> str:
    """``conflict with field manager "m": .spec.x, .metadata.labels.y``, grouped by manager."""
    causes = mapping(answer.body.get("details")).get("causes")
    by_manager: dict[str, list[str]] = {}
    for cause in causes if isinstance(causes, list) else []:
        cause = mapping(cause)
        message = str(cause.get("message", ""))
        manager = message.split('"')[1] if message.count('"') >= 2 else "another manager"
        by_manager.setdefault(manager, []).append(str(cause.get("field", "")))
    if not by_manager:
        return answer.message
    parts = [
        f'field manager "{manager}" owns {", ".join(fields)}'
        for manager, fields in sorted(by_manager.items())
    ]
    return "conflict: " + "; ".join(parts) + " (--force-conflicts takes them over)"


def server_side_apply(
    connection: Connection,
    resource: Resource,
    obj: Json,
    *,
    field_manager: str,
    force: bool,
    dry_run: bool,
    live_version: str | None,
) -> Applied:
    metadata = obj.get("metadata") or {}
    namespace = metadata.get("namespace") if resource.namespaced else None
    params = {"fieldManager": field_manager, "fieldValidation": "Strict"}
    if force:
        params["force"] = "true"
    if dry_run:
        params["dryRun"] = "All"
    answer = connection.request(
        "PATCH",
        resource.path(namespace, str(metadata.get("name"))),
        obj,
        params,
        content_type=APPLY_PATCH,
    )
    if answer.code == 409:
        raise ApplyFailure(conflict_message(answer), answer)
    if answer.code >= 300 or answer.code < 200:
        raise ApplyFailure(f"refused by the API server ({answer.code}): {answer.message}", answer)
    problem = object_problem(
        answer,
        str(obj.get("apiVersion")),
        str(obj.get("kind")),
        str(metadata.get("name")),
        str(namespace or ""),
    )
    if problem is not None:
        raise ApplyFailure(
            f"the API server answered {answer.code} but not with the object applied: {problem}"
        )
    if answer.code == 201 or live_version is None:
        return Applied("created", answer.body)
    version = answer.body["metadata"].get("resourceVersion")
    return Applied("unchanged" if version == live_version else "configured", answer.body)
