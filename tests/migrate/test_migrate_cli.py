"""``trainc migrate`` end to end: output that ``trainc render`` and ``trainc check``
accept unchanged, input errors at file:line:col (exit 2), refusals (exit 1), the user's
comments and field order carried over, stable output, and the report formats."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion

from compiler.cli import main
from tests.migrate.conformance import CASES, load_cases

ROOT = Path(__file__).resolve().parents[2]
MIGRATED = [c.name for c in load_cases() if c.expect == "migrated"]


def _setup_or_skip() -> None:
    """The upstream artifacts (`make setup`): a failure, not a skip, without them."""
    from compiler.errors import SetupError
    from compiler.upstream.artifacts import upstream

    try:
        upstream()
    except SetupError as error:
        pytest.fail(str(error), pytrace=False)


def _option_flags(case: Any) -> list[str]:
    """The ``trainc migrate`` flags of a case's options."""
    flags = []
    if case.options.gang_scheduler != "none":
        flags += ["--v1-gang-scheduler", case.options.gang_scheduler]
    if case.options.allow_lossy:
        flags.append("--allow-lossy")
    if not case.options.compat_env:
        flags.append("--no-compat-env")
    if case.options.merge_template:
        flags += ["--merge-template", case.options.merge_template]
    return flags


@pytest.mark.parametrize("name", MIGRATED)
def test_render_and_check_accept_the_output(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _setup_or_skip()
    [case] = load_cases([name])
    out = tmp_path / "out"
    args = ["migrate", str(case.path), "-o", str(out), "--report", str(tmp_path / "r.txt")]
    assert main([*args, *_option_flags(case)]) == 0
    inputs = [str(out)]
    text = "\n".join(p.read_text() for p in out.rglob("*.yaml"))
    if "priorityClassName" in text:  # the cluster's PriorityClass, as trainc needs it
        (tmp_path / "pc.yaml").write_text(
            "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1\n"
        )
        inputs.append(str(tmp_path / "pc.yaml"))
    if "kind: TrainingRuntime" not in text:  # an upstream runtime was reused
        from compiler.upstream.artifacts import upstream

        inputs.append(str(upstream().path("manifests/base/runtimes")))
    capsys.readouterr()
    assert main(["check", *inputs]) == 0, capsys.readouterr()
    assert main(["render", *inputs, "-o", "-"]) == 0
    assert "kind: JobSet" in capsys.readouterr().out or "multikueue" in text


def test_webhook_rejection_is_an_input_error_at_its_place(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = CASES / "pytorch-master-replicas-unset" / "job.yaml"
    assert main(["migrate", str(path)]) == 2
    err = capsys.readouterr().err
    assert (
        f"{path}:7:5: PyTorchJob default/nomaster: spec.pytorchReplicaSpecs[Master].replicas: Forbidden: must be 1"
        in err
    )
    assert "Traceback" not in err


def test_lower_case_keys_are_rejected_as_the_v1_webhook_does(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = CASES / "pytorch-lowercase-keys" / "job.yaml"
    assert main(["migrate", str(path)]) == 2
    err = capsys.readouterr().err
    assert (
        f'{path}:7:5: PyTorchJob default/lower: spec.pytorchReplicaSpecs[master]: Unsupported value: "master"'
        in err
    )


def test_refused_job_exits_1_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = CASES / "tf-upstream-dist-mnist" / "job.yaml"
    assert main(["migrate", str(path), "-o", str(tmp_path / "out")]) == 1
    assert "TF_CONFIG_NEEDS_COMMAND" in capsys.readouterr().err
    assert not list((tmp_path / "out").rglob("*.yaml"))


def test_mxjob_is_unsupported_with_a_clear_message(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["migrate", str(CASES / "mxjob-unsupported" / "job.yaml")]) == 1
    err = capsys.readouterr().err
    assert "UNSUPPORTED_KIND" in err and "removed from the Training Operator in v1.9.0" in err


def test_comments_and_field_order_carry_over(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    job = tmp_path / "job.yaml"
    job.write_text(
        "apiVersion: kubeflow.org/v1\n"
        "kind: PyTorchJob\n"
        "metadata:\n"
        "  name: commented\n"
        "  labels:\n"
        "    zeta: z   # last label first\n"
        "    alpha: a\n"
        "spec:\n"
        "  pytorchReplicaSpecs:\n"
        "    Worker:\n"
        "      replicas: 2\n"
        "      template:\n"
        "        spec:\n"
        "          containers:\n"
        "            - name: pytorch\n"
        "              # the training image, pinned\n"
        "              image: img@sha256:0123\n"
        "              command: [python, train.py]   # entry point\n"
    )
    assert main(["migrate", str(job), "--report", str(tmp_path / "r")]) == 0
    out = capsys.readouterr().out
    assert "zeta: z   # last label first\n    alpha: a" in out
    assert "# the training image, pinned\n" in out
    assert any(
        "command: [python, train.py]" in line and "# entry point" in line
        for line in out.splitlines()
    )
    assert out.index("image: img@sha256:0123") < out.index("command: [python, train.py]")


def test_output_is_stable(tmp_path: Path) -> None:
    folder = tmp_path / "jobs"
    folder.mkdir()
    for name in ("pytorch-spec-worked-example", "mpi-v2beta1-pi", "volcano-pytorch-worked-example"):
        shutil.copy(CASES / name / "job.yaml", folder / f"{name}.yaml")
    outputs = []
    for index in range(2):
        out = tmp_path / f"out{index}"
        main(
            [
                "migrate",
                str(folder),
                "-o",
                str(out),
                "--report",
                str(tmp_path / f"r{index}.json"),
                "--report-format",
                "json",
            ]
        )
        outputs.append({p.relative_to(out): p.read_text() for p in out.rglob("*.yaml")})
    assert outputs[0] == outputs[1]
    assert (tmp_path / "r0.json").read_text() == (tmp_path / "r1.json").read_text()


def test_an_input_runtime_that_fits_is_reused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Migrate once, keep the runtime; a second job that needs the same runtime
    references it instead of getting its own."""
    src = CASES / "pytorch-spec-worked-example" / "job.yaml"
    assert (
        main(["migrate", str(src), "-o", str(tmp_path / "first"), "--report", str(tmp_path / "r")])
        == 0
    )
    runtime = (tmp_path / "first" / "team-a" / "mnist.yaml").read_text().split("---\n")[0]
    (tmp_path / "runtime.yaml").write_text(runtime.replace("name: mnist", "name: shared", 1))
    other = src.read_text().replace("name: mnist", "name: other").replace("img:1", "img:2")
    (tmp_path / "other.yaml").write_text(other)
    assert (
        main(
            [
                "migrate",
                str(tmp_path / "runtime.yaml"),
                str(tmp_path / "other.yaml"),
                "--report",
                str(tmp_path / "r2"),
                "--report-format",
                "json",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "kind: TrainingRuntime\nmetadata" not in out
    assert "name: shared" in out and "image: img:2" in out
    report = json.loads((tmp_path / "r2").read_text())["reports"][0]
    assert report["runtime"].startswith("TrainingRuntime shared")


@pytest.mark.parametrize(
    "name", ["pytorch-spec-worked-example", "mpi-v2beta1-pi", "volcano-pytorch-worked-example"]
)
def test_report_formats(
    name: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, snapshot: SnapshotAssertion
) -> None:
    """The report's text and JSON shapes (what each line says is checked by the
    conformance run against the v1 operator; this pins the format)."""
    monkeypatch.chdir(ROOT)
    path = f"tests/migrate/cases/{name}/job.yaml"
    for fmt in ("text", "json"):
        target = tmp_path / f"report.{fmt}"
        main(["migrate", path, "--report", str(target), "--report-format", fmt])
        assert target.read_text() == snapshot(name=fmt)


# What Trainer v2.1.0's schemas lack: mlPolicy.jax and .xgboost (v2.2.0), and
# TrainJob.spec.activeDeadlineSeconds (v2.2.0) that runPolicy.activeDeadlineSeconds maps to.
REFUSED_ON_V2_1 = {n for n in MIGRATED if n.startswith(("jax-", "xgboost-"))} | {
    "pytorch-deadline",
    "mpi-v2beta1-deadline",
}


@pytest.mark.parametrize("name", MIGRATED)
def test_output_for_an_older_release(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--trainer v2.1.0``: the jobs that release can take are written and pass
    ``check --trainer v2.1.0``; the others are errors of the report naming the field and
    the releases that have it, and nothing of them is written."""
    _setup_or_skip()
    from compiler.upstream.artifacts import upstream

    [case] = load_cases([name])
    out, report = tmp_path / "out", tmp_path / "report.json"
    args = ["migrate", str(case.path), "-o", str(out), "--report", str(report)]
    args += ["--report-format", "json", "--trainer", "v2.1.0"]
    code = main([*args, *_option_flags(case)])
    [job] = json.loads(report.read_text())["reports"]
    refusals = [d for d in job["diagnostics"] if d["code"] == "REFUSED_BY_RELEASE"]
    if name in REFUSED_ON_V2_1:
        assert code == 1 and refusals and not list(out.rglob("*.yaml"))
        for refusal in refusals:
            assert refusal["severity"] == "error"
            assert "Trainer v2.1.0" in refusal["message"]
            assert "v2.2.0, v2.3.0 have it" in refusal["message"]
        return
    assert code == 0 and not refusals, refusals
    inputs = [str(out)]
    text = "\n".join(p.read_text() for p in out.rglob("*.yaml"))
    if "priorityClassName" in text:
        (tmp_path / "pc.yaml").write_text(
            "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1\n"
        )
        inputs.append(str(tmp_path / "pc.yaml"))
    if "kind: TrainingRuntime" not in text:  # a runtime v2.1.0 ships was reused
        inputs.append(str(upstream("v2.1.0").path("manifests/base/runtimes")))
    capsys.readouterr()
    assert main(["check", "--trainer", "v2.1.0", *inputs]) == 0, capsys.readouterr()


def test_a_volcano_job_name_trainer_v2_0_0_refuses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Volcano Job may be named ``batch.v2``; a TrainJob of that name is refused by
    v2.0.0's webhook (DNS-1035 labels only), as by the CRD rule of later releases."""
    _setup_or_skip()
    [case] = load_cases(["volcano-single-task"])
    job = tmp_path / "job.yaml"
    job.write_text(case.path.read_text().replace("name: batch\n", "name: batch.v2\n", 1))
    for version in ("v2.0.0", "v2.3.0"):
        report = tmp_path / f"{version}.json"
        args = ["migrate", str(job), "-o", str(tmp_path / version), "--trainer", version]
        assert main([*args, "--report", str(report), "--report-format", "json"]) == 1
        [found] = json.loads(report.read_text())["reports"]
        refusals = [d for d in found["diagnostics"] if d["code"] == "REFUSED_BY_RELEASE"]
        name_rule = {  # v2.0.0's webhook; the CRD's CEL rule from v2.1.0 on
            "v2.0.0": ("TrainJob metadata.name", "a DNS-1035 label must consist of"),
            "v2.3.0": ("TrainJob", "metadata.name must match RFC 1035 DNS label format"),
        }[version]
        assert any(
            d["targetPath"] == name_rule[0] and name_rule[1] in d["message"] for d in refusals
        ), refusals
