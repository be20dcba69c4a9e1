"""Overlays: loading, layer order, input/output patches, positions, locks, bad input."""

from __future__ import annotations

from pathlib import Path
from textwrap import dedent

import pytest

from compiler.apiserver.manifest import Manifest
from compiler.errors import InputError
from compiler.load.loader import load_texts
from compiler.overlay.overlays import (
    PatchedSourceMap,
    apply_input_overlays,
    apply_output_overlays,
    check_locks,
    load_overlays,
)

REPO = Path(__file__).resolve().parents[2]

TRAINJOB = dedent(
    """\
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: llm
      namespace: team-a
      labels:
        team: a
    spec:
      runtimeRef:
        name: torch
      trainer:
        numNodes: 2
        image: docker.io/me/train:1
    """
)

PATCHED_TRAINJOB = TRAINJOB + (
    """\
  runtimePatches:
    - manager: example.com/tenant
      trainingRuntimeSpec:
        template:
          spec:
            replicatedJobs:
              - name: node
                template:
                  spec:
                    template:
                      spec:
                        serviceAccountName: root
                        tolerations:
                          - key: spot
                            operator: Exists
"""
)


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(dedent(text))
    return path


def manifests(text: str, file: str = "job.yaml") -> list[Manifest]:
    return load_texts([(file, text)]).objects


def overlay(tmp_path: Path, body: str, name: str = "o.yaml") -> Path:
    head = "apiVersion: trainc.dev/v1alpha1\nkind: Overlay\n"
    return write(tmp_path, name, head + dedent(body))


def test_input_patch_sets_label_and_positions_point_at_both_files(tmp_path: Path) -> None:
    path = overlay(
        tmp_path,
        """\
        metadata: {name: prod}
        layer: cluster
        patches:
          - target: {kind: TrainJob, labelSelector: "team in (a, b)"}
            patch:
              metadata:
                labels:
                  kueue.x-k8s.io/queue-name: prod
        """,
    )
    out, errors, warnings = apply_input_overlays(manifests(TRAINJOB), load_overlays([path]), False)
    assert errors == [] and warnings == []
    [job] = out
    assert job.data["metadata"]["labels"] == {"team": "a", "kueue.x-k8s.io/queue-name": "prod"}
    assert isinstance(job.source, PatchedSourceMap)
    assert str(job.locate(("metadata", "labels", "kueue.x-k8s.io/queue-name"))) == f"{path}:10:11"
    assert str(job.locate(("spec", "trainer", "numNodes"))) == "job.yaml:12:5"
    assert str(job.locate(("metadata", "labels", "team"))) == "job.yaml:7:5"


def test_a_patched_object_reads_its_original_positions_only_when_located(
    tmp_path: Path,
) -> None:
    # reading them parses the TrainJob's file again: at 10,000 patched TrainJobs that was
    # most of the overlay step, for positions nothing asked for
    body = """\
        metadata: {name: prod}
        patches:
          - target: {kind: TrainJob}
            patch: {metadata: {labels: {queue: prod}}}
          - target: {kind: TrainJob}
            patch: {spec: {trainer: {numNodes: 4}}}
        """
    [original] = manifests(TRAINJOB)
    assert original.source._positions is None  # the loader defers them
    [job], errors, _ = apply_input_overlays(
        [original], load_overlays([overlay(tmp_path, body)]), False
    )
    assert errors == [] and job.data["spec"]["trainer"]["numNodes"] == 4
    assert original.source._positions is None
    assert str(job.locate(("spec", "trainer", "numNodes"))).endswith("o.yaml:8:30")
    assert str(job.locate(("metadata", "labels", "queue"))).endswith("o.yaml:6:33")
    assert str(job.locate(("metadata", "labels", "team"))) == "job.yaml:7:5"
    assert str(job.locate(("spec", "runtimeRef", "name"))) == "job.yaml:10:5"
    assert original.source._positions is not None


