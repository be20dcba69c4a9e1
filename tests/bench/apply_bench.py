"""``python -m tests.bench.apply_bench``: ``trainc apply`` next to ``kubectl apply
--server-side`` on the same 1,000 JobSets, in the same run, against the live control plane.

Starts a private control plane (tests/live/controlplane.py), generates one namespaced
runtime and N TrainJobs per tool (the same tree in two namespaces, so neither tool
sees the other's objects), renders the tree once for kubectl, then times, per tool:

- create: the first apply of the N JobSets;
- unchanged: the same apply again (trainc compares first and sends no write; kubectl
  sends every object and the server answers unchanged).

trainc's figures are for ``trainc apply PATH`` in a fresh process: load, render and
apply; its render alone is timed too, so the apply part can be read off. kubectl's
are for ``kubectl apply --server-side -f rendered.yaml``. A benchmark, not a test: it
prints figures and never fails on them.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.live.controlplane import start

RUNTIME = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata: {{name: bench, namespace: {ns}}}
spec:
  mlPolicy: {{numNodes: 1, torch: {{}}}}
  template:
    spec:
      replicatedJobs:
        - name: node
          template:
            metadata:
              labels: {{trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
            spec:
              template:
                spec:
                  containers:
                    - name: node
                      image: pytorch/pytorch:2.7.1
                      command: [torchrun, /workspace/train.py]
                      resources: {{requests: {{cpu: "1", memory: 2Gi}}}}
"""

TRAINJOB = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {{name: job-{i:05d}, namespace: {ns}}}
spec:
  runtimeRef: {{name: bench, kind: TrainingRuntime}}
  trainer:
    numNodes: {nodes}
    args: ["--seed={i}"]
    env: [{{name: RUN, value: "{i}"}}]
"""


def _tree(root: Path, ns: str, count: int) -> Path:
    root.mkdir(parents=True)
    (root / "runtime.yaml").write_text(RUNTIME.format(ns=ns))
    with (root / "jobs.yaml").open("w") as out:
        for i in range(count):
            out.write("---\n" + TRAINJOB.format(i=i, ns=ns, nodes=1 + i % 4))
    return root


def _timed(argv: list[str]) -> float:
    began = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True)
    seconds = time.perf_counter() - began
    if done.returncode != 0:
        sys.exit(f"{' '.join(argv[:3])} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=1000)
    args = parser.parse_args()
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        sys.exit("kubectl is not on PATH (scripts/install-kubectl.sh installs one)")
    trainc = [sys.executable, "-m", "compiler"]
    plane = start()
    try:
        kc = ["--kubeconfig", str(plane.kubeconfig)]
        client = plane.client()
        for ns in ("bench-trainc", "bench-kubectl"):
            client.request("POST", "/api/v1/namespaces", {"metadata": {"name": ns}})
        client.close()
        with tempfile.TemporaryDirectory(prefix="trainc-apply-bench-") as work:
            base = Path(work)
            ours = _tree(base / "trainc", "bench-trainc", args.count)
            theirs = _tree(base / "kubectl", "bench-kubectl", args.count)
            rendered = base / "rendered.yaml"
            with rendered.open("w") as out:
                subprocess.run([*trainc, "render", str(theirs), "-o", "-"], stdout=out, check=True)
            render_s = _timed([*trainc, "render", str(ours), "-o", str(base / "out")])
            figures = {
                "jobsets": args.count,
                "trainc render only": render_s,
                "trainc create": _timed([*trainc, "apply", str(ours), "-q", *kc]),
                "trainc unchanged": _timed([*trainc, "apply", str(ours), "-q", *kc]),
                "kubectl create": _timed(
                    [kubectl, *kc, "apply", "--server-side", "-f", str(rendered)]
                ),
                "kubectl unchanged": _timed(
                    [kubectl, *kc, "apply", "--server-side", "-f", str(rendered)]
                ),
            }
    finally:
        plane.stop()
    n = args.count
    print(f"apply {n} JobSets (kube-apiserver v1.34.4 + etcd on 127.0.0.1)")
    print(f"  {'':28} {'seconds':>8} {'objects/s':>10}")
    for name, seconds in figures.items():
        if name == "jobsets":
            continue
        print(f"  {name:28} {seconds:8.2f} {n / seconds:10.0f}")
    print(json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in figures.items()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
