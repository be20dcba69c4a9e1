"""The default input file size limit (:func:`compiler.apiserver.source_bytes.read_source`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from compiler.apiserver.source_bytes import MAX_FILE_BYTES_ENV, read_source
from compiler.errors import InputError

MiB = 1024 * 1024


def test_a_sweep_of_100000_trainjobs_is_within_the_default_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """100,000 TrainJobs in one file (the most documents a file may hold) are ~85 MB
    as `make bench` generates them: read with the defaults, no limit raised."""
    monkeypatch.delenv(MAX_FILE_BYTES_ENV, raising=False)
    sweep = tmp_path / "sweep.yaml"
    with open(sweep, "wb") as out:
        out.truncate(100 * MiB)
    assert len(read_source(sweep)) == 100 * MiB


def test_a_file_over_128_mib_is_refused_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(MAX_FILE_BYTES_ENV, raising=False)
    big = tmp_path / "big.yaml"
    with open(big, "wb") as out:
        out.truncate(128 * MiB + 1)
    with pytest.raises(InputError) as error:
        read_source(big, "big.yaml")
    [problem] = error.value.problems
    assert problem.location is not None and problem.location.file == "big.yaml"
    assert problem.message == (
        f"file larger than the limit of {128 * MiB} bytes (set {MAX_FILE_BYTES_ENV} to raise it)"
    )