def test_layers_apply_base_cluster_namespace_whatever_the_file_order(tmp_path: Path) -> None:
    def layer(name: str, layer: str, value: int, namespace: str = "") -> Path:
        meta = f"{{name: {name}{', namespace: ' + namespace if namespace else ''}}}"
        return overlay(
            tmp_path,
            f"""\
            metadata: {meta}
            layer: {layer}
            patches:
              - target: {{kind: TrainJob}}
                patch: {{spec: {{trainer: {{numNodes: {value}}}}}}}
            """,
            f"{name}.yaml",
        )

    paths = [
        layer("ns", "namespace", 3, "team-a"),
        layer("cl", "cluster", 2),
        layer("b", "base", 1),
    ]
    out, errors, _ = apply_input_overlays(manifests(TRAINJOB), load_overlays(paths), False)
    assert errors == []
    assert out[0].data["spec"]["trainer"]["numNodes"] == 3
    # a namespace overlay leaves other namespaces alone
    other = manifests(TRAINJOB.replace("team-a", "team-b"))
    out, _, warnings = apply_input_overlays(other, load_overlays(paths), False)
    assert out[0].data["spec"]["trainer"]["numNodes"] == 2
    assert [w.location.line if w.location else 0 for w in warnings] == [6]


def test_json6902_and_string_patches_on_outputs(tmp_path: Path) -> None:
    path = overlay(
        tmp_path,
        """\
        metadata: {name: out}
        patches:
          - target: {kind: JobSet, name: "llm-.*"}
            patch: |
              - op: add
                path: /spec/ttlSecondsAfterFinished
                value: 60
          - target: {group: scheduling.x-k8s.io, kind: PodGroup}
            patch:
              spec: {scheduleTimeoutSeconds: 30}
        """,
    )
    objects = [
        {
            "apiVersion": "jobset.x-k8s.io/v1alpha2",
            "kind": "JobSet",
            "metadata": {"name": "llm-1"},
            "spec": {},
        },
        {
            "apiVersion": "jobset.x-k8s.io/v1alpha2",
            "kind": "JobSet",
            "metadata": {"name": "other"},
            "spec": {},
        },
        {
            "apiVersion": "scheduling.x-k8s.io/v1alpha1",
            "kind": "PodGroup",
            "metadata": {"name": "llm-1"},
            "spec": {"minMember": 2, "scheduleTimeoutSeconds": 120},
        },
    ]
    out, errors, warnings = apply_output_overlays(objects, load_overlays([path]), True)
    assert errors == [] and warnings == []
    assert out[0]["spec"] == {"ttlSecondsAfterFinished": 60}
    assert out[1]["spec"] == {}
    assert out[2]["spec"] == {"minMember": 2, "scheduleTimeoutSeconds": 30}
    assert objects[0]["spec"] == {}  # inputs are not mutated


def test_unmatched_target_is_a_warning_or_strict_error(tmp_path: Path) -> None:
    path = overlay(
        tmp_path,
        """\
        metadata: {name: o}
        patches:
          - target: {kind: TrainJob, name: nothing}
            patch: {spec: {suspend: true}}
        """,
    )
    _, errors, warnings = apply_input_overlays(manifests(TRAINJOB), load_overlays([path]), False)
    assert errors == []
    assert [str(w) for w in warnings] == [
        f"{path}:5:5: patch target {{kind=TrainJob, name=nothing}} of overlay o matches no input object"
    ]
    _, errors, warnings = apply_input_overlays(manifests(TRAINJOB), load_overlays([path]), True)
    assert len(errors) == 1 and warnings == []


def test_malformed_json_patch_path_is_an_input_error_at_its_line(tmp_path: Path) -> None:
    path = overlay(
        tmp_path,
        """\
        metadata: {name: o}
        patches:
          - target: {kind: JobSet}
            patch:
              - op: add
                path: spec/ttl
                value: 1
              - op: frobnicate
                path: /x
        """,
    )
    with pytest.raises(InputError) as caught:
        load_overlays([path])
    messages = [str(p) for p in caught.value.problems]
    assert (
        messages[0].startswith(f"{path}:8:9: ")
        and "malformed JSON patch path 'spec/ttl'" in messages[0]
    )
    assert (
        messages[1].startswith(f"{path}:10:9: ")
        and "unknown JSON patch op 'frobnicate'" in messages[1]
    )


def test_json_patch_that_cannot_apply_names_the_operation(tmp_path: Path) -> None:
    path = overlay(
        tmp_path,
        """\
        metadata: {name: o}
        patches:
          - target: {kind: TrainJob}
            patch:
              - {op: replace, path: /spec/trainer/numNodes, value: 4}
              - {op: remove, path: /spec/nothing}
        """,
    )
    _, errors, _ = apply_input_overlays(manifests(TRAINJOB), load_overlays([path]), False)
    [error] = errors
    assert str(error.location) == f"{path}:8:22"
    assert "remove '/spec/nothing'" in error.message and "TrainJob team-a/llm" in error.message


