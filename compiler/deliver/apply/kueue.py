"""What a later apply leaves to Kueue on a JobSet it admitted.

Kueue admits a queued JobSet with an Update under its own field manager
(:data:`compiler.queue.delivery.KUEUE_MANAGER`), which takes ``spec.suspend`` and the
flavor's node selector, tolerations, labels and annotations away from trainc's apply.
:func:`left_to_kueue` leaves those values out of a later apply: omitted, they stay (apply
removes only what its own manager owns), and nothing is sent that would re-suspend the
JobSet or conflict with Kueue. Before admission trainc still owns ``spec.suspend: true``
and keeps sending it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from compiler.deliver.apply.live import owned_fields, without_fields
from compiler.queue.delivery import KUEUE_MANAGER
from compiler.queue.verdict import QUEUE_LABEL

__all__ = ["left_to_kueue"]


def left_to_kueue(
    desired: Mapping[str, Any], live: Mapping[str, Any], manager: str
) -> Mapping[str, Any]:
    """``desired`` without the values Kueue set on its ``live`` version and ``manager``
    (trainc's field manager) no longer owns: ``desired`` itself for anything but a queued
    JobSet, or when Kueue set nothing."""
    labels = (desired.get("metadata") or {}).get("labels") or {}
    if desired.get("kind") != "JobSet" or not labels.get(QUEUE_LABEL):
        return desired
    theirs = owned_fields(live, KUEUE_MANAGER, operation=None)
    if not theirs:
        return desired
    kept: dict[str, Any] = without_fields(dict(desired), theirs, owned_fields(live, manager))
    return kept
