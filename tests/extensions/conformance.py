"""Extension conformance: trainc's extensions against the v1 operators' own code.

``make extension-conformance`` renders each case with trainc (a runtime declaring the
extension, a TrainJob, a cluster enabling it) and builds the equivalent v1 job's pods
with ``tests/migrate/oracle/bin/v1oracle`` (Training Operator v1.9.4, MPI Operator
v0.7.0), then compares what the extension is responsible for. Closing line:
``extension-conformance: X/Y cases identical``.

THE MAPPING (written once, here; the extension modules' docstrings say the same):

- Names. The v1 job has the TrainJob's name ``J`` and namespace ``NS``; trainc's JobSet
  subdomain is ``J``. Pod ``i`` of v1 replica type ``R`` is pod ``i`` of the replicated
  job named ``r`` (lowercase ``R``), JobSet replica 0; its host is
  ``J-r-0-i.J`` (trainc) for ``J-r-i`` (v1). For MPI: v1 worker ``i`` -> job ``node``
  pod ``i``, v1 launcher -> job ``launcher`` pod 0; the operator's hostfile hosts
  ``J-worker-i.J.NS.svc`` / ``J-launcher.J.NS.svc`` -> ``J-node-0-i.J`` /
  ``J-launcher-0-0.J``, and its worker DNS search ``J.NS.svc.cluster.local`` (J as the
  Service) -> ``<subdomain>.NS.svc.cluster.local``.
- Counts. MPI ``Worker.replicas`` = the JobSet ``node`` count (numNodes, or numNodes-1
  with runLauncherAsNode = runLauncherAsWorker); ``slotsPerWorker`` = the resolved
  numProcPerNode. TF/Paddle: each role's replicas = that job's completions. Elastic
  PyTorch: ``Worker.replicas`` = numNodes; ``elasticPolicy`` min/max/maxRestarts/rdzv* =
  the ``elastic-torch.trainc.dev/*`` parameters; the worker port (``pytorchjob-port``) =
  Trainer's torch port 29500 (or ``rdzv-port``).
- Containers. The v1 default container (``tensorflow``, ``paddle``, ``pytorch``, the MPI
  launcher's first) is trainc's ``node`` container.
- Per-pod values. trainc's ``$(TRAINC_TF_TASK_INDEX)`` is expanded with the pod's index
  (the kubelet does it from the completion index). Paddle's rendezvous pod itself gets
  ``$(POD_IP_DUMMY):port`` from the operator and ``<its host>:port`` from trainc (one
  template serves every index); ``POD_IP_DUMMY`` is not compared.
- Compared: the env vars each extension owns (MPI: ``OMPI_*``, ``I_MPI_*``, ``HYDRA_*``
  on the launcher; TF: ``TF_CONFIG``; Paddle: ``PADDLE_*``, ``PYTHONUNBUFFERED``;
  elastic: ``PET_RDZV_*``, ``PET_NNODES``, ``PET_MAX_RESTARTS`` and the absence of
  ``PET_NODE_RANK``/``PET_MASTER_*``), the hostfile, the ports the operator defaults, and
  the worker DNS search. Error cases: both sides reject.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from compiler.model.plan import BuildPlan, ClusterTarget
from compiler.plan.stages import run

ROOT = Path(__file__).resolve().parents[2]
ORACLE = ROOT / "tests" / "migrate" / "oracle" / "bin" / "v1oracle"
NS = "team"
ALL_EXTENSIONS = ("intel-mpi", "mpich", "tensorflow", "paddlepaddle", "elastic-torch")
Json = dict[str, Any]


@dataclass
class Case:
    id: str
    runtime: Json
    trainjob: Json
    v1: Json
    compare: Callable[[list[Json], Json], list[str]]
    expect_error: bool = False
    notes: list[str] = field(default_factory=list)


# --- trainc side -----------------------------------------------------------------------


def render_case(case: Case) -> tuple[list[Json], list[str]]:
    """trainc's objects (or its problems) for the case, in a cluster enabling every extension."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "runtime.yaml").write_text(yaml.safe_dump(case.runtime, sort_keys=False))
        (folder / "trainjob.yaml").write_text(yaml.safe_dump(case.trainjob, sort_keys=False))
        cluster = ClusterTarget(
            name="ext",
            project_file=folder / "trainc.yaml",
            output=folder / "out",
            extensions=ALL_EXTENSIONS,
        )
        build = run(BuildPlan(inputs=(str(folder),), default_namespace=NS, cluster=cluster))
        problems = [str(p) for p in build.problems]
        return [o.data for o in build.objects], problems


