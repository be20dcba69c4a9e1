"""Run the Kueue oracle: the pinned Kueue release's own code (tests/kueue/oracle), one
process answering one JSON request per line (:class:`tests.go_oracle.JsonLinesOracle`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.go_oracle import JsonLinesOracle, OracleUnavailable

__all__ = ["OracleUnavailable", "ask", "oracle_binary"]

_ORACLE = JsonLinesOracle("Kueue", Path(__file__).resolve().parent / "oracle", "kueue-oracle")


def oracle_binary() -> Path:
    """Build the oracle if needed (``go build`` caches); its path."""
    return _ORACLE.binary


def ask(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The oracle's answers to ``requests``, in order."""
    return _ORACLE.ask(requests)
