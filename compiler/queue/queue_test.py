"""compiler/queue: the queue setup as inputs, Workloads, flavor assignment, the verdict."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from compiler.load.loader import load
from compiler.queue.assign import assign_flavors, potential_available, quota_tree
from compiler.queue.objects import QueueSetup, queue_setup
from compiler.queue.verdict import QueuedJob, queue_problems
from compiler.queue.workload import jobset_workload

GPU = "nvidia.com/gpu"


def setup_of(tmp_path: Path, text: str) -> tuple[QueueSetup, list[str]]:
    path = tmp_path / "queues.yaml"
    path.write_text(text, encoding="utf-8")
    setup, problems = queue_setup(load([str(path)]).others)
    return setup, [str(p) for p in problems]


def cluster_queue(name: str, gpus: int, cohort: str = "", extra: str = "") -> str:
    cohort_line = f"\n  cohortName: {cohort}" if cohort else ""
    return f"""---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: {name}}}
spec:{cohort_line}
  namespaceSelector: {{}}
  resourceGroups:
  - coveredResources: [{GPU}]
    flavors:
    - name: a100
      resources:
      - name: {GPU}
        nominalQuota: {gpus}{extra}
"""


FLAVOR = """---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: a100}
spec:
  nodeLabels: {gpu: a100}
"""
LOCAL = """---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: research, namespace: team}
spec: {clusterQueue: research}
"""


def jobset(nodes: int, gpus: int, **pod: Any) -> dict[str, Any]:
    container = {"name": "node", "resources": {"limits": {GPU: gpus}}}
    spec = {"containers": [container], **pod}
    return {
        "metadata": {"name": "llm", "namespace": "team"},
        "spec": {
            "replicatedJobs": [
                {
                    "name": "node",
                    "replicas": 1,
                    "template": {
                        "spec": {
                            "parallelism": nodes,
                            "completions": nodes,
                            "template": {"spec": spec},
                        }
                    },
                }
            ]
        },
    }


# --- the setup as inputs ----------------------------------------------------------------


def test_kueue_objects_are_admitted_with_their_crds(tmp_path: Path) -> None:
    setup, problems = setup_of(tmp_path, FLAVOR + cluster_queue("research", 8) + LOCAL)
    assert problems == []
    assert set(setup.cluster_queues) == {"research"}
    assert set(setup.local_queues) == {("team", "research")}
    # CRD defaults applied, as the API server stores the object
    spec = setup.cluster_queues["research"].data["spec"]
    assert spec["flavorFungibility"]["whenCanBorrow"] == "MayStopSearch"


def test_a_schema_and_a_cel_violation_are_located(tmp_path: Path) -> None:
    text = cluster_queue("research", 8, extra="\n        borrowingLimit: 2") + (
        "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
        "metadata: {name: q, namespace: team}\nspec: {clusterQueu: research}\n"
    )
    setup, problems = setup_of(tmp_path, text)
    assert setup.cluster_queues == {} and setup.local_queues == {}
    path = tmp_path / "queues.yaml"
    cel = [p for p in problems if "borrowingLimit must be nil when cohort is empty" in p]
    assert cel and cel[0].startswith(f"{path}:5:1: ClusterQueue research: spec: ")
    unknown = [p for p in problems if 'unknown field "spec.clusterQueu"' in p]
    assert unknown and unknown[0].startswith(f"{path}:19:8:")


def test_a_bad_limitrange_quantity_is_located(tmp_path: Path) -> None:
    text = (
        "apiVersion: v1\nkind: LimitRange\nmetadata: {name: l, namespace: team}\n"
        "spec:\n  limits:\n  - type: Container\n    default: {cpu: lots}\n"
    )
    _, problems = setup_of(tmp_path, text)
    assert len(problems) == 1 and problems[0].startswith(f"{tmp_path / 'queues.yaml'}:7:")
    assert "invalid quantity 'lots'" in problems[0]


# --- Workloads ---------------------------------------------------------------------------


def test_count_and_limits_as_requests() -> None:
    [podset] = jobset_workload(jobset(4, 4), QueueSetup())
    assert (podset.name, podset.count, podset.requests) == ("node", 4, {GPU: 16})


def test_count_is_replicas_times_min_of_parallelism_and_completions() -> None:
    js = jobset(4, 1)
    rjob = js["spec"]["replicatedJobs"][0]
    rjob["replicas"], rjob["template"]["spec"]["completions"] = 3, 2
    assert jobset_workload(js, QueueSetup())[0].count == 6


def test_init_containers_sidecars_overhead_and_limitrange(tmp_path: Path) -> None:
    setup, problems = setup_of(
        tmp_path,
        """apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: kata}
