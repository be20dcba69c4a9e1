"""Fuzz surface ``argocd``: ``trainc argocd generate`` as the plugin runs it, with a
hostile Application.

Each case copies the example project (``example/`` and ``overlays/``) into a temporary
checkout, sometimes mutates its files (:func:`tests.fuzz.engine.mutate`) or adds a file
of many small documents that are no objects, then sets the environment the repo server
gives the sidecar (``ARGOCD_APP_*``, ``KUBE_*``) and mutates it: ``PARAM_*`` values,
``ARGOCD_APP_PARAMETERS`` (names, value types, JSON shapes, deep nesting, bad JSON, NUL
escapes), ``ARGOCD_ENV_TRAINC_*``, with huge values, shell metacharacters, control
characters, unknown cluster names and project file paths (in the checkout, outside it,
missing, a folder). It runs ``main(["argocd", "generate"])``
in-process in the source path (or a folder under it), restores the working directory and
environment after, and is judged:

* traceback, hang, memory, exit code as :mod:`tests.fuzz.engine` judges them;
* without location: an error line that names neither a file (of the checkout, or the
  project file a parameter named) nor the variable or parameter it came from; also
  anything that breaks the plugin's contract: a non-empty stdout on failure, or a stderr
  over :data:`MAX_STDERR` bytes (the error output is bounded).

Each case runs pinned to one core: ``generate`` then checks the project whole, in-process
(by chunks it forks workers; ``tests/gitops/test_argocd.py`` checks both give the same).
"""

from __future__ import annotations

import json
import os
import random
import re
import resource
import shutil
import tempfile
from pathlib import Path
from typing import Any

from tests.fuzz.engine import GIB, REPO, Seed, Verdict, limit_memory, mutate, run_main, write_case

MAX_STDERR = 24 * 1024  # one screen: 40 lines of at most 500 characters, and a header

SHELL = ["$(id)", "`id`", "; rm -rf /", "| cat /etc/passwd", "&& true", "$HOME", "*", "'\"", "\\"]
CONTROL = ["\x1b[31mred", "a\nb", "a\rb", "\t", "\u2028", "\x7f", "\x00"]
NAMES = ["production", "staging", "Production", "prod", "", " ", "production ", "..", "-"]


def _huge(rng: random.Random) -> str:
    return rng.choice("xy/.-") * rng.choice((300, 5_000, 200_000, 2_000_000))


def _value(rng: random.Random) -> str:
    """A hostile string for a setting."""
    kind = rng.randrange(6)
    if kind == 0:
        return rng.choice(NAMES)
    if kind == 1:
        return rng.choice(NAMES) + rng.choice(SHELL)
    if kind == 2:
        return rng.choice(NAMES) + rng.choice(CONTROL)
    if kind == 3:
        return _huge(rng)
    if kind == 4:
        return rng.choice(["resolved", "trainjobs", "Resolved", "both", "none"])
    return "".join(chr(rng.randrange(1, 0x3000)) for _ in range(rng.randrange(1, 20)))


def _project_value(rng: random.Random, root: Path) -> str:
    """A project file path, relative to the source path (``example/``) or absolute."""
    return rng.choice(
        [
            "trainc.yaml",
            "./trainc.yaml",
            "jobs/smoke.yaml",
            "missing.yaml",
            "jobs",
            "",
            "../overlays/production/platform.yaml",
            "../outside/trainc.yaml",
            str(root / "outside" / "trainc.yaml"),
            "trainc.yaml" + rng.choice(SHELL),
            "trainc.yaml" + rng.choice(CONTROL[:-1]),
            _huge(rng)[:5000],
        ]
    )


def _nested(rng: random.Random) -> str:
    depth = rng.choice((50, 1_000, 100_000))
    inner = rng.choice(['"x"', "{}", '{"name": "cluster", "string": "production"}'])
    return "[" * depth + inner + "]" * depth


def _parameter(rng: random.Random, root: Path) -> Any:
    """One item of ARGOCD_APP_PARAMETERS, well formed or not."""
    name = rng.choice(["cluster", "delivery", "project", "Cluster", "other", "", 5, None])
    kind = rng.randrange(9)
    if kind == 0:
        value: Any = {"name": name, "map": {"a": _value(rng)}}
    elif kind == 1:
        value = {"name": name, "array": [_value(rng)]}
    elif kind == 2:
        value = {"name": name, "string": rng.choice([5, None, [], {}, True])}
    elif kind == 3:
        value = {"name": name, "string": "production", "extra": 1}
    elif kind == 4:
        value = rng.choice([[], "cluster", 5, None])
    elif kind == 5:
        value = {"name": name, "string": "prod\u0000uction"}
    elif kind == 6:
        value = {"name": "project", "string": _project_value(rng, root)}
    else:
        value = {"name": name, "string": _value(rng)}
    return value