@pytest.mark.parametrize(
    ("body", "line", "text"),
    [
        ("metadata: {name: o}\nlayer: tenant\n", 4, "layer must be one of"),
        ("metadata: {name: o}\nlayer: namespace\n", 4, "needs metadata.namespace"),
        (
            "metadata: {name: o}\npatches:\n  - target: {labelSelector: 'a in b'}\n    patch: {}\n",
            5,
            "invalid labelSelector",
        ),
        (
            "metadata: {name: o}\npatches:\n  - target: {name: '('}\n    patch: {}\n",
            5,
            "invalid regular expression",
        ),
        ("metadata: {name: o}\npatches:\n  - target: {}\n", 5, "exactly one of patch"),
        ("metadata: {name: o}\nlocks:\n  - path: spec..x\n", 5, "invalid field path"),
        (
            "metadata: {name: o}\npatches:\n  - target: {}\n    path: missing.yaml\n",
            0,
            "cannot read",
        ),
    ],
)
def test_bad_overlays(tmp_path: Path, body: str, line: int, text: str) -> None:
    path = overlay(tmp_path, body)
    with pytest.raises(InputError) as caught:
        load_overlays([path])
    [problem] = caught.value.problems
    assert text in problem.message
    assert problem.location is not None and problem.location.line == line


LOCKS = """\
    metadata: {name: platform}
    layer: cluster
    patches:
      - target: {kind: TrainJob}
        patch:
          metadata:
            labels:
              kueue.x-k8s.io/queue-name: prod
    locks:
      - path: metadata.labels[kueue.x-k8s.io/queue-name]
      - {path: spec.serviceAccountName, scope: pod, value: trainer}
      - {path: spec.tolerations, scope: pod}
      - {path: spec.trainer.image, prefix: registry.example.com/}
    """


def test_trainjob_escaping_locks_is_an_error_naming_both_sources(tmp_path: Path) -> None:
    path = overlay(tmp_path, LOCKS)
    job = PATCHED_TRAINJOB.replace("team: a", "team: a\n    kueue.x-k8s.io/queue-name: free")
    _, errors, _ = apply_input_overlays(manifests(job), load_overlays([path]), False)
    got = sorted(str(e) for e in errors)
    rp = "spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[0].template.spec.template.spec"
    assert got == sorted(
        [
            f'job.yaml:8:5: TrainJob team-a/llm: metadata.labels.kueue.x-k8s.io/queue-name: the TrainJob sets "free", but the field is locked to "prod" by overlay platform ({path}:12:5)',
            f"job.yaml:14:5: TrainJob team-a/llm: spec.trainer.image: the TrainJob sets \"docker.io/me/train:1\", but the field is locked to values starting with 'registry.example.com/' by overlay platform ({path}:15:5)",
            f'job.yaml:26:25: TrainJob team-a/llm: {rp}.serviceAccountName: a runtimePatch of the TrainJob sets "root", but the field is locked to "trainer" by overlay platform ({path}:13:5)',
            f'job.yaml:27:25: TrainJob team-a/llm: {rp}.tolerations: a runtimePatch of the TrainJob sets [{{"key": "spot", "operator": "Exists"}}], but the field is locked (may not be set) by overlay platform ({path}:14:5)',
        ]
    )
    assert sorted(str(e) for e in check_locks(manifests(job), load_overlays([path]))) == got


