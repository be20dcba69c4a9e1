"""Differential test: overlay patches against the real ``kubectl kustomize``.

Hypothesis generates core Kubernetes objects (Pod, apps/v1 Deployment, batch/v1 Job)
and patches for them: strategic merge patches (containers, env, ports, volumes and
volume mounts merged by key, ``null`` deletions, ``$patch: delete`` list items,
``$patch: replace`` maps, tolerations replaced whole) and RFC 6902 patches (add,
replace, remove on paths that exist). Each case is written as a kustomization with
one resource and one ``patches:`` entry with a ``target``, built with ``kubectl
kustomize`` (or ``kustomize build``, see ``scripts/install-kubectl.sh``), and compared
with :func:`compiler.overlay.overlays.apply_output_overlays`.

Schemas: Pod and Job come from the Trainer OpenAPI document; Deployment from the
Kubernetes apps/v1 OpenAPI document that k8s.io/client-go (same version as the pinned
k8s.io/api) ships as test data, located in the Go module cache with ``go mod download``.

Every difference must be explained. What remains after equality: RFC 6902 cases both
reject; kustomize's JSON patch lets ``replace`` add a missing member (RFC 6902 and trainc
refuse it, ``_replaces_a_missing_member``); a ``test`` of the whole annotations map fails
in kustomize, whose in-memory object carries internal annotations
(``_tests_whole_annotations``); and three kyaml divergences from apimachinery's strategic
merge (``KNOWN``: ``null`` for an absent string-map key written as ``"null"``; merged
list-map items ordered differently; a ``$patch: replace`` map kept where the object had
none), alone or together. trainc follows apimachinery (proven in test_smp_differential.py),
not kyaml. Generated objects are copied before trainc patches them: Hypothesis may draw
one dict for two places, which no decoded YAML has. Survey: 300 strategic merge and 300
RFC 6902 cases (``KUSTOMIZE_DIFF_SCALE=12``), then 500 + 500 (scale 20): none unexplained.

Set ``KUSTOMIZE_DIFF_SCALE`` to multiply the number of examples.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from compiler.apiserver.manifest import SourceMap
from compiler.errors import SetupError, SourceLocation
from compiler.overlay.locks import schema_for
from compiler.overlay.overlays import Overlay, Patch, apply_output_overlays
from compiler.overlay.targets import Target
from compiler.upstream.artifacts import cache_root
from compiler.upstream.openapi import SchemaNode, load_document, schema

REPO = Path(__file__).resolve().parents[2]
SCALE = max(1, int(os.environ.get("KUSTOMIZE_DIFF_SCALE", "1")))
COMPARED: Counter[str] = Counter()
DIFFERENCES: list[str] = []
APPS_V1_TESTDATA = "openapi/openapitest/testdata/apis__apps__v1_openapi.json"


def _kustomize_command() -> list[str] | None:
    kubectl = shutil.which("kubectl")
    if kubectl is not None:
        return [kubectl, "kustomize"]
    standalone = cache_root() / "bin" / "kustomize"
    if standalone.is_file():
        return [str(standalone), "build"]
    return None


@pytest.fixture(scope="module")
def kustomize() -> Iterator[list[str]]:
    command = _kustomize_command()
    if command is None:
        pytest.fail(
            "neither kubectl nor kustomize is installed (`make setup` installs it; `make test` runs setup first)",
            pytrace=False,
        )
    try:
        schema("io.k8s.api.core.v1.Pod")
    except SetupError as error:
        pytest.fail(
            f"upstream artifacts missing: `make setup` fetches them ({error})", pytrace=False
        )
    yield command
    print(f"\nkustomize comparisons: {dict(sorted(COMPARED.items()))}")


@cache
def _deployment_schema() -> SchemaNode | None:
    """apps/v1 Deployment from client-go's copy of the Kubernetes OpenAPI document."""
    go = shutil.which("go")
    if go is None:
        return None
    manifest = json.loads(
        (cache_root() / "upstream" / "v2.3.0" / "manifest.json").read_text(encoding="utf-8")
    )
    version = manifest["modules"]["k8s.io/api"]
    found = subprocess.run(
        [go, "mod", "download", "-json", f"k8s.io/client-go@{version}"],
        cwd=REPO / "upstream",
        capture_output=True,
        text=True,
        check=False,
    )
    if found.returncode != 0:
        return None
    path = Path(json.loads(found.stdout)["Dir"]) / APPS_V1_TESTDATA
    return load_document(path).node("io.k8s.api.apps.v1.Deployment") if path.is_file() else None