handler: kata
overhead: {podFixed: {cpu: 250m, memory: 64Mi}}
---
apiVersion: v1
kind: LimitRange
metadata: {name: defaults, namespace: team}
spec:
  limits:
  - type: Container
    defaultRequest: {memory: 1Gi}
    default: {cpu: "1"}
""",
    )
    assert problems == []
    js = jobset(
        1,
        1,
        runtimeClassName="kata",
        initContainers=[
            {"name": "side", "restartPolicy": "Always", "resources": {"requests": {"cpu": "500m"}}},
            {"name": "init", "resources": {"requests": {"cpu": "3"}}},
        ],
    )
    [podset] = jobset_workload(js, setup)
    # containers: cpu 1 (LimitRange default limit, then as request) + sidecar 500m;
    # init: 3 + 500m -> max 3500m, + 250m overhead; memory: 1Gi per container
    # (LimitRange defaultRequest) x3 (node, side, init -> max(2Gi, 2Gi)) + 64Mi
    assert podset.requests["cpu"] == 3750
    assert podset.requests["memory"] == 2 * 1024**3 + 64 * 1024**2
    # another namespace: no LimitRange defaults
    other = jobset_workload(js, setup, namespace="elsewhere")[0]
    assert "memory" in other.requests and other.requests["memory"] == 64 * 1024**2


def test_excluded_prefixes_and_transformations(tmp_path: Path) -> None:
    setup, _ = setup_of(
        tmp_path,
        """apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
resources:
  excludeResourcePrefixes: [example.com/]
  transformations:
  - input: nvidia.com/gpu
    strategy: Replace
    outputs: {gpu-units: "2"}
