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


if __name__ == "__main__":
    # Only when run: pytest imports every module for its doctests, and a patch made at
    # import would switch the checks off for the whole test session. The stage reads the
    # name at call time (a name it imported, not its own).
    stages.__dict__["downstream_problems"] = _nothing
    raise SystemExit(main())
