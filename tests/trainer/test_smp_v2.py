"""The SMP v2 backend, through the real entry point, against a stand-in for `torch.sagemaker`.

SMP v2 exists only in SageMaker's containers; what this backend adds to the native one (tsm.init after the
process group, tsm.transform, FSDP1 wrapping, FSDP1's own gradient clipping) runs here for real on CPU in one
gloo process, with DCP checkpoints, resume, evaluation and export of the FSDP1 module.
"""

from __future__ import annotations

import importlib.machinery
import json
import math
import socket
import sys
import types

import pytest
import torch
from gptlm import launch
from gptlm.model import GPT

from tests.trainer.conftest import losses, step_lines, val_losses


@pytest.fixture
def fake_tsm(monkeypatch, one_thread):
    calls: list = []
    tsm = types.ModuleType("torch.sagemaker")
    tsm.__spec__ = importlib.machinery.ModuleSpec("torch.sagemaker", None)  # what launch's availability check finds
    tsm.init = lambda: calls.append("init")

    def transform(model):
        calls.append(("transform", type(model)))
        return model

    tsm.transform = transform
    monkeypatch.setitem(sys.modules, "torch.sagemaker", tsm)
    monkeypatch.setattr(torch, "sagemaker", tsm, raising=False)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    for name in ("RANK", "WORLD_SIZE", "SM_FRAMEWORK_PARAMS", "SM_HPS"):
        monkeypatch.delenv(name, raising=False)
    # One process started the way mpirun starts it, so the backend really joins a (gloo) process group.
    for name, value in {"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "1", "MASTER_PORT": str(port),
                        "SM_HOSTS": '["127.0.0.1"]'}.items():
        monkeypatch.setenv(name, value)
    return calls


def test_smp_v2_backend_wraps_with_fsdp1_checkpoints_and_resumes(fake_tsm, shards_dir, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SM_CHANNEL_TRAIN", str(shards_dir))
    monkeypatch.setenv("SM_MODEL_DIR", str(tmp_path / "model"))
    monkeypatch.setenv("SM_CHECKPOINT_DIR", str(tmp_path / "ckpt"))
    args = ["--model", "tiny", "--seq_len", "64", "--micro_batch_size", "4", "--grad_accum_steps", "2",
            "--warmup_steps", "1", "--learning_rate", "0.003", "--log_every", "2", "--eval_every", "2",
            "--eval_batches", "2", "--checkpoint_every", "2", "--grad_clip", "0.5",
            "--mp_parameters", "hybrid_shard_degree=1"]
    assert launch.main([*args, "--max_steps", "4"]) == 0
    first = capsys.readouterr().out
    assert fake_tsm == ["init", ("transform", GPT)]
    assert "parallelism=smp_v2-fsdp launcher=mpi backend=gloo world_size=1" in first
    assert (tmp_path / "model" / "model.pt").is_file()
    assert json.loads((tmp_path / "model" / "config.json").read_text())["train_config"]["mp_parameters"] == {
        "hybrid_shard_degree": 1}
    weights = torch.load(tmp_path / "model" / "model.pt")
    assert "wte.weight" in weights  # full, unwrapped parameter names: loadable without FSDP

    assert launch.main([*args, "--max_steps", "6"]) == 0
    second = capsys.readouterr().out
    assert "resumed from checkpoint step=4" in second
    assert len(losses(first)) == 2 and len(losses(second)) == 1
    norms = [float(line.rsplit("grad_norm=", 1)[1]) for line in step_lines(first + second)]
    assert all(math.isfinite(n) and n > 0 for n in norms)
    assert list(val_losses(first)) == [2, 4] and list(val_losses(second)) == [6]
    assert val_losses(second)[6] < val_losses(first)[2]
    assert not torch.distributed.is_initialized()  # the entry point tore its group down: nothing leaks into other tests