def _parameters(rng: random.Random, root: Path) -> str:
    kind = rng.randrange(8)
    if kind == 0:
        return _nested(rng)
    if kind == 1:
        return rng.choice(["{", "[", "null", '"x"', "{}", "5", "[1,2", "\ufeff[]", "[]"])
    if kind == 2:
        return json.dumps({"name": "cluster", "string": "production"})
    items = [_parameter(rng, root) for _ in range(rng.randrange(1, 4))]
    if rng.random() < 0.5:
        items.insert(0, {"name": "cluster", "string": rng.choice(NAMES[:2])})
    return json.dumps(items, ensure_ascii=rng.random() < 0.5)


def environment(rng: random.Random, root: Path) -> dict[str, str]:
    """The repo server's environment for the sidecar, mutated."""
    env = {
        "ARGOCD_APP_NAME": "vision-training",
        "ARGOCD_APP_NAMESPACE": "vision",
        "ARGOCD_APP_REVISION": "0123456789abcdef0123456789abcdef01234567",
        "ARGOCD_APP_REVISION_SHORT": "0123456",
        "ARGOCD_APP_SOURCE_REPO_URL": "https://git.example.com/ml/jobs.git",
        "ARGOCD_APP_SOURCE_PATH": "example",
        "ARGOCD_APP_SOURCE_TARGET_REVISION": "main",
        "KUBE_VERSION": "1.34.4",
        "KUBE_API_VERSIONS": "v1,apps/v1,batch/v1,jobset.x-k8s.io/v1alpha2",
    }
    how = rng.randrange(4)
    cluster = rng.choice(NAMES[:2])
    if how == 0:
        env["PARAM_CLUSTER"] = cluster
    elif how == 1:
        env["ARGOCD_APP_PARAMETERS"] = json.dumps([{"name": "cluster", "string": cluster}])
    elif how == 2:
        env["ARGOCD_ENV_TRAINC_CLUSTER"] = cluster
    for _ in range(rng.choice((0, 1, 1, 2, 3))):
        key = rng.choice(
            [
                "PARAM_CLUSTER",
                "PARAM_DELIVERY",
                "PARAM_PROJECT",
                "ARGOCD_APP_PARAMETERS",
                "ARGOCD_APP_PARAMETERS",
                "ARGOCD_APP_PARAMETERS",
                "ARGOCD_ENV_TRAINC_CLUSTER",
                "ARGOCD_ENV_TRAINC_DELIVERY",
                "ARGOCD_ENV_TRAINC_PROJECT",
                "ARGOCD_APP_NAME",
                "ARGOCD_APP_SOURCE_PATH",
                "KUBE_VERSION",
            ]
        )
        if key == "ARGOCD_APP_PARAMETERS":
            env[key] = _parameters(rng, root)
        elif key.endswith("PROJECT"):
            env[key] = _project_value(rng, root)
        else:
            env[key] = _value(rng)
    # a real environment holds no NUL (the kernel ends a string there)
    return {k: v.replace("\x00", "") for k, v in env.items()}


SOURCES = re.compile(
    r"ARGOCD_APP_PARAMETERS|PARAM_[A-Z0-9_]+|ARGOCD_ENV_TRAINC_[A-Z]+|--\w+|parameter `\w+`"
)


def _located(line: str, root: Path, env: dict[str, str], cwd: Path) -> bool:
    """Whether an error line names a file of the case, the project file a setting named,
    or the variable or parameter its value came from."""
    if SOURCES.search(line):
        return True
    if line.startswith((str(root), f'"{root}')):
        return True
    named = [v for k, v in env.items() if k.endswith("PROJECT") or k == "ARGOCD_APP_PARAMETERS"]
    head = line.split(":", 1)[0].strip('"')
    if head and any(head in value for value in named):
        return True  # the project file a parameter named, as given
    try:
        return bool(head) and (cwd / head).exists() and (cwd / head).resolve().is_relative_to(root)
    except (OSError, ValueError):  # a name too long for a path
        return False