def test_trainjob_that_agrees_with_the_locks_passes(tmp_path: Path) -> None:
    path = overlay(tmp_path, LOCKS)
    job = TRAINJOB.replace("docker.io/me", "registry.example.com/me").replace(
        "team: a", "team: a\n    kueue.x-k8s.io/queue-name: prod"
    )
    out, errors, _ = apply_input_overlays(manifests(job), load_overlays([path]), False)
    assert errors == []
    assert out[0].data["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "prod"


def test_later_overlay_cannot_change_a_locked_field(tmp_path: Path) -> None:
    platform = overlay(tmp_path, LOCKS, "platform.yaml")
    tenant = overlay(
        tmp_path,
        """\
        metadata: {name: tenant, namespace: team-a}
        layer: namespace
        patches:
          - target: {kind: TrainJob}
            patch:
              metadata:
                labels:
                  kueue.x-k8s.io/queue-name: free
                  team: b
        """,
        "tenant.yaml",
    )
    # the tenant file comes first: the layer order still puts it last
    out, errors, _ = apply_input_overlays(
        manifests(TRAINJOB.replace("docker.io/me", "registry.example.com/me")),
        load_overlays([tenant, platform]),
        False,
    )
    [error] = errors
    assert str(error.location) == f"{tenant}:10:11"
    assert f'overlay tenant (layer namespace) patch at {tenant}:6:5 sets "free"' in error.message
    assert f'locked to "prod" by overlay platform ({platform}:12:5)' in error.message
    # the rejected patch is not applied
    assert out[0].data["metadata"]["labels"] == {"team": "a", "kueue.x-k8s.io/queue-name": "prod"}


def test_output_lock_on_pod_field(tmp_path: Path) -> None:
    path = overlay(
        tmp_path,
        """\
        metadata: {name: base}
        layer: base
        locks:
          - {path: spec.priorityClassName, scope: pod}
        ---
        apiVersion: trainc.dev/v1alpha1
        kind: Overlay
        metadata: {name: later}
        patches:
          - target: {kind: JobSet}
            patch:
              - {op: replace, path: /spec/replicatedJobs/0/template/spec/template/spec/priorityClassName, value: low}
        """,
    )
    jobset = {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": "x"},
        "spec": {
            "replicatedJobs": [
                {
                    "name": "node",
                    "template": {
                        "spec": {
                            "template": {"spec": {"priorityClassName": "high", "containers": []}}
                        }
                    },
                }
            ]
        },
    }
    _, errors, _ = apply_output_overlays([jobset], load_overlays([path]), False)
    [error] = errors
    assert error.location is not None and error.location.line == 14
    assert 'sets "low", but the field is locked to "high"' in error.message


def test_example_overlays_load_and_apply() -> None:
    overlays = load_overlays(
        [REPO / "overlays/production/platform.yaml", REPO / "overlays/staging/platform.yaml"]
    )
    assert [o.name for o in overlays] == ["production-platform", "staging-platform", "vision-team"]
    job = TRAINJOB.replace("docker.io/me", "registry.prod.example.com/me")
    out, errors, _ = apply_input_overlays(manifests(job), overlays[:1], False)
    assert errors == []
    assert out[0].data["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "production"


SECRET = "s3cr3t-token-value"
PATCH_FILE = """\
metadata: {{name: escape}}
layer: cluster
patches:
  - target: {{kind: TrainJob}}
    path: {path}
"""


@pytest.mark.parametrize("how", ["relative", "absolute", "link", "linked folder"])
def test_patch_file_outside_the_repository_is_an_error_at_its_path(
    tmp_path: Path, how: str
) -> None:
    repo, outside = tmp_path / "repo", tmp_path / "outside"
    (repo / ".git").mkdir(parents=True)
    (repo / "overlays").mkdir()
    outside.mkdir()
    (outside / "patch.yaml").write_text(f"metadata: {{labels: {{x: {SECRET}}}}}\n")
    path = {
        "relative": "../../outside/patch.yaml",
        "absolute": str(outside / "patch.yaml"),
        "link": "patch.yaml",
        "linked folder": "ext/patch.yaml",
    }[how]
    if how == "link":
        (repo / "overlays" / "patch.yaml").symlink_to(outside / "patch.yaml")
    if how == "linked folder":
        (repo / "overlays" / "ext").symlink_to("../../outside")
    file = overlay(repo / "overlays", PATCH_FILE.format(path=path))
    with pytest.raises(InputError) as caught:  # the overlay file's repository
        load_overlays([file])
    message = str(caught.value)
    assert message.startswith(f"{file}:7:5: patches[0].path: {path!r} ")
    assert f"outside the repository {repo}" in message
    assert SECRET not in message
    from compiler.load.confine import Root

    with pytest.raises(InputError) as given:  # the project's root, given
        load_overlays([file], Root.at(repo, "the checkout"))
    assert str(given.value) == message.replace("the repository", "the checkout")
    # the same message whether or not the outside file exists
    (outside / "patch.yaml").unlink()
    with pytest.raises(InputError) as again:
        load_overlays([file])
    assert str(again.value) == message


def test_patch_file_elsewhere_in_the_repository_is_read(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "patches").mkdir()
    (tmp_path / "patches" / "p.yaml").write_text("metadata: {labels: {x: z}}\n")
    (tmp_path / "overlays").mkdir()
    (tmp_path / "overlays" / "linked.yaml").symlink_to("../patches/p.yaml")
    for path in ("../patches/p.yaml", "linked.yaml"):
        file = overlay(tmp_path / "overlays", PATCH_FILE.format(path=path))
        [loaded] = load_overlays([file])
        assert loaded.patches[0].body == {"metadata": {"labels": {"x": "z"}}}
