"""Fuzz surface ``apply``: ``trainc apply`` against an API server that misbehaves.

Each worker starts a fake API server on 127.0.0.1 (:mod:`tests.fake_apiserver`); each
case resets it (empty, or holding what a clean apply left), picks a tree (the bundled
example: PodGroups and JobSets; an MPI job: a ConfigMap, a JobSet and a required
Secret) and a variant (plain, ``--dry-run=server``, ``--prune``, ``--wait``, ``--diff``),
and spoils one or two answers, once or every time:

* the status code (2xx, 3xx, 4xx, 5xx; 429 and 503 with ``Retry-After`` in either form,
  or broken);
* the body, a JSON mutation of the real answer (a value replaced by a hostile one, a
  key removed, the identity changed), or truncated, empty, not JSON, not an object,
  nested too deeply, huge;
* the timing: a body trickled a byte at a time, headers then a stall, an endless
  chunked body, a connection dropped before or after the headers, a short body.

``--timeout`` is 1 to 2 seconds so cases stay fast. A case is classified as a traceback,
a hang (the run went on past its deadlines plus a margin), or a false success: exit 0
(``--diff``: 0 or 1) although an answer it was given could not be a success (an apply
or create answered with something that is not the object, a LIST that is not a list,
a refusal, a fault on every attempt), or an object reported applied whose apply answer
was such an answer.
"""

from __future__ import annotations

import contextlib
import copy
import gc
import json
import random
import re
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.fake_apiserver import KINDS, FakeApiServer, Reply, Request, status
from tests.fuzz.engine import HOSTILE, REPO, Verdict, _paths, _set, limit_memory, run_main

VARIANTS: list[list[str]] = [[], [], ["--dry-run=server"], ["--prune"], ["--wait"], ["--diff"]]
CODES = [200, 201, 204, 206, 301, 302, 304, 307, 400, 401, 403, 404, 405, 409, 410, 415, 422]
RETRY_CODES = [429, 500, 502, 503, 504]
RETRY_AFTER = [
    "0",
    "1",
    "2",
    "-1",
    "1.5",
    "soon",
    "",
    "99999999999",
    "DATE+1",
    "DATE-60",
    "DATE+3600",
]
TIMINGS = ["trickle", "stall", "chunked-forever", "drop", "drop-after-headers", "short"]
IDENTITY = [
    ("kind",),
    ("apiVersion",),
    ("metadata",),
    ("metadata", "name"),
    ("metadata", "namespace"),
]
SUCCESS = "created", "configured", "recreated", "unchanged"
_LINE = re.compile(r"^(\S+) (\S+) (created|configured|recreated|unchanged|pruned|skipped|failed)")


@dataclass
class State:
    server: FakeApiServer
    kubeconfig: Path
    trees: dict[str, Path]
    applied: dict[tuple[str, bool], dict[str, Any]]  # (tree, prune) -> objects after an apply
    root: Path


def _mpi_tree(root: Path) -> Path:
    from tests.conformance.cases import load_case

    case = load_case(REPO / "golden" / "mpi-deepspeed-defaults")
    assert case is not None
    tree = root / "mpi"
    tree.mkdir()
    for index, path in enumerate(case.inputs):
        shutil.copy(path, tree / f"{index}-{path.name}")
    return tree


def prepare() -> State:
    """The fake server, the trees, the live objects a clean apply leaves, a warm process."""
    import compiler.cli

    no_freeze: Callable[[], None] = lambda: None  # noqa: E731 - as the render surface
    compiler.cli.tune_gc = no_freeze
    root = Path(tempfile.mkdtemp(prefix="trainc-fuzz-apply-"))
    server = FakeApiServer(idle=600.0)
    kubeconfig = server.kubeconfig(root)
    trees = {"example": REPO / "example", "mpi": _mpi_tree(root)}
    applied: dict[tuple[str, bool], dict[str, Any]] = {}
    for name, tree in trees.items():
        for prune in (False, True):
            server.reset()
            argv = ["apply", str(tree), "--kubeconfig", str(kubeconfig), "--timeout", "30"]
            verdict, out, err = run_main(argv + (["--prune"] if prune else []), 120.0)
            assert verdict.code == 0, out + err
            objects = copy.deepcopy(server.objects)
            if prune:  # a member this ApplySet applied before and no longer renders
                path, jobset = next((k, v) for k, v in objects.items() if "/jobsets/" in k)
                stale = copy.deepcopy(jobset)
                stale["metadata"]["name"] = "stale"
                stale["metadata"]["uid"] = "uid-stale"
                objects[path.rpartition("/")[0] + "/stale"] = stale
            applied[(name, prune)] = objects
    gc.collect()
    limit_memory()
    return State(server, kubeconfig, trees, applied, root)


