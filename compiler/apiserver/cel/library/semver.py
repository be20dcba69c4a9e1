"""The Kubernetes semver library (k8s.io/apiserver ``pkg/cel/library/semverlib.go``).

``semver("1.2.3")`` is a ``kubernetes.Semver``, parsed as blang/semver's ``Parse`` does,
with its error texts. The API server enables version 1 of the library, which adds the
normalising overloads ``semver(text, true)`` and ``isSemver(text, true)`` (a leading
``v``, leading zeroes and a missing minor or patch are accepted). ``compareTo``,
``isLessThan`` and ``isGreaterThan`` run in
:mod:`~compiler.apiserver.cel.library.compare`, shared with quantity.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from compiler.apiserver.cel.library.declarations import (
    BOOL,
    INT,
    SEMVER,
    STR,
    Declaration,
    Implementation,
    RunTypes,
)
from compiler.apiserver.cel.library.values import LibraryError, tagged, untag
from compiler.kube.gotext import go_quote

_PARTS: Final = ("major", "minor", "patch")


def declarations() -> list[Declaration]:
    s = SEMVER
    out = [
        Declaration("semver", "string_to_semver", [STR], s),
        Declaration("semver", "string_bool_to_semver", [STR, BOOL], s),
        Declaration("isSemver", "is_semver_string", [STR], BOOL),
        Declaration("isSemver", "is_semver_string_bool", [STR, BOOL], BOOL),
        Declaration("isGreaterThan", "semver_is_greater_than", [s], BOOL, s),
        Declaration("isLessThan", "semver_is_less_than", [s], BOOL, s),
        Declaration("compareTo", "semver_compare_to", [s], INT, s),
    ]
    out += [Declaration(part, f"semver_{part}", [], INT, s) for part in _PARTS]
    return out


def implementations(types: RunTypes) -> list[Implementation]:
    T, M = types.cel, types.map
    out = [
        Implementation("semver", "k8s_string_to_semver", [T.STRING], M, _impl_semver),
        Implementation("semver", "k8s_string_bool_to_semver", [T.STRING, T.BOOL], M, _impl_semver),
        Implementation("isSemver", "k8s_is_semver", [T.STRING], T.BOOL, _impl_is_semver),
        Implementation(
            "isSemver", "k8s_is_semver_bool", [T.STRING, T.BOOL], T.BOOL, _impl_is_semver
        ),
    ]
    out += [
        Implementation(part, f"k8s_semver_{part}", [M], T.INT, _semver_part(index), member=True)
        for index, part in enumerate(_PARTS)
    ]
    return out


_SEMVER_NUMBERS: Final = frozenset("0123456789")
_SEMVER_ALPHANUM: Final = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-"
)


@dataclass(frozen=True)
class Semver:
    major: int
    minor: int
    patch: int
    pre: tuple[int | str, ...]

    def compare(self, other: Semver) -> int:
        for a, b in (
            (self.major, other.major),
            (self.minor, other.minor),
            (self.patch, other.patch),
        ):
            if a != b:
                return 1 if a > b else -1
        if not self.pre and not other.pre:
            return 0
        if not self.pre:
            return 1
        if not other.pre:
            return -1
        for a2, b2 in zip(self.pre, other.pre, strict=False):
            result = _compare_pre(a2, b2)
            if result:
                return result
        if len(self.pre) == len(other.pre):
            return 0
        return -1 if len(self.pre) < len(other.pre) else 1

    def text(self) -> str:
        base = f"{self.major}.{self.minor}.{self.patch}"
        if self.pre:
            base += "-" + ".".join(str(p) for p in self.pre)
        return base


def _compare_pre(a: int | str, b: int | str) -> int:
    if isinstance(a, int) and not isinstance(b, int):
        return -1
    if not isinstance(a, int) and isinstance(b, int):
        return 1
    if a == b:
        return 0
    return 1 if a > b else -1  # type: ignore[operator]


def _parse_uint(text: str) -> int:
    if not text or not text.isdigit() or not text.isascii():
        raise LibraryError(f'strconv.ParseUint: parsing "{text}": invalid syntax')
    value = int(text)
    if value >= 1 << 64:
        raise LibraryError(f'strconv.ParseUint: parsing "{text}": value out of range')
    return value


def _only(text: str, chars: frozenset[str]) -> bool:
    return all(c in chars for c in text)


def _parse_semver(text: str) -> Semver:
    if not text:
        raise LibraryError("Version string empty")
    parts = text.split(".", 2)
    if len(parts) != 3:
        raise LibraryError("No Major.Minor.Patch elements found")
    numbers = []
    for label, part in (("major", parts[0]), ("minor", parts[1])):
        if not _only(part, _SEMVER_NUMBERS):
            raise LibraryError(f"Invalid character(s) found in {label} number {go_quote(part)}")
        if len(part) > 1 and part[0] == "0":
            raise LibraryError(
                f"{label.capitalize()} number must not contain leading zeroes {go_quote(part)}"
            )
        numbers.append(_parse_uint(part))
    patch_text = parts[2]
    build: list[str] = []
    pre_texts: list[str] = []
    if "+" in patch_text:
        index = patch_text.index("+")
        build = patch_text[index + 1 :].split(".")
        patch_text = patch_text[:index]
    if "-" in patch_text:
        index = patch_text.index("-")
        pre_texts = patch_text[index + 1 :].split(".")
        patch_text = patch_text[:index]
    if not _only(patch_text, _SEMVER_NUMBERS):
        raise LibraryError(f"Invalid character(s) found in patch number {go_quote(patch_text)}")
    if len(patch_text) > 1 and patch_text[0] == "0":
        raise LibraryError(f"Patch number must not contain leading zeroes {go_quote(patch_text)}")
    patch = _parse_uint(patch_text)
    pre: list[int | str] = []
    for item in pre_texts:
        if not item:
            raise LibraryError("Prerelease is empty")
        if _only(item, _SEMVER_NUMBERS):
            if len(item) > 1 and item[0] == "0":
                raise LibraryError(
                    f"Numeric PreRelease version must not contain leading zeroes {go_quote(item)}"
                )
            pre.append(_parse_uint(item))
        elif _only(item, _SEMVER_ALPHANUM):
            pre.append(item)
        else:
            raise LibraryError(f"Invalid character(s) found in prerelease {go_quote(item)}")
    for item in build:
        if not item:
            raise LibraryError("Build meta data is empty")
        if not _only(item, _SEMVER_ALPHANUM):
            raise LibraryError(f"Invalid character(s) found in build meta data {go_quote(item)}")
    return Semver(numbers[0], numbers[1], patch, tuple(pre))


def _normalize_semver(text: str) -> Semver:
    text = text.removeprefix("v")
    parts = text.split(".", 2)
    for index, part in enumerate(parts):
        if len(part) > 1:
            part = part.lstrip("0")
            if not part or part[0] not in "0123456789":
                part = "0" + part
            parts[index] = part
    if len(parts) < 3:
        if any(c in parts[-1] for c in "+-"):
            raise LibraryError("short version cannot contain PreRelease/Build meta data")
        parts += ["0"] * (3 - len(parts))
    return _parse_semver(".".join(parts))


def _encode_semver(version: Semver) -> dict[str, Any]:
    # build metadata is left out: Go compares semvers without it
    return tagged("Semver", v=version.text())


def decode_semver(value: Any) -> Semver:
    return _parse_semver(str(untag(value, "Semver").get("v", "")))


def _impl_semver(text: str, normalize: bool = False) -> dict[str, Any]:
    return _encode_semver(_normalize_semver(text) if normalize else _parse_semver(text))


def _impl_is_semver(text: str, normalize: bool = False) -> bool:
    try:
        _normalize_semver(text) if normalize else _parse_semver(text)
    except LibraryError:
        return False
    return True


def _int64(value: int) -> int:
    value &= (1 << 64) - 1
    return value - (1 << 64) if value >> 63 else value


def _semver_part(index: int) -> Callable[[Any], int]:
    def get(value: Any) -> int:
        version = decode_semver(value)
        return _int64((version.major, version.minor, version.patch)[index])

    return get
