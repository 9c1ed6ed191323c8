"""`python -m trainctl run-local` runs each shipped workload's entry point under the container contract."""

from __future__ import annotations

import argparse
import json
import re
import shutil
from pathlib import Path

import pytest
import yaml

from compiler.compilation import strategies
from compiler.spec import load_spec_workload
from tests.project import PROJECT
from tests.trainer.conftest import REPO, WORKLOADS, losses
from trainctl.local import command, contract, launch

TINY_OVERRIDES = ["model=tiny", "max_steps=2", "seq_len=64", "micro_batch_size=2", "warmup_steps=1",
                  "log_every=1", "checkpoint_every=0"]


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    command.add_commands(parser.add_subparsers())
    return parser.parse_args(["run-local", *argv])


@pytest.fixture(autouse=True)
def _specs_removed_afterwards(tmp_path: Path):
    """`_spec` writes inside the project: leave nothing behind in build/."""
    yield
    shutil.rmtree(REPO / "build" / "test-specs" / tmp_path.name, ignore_errors=True)


def _spec(tmp_path: Path, **overrides) -> Path:
    """A small valid workload spec inside the project (run-local refuses a spec outside it)."""
    raw = yaml.safe_load((REPO / "workloads" / "gpt-torchrun-fsx.yaml").read_text())
    raw.update(overrides)
    raw["source_dir"] = str(REPO / "training")
    folder = REPO / "build" / "test-specs" / tmp_path.name  # specs live in the project (build/ is git-ignored)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "spec.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


def test_hyperparameters_are_written_like_the_toolkit_does():
    # sagemaker_training.mapping.to_cmd_args: sorted keys, str() of each value, dicts as k=v joined by commas.
    assert contract.toolkit_args({"max_steps": 5, "compile": True, "model": "tiny", "lr": 0.0003,
                               "mp": {"partitions": 2, "ddp": True}}) == [
        "--compile", "True", "--lr", "0.0003", "--max_steps", "5", "--model", "tiny", "--mp", "ddp=True,partitions=2"]


def test_container_variables(tmp_path: Path):
    data = tmp_path / "data"
    data.mkdir()
    command, env, out, _ = launch.prepare(_args(str(_spec(tmp_path)), "--channel", f"train={data}",
                                               "-p", "max_steps=7", "-p", "compile=false",
                                               "--output", str(tmp_path / "run"), "--nproc", "2"))
    assert env["SM_CHANNEL_TRAIN"] == str(data)
    assert json.loads(env["SM_CHANNELS"]) == ["train"]
    hps = json.loads(env["SM_HPS"])
    assert hps["max_steps"] == 7 and hps["compile"] is False and hps["model"] == "gpt-1.3b"
    assert env["SM_HP_MAX_STEPS"] == "7"
    assert json.loads(env["SM_USER_ARGS"]) == command[command.index("train.py") + 1:]
    assert command[command.index("--max_steps"):command.index("--max_steps") + 2] == ["--max_steps", "7"]
    assert json.loads(env["SM_HOSTS"]) == [env["SM_CURRENT_HOST"]]
    for key, sub in (("SM_MODEL_DIR", "model"), ("SM_OUTPUT_DATA_DIR", "output/data"),
                     ("SM_CHECKPOINT_DIR", "checkpoints")):
        assert Path(env[key]) == out / sub and (out / sub).is_dir()
    assert (out / "code" / "train.py").is_file() and not list((out / "code").rglob("__pycache__"))
    assert command[command.index("--nproc_per_node") + 1] == "2"


@pytest.mark.parametrize("argv, words", [
    (["--channel", "validation=/tmp"], ["--channel validation", "no input channel"]),
    (["--channel", "train=/does/not/exist"], ["--channel train", "does not exist"]),
    (["-p", "oops"], ["--hyperparameter", "KEY=VALUE"]),
])
def test_bad_options_name_the_option(tmp_path, capsys, argv, words):
    args = _args(str(_spec(tmp_path)), "--output", str(tmp_path / "run"), *argv)
    assert args.func(args) == 2
    err = capsys.readouterr().err
    for word in words:
        assert word in err


def test_unknown_workload_is_reported(capsys):
    args = _args("no-such-workload")
    assert args.func(args) == 2
    assert "no-such-workload" in capsys.readouterr().err


def launcher(path: Path) -> str:
    """smp, none, or another strategy's name: how SageMaker would launch the workload."""
    name = strategies.launch_plan(load_spec_workload(PROJECT, str(path))).name
    return "smp" if name.startswith("smp") else name


def test_model_parallel_workload_needs_an_explicit_opt_out(tmp_path, capsys):
    smp = [p for p in WORKLOADS if launcher(p) == "smp"]
    if not smp:
        pytest.skip("no SMP workload shipped")
    args = _args(str(smp[0]), "--output", str(tmp_path / "run"))
    assert args.func(args) == 2
    assert "--without-model-parallel" in capsys.readouterr().err


def _local_args(workload: Path, tmp_path: Path) -> tuple[argparse.Namespace, str]:
    kind = launcher(workload)
    # Two processes where the workload is distributed (the data-parallel paths), one where SageMaker runs one.
    nproc = "1" if kind == "none" else "2"
    extra = ["--without-model-parallel"] if kind == "smp" else []
    args = _args(workload.stem, "--output", str(tmp_path), "--nproc", nproc, *extra,
                 *[x for o in TINY_OVERRIDES for x in ("-p", o)])
    return args, nproc


@pytest.mark.parametrize("workload", WORKLOADS, ids=lambda p: p.stem)
def test_every_shipped_workload_prepares_its_local_launch(workload, tmp_path):
    """Each workload's launch, without starting it: torchrun with its process count, its entry point, every
    hyperparameter as the toolkit passes it, its data channel. (The trainer's acceptance of each workload's
    hyperparameters is test_hparams.py's; two workloads run for real below.)"""
    spec = yaml.safe_load(workload.read_text())
    args, nproc = _local_args(workload, tmp_path)
    command, env, out, _ = launch.prepare(args)
    assert command[1:6] == ["-m", "torch.distributed.run", "--standalone", "--nproc_per_node", nproc]
    assert command[6] == spec["entry_point"] and (out / "code" / spec["entry_point"]).is_file()
    hyperparameters = {**spec["hyperparameters"], **{k: yaml.safe_load(v) for k, v in
                                                     (o.split("=", 1) for o in TINY_OVERRIDES)}}
    assert command[7:] == contract.toolkit_args(hyperparameters)
    assert json.loads(env["SM_HPS"]) == hyperparameters
    assert Path(env["SM_CHANNEL_TRAIN"]).is_dir()


# One distributed workload (two torchrun processes, an FSx channel) and the single-node one run for real: each run
# is seconds of process start-up (torch imports), and the launch above is what differs between workloads.
@pytest.mark.slow
@pytest.mark.parametrize("name", ["gpt-torchrun-fsx", "gpt-finetune-single"])
def test_shipped_workloads_run_locally(name, tmp_path, capsys):
    workload = REPO / "workloads" / f"{name}.yaml"
    spec = yaml.safe_load(workload.read_text())
    args, nproc = _local_args(workload, tmp_path)
    code = args.func(args)
    printed = capsys.readouterr().out
    log = (tmp_path / "output" / "train.log").read_text()
    assert code == 0, log[-3000:]
    assert (tmp_path / "model" / "model.pt").is_file()
    assert f"model:       {tmp_path / 'model'}" in printed
    assert len(losses(log)) == 2
    assert f"world_size={nproc}" in log
    for metric in spec["metric_definitions"]:
        assert re.search(metric["Regex"], log), metric