# --- faults -----------------------------------------------------------------------------


def _title(request: Request) -> str | None:
    """The outcome line's title of the object a PATCH or POST writes."""
    parts = request.path.strip("/").split("/")
    body = request.body if isinstance(request.body, dict) else {}
    if request.method == "POST":
        name = str((body.get("metadata") or {}).get("name"))
    elif request.method == "PATCH":
        name = parts[-1]
        parts = parts[:-1]
    else:
        return None
    plural = parts[-1]
    if plural not in KINDS:
        return None
    kind = KINDS[plural][1]
    namespace = parts[parts.index("namespaces") + 1] if "namespaces" in parts[:-1] else ""
    return f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"


def _is_list(request: Request) -> bool:
    parts = request.path.strip("/").split("/")
    return request.method == "GET" and parts[-1] in KINDS


def _retry_after(rng: random.Random) -> str:
    value = rng.choice(RETRY_AFTER)
    if value.startswith("DATE"):
        import email.utils

        value = email.utils.formatdate(time.time() + int(value[4:]), usegmt=True)
    return value


_MISSING = object()


def _get(value: Any, *path: str) -> Any:
    for part in path:
        if not isinstance(value, dict) or part not in value:
            return _MISSING
        value = value[part]
    return value


def _broken(original: Any, mutated: Any, is_list: bool) -> bool:
    """Whether ``mutated`` (a 2xx body) can no longer be taken as the answer: for a
    LIST, no ``items`` array of objects with a metadata map and a name; for an apply
    or create, not the same object (kind, apiVersion, name, namespace, metadata map)."""
    if not isinstance(mutated, dict):
        return True
    if is_list:
        items = mutated.get("items", _MISSING)
        if items is None:
            return False
        if not isinstance(items, list):
            return True
        return any(
            not isinstance(_get(i, "metadata"), dict)
            or not isinstance(_get(i, "metadata", "name"), str)
            or not _get(i, "metadata", "name")
            for i in items
        )
    if not isinstance(mutated.get("metadata"), dict):
        return True
    return any(
        _get(original, *path) != _get(mutated, *path)
        for path in (("kind",), ("apiVersion",), ("metadata", "name"), ("metadata", "namespace"))
    )


def _mutate_body(body: Any, rng: random.Random) -> Any:
    """A JSON mutation of ``body``: the identity, a list item, any value or key."""
    if not isinstance(body, dict):
        return body
    body = copy.deepcopy(body)
    choice = rng.random()
    if choice < 0.3:
        with contextlib.suppress(KeyError, TypeError):  # a path through a non-map
            _set(body, rng.choice(IDENTITY), rng.choice(HOSTILE))
        return body
    if choice < 0.45 and isinstance(body.get("items"), list) and body["items"]:
        index = rng.randrange(len(body["items"]))
        if rng.random() < 0.5:
            body["items"][index] = rng.choice(["x", 1, None, [], True])
        else:
            body["items"][index]["metadata"] = rng.choice(["x", 1, None, [], True, {}])
        return body
    paths = [p for p in _paths(body) if p]
    if not paths:
        return body
    path = rng.choice(paths)
    if rng.random() < 0.25:
        _set(body, path, None, delete=True)
    else:
        _set(body, path, rng.choice(HOSTILE))
    return body


def _spoil_bytes(data: bytes, rng: random.Random) -> bytes:
    choice = rng.randrange(7)
    if choice == 0:
        return b""
    if choice == 1:
        return data[: rng.randrange(max(len(data), 1))]
    if choice == 2:
        return b"<html><body>502 Bad Gateway</body></html>"
    if choice == 3:
        return rng.choice([b"[]", b"null", b"1", b'"x"', b"true", b"[{}]"])
    if choice == 4:
        return b"[" * 200_000 + b"]" * 200_000  # nested too deeply for any parser
    if choice == 5:
        return b'{"kind": NaN, "x": Infinity}'
    return data + b"\xff\xfe garbage"


