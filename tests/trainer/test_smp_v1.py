"""The SMP v1 path against a stand-in for `smdistributed.modelparallel.torch`.

SMP v1 exists only in SageMaker's containers, so this cannot show that partitioning works; it runs the
path's own logic (data, schedule, the @smp.step contract, metric lines, checkpoint note and resume) on
CPU, so a typo or a broken resume there fails here instead of on a 16-GPU job.
"""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest
import torch
from gptlm import hparams, smp_v1

from tests.trainer.conftest import losses


class _Outputs:
    def __init__(self, loss: torch.Tensor):
        self.loss = loss

    def reduce_mean(self) -> torch.Tensor:
        return self.loss.detach()


class _DistributedModel(torch.nn.Module):
    def __init__(self, module: torch.nn.Module):
        super().__init__()
        self.module = module

    def forward(self, *args):
        return self.module(*args)

    def backward(self, loss: torch.Tensor) -> None:
        loss.backward()

    def state_dict(self, gather_to_rank0: bool = False):
        return self.module.state_dict()


def _fake_smp(calls: list) -> types.ModuleType:
    smp = types.ModuleType("smdistributed.modelparallel.torch")
    smp.WORLD = "world"
    smp.init = lambda: calls.append("init")
    smp.rank = smp.local_rank = smp.dp_rank = lambda: 0
    smp.dp_size = lambda: 1
    smp.barrier = lambda: None
    smp.allgather = lambda obj, group: [obj]
    smp.DistributedModel = _DistributedModel
    smp.DistributedOptimizer = lambda opt: opt
    smp.step = lambda fn: lambda *a: _Outputs(fn(*a))

    def save_checkpoint(path, tag, partial, model, optimizer, user_content, num_kept_partial_checkpoints):
        assert partial and user_content["step"] == int(tag.split("_")[1])
        Path(path, f"{tag}_partial").mkdir(parents=True)
        calls.append(("save", tag))

    smp.save_checkpoint = save_checkpoint
    smp.resume_from_checkpoint = lambda path, tag, partial: calls.append(("resume", tag))
    return smp


@pytest.fixture
def fake_smp(monkeypatch):
    calls: list = []
    smp = _fake_smp(calls)
    for name in ("smdistributed", "smdistributed.modelparallel"):
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    monkeypatch.setitem(sys.modules, "smdistributed.modelparallel.torch", smp)
    return calls


def test_smp_v1_path_trains_checkpoints_and_resumes(fake_smp, shards_dir, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SM_CHANNEL_TRAIN", str(shards_dir))
    monkeypatch.setenv("SM_MODEL_DIR", str(tmp_path / "model"))
    args = ["--model", "tiny", "--seq_len", "64", "--micro_batch_size", "4", "--warmup_steps", "1",
            "--learning_rate", "0.003", "--log_every", "2", "--checkpoint_every", "3",
            "--checkpoint_dir", str(tmp_path / "ckpt"), "--mp_parameters", "microbatches=4,partitions=2"]
    config, _ = hparams.parse([*args, "--max_steps", "3"], environ={})
    assert smp_v1.run(config) == 0
    first = capsys.readouterr().out
    assert ("save", "step_000000003") in fake_smp and "resume" not in str(fake_smp)
    assert (tmp_path / "model" / "model.pt").is_file()

    config, _ = hparams.parse([*args, "--max_steps", "6"], environ={})
    assert smp_v1.run(config) == 0
    second = capsys.readouterr().out
    assert ("resume", "step_000000003") in fake_smp and ("save", "step_000000006") in fake_smp
    assert "resumed from checkpoint step=3" in second
    assert len(losses(first)) == 2 and len(losses(second)) == 2  # steps 2,3 then 4,6


def test_microbatches_must_divide_the_batch(fake_smp):
    config, _ = hparams.parse(["--micro_batch_size", "6", "--mp_parameters", "microbatches=4"], environ={})
    with pytest.raises(hparams.ConfigError, match="divisible"):
        smp_v1.run(config)
