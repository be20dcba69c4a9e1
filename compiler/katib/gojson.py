"""Numbers as Kubernetes' unstructured decoder keeps them, before Katib serialises a trial
template with Go's ``encoding/json`` (:func:`compiler.kube.gotext.go_json`): Katib
substitutes ``${trialParameters.x}`` into that *text*, so its bytes must be Go's.

    >>> from compiler.kube.gotext import go_json
    >>> go_json(normalise_numbers({"b": [1.0, 0.5, 1e21], "a": "<x>"}))
    '{"a":"\\\\u003cx\\\\u003e","b":[1,0.5,1e+21]}'
"""

from __future__ import annotations

from typing import Any

__all__ = ["normalise_numbers"]


def normalise_numbers(value: Any) -> Any:
    """An integral number that fits an int64 is an int, every other number a float
    (``1.0`` -> ``1``), as the unstructured JSON decoder reads them."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, float):
        if value.is_integer() and -(2**63) <= value < 2**63:
            return int(value)
        return value
    if isinstance(value, int):
        return value if -(2**63) <= value < 2**63 else float(value)
    if isinstance(value, dict):
        return {k: normalise_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [normalise_numbers(v) for v in value]
    return value