def jobset_of(objects: list[Json]) -> Json:
    return next(o for o in objects if o.get("kind") == "JobSet")


def pod_spec(jobset: Json, rjob: str) -> Json:
    for item in jobset["spec"]["replicatedJobs"]:
        if item["name"] == rjob:
            spec: Json = item["template"]["spec"]["template"]["spec"]
            return spec
    raise KeyError(rjob)


def container(spec: Json, name: str) -> Json:
    found: Json = next(c for c in spec["containers"] if c["name"] == name)
    return found


def env_map(c: Json, index: int | None = None) -> dict[str, Any]:
    """name -> value (or valueFrom), with ``$(TRAINC_TF_TASK_INDEX)`` expanded to ``index``."""
    out: dict[str, Any] = {}
    for e in c.get("env") or ():
        value = e.get("value", e.get("valueFrom"))
        if isinstance(value, str) and index is not None:
            value = value.replace("$(TRAINC_TF_TASK_INDEX)", str(index))
        out[e["name"]] = value
    return out


def select(env: dict[str, Any], pattern: str) -> dict[str, Any]:
    return {k: v for k, v in env.items() if re.fullmatch(pattern, k)}


# --- oracle side -----------------------------------------------------------------------


def run_oracle(cases: list[Case]) -> dict[str, Json]:
    requests = [{"id": c.id, "object": c.v1} for c in cases]
    out = subprocess.run(
        [str(ORACLE)], input=json.dumps(requests), capture_output=True, text=True, check=True
    )
    return {r["id"]: r for r in json.loads(out.stdout)}


def oracle_pod(result: Json, name: str) -> Json:
    pod: Json = next(p for p in result["pods"] if p["metadata"]["name"] == name)
    return pod


def first_container(pod: Json) -> Json:
    c: Json = pod["spec"]["containers"][0]
    return c


def named_ports(c: Json, name: str) -> list[tuple[str, int]]:
    return [
        (p.get("name", ""), p["containerPort"])
        for p in c.get("ports") or ()
        if p.get("name") == name
    ]


def diff(what: str, trainc: Any, oracle: Any) -> list[str]:
    return [] if trainc == oracle else [f"{what}: trainc {trainc!r} != oracle {oracle!r}"]


# --- MPI (Intel, MPICH; OpenMPI as the control of the mapping) -------------------------


def mpi_trainer(num_nodes: int, gpus: int) -> Json:
    trainer: Json = {"numNodes": num_nodes}
    if gpus:
        trainer["resourcesPerNode"] = {"limits": {"nvidia.com/gpu": str(gpus)}}
    return trainer


def mpi_runtime(extension: str | None, slots: int, launcher_as_node: bool) -> Json:
    annotations = {"trainc.dev/extensions": extension} if extension else {}
    node: Json = {"name": "node", "image": "acme/mpi:1", "command": ["/usr/sbin/sshd", "-De"]}
    policy: Json = {"numProcPerNode": slots}
    if launcher_as_node:
        policy["runLauncherAsNode"] = True
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainingRuntime",
        "metadata": {"name": "mpi", "namespace": NS, "annotations": annotations},
        "spec": {
            "mlPolicy": {"numNodes": 1, "mpi": policy},
            "template": {
                "spec": {
                    "replicatedJobs": [
                        {
                            "name": "launcher",
                            "template": {
                                "metadata": {
                                    "labels": {
                                        "trainer.kubeflow.org/trainjob-ancestor-step": "trainer"
                                    }
                                },
                                "spec": {
                                    "template": {
                                        "spec": {
                                            "containers": [
                                                {
                                                    "name": "node",
                                                    "image": "acme/mpi:1",
                                                    "command": ["mpirun"],
                                                }
                                            ]
                                        }
                                    }
                                },
                            },
                        },
                        {
                            "name": "node",
                            "template": {"spec": {"template": {"spec": {"containers": [node]}}}},
                        },
                    ]
                }
            },
        },
    }


def trainjob(name: str, runtime: str, trainer: Json | None) -> Json:
    spec: Json = {"runtimeRef": {"kind": "TrainingRuntime", "name": runtime}}
    if trainer:
        spec["trainer"] = trainer
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": name, "namespace": NS},
        "spec": spec,
    }


