"""The plugin registry, in trainc's canonical order.

Upstream collects the plugins of a phase from a Go map, so their order inside a phase
is random per controller process (R-2.3). It only shows where two plugins touch the
same list, e.g. PlainML and XGBoost/Flux both appending env vars to the trainer
container. trainc fixes one order: the framework-specific ML policy plugins first,
PlainML after them, then the PodGroup plugins, then JobSet. Objects are emitted
sorted (see ``compiler.emit``), so builder order does not show in the output.
"""

from __future__ import annotations

from collections.abc import Sequence

from compiler.render.framework import Phases, Plugin
from compiler.render.plugins.coscheduling import CoSchedulingPlugin
from compiler.render.plugins.flux import FluxPlugin
from compiler.render.plugins.jax import JAXPlugin
from compiler.render.plugins.jobset import JobSetPlugin
from compiler.render.plugins.mpi import MPIPlugin
from compiler.render.plugins.plainml import PlainMLPlugin
from compiler.render.plugins.torch import TorchPlugin
from compiler.render.plugins.volcano import VolcanoPlugin
from compiler.render.plugins.xgboost import XGBoostPlugin


def default_plugins(
    priority_classes: frozenset[str] = frozenset(), extensions: Sequence[Plugin] = ()
) -> list[Plugin]:
    """Upstream's plugins; a runtime's opt-in ``extensions`` (``compiler.render.extensions``)
    run after every upstream ML policy plugin, so they see (and may rewrite) its result."""
    return [
        TorchPlugin(),
        FluxPlugin(),
        MPIPlugin(),
        JAXPlugin(),
        XGBoostPlugin(),
        PlainMLPlugin(),
        *extensions,
        CoSchedulingPlugin(),
        VolcanoPlugin(priority_classes),
        JobSetPlugin(),
    ]


def default_phases(priority_classes: frozenset[str] = frozenset()) -> Phases:
    return Phases.of(default_plugins(priority_classes))
