"""``migrate``'s input errors (issue 29 point 9): every input's problems in one run
(nothing written), and YAML errors worded as ``render`` words them."""

from __future__ import annotations

from pathlib import Path

import pytest

from compiler.cli import main

ROOT = Path(__file__).resolve().parents[2]
GOOD = (ROOT / "tests/migrate/cases/pytorch-spec-worked-example/job.yaml").read_text()
BAD_YAML = 'apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata:\n  name: "x\n  bad: [\n'


def test_every_input_problem_in_one_run_and_nothing_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    jobs = tmp_path / "jobs"
    jobs.mkdir()
    (jobs / "a-good.yaml").write_text(GOOD)
    (jobs / "b-not-yaml.yaml").write_text(BAD_YAML)
    (jobs / "c-schema.yaml").write_text(
        GOOD.replace("name: mnist", "name: other").replace("replicas: 3", 'replicas: "3"')
    )
    (jobs / "d-not-utf8.yaml").write_bytes(b"kind: \xff\n")
    out = tmp_path / "out"
    code = main(["migrate", str(jobs), str(tmp_path / "missing.yaml"), "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 2, err
    lines = err.splitlines()
    assert f"{jobs}/b-not-yaml.yaml:6:1: invalid YAML: found unexpected end of stream" in err
    assert any(
        line.startswith(f"{jobs}/c-schema.yaml:24:7: PyTorchJob team-a/other: ") for line in lines
    ), err
    assert f"{jobs}/d-not-utf8.yaml:1:7: invalid YAML: the file is not UTF-8 text" in lines, err
    assert f"{tmp_path}/missing.yaml: no such file or directory" in err
    assert not out.exists()


@pytest.mark.parametrize(
    "text",
    [
        BAD_YAML,
        "apiVersion: v1\nkind: X\n c: d\n",
        "a:\n\t- b\n",
        "a: 1\na: 2\n",
        "a: *x\n",
        "hello\n",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n- 1\n",
    ],
)
def test_yaml_errors_read_as_renders(
    text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(text)
    assert main(["migrate", str(path), "-o", str(tmp_path / "out")]) == 2
    migrate_err = capsys.readouterr().err
    assert main(["render", str(path), "-o", str(tmp_path / "rendered")]) == 2
    render_err = capsys.readouterr().err
    assert migrate_err == render_err
    assert "\\n" not in migrate_err and "<unicode string>" not in migrate_err
    assert migrate_err.startswith(f"{path}:")
