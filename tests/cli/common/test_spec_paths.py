"""Every command that takes a spec takes it as people type it: a name, a path relative to wherever they stand inside
the repository, an absolute path; a spec outside the repository is refused in one line that says what to do."""

from __future__ import annotations

import json

import pytest

from tests.project import ROOT
from trainctl.cli import build_parser, main

SPEC = ROOT / "workloads" / "gpt-smddp.yaml"

# (working directory relative to the repository, how the spec is typed there)
FORMS = [
    (".", "gpt-smddp"),
    (".", "workloads/gpt-smddp.yaml"),
    (".", "./workloads/gpt-smddp.yaml"),
    (".", "gpt-smddp.yaml"),  # a bare file name not in the working directory: the one in workloads/
    ("workloads", "gpt-smddp.yaml"),
    ("workloads", "./gpt-smddp.yaml"),
    ("workloads", "gpt-smddp"),
    ("tests", "../workloads/gpt-smddp.yaml"),
    ("training/gptlm", "../../workloads/gpt-smddp.yaml"),
    (".", str(SPEC)),
    ("tests/cli", str(SPEC)),
]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(("cwd", "typed"), FORMS)
def test_render_takes_every_form_of_the_spec(cwd: str, typed: str, monkeypatch, capsys) -> None:
    monkeypatch.chdir(ROOT / cwd)
    code, out, err = run(capsys, "render", typed, "--env", "dev")
    assert code == 0, err
    request = json.loads(out)
    assert request["TrainingJobName"] == "gpt-smddp-${RunId}-${Attempt}"
    assert request["HyperParameters"]["sagemaker_program"] == '"train.py"'


def test_render_a_state_machine_from_a_subfolder(monkeypatch, capsys) -> None:
    monkeypatch.chdir(ROOT / "workloads")
    code, out, err = run(capsys, "render", "./gpt-smddp.yaml", "--env", "prod", "--state-machine")
    assert code == 0, err
    assert "States" in json.loads(out)


def test_an_absolute_path_works_from_outside_the_repository(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "render", str(SPEC), "--env", "dev")
    assert code == 0, err
    assert json.loads(out)["TrainingJobName"] == "gpt-smddp-${RunId}-${Attempt}"


def test_validate_takes_a_relative_directory_from_a_subfolder(monkeypatch, capsys) -> None:
    monkeypatch.chdir(ROOT / "tests")
    code, out, err = run(capsys, "validate", "--directory", "../workloads")
    assert code == 0, err
    assert "10 workloads valid for 2 environments" in out


def test_run_local_takes_a_relative_path(tmp_path, monkeypatch) -> None:
    from trainctl.local import launch as local

    monkeypatch.chdir(ROOT / "workloads")
    args = build_parser().parse_args(["run-local", "./gpt-finetune-single.yaml", "--smoke", "--output",
                                      str(tmp_path / "run")])
    command, _env, out, _notes = local.prepare(args)
    assert "train.py" in command
    assert (out / "code" / "train.py").is_file()


@pytest.mark.parametrize("command", [["render", "--env", "dev"], ["start", "--env", "dev"], ["runs", "--env", "dev"]])
def test_a_spec_outside_the_repository_is_refused_in_one_line(command: list[str], tmp_path, monkeypatch,
                                                              capsys) -> None:
    outside = tmp_path / "mine.yaml"
    outside.write_text(SPEC.read_text())
    monkeypatch.chdir(ROOT)
    code, out, err = run(capsys, command[0], str(outside), *command[1:])
    assert (code, out) == (1, "")
    assert err.strip() == (f"{outside}: is outside the project {ROOT}: move the spec into workloads/ (or pass "
                           "--project-dir naming its project)")


def test_run_local_refuses_a_spec_outside_the_repository(tmp_path, monkeypatch, capsys) -> None:
    outside = tmp_path / "mine.yaml"
    outside.write_text(SPEC.read_text())
    monkeypatch.chdir(ROOT / "workloads")
    code, out, err = run(capsys, "run-local", str(outside), "--smoke")
    assert (code, out) == (2, "")
    assert err.strip() == f"error: {outside}: is outside the project {ROOT}: move the spec into workloads/ (or " \
        "pass --project-dir naming its project)"


def test_relative_escape_from_a_subfolder_is_refused(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(ROOT / "workloads")
    code, out, err = run(capsys, "render", "../../elsewhere.yaml", "--env", "dev")
    assert (code, out) == (1, "")
    assert err.strip() == (f"{ROOT.parent / 'elsewhere.yaml'}: is outside the project {ROOT}: move the spec into "
                           "workloads/ (or pass --project-dir naming its project)")


@pytest.mark.parametrize(("typed", "expected"), [
    ("workloads/no-such.yaml", "workloads/no-such.yaml: no such spec file (a path is relative to the working "
                               "directory; or give a workload's name, e.g. gpt-finetune-single)"),
    ("gpt-smdp", "gpt-smdp: no such workload; did you mean 'gpt-smddp'?"),
    ("", "spec: give a workload name (e.g. gpt-smddp) or a path to its YAML file"),
    ("work\x00loads/x.yaml", "spec: give a workload name (e.g. gpt-smddp) or a path to its YAML file"),
    ("workloads/" + "x" * 300 + ".yaml", "cannot be read (File name too long)"),
])
def test_bad_spec_arguments_get_one_line_and_no_traceback(typed: str, expected: str, monkeypatch, capsys) -> None:
    monkeypatch.chdir(ROOT)
    code, out, err = run(capsys, "render", typed, "--env", "dev")
    assert (code, out) == (1, "")
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert expected in err


def test_a_project_dir_without_cdk_json_is_refused(tmp_path, capsys) -> None:
    code, out, err = run(capsys, "--project-dir", str(tmp_path), "render", "gpt-smddp", "--env", "dev")
    assert (code, out) == (1, "")
    assert err.strip() == f"{tmp_path}: --project-dir: holds no cdk.json; name the repository's root folder"


@pytest.mark.parametrize(("folder", "expected"), [
    ("nope", "--directory: nope is not a folder; name the folder of workload YAML files"),
    ("training", "--directory: training holds no workload spec (*.yaml, *.yml)"),
])
def test_validate_refuses_a_directory_without_specs(folder: str, expected: str, monkeypatch, capsys) -> None:
    monkeypatch.chdir(ROOT)
    code, out, err = run(capsys, "validate", "--directory", folder)
    assert (code, out, err) == (1, "", expected + "\n")


def test_start_and_runs_take_a_relative_path(deployed, sfn, monkeypatch, capsys) -> None:
    """The AWS commands resolve the spec like the others (against moto, tests/cli/conftest.py)."""
    from tests.cli.conftest import sagemaker, wait_for_end
    from tests.compiler.state_machine.sagemaker_sync import installed

    monkeypatch.chdir(ROOT / "workloads")
    with installed(sagemaker()):
        code, out, err = run(capsys, "start", "./gpt-smddp.yaml", "--env", "dev", "--name", "by-relative-path")
        assert code == 0, err
        assert out.strip() == "arn:aws:states:us-east-1:111111111111:execution:dev-gpt-smddp:by-relative-path"
        wait_for_end(sfn, out.strip())
    monkeypatch.chdir(ROOT / "tests")
    code, out, err = run(capsys, "runs", "../workloads/gpt-smddp.yaml", "--env", "dev", "--limit", "50")
    assert code == 0, err
    assert any(line.startswith("by-relative-path ") for line in out.splitlines())