def mpijob(name: str, implementation: str, workers: int, slots: int, as_worker: bool) -> Json:
    def template(cname: str) -> Json:
        return {"spec": {"containers": [{"name": cname, "image": "acme/mpi:1"}]}}

    spec: Json = {
        "slotsPerWorker": slots,
        "mpiImplementation": implementation,
        "mpiReplicaSpecs": {
            "Launcher": {"replicas": 1, "template": template("launcher")},
            "Worker": {"replicas": workers, "template": template("worker")},
        },
    }
    if as_worker:
        spec["runLauncherAsWorker"] = True
    return {
        "apiVersion": "kubeflow.org/v2beta1",
        "kind": "MPIJob",
        "metadata": {"name": name, "namespace": NS},
        "spec": spec,
    }


def mpi_host(name: str, host: str) -> str:
    """The operator's hostfile host -> trainc's (the mapping above)."""
    svc = f".{name}.{NS}.svc"
    base = host.removesuffix(svc)
    if base == f"{name}-launcher":
        return f"{name}-launcher-0-0.{name}"
    index = base.removeprefix(f"{name}-worker-")
    return f"{name}-node-0-{index}.{name}"


def mpi_compare(name: str, hydra: bool) -> Callable[[list[Json], Json], list[str]]:
    def compare(objects: list[Json], result: Json) -> list[str]:
        jobset = jobset_of(objects)
        launcher_env = select(
            env_map(container(pod_spec(jobset, "launcher"), "node")), r"(OMPI|I_MPI|HYDRA)_.*"
        )
        oracle_env = select(
            env_map(first_container(oracle_pod(result, f"{name}-launcher"))),
            r"(OMPI|I_MPI|HYDRA)_.*",
        )
        problems = diff("launcher env", launcher_env, oracle_env)
        hostfile = next(o["data"]["hostfile"] for o in objects if o.get("kind") == "ConfigMap")
        expected = "".join(
            re.sub(r"^(\S+?)(:| slots=)", lambda m: mpi_host(name, m[1]) + m[2], line) + "\n"
            for line in result["files"]["/etc/mpi/hostfile"].splitlines()
        )
        problems += diff("hostfile", hostfile, expected)
        if hydra:
            worker = oracle_pod(result, f"{name}-worker-0")
            # the operator's Service is named after the job, as trainc's subdomain is: the
            # mapping of J.NS.svc.cluster.local is the identity here
            searches = worker["spec"]["dnsConfig"]["searches"]
            got = (pod_spec(jobset, "node").get("dnsConfig") or {}).get("searches")
            problems += diff("node dnsConfig.searches", got, searches)
        return problems

    return compare


def mpi_cases() -> list[Case]:
    cases = []
    shapes = [
        # (numNodes, slots, runLauncherAsNode, gpus -> slots derived)
        (1, 1, False, 0),
        (2, 1, False, 0),
        (3, 2, False, 0),
        (4, 8, False, 0),
        (2, 1, True, 0),
        (3, 4, True, 0),
        (5, 2, True, 0),
        (2, 1, False, 4),  # runtime says 1, resourcesPerNode four GPUs: 4 slots (Trainer's rule)
    ]
    for extension, implementation in (
        ("intel-mpi", "Intel"),
        ("mpich", "MPICH"),
        (None, "OpenMPI"),
    ):
        for num_nodes, slots, as_node, gpus in shapes:
            if extension is None and (num_nodes, as_node) not in ((2, False), (3, True)):
                continue  # the control: two shapes are enough to check the mapping itself
            name = f"{implementation.lower()}-n{num_nodes}-s{slots}{'-ln' if as_node else ''}"
            name += f"-g{gpus}" if gpus else ""
            resolved_slots = gpus if gpus and slots == 1 else slots
            workers = max(num_nodes - 1, 1) if as_node else num_nodes
            cases.append(
                Case(
                    id=f"mpi/{name}",
                    runtime=mpi_runtime(extension, slots, as_node),
                    trainjob=trainjob(name, "mpi", mpi_trainer(num_nodes, gpus)),
                    v1=mpijob(name, implementation, workers, resolved_slots, as_node),
                    compare=mpi_compare(name, extension is not None),
                )
            )
    # the TrainJob's numProcPerNode overrides the runtime's
    name = "intel-override"
    cases.append(
        Case(
            id=f"mpi/{name}",
            runtime=mpi_runtime("intel-mpi", 1, False),
            trainjob=trainjob(name, "mpi", {"numNodes": 2, "numProcPerNode": 6}),
            v1=mpijob(name, "Intel", 2, 6, False),
            compare=mpi_compare(name, True),
        )
    )
    # errors: negative slots (the operator's validation; Trainer's CRD minimum)
    name = "intel-negative-slots"
    cases.append(
        Case(
            id=f"mpi/error-{name}",
            runtime=mpi_runtime("intel-mpi", 1, False),
            trainjob=trainjob(name, "mpi", {"numNodes": 2, "numProcPerNode": -1}),
            v1=mpijob(name, "Intel", 2, -1, False),
            compare=lambda o, r: [],
            expect_error=True,
        )
    )
    # errors: an implementation neither side supports
    name = "mvapich"
    cases.append(
        Case(
            id=f"mpi/error-{name}",
            runtime=mpi_runtime("mvapich", 1, False),
            trainjob=trainjob(name, "mpi", {"numNodes": 2}),
            v1=mpijob(name, "MVAPICH", 2, 1, False),
            compare=lambda o, r: [],
            expect_error=True,
        )
    )
    return cases


