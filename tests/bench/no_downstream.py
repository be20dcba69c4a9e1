"""``trainc`` with the checks below the JobSet left out (``python -m tests.bench.no_downstream
render ...``): what a render costs without the ``check_downstream`` stage, so that its
share can be told apart in ``make bench``'s "render vs Go" lines. Only for benchmarks:
the stage's refusals are never reported."""

from __future__ import annotations

from typing import Any

from compiler.cli import main
from compiler.plan import stages


def _nothing(*_: Any, **__: Any) -> list[Any]:
    return []


# read at call time by stages.check_downstream (a name it imported, not its own)
stages.__dict__["downstream_problems"] = _nothing

if __name__ == "__main__":
    raise SystemExit(main())
