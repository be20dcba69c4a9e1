"""The context files of a render by chunks, loaded once per process (issue 28).

Every chunk (:mod:`compiler.plan.chunks`) runs the chain on the context files (runtimes,
PriorityClasses, mixed files) plus its own job files. The context is the same for every
chunk of a plan, so its load (parse, the API server's create path on each runtime) is
done once per process and each chunk's own files are loaded after it
(:func:`compiler.load.loader.load_texts_collect`'s ``start``): the same answer as
loading them all, at the cost of a chunk's own files. The parent loads it before the
workers fork (:func:`compiler.plan.chunks.run_parts` renders the context alone first),
so they share it instead of loading it again. The manifests are shared too, which is
what a whole render does with one runtime and its many TrainJobs: the stages copy an
object before they change it, and what is cached per runtime object (its JobSet
template after the Go round trip, :func:`compiler.render.runtime_info.typed_template`)
is then computed once per process, not once per chunk.
"""

from __future__ import annotations

from collections.abc import Sequence

from compiler.apiserver.crds import CrdSet
from compiler.load.loader import LoadState, TextSource, load_state

__all__ = ["context_state"]

Texts = Sequence[TextSource]

# The last context loaded: (its texts, namespace), the CRDs it was loaded with, the state.
# One entry: a process renders one plan's chunks at a time.
_LAST: list[tuple[tuple[tuple[TextSource, ...], str], CrdSet, LoadState]] = []


def context_state(texts: Texts, default_namespace: str, crds: CrdSet) -> LoadState:
    """The loader's state after the context files ``texts`` (display name, bytes, first line),
    loaded once per process for a given list, namespace and CRD set."""
    key = (tuple(texts), default_namespace)
    if _LAST and _LAST[0][1] is crds and _LAST[0][0] == key:
        return _LAST[0][2]
    state = load_state(list(texts), default_namespace, crds)
    _LAST[:] = [(key, crds, state)]
    return state
