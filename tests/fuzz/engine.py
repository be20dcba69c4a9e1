"""The fuzzer's parts: seeds, mutations, one in-process run, the verdict (see the package)."""

from __future__ import annotations

import contextlib
import gc
import io
import json
import os
import random
import resource
import shutil
import signal
import tempfile
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
GIB = 1 << 30

# --- seeds ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Seed:
    """Files (relative path -> text) and how to run them: ``paths`` (the folder of
    files as PATHs) or ``project`` (``example/trainc.yaml`` with its overlays)."""

    name: str
    files: dict[str, str]
    mode: str = "paths"


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def load_seeds() -> list[Seed]:
    """Every golden case's input files, the example's inputs, and the example project."""
    from tests.conformance.cases import load_case

    seeds = []
    for directory in sorted((REPO / "golden").iterdir()):
        if not (directory / "case.yaml").is_file():
            continue
        case = load_case(directory)
        if case is None:  # not a case of the default Trainer release
            continue
        files = {f"{index}-{path.name}": _text(path) for index, path in enumerate(case.inputs)}
        seeds.append(Seed(case.name, files))
    example = {
        str(p.relative_to(REPO / "example")): _text(p)
        for p in sorted((REPO / "example").rglob("*.yaml"))
        if p.name != "trainc.yaml"
    }
    seeds.append(Seed("example", example))
    project = {
        str(p.relative_to(REPO)): _text(p)
        for folder in ("example", "overlays")
        for p in sorted((REPO / folder).rglob("*.yaml"))
    }
    seeds.append(Seed("example-project", project, "project"))
    return seeds


# --- mutations --------------------------------------------------------------------------

HOSTILE: list[Any] = [
    None,
    True,
    False,
    "t",
    ["a"],
    {},
    [],
    -0.0,
    0,
    -1,
    2**31,
    2**63 - 1,
    2**63,
    2**64,
    1e308,
    "",
    "a\nb",
    "x" * 300,
    "UPPER",
    "team..a",
    "../../etc",
    "/abs/path",
    "a.yaml:1:2: spoof",
    "\x1b[31mred",
    "Grüße",
    "0x10",
    "1e3",
    "on",
    {"a": None},
    [None],
    [[[]]],
    "Trainer.Kubeflow.org/v1alpha1",
    "v1",
    "9223372036854775807",
    "-0.",
    "team-b",
]
IDENTITY = [
    ("metadata",),
    ("metadata", "name"),
    ("metadata", "namespace"),
    ("apiVersion",),
    ("kind",),
    ("spec",),
]


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*prefix, index))


def _set(document: Any, path: tuple[Any, ...], value: Any, delete: bool = False) -> Any:
    if not path:
        return value
    parent = document
    for part in path[:-1]:
        parent = parent[part]
    if delete:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return document


def _structural(text: str, rng: random.Random) -> str | None:
    try:
        documents = list(yaml.safe_load_all(text))
    except yaml.YAMLError:
        return None
    if not documents:
        return None
    index = rng.randrange(len(documents))
    document = documents[index]
    choice = rng.random()
    if choice < 0.05:
        documents.append(documents[index])  # a duplicate object
    elif choice < 0.3 and isinstance(document, dict):
        path = rng.choice(IDENTITY)
        try:
            documents[index] = _set(document, path, rng.choice(HOSTILE))
        except (KeyError, IndexError, TypeError):
            documents[index] = _set(document, path[:1], rng.choice(HOSTILE))
    else:
        paths = list(_paths(document))
        path = rng.choice(paths)
        if path and rng.random() < 0.25:
            documents[index] = _set(document, path, None, delete=True)
        else:
            documents[index] = _set(document, path, rng.choice(HOSTILE))
    try:
        return yaml.safe_dump_all(documents, sort_keys=False, allow_unicode=True)
    except (yaml.YAMLError, RecursionError):
        return None


