"""Golden cases: ``golden/<case>/case.yaml`` names the inputs; the oracle wrote the expectation.

A case file::

    description: torch-distributed with numNodes 3
    inputs:
      - upstream: manifests/base/runtimes/torch_distributed.yaml  # a file of the pinned Trainer module
      - trainjob.yaml                                             # a file beside case.yaml
    ownerUID: 1b4c...            # optional, default OWNER_UID
    versions: [v2.3.0]           # optional: the Trainer releases it applies to (default all)

A case applies to every emulated Trainer release (compiler.upstream.versions) whose
module has its ``upstream:`` files, unless ``versions`` says otherwise; ``upstream:``
paths resolve in that release's module.

Expectations, written by ``make goldens`` from the oracle's answer:

- ``expected.yaml``: the objects the controller creates (a case upstream accepts), or
- ``expected-errors.json``: upstream's rejection (API server schema/CEL or webhook), or
  the controller's creation failure; its ``live`` section, written by
  ``make conformance-live ARGS=--write-goldens``, holds what the real control plane
  (kube-apiserver, etcd and the Trainer controller of tests/live) said, word for word
  but for the times and Go pointer addresses in it (:func:`message_key`), and which
  versions said it: the messages trainc must print; or
- beside expected.yaml, ``downstream.yaml``: the refusals the real controllers reported
  below the Trainer's objects (the JobSet webhook's denial, the API server's refusal of a
  Job or Pod), written by ``make conformance-live ARGS=--record-downstream``
  (tests.conformance.downstream); or
- ``expectTraincError: {line, column, contains}`` in case.yaml, only for input no upstream
  component can read (a YAML syntax error): where the error must point.

Both start by naming the upstream version that produced them. The newest release's
expectation is in the case folder; an older release's in a subfolder named after it
(``golden/<case>/v2.2.0/expected.yaml``), written by that release's oracle.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from compiler.upstream.artifacts import upstream
from compiler.upstream.versions import DEFAULT_TRAINER_VERSION, TRAINER_VERSIONS
from tests.conformance.normalise import env_order_is_random

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "golden"
OWNER_UID = "2c0d5b9e-0c6e-4a4e-9d3b-7b2f4f9a1c00"


@dataclass(frozen=True)
class Case:
    name: str
    directory: Path
    description: str
    inputs: tuple[Path, ...]
    owner_uid: str
    # For input upstream cannot even read (a YAML syntax error): where trainc must point.
    # The location is a reviewed fact about the input file, not trainc's output.
    expect_trainc_error: dict[str, Any] | None = None
    version: str = DEFAULT_TRAINER_VERSION  # the Trainer release this expectation is for

    @property
    def expectation_dir(self) -> Path:
        if self.version == DEFAULT_TRAINER_VERSION:
            return self.directory
        return self.directory / self.version

    @property
    def expected_objects_path(self) -> Path:
        return self.expectation_dir / "expected.yaml"

    @property
    def expected_errors_path(self) -> Path:
        return self.expectation_dir / "expected-errors.json"

    @property
    def downstream_path(self) -> Path:
        """What the live control plane reported below the JobSet (tests.conformance.downstream)."""
        return self.expectation_dir / "downstream.yaml"

    @property
    def env_order_random(self) -> bool:
        """Whether a runtime among the inputs makes upstream's env order random (normalise rule 3)."""
        for path in self.inputs:
            try:
                documents = list(yaml.safe_load_all(path.read_text()))
            except (OSError, yaml.YAMLError):
                continue
            for doc in documents:
                is_runtime = isinstance(doc, dict) and doc.get("kind", "").endswith(
                    "TrainingRuntime"
                )
                if is_runtime and env_order_is_random(doc.get("spec") or {}):
                    return True
        return False

    @property
    def live_messages(self) -> list[str]:
        """What the real control plane said rejecting this case (empty when not recorded)."""
        if not self.expected_errors_path.exists():
            return []
        live = json.loads(self.expected_errors_path.read_text()).get("live") or {}
        return [str(m) for m in live.get("messages") or []]

    def expectation(self) -> tuple[str, Any]:
        """``("objects", [...])`` or ``("errors", {...})`` as the oracle recorded it, or
        ``("trainc-error", {...})`` for input the oracle cannot parse."""
        if self.expect_trainc_error is not None:
            return "trainc-error", self.expect_trainc_error
        if self.expected_objects_path.exists():
            docs = yaml.safe_load_all(self.expected_objects_path.read_text())
            return "objects", [d for d in docs if d is not None]
        if self.expected_errors_path.exists():
            return "errors", json.loads(self.expected_errors_path.read_text())
        raise FileNotFoundError(f"{self.name}: no expectation; run `make goldens`")


_TIME = re.compile(r'"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z"')
_ADDRESS = re.compile(r"0x[0-9a-f]{6,}")


def message_key(text: str) -> str:
    """A message with what changes on every run masked: the admission time the Trainer
    defaulting webhook stamps on runtimePatches, and Go pointer addresses.

    >>> message_key('[{"time":"2026-11-25T15:24:52Z"}] at 0xc000a1b2c3')
    '[{"time":"<admission time>"}] at 0x<address>'
    """
    return _ADDRESS.sub("0x<address>", _TIME.sub('"<admission time>"', text))


def load_case(directory: Path, version: str = DEFAULT_TRAINER_VERSION) -> Case | None:
    """The case in ``directory`` on Trainer ``version``; None when it does not apply there."""
    spec = yaml.safe_load((directory / "case.yaml").read_text())
    if version not in spec.get("versions", TRAINER_VERSIONS):
        return None
    inputs: list[Path] = []
    for item in spec["inputs"]:
        if isinstance(item, dict) and "upstream" in item:
            path = upstream(version).path(item["upstream"])
            if not path.is_file():
                return None  # a file that release does not ship
            inputs.append(path)
        else:
            inputs.append(directory / str(item))
    return Case(
        name=directory.name,
        directory=directory,
        description=str(spec.get("description", "")),
        inputs=tuple(inputs),
        owner_uid=str(spec.get("ownerUID", OWNER_UID)),
        expect_trainc_error=spec.get("expectTraincError"),
        version=version,
    )


def all_cases(version: str = DEFAULT_TRAINER_VERSION) -> list[Case]:
    """Every case that applies to Trainer ``version``, by name."""
    cases = (load_case(d, version) for d in sorted(GOLDEN.iterdir()) if (d / "case.yaml").is_file())
    return [case for case in cases if case is not None]
