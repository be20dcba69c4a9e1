"""Script templates that upstream plugins embed, read from the pinned Trainer module.

The Flux plugin (Trainer v2.3.0 ``pkg/runtime/framework/plugins/flux``) embeds three
files from its ``templates/`` directory and fills them with Go's ``fmt.Sprintf``: they
are format strings, not ``text/template`` documents. Their only verb is ``%s`` (read
them: ``broker.toml`` has 4, ``init.sh`` 4, ``entrypoint.sh`` 3). trainc does not copy
them; :func:`flux_templates` reads them once per process from the module that setup
fetched, and :func:`go_sprintf` fills them as Go would.

Only what the templates use is implemented: ``%s`` with string arguments and the
``%%`` escape. Any other verb, or a slot count other than the one the plugin fills,
means the module is not the version trainc emulates; the loader reports that as a
:class:`~compiler.errors.SetupError` instead of guessing.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from compiler.errors import SetupError
from compiler.upstream.artifacts import DEFAULT_TRAINER_VERSION, upstream
from compiler.upstream.versions import PerVersion

FLUX_TEMPLATE_DIR = "pkg/runtime/framework/plugins/flux/templates"

# File name -> number of %s slots the v2.3.0 Flux plugin fills; before v2.3.0 the
# entrypoint had no resource spec slot (see compiler.render.plugins.flux RESOURCE_SPEC).
FLUX_TEMPLATE_SLOTS = {"broker.toml": 4, "init.sh": 4, "entrypoint.sh": 3}
SLOTS_BY_VERSION = PerVersion(
    (("v2.2.0", {**FLUX_TEMPLATE_SLOTS, "entrypoint.sh": 2}), ("v2.3.0", FLUX_TEMPLATE_SLOTS))
)


def _verbs(template: str) -> list[str]:
    """The verbs of a format string, in order (``%%`` included as ``%``).

    >>> _verbs("a %s b %% c %s")
    ['s', '%', 's']
    """
    verbs: list[str] = []
    index = template.find("%")
    while index != -1:
        if index + 1 >= len(template):
            raise ValueError("format string ends with a lone '%'")
        verbs.append(template[index + 1])
        index = template.find("%", index + 2)
    return verbs


def count_slots(template: str) -> int:
    """How many arguments ``template`` consumes; only ``%s`` and ``%%`` are accepted.

    >>> count_slots('default_bind = "%s"\\nhosts = "%s"\\n100%%')
    2
    """
    verbs = _verbs(template)
    unsupported = sorted({v for v in verbs if v not in ("s", "%")})
    if unsupported:
        raise ValueError(f"unsupported format verbs: {', '.join('%' + v for v in unsupported)}")
    return verbs.count("s")


def go_sprintf(template: str, *args: str) -> str:
    """Go ``fmt.Sprintf(template, args...)`` for templates whose verbs are ``%s`` and ``%%``.

    Arguments are inserted verbatim and never re-scanned, so a ``%p`` inside an argument
    stays as it is::

        >>> go_sprintf('bind = "%s" (%s%%)', "tcp://eth0:%p", "100")
        'bind = "tcp://eth0:%p" (100%)'

    A different number of arguments than ``%s`` slots is refused (Go would print
    ``%!s(MISSING)`` or ``%!(EXTRA ...)``; no pinned template does that).
    """
    slots = count_slots(template)
    if slots != len(args):
        raise ValueError(f"format string has {slots} %s slots, got {len(args)} arguments")
    parts: list[str] = []
    position = 0
    remaining = iter(args)
    index = template.find("%")
    while index != -1:
        parts.append(template[position:index])
        parts.append(next(remaining) if template[index + 1] == "s" else "%")
        position = index + 2
        index = template.find("%", position)
    parts.append(template[position:])
    return "".join(parts)


@dataclass(frozen=True)
class FluxTemplates:
    """The text of the Flux plugin's three templates."""

    broker: str
    init: str
    entrypoint: str


def _read_template(version: str, name: str) -> str:
    path = upstream(version).path(f"{FLUX_TEMPLATE_DIR}/{name}")
    try:
        # Bytes as go:embed holds them: no newline translation.
        text = path.read_bytes().decode("utf-8")
    except OSError as error:
        raise SetupError(
            f"the Flux script template {path} is missing from the pinned Trainer module "
            f"({error.strerror}); Flux runtimes cannot be rendered without it: run `make setup`"
        ) from error
    try:
        slots = count_slots(text)
    except ValueError as error:
        raise SetupError(
            f"the Flux script template {path} is not Trainer {version}'s: {error}"
        ) from error
    expected = SLOTS_BY_VERSION.at(version)[name]
    if slots != expected:
        raise SetupError(
            f"the Flux script template {path} has {slots} %s slots, the Trainer {version} Flux "
            f"plugin fills {expected}: the module is not the pinned version; run `make setup`"
        )
    return text


@cache
def flux_templates(version: str = DEFAULT_TRAINER_VERSION) -> FluxTemplates:
    """The Flux templates of Trainer ``version``, read and checked once per process."""
    return FluxTemplates(
        broker=_read_template(version, "broker.toml"),
        init=_read_template(version, "init.sh"),
        entrypoint=_read_template(version, "entrypoint.sh"),
    )