def _schemas(obj: Mapping[str, Any]) -> SchemaNode | None:
    if obj.get("kind") == "Deployment":
        return _deployment_schema()
    return schema_for(obj)


# --------------------------------------------------------------------------- strategies

NAMES = st.sampled_from(["a", "b", "c"])
VALUES = st.sampled_from(["x", "y", "1"])
PATHS = st.sampled_from(["/data", "/cache", "/logs"])


def _env() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {"name": st.sampled_from(["A", "B", "C"])}, optional={"value": VALUES}
    )


def _container(patch: bool) -> st.SearchStrategy[dict[str, Any]]:
    optional: dict[str, Any] = {
        "image": st.sampled_from(["img:1", "img:2"]),
        "env": st.lists(_env(), max_size=3, unique_by=lambda e: e["name"]),
        "ports": st.lists(
            st.fixed_dictionaries(
                {"containerPort": st.sampled_from([80, 443, 8080])},
                optional={"name": st.sampled_from(["http", "m"])},
            ),
            max_size=2,
            unique_by=lambda p: p["containerPort"],
        ),
        "volumeMounts": st.lists(
            st.fixed_dictionaries({"mountPath": PATHS, "name": NAMES}),
            max_size=2,
            unique_by=lambda m: m["mountPath"],
        ),
        "args": st.lists(VALUES, max_size=2),
    }
    if patch:
        optional["image"] = st.one_of(st.none(), optional["image"])
    return st.fixed_dictionaries({"name": NAMES}, optional=optional)


def _pod_spec(patch: bool) -> st.SearchStrategy[dict[str, Any]]:
    containers = st.lists(
        _container(patch), min_size=0 if patch else 1, max_size=3, unique_by=lambda c: c["name"]
    )
    if patch:
        deletion = st.builds(lambda n: {"name": n, "$patch": "delete"}, NAMES)
        containers = st.lists(
            st.one_of(_container(True), deletion), max_size=3, unique_by=lambda c: c["name"]
        )
    optional: dict[str, Any] = {
        "tolerations": st.lists(
            st.fixed_dictionaries({"key": NAMES, "operator": st.just("Exists")}), max_size=2
        ),
        "volumes": st.lists(
            st.fixed_dictionaries({"name": NAMES, "emptyDir": st.just({})}),
            max_size=2,
            unique_by=lambda v: v["name"],
        ),
        "nodeSelector": st.dictionaries(NAMES, VALUES, max_size=2),
        "priorityClassName": VALUES,
        "serviceAccountName": VALUES,
    }
    if patch:
        optional["nodeSelector"] = st.one_of(
            st.dictionaries(NAMES, st.one_of(st.none(), VALUES), max_size=2),
            st.dictionaries(NAMES, VALUES, min_size=1, max_size=2).map(
                lambda d: {**d, "$patch": "replace"}
            ),
        )
        optional["serviceAccountName"] = st.one_of(st.none(), VALUES)
    return st.fixed_dictionaries({"containers": containers}, optional=optional)


def _metadata(patch: bool) -> st.SearchStrategy[dict[str, Any]]:
    labels = st.dictionaries(NAMES, st.one_of(st.none(), VALUES) if patch else VALUES, max_size=2)
    return st.fixed_dictionaries(
        {}, optional={"labels": labels, "annotations": st.dictionaries(NAMES, VALUES, max_size=1)}
    )


def _wrap(
    kind: str, pod_spec: dict[str, Any], metadata: dict[str, Any], extra: dict[str, Any]
) -> dict[str, Any]:
    template = {"metadata": metadata, "spec": pod_spec}
    if kind == "Pod":
        return {"metadata": metadata, "spec": pod_spec}
    if kind == "Job":
        return {"metadata": metadata, "spec": {**extra, "template": template}}
    return {"metadata": metadata, "spec": {**extra, "template": template}}


API_VERSIONS = {"Pod": "v1", "Job": "batch/v1", "Deployment": "apps/v1"}


