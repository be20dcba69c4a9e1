"""``make goldens``: write every case's expectation from the oracle's answer.

Expected files are the oracle's facts; trainc's output never feeds them.
"""

from __future__ import annotations

import json
import sys

from compiler.emit.yaml_text import dump_documents
from tests.conformance import oracle
from tests.conformance.cases import all_cases
from tests.conformance.normalise import normalise


def header() -> str:
    info = oracle.version()
    trainer = info.get("trainer", info)
    return (
        "# Produced by the conformance oracle (tests/conformance/oracle) running "
        f"github.com/kubeflow/trainer/v2 {trainer if isinstance(trainer, str) else info}.\n"
        "# Regenerate with `make goldens`; do not edit by hand.\n"
    )


def main() -> int:
    cases = all_cases()
    for case in cases:
        answer = oracle.render(list(case.inputs), case.owner_uid)
        if answer.objects is not None:
            case.expected_errors_path.unlink(missing_ok=True)
            text = header() + dump_documents(normalise(answer.objects))
            case.expected_objects_path.write_text(text)
            verdict = f"{len(answer.objects)} objects"
        else:
            case.expected_objects_path.unlink(missing_ok=True)
            document = {"producedBy": oracle.version(), **(answer.rejection or {})}
            case.expected_errors_path.write_text(json.dumps(document, indent=2, sort_keys=True) + "\n")
            verdict = f"rejected ({len((answer.rejection or {}).get('errors', []))} errors)"
        print(f"{case.name}: {verdict}")
    print(f"goldens: {len(cases)} cases written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