def _textual(text: str, rng: random.Random) -> str:
    lines = text.splitlines(keepends=True) or [""]
    index = rng.randrange(len(lines))
    choice = rng.randrange(9)
    if choice == 0:
        del lines[index]
    elif choice == 1:
        lines.insert(index, lines[index])
    elif choice == 2:
        other = rng.randrange(len(lines))
        lines[index], lines[other] = lines[other], lines[index]
    elif choice == 3:
        return text[: rng.randrange(len(text) + 1)]
    elif choice == 4:
        line = lines[index]
        at = rng.randrange(len(line) + 1)
        lines[index] = line[:at] + rng.choice("\x00\x07\x1b\t\r\u2028\ufeff:[{&*!%@`|>") + line[at:]
    elif choice == 5:
        lines[index] = ("  " + lines[index]) if rng.random() < 0.5 else lines[index][2:]
    elif choice == 6:
        lines.insert(index, "---\n")
    elif choice == 7:
        lines[index] = lines[index].replace(": ", ": &a ", 1) + "x: *a\n"
    else:
        lines[index] = lines[index].replace(":", ": " + repr(rng.choice(HOSTILE)) + " #", 1)
    return "".join(lines)


def mutate(seed: Seed, rng: random.Random) -> dict[str, str | None]:
    """The seed's files after 1-3 mutations; a value of None marks a special file."""
    files: dict[str, str | None] = dict(seed.files)
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        name = rng.choice(sorted(files))
        text = files[name]
        if text is None:
            continue
        if rng.random() < 0.02:
            files[name] = None  # a FIFO or a symlink to a device in its place
            continue
        mutated = _structural(text, rng) if rng.random() < 0.7 else None
        files[name] = mutated if mutated is not None else _textual(text, rng)
    return files


def write_case(root: Path, files: dict[str, str | None], rng: random.Random) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if text is None:
            if rng.random() < 0.5:
                os.mkfifo(path)
            else:
                path.symlink_to(rng.choice(["/dev/zero", "/dev/urandom", "/dev/null", "/"]))
        else:
            path.write_text(text, encoding="utf-8", errors="surrogatepass")


# --- one run ----------------------------------------------------------------------------


class Hang(Exception):
    """The case ran past its time limit."""


def _alarm(signum: int, frame: Any) -> None:
    raise Hang


@dataclass
class Verdict:
    code: int | None = None
    traceback: str | None = None
    hang: bool = False
    memory: bool = False
    unlocated: list[str] = field(default_factory=list)
    wrong: list[str] = field(default_factory=list)  # success claimed for what was not one

    @property
    def bad(self) -> bool:
        return bool(
            self.traceback
            or self.hang
            or self.memory
            or self.unlocated
            or self.wrong
            or self.code not in (0, 1, 2)
        )


def run_main(argv: list[str], limit: float) -> tuple[Verdict, str, str]:
    """``main(argv)`` in-process with a time limit; the verdict (without the location
    check), stdout and stderr."""
    from compiler.cli import main

    out, err = io.StringIO(), io.StringIO()
    verdict = Verdict()
    previous = signal.signal(signal.SIGALRM, _alarm)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            signal.setitimer(signal.ITIMER_REAL, limit)
            try:
                verdict.code = main(argv)
            except SystemExit as exit:
                verdict.code = exit.code if isinstance(exit.code, int) else 2
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
    except Hang:
        verdict.hang = True
    except MemoryError:
        verdict.memory = True
    except BaseException:
        verdict.traceback = traceback.format_exc()
    finally:
        signal.signal(signal.SIGALRM, previous)
    if verdict.traceback is None and "Traceback (most recent call last)" in err.getvalue():
        verdict.traceback = err.getvalue()
    return verdict, out.getvalue(), err.getvalue()


def _located(line: str, root: Path) -> bool:
    """Whether an error line starts with a file of the case (or names the output path
    that cannot be written)."""
    return line.startswith((str(root), f'"{root}', f"cannot write the output {root}"))


