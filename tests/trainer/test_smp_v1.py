"""The SMP v1 backend, through the real entry point, against a stand-in for `smdistributed.modelparallel.torch`.

SMP v1 exists only in SageMaker's containers, so this cannot show that partitioning works; it runs the
backend's own logic inside the shared loop (backend choice, the @smp.step / model.backward contract,
gradient accumulation, evaluation, metric lines, checkpoint note and resume, export) on CPU, so a typo or
a broken resume there fails here instead of on a 16-GPU job.
"""

from __future__ import annotations

import importlib.machinery
import json
import math
import subprocess
import sys
import types
from pathlib import Path

import pytest
import torch
from gptlm import launch

from tests.trainer.conftest import child_env, losses, step_lines, val_losses


class _Outputs:
    def __init__(self, loss: torch.Tensor):
        self.loss = loss

    def reduce_mean(self) -> torch.Tensor:
        return self.loss.detach()


class _DistributedModel(torch.nn.Module):
    def __init__(self, module: torch.nn.Module, **kwargs):
        super().__init__()
        self.module = module
        self.kwargs = kwargs

    def forward(self, *args):
        return self.module(*args)

    def backward(self, loss: torch.Tensor) -> None:
        loss.backward()

    def local_parameters(self):
        return self.module.parameters()

    def state_dict(self, gather_to_rank0: bool = False):
        return self.module.state_dict()


def _fake_smp(calls: list) -> types.ModuleType:
    smp = types.ModuleType("smdistributed.modelparallel.torch")
    smp.WORLD, smp.DP_GROUP, smp.MP_GROUP = "world", "dp", "mp"
    smp.init = lambda: calls.append("init")
    smp.rank = smp.local_rank = smp.dp_rank = lambda: 0
    smp.dp_size = lambda: 1
    smp.barrier = lambda: calls.append("barrier")
    smp.allgather = lambda obj, group: [obj]

    def distributed_model(module, **kwargs):
        calls.append(("model", kwargs))
        return _DistributedModel(module, **kwargs)

    smp.DistributedModel = distributed_model
    smp.DistributedOptimizer = lambda opt: opt

    def step(fn):
        def run(model, *tensors):
            assert isinstance(model, _DistributedModel), "@smp.step functions take the DistributedModel"
            return _Outputs(fn(model, *tensors))

        return run

    smp.step = step

    def save_checkpoint(path, tag, partial, model, optimizer, user_content, num_kept_partial_checkpoints):
        assert partial and user_content["step"] == int(tag.split("_")[1])
        Path(path, f"{tag}_partial").mkdir(parents=True)
        calls.append(("save", tag))

    smp.save_checkpoint = save_checkpoint
    smp.resume_from_checkpoint = lambda path, tag, partial: calls.append(("resume", tag))
    return smp


@pytest.fixture
def fake_smp(monkeypatch, one_thread):
    calls: list = []
    smp = _fake_smp(calls)
    for name in ("smdistributed", "smdistributed.modelparallel"):
        module = types.ModuleType(name)
        module.__spec__ = importlib.machinery.ModuleSpec(name, None)  # what launch's availability check finds
        monkeypatch.setitem(sys.modules, name, module)
    monkeypatch.setitem(sys.modules, "smdistributed.modelparallel.torch", smp)
    for name in ("RANK", "WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "SM_FRAMEWORK_PARAMS", "SM_HPS"):
        monkeypatch.delenv(name, raising=False)
    return calls


ARGS = ["--model", "tiny", "--seq_len", "64", "--micro_batch_size", "4", "--grad_accum_steps", "2",
        "--warmup_steps", "1", "--learning_rate", "0.003", "--log_every", "2", "--eval_every", "2",
        "--eval_batches", "2", "--checkpoint_every", "3", "--mp_parameters", "microbatches=4,partitions=2"]


def test_smp_v1_backend_trains_evaluates_checkpoints_and_resumes(fake_smp, shards_dir, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SM_CHANNEL_TRAIN", str(shards_dir))
    monkeypatch.setenv("SM_MODEL_DIR", str(tmp_path / "model"))
    args = [*ARGS, "--checkpoint_dir", str(tmp_path / "ckpt")]
    assert launch.main([*args, "--max_steps", "3"]) == 0
    # The save ends with a barrier, and the teardown meets once more after the export, before the process leaves.
    assert fake_smp[-3:] == [("save", "step_000000003"), "barrier", "barrier"]
    first = capsys.readouterr().out
    assert "parallelism=smp_v1 partitions=2 microbatches=4" in first
    assert ("model", {"backward_passes_per_step": 2}) in fake_smp  # SMP's DDP syncs once per accumulated step
    assert ("save", "step_000000003") in fake_smp and "resume" not in str(fake_smp)
    assert json.loads((tmp_path / "ckpt" / "smp_v1_latest.json").read_text())["step"] == 3
    assert (tmp_path / "model" / "model.pt").is_file()
    assert json.loads((tmp_path / "model" / "config.json").read_text())["model_config"]["n_layer"] == 2

    assert launch.main([*args, "--max_steps", "6"]) == 0
    second = capsys.readouterr().out
    assert ("resume", "step_000000003") in fake_smp and ("save", "step_000000006") in fake_smp
    assert "resumed from checkpoint step=3" in second
    assert len(losses(first)) == 2 and len(losses(second)) == 2  # steps 2,3 then 4,6
    assert all("grad_norm=" in line for line in step_lines(first + second))
    assert list(val_losses(first)) == [2, 3] and list(val_losses(second)) == [4, 6]
    assert all(math.isfinite(v) for v in [*val_losses(first).values(), *val_losses(second).values()])

    assert launch.main([*args, "--max_steps", "9", "--seq_len", "32"]) == 2  # another shape: refused, not loaded
    assert "seq_len=64" in capsys.readouterr().err


def test_microbatches_must_divide_the_batch(fake_smp, capsys):
    assert launch.main(["--micro_batch_size", "6", "--mp_parameters", "microbatches=4"]) == 2
    assert "divisible" in capsys.readouterr().err


def test_the_smp_v1_path_never_imports_the_distributed_checkpoint_apis():
    """SMP v1 containers ship PyTorch 2.0, which has no torch.distributed.checkpoint.state_dict."""
    code = ("import sys, gptlm.launch, gptlm.loop, gptlm.model, gptlm.backends.smp_v1\n"
            "bad = [m for m in sys.modules if m.startswith('torch.distributed.checkpoint.state_dict')]\n"
            "assert not bad, bad\n")
    result = subprocess.run([sys.executable, "-c", code], env=child_env(), capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
