"""A chunk's check pickled (back from a worker, into the cache) reads back the same."""

from __future__ import annotations

import pickle

from compiler.errors import Finding, ObjectRef, Severity, SourceLocation
from compiler.plan.check_chunks import CheckChunk


def test_a_chunk_reads_back_as_it_was_pickled() -> None:
    ref = ObjectRef("TrainJob", "a", "ns")
    place = SourceLocation("jobs/a.yaml", 3, 7)
    findings = [
        Finding("vap/p", Severity.ERROR, "m1", ref, None, place, "input", (("reason", "Invalid"),)),
        Finding("vap/q", Severity.WARNING, "m2", ref, "spec.x", place, "output", ()),
        Finding("input", Severity.AUDIT, "unreadable", None, None, SourceLocation("b.yaml")),
        Finding("webhook", Severity.ERROR, "no place"),
    ]
    chunk = CheckChunk(findings=findings, notes=["n"], identities=[("g", "ns", "a")])
    back = pickle.loads(pickle.dumps(chunk, protocol=pickle.HIGHEST_PROTOCOL))
    assert back == chunk
    assert all(type(f) is Finding for f in back.findings)
    assert type(back.findings[0].object) is ObjectRef
    assert type(back.findings[0].location) is SourceLocation
    assert back.findings[1].severity is Severity.WARNING
    # what several findings share stays one object
    assert back.findings[0].object is back.findings[1].object
    assert back.findings[0].location is back.findings[1].location
    assert chunk.findings is findings  # pickling left the chunk itself alone
    # pickled as plain tuples: a named tuple is pickled through a Python call per object
    plain = chunk.__getstate__()["findings"]
    assert all(type(row) is tuple and type(row[3]) is tuple for row in plain[:2])