@dataclass
class Fault:
    """One spoiled answer (or every matching one)."""

    match: Callable[[Request], bool]
    kind: str  # code | retry | body | bytes | timing | huge
    every: bool
    rng: random.Random
    code: int = 200
    timing: str = "normal"
    spoiled: set[int] = field(default_factory=set)  # requests a fault has spoiled (shared)
    served: int = 0
    poisoned: list[str] = field(default_factory=list)  # why an answer could not succeed
    titles: set[str] = field(default_factory=set)  # objects whose apply answer was poison

    def __call__(self, request: Request, answer: Reply) -> Reply:
        if not self.match(request) or (self.served and not self.every):
            return answer
        if request.index in self.spoiled:
            return answer  # one fault per answer: the judgement is of what was sent
        self.spoiled.add(request.index)
        self.served += 1
        rng = self.rng
        write = request.method in ("PATCH", "POST")
        meaningful = write or _is_list(request)
        success = 200 <= answer.status < 300
        reply = Reply(answer.status, answer.body, dict(answer.headers))
        poison = ""
        if self.kind == "code":
            reply.status = self.code
            if not 200 <= self.code < 300:
                allowed = self.code == 404 and request.method in ("GET", "DELETE")
                allowed |= self.code == 409 and request.method == "POST"
                allowed |= not success  # the fake refused already (404 parent, 409)
                if (write or _is_list(request)) and not allowed:
                    poison = f"{self.code} to {request.method} {request.path}"
            elif not success and meaningful:
                poison = f"{self.code} with the body of a {answer.status}"
        elif self.kind == "retry":
            reply.status = self.code
            reply.body = status(self.code, "try again", "TooManyRequests")
            if rng.random() < 0.8:
                reply.headers["Retry-After"] = _retry_after(rng)
            if self.every and (write or _is_list(request)):
                poison = f"{self.code} every time to {request.method} {request.path}"
        elif self.kind == "body":
            reply.body = _mutate_body(answer.body, rng)
            if success and meaningful and _broken(answer.body, reply.body, _is_list(request)):
                poison = f"a mutated body to {request.method} {request.path}"
        elif self.kind == "bytes":
            original = answer.data()
            reply.body = _spoil_bytes(original, rng)
            if success and meaningful and reply.body != original and original:
                try:
                    json.loads(reply.body)
                    broken = False
                except ValueError:
                    broken = True
                broken |= reply.body.strip() in (b"[]", b"null", b"1", b'"x"', b"true", b"[{}]")
                if broken:
                    poison = f"a spoiled body to {request.method} {request.path}"
        elif self.kind == "huge":
            body = copy.deepcopy(answer.body) if isinstance(answer.body, dict) else {}
            body["padding"] = "x" * rng.choice((1 << 20, 8 << 20))
            reply.body = body
        elif self.kind == "timing":
            reply.mode = self.timing
            reply.delay = rng.choice((0.01, 0.05, 0.2))
            reply.stall = rng.choice((0.5, 1.5, 3.0))
            if self.every and meaningful:
                poison = f"{self.timing} every time to {request.method} {request.path}"
        if poison:
            self.poisoned.append(poison)
            title = _title(request)
            if title is not None and write:
                self.titles.add(title)
        return reply


def _matcher(rng: random.Random) -> tuple[str, Callable[[Request], bool], bool]:
    """What a fault spoils, and whether it can spoil more than one request."""
    choice = rng.random()
    if choice < 0.4:
        target = rng.randrange(8)
        return f"request #{target}", lambda r: r.index == target, False
    method = rng.choice(["GET", "GET", "PATCH", "PATCH", "POST", "DELETE"])
    what = rng.choice(["list", "object", "any", "discovery"])

    def match(request: Request) -> bool:
        if request.method != method:
            return False
        if what == "list":
            return _is_list(request)
        if what == "object":
            return not _is_list(request) and request.path.count("/") >= 5
        if what == "discovery":
            return request.path.startswith("/apis/") and request.path.count("/") <= 3
        return True

    return f"{method} {what}", match, True