""",
    )
    js = jobset(2, 4)
    container = js["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    container["containers"][0]["resources"]["limits"]["example.com/nic"] = 1
    [podset] = jobset_workload(js, setup)
    assert podset.requests == {"gpu-units": 16}


# --- the verdict -------------------------------------------------------------------------


def verdict(
    tmp_path: Path,
    text: str,
    js: dict[str, Any],
    queue: str = "research",
    labels: dict[str, dict[str, str]] | None = None,
) -> list[str]:
    setup, problems = setup_of(tmp_path, text)
    assert problems == []
    job_path = tmp_path / "job.yaml"
    job_path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "trainer.kubeflow.org/v1alpha1",
                "kind": "TrainJob",
                "metadata": {
                    "name": "llm",
                    "namespace": "team",
                    "labels": {"kueue.x-k8s.io/queue-name": queue},
                },
                "spec": {"runtimeRef": {"name": "torch-distributed"}},
            }
        ),
        encoding="utf-8",
    )
    [job] = load([str(job_path)]).objects
    workload = jobset_workload(js, setup)
    return [str(p) for p in queue_problems([QueuedJob(job, workload)], setup, labels)]


def test_eight_gpus_fit_two_by_four_not_four_by_four(tmp_path: Path) -> None:
    text = FLAVOR + cluster_queue("research", 8) + LOCAL
    assert verdict(tmp_path, text, jobset(2, 4)) == []
    [problem] = verdict(tmp_path, text, jobset(4, 4))
    assert problem.startswith(f"{tmp_path / 'job.yaml'}:5:5: TrainJob team/llm: ")
    for part in ("16 nvidia.com/gpu", "flavor 'a100'", "ClusterQueue 'research'", "16 requested",
                 "8 available", "LocalQueue 'research'"):  # fmt: skip
        assert part in problem


def test_a_missing_local_queue(tmp_path: Path) -> None:
    [problem] = verdict(tmp_path, FLAVOR + cluster_queue("research", 8) + LOCAL, jobset(1, 1), "x")
    assert "LocalQueue 'x' does not exist in namespace 'team'" in problem


def test_a_namespace_selector_that_excludes_the_namespace(tmp_path: Path) -> None:
    text = FLAVOR + cluster_queue("research", 8) + LOCAL
    text = text.replace("namespaceSelector: {}", "namespaceSelector: {matchLabels: {team: ml}}")
    # the namespace's labels unknown: not judged
    assert verdict(tmp_path, text, jobset(1, 1)) == []
    [problem] = verdict(tmp_path, text, jobset(1, 1), labels={"team": {"team": "vision"}})
    assert "namespaceSelector that excludes namespace 'team'" in problem
    setup, _ = setup_of(tmp_path, text)
    job = load([str(tmp_path / "job.yaml")]).objects[0]
    work = jobset_workload(jobset(1, 1), setup)
    assert queue_problems([QueuedJob(job, work)], setup, {"team": {"team": "ml"}}) == []


def test_an_inactive_cluster_queue(tmp_path: Path) -> None:
    stopped = cluster_queue("research", 8).replace(
        "  namespaceSelector", "  stopPolicy: Hold\n  namespaceSelector"
    )
    [problem] = verdict(tmp_path, FLAVOR + stopped + LOCAL, jobset(1, 1))
    assert "is inactive: it is stopped (stopPolicy Hold)" in problem


def test_a_flavor_not_among_the_inputs_is_a_warning_and_taken_to_exist(tmp_path: Path) -> None:
    from compiler.queue.verdict import missing_flavors

    text = cluster_queue("research", 8) + LOCAL
    assert verdict(tmp_path, text, jobset(2, 4)) == []
    [problem] = verdict(tmp_path, text, jobset(4, 4))
    assert "16 requested, 8 available" in problem
    setup, _ = setup_of(tmp_path, text)
    [warning] = missing_flavors(setup)
    assert str(warning).startswith(f"{tmp_path / 'queues.yaml'}:10:7:") and "'a100'" in str(warning)


def test_a_resource_no_group_covers(tmp_path: Path) -> None:
    js = jobset(1, 1)
    pod = js["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    pod["containers"][0]["resources"]["requests"] = {"cpu": "2"}
    [problem] = verdict(tmp_path, FLAVOR + cluster_queue("research", 8) + LOCAL, js)
    assert "requests 2 cpu, which no resource group of ClusterQueue 'research' covers" in problem


def test_a_flavor_the_node_selector_excludes(tmp_path: Path) -> None:
    js = jobset(1, 1, nodeSelector={"gpu": "h100"})
    [problem] = verdict(tmp_path, FLAVOR + cluster_queue("research", 8) + LOCAL, js)
    assert "flavor a100 doesn't match node affinity" in problem


def test_the_cohort_lends_within_limits(tmp_path: Path) -> None:
    """research (8) borrows from its cohort: other lends all but 2 of its 8."""
    other = cluster_queue("other", 8, "pool", "\n        lendingLimit: 6")
    text = FLAVOR + cluster_queue("research", 8, "pool") + other + LOCAL
    assert verdict(tmp_path, text, jobset(4, 4) | {}) != []  # 16 > 8 + 6
    assert verdict(tmp_path, text, jobset(7, 2)) == []  # 14 <= 14
    setup, _ = setup_of(tmp_path, text)
    tree = quota_tree(setup)
    assert potential_available(tree.queues["research"], ("a100", GPU)) == 14
    limited = cluster_queue("research", 8, "pool", "\n        borrowingLimit: 1") + other
    setup, _ = setup_of(tmp_path, FLAVOR + limited + LOCAL)
    tree = quota_tree(setup)
    assert potential_available(tree.queues["research"], ("a100", GPU)) == 9
    workload = jobset_workload(jobset(5, 2), setup)
    assert not assign_flavors(workload, "research", setup, tree).fits


@pytest.mark.parametrize("when_can_borrow", ["MayStopSearch", "TryNextFlavor"])
def test_fungibility_picks_the_flavor_that_does_not_borrow(
    tmp_path: Path, when_can_borrow: str
) -> None:
    two = FLAVOR + FLAVOR.replace("a100", "h100") + cluster_queue("other", 8, "pool")
    queue = cluster_queue("research", 2, "pool").replace(
        "        nominalQuota: 2",
        f"        nominalQuota: 2\n    - name: h100\n      resources:\n      - name: {GPU}\n"
        f"        nominalQuota: 4\n  flavorFungibility: {{whenCanBorrow: {when_can_borrow}}}",
    )
    setup, problems = setup_of(tmp_path, two + queue + LOCAL)
    assert problems == []
    tree = quota_tree(setup)
    result = assign_flavors(jobset_workload(jobset(1, 4), setup), "research", setup, tree)
    expected = "a100" if when_can_borrow == "MayStopSearch" else "h100"
    assert result.fits and result.flavors[0][GPU] == expected


# --- delivery ----------------------------------------------------------------------------


def test_a_rendered_jobset_made_for_the_jobset_integration() -> None:
    from compiler.apiserver.manifest import Manifest, SourceMap
    from compiler.queue.delivery import for_jobset_integration, jobset_integration_problems

    rendered = jobset(2, 4)
    rendered["spec"]["suspend"] = False
    rendered["metadata"]["ownerReferences"] = [{"kind": "TrainJob", "name": "llm"}]
    before = jobset_integration_problems(Manifest(rendered, SourceMap("js", {})))
    assert len(before) == 3  # no label, not suspended, owned by a TrainJob
    labels = {"kueue.x-k8s.io/queue-name": "research", "kueue.x-k8s.io/priority-class": "hi"}
    out = for_jobset_integration(rendered, labels)
    assert jobset_integration_problems(Manifest(out, SourceMap("js", {}))) == []
    assert out["metadata"]["labels"] == labels and out["spec"]["suspend"] is True
    assert "ownerReferences" not in out["metadata"]
    assert rendered["spec"]["suspend"] is False  # the input is not changed


# --- quota impact ------------------------------------------------------------------------


def test_quota_impact_per_cluster_queue_and_resource(tmp_path: Path) -> None:
    from compiler.queue.impact import format_impact, queue_usage, quota_impact

    setup, _ = setup_of(tmp_path, FLAVOR + cluster_queue("research", 8) + LOCAL)
    job_path = tmp_path / "job.yaml"
    job_path.write_text(
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata:\n  name: llm\n"
        "  namespace: team\n  labels: {kueue.x-k8s.io/queue-name: research}\n"
        "spec: {runtimeRef: {name: torch-distributed}}\n"
    )
    [job] = load([str(job_path)]).objects
    before = queue_usage([QueuedJob(job, jobset_workload(jobset(2, 4), setup))], setup)
    after = queue_usage([QueuedJob(job, jobset_workload(jobset(4, 4), setup))], setup)
    assert before == {("research", GPU): 8} and after == {("research", GPU): 16}
    rows = quota_impact(before, after, setup)
    assert format_impact(rows) == f"ClusterQueue research: {GPU} 8 -> 16 (nominal 8; over by 8)"
    assert quota_impact(before, before, setup) == []


def test_a_missing_workload_priority_class(tmp_path: Path) -> None:
    setup, _ = setup_of(tmp_path, FLAVOR + cluster_queue("research", 8) + LOCAL)
    job_path = tmp_path / "job.yaml"
    job_path.write_text(
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata:\n  name: llm\n"
        "  namespace: team\n  labels: {kueue.x-k8s.io/queue-name: research, "
        "kueue.x-k8s.io/priority-class: urgent}\nspec: {runtimeRef: {name: torch-distributed}}\n"
    )
    [job] = load([str(job_path)]).objects
    workload = jobset_workload(jobset(1, 1), setup)
    [problem] = queue_problems([QueuedJob(job, workload)], setup)
    assert "WorkloadPriorityClass 'urgent'" in problem.message
    wpc = "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\n"
    wpc += "metadata: {name: urgent}\nvalue: 1000\n"
    setup, problems = setup_of(tmp_path, FLAVOR + cluster_queue("research", 8) + LOCAL + wpc)
    assert problems == [] and queue_problems([QueuedJob(job, workload)], setup) == []


def test_a_trainjob_the_controller_cannot_build_gives_errors_not_a_traceback() -> None:
    from compiler.queue.workload import trainjob_workload

    case = Path(__file__).resolve().parents[2] / "golden" / "mpi-error-empty-implementation"
    loaded = load([str(case / "runtime.yaml"), str(case / "trainjob.yaml")])
    [job] = loaded.of_kind("TrainJob")
    [runtime] = [m for m in loaded.objects if m.kind.endswith("TrainingRuntime")]
    workload, errors = trainjob_workload(job.data, runtime.data["spec"], QueueSetup(), "v2.2.0")
    assert workload == [] and "MPI implementation" in errors[0]