# --- TensorFlow --------------------------------------------------------------------------


def tf_runtime(
    roles: dict[str, int], port: int | None = None, container_name: str = "node", bare: str = ""
) -> Json:
    """``bare``: a role whose container is not the default one."""
    return _roles_runtime(
        "tf", "tensorflow", "acme/tf:2", ("tfjob-port", port), roles, container_name, bare
    )


def _roles_runtime(
    name: str,
    extension: str,
    image: str,
    port: tuple[str, int | None],
    roles: dict[str, int],
    container_name: str,
    bare: str,
) -> Json:
    """A TrainingRuntime of the extension ``extension``: a replicated job per role (the
    ``worker`` the trainer's, the others ``count`` Pods each), each with one container
    ``container_name`` (``other`` in the role ``bare``) and the named port, if any."""
    port_name, number = port
    jobs = []
    for role, count in roles.items():
        c: Json = {"name": "other" if role == bare else container_name, "image": image}
        if number is not None:
            c["ports"] = [{"name": port_name, "containerPort": number}]
        job_template: Json = {"spec": {"template": {"spec": {"containers": [c]}}}}
        if role == "worker":
            job_template["metadata"] = {
                "labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}
            }
        else:
            job_template["spec"]["parallelism"] = count
            job_template["spec"]["completions"] = count
        jobs.append({"name": role, "template": job_template})
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainingRuntime",
        "metadata": {
            "name": name,
            "namespace": NS,
            "annotations": {"trainc.dev/extensions": extension},
        },
        "spec": {
            "mlPolicy": {"numNodes": roles.get("worker", 1)},
            "template": {"spec": {"replicatedJobs": jobs}},
        },
    }


def tfjob(
    name: str,
    roles: dict[str, int],
    port: int | None,
    container_name: str = "tensorflow",
    bare: str = "",
) -> Json:
    specs = {}
    for role, count in roles.items():
        c: Json = {"name": "other" if role == bare else container_name, "image": "acme/tf:2"}
        if port is not None:
            c["ports"] = [{"name": "tfjob-port", "containerPort": port}]
        kind = {"ps": "PS"}.get(role, role.capitalize())
        specs[kind] = {"replicas": count, "template": {"spec": {"containers": [c]}}}
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"tfReplicaSpecs": specs},
    }


def tf_host_map(name: str, text: str) -> str:
    """Hosts ``name-role-i.NS.svc`` in a TF_CONFIG -> ``name-role-0-i.name.NS.svc``."""
    return re.sub(
        rf"\b{re.escape(name)}-([a-z]+)-(\d+)\.{NS}\.svc",
        lambda m: f"{name}-{m[1]}-0-{m[2]}.{name}.{NS}.svc",
        text,
    )


