"""`run-local`: --smoke's arguments go to the shipped GPT trainer only (any other script gets its own arguments), and
a workload without a distribution runs as one process, as SageMaker starts one per host."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest
import yaml

from compiler.errors import SpecError
from tests.project import ROOT
from trainctl.cli import build_parser, main
from trainctl.local import launch as local
from trainctl.local import script_mode
from trainctl.local.contract import LocalRunError

# A script as strict as most: argparse with its own arguments only (an unknown one exits 2).
STRICT = """import argparse, json, os, sys
parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, required=True)
args = parser.parse_args()
print("epochs", args.epochs, "world", os.environ.get("WORLD_SIZE"), "hosts", json.loads(os.environ["SM_HOSTS"]))
"""
SPEC = {"name": "strict", "framework": "pytorch", "framework_version": "2.3.0", "py_version": "py311",
        "entry_point": "train.py", "source_dir": "code", "instance_type": "ml.g5.2xlarge",
        "hyperparameters": {"epochs": 1}}


@pytest.fixture
def strict_spec(tmp_path: Path) -> Path:
    """A spec for the strict script in a project of its own (cdk.json, the cached zones, the image's Dockerfile).
    It is no git work tree, so its code ships whole (with a NotInGitWarning): inside this repository an untracked
    script would be refused, as the bundle ships only what git tracks."""
    project = project_with_script(tmp_path, STRICT)
    (project / "workloads" / "strict.yaml").write_text(yaml.safe_dump(SPEC))
    return project / "workloads" / "strict.yaml"


def project_with_script(tmp_path: Path, script: str) -> Path:
    """A project of its own (cdk.json, the cached zones, the image's Dockerfile) with `script` as
    workloads/code/train.py."""
    project = tmp_path / "project"
    for name in ("cdk.json", "cdk.context.json", "training/Dockerfile"):
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, project / name)
    (project / "workloads" / "code").mkdir(parents=True)
    (project / "workloads" / "code" / "train.py").write_text(script)
    return project


@pytest.fixture(autouse=True)
def cpu_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local, "_local_gpus", lambda: 0)


def prepared(*argv: str, project: Path = ROOT) -> tuple[list[str], list[str]]:
    args = build_parser().parse_args(["--project-dir", str(project), "run-local", *argv])
    command, _env, _out, notes = local.prepare(args)
    return command, notes


def test_smoke_leaves_another_script_its_own_arguments(strict_spec: Path, tmp_path: Path) -> None:
    command, notes = prepared(str(strict_spec), "--smoke", "--output", str(tmp_path / "run"),
                              project=strict_spec.parents[1])
    assert command[command.index("train.py") + 1:] == ["--epochs", "1"]
    assert "--smoke shrinks only the shipped GPT trainer (training/train.py); this entry point gets its own " \
        "hyperparameters (shrink them with -p KEY=VALUE)" in notes


def test_smoke_shrinks_the_shipped_gpt_trainer(tmp_path: Path) -> None:
    command, _ = prepared("gpt-smddp", "--smoke", "--output", str(tmp_path / "run"))
    args = command[command.index("train.py") + 1:]
    for key, value in (("--model", "tiny"), ("--max_steps", "20"), ("--seq_len", "128")):
        assert args[args.index(key) + 1] == value


@pytest.mark.parametrize(("workload", "nproc"), [
    ("gpt-finetune-single", "1"),  # no distribution: SageMaker starts one process per host
    ("gpt-smddp", "2"),  # data parallel: one per GPU, two on CPU
])
def test_processes_follow_what_sagemaker_starts(workload: str, nproc: str, tmp_path: Path) -> None:
    command, notes = prepared(workload, "--smoke", "--output", str(tmp_path / "run"))
    assert command[command.index("--nproc_per_node") + 1] == nproc
    assert not any("one process per host" in note for note in notes)


def test_more_processes_than_sagemaker_starts_is_a_note(strict_spec: Path, tmp_path: Path) -> None:
    command, notes = prepared(str(strict_spec), "--nproc", "2", "--output", str(tmp_path / "run"),
                              project=strict_spec.parents[1])
    assert command[command.index("--nproc_per_node") + 1] == "2"
    assert "SageMaker starts one process per host for this workload (no distribution); running 2" in notes


def test_a_strict_script_runs_with_smoke(strict_spec: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(strict_spec.parent)
    code = main(["run-local", strict_spec.name, "--smoke", "--output", str(tmp_path / "run")])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    assert "epochs 1 world 1 hosts ['algo-1']" in out


def test_without_torch_it_stops_first_with_the_install_command(strict_spec: Path, monkeypatch, capsys) -> None:
    """The quick start installs what synth needs, not PyTorch: run-local says so before preparing anything."""
    from trainctl.local import differences

    real = differences.importlib.util.find_spec
    monkeypatch.setattr(differences.importlib.util, "find_spec", lambda name: None if name == "torch" else real(name))
    code = main(["--project-dir", str(strict_spec.parents[1]), "run-local", str(strict_spec)])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: run-local needs torch in this Python")
    assert "-m pip install" in err and "-r training/requirements.txt" in err and "Traceback" not in err
    assert not (strict_spec.parents[1] / "build").exists()  # nothing was prepared


def test_the_jobs_requirements_and_framework_version_that_differ_here_are_notes(strict_spec: Path,
                                                                                tmp_path: Path) -> None:
    from importlib.metadata import version

    # the installed distribution's version, as pip lists it (a wheel's torch.__version__ may add a local tag pip's
    # metadata lacks: 2.13.0+cu130 against 2.13.0)
    installed = version("torch")
    (strict_spec.parent / "code" / "requirements.txt").write_text("surely-not-installed-i36\nnumpy\n")
    _, notes = prepared(str(strict_spec), "--output", str(tmp_path / "run"), project=strict_spec.parents[1])
    (pip,) = [n for n in notes if "pip-installs" in n]
    assert "workloads/code/requirements.txt" in pip and "surely-not-installed-i36" in pip and "numpy" not in pip
    assert "-m pip install -r workloads/code/requirements.txt" in pip
    versions = [n for n in notes if n.startswith("the job runs torch")]
    if installed.split("+")[0] != "2.3.0":  # the spec's framework_version
        assert versions == [f"the job runs torch 2.3.0 (the PyTorch 2.3.0 training image); this Python has torch "
                            f"{installed}: what changed between them can change the run"]
    else:
        assert versions == []


# ---------------------------------------------------------------------------------------------------------------
# XGBoost and scikit-learn script mode: one plain Python process; a built-in algorithm: nothing to run here
# ---------------------------------------------------------------------------------------------------------------

# A script that stands in for an XGBoost or scikit-learn one: it reports how it was started.
TABULAR = """import json, os, sys
print("argv", sys.argv[1:], "hosts", json.loads(os.environ["SM_HOSTS"]), "train", os.listdir(os.environ["SM_CHANNEL_TRAIN"]))
"""


@pytest.fixture
def framework_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    """This Python has xgboost and scikit-learn, whatever the test machine has (the scripts are stand-ins)."""
    real = script_mode.importlib.util.find_spec
    monkeypatch.setattr(script_mode.importlib.util, "find_spec",
                        lambda name, *a: object() if name in ("xgboost", "sklearn") else real(name, *a))


@pytest.mark.parametrize(("workload", "pin"), [("xgboost-tabular", "pip install 'xgboost~=1.7.0'"),
                                               ("sklearn-tabular", "pip install 'scikit-learn~=1.2.0'")])
def test_a_missing_framework_names_the_release_of_the_jobs_image(workload: str, pin: str, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    real = script_mode.importlib.util.find_spec
    monkeypatch.setattr(script_mode.importlib.util, "find_spec",
                        lambda name, *a: None if name in ("xgboost", "sklearn") else real(name, *a))
    with pytest.raises(LocalRunError, match=re.escape(pin)):
        prepared(workload, "--output", str(tmp_path / "run"))


@pytest.mark.parametrize("workload", ["xgboost-tabular", "sklearn-tabular"])
def test_a_script_mode_workload_runs_as_one_python_process(workload: str, tmp_path: Path,
                                                          framework_installed: None) -> None:
    data = tmp_path / "data"
    data.mkdir()
    command, _ = prepared(workload, "--channel", f"train={data}", "--channel", f"validation={data}",
                          "--output", str(tmp_path / "run"))
    assert command[:2] == [sys.executable, "train.py"]
    assert "torch.distributed.run" not in command
    assert "--n_estimators" in command or "--num_round" in command


def test_a_script_mode_workload_names_each_channel_folder(tmp_path: Path, framework_installed: None) -> None:
    """The shipped GPT token corpus stands in for the GPT trainer's data only: a tabular job names its folders."""
    with pytest.raises(LocalRunError, match="pass --channel train=PATH"):
        prepared("xgboost-tabular", "--output", str(tmp_path / "run"))


def test_a_script_mode_workload_takes_one_process(tmp_path: Path, framework_installed: None) -> None:
    with pytest.raises(LocalRunError, match="one process per instance"):
        prepared("sklearn-tabular", "--nproc", "2", "--output", str(tmp_path / "run"))


def test_a_built_in_algorithm_has_nothing_to_run_here(tmp_path: Path) -> None:
    with pytest.raises(LocalRunError, match="exists only in its SageMaker image"):
        prepared("linear-learner-tabular", "--output", str(tmp_path / "run"))


def test_a_script_mode_entry_point_runs_under_the_container_contract(tmp_path: Path, framework_installed: None,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """End to end through `main`, with a stand-in script: one process, one host, its hyperparameters as arguments."""
    project = project_with_script(tmp_path, TABULAR)
    spec = {"name": "tabular", "framework": "xgboost", "framework_version": "1.7-1", "entry_point": "train.py",
            "source_dir": "code", "instance_type": "ml.m5.xlarge", "instance_count": 2,
            "hyperparameters": {"num_round": 3}, "inputs": {"train": "datasets/tabular/train/"}}
    (project / "workloads" / "tabular.yaml").write_text(yaml.safe_dump(spec))
    data = tmp_path / "data"
    data.mkdir()
    (data / "part-0.csv").write_text("1,0.5\n")
    code = main(["--project-dir", str(project), "run-local", str(project / "workloads" / "tabular.yaml"),
                 "--channel", f"train={data}", "--output", str(tmp_path / "run")])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    assert "argv ['--num_round', '3'] hosts ['algo-1'] train ['part-0.csv']" in out
    assert "running in" in err and ": train.py --num_round 3" in err


def test_a_script_mode_workload_needs_no_torch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """torchrun and the default data are the PyTorch path's: an XGBoost script runs without torch or numpy here."""
    real = script_mode.importlib.util.find_spec
    monkeypatch.setattr(script_mode.importlib.util, "find_spec", lambda name, *a: (
        None if name in ("torch", "numpy") else object() if name == "xgboost" else real(name, *a)))
    data = tmp_path / "data"
    data.mkdir()
    command, _ = prepared("xgboost-tabular", "--channel", f"train={data}", "--channel", f"validation={data}",
                          "--output", str(tmp_path / "run"))
    assert command[:2] == [sys.executable, "train.py"]


def test_hyperparameters_are_read_as_trainctl_start_reads_them(strict_spec: Path, tmp_path: Path) -> None:
    """One reading of -p for both commands: JSON where the spec's value is not a string (3e-4 is a number), text
    otherwise and where it is not JSON (a date stays text, not YAML's date, which the toolkit's writer cannot take)."""
    command, _ = prepared(str(strict_spec), "-p", "lr=3e-4", "-p", "day=2024-01-01", "--output", str(tmp_path / "run"),
                          project=strict_spec.parents[1])
    assert command[command.index("--lr") + 1] == "0.0003" and command[command.index("--day") + 1] == "2024-01-01"


def test_a_hyperparameter_given_twice_is_refused(strict_spec: Path, tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="--hyperparameter lr: given twice"):
        prepared(str(strict_spec), "-p", "lr=1", "-p", "lr=2", "--output", str(tmp_path / "run"),
                 project=strict_spec.parents[1])
