"""``make goldens``: write every case's expectation from the oracle's answer.

Expected files are the oracle's facts; trainc's output never feeds them. Each emulated
Trainer release has its own (its oracle build, its folder: see tests.conformance.cases);
``--trainer VERSION`` (repeatable) writes only those releases' expectations.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from typing import Any

from compiler.emit.yaml_text import dump_documents
from compiler.upstream.artifacts import upstream
from compiler.upstream.versions import DEFAULT_TRAINER_VERSION, TRAINER_VERSIONS
from tests.conformance import oracle
from tests.conformance.cases import Case, all_cases
from tests.conformance.normalise import normalise

_ADDRESS = re.compile(r"0x[0-9a-f]{6,}")


def produced_by(trainer: str = DEFAULT_TRAINER_VERSION) -> dict[str, str]:
    """The versions that decide an expectation: the Trainer and the libraries it renders with."""
    info = oracle.version(trainer)
    modules = info.get("modules", {})
    return {
        "oracle": "tests/conformance/oracle",
        "github.com/kubeflow/trainer/v2": str(info.get("trainer")),
        **{m: modules[m] for m in ("sigs.k8s.io/jobset", "k8s.io/apimachinery") if m in modules},
    }


def header(trainer: str = DEFAULT_TRAINER_VERSION) -> str:
    versions = ", ".join(f"{k} {v}" for k, v in produced_by(trainer).items() if k != "oracle")
    return (
        f"# Produced by the conformance oracle (tests/conformance/oracle): {versions}.\n"
        "# Regenerate with `make goldens`; do not edit by hand.\n"
    )


def portable_rejection(rejection: dict[str, Any], case: Case) -> dict[str, Any]:
    """The oracle's rejection with input paths made machine-independent.

    Also masks Go pointer addresses (``0xc000123456``), which some upstream messages
    print and which change on every run.
    """
    trainer_dir = str(upstream(case.version).trainer_dir)
    out = dict(rejection)
    for key in ("errors", "warnings"):
        items = []
        for item in rejection.get(key) or []:
            item = dict(item) if isinstance(item, dict) else item
            if isinstance(item, dict) and isinstance(item.get("message"), str):
                item["message"] = _ADDRESS.sub("0x<address>", item["message"])
            if isinstance(item, dict) and isinstance(item.get("file"), str):
                path = item["file"]
                if path.startswith(trainer_dir):
                    item["file"] = "upstream:" + path[len(trainer_dir) :].lstrip("/")
                else:
                    item["file"] = os.path.relpath(path, case.directory)
            items.append(item)
        out[key] = items
    return out


def main(argv: list[str] | None = None) -> int:
    """``make goldens`` rewrites every case; ``python -m tests.conformance.goldens NAME...`` only those."""
    parser = argparse.ArgumentParser(prog="python -m tests.conformance.goldens")
    parser.add_argument("names", nargs="*")
    parser.add_argument("--trainer", action="append", choices=TRAINER_VERSIONS)
    args = parser.parse_args(argv)
    names = set(args.names)
    cases = [
        c
        for version in args.trainer or TRAINER_VERSIONS
        for c in all_cases(version)
        if not names or c.name in names
    ]
    for case in cases:
        if case.expect_trainc_error is not None:
            print(f"{case.name}: unreadable input, expectation kept in case.yaml")
            continue
        answer = oracle.render(list(case.inputs), case.owner_uid, case.version)
        case.expectation_dir.mkdir(exist_ok=True)
        if answer.objects is not None:
            case.expected_errors_path.unlink(missing_ok=True)
            text = header(case.version) + dump_documents(normalise(answer.objects))
            case.expected_objects_path.write_text(text)
            verdict = f"{len(answer.objects)} objects"
        else:
            case.expected_objects_path.unlink(missing_ok=True)
            previous = (
                json.loads(case.expected_errors_path.read_text())
                if case.expected_errors_path.exists()
                else {}
            )
            document = {
                "producedBy": produced_by(case.version),
                **portable_rejection(answer.rejection or {}, case),
                # what the live control plane said is written by make conformance-live
                **({"live": previous["live"]} if "live" in previous else {}),
            }
            case.expected_errors_path.write_text(
                json.dumps(document, indent=2, sort_keys=True) + "\n"
            )
            verdict = f"rejected ({len((answer.rejection or {}).get('errors', []))} errors)"
        print(f"{case.version} {case.name}: {verdict}")
    print(f"goldens: {len(cases)} cases written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