def tf_compare(name: str, roles: dict[str, int]) -> Callable[[list[Json], Json], list[str]]:
    def compare(objects: list[Json], result: Json) -> list[str]:
        jobset = jobset_of(objects)
        problems: list[str] = []
        for role, count in roles.items():
            node = container(pod_spec(jobset, role), "node")
            for index in range(count):
                pod = oracle_pod(result, f"{name}-{role}-{index}")
                tf = container(pod["spec"], "tensorflow")
                want = env_map(tf).get("TF_CONFIG")
                got = env_map(node, index).get("TF_CONFIG")
                problems += diff(
                    f"{role}[{index}] TF_CONFIG",
                    got,
                    None if want is None else tf_host_map(name, want),
                )
            problems += diff(
                f"{role} ports",
                named_ports(node, "tfjob-port"),
                named_ports(
                    container(oracle_pod(result, f"{name}-{role}-0")["spec"], "tensorflow"),
                    "tfjob-port",
                ),
            )
        return problems

    return compare


def tf_cases() -> list[Case]:
    shapes: list[tuple[str, dict[str, int], int | None]] = [
        ("w1", {"worker": 1}, None),  # local: no TF_CONFIG
        ("w2", {"worker": 2}, None),
        ("w4", {"worker": 4}, None),
        ("c1w2", {"chief": 1, "worker": 2}, None),
        ("c1w3ps2", {"chief": 1, "worker": 3, "ps": 2}, None),
        ("w2ps1", {"worker": 2, "ps": 1}, None),
        ("c1w2e1", {"chief": 1, "worker": 2, "evaluator": 1}, None),
        ("m1w2", {"master": 1, "worker": 2}, None),
        ("w3-port", {"worker": 3}, 3333),
        ("c1w1ps1-port", {"chief": 1, "worker": 1, "ps": 1}, 4000),
    ]
    cases = []
    for label, roles, port in shapes:
        name = f"tf-{label}"
        job = trainjob(name, "tf", {"numNodes": roles["worker"]})
        cases.append(
            Case(
                id=f"tensorflow/{label}",
                runtime=tf_runtime(roles, port),
                trainjob=job,
                v1=tfjob(name, roles, port),
                compare=tf_compare(name, roles),
            )
        )
    both = {"chief": 1, "master": 1, "worker": 2}
    cases.append(
        Case(
            id="tensorflow/error-chief-and-master",
            runtime=tf_runtime(both),
            trainjob=trainjob("tf-both", "tf", {"numNodes": 2}),
            v1=tfjob("tf-both", both, None),
            compare=lambda o, r: [],
            expect_error=True,
        )
    )
    cases.append(
        Case(
            id="tensorflow/error-no-default-container",
            runtime=tf_runtime({"worker": 2}, container_name="trainer"),
            trainjob=trainjob("tf-noc", "tf", {"numNodes": 2}),
            v1=tfjob("tf-noc", {"worker": 2}, None, container_name="trainer"),
            compare=lambda o, r: [],
            expect_error=True,
        )
    )
    roles = {"worker": 2, "ps": 1}
    cases.append(
        Case(
            id="tensorflow/error-ps-without-default-container",
            runtime=tf_runtime(roles, bare="ps"),
            trainjob=trainjob("tf-psc", "tf", {"numNodes": 2}),
            v1=tfjob("tf-psc", roles, None, bare="ps"),
            compare=lambda o, r: [],
            expect_error=True,
        )
    )
    return cases


# --- elastic PyTorch -------------------------------------------------------------------


def torch_runtime(params: dict[str, str], torch: bool = True, trainer_label: bool = True) -> Json:
    annotations = {"trainc.dev/extensions": "elastic-torch"}
    annotations.update({f"elastic-torch.trainc.dev/{k}": v for k, v in params.items()})
    job_template: Json = {
        "spec": {"template": {"spec": {"containers": [{"name": "node", "image": "acme/pt:2"}]}}}
    }
    if trainer_label:
        job_template["metadata"] = {
            "labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}
        }
    policy: Json = {"numNodes": 1}
    if torch:
        policy["torch"] = {}
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainingRuntime",
        "metadata": {"name": "pt", "namespace": NS, "annotations": annotations},
        "spec": {
            "mlPolicy": policy,
            "template": {"spec": {"replicatedJobs": [{"name": "node", "template": job_template}]}},
        },
    }