def _fault(rng: random.Random) -> tuple[str, Fault]:
    where, match, many = _matcher(rng)
    kind = rng.choice(["code", "retry", "body", "body", "bytes", "timing", "huge"])
    every = many and rng.random() < 0.3
    fault = Fault(match, kind, every, random.Random(rng.random()))
    if kind == "code":
        fault.code = rng.choice(CODES)
    elif kind == "retry":
        fault.code = rng.choice(RETRY_CODES)
    elif kind == "timing":
        fault.timing = rng.choice(TIMINGS)
    label = f"{kind}{' ' + str(fault.code) if kind in ('code', 'retry') else ''}"
    label += f" {fault.timing}" if kind == "timing" else ""
    return f"{label} on {where}{' every time' if every else ''}", fault


def _started(request: Request, answer: Reply) -> Reply:
    """JobSets that have started, so ``--wait`` ends (unless a fault says otherwise)."""
    body = answer.body
    if request.method == "GET" and "/jobsets/" in request.path and isinstance(body, dict):
        jobs = (body.get("spec") or {}).get("replicatedJobs") or []
        body["status"] = {
            "replicatedJobsStatus": [
                {"name": j.get("name"), "ready": j.get("replicas", 1), "active": 0}
                for j in jobs
                if isinstance(j, dict)
            ]
        }
    return answer


def run_case(state: State, seed: int, index: int, limit: float) -> tuple[Verdict, dict[str, Any]]:
    """Case ``index`` of run ``seed``: a tree, a variant, spoiled answers; judged."""
    rng = random.Random(seed * 1_000_003 + index)
    server = state.server
    server.reset()
    tree = rng.choice(sorted(state.trees))
    variant = list(rng.choice(VARIANTS))
    timeout = rng.choice((1.0, 1.5, 2.0))
    if rng.random() < 0.5:
        live = list(copy.deepcopy(state.applied[(tree, "--prune" in variant)]).values())
        if rng.random() < 0.5:  # one drifted: an apply to send, not only LISTs
            metadata = rng.choice(live)["metadata"]
            metadata["labels"] = {**(metadata.get("labels") or {}), "drift": "x"}
            for entry in metadata.get("managedFields") or []:
                entry["fieldsV1"].setdefault("f:metadata", {}).setdefault("f:labels", {})
                entry["fieldsV1"]["f:metadata"]["f:labels"]["f:drift"] = {}
        for obj in live:
            server.put(obj)
    if "--wait" in variant:
        server.script(_started)
    faults = [_fault(rng) for _ in range(rng.choice((1, 1, 2)))]
    spoiled: set[int] = set()
    for _, fault in faults:
        fault.spoiled = spoiled
        server.script(fault)
    argv = [
        "apply",
        str(state.trees[tree]),
        "--kubeconfig",
        str(state.kubeconfig),
        "--timeout",
        f"{timeout:g}",
        *variant,
    ]
    phases = 2 if "--wait" in variant else 1
    started = time.monotonic()
    verdict, out, err = run_main(argv, min(limit, timeout * phases + 8.0))
    ended = time.monotonic()
    first = server.requests[0].time if server.requests else started
    if ended - first > timeout * phases + 3.0 and not verdict.hang:
        verdict.hang = True  # past its deadlines by more than the margin
    poisoned = [p for _, f in faults for p in f.poisoned]
    titles = {t for _, f in faults for t in f.titles}
    successes = (0, 1) if "--diff" in variant else (0,)
    if poisoned and verdict.code in successes:
        verdict.wrong.append(f"exit {verdict.code} after {poisoned[0]}")
    for line in out.splitlines():
        found = _LINE.match(line)
        if found and f"{found[1]} {found[2]}" in titles and found[3] in SUCCESS:
            verdict.wrong.append(f"reported {found[3]} after a poisoned answer: {line}")
    detail = {
        "tree": tree,
        "argv": [a.replace(str(state.root), "$CASE") for a in argv],
        "faults": [label for label, _ in faults],
        "code": verdict.code,
        "seconds": round(ended - started, 2),
        "requests": [f"{r.method} {r.path}" for r in server.requests][:40],
        "stdout": out[-3000:],
        "stderr": err[-3000:],
        "traceback": verdict.traceback,
        "wrong": verdict.wrong,
    }
    return verdict, detail