def unlocated(
    verdict: Verdict, out: str, err: str, root: Path, env: dict[str, str], cwd: Path
) -> list[str]:
    found = []
    if verdict.code not in (None, 0) and out:
        found.append(f"stdout not empty on exit {verdict.code}")
    if len(err.encode("utf-8", "surrogatepass")) > MAX_STDERR:
        found.append(f"stderr of {len(err)} characters (unbounded)")
    if verdict.code in (1, 2):
        lines = err.splitlines()
        problems = [line[2:] for line in lines if line.startswith("  ")]
        if not problems:  # one problem: in the header
            problems = [line.removeprefix("trainc: ") for line in lines[:1]]
        for line in problems:
            if line.startswith("... and "):
                continue
            if not _located(line, root, env, cwd):
                found.append(line[:500])
    return found


def prepare() -> list[Seed]:
    """The example project as a seed, a warm process, the memory limit."""
    import gc
    from collections.abc import Callable

    import compiler.cli

    no_freeze: Callable[[], None] = lambda: None  # noqa: E731 - see engine.prepare_worker
    compiler.cli.tune_gc = no_freeze
    files = {
        str(p.relative_to(REPO)): p.read_text(encoding="utf-8")
        for folder in ("example", "overlays")
        for p in sorted((REPO / folder).rglob("*.yaml"))
    }
    seed = Seed("example-project", files, "project")
    root = Path(tempfile.mkdtemp(prefix="trainc-fuzz-"))
    try:
        write_case(root, dict(files), random.Random(0))
        _run(["argocd", "generate"], root / "example", {"PARAM_CLUSTER": "production"}, 120.0)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    gc.collect()
    limit_memory()
    return [seed]


def _run(argv: list[str], cwd: Path, env: dict[str, str], limit: float) -> tuple[Verdict, str, str]:
    """``main(argv)`` in ``cwd`` with exactly ``env`` (and PATH, HOME, the cache), both
    restored after."""
    saved_cwd, saved_env = os.getcwd(), dict(os.environ)
    keep = {k: saved_env[k] for k in ("PATH", "HOME", "TRAINC_CACHE", "LANG") if k in saved_env}
    cores = os.sched_getaffinity(0)
    try:
        os.environ.clear()
        os.environ.update({**keep, **env})
        os.chdir(cwd)
        os.sched_setaffinity(0, {min(cores)})  # one core: checked whole (the module says why)
        return run_main(argv, limit)
    finally:
        os.sched_setaffinity(0, cores)
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)


def run_case(
    seeds: list[Seed], seed: int, index: int, limit: float
) -> tuple[Verdict, dict[str, Any]]:
    """Case ``index`` of run ``seed``: a checkout and an environment, run and judged."""
    rng = random.Random(seed * 1_000_003 + index + 7)
    project = seeds[0]
    files: dict[str, str | None] = (
        mutate(project, rng) if rng.random() < 0.3 else dict(project.files)
    )
    if rng.random() < 0.03:  # many small documents: the error output must stay one screen
        files["example/jobs/many.yaml"] = "---\na: 1\n" * rng.choice((50, 1500, 20_000))
    root = Path(tempfile.mkdtemp(prefix="trainc-fuzz-"))
    try:
        checkout = root / "checkout"
        checkout.mkdir()
        write_case(checkout, files, rng)
        outside = root / "outside"
        outside.mkdir()
        (outside / "trainc.yaml").write_text("inputs: {jobs: [x.yaml]}\nclusters: [{name: o}]\n")
        env = environment(rng, root)
        cwd = checkout / "example"
        if rng.random() < 0.1:
            cwd = cwd / "jobs"  # the source path below the project file
        rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        verdict, out, err = _run(["argocd", "generate"], cwd, env, limit)
        if resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - rss_before > GIB:
            verdict.memory = True
        verdict.unlocated = unlocated(verdict, out, err, checkout, env, cwd)

        def shown(text: str) -> str:
            return text.replace(str(root), "$CASE")[:2000]

        detail = {
            "seed": project.name,
            "argv": ["argocd", "generate"],
            "cwd": shown(str(cwd)),
            "env": {k: shown(v) for k, v in env.items()},
            "code": verdict.code,
            "files": {k: v for k, v in files.items() if v != project.files.get(k)},
            "stderr": shown(err[-4000:]),
            "traceback": verdict.traceback,
            "unlocated": [shown(u) for u in verdict.unlocated],
        }
        return verdict, detail
    finally:
        shutil.rmtree(root, ignore_errors=True)
