"""Hyperparameters arrive the way the SageMaker toolkit writes them; bad ones stop the job with a clear message."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from gptlm import hparams
from gptlm.hparams import ConfigError

from tests.trainer.conftest import TRAINING_DIR, WORKLOADS, child_env
from trainctl.local.contract import toolkit_args


def test_toolkit_style_values_are_decoded():
    # What the toolkit's mapping.to_cmd_args produces for {"compile": True, "max_steps": 5, ...}.
    config, ignored = hparams.parse([
        "--compile", "True", "--learning_rate", "0.0006", "--max_steps", "5", "--model", "tiny",
        "--mp_parameters", "ddp=True,microbatches=4,optimize=speed,partitions=2,pipeline=interleaved",
    ], environ={})
    assert config.compile is True
    assert config.max_steps == 5
    assert config.learning_rate == pytest.approx(6e-4)
    assert config.model == "tiny"
    assert config.mp_parameters == {"ddp": True, "microbatches": 4, "optimize": "speed", "partitions": 2,
                                    "pipeline": "interleaved"}
    assert ignored == []


def test_evaluation_settings():
    assert (hparams.TrainConfig().eval_every, hparams.TrainConfig().eval_batches) == (500, 20)
    config, _ = hparams.parse(["--eval_every", "0", "--eval_batches", "3"], environ={})
    assert (config.eval_every, config.eval_batches) == (0, 3)  # 0: no evaluation


@pytest.mark.parametrize("text, expected", [("False", False), ("false", False), ("0", False), ("True", True),
                                            ("true", True), ("1", True)])
def test_booleans_in_every_spelling(text, expected):
    config, _ = hparams.parse(["--compile", text], environ={})
    assert config.compile is expected


def test_unknown_arguments_are_ignored_and_reported():
    config, ignored = hparams.parse(["--model", "tiny", "--sagemaker_extra", "1", "--model_dir", "s3://x/y",
                                     "stray"], environ={})
    assert config.model == "tiny"
    assert ignored == ["--sagemaker_extra", "--model_dir", "stray"]


def test_mp_parameters_from_sm_hps_when_not_on_the_command_line():
    environ = {"SM_HPS": '{"mp_parameters": {"partitions": 2, "microbatches": 4}, "model": "tiny"}'}
    config, _ = hparams.parse([], environ=environ)
    assert config.mp_parameters == {"partitions": 2, "microbatches": 4}


@pytest.mark.parametrize("args, words", [
    (["--max_steps", "abc"], ["max_steps", "whole number"]),
    (["--max_steps", "2.5"], ["max_steps", "whole number"]),
    (["--parallelism", "tp"], ["parallelism", "ddp, fsdp"]),
    (["--compile", "maybe"], ["compile", "true or false"]),
    (["--micro_batch_size", "0"], ["micro_batch_size", "greater than 0"]),
    (["--model", "gpt-7b"], ["model", "gpt-350m"]),
    (["--learning_rate", "fast"], ["learning_rate", "number"]),
    (["--warmup_steps", "-1"], ["warmup_steps", "negative"]),
    (["--mp_parameters", "partitions"], ["mp_parameters", "k=v"]),
    (["--eval_every", "-5"], ["eval_every", "negative"]),
    (["--eval_batches", "0"], ["eval_batches", "greater than 0"]),
])
def test_bad_values_name_the_key(args, words):
    with pytest.raises(ConfigError) as caught:
        hparams.parse(args, environ={})
    for word in words:
        assert word in str(caught.value)


def test_every_shipped_workload_hyperparameter_is_understood():
    """A key the trainer ignored would silently do nothing in the job."""
    assert WORKLOADS, "no workloads shipped"
    for path in WORKLOADS:
        hps = yaml.safe_load(path.read_text()).get("hyperparameters") or {}
        _, ignored = hparams.parse(toolkit_args(hps), environ={})
        assert ignored == [], f"{path.name}: trainer ignores {ignored}"


def test_data_channel_and_folders_come_from_the_environment(tmp_path: Path):
    config, _ = hparams.parse(["--data_channel", "tokens"], environ={})
    assert hparams.data_dir(config, {"SM_CHANNEL_TOKENS": str(tmp_path)}) == tmp_path
    with pytest.raises(ConfigError, match=r"SM_CHANNEL_TOKENS.*\[\"train\"\]"):
        hparams.data_dir(config, {"SM_CHANNELS": '["train"]'})
    default, _ = hparams.parse([], environ={})
    assert hparams.checkpoint_dir(default, {}) == Path("/opt/ml/checkpoints")
    assert hparams.checkpoint_dir(default, {"SM_CHECKPOINT_DIR": "/x"}) == Path("/x")
    explicit, _ = hparams.parse(["--checkpoint_dir", "/y"], environ={})
    assert hparams.checkpoint_dir(explicit, {"SM_CHECKPOINT_DIR": "/x"}) == Path("/y")
    assert hparams.model_dir({"SM_MODEL_DIR": "/m"}) == Path("/m")


def test_entry_point_reports_bad_input_without_a_traceback(tmp_path: Path):
    result = subprocess.run([sys.executable, str(TRAINING_DIR / "train.py"), "--parallelism", "pipeline"],
                            env=child_env(), capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert result.returncode == 2
    assert "error: hyperparameter parallelism" in result.stderr
    assert "Traceback" not in result.stderr


def test_entry_point_reports_missing_data_without_a_traceback(tmp_path: Path):
    result = subprocess.run([sys.executable, str(TRAINING_DIR / "train.py"), "--model", "tiny"],
                            env=child_env(SM_CHANNEL_TRAIN=str(tmp_path), SM_CHECKPOINT_DIR=str(tmp_path / "c")),
                            capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert result.returncode == 2
    assert "no *.bin token shards" in result.stderr and "prep-data" in result.stderr
    assert "Traceback" not in result.stderr
