"""The TrainJob name rule of v2.0.0's TrainJob webhook.

v2.0.0's webhook checks that ``metadata.name`` is a DNS-1035 label before it looks the
runtime up, and reports the finding with the runtime's own (an unknown runtime kind
ends the check with ``unsupported runtime`` alone). From v2.1.0 the rule is a CEL rule
of the TrainJob CRD, which the API server runs before any webhook (compiler.apiserver)::

    metadata.name: Invalid value: "tune.v2": a DNS-1035 label must consist of ...
"""

from __future__ import annotations

import re

from compiler.apiserver.manifest import Manifest
from compiler.errors import Problem
from compiler.upstream.versions import Gate

# Version difference of the TrainJob webhook (docs/trainer-versions.md).
NAME_RULE_IN_SCHEMA = Gate(
    "v2.1.0", "the TrainJob name rule is the CRD's (before: v2.0.0's webhook checks DNS-1035)"
)

DNS1035_LABEL_MAX_LENGTH = 63
_DNS1035_LABEL = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?\Z")
_DNS1035_MESSAGE = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
    "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)


def dns1035_label_errors(value: str) -> list[str]:
    """apimachinery's ``IsDNS1035Label``: what is wrong with ``value``, in its words.

    >>> dns1035_label_errors("my-name")
    []
    >>> [m[:38] for m in dns1035_label_errors("7b")]
    ['a DNS-1035 label must consist of lower']
    """
    errors: list[str] = []
    if len(value.encode()) > DNS1035_LABEL_MAX_LENGTH:
        errors.append(f"must be no more than {DNS1035_LABEL_MAX_LENGTH} characters")
    if not _DNS1035_LABEL.match(value):
        errors.append(_DNS1035_MESSAGE)
    return errors


def name_problems(trainjob: Manifest, version: str) -> list[Problem]:
    """The webhook's findings on ``metadata.name`` (none from v2.1.0 on)."""
    if NAME_RULE_IN_SCHEMA.on(version):
        return []
    location = trainjob.locate(("metadata", "name"))
    return [
        Problem(
            f'Invalid value: "{trainjob.name}": {message}',
            location,
            trainjob.ref,
            "metadata.name",
            "webhook",
        )
        for message in dns1035_label_errors(trainjob.name)
    ]
