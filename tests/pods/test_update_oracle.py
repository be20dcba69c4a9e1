"""The JobSet webhook's update verdicts (``ValidateUpdate``) against the real webhook.

Each golden JobSet, stored as created (CRD defaults and the mutating webhook), is
updated: unchanged, one more replica, a pod template label (with and without
suspension), an env value, ``managedBy``, an added replicated job. trainc's verdict and
message equal the webhook's, word for word.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from compiler.expand import _crd_defaults, webhook_defaults
from compiler.expand.jobset_webhook import invalid_message, validate_update
from compiler.render.info import json_copy
from tests.go_oracle import oracle_needed
from tests.pods.cases import golden_jobsets
from tests.pods.oracle import oracle_binary, update_oracle

Change = Callable[[dict[str, Any]], None]


def _pod(js: dict[str, Any]) -> dict[str, Any]:
    pod: dict[str, Any] = js["spec"]["replicatedJobs"][-1]["template"]["spec"]["template"]
    return pod


def _label(js: dict[str, Any]) -> None:
    _pod(js).setdefault("metadata", {}).setdefault("labels", {})["team"] = "b"


def _suspended_label(js: dict[str, Any]) -> None:
    js["spec"]["suspend"] = True
    _label(js)


def _env(js: dict[str, Any]) -> None:
    _pod(js)["spec"]["containers"][0].setdefault("env", []).append({"name": "X", "value": "1"})


def _replicas(js: dict[str, Any]) -> None:
    js["spec"]["replicatedJobs"][-1]["replicas"] += 1


def _managed_by(js: dict[str, Any]) -> None:
    js["spec"]["managedBy"] = "example.com/other"


def _added(js: dict[str, Any]) -> None:
    extra = copy.deepcopy(js["spec"]["replicatedJobs"][-1])
    extra["name"] = "extra"
    js["spec"]["replicatedJobs"].append(extra)


CHANGES: dict[str, Change] = {
    "unchanged": lambda js: None,
    "label": _label,
    "suspended-label": _suspended_label,
    "env": _env,
    "replicas": _replicas,
    "managed-by": _managed_by,
    "added-job": _added,
}


def test_update_verdicts_and_messages_are_the_webhooks() -> None:
    with oracle_needed("`make pods-oracle` builds it"):
        oracle_binary("jobset")
    pairs, names = [], []
    for case, jobset in list(golden_jobsets())[::4]:
        old = webhook_defaults(_crd_defaults(json_copy(jobset)))
        for change_name, change in CHANGES.items():
            new = json_copy(old)
            change(new)
            pairs.append({"old": old, "new": _crd_defaults(new)})
            names.append(f"{case}:{change_name}")
    answers = update_oracle(pairs)
    different = []
    refused = 0
    for name, pair, answer in zip(names, pairs, answers, strict=True):
        errors = validate_update(pair["old"], pair["new"])
        ours = {"allowed": not errors}
        if errors:
            ours["message"] = invalid_message(pair["new"]["metadata"]["name"], errors)
            refused += 1
        theirs = {
            "allowed": answer["allowed"],
            **({"message": answer["message"]} if answer.get("message") else {}),
        }
        if ours != theirs:
            different.append(f"{name}: trainc {ours} != webhook {theirs}")
    print(
        f"update-oracle: {len(pairs) - len(different)}/{len(pairs)} identical ({refused} refused)"
    )
    assert not different, "\n".join(different[:10])
    assert refused > len(pairs) // 2  # most changes are refused: the test sees messages
