"""Issue 27's table on the real API server: each bad Job the JobSet controller would make
(and its pod template as a Pod) is refused with exactly the messages the fixture
``tests/live/fixtures/workload-refusals.yaml`` records, and the valid controls pass."""

from __future__ import annotations

import pytest
import yaml

from tests.live.controlplane import ControlPlane, Json
from tests.live.workload_refusals import FIXTURE, ROWS, answer, job_for, pod_for, prepare

RECORDED: dict[str, Json] = {
    row["name"]: row for row in yaml.safe_load(FIXTURE.read_text())["rows"]
}
ISSUE_TABLE = {
    # The issue's words for each row; the fixture's Job message must contain them.
    "cpu-request-above-limit": 'resources.requests: Invalid value: "4": must be less than '
    "or equal to cpu limit of 2",
    "gpu-request-not-limit": "must be equal to nvidia.com/gpu limit of 2",
    "gpu-requests-only": "resources.limits: Required value: Limit must be set for non "
    "overcommitable resources",
    "volume-mount-without-volume": 'volumeMounts[0].name: Not found: "data"',
    "env-name-invalid": "a valid environment variable name must consist only of printable "
    "ASCII characters other than '='",
    "restart-policy-always": 'spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"',
    "toleration-exists-with-value": "value must be empty when `operator` is 'Exists'",
    "node-selector-value-space": "a valid label must be an empty string or consist of "
    "alphanumeric characters",
}


def test_fixture_covers_the_issue_table() -> None:
    assert {name for name, *_ in ROWS} == set(RECORDED)
    for name, words in ISSUE_TABLE.items():
        assert RECORDED[name]["job"]["code"] == 422, name
        assert words in RECORDED[name]["job"]["message"], name
    for name in RECORDED:
        if name.startswith("control-"):
            assert RECORDED[name]["job"] == {"code": 201}, name


@pytest.mark.parametrize("row", ROWS, ids=[name for name, *_ in ROWS])
def test_api_server_answers_as_recorded(
    control_plane: ControlPlane, row: tuple[str, str, Json, Json]
) -> None:
    name, _, container, pod = row
    client = control_plane.client()
    try:
        prepare(client)
        job = job_for(container, pod)
        assert answer(client, job) == RECORDED[name]["job"]
        assert answer(client, pod_for(job)) == RECORDED[name]["podAnswer"]
    finally:
        client.close()
