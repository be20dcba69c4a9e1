"""Fixtures that give tests a real control plane (tests/live/controlplane.py).

``control_plane``: etcd + kube-apiserver v1.34.4 with the Trainer, JobSet, coscheduling
and Volcano PodGroup CRDs, started once per session (the binaries are built by
``make control-plane``, which ``make test`` runs first, or on first use); a failure with
the reason when it cannot be built or started.
``trainer_controller``: the same control plane with the Trainer v2.3.0 controller
manager running and its webhooks registered.
``pods_plane``: a control plane of its own with the pod controllers (JobSet's webhooks
and controller, kube-controller-manager) and the Trainer's, shared by the modules that
go down to the Pods.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.live.controlplane import ControlPlane, ControlPlaneUnavailable, build, start


@pytest.fixture(scope="session")
def control_plane() -> Iterator[ControlPlane]:
    try:
        plane = start(build())
    except ControlPlaneUnavailable as error:
        pytest.fail(f"no live control plane (`make test` builds it first): {error}", pytrace=False)
    try:
        yield plane
    finally:
        plane.stop()


@pytest.fixture(scope="session")
def trainer_controller(control_plane: ControlPlane) -> ControlPlane:
    try:
        control_plane.start_trainer()
    except ControlPlaneUnavailable as error:
        pytest.fail(f"the Trainer controller manager does not start: {error}", pytrace=False)
    return control_plane


@pytest.fixture(scope="session")
def pods_plane() -> Iterator[ControlPlane]:
    """A control plane of its own (the session one has no pod controllers, so that other
    tests' JobSets stay as written): Trainer, JobSet and kube-controller-manager."""
    try:
        plane = start(build(), trainer=True, pods=True)
    except ControlPlaneUnavailable as error:
        pytest.fail(f"no live control plane with pod controllers: {error}", pytrace=False)
    try:
        yield plane
    finally:
        plane.stop()
