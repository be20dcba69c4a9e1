"""Untrusted repositories and Argo CD Applications (issue 25, findings 3 and 6): memory
bounded per input file whatever its number of documents, every verb's error output
bounded, and the plugin's environment checked strictly."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from compiler.errors import MAX_LISTED
from tests.gitops.support import base_env, write_project
from tests.support import trainc_main as trainc

MIB = 1 << 20
BOMB = "---\na: 1\n"  # one document that is no Kubernetes object, 9 bytes


def plugin_generate(repo: Path, **env: str) -> tuple[subprocess.CompletedProcess[str], int]:
    """``trainc argocd generate`` as the sidecar runs it (cwd the source path, the
    repo server's environment); the process and its own peak RSS in bytes (``wait4``:
    this child's figure, not the largest of every child the test process has had)."""
    argv = [sys.executable, "-m", "compiler", "argocd", "generate"]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        child = subprocess.Popen(
            argv,
            cwd=repo,
            env=base_env(
                PYTHONPATH=str(Path(__file__).resolve().parents[1]),
                ARGOCD_APP_NAME="vision-training",
                ARGOCD_APP_NAMESPACE="vision",
                ARGOCD_APP_SOURCE_PATH=".",
                PARAM_CLUSTER="production",
                **env,
            ),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
        )
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        process = subprocess.CompletedProcess(
            argv, child.returncode, out.read().decode(), err.read().decode()
        )
    return process, usage.ru_maxrss * 1024


# --- memory per input file ----------------------------------------------------------------


def test_900000_documents_in_one_file_stay_under_512_mib(tmp_path: Path) -> None:
    repo = write_project(tmp_path / "repo")
    (repo / "jobs" / "bomb.yaml").write_text(BOMB * 900_000)
    process, peak = plugin_generate(repo)
    assert process.returncode == 2
    assert process.stdout == ""
    assert "Traceback" not in process.stderr
    assert len(process.stderr) < 4096, process.stderr[:2000]
    first = process.stderr.splitlines()[1].strip()
    assert first.startswith(f"{repo}/jobs/bomb.yaml:200001:1: more than 100000 YAML documents")
    assert "TRAINC_MAX_FILE_DOCUMENTS" in first
    assert peak < 512 * MIB, f"peak RSS {peak / MIB:.0f} MiB"


def test_a_file_over_the_size_limit_is_still_refused_first(tmp_path: Path) -> None:
    repo = write_project(tmp_path / "repo")
    (repo / "jobs" / "bomb.yaml").write_text(BOMB * 200_000)  # 1.8 MB
    process, _ = plugin_generate(repo, TRAINC_MAX_FILE_BYTES="1000000")
    assert process.returncode == 2
    assert f"{repo}/jobs/bomb.yaml: file larger than the limit of 1000000 bytes" in (process.stderr)


def test_broken_documents_under_the_limit_are_counted_not_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from compiler.load.loader import MAX_PROBLEMS_PER_FILE, load_texts_collect

    monkeypatch.setenv("TRAINC_MAX_FILE_DOCUMENTS", "1000000")
    _, problems = load_texts_collect([("bomb.yaml", BOMB * 5000)])
    assert len(problems) == MAX_PROBLEMS_PER_FILE + 1
    last = problems[-1]
    assert str(last) == (
        f"bomb.yaml:{2 * MAX_PROBLEMS_PER_FILE + 2}:1: ... and 4000 more problems in this "
        f"file (only the first {MAX_PROBLEMS_PER_FILE} are reported)"
    )


def test_a_file_over_the_document_limit_gives_nothing_but_its_problem(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from compiler.load.loader import load_texts_collect

    monkeypatch.setenv("TRAINC_MAX_FILE_DOCUMENTS", "3")
    many = "".join(
        f"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c{n}}}\n" for n in range(4)
    )
    result, problems = load_texts_collect([("many.yaml", many), ("one.yaml", "a: 1\n")])
    assert result.others == []
    assert [str(p) for p in problems] == [
        "many.yaml:13:1: more than 3 YAML documents in one file "
        "(set TRAINC_MAX_FILE_DOCUMENTS to raise the limit)",
        "one.yaml:1:1: not a Kubernetes object: apiVersion and kind must be set "
        "(a non-empty string)",
    ]


# --- bounded error output -----------------------------------------------------------------


def test_render_prints_the_first_problems_then_how_many_more(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "bomb.yaml").write_text(BOMB * 1500)
    code, out, err = trainc(capsys, "render", str(tmp_path), "-o", "-")
    lines = err.splitlines()
    assert code == 2 and out == ""
    assert len(lines) == MAX_LISTED + 1
    assert lines[0].startswith(f"{tmp_path}/bomb.yaml:2:1: not a Kubernetes object")
    assert lines[-1] == f"... and {1001 - MAX_LISTED} more"


def test_render_prints_a_bounded_list_of_warnings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lookalike = (
        "---\napiVersion: Trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {{name: j{n}}}\n"
    )
    (tmp_path / "jobs.yaml").write_text("".join(lookalike.format(n=n) for n in range(300)))
    code, _, err = trainc(capsys, "render", str(tmp_path), "-o", "-")
    warnings = [line for line in err.splitlines() if line.startswith("trainc: warning:")]
    assert code == 0
    # every look-alike is passed through, so no TrainJob is left to render: said once more
    assert warnings[-1] == f"trainc: warning: no TrainJob in {tmp_path}: nothing to render"
    assert len(warnings) == MAX_LISTED + 2
    assert warnings[-2] == f"trainc: warning: ... and {300 - MAX_LISTED} more warnings"


def test_a_long_value_in_a_message_is_cut(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    version = "v" * 3_000_000  # echoed by "no matches for kind ... in version ..."
    (tmp_path / "bad.yaml").write_text(
        f"apiVersion: trainer.kubeflow.org/{version}\nkind: TrainJob\nmetadata: {{name: a}}\n"
    )
    code, _, err = trainc(capsys, "render", str(tmp_path), "-o", "-")
    assert code == 2
    assert len(err) < 2000
    assert "[... " in err and " more characters ...]" in err
    assert err.rstrip().endswith('vvvv"')  # the end of the message is kept


# --- argocd generate: one problem, the environment ----------------------------------------


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The gitops test project, as the working directory, with a clean environment."""
    repo = write_project(tmp_path / "repo")
    monkeypatch.chdir(repo)
    for name in list(os.environ):
        if name.startswith(("PARAM_", "ARGOCD_")):
            monkeypatch.delenv(name)
    return repo


def generate(capsys: pytest.CaptureFixture[str], **env: str) -> tuple[int, str, str]:
    saved = dict(os.environ)
    os.environ.update(env)
    try:
        return trainc(capsys, "argocd", "generate")
    finally:
        os.environ.clear()
        os.environ.update(saved)


def test_a_huge_cluster_name_makes_one_short_line(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = generate(capsys, PARAM_CLUSTER="c" * 5_000_000)
    assert code == 2 and out == ""
    assert len(err) < 1000, err[:500]
    assert err.startswith(f"trainc: {project}/trainc.yaml:")
    assert "unknown cluster 'ccc" in err and "more characters" in err


def test_a_huge_cluster_name_in_the_project_file_makes_one_short_line(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = (project / "trainc.yaml").read_text()
    (project / "trainc.yaml").write_text(text.replace("name: staging", "name: " + "s" * 5_000_000))
    code, out, err = generate(capsys, PARAM_CLUSTER="production")
    assert (code, out) == (2, "")
    assert len(err) < 600, err[:700]
    assert err.startswith(f"trainc: {project}/trainc.yaml:10:5: clusters[1].name: 'sss")
    assert " more characters ...]" in err
    assert err.endswith("it names the output folder)\n")  # what is wrong is kept


def test_a_cluster_name_from_a_parameter_names_where_it_came_from(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    parameters = json.dumps([{"name": "cluster", "string": "prod\x1b[31m"}])
    code, _, err = generate(capsys, ARGOCD_APP_PARAMETERS=parameters)
    assert code == 2
    assert (
        "clusters: unknown cluster 'prod\\x1b[31m' given by ARGOCD_APP_PARAMETERS "
        "(parameter cluster) (the project defines: production, staging)"
    ) in err


def test_deeply_nested_parameters_are_a_usage_error(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = generate(capsys, ARGOCD_APP_PARAMETERS="[" * 100_000 + "]" * 100_000)
    assert code == 2 and out == ""
    assert "Traceback" not in err
    assert err == (
        "trainc: argocd generate: ARGOCD_APP_PARAMETERS: nested too deeply "
        "(an array of parameter objects)\n"
    )


@pytest.mark.parametrize(
    ("parameters", "said"),
    [
        ("{", "not JSON (Expecting property name enclosed in double quotes)"),
        ('{"name": "cluster"}', "an array of parameter objects, not an object"),
        ('["cluster"]', "item 0: a parameter object, not a string"),
        ('[{"name": "cluster", "strng": "a"}]', "item 0: unknown key 'strng'"),
        ('[{"string": "a"}]', "item 0: name must be a non-empty string"),
        (
            '[{"name": "clustr", "string": "a"}]',
            "unknown parameter 'clustr' (this plugin's: cluster, delivery, project)",
        ),
        (
            '[{"name": "cluster", "string": "a"}, {"name": "cluster", "string": "b"}]',
            "parameter 'cluster' given twice",
        ),
        (
            '[{"name": "cluster", "map": {"a": "b"}}]',
            "parameter 'cluster' takes a string, not a map or an array",
        ),
        ('[{"name": "cluster", "string": 5}]', "parameter 'cluster': string must be a string"),
    ],
)
def test_parameters_of_another_shape_are_usage_errors(
    project: Path, capsys: pytest.CaptureFixture[str], parameters: str, said: str
) -> None:
    code, out, err = generate(capsys, ARGOCD_APP_PARAMETERS=parameters)
    assert (code, out) == (2, "")
    assert err == f"trainc: argocd generate: ARGOCD_APP_PARAMETERS: {said}\n"


def test_a_nul_in_a_parameter_is_a_usage_error(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    parameters = json.dumps([{"name": "project", "string": "trainc.yaml\x00x"}])
    code, _, err = generate(capsys, ARGOCD_APP_PARAMETERS=parameters)
    assert code == 2
    assert err == (
        "trainc: argocd generate: ARGOCD_APP_PARAMETERS (parameter project): "
        "a NUL character in the value\n"
    )


def test_a_missing_project_file_names_the_parameter(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = generate(capsys, PARAM_CLUSTER="production", PARAM_PROJECT="nope.yaml")
    assert code == 2
    assert err == (
        "trainc: PARAM_PROJECT: project file nope.yaml: cannot read: No such file or directory\n"
    )


def test_an_empty_result_names_the_project_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = write_project(tmp_path / "repo", jobs=0)
    (repo / "jobs" / "none.yaml").write_text("# no TrainJob yet\n")
    (repo / "runtimes" / "torch-gang.yaml").write_text("# none yet\n")
    monkeypatch.chdir(repo)
    code, out, err = generate(capsys, PARAM_CLUSTER="production")
    assert (code, out) == (2, "")
    assert err.startswith(f"trainc: {repo}/trainc.yaml: cluster production: no objects")


def test_the_parameter_env_name_is_argo_cds() -> None:
    from compiler.deliver.argocd import _escaped

    # Argo CD: upper case, then every character but A-Z, 0-9 and _ as _
    assert _escaped("cluster") == "PARAM_CLUSTER"
    assert _escaped("my-param.x") == "PARAM_MY_PARAM_X"
    assert _escaped("clüster") == "PARAM_CL_STER"


# --- migrate ------------------------------------------------------------------------------


def test_migrate_refuses_a_file_over_the_document_limit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRAINC_MAX_FILE_DOCUMENTS", "3")
    (tmp_path / "jobs.yaml").write_text(BOMB * 5)
    code, out, err = trainc(capsys, "migrate", str(tmp_path / "jobs.yaml"), "-o", "-")
    assert (code, out) == (2, "")
    assert err == (
        f"{tmp_path}/jobs.yaml:8:1: more than 3 YAML documents in one file "
        "(set TRAINC_MAX_FILE_DOCUMENTS to raise the limit)\n"
    )


def test_migrate_prints_a_bounded_report_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "jobs.yaml").write_text(BOMB * (MAX_LISTED + 20))
    code, _, err = trainc(capsys, "migrate", str(tmp_path / "jobs.yaml"), "-o", "-")
    assert code == 0
    assert err.count("NOT_A_JOB") == MAX_LISTED
    assert err.endswith("\n... and 20 more job reports (--report FILE writes them all)\n")
    report = tmp_path / "report.txt"
    code, _, _ = trainc(
        capsys, "migrate", str(tmp_path / "jobs.yaml"), "-o", "-", "--report", str(report)
    )
    assert report.read_text().count("NOT_A_JOB") == MAX_LISTED + 20