@st.composite
def smp_cases(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    kind = draw(st.sampled_from(sorted(API_VERSIONS)))
    extras: dict[str, dict[str, Any]] = {
        "Job": {"backoffLimit": draw(st.sampled_from([1, 2]))},
        "Deployment": {"replicas": 1, "selector": {"matchLabels": {"app": "x"}}},
    }
    extra = extras.get(kind, {})
    body = _wrap(kind, draw(_pod_spec(False)), draw(_metadata(False)), extra)
    obj = {
        "apiVersion": API_VERSIONS[kind],
        "kind": kind,
        "metadata": {"name": "obj", **body.pop("metadata")},
        **body,
    }
    obj_meta = obj["metadata"]
    if kind != "Pod":
        obj["spec"]["template"]["metadata"] = draw(_metadata(False))
    del obj_meta  # the object's own metadata stays as drawn
    patch_body = _wrap(kind, draw(_pod_spec(True)), draw(_metadata(True)), {})
    patch = {
        "apiVersion": API_VERSIONS[kind],
        "kind": kind,
        "metadata": {"name": "obj", **patch_body.pop("metadata")},
        **patch_body,
    }
    return obj, patch


def _pointers(value: Any, prefix: str = "") -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    if isinstance(value, dict):
        for key, item in value.items():
            pointer = f"{prefix}/{key.replace('~', '~0').replace('/', '~1')}"
            out.append((pointer, item))
            out.extend(_pointers(item, pointer))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            pointer = f"{prefix}/{index}"
            out.append((pointer, item))
            out.extend(_pointers(item, pointer))
    return out


@st.composite
def json6902_cases(draw: st.DrawFn) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Operations that keep each value's type (kustomize's own transformers reject
    objects whose fields have the wrong JSON type; trainc leaves that to validation)."""
    obj, _ = draw(smp_cases())
    existing = [
        (p, v)
        for p, v in _pointers(obj)
        if p != "/metadata" and not p.startswith(("/apiVersion", "/kind", "/metadata/name"))
    ]
    ops: list[dict[str, Any]] = []
    for _ in range(draw(st.integers(1, 3))):
        pointer, value = draw(st.sampled_from(existing))
        choice = draw(st.sampled_from(["set", "remove", "test", "add-key", "append"]))
        if isinstance(value, str):
            new: Any = draw(VALUES)
        elif isinstance(value, bool) or not isinstance(value, (int, dict, list)):
            new = value
        elif isinstance(value, int):
            new = draw(st.sampled_from([1, 2, 3]))
        elif isinstance(value, dict):
            new = value
        else:
            new = value
        if choice == "remove":
            ops.append({"op": "remove", "path": pointer})
        elif choice == "test":
            ops.append(
                {"op": "test", "path": pointer, "value": draw(st.sampled_from([value, new]))}
            )
        elif choice == "add-key" and isinstance(value, dict):
            ops.append({"op": "add", "path": f"{pointer}/zz", "value": draw(VALUES)})
        elif choice == "append" and isinstance(value, list) and value:
            ops.append({"op": "add", "path": f"{pointer}/-", "value": value[0]})
        else:
            ops.append(
                {"op": draw(st.sampled_from(["add", "replace"])), "path": pointer, "value": new}
            )
    # later operations may name paths an earlier one removed: then both sides must fail
    return obj, ops


# --------------------------------------------------------------------------- running

BATCH = 25  # cases per kustomize run (one resource and one targeted patch each)


def _named(obj: dict[str, Any], index: int) -> dict[str, Any]:
    return {**obj, "metadata": {**obj["metadata"], "name": f"obj-{index}"}}


def _run_kustomize(
    command: list[str], cases: list[tuple[dict[str, Any], Any]]
) -> tuple[list[Any] | None, str | None]:
    """Build one kustomization holding every case; the objects by index, or the error."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        resources, patches = [], []
        for index, (obj, patch) in enumerate(cases):
            name = f"obj-{index}.yaml"
            (root / name).write_text(json.dumps(_named(obj, index)), encoding="utf-8")
            resources.append(name)
            if isinstance(patch, dict):
                patch = {**patch, "metadata": {**patch["metadata"], "name": f"obj-{index}"}}
            patches.append(
                {
                    "target": {"kind": obj["kind"], "name": f"obj-{index}"},
                    "patch": json.dumps(patch),
                }
            )
        kustomization = {
            "apiVersion": "kustomize.config.k8s.io/v1beta1",
            "kind": "Kustomization",
            "resources": resources,
            "patches": patches,
        }
        (root / "kustomization.yaml").write_text(json.dumps(kustomization), encoding="utf-8")
        done = subprocess.run([*command, str(root)], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            return None, done.stderr.strip()
        by_name = {d["metadata"]["name"]: d for d in yaml.safe_load_all(done.stdout) if d}
        out = []
        for index, (obj, _) in enumerate(cases):
            built = by_name[f"obj-{index}"]
            built["metadata"]["name"] = obj["metadata"]["name"]
            out.append(built)
        return out, None


def _mine(obj: dict[str, Any], patch: Any) -> tuple[Any, str | None]:
    # Hypothesis may draw one dict for two places (two equal emptyDirs): copies, as a
    # YAML or JSON decode gives, so that a patch of one place does not change the other
    obj, patch = json.loads(json.dumps(obj)), json.loads(json.dumps(patch))
    body = patch
    if isinstance(patch, dict):
        body = {k: v for k, v in patch.items() if k not in ("apiVersion", "kind")}
        body["metadata"] = {k: v for k, v in patch["metadata"].items() if k != "name"}
        if not body["metadata"]:
            del body["metadata"]
    location = SourceLocation("<generated>", 1, 1)
    entry = Patch(
        Target(kind=obj["kind"], name=obj["metadata"]["name"]),
        "strategic" if isinstance(patch, dict) else "json6902",
        body,
        "output",
        location,
        SourceMap("<generated>"),
    )
    overlay = Overlay("generated", "cluster", (entry,), (), location)
    out, errors, _ = apply_output_overlays([obj], [overlay], True, schemas=_schemas)
    if errors:
        return None, "; ".join(e.message for e in errors)
    return out[0], None


def _drop_empty(value: Any) -> Any:
    """kustomize (kyaml) drops empty maps and lists a patch leaves behind; compare modulo that."""
    if isinstance(value, dict):
        out = {k: _drop_empty(v) for k, v in value.items()}
        return {k: v for k, v in out.items() if v not in ({}, [], None)}
    if isinstance(value, list):
        return [_drop_empty(v) for v in value]
    return value


def _null_strings(theirs: Any, patch: Any) -> Any:
    """Known kyaml divergence: a ``null`` in a patch for a string-map key the object does
    not have (labels, annotations, nodeSelector) comes out as the string ``"null"``;
    apimachinery (and trainc) leave the key absent."""
    if isinstance(theirs, dict) and isinstance(patch, dict):
        return {
            k: _null_strings(v, patch.get(k))
            for k, v in theirs.items()
            if not (v == "null" and k in patch and patch[k] is None)
        }
    if isinstance(theirs, list) and isinstance(patch, list):
        return [
            _null_strings(v, patch[i] if i < len(patch) else None) for i, v in enumerate(theirs)
        ]
    return theirs


def _sorted_lists(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _sorted_lists(v) for k, v in value.items()}
    if isinstance(value, list):
        items = [_sorted_lists(v) for v in value]
        if all(isinstance(v, dict) for v in items):
            return sorted(items, key=lambda v: json.dumps(v, sort_keys=True))
        return items
    return value


def _replaced_absent_maps(theirs: Any, patch: Any) -> Any:
    """Where the object lacks a map and the patch gives it with ``$patch: replace``,
    kyaml keeps the patch's map; apimachinery (trainc) drops it."""
    if isinstance(theirs, dict) and isinstance(patch, dict):
        return {
            k: _replaced_absent_maps(v, patch.get(k))
            for k, v in theirs.items()
            if not (isinstance(patch.get(k), dict) and patch[k].get("$patch") == "replace")
        }
    return theirs


def _replaces_a_missing_member(patch: Any, my_error: str) -> bool:
    """kustomize's JSON patch lets ``replace`` add a member the object lacks; RFC 6902
    (section 4.3: the target location MUST exist) and trainc refuse it."""
    return "can't replace a non-existent object" in my_error and any(
        isinstance(op, dict) and op.get("op") == "replace"
        for op in (patch if isinstance(patch, list) else ())
    )


def _tests_whole_annotations(patch: Any, their_error: str) -> bool:
    """kustomize keeps internal ``config.kubernetes.io/...`` annotations on an object while
    it patches it, so an RFC 6902 ``test`` of the whole annotations map (or of a parent of
    it) fails there even when the object's annotations are the value tested; RFC 6902
    (and trainc) compare the object as written. A ``test`` of one annotation passes in
    both (checked by hand with kubectl kustomize)."""
    covering = ("", "/metadata", "/metadata/annotations")
    return "testing value" in their_error and any(
        isinstance(op, dict) and op.get("op") == "test" and op.get("path") in covering
        for op in (patch if isinstance(patch, list) else ())
    )


# Known divergences of kustomize's kyaml merge from apimachinery's StrategicMergePatch
# (which trainc reproduces, see test_smp_differential.py). Each normalises kustomize's
# output; trainc's output is compared untouched (modulo kyaml dropping empty maps/lists).
# A name with "order" in it compares both sides with list-map items sorted.
KNOWN: list[tuple[str, Callable[[Any, Any], Any]]] = [
    ("null-string-map-value", _null_strings),
    ("list-map-item-order", lambda theirs, patch: _sorted_lists(theirs)),
    ("replace-directive-on-absent-map", _replaced_absent_maps),
    (
        "null-string-map-value+order",
        lambda theirs, patch: _sorted_lists(_null_strings(theirs, patch)),
    ),
    (
        "all-three+order",
        lambda theirs, patch: _sorted_lists(
            _replaced_absent_maps(_null_strings(theirs, patch), patch)
        ),
    ),
]


def _check(
    label: str, obj: dict[str, Any], patch: Any, theirs: Any, their_error: str | None
) -> None:
    mine, my_error = _mine(obj, patch)
    if their_error is not None or my_error is not None:
        if (their_error is None) == (my_error is None):
            COMPARED[f"{label}/error"] += 1
        elif my_error is None and _tests_whole_annotations(patch, their_error):
            COMPARED[f"{label}/known-divergence:internal-annotations"] += 1
        elif their_error is None and _replaces_a_missing_member(patch, my_error):
            COMPARED[f"{label}/known-divergence:replace-missing-member"] += 1
        else:
            COMPARED[f"{label}/DIFFERENT-error"] += 1
            DIFFERENCES.append(
                f"object {obj}\npatch {patch}\nkustomize {their_error or theirs}\ntrainc {my_error or mine}"
            )
        return
    mine = _drop_empty(json.loads(json.dumps(mine)))
    if mine == _drop_empty(theirs):
        COMPARED[label] += 1
        return
    for name, normalise in KNOWN:
        ordered = _sorted_lists(mine) if "order" in name else mine
        # empties dropped first: sorting would otherwise order by what is then dropped
        if ordered == _drop_empty(normalise(_drop_empty(theirs), patch)):
            COMPARED[f"{label}/known-divergence:{name}"] += 1
            return
    COMPARED[f"{label}/DIFFERENT"] += 1
    DIFFERENCES.append(
        f"object {obj}\npatch {patch}\nkustomize {_drop_empty(theirs)}\ntrainc    {mine}"
    )


def _compare(command: list[str], cases: list[tuple[dict[str, Any], Any]], label: str) -> None:
    DIFFERENCES.clear()
    _compare_all(command, cases, label)
    if not DIFFERENCES:
        return
    report = f"{len(DIFFERENCES)} of {len(cases)} differ, unexplained; first:\n" + "\n\n".join(
        DIFFERENCES[:3]
    )
    pytest.fail(report)


def _compare_all(command: list[str], cases: list[tuple[dict[str, Any], Any]], label: str) -> None:
    if any(o["kind"] == "Deployment" for o, _ in cases) and _deployment_schema() is None:
        pytest.fail(
            "apps/v1 OpenAPI document not found: `go mod download` of k8s.io/client-go failed",
            pytrace=False,
        )
    built, _ = _run_kustomize(command, cases)
    if built is not None:
        for (obj, patch), theirs in zip(cases, built, strict=True):
            _check(f"{label}/{obj['kind']}", obj, patch, theirs, None)
        return
    # one case broke the build: run them one by one to find which (and compare the rest)
    for obj, patch in cases:
        built_one, one_error = _run_kustomize(command, [(obj, patch)])
        _check(f"{label}/{obj['kind']}", obj, patch, built_one[0] if built_one else None, one_error)


DIFF_SETTINGS = settings(
    max_examples=8 * SCALE,
    deadline=None,
    phases=[Phase.explicit, Phase.generate],  # shrinking a batch through kustomize is too slow
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.function_scoped_fixture,
        HealthCheck.data_too_large,
    ],
)


@DIFF_SETTINGS
@given(cases=st.lists(smp_cases(), min_size=BATCH, max_size=BATCH))
def test_strategic_merge_matches_kustomize(
    kustomize: list[str], cases: list[tuple[dict[str, Any], dict[str, Any]]]
) -> None:
    _compare(kustomize, cases, "smp")


@DIFF_SETTINGS
@given(cases=st.lists(json6902_cases(), min_size=BATCH, max_size=BATCH))
def test_json6902_matches_kustomize(
    kustomize: list[str], cases: list[tuple[dict[str, Any], list[dict[str, Any]]]]
) -> None:
    _compare(kustomize, cases, "json6902")