def pytorchjob(name: str, workers: int, params: dict[str, str], master: bool = False) -> Json:
    policy: Json = {}
    mapping = {
        "min-nodes": ("minReplicas", int),
        "max-nodes": ("maxReplicas", int),
        "max-restarts": ("maxRestarts", int),
        "rdzv-backend": ("rdzvBackend", str),
        "rdzv-port": ("rdzvPort", int),
        "rdzv-id": ("rdzvId", str),
    }
    for key, value in params.items():
        if key == "rdzv-conf":
            policy["rdzvConf"] = [
                {"key": k, "value": v} for k, _, v in (p.partition("=") for p in value.split(","))
            ]
        else:
            field_name, kind = mapping[key]
            policy[field_name] = kind(value)
    port = [{"name": "pytorchjob-port", "containerPort": 29500}]
    c: Json = {"name": "pytorch", "image": "acme/pt:2", "ports": port}
    specs: Json = {}
    if master:
        specs["Master"] = {"replicas": 1, "template": {"spec": {"containers": [dict(c)]}}}
    if workers:
        specs["Worker"] = {"replicas": workers, "template": {"spec": {"containers": [c]}}}
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"elasticPolicy": policy, "pytorchReplicaSpecs": specs},
    }


ELASTIC_ENV = r"PET_RDZV_.*|PET_NNODES|PET_MAX_RESTARTS|PET_STANDALONE|PET_NODE_RANK|PET_MASTER_.*"


def elastic_compare(name: str, workers: int) -> Callable[[list[Json], Json], list[str]]:
    def compare(objects: list[Json], result: Json) -> list[str]:
        node = container(pod_spec(jobset_of(objects), "node"), "node")
        got = select(env_map(node), ELASTIC_ENV)
        problems: list[str] = []
        for index in range(workers):
            pod = oracle_pod(result, f"{name}-worker-{index}")
            want = select(env_map(container(pod["spec"], "pytorch")), ELASTIC_ENV)
            endpoint = want.get("PET_RDZV_ENDPOINT")
            if isinstance(endpoint, str):
                want["PET_RDZV_ENDPOINT"] = endpoint.replace(
                    f"{name}-worker-0:", f"{name}-node-0-0.{name}:"
                )
            problems += diff(f"worker[{index}] elastic env", got, want)
        return problems

    return compare


def elastic_cases() -> list[Case]:
    shapes: list[tuple[str, int, dict[str, str]]] = [
        ("defaults", 2, {}),
        ("min-max", 3, {"min-nodes": "2", "max-nodes": "4"}),
        ("min-only", 2, {"min-nodes": "2"}),
        ("max-only", 3, {"max-nodes": "3"}),
        ("restarts", 2, {"min-nodes": "1", "max-nodes": "2", "max-restarts": "3"}),
        ("etcd", 2, {"rdzv-backend": "etcd", "rdzv-port": "2379", "max-restarts": "0"}),
        (
            "id-conf",
            4,
            {
                "min-nodes": "2",
                "max-nodes": "8",
                "rdzv-id": "run-7",
                "rdzv-conf": "join_timeout=600,last_call_timeout=30",
            },
        ),
        ("etcd-v2-port", 1, {"rdzv-backend": "etcd-v2", "rdzv-port": "12345"}),
    ]
    cases = []
    for label, workers, params in shapes:
        name = f"pt-{label}"
        cases.append(
            Case(
                id=f"elastic-torch/{label}",
                runtime=torch_runtime(params),
                trainjob=trainjob(name, "pt", {"numNodes": workers}),
                v1=pytorchjob(name, workers, params),
                compare=elastic_compare(name, workers),
            )
        )
    # error: no worker job to make elastic (v1: a Master only; trainc: no trainer job)
    cases.append(
        Case(
            id="elastic-torch/error-no-worker",
            runtime=torch_runtime({"min-nodes": "1"}, trainer_label=False),
            trainjob=trainjob("pt-nowork", "pt", None),
            v1=pytorchjob("pt-nowork", 0, {"min-nodes": "1"}, master=True),
            compare=lambda o, r: [],
            expect_error=True,
        )
    )
    return cases


# --- PaddlePaddle ----------------------------------------------------------------------


def paddle_runtime(roles: dict[str, int], port: int | None, bare: str = "") -> Json:
    """``bare``: a role whose container is not the default one."""
    return _roles_runtime(
        "paddle", "paddlepaddle", "acme/paddle:2", ("master", port), roles, "node", bare
    )


def paddlejob(name: str, roles: dict[str, int], port: int | None, bare: str = "") -> Json:
    specs = {}
    for role, count in roles.items():
        c: Json = {"name": "other" if role == bare else "paddle", "image": "acme/paddle:2"}
        if port is not None:
            c["ports"] = [{"name": "master", "containerPort": port}]
        specs[role.capitalize()] = {"replicas": count, "template": {"spec": {"containers": [c]}}}
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PaddleJob",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"paddleReplicaSpecs": specs},
    }