def unlocated_errors(
    argv: list[str], verdict: Verdict, out: str, err: str, root: Path
) -> list[str]:
    """Error lines and findings that name no file of the case."""
    found = []
    if "--format" in argv and verdict.code in (0, 1, 2):
        try:
            report = json.loads(out) if out.strip() else {"findings": []}
        except ValueError:
            report = {"findings": []}
        for finding in report.get("findings", []):
            if finding.get("severity") == "error" and not finding.get("location"):
                found.append(f"{finding.get('rule')}: {finding.get('message')}")
    if verdict.code == 2:
        for line in err.splitlines():
            if line.startswith(("trainc: warning", "trainc: note", "trainc: ")) or not line:
                continue
            if not _located(line, root):
                found.append(line)
    return found


def commands(seed: Seed, root: Path, rng: random.Random) -> list[str]:
    if seed.mode == "project":
        project = str(root / "example" / "trainc.yaml")
        return rng.choice(
            [
                ["render", "--project", project, "-o", "-"],
                ["render", "--project", project, "-o", str(root / "out")],
                ["check", "--project", project, "--format", "json"],
            ]
        )
    return rng.choice(
        [
            ["render", str(root / "in"), "-o", "-"],
            ["render", str(root / "in"), "-o", str(root / "out")],
            ["check", str(root / "in"), "--format", "json"],
        ]
    )


def run_case(
    seeds: list[Seed], seed: int, index: int, limit: float
) -> tuple[Verdict, dict[str, Any]]:
    """Case ``index`` of run ``seed``: generated, written, run and judged."""
    rng = random.Random(seed * 1_000_003 + index)
    chosen = rng.choice(seeds)
    files = mutate(chosen, rng)
    root = Path(tempfile.mkdtemp(prefix="trainc-fuzz-"))
    try:
        base = root if chosen.mode == "project" else root / "in"
        base.mkdir(exist_ok=True)
        if chosen.mode == "project":  # one repository: example/trainc.yaml names ../overlays
            (root / ".git").mkdir()
        write_case(base, files, rng)
        return judged_run(commands(chosen, root, rng), root, chosen.name, files, limit)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def judged_run(
    argv: list[str], root: Path, seed: str, files: dict[str, str | None], limit: float
) -> tuple[Verdict, dict[str, Any]]:
    """``main(argv)`` run on the case written under ``root`` and judged (memory growth,
    errors without a location), with what reproduces it (``$CASE`` for ``root``)."""
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    verdict, out, err = run_main(argv, limit)
    if resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - rss_before > GIB:
        verdict.memory = True
    verdict.unlocated = unlocated_errors(argv, verdict, out, err, root)
    detail = {
        "seed": seed,
        "argv": [a.replace(str(root), "$CASE") for a in argv],
        "code": verdict.code,
        "files": files,
        "stderr": err.replace(str(root), "$CASE")[-4000:],
        "traceback": verdict.traceback,
        "unlocated": [u.replace(str(root), "$CASE") for u in verdict.unlocated],
    }
    return verdict, detail


def limit_memory(extra: int = GIB) -> None:
    """An address-space limit ``extra`` bytes above what the process maps now."""
    with open("/proc/self/status", encoding="utf-8") as status:
        vm = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmSize:"))
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    wanted = vm + extra
    if hard != resource.RLIM_INFINITY:
        wanted = min(wanted, hard)
    resource.setrlimit(resource.RLIMIT_AS, (wanted, hard))


def prepare() -> list[Seed]:
    """The render surface's state (see :mod:`tests.fuzz.surfaces`)."""
    return prepare_worker()


def prepare_worker() -> list[Seed]:
    """Seeds, a warm process (CRDs, schemas, CEL compiled once) and the memory limit."""
    import compiler.cli

    no_freeze: Callable[[], None] = lambda: None  # noqa: E731 - gc.freeze would pin every case's garbage
    compiler.cli.tune_gc = no_freeze
    seeds = load_seeds()
    for argv in (
        ["render", str(REPO / "example"), "-o", "-"],
        ["check", str(REPO / "example"), "--format", "json"],
    ):
        run_main(argv, 120.0)
    gc.collect()
    limit_memory()
    return seeds
