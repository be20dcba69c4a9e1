"""What a policy sees: an input object as loaded, or an output object as rendered."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from compiler.apiserver.manifest import Manifest
from compiler.errors import ObjectRef


@dataclass
class PolicyObject:
    """An object a policy sees: input as loaded, or output as rendered.

    ``origin`` is where to point a finding: the manifest itself for inputs, the
    TrainJob that produced it for outputs.
    """

    data: dict[str, Any]
    origin: Manifest
    stage: str = "input"
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ref(self) -> ObjectRef:
        metadata = self.data.get("metadata") or {}
        return ObjectRef(
            str(self.data.get("kind", "")), str(metadata.get("name", "")), metadata.get("namespace")
        )