PADDLE_ENV = r"PADDLE_.*|PYTHONUNBUFFERED"


def paddle_compare(name: str, roles: dict[str, int]) -> Callable[[list[Json], Json], list[str]]:
    rendezvous = "master" if "master" in roles else "worker"

    def compare(objects: list[Json], result: Json) -> list[str]:
        jobset = jobset_of(objects)
        problems: list[str] = []
        for role, count in roles.items():
            node = container(pod_spec(jobset, role), "node")
            got = select(env_map(node), PADDLE_ENV)
            for index in range(count):
                pod = oracle_pod(result, f"{name}-{role}-{index}")
                paddle = container(pod["spec"], "paddle")
                want = select(env_map(paddle), PADDLE_ENV)
                master = str(want.get("PADDLE_MASTER", ""))
                own = f"{name}-{rendezvous}-0-0.{name}"
                master = master.replace("$(POD_IP_DUMMY)", own)
                master = re.sub(
                    rf"^{re.escape(name)}-([a-z]+)-(\d+):",
                    lambda m: f"{name}-{m[1]}-0-{m[2]}.{name}:",
                    master,
                )
                want["PADDLE_MASTER"] = master
                problems += diff(f"{role}[{index}] paddle env", got, want)
            problems += diff(
                f"{role} ports",
                named_ports(node, "master"),
                named_ports(
                    container(oracle_pod(result, f"{name}-{role}-0")["spec"], "paddle"), "master"
                ),
            )
        return problems

    return compare


def paddle_cases() -> list[Case]:
    shapes: list[tuple[str, dict[str, int], int | None]] = [
        ("w1", {"worker": 1}, None),
        ("w2", {"worker": 2}, None),
        ("w4-port", {"worker": 4}, 6000),
        ("m1w2", {"master": 1, "worker": 2}, None),
        ("m2w3-port", {"master": 2, "worker": 3}, 7000),
    ]
    cases = []
    for label, roles, port in shapes:
        name = f"pd-{label}"
        cases.append(
            Case(
                id=f"paddlepaddle/{label}",
                runtime=paddle_runtime(roles, port),
                trainjob=trainjob(name, "paddle", {"numNodes": roles["worker"]}),
                v1=paddlejob(name, roles, port),
                compare=paddle_compare(name, roles),
            )
        )
    roles = {"master": 1, "worker": 2}
    cases.append(
        Case(
            id="paddlepaddle/error-master-without-default-container",
            runtime=paddle_runtime(roles, None, bare="master"),
            trainjob=trainjob("pd-bare", "paddle", {"numNodes": 2}),
            v1=paddlejob("pd-bare", roles, None, bare="master"),
            compare=lambda o, r: [],
            expect_error=True,
        )
    )
    return cases


def all_cases() -> list[Case]:
    return [*mpi_cases(), *tf_cases(), *elastic_cases(), *paddle_cases()]


def check(cases: list[Case]) -> list[tuple[Case, list[str]]]:
    """Each case with its differences ([] = identical)."""
    oracle = run_oracle(cases)
    out = []
    for case in cases:
        objects, problems = render_case(case)
        result = oracle[case.id]
        oracle_error = result.get("error")
        if case.expect_error or oracle_error or problems:
            found = []
            if not oracle_error:
                found.append("oracle accepted it")
            if not problems:
                found.append("trainc accepted it")
            if not case.expect_error:
                found.append(f"unexpected rejection: trainc {problems} / oracle {oracle_error!r}")
            out.append((case, found))
            continue
        try:
            out.append((case, case.compare(objects, result)))
        except (KeyError, StopIteration) as missing:
            out.append((case, [f"missing in the output: {missing!r}"]))
    return out


def main() -> int:
    if not ORACLE.exists():
        print(f"extension-conformance: {ORACLE} missing (make migrate-oracle)", file=sys.stderr)
        return 2
    results = check(all_cases())
    identical = 0
    for case, problems in results:
        if problems:
            print(f"DIFF {case.id}")
            for problem in problems:
                print(f"  {problem}")
        else:
            identical += 1
    print(f"extension-conformance: {identical}/{len(results)} cases identical")
    return 0 if identical == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
