"""The declaration: which annotations enable what, and the problems at which key."""

from __future__ import annotations

import typing

from compiler.project.model import Extension as ProjectExtension
from compiler.render.extensions import catalog
from compiler.render.extensions.base import DECLARATION, declares_extensions
from compiler.render.extensions.mpi_hydra import HydraMPIExtension

MPI_SPEC = {"mlPolicy": {"mpi": {"mpiImplementation": "OpenMPI"}}}
TORCH_SPEC = {
    "mlPolicy": {"torch": {}},
    "template": {
        "spec": {
            "replicatedJobs": [
                {
                    "name": "node",
                    "template": {
                        "metadata": {
                            "labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}
                        }
                    },
                }
            ]
        }
    },
}


def test_project_file_accepts_exactly_the_catalog() -> None:
    assert typing.get_args(ProjectExtension) == catalog.NAMES


def test_a_runtime_without_extension_annotations_declares_nothing() -> None:
    assert not declares_extensions({"team": "vision", "example.com/x": "1"})
    assert declares_extensions({"elastic-torch.trainc.dev/min-nodes": "1"})
    assert catalog.plugins_for({}, {}, ["intel-mpi"]) == ([], [])


def test_an_enabled_extension_gives_its_plugin() -> None:
    plugins, problems = catalog.plugins_for({DECLARATION: "intel-mpi"}, MPI_SPEC, ["intel-mpi"])
    assert problems == []
    assert [type(p) for p in plugins] == [HydraMPIExtension]
    assert plugins[0].name == "extension intel-mpi"


def test_not_enabled_says_where_to_enable_it() -> None:
    _, in_cluster = catalog.plugins_for({DECLARATION: "mpich"}, MPI_SPEC, [])
    assert in_cluster == [
        (
            DECLARATION,
            "extension mpich is not enabled: the cluster does not enable it "
            "(add it to the cluster's extensions: in trainc.yaml)",
        )
    ]
    _, with_paths = catalog.plugins_for({DECLARATION: "mpich"}, MPI_SPEC, None)
    assert "with PATHs none is" in with_paths[0][1]


def test_unknown_conflicting_and_twice() -> None:
    enabled = catalog.NAMES
    _, unknown = catalog.plugins_for({DECLARATION: "horovod"}, MPI_SPEC, enabled)
    assert unknown[0][1].startswith("unknown extension 'horovod' (known: intel-mpi, mpich,")
    _, both = catalog.plugins_for({DECLARATION: "mpich,intel-mpi"}, MPI_SPEC, enabled)
    assert both == [(DECLARATION, "extensions intel-mpi and mpich exclude each other")]
    _, twice = catalog.plugins_for({DECLARATION: "mpich, mpich"}, MPI_SPEC, enabled)
    assert twice == [(DECLARATION, "an extension is declared twice")]


def test_parameters_are_checked_at_their_own_key() -> None:
    annotations = {
        DECLARATION: "elastic-torch",
        "elastic-torch.trainc.dev/min-nodes": "0",
        "elastic-torch.trainc.dev/max-nodes": "two",
        "elastic-torch.trainc.dev/rdzv-backend": "zookeeper",
        "elastic-torch.trainc.dev/max-node": "3",
        "yunikorn.trainc.dev/queue": "root.ml",
    }
    _, problems = catalog.plugins_for(annotations, TORCH_SPEC, catalog.NAMES)
    assert dict(problems) == {
        "elastic-torch.trainc.dev/min-nodes": (
            "extension elastic-torch parameter min-nodes: must be at least 1, got 0"
        ),
        "elastic-torch.trainc.dev/max-nodes": (
            "extension elastic-torch parameter max-nodes: 'two' is not an integer"
        ),
        "elastic-torch.trainc.dev/rdzv-backend": (
            "extension elastic-torch parameter rdzv-backend: 'zookeeper' is not one of "
            "c10d, etcd, etcd-v2"
        ),
        "elastic-torch.trainc.dev/max-node": (
            "unknown parameter of extension elastic-torch: 'max-node' (accepted: min-nodes, "
            "max-nodes, max-restarts, rdzv-backend, rdzv-port, rdzv-id, rdzv-conf)"
        ),
        "yunikorn.trainc.dev/queue": (
            "a parameter of extension 'yunikorn', which trainc.dev/extensions does not declare"
        ),
    }


def test_runtime_shape_is_checked() -> None:
    _, problems = catalog.plugins_for({DECLARATION: "intel-mpi"}, {}, ["intel-mpi"])
    assert problems == [
        (DECLARATION, "an MPI implementation extension needs the runtime's mlPolicy.mpi")
    ]
    annotations = {
        DECLARATION: "elastic-torch",
        "elastic-torch.trainc.dev/min-nodes": "4",
        "elastic-torch.trainc.dev/max-nodes": "2",
    }
    _, problems = catalog.plugins_for(annotations, TORCH_SPEC, ["elastic-torch"])
    assert problems == [(DECLARATION, "elastic-torch: min-nodes 4 is above max-nodes 2")]
    _, problems = catalog.plugins_for(
        {DECLARATION: "yunikorn"}, {"podGroupPolicy": {"coscheduling": {}}}, ["yunikorn"]
    )
    assert "replaces podGroupPolicy" in problems[0][1]
