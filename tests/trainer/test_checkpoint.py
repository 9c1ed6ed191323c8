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


def _two_saves(root: Path) -> Path:
    """Complete checkpoints of steps 2 and 4 (one process); returns step 4's folder."""
    model, optimizer = _trained(0)
    dcp.save(root, 2, model, optimizer, META, rank=0, world_size=1)
    dcp.save(root, 4, model, optimizer, META, rank=0, world_size=1)
    return checkpoint.step_dir(root, 4)


def test_a_marker_names_the_files_of_its_part_with_their_sizes(tmp_path: Path):
    newest = _two_saves(tmp_path)
    files = json.loads((newest / "done.rank0.json").read_text())["files"]
    shards = sorted(p.name for p in newest.glob("__0_*.distcp"))
    assert shards and sorted(files) == sorted([".metadata", *shards])
    assert all(files[name] == (newest / name).stat().st_size for name in files)


@pytest.mark.parametrize("damage, reason", [
    (lambda f: f.write_bytes(f.read_bytes()[:-1]), "bytes, its marker promises"),  # one byte short
    (lambda f: f.write_bytes(f.read_bytes() + b"\0"), "bytes, its marker promises"),  # one byte long
    (lambda f: f.unlink(), "is missing"),
])
def test_a_damaged_checkpoint_falls_back_to_the_previous_one(tmp_path: Path, damage, reason):
    """A shard lost or cut short on its way through S3: the resume loads step 2 and says why it passed step 4 over."""
    newest = _two_saves(tmp_path)
    damage(next(newest.glob("__0_*.distcp")))
    found = checkpoint.find_latest(tmp_path)
    assert found is not None and found.step == 2
    assert len(found.passed_over) == 1
    assert found.passed_over[0].startswith("step_000000004: rank 0's part is damaged: __0_")
    assert reason in found.passed_over[0]


def test_a_marker_cannot_promise_a_file_outside_its_checkpoint(tmp_path: Path):
    newest = _two_saves(tmp_path)
    marker = json.loads((newest / "done.rank0.json").read_text())
    (tmp_path / "elsewhere").write_bytes(b"x")
    marker["files"] = {"../elsewhere": 1}
    (newest / "done.rank0.json").write_text(json.dumps(marker))
    assert checkpoint.find_latest(tmp_path).step == 2


def test_an_intact_checkpoint_is_found_with_nothing_passed_over(tmp_path: Path):
    _two_saves(tmp_path)
    found = checkpoint.find_latest(tmp_path)
    assert found.step == 4 and found.passed_over == ()


def _step(model: GPT, optimizer: torch.optim.Optimizer) -> None:
    x = torch.randint(0, 256, (2, 17))
    model(x[:, :-1], x[:, 1:]).backward()
    optimizer.step()
    optimizer.zero_grad()


def _snapshot(model: GPT) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def _restored(root: Path, step: int) -> dict[str, torch.Tensor]:
    found = next(f for f in [checkpoint.find_latest(root)] if f is not None)
    assert found.step == step
    model, optimizer = _trained(7)
    dcp.load(found, model, optimizer, META)
    return model.state_dict()


def test_one_process_writes_in_the_background(tmp_path: Path):
    """Without a process group (one GPU, one process) the save still runs on a thread: the write is slowed by
    4 s, yet start returns well before it (staging a tiny model takes milliseconds; 3 s leaves room for a loaded
    machine), and the marker is dropped only once finish has waited for the write."""
    model, optimizer = _trained(0)
    saver = dcp.Saver(rank=0, world_size=1, asynchronous=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(dcp.SLOW_WRITE_ENV, "2:4")
        path, previous = saver.start(tmp_path, 2, model, optimizer, META)
        assert previous is None and saver.pending is not None and saver.pending.blocking_seconds < 3
        assert checkpoint.is_complete(path) is None  # written in the background, not marked yet
        saved = saver.finish()
    assert saved is not None and saved.step == 2 and saved.background_seconds >= 3.5  # most of the slowed write
    assert checkpoint.is_complete(path) is not None
    assert all(torch.equal(a, b) for a, b in zip(model.state_dict().values(), _restored(tmp_path, 2).values(),
                                                 strict=True))


def test_a_kept_writer_stages_into_one_copy_and_each_checkpoint_holds_its_own_step(tmp_path: Path, monkeypatch):
    """On a GPU the writer and its staged (pinned) copy are kept from save to save; here pinning is stubbed, since
    this build of PyTorch has no CUDA. Training between two saves changes the weights: each checkpoint must hold
    the weights of its own step (the copy is refilled only after the previous write), in its own folder."""
    if not dcp._CAN_CACHE:
        pytest.skip("this PyTorch has no cache_staged_state_dict")
    monkeypatch.setattr(dcp, "_keeps_staged_copy", lambda: True)  # as on a GPU; this machine may have CUDA's build
    monkeypatch.setattr(torch.Tensor, "pin_memory", lambda self, *a, **k: self)
    model, optimizer = _trained(0)
    saver = dcp.Saver(rank=0, world_size=1, asynchronous=True)
    expected = {}
    for step in (2, 3, 4):
        expected[step] = _snapshot(model)
        saver.start(tmp_path / str(step), step, model, optimizer, META)
        if step == 2:
            first = saver.writer
        _step(model, optimizer)
    saver.finish()
    assert first is not None and saver.writer is first  # one writer for every save
    assert first.state_dict_cache is not None  # PyTorch's staged copy, kept
    for step, weights in expected.items():
        restored = _restored(tmp_path / str(step), step)
        assert all(torch.equal(weights[k], restored[k]) for k in weights), step


def test_a_kept_writer_is_replaced_when_the_state_changes_shape(tmp_path: Path, monkeypatch):
    """A staged copy made for one set of tensors cannot take another: a different state gets a new writer."""
    if not dcp._CAN_CACHE:
        pytest.skip("this PyTorch has no cache_staged_state_dict")
    monkeypatch.setattr(dcp, "_keeps_staged_copy", lambda: True)  # as on a GPU; this machine may have CUDA's build
    monkeypatch.setattr(torch.Tensor, "pin_memory", lambda self, *a, **k: self)
    saver = dcp.Saver(rank=0, world_size=1, asynchronous=True)
    model, optimizer = _trained(0)
    saver.start(tmp_path / "a", 2, model, optimizer, META)
    first = saver.writer
    fresh = GPT(build_config("tiny", 32))  # a longer context: a larger position table
    saver.start(tmp_path / "b", 3, fresh, optim.build_optimizer(fresh, 1e-2, 0.1, fused=False), META)
    saver.finish()
    assert first is not None and saver.writer is not None and saver.writer is not first


def test_without_a_gpu_each_save_stages_afresh(tmp_path: Path):
    """No GPU: no pinned copy is kept between saves (a CPU run gains nothing from it and would hold twice the state)."""
    model, optimizer = _trained(0)
    saver = dcp.Saver(rank=0, world_size=1, asynchronous=True)
    saver.start(tmp_path, 2, model, optimizer, META)
    saver.finish()
    assert saver.writer is None
