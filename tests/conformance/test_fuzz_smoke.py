"""A short differential fuzz run (30 examples) and the ``oracle serve`` protocol.

``make conformance-fuzz`` runs the long version; this one keeps the fuzzer, its
strategies and the server working. Skipped where Go is missing or the oracle does
not build.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conformance import oracle
from tests.conformance.fuzz import fuzz
from tests.go_oracle import oracle_needed


@pytest.fixture(scope="module")
def oracle_built() -> None:
    with oracle_needed("`make oracle` builds it; `make test` runs it first"):
        oracle.oracle_binary()


RUNTIME = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata:
  name: rt
spec:
  mlPolicy:
    torch: {}
  template:
    spec:
      replicatedJobs:
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
                  image: acme/torch:1
"""

TRAINJOB = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: job
spec:
  runtimeRef:
    name: rt
    kind: TrainingRuntime
  trainer:
    numNodes: 2
"""


def test_server_answers_like_render(oracle_built: None, tmp_path: Path) -> None:
    (tmp_path / "runtime.yaml").write_text(RUNTIME)
    (tmp_path / "trainjob.yaml").write_text(TRAINJOB)
    inputs = [tmp_path / "runtime.yaml", tmp_path / "trainjob.yaml"]
    with oracle.OracleServer() as server:
        assert server.render(inputs, "uid-1") == oracle.render(inputs, "uid-1")
        rejected = server.render_documents(
            [RUNTIME, TRAINJOB.replace("name: rt", "name: missing")], "uid-1"
        )
        assert rejected.objects is None and rejected.rejection is not None
        assert rejected.rejection["errors"][0]["file"] == "input-1.yaml"
        # Upstream's Flux plugin dereferences spec.trainer.numNodes: a recovered panic,
        # after which the same process keeps answering.
        flux = RUNTIME.replace("torch: {}", "flux: {}").replace("name: rt", "name: fx")
        crash = server.render_documents(
            [flux, TRAINJOB.replace("name: rt", "name: fx").replace("numNodes: 2", "{}")], "u"
        )
        assert crash.panic is not None and "nil pointer" in crash.panic
        again = server.render_documents([RUNTIME, TRAINJOB], "uid-1")
        assert again.objects is not None and server.starts == 1


def test_fuzz_30_examples(oracle_built: None, tmp_path: Path) -> None:
    lines: list[str] = []
    fuzzer = fuzz(30, 0, tmp_path / "out", log=lines.append)
    assert fuzzer.examples == 30
    assert not fuzzer.written, "\n".join(lines)
