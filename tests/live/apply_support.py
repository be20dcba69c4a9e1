"""What the ``trainc apply`` live tests share: inputs, running trainc, reading the cluster."""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from compiler.cli import main
from compiler.deliver.apply import client as apply_client
from tests.live.controlplane import ApiError, Client, ControlPlane

Json = dict[str, Any]
_names = itertools.count()

JOBSETS = "/apis/jobset.x-k8s.io/v1alpha2/namespaces/{ns}/jobsets"
SECRETS = "/api/v1/namespaces/{ns}/secrets"


def runtime(namespace: str, label: str = "a", mpi: bool = False) -> str:
    if mpi:
        policy = "    numNodes: 1\n    mpi:\n      numProcPerNode: 1\n      mpiImplementation: OpenMPI\n      sshAuthMountPath: /root/.ssh\n"
        jobs = textwrap.dedent(
            """\
            - name: launcher
              template:
                metadata:
                  labels:
                    trainer.kubeflow.org/trainjob-ancestor-step: trainer
                spec:
                  template:
                    spec:
                      containers:
                        - name: node
                          image: mpioperator/mpi-pi:openmpi
                          command: [mpirun, /home/mpiuser/pi]
            - name: node
              template:
                spec:
                  template:
                    spec:
                      containers:
                        - name: node
                          image: mpioperator/mpi-pi:openmpi
                          command: [/usr/sbin/sshd, -De]
            """
        )
    else:
        policy = "    numNodes: 1\n    torch: {}\n"
        jobs = textwrap.dedent(
            """\
            - name: node
              template:
                metadata:
                  labels:
                    trainer.kubeflow.org/trainjob-ancestor-step: trainer
                spec:
                  template:
                    spec:
                      containers:
                        - name: node
                          image: pytorch/pytorch:2.7.1
                          command: [torchrun, /workspace/train.py]
            """
        )
    return (
        "apiVersion: trainer.kubeflow.org/v1alpha1\n"
        "kind: TrainingRuntime\n"
        f"metadata:\n  name: rt\n  namespace: {namespace}\n"
        "spec:\n  mlPolicy:\n" + policy + "  template:\n"
        f"    metadata:\n      labels: {{team: {label}}}\n"
        "    spec:\n      replicatedJobs:\n" + textwrap.indent(jobs, "        ")
    )


def trainjob(namespace: str, name: str, args: tuple[str, ...] = ("--steps=1",)) -> str:
    return (
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\n"
        f"metadata:\n  name: {name}\n  namespace: {namespace}\n"
        "spec:\n  runtimeRef: {name: rt, kind: TrainingRuntime}\n"
        f"  trainer:\n    numNodes: 1\n    args: {json.dumps(list(args))}\n"
    )


@dataclass
class Result:
    code: int
    out: str
    err: str
    methods: list[tuple[str, str]] = field(default_factory=list)

    @property
    def writes(self) -> list[tuple[str, str]]:
        return [m for m in self.methods if m[0] != "GET"]

    def status_of(self, title: str) -> str:
        for line in self.out.splitlines():
            if line.startswith(title + " "):
                return line[len(title) + 1 :].split()[0].rstrip(":")
        raise AssertionError(f"no line for {title} in:\n{self.out}")


OUTPUTS: list[str] = []  # everything trainc printed in this session (the key-material test)


def trainc(*argv: str | Path, monkeypatch: pytest.MonkeyPatch | None = None) -> Result:
    """Run ``trainc`` in this process; every request's method and path is recorded."""
    methods: list[tuple[str, str]] = []
    original = apply_client.Connection._send

    def send(self: apply_client.Connection, method: str, url: str, *rest: Any) -> Any:
        methods.append((method, url))
        return original(self, method, url, *rest)

    out, err = io.StringIO(), io.StringIO()
    with contextlib.ExitStack() as stack:
        patcher = stack.enter_context(pytest.MonkeyPatch.context())
        patcher.setattr(apply_client.Connection, "_send", send)
        stack.enter_context(contextlib.redirect_stdout(out))
        stack.enter_context(contextlib.redirect_stderr(err))
        try:
            code = main([str(a) for a in argv])
        except SystemExit as exit_:
            code = int(exit_.code or 0)
    OUTPUTS.extend([out.getvalue(), err.getvalue()])
    return Result(code, out.getvalue(), err.getvalue(), methods)


def new_namespace(client: Client, prefix: str = "apply") -> str:
    name = f"{prefix}-{next(_names)}"
    client.request("POST", "/api/v1/namespaces", {"metadata": {"name": name}})
    return name


@contextlib.contextmanager
def admin(plane: ControlPlane) -> Iterator[Client]:
    client = plane.client()
    try:
        yield client
    finally:
        client.close()


def get(client: Client, path: str) -> Json | None:
    try:
        found: Json = client.get(path)
    except ApiError as error:
        if error.code == 404:
            return None
        raise
    return found


def names(client: Client, path: str, **params: str) -> list[str]:
    return sorted(i["metadata"]["name"] for i in client.get(path, **params)["items"])


def write(directory: Path, files: dict[str, str]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for old in directory.glob("*.yaml"):
        if old.name not in files:
            old.unlink()
    for name, text in files.items():
        (directory / name).write_text(text)
    return directory
