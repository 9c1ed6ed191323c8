"""Checkpoints resume exactly, half-written ones are never loaded, and old ones are pruned."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from gptlm import checkpoint, dcp, optim
from gptlm.checkpoint import CheckpointError
from gptlm.model import GPT, build_config

META = {"model": "tiny", "seq_len": 16, "vocab_size": 256, "parallelism": "ddp"}


def _trained(seed: int) -> tuple[GPT, torch.optim.Optimizer]:
    torch.manual_seed(seed)
    model = GPT(build_config("tiny", 16))
    optimizer = optim.build_optimizer(model, 1e-2, 0.1, fused=False)
    x = torch.randint(0, 256, (2, 17))
    for _ in range(2):
        model(x[:, :-1], x[:, 1:]).backward()
        optimizer.step()
        optimizer.zero_grad()
    return model, optimizer


def _fake(root: Path, step: int, world: int, markers: int) -> Path:
    path = checkpoint.step_dir(root, step)
    path.mkdir(parents=True)
    (path / ".metadata").write_bytes(b"x")
    for r in range(markers):
        (path / f"done.rank{r}.json").write_text(json.dumps({"step": step, "world_size": world}))
    return path


def test_save_then_load_restores_model_and_optimizer(tmp_path: Path):
    model, optimizer = _trained(0)
    dcp.save(tmp_path, 2, model, optimizer, META, rank=0, world_size=1)
    fresh, fresh_opt = _trained(1)
    found = checkpoint.find_latest(tmp_path)
    assert found is not None and found.step == 2
    dcp.load(found, fresh, fresh_opt, META)
    for a, b in zip(model.state_dict().values(), fresh.state_dict().values(), strict=True):
        assert torch.equal(a, b)
    saved, loaded = optimizer.state_dict()["state"], fresh_opt.state_dict()["state"]
    assert saved.keys() == loaded.keys()
    for k in saved:
        assert torch.equal(saved[k]["exp_avg_sq"], loaded[k]["exp_avg_sq"])
        assert float(saved[k]["step"]) == float(loaded[k]["step"]) == 2


def test_half_written_checkpoints_are_passed_over(tmp_path: Path):
    _fake(tmp_path, 10, world=2, markers=2)
    _fake(tmp_path, 20, world=2, markers=1)  # rank 1 never finished (spot interruption mid-save)
    no_metadata = checkpoint.step_dir(tmp_path, 30)
    no_metadata.mkdir()
    (tmp_path / "step_junk").mkdir()
    found = checkpoint.find_latest(tmp_path)
    assert found is not None and found.step == 10
    assert checkpoint.find_latest(tmp_path / "missing") is None


def test_prune_keeps_the_newest_complete_ones(tmp_path: Path):
    for step in (10, 20, 30):
        _fake(tmp_path, step, world=1, markers=1)
    _fake(tmp_path, 15, world=2, markers=1)  # incomplete and older than what is kept
    _fake(tmp_path, 40, world=2, markers=1)  # incomplete but newest: maybe still being written
    checkpoint.prune(tmp_path, keep=2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["step_000000020", "step_000000030", "step_000000040"]


def test_resuming_a_different_model_is_refused_with_the_fix(tmp_path: Path):
    _fake(tmp_path, 10, world=1, markers=1)
    (checkpoint.step_dir(tmp_path, 10) / "done.rank0.json").write_text(
        json.dumps({**META, "model": "gpt-125m", "step": 10, "world_size": 1}))
    model, optimizer = _trained(0)
    with pytest.raises(CheckpointError, match=r"model='gpt-125m'.*checkpoint_dir"):
        dcp.load(checkpoint.find_latest(tmp_path), model, optimizer, META)


def test_export_writes_full_weights_and_config(tmp_path: Path):
    model, _ = _trained(0)
    target = dcp.export_model(model, tmp_path / "model", {"model": "tiny"}, is_main=True)
    weights = torch.load(target)
    assert torch.equal(weights["wte.weight"], model.wte.weight)
    assert json.loads((tmp_path / "model" / "config.json").read_text()) == {"model": "tiny"}
