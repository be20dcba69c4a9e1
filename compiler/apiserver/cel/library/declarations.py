"""How a library declares its functions, once for each of the two environments.

Every expression is compiled twice (see :mod:`compiler.apiserver.cel.k8s`), so each
library says what it adds twice:

* a :class:`Declaration` is one overload of the type-checking environment, with the
  API server's overload id and types, written as the type specs the engine's YAML
  config reads (``{"type_name": "list", "params": [{"type_name": "string"}]}``);
* an :class:`Implementation` is one overload of the run environment: Python code over
  plain values, declared with the engine's own types (:class:`RunTypes`), where a
  Quantity, URL, Semver or format is a map and an IP or CIDR a string.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

TypeSpec = dict[str, Any]


def t(name: str, *params: TypeSpec) -> TypeSpec:
    spec: TypeSpec = {"type_name": name}
    if params:
        spec["params"] = list(params)
    return spec


A: Final[TypeSpec] = {"type_name": "A", "is_type_param": True}
STR, INT, UINT, DBL, BOOL, BYTES, DYN = (
    t("string"),
    t("int"),
    t("uint"),
    t("double"),
    t("bool"),
    t("bytes"),
    t("dyn"),
)
TS, DUR = t("google.protobuf.Timestamp"), t("google.protobuf.Duration")
LIST_STR = t("list", STR)

# the libraries' own types, as the API server names them in its messages
QUANTITY: Final = t("kubernetes.Quantity")
URL: Final = t("kubernetes.URL")
SEMVER: Final = t("kubernetes.Semver")
NAMED_FORMAT: Final = t("kubernetes.NamedFormat")
IP: Final = t("net.IP")
CIDR: Final = t("net.CIDR")


@dataclass(frozen=True, slots=True)
class Declaration:
    """One overload of function ``name`` as the type-checking environment declares it."""

    name: str
    id: str
    args: Sequence[TypeSpec]
    ret: TypeSpec
    target: TypeSpec | None = None  # the receiver of a member function

    def overload(self) -> dict[str, Any]:
        """The overload as the engine's YAML config spells it."""
        overload: dict[str, Any] = {"id": self.id, "args": list(self.args), "return": self.ret}
        if self.target is not None:
            overload["target"] = self.target
        return overload


@dataclass(frozen=True, slots=True)
class RunTypes:
    """The engine's types the run overloads are declared with (made once per engine)."""

    cel: Any  # the engine's ``cel.Type``: STRING, INT, List(...), Map(...), ...
    map: Any  # map(dyn, dyn): how a Quantity, URL, Semver or format travels
    list: Any  # list(dyn)

    @classmethod
    def of(cls, cel_type: Any) -> RunTypes:
        return cls(cel_type, cel_type.Map(cel_type.DYN, cel_type.DYN), cel_type.List(cel_type.DYN))


@dataclass(frozen=True, slots=True)
class Implementation:
    """One overload of function ``name`` in the run environment: Python over plain values.

    A member function receives its receiver as the first argument.
    """

    name: str
    id: str
    params: Sequence[Any]
    ret: Any
    impl: Callable[..., Any]
    member: bool = False
